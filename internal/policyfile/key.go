package policyfile

import (
	"crypto/rand"
	"fmt"
	"strings"
	"sync/atomic"
	"unicode"
)

// Kind is the kind of a fragment qtail owns in the policy file.
type Kind string

// The kinds of fragments. The value is the one written in markers.
const (
	// KindGrant is an element of the top-level grants array.
	KindGrant Kind = "grant"
	// KindTagOwner is a member "TAG": [owners] of tagOwners.
	KindTagOwner Kind = "tag_owner"
	// KindAutoApprover is a member "CIDR": [approvers] of
	// autoApprovers.routes (name "route:CIDR"), the member
	// "exitNode": [approvers] of autoApprovers (name "exitNode"), or a
	// member "svc:NAME" or "tag:TAG": [approvers] of
	// autoApprovers.services (name "service:svc:NAME" or
	// "service:tag:TAG").
	KindAutoApprover Kind = "auto_approver"
	// KindPolicyTest is an element of the top-level tests array.
	KindPolicyTest Kind = "policy_test"
	// KindAllowAll is the default allow-all rule that a new tailnet ships
	// with (in grants or acls). It is not a marked fragment: qtail only
	// removes it, with a Delete mutation of AllowAllKey, and a read finds
	// it when the file has it.
	KindAllowAll Kind = "allow_all"
)

const (
	markerPrefix = "qtail:"
	// ExitNodeName is the name of the auto approver key for exit nodes.
	ExitNodeName = "exitNode"
	// RoutePrefix starts the name of an auto approver key for a route.
	RoutePrefix = "route:"
	// ServicePrefix starts the name of an auto approver key for a
	// Tailscale Service: "service:svc:NAME", or "service:tag:TAG" for the
	// Services that carry the tag.
	ServicePrefix = "service:"
)

// Naming is how people know the fragments, for the messages this package
// builds: it knows the policy file, not who edits it. The layer that
// offers the fragments to people installs its Naming with SetNaming;
// until then a fragment is named by its kind.
type Naming interface {
	// Kind names what manages the fragments of kind.
	Kind(kind Kind) string
	// ImportHint says how to take over the fragment of key that exists
	// without qtail's marker.
	ImportHint(key Key) string
}

var installed atomic.Value // of namingBox

type namingBox struct{ Naming }

// SetNaming installs n for the messages of the package.
func SetNaming(n Naming) { installed.Store(namingBox{n}) }

// naming returns the Naming installed, or the kinds' own names.
func naming() Naming {
	if b, ok := installed.Load().(namingBox); ok {
		return b.Naming
	}
	return kindNaming{}
}

// kindNaming names fragments by their kind and their key.
type kindNaming struct{}

func (kindNaming) Kind(kind Kind) string { return string(kind) }

func (kindNaming) ImportHint(key Key) string {
	return fmt.Sprintf("to have qtail manage it, take it over under the key %q", key.ImportID())
}

// keyed reports whether fragments of the kind are object members
// identified by their key, rather than array elements.
func (k Kind) keyed() bool { return k == KindTagOwner || k == KindAutoApprover }

func (k Kind) valid() bool {
	switch k {
	case KindGrant, KindTagOwner, KindAutoApprover, KindPolicyTest, KindAllowAll:
		return true
	}
	return false
}

// AllowAllKey is the key of the default allow-all rule.
func AllowAllKey() Key { return Key{Kind: KindAllowAll, Name: "default"} }

// Key identifies one fragment: a grant or a policy test by the name in
// its marker, a tag owner by its tag, an auto approver by "route:CIDR" or
// "exitNode" and its owner.
type Key struct {
	Kind Kind
	Name string
	// Owner is the configuration that owns the fragment, written after a
	// "#" in its marker.
	//
	// For auto approvers it is part of the identity: the approvers that
	// one qtail_auto_approver adds to the list of a route or of exit
	// nodes, which several configurations may share, each carry its
	// marker with the owner. An auto approver key without an owner is the
	// part of the list that no owner marked (the whole list, in files
	// written before lists were shared).
	//
	// For the other kinds (grants, tag owners, tests) the fragment is
	// still identified by its kind and name alone (Get finds it whoever
	// owns it), and Owner says whose it is: a put with an owner writes it
	// in the marker, and refuses an entry marked for another owner
	// (*OwnedError); a delete with an owner leaves such an entry alone. A
	// marker without an owner, as in files written before markers named
	// owners, is taken as its own by a key with an owner: a put writes the
	// owner in it. A key without an owner (from a state written before
	// markers named owners) changes the entry whoever owns it.
	Owner string
}

// ident is the key that identifies the fragment: the key itself for an
// auto approver, whose owner is part of its identity, and the key without
// its owner otherwise.
func (k Key) ident() Key {
	if k.Kind == KindAutoApprover {
		return k
	}
	return k.List()
}

// sameEntry reports whether the keys name the same fragment (see ident).
func sameEntry(a, b Key) bool { return a.ident() == b.ident() }

// ownerAlphabet is what owners are made of: lower-case letters and
// digits, without the ones easily mistaken for each other.
const ownerAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// ownerLen is the length of the owners NewOwner makes: 10 characters of
// 31 are about 50 bits, enough that two resources never draw the same.
const ownerLen = 10

// NewOwner returns a new random owner for the fragments of one resource.
func NewOwner() string {
	b := make([]byte, ownerLen)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	for i := range b {
		b[i] = ownerAlphabet[int(b[i])%len(ownerAlphabet)]
	}
	return string(b)
}

// validOwner reports whether s can be the owner of a fragment: 1 to 32
// lower-case letters and digits.
func validOwner(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// List is the key without its owner: for an auto approver, the key of the
// whole list an owned key adds approvers to.
func (k Key) List() Key { return Key{Kind: k.Kind, Name: k.Name} }

// Owned reports whether the key has an owner: for an auto approver,
// whether it names the approvers of one owner.
func (k Key) Owned() bool { return k.Owner != "" }

// RouteKey is the key of the auto approver of a route.
func RouteKey(cidr string) Key { return Key{Kind: KindAutoApprover, Name: RoutePrefix + cidr} }

// ExitNodeKey is the key of the auto approver of exit nodes.
func ExitNodeKey() Key { return Key{Kind: KindAutoApprover, Name: ExitNodeName} }

// ServiceKey is the key of the auto approver of a Tailscale Service,
// svc:NAME, or of the Services tagged tag:TAG.
func ServiceKey(service string) Key {
	return Key{Kind: KindAutoApprover, Name: ServicePrefix + service}
}

// isService reports whether the key is an auto approver of Tailscale
// Services.
func (k Key) isService() bool {
	return k.Kind == KindAutoApprover && strings.HasPrefix(k.Name, ServicePrefix)
}

// Marker is the line comment that stands on its own line just before the
// fragment, for example "// qtail:grant:web#p7mv2rt4ha", or before each
// approver of an owner, "// qtail:auto_approver:exitNode#k3x9q2mfa7".
// Without an owner it is the marker alone, "// qtail:grant:web".
func (k Key) Marker() string {
	m := "// " + markerPrefix + string(k.Kind) + ":" + k.Name
	if k.Owner != "" {
		m += ownerSep + k.Owner
	}
	return m
}

// ownerSep separates the name of a fragment from its owner in a marker,
// and the name of an auto approver from its owner in an import ID; no
// name, tag or CIDR holds it.
const ownerSep = "#"

// String names the fragment the way people know it (see Naming): its
// kind, or what manages it, and its name.
func (k Key) String() string { return fmt.Sprintf("%s %q", naming().Kind(k.Kind), k.Name) }

// ImportID is the ID that `terraform import` takes for the fragment. Only
// an auto approver's names its owner: an import adopts the owner of the
// other kinds from their marker.
func (k Key) ImportID() string {
	if k.Owner != "" && k.Kind == KindAutoApprover {
		return k.Name + ownerSep + k.Owner
	}
	return k.Name
}

// Validate reports whether qtail can own a fragment with this key.
func (k Key) Validate() error {
	if !k.Kind.valid() {
		return fmt.Errorf("policy: unknown fragment kind %q", k.Kind)
	}
	if k.Name == "" {
		return fmt.Errorf("policy: %s name must not be empty", k.Kind)
	}
	if !markerSafe(k.Name) {
		return fmt.Errorf("policy: %s name %q must not contain spaces or control characters", k.Kind, k.Name)
	}
	if k.Owner != "" && (k.Kind == KindAllowAll || !validOwner(k.Owner)) {
		return fmt.Errorf("policy: %s %q cannot have the owner %q: owners are 1 to 32 lower-case letters and digits, "+
			"and the allow-all rule has none", k.Kind, k.Name, k.Owner)
	}
	switch k.Kind {
	case KindTagOwner:
		if err := ValidTag(k.Name); err != nil {
			return fmt.Errorf("policy: tag owner %q: %w", k.Name, err)
		}
	case KindAutoApprover:
		if k.Name == ExitNodeName {
			return nil
		}
		if svc, ok := strings.CutPrefix(k.Name, ServicePrefix); ok {
			if err := ValidServiceApproverKey(svc); err != nil {
				return fmt.Errorf("policy: auto approver %q: %w", k.Name, err)
			}
			return nil
		}
		cidr, ok := strings.CutPrefix(k.Name, RoutePrefix)
		if !ok {
			return fmt.Errorf("policy: auto approver %q must be %q or %q followed by a CIDR", k.Name, ExitNodeName, RoutePrefix)
		}
		if err := validCIDR(cidr); err != nil {
			return fmt.Errorf("policy: auto approver %q: %w", k.Name, err)
		}
	}
	return nil
}

// entryKey is the object member name that holds a keyed fragment.
func (k Key) entryKey() string {
	if k.Kind == KindAutoApprover {
		if cidr, ok := strings.CutPrefix(k.Name, RoutePrefix); ok {
			return cidr
		}
		if svc, ok := strings.CutPrefix(k.Name, ServicePrefix); ok {
			return svc
		}
	}
	return k.Name
}

// markerSafe reports whether s can stand in a line comment as one word.
func markerSafe(s string) bool {
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == unicode.ReplacementChar {
			return false
		}
	}
	return true
}

// parseMarker reads a marker comment such as "// qtail:grant:web" or
// "// qtail:grant:web#p7mv2rt4ha" (the leading "//" and surrounding spaces
// are optional) and returns its key, with its owner.
func parseMarker(comment string) (Key, bool) {
	s := strings.TrimSpace(comment)
	s = strings.TrimSpace(strings.TrimPrefix(s, "//"))
	s, ok := strings.CutPrefix(s, markerPrefix)
	if !ok {
		return Key{}, false
	}
	kind, name, ok := strings.Cut(s, ":")
	if !ok || name == "" || !Kind(kind).valid() || Kind(kind) == KindAllowAll || !markerSafe(name) {
		return Key{}, false
	}
	k := Key{Kind: Kind(kind), Name: name}
	if n, owner, ok := strings.Cut(name, ownerSep); ok {
		if !validOwner(owner) || n == "" {
			return Key{}, false
		}
		k.Name, k.Owner = n, owner
	}
	if k.Kind == KindAutoApprover {
		if k.Name != ExitNodeName && (!strings.HasPrefix(k.Name, RoutePrefix) || k.Name == RoutePrefix) &&
			(!strings.HasPrefix(k.Name, ServicePrefix) || k.Name == ServicePrefix) {
			return Key{}, false
		}
	}
	return k, true
}
