package policyfile

import (
	"encoding/json"
	"slices"
	"strings"
)

// TagOwnedBy reports whether a device with one of the tags by may apply
// tag: one of them is tag itself, or owns it in the tagOwners of d.
// declared says whether tagOwners declares tag, and owners are its owners
// there.
func (d *Document) TagOwnedBy(tag string, by []string) (owned, declared bool, owners []string) {
	for _, o := range by {
		if strings.EqualFold(o, tag) {
			return true, true, nil
		}
	}
	f := d.Get(Key{Kind: KindTagOwner, Name: tag})
	if !f.Found {
		return false, false, nil
	}
	if err := json.Unmarshal(f.Value, &owners); err != nil {
		return false, true, nil
	}
	for _, o := range by {
		if slices.ContainsFunc(owners, func(s string) bool { return strings.EqualFold(s, o) }) {
			return true, true, owners
		}
	}
	return false, true, owners
}
