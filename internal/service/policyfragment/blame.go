package policyfragment

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/hashicorp/terraform-plugin-framework/path"
)

// blamedPath returns the attribute, and the element of a list, whose value
// a rejection message quotes: Tailscale names the selector, tag or owner it
// refuses ("tag not found: \"tag:billing\""), and the error belongs on the
// attribute that holds it. value is the entry as qtail writes it: an
// object, whose members are attributes of the same name in snake case, or
// a list, held by the attribute listAttr. ok is false when the message
// quotes none of the entry's values.
func blamedPath(value json.RawMessage, listAttr, message string) (path.Path, bool) {
	quoted := func(s string) bool { return s != "" && strings.Contains(message, strconv.Quote(s)) }
	if listAttr != "" {
		var list []string
		if json.Unmarshal(value, &list) != nil {
			return path.Empty(), false
		}
		for i, s := range list {
			if quoted(s) {
				return path.Root(listAttr).AtListIndex(i), true
			}
		}
		return path.Empty(), false
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(value, &members) != nil {
		return path.Empty(), false
	}
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	// The message names one value; look in the order the attributes are
	// documented, sources first, so that a tag in src and dst is blamed
	// on src, as Tailscale's "src=" prefix does.
	order := map[string]int{"src": 0, "dst": 1, "accept": 1, "deny": 2, "ip": 3, "via": 4, "srcPosture": 5}
	rank := func(n string) int {
		if r, ok := order[n]; ok {
			return r
		}
		return len(order)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b)) })
	for _, name := range names {
		raw := members[name]
		var one string
		if json.Unmarshal(raw, &one) == nil {
			if quoted(one) {
				return path.Root(snakeCase(name)), true
			}
			continue
		}
		var list []string
		if json.Unmarshal(raw, &list) != nil {
			continue
		}
		for i, s := range list {
			if quoted(s) {
				return path.Root(snakeCase(name)).AtListIndex(i), true
			}
		}
	}
	return path.Empty(), false
}

// snakeCase turns a policy member name (srcPosture) into the attribute
// name (src_posture).
func snakeCase(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
