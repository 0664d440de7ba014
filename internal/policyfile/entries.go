package policyfile

import (
	"encoding/json"
	"errors"
)

// The entries of grants and tests are objects whose members the layer
// above makes (internal/fragment describes them); member order does not
// matter here: the Document lays out grants and tests in the documented
// order when it writes them.

// ListEntry is the value of a tag owner (its owners) or of an auto
// approver (its approvers): a JSON array of strings.
type ListEntry []string

// JSON returns the array; a nil list has no entry.
func (l ListEntry) JSON() (json.RawMessage, error) {
	if l == nil {
		return nil, errors.New("policy: the list of owners or approvers is not set")
	}
	return json.Marshal([]string(l))
}
