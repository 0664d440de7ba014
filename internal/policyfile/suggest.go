package policyfile

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// DeclaredNames returns the names that the object section of d declares,
// such as the tags of "tagOwners" or the groups of "groups", in the
// file's order; none when the section is absent or not an object.
func (d *Document) DeclaredNames(section string) []string {
	std, err := hujson.Standardize(d.Bytes())
	if err != nil {
		return nil
	}
	var file map[string]json.RawMessage
	if json.Unmarshal(std, &file) != nil {
		return nil
	}
	raw, ok := file[section]
	if !ok {
		return nil
	}
	// The object's members in the file's order: a decoder's tokens.
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return names
		}
		name, _ := tok.(string)
		names = append(names, name)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return names
		}
	}
	return names
}

// Nearest returns up to n names of known that name may have been meant
// for, nearest first: those within a typo of it (an edit distance, case
// ignored, of at most a fifth of its length, and at least 2), and those
// that extend it with a dash (tag:k8s-billing-us-east-1 for
// tag:k8s-billing). name itself is never among them; a name that differs
// from it in case alone comes first.
func Nearest(name string, known []string, n int) []string {
	type candidate struct {
		name string
		dist int
	}
	limit := max(2, len(name)/5)
	lower := strings.ToLower(name)
	var found []candidate
	for _, k := range known {
		lk := strings.ToLower(k)
		if k == name {
			continue
		}
		if d := editDistance(lower, lk); d <= limit {
			found = append(found, candidate{k, d})
		} else if strings.HasPrefix(lk, lower+"-") {
			found = append(found, candidate{k, limit + 1 + len(lk) - len(lower)})
		}
	}
	slices.SortStableFunc(found, func(a, b candidate) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, c := range found {
		if !slices.Contains(out, c.name) {
			out = append(out, c.name)
		}
		if len(out) == n {
			break
		}
	}
	return out
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
