// Package fragment describes qtail's fragment resources, one description
// per kind of fragment of the tailnet policy file: the resource type, its
// attributes (name, type, whether they are required, optional or
// computed, their documentation and what validates them) and the codec
// between the attribute values and the entry of the policy file with its
// key.
//
// The framework resources (internal/service/policyfragment) build their
// schemas, models, import and plan-time checks from it, the fast path of
// qtail_grants reads protocol values with it, and the review of a saved
// plan (internal/review) turns the plan's values into policy entries with
// it. Adding an attribute to a fragment resource is one Attr in its
// description.
//
// The package is plain Go: it names Terraform resources and attributes,
// but imports no Terraform module. It also tells internal/policy, which
// knows the policy file and not who edits it, how people name fragments
// (see policy.Naming).
package fragment

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// Provider is the name of the provider, the prefix of every resource type.
const Provider = "qtail"

// Type is the type of an attribute's values.
type Type int

// The types of attribute values, and their Go form in Values.
const (
	// String is a string.
	String Type = iota
	// Bool is a bool.
	Bool
	// List is a list of strings, a []string.
	List
	// JSON is a string that holds a JSON value: formatting and member
	// order do not matter, and the entry holds the value itself.
	JSON
)

// Attr describes one attribute of a fragment resource.
type Attr struct {
	Name string
	Type Type
	// Required, Optional and Computed are as in a Terraform schema; an
	// attribute both Optional and Computed has a Default.
	Required, Optional, Computed bool
	// Default is the value of an Optional and Computed attribute that the
	// configuration leaves out (a bool).
	Default any
	// Description is the attribute's MarkdownDescription.
	Description string
	// Replaces is set for the attributes that make the key of the entry:
	// changing one replaces the resource. They are the resource's
	// replacing attributes, for its schema and its plan alike.
	Replaces bool
	// Kept is set for a computed attribute that keeps its value from the
	// state in a plan (UseStateForUnknown).
	Kept bool
	// Rule and Check validate a string, or each string of a list: Rule
	// says what is required ("must be a tag"), Check what is wrong with a
	// value.
	Rule  string
	Check func(string) error
	// MinItems is the least number of elements of a list; Unique refuses
	// a list with twice the same element.
	MinItems int
	Unique   bool
	// Member is the member of the entry that holds the attribute, for a
	// kind whose entry is an object; "" when the attribute is not in the
	// entry. Aliases are the older names of the member that Tailscale
	// still reads.
	Member  string
	Aliases []string
}

// Problem is what a check of a configuration finds wrong, on one
// attribute.
type Problem struct {
	Attr, Summary, Detail string
}

// Kind describes one kind of fragment and the resource that manages it.
type Kind struct {
	Kind policyfile.Kind
	// Type is the resource type, such as qtail_grant.
	Type string
	// What names an entry of this kind in messages, such as "grant".
	What string
	// Description is the resource's MarkdownDescription.
	Description string
	// Attrs are the attributes of the resource, in the order they are
	// documented: a rejection that quotes two values is blamed on the
	// first attribute that holds one.
	Attrs []Attr
	// ListAttr is the attribute that holds the entry when the entry is a
	// list of strings (the owners of a tag, the approvers of a route);
	// such entries are object members found by their key. "" when the
	// entry is an object of the members of Attrs, found by its marker.
	ListAttr string
	// ImportHint tells how to take over an entry of this kind that an
	// import does not find.
	ImportHint string
	// DuplicateAdvice tells what to do when two resources of one
	// configuration write the same entry.
	DuplicateAdvice string

	// key returns the key that the attribute values make; ok is false
	// while one of them is unknown or missing.
	key func(v Values) (policyfile.Key, bool)
	// keyValues returns the values of the attributes that make key.
	keyValues func(key policyfile.Key) Values
	// importKey returns the key that an import ID names, or an error that
	// says what an import ID is ("the name of a grant").
	importKey func(id string) (policyfile.Key, error)
	// validate checks a configuration beyond each attribute's own checks.
	validate func(v Values) []Problem

	once  sync.Once
	cache derived
}

// Values are the values of the attributes of a resource, by name: nil for
// null, a string, a bool, a []string for a list, or Unknown. A missing
// name is null.
type Values map[string]any

// Unknown is a value known only after apply; an Unknown list may have some
// elements known.
var Unknown any = unknownValue{}

type unknownValue struct{}

// invalid is a value of the wrong type for its attribute, read from a
// plan.
var invalid any = invalidValue{}

type invalidValue struct{}

// str returns the string value of name; ok is false unless it is a known
// string.
func (v Values) str(name string) (string, bool) {
	s, ok := v[name].(string)
	return s, ok
}

// known reports whether every named value is known and of its type.
func (v Values) known(names ...string) bool {
	for _, n := range names {
		if v[n] == Unknown || v[n] == invalid {
			return false
		}
	}
	return true
}

// Kinds returns the description of every fragment kind.
func Kinds() []*Kind { return []*Kind{Grant, TagOwner, AutoApprover, PolicyTest, AllowAllRemoval} }

// ByType returns the description of the fragment resource of type typ.
func ByType(typ string) (*Kind, bool) {
	i := slices.IndexFunc(Kinds(), func(k *Kind) bool { return k.Type == typ })
	if i < 0 {
		return nil, false
	}
	return Kinds()[i], true
}

// ByKind returns the description of the fragments of kind.
func ByKind(kind policyfile.Kind) (*Kind, bool) {
	i := slices.IndexFunc(Kinds(), func(k *Kind) bool { return k.Kind == kind })
	if i < 0 {
		return nil, false
	}
	return Kinds()[i], true
}

// Attr returns the attribute of name.
func (k *Kind) Attr(name string) (Attr, bool) {
	i := slices.IndexFunc(k.Attrs, func(a Attr) bool { return a.Name == name })
	if i < 0 {
		return Attr{}, false
	}
	return k.Attrs[i], true
}

// Content returns the attributes that the entry holds: the members of an
// object entry, or the list attribute. For a grant they are also the
// attributes of each grant of a qtail_grants. The slice is shared: it is
// not to be changed.
func (k *Kind) Content() []Attr { return k.derived().content }

// derived are what the codecs read of Attrs, computed once.
type derived struct {
	content []Attr
	members []string
}

func (k *Kind) derived() *derived {
	k.once.Do(func() {
		for _, a := range k.Attrs {
			if a.Member != "" || a.Name == k.ListAttr {
				k.cache.content = append(k.cache.content, a)
			}
		}
		if !k.Keyed() {
			k.cache.members = []string{}
			for _, a := range k.cache.content {
				k.cache.members = append(k.cache.members, strings.ToLower(a.Member))
				for _, alias := range a.Aliases {
					k.cache.members = append(k.cache.members, strings.ToLower(alias))
				}
			}
		}
	})
	return &k.cache
}

// Replacing returns the names of the attributes whose change replaces the
// resource.
func (k *Kind) Replacing() []string {
	var out []string
	for _, a := range k.Attrs {
		if a.Replaces {
			out = append(out, a.Name)
		}
	}
	return out
}

// Replaced reports whether a plan of the values planned, from the state
// state, replaces the resource: a replacing attribute changes, or is not
// known yet.
func (k *Kind) Replaced(state, planned Values) bool {
	for _, name := range k.Replacing() {
		p := planned[name]
		if p == Unknown || !sameValue(state[name], p) {
			return true
		}
	}
	return false
}

func sameValue(a, b any) bool {
	la, aList := a.([]string)
	lb, bList := b.([]string)
	if aList || bList {
		return aList && bList && slices.Equal(la, lb)
	}
	return a == b
}

// Keyed reports whether entries of the kind are object members found by
// their key (tag owners, auto approvers), rather than array elements
// found by their marker.
func (k *Kind) Keyed() bool { return k.ListAttr != "" }

// Members returns the lower-cased names of the members of an object entry
// that the resource reads, aliases included; nil for a list entry. The
// slice is shared: it is not to be changed.
// Tailscale reads member names case-insensitively.
func (k *Kind) Members() []string { return k.derived().members }

// AttrOfMember returns the attribute that holds the member name of an
// object entry, as qtail writes it.
func (k *Kind) AttrOfMember(name string) (Attr, bool) {
	for _, a := range k.Content() {
		if a.Member == name {
			return a, true
		}
	}
	return Attr{}, false
}

// Key returns the key of the entry that the values make; ok is false while
// an attribute of the key is unknown or missing.
func (k *Kind) Key(v Values) (policyfile.Key, bool) { return k.key(v) }

// KeyValues returns the values of the attributes that make key.
func (k *Kind) KeyValues(key policyfile.Key) Values { return k.keyValues(key) }

// ImportKey returns the key that an import ID names. The error says what
// an import ID of this resource is.
func (k *Kind) ImportKey(id string) (policyfile.Key, error) { return k.importKey(id) }

// Validate checks the values of a configuration beyond the checks of each
// attribute: what one attribute needs of another.
func (k *Kind) Validate(v Values) []Problem {
	if k.validate == nil {
		return nil
	}
	return k.validate(v)
}

// ErrIncomplete is returned by Fragment when an attribute that makes the
// key or the entry is missing (a state written by an import), unknown, or
// of the wrong type.
var ErrIncomplete = errors.New("fragment: the attributes of the fragment are incomplete")

// Fragment returns the key and the entry that the values make: the entry
// is the JSON a Put of the key takes. The key is returned as far as it is
// known when the entry is not. The allow-all removal has the key of the
// rule and no entry: it removes it.
func (k *Kind) Fragment(v Values) (policyfile.Key, json.RawMessage, error) {
	if k.Kind == policyfile.KindAllowAll {
		return policyfile.AllowAllKey(), nil, nil
	}
	key, ok := k.key(v)
	if !ok {
		return policyfile.Key{Kind: k.Kind}, nil, ErrIncomplete
	}
	entry, complete := k.Entry(v)
	if !complete {
		return key, nil, ErrIncomplete
	}
	if err := key.Validate(); err != nil {
		return key, nil, err
	}
	return key, entry, nil
}
