package policyfile

import (
	"testing"
)

// The value of a tag owner or of an auto approver is a list of strings,
// never null.
func TestListEntry(t *testing.T) {
	for _, tc := range []struct {
		entry ListEntry
		want  string
	}{
		{ListEntry{}, `[]`},
		{ListEntry{"x", "y"}, `["x","y"]`},
	} {
		got, err := tc.entry.JSON()
		if err != nil || string(got) != tc.want {
			t.Errorf("%#v.JSON() = %s, %v; want %s", tc.entry, got, err, tc.want)
		}
	}
	if _, err := ListEntry(nil).JSON(); err == nil || err.Error() != "policy: the list of owners or approvers is not set" {
		t.Errorf("a nil list: %v", err)
	}
}
