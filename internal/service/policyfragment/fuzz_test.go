package policyfragment

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

// FuzzGrantsImportID checks the parser of qtail_grants's import ID: it
// never panics; the names it accepts are distinct grant names; the id
// attribute formatted from them (grantsID: sorted, comma-separated) names
// the same grants and is the ID itself when the ID was written that way.
func FuzzGrantsImportID(f *testing.F) {
	for _, id := range []string{
		"ops-to-billing,ops-to-web", "ops-to-web,ops-to-billing", "a, b", " a ,b ", "a,,b", "a,a", "a", "", ",",
		"-a", "a b", "a.b_c-d,e", "a,\tb\n",
	} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		names, expected := parseGrantsImportID(id)
		if expected != "" {
			if names != nil {
				t.Fatalf("%q refused with names %q", id, names)
			}
			return
		}
		if len(names) == 0 || len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
			t.Fatalf("%q gives the names %q", id, names)
		}
		formatted := grantsID(names)
		again, expected := parseGrantsImportID(formatted)
		if expected != "" || !slices.Equal(again, slices.Sorted(slices.Values(names))) {
			t.Fatalf("%q formats as %q, which gives %q (%s)", id, formatted, again, expected)
		}
		if slices.IsSorted(names) && !strings.ContainsFunc(id, unicode.IsSpace) && formatted != id {
			t.Fatalf("%q, sorted and without spaces, formats as %q", id, formatted)
		}
	})
}
