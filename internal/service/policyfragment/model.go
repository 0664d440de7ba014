package policyfragment

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
)

// unmanagedMembers returns the names of the members of the JSON object
// value that are not among known (lower-cased), sorted. Tailscale reads
// member names case-insensitively.
func unmanagedMembers(value json.RawMessage, known []string) []string {
	if known == nil {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(value, &obj) != nil {
		return nil
	}
	var out []string
	for name := range obj {
		if !slices.Contains(known, strings.ToLower(name)) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
