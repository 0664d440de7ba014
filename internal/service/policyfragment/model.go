package policyfragment

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// fragmentModel is what a fragment resource model gives the shared logic.
type fragmentModel interface {
	// fragmentKey returns the key of the fragment; ok is false while the
	// attributes that make it are unknown.
	fragmentKey() (key policyfile.Key, ok bool)
	// entry returns the JSON value of the policy entry; ok is false when a
	// value is unknown, or missing (as after an import).
	entry() (value json.RawMessage, ok bool)
	// setEntry fills the model from the standardized value of the entry of
	// key.
	setEntry(key policyfile.Key, value json.RawMessage) diag.Diagnostics
	// computed returns the id and marker attributes of the model.
	computed() (id, marker *types.String)
}

// fragmentPtr is a pointer to a fragment model type.
type fragmentPtr[M any] interface {
	*M
	fragmentModel
}

// markerText is the marker comment of key without its leading "//", as the
// marker attribute holds it.
func markerText(key policyfile.Key) string {
	return strings.TrimPrefix(key.Marker(), "// ")
}

// setComputed sets id and marker to the values qtail keeps for key.
func setComputed(m fragmentModel, key policyfile.Key, marked bool) {
	id, marker := m.computed()
	*id = types.StringValue(key.ImportID())
	*marker = types.StringValue("")
	if marked {
		*marker = types.StringValue(markerText(key))
	}
}

// ownedModel is a fragment model whose entries have an owner, drawn when
// they are first written: the auto approver, whose approvers several
// configurations share.
type ownedModel interface {
	ownerAttr() *types.String
}

// planOwner plans id, marker and owner as unknown when the owner of m's
// entry is still to be drawn (a creation, or approvers written before
// lists were shared), and reports whether it did.
func planOwner(m fragmentModel, key policyfile.Key) bool {
	o, ok := m.(ownedModel)
	if !ok || key.Owner != "" {
		return false
	}
	id, marker := m.computed()
	*id, *marker, *o.ownerAttr() = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
	return true
}

// drawOwner gives key an owner when it is to be drawn, and m's owner
// attribute its value.
func drawOwner(m fragmentModel, key policyfile.Key) policyfile.Key {
	o, ok := m.(ownedModel)
	if !ok {
		return key
	}
	if key.Owner == "" {
		key.Owner = policyfile.NewOwner()
	}
	*o.ownerAttr() = types.StringValue(key.Owner)
	return key
}

// keyedKind reports whether entries of kind are object members found by
// their key (tag owners, auto approvers) rather than array elements found
// by their marker.
func keyedKind(k policyfile.Kind) bool {
	return k == policyfile.KindTagOwner || k == policyfile.KindAutoApprover
}

// stringsOf reads a list attribute into *dst: nil when null. It reports
// false while the list or one of its elements is unknown.
func stringsOf(dst *[]string, l types.List) bool {
	ss, ok := tfx.Strings(l)
	*dst = ss
	return ok
}

// optString reads a string attribute: nil when null. It reports false
// while the string is unknown.
func optString(s types.String) (*string, bool) {
	if s.IsUnknown() {
		return nil, false
	}
	if s.IsNull() {
		return nil, true
	}
	v := s.ValueString()
	return &v, true
}

// entryJSON is the JSON of an entry of the policy file; ok is false when
// the entry cannot be written (an attribute of it is invalid).
func entryJSON(e interface {
	JSON() (json.RawMessage, error)
}) (json.RawMessage, bool) {
	out, err := e.JSON()
	return out, err == nil
}

// entryFields are the members of a grant or a test read from the policy
// file. Tailscale reads member names case-insensitively, so they are kept
// lower-cased; each read member is taken off, and what is left is not
// managed by qtail.
type entryFields map[string]json.RawMessage

func parseEntryFields(key policyfile.Key, value json.RawMessage) (entryFields, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(value, &raw); err != nil {
		return nil, fmt.Errorf("the entry of %s in the policy file is not a JSON object: %w", key, err)
	}
	f := make(entryFields, len(raw))
	for name, v := range raw {
		f[strings.ToLower(name)] = v
	}
	return f, nil
}

// take removes and returns the first of names present.
func (f entryFields) take(names ...string) (json.RawMessage, string, bool) {
	for _, n := range names {
		if v, ok := f[strings.ToLower(n)]; ok {
			delete(f, strings.ToLower(n))
			return v, n, true
		}
	}
	return nil, "", false
}

// list reads a list of strings: null when absent.
func (f entryFields) list(diags *diag.Diagnostics, names ...string) types.List {
	v, name, ok := f.take(names...)
	if !ok {
		return types.ListNull(types.StringType)
	}
	var ss []string
	if err := json.Unmarshal(v, &ss); err != nil {
		diags.AddError("Unexpected Policy Entry", fmt.Sprintf("%q in the policy file is not a list of strings: %s. Correct it in the policy file.", name, v))
		return types.ListNull(types.StringType)
	}
	return tfx.StringList(ss)
}

// str reads a string: null when absent.
func (f entryFields) str(diags *diag.Diagnostics, names ...string) types.String {
	v, name, ok := f.take(names...)
	if !ok {
		return types.StringNull()
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		diags.AddError("Unexpected Policy Entry", fmt.Sprintf("%q in the policy file is not a string: %s. Correct it in the policy file.", name, v))
		return types.StringNull()
	}
	return types.StringValue(s)
}

// raw reads a member as canonical JSON text: null when absent.
func (f entryFields) raw(names ...string) types.String {
	v, _, ok := f.take(names...)
	if !ok {
		return types.StringNull()
	}
	if c, err := policyfile.Canonicalize(v); err == nil {
		v = c
	}
	return types.StringValue(string(v))
}

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

// readList reads the JSON array of owners or approvers of a keyed entry.
func readList(diags *diag.Diagnostics, key policyfile.Key, value json.RawMessage) types.List {
	var ss []string
	if err := json.Unmarshal(value, &ss); err != nil {
		diags.AddError("Unexpected Policy Entry", fmt.Sprintf("The value of %s in the policy file is not a list of strings: %s. "+
			"Correct it in the policy file.", describeKey(key), value))
		return types.ListNull(types.StringType)
	}
	return tfx.StringList(ss)
}

// listJSON is the JSON array of owners or approvers; ok is false when
// the list is unknown or null.
func listJSON(l types.List) (json.RawMessage, bool) {
	var ss []string
	if !stringsOf(&ss, l) || ss == nil {
		return nil, false
	}
	return entryJSON(policyfile.ListEntry(ss))
}
