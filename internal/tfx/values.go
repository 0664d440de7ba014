package tfx

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Strings returns the elements of a list of strings: nil for a null list,
// an empty slice for an empty one. ok is false when the list or one of its
// elements is unknown.
func Strings(l types.List) (out []string, ok bool) {
	if l.IsUnknown() {
		return nil, false
	}
	if l.IsNull() {
		return nil, true
	}
	out = make([]string, 0, len(l.Elements()))
	for _, e := range l.Elements() {
		s, isString := e.(types.String)
		if !isString || s.IsUnknown() || s.IsNull() {
			return nil, false
		}
		out = append(out, s.ValueString())
	}
	return out, true
}

// StringList returns a known list of strings; nil gives an empty list.
func StringList(ss []string) types.List {
	elems := make([]attr.Value, len(ss))
	for i, s := range ss {
		elems[i] = types.StringValue(s)
	}
	return types.ListValueMust(types.StringType, elems)
}

// NullIfEmpty is s, or null for "".
func NullIfEmpty(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// AllKnown reports whether every value is known, the elements of lists
// included (a list may be known while an element comes from another
// resource).
func AllKnown(values ...attr.Value) bool {
	for _, v := range values {
		if v.IsUnknown() {
			return false
		}
		if l, ok := v.(types.List); ok && !AllKnown(l.Elements()...) {
			return false
		}
	}
	return true
}

// Under returns the path sub (relative to the root) under base.
func Under(base, sub path.Path) path.Path {
	p := base
	for _, step := range sub.Steps() {
		switch s := step.(type) {
		case path.PathStepAttributeName:
			p = p.AtName(string(s))
		case path.PathStepElementKeyInt:
			p = p.AtListIndex(int(s))
		case path.PathStepElementKeyString:
			p = p.AtMapKey(string(s))
		case path.PathStepElementKeyValue:
			p = p.AtSetValue(s.Value)
		}
	}
	return p
}
