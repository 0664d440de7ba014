package policyfile

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The entries below are what qtail's fragment resources write in the
// policy file, built from the resources' attribute values. The members are
// named as in the policy file; a member whose attribute is null (a nil
// slice or pointer) is left out, an empty list is written as []. Member
// order does not matter here: the Document lays out grants and tests in
// the documented order when it writes them.

// GrantEntry is the element of grants that a qtail_grant writes.
type GrantEntry struct {
	Src, Dst, IP []string
	// App is a JSON object of capability names to lists of objects; nil
	// when not set.
	App        json.RawMessage
	Via        []string
	SrcPosture []string
}

// JSON returns the entry: src, dst, ip, app, via and srcPosture.
func (g GrantEntry) JSON() (json.RawMessage, error) {
	if g.Src == nil || g.Dst == nil {
		return nil, errors.New("policy: a grant needs src and dst")
	}
	m := members{}
	m.list("src", g.Src)
	m.list("dst", g.Dst)
	m.list("ip", g.IP)
	if g.App != nil {
		if !json.Valid(g.App) {
			return nil, errors.New("policy: the app of a grant is not valid JSON")
		}
		m["app"] = g.App
	}
	m.list("via", g.Via)
	m.list("srcPosture", g.SrcPosture)
	return json.Marshal(m)
}

// PolicyTestEntry is the element of tests that a qtail_policy_test writes.
type PolicyTestEntry struct {
	Src string
	// Proto is nil when not set.
	Proto        *string
	Accept, Deny []string
}

// JSON returns the entry: src, proto, accept and deny.
func (t PolicyTestEntry) JSON() (json.RawMessage, error) {
	m := members{"src": t.Src}
	if t.Proto != nil {
		m["proto"] = *t.Proto
	}
	m.list("accept", t.Accept)
	m.list("deny", t.Deny)
	return json.Marshal(m)
}

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

type members map[string]any

func (m members) list(name string, l []string) {
	if l != nil {
		m[name] = l
	}
}

// AutoApproverKey is the key of a qtail_auto_approver: the route's when
// route is set, the exit node approvers' when exitNode is true. Setting
// both, or neither, is an error.
func AutoApproverKey(route string, exitNode bool) (Key, error) {
	switch {
	case exitNode && route == "":
		return ExitNodeKey(), nil
	case !exitNode && route != "":
		return RouteKey(route), nil
	}
	return Key{}, errors.New("policy: an auto approver is either for a route or for exit nodes")
}

// KindOf returns the kind of fragment the Terraform resource type
// manages (qtail_grant, qtail_tag_owner, qtail_auto_approver,
// qtail_policy_test, qtail_allow_all_removal).
func KindOf(resourceType string) (Kind, bool) {
	for _, k := range []Kind{KindGrant, KindTagOwner, KindAutoApprover, KindPolicyTest, KindAllowAll} {
		if k.resourceType() == resourceType {
			return k, true
		}
	}
	return "", false
}

// ErrIncomplete is returned by FragmentOf when an attribute that makes the
// key or the entry is missing (a state written by an import) or unknown.
var ErrIncomplete = errors.New("policy: the attributes of the fragment are incomplete")

// FragmentOf returns the key and the entry of the fragment that a qtail
// resource of resourceType writes, from its attribute values as
// Terraform's JSON plan and state give them (strings, lists as []any,
// null as nil): qtail_grant (name, src, dst, ip, app, via, src_posture),
// qtail_policy_test (name, src, proto, accept, deny), qtail_tag_owner
// (tag, owners) and qtail_auto_approver (route, exit_node, approvers).
// For qtail_allow_all_removal it returns AllowAllKey and no entry: the
// resource removes the rule. The entry is the JSON a Put of the key
// takes.
func FragmentOf(resourceType string, attrs map[string]any) (Key, json.RawMessage, error) {
	kind, ok := KindOf(resourceType)
	if !ok {
		return Key{}, nil, fmt.Errorf("policy: %s is not a fragment resource", resourceType)
	}
	a := &attrReader{m: attrs}
	var key Key
	var entry interface {
		JSON() (json.RawMessage, error)
	}
	switch kind {
	case KindAllowAll:
		return AllowAllKey(), nil, nil
	case KindGrant:
		key = Key{Kind: kind, Name: a.str("name")}
		g := GrantEntry{Src: a.list("src"), Dst: a.list("dst"), IP: a.list("ip"), Via: a.list("via"), SrcPosture: a.list("src_posture")}
		if app := a.optStr("app"); app != nil {
			g.App = json.RawMessage(*app)
		}
		if g.Src == nil || g.Dst == nil {
			a.bad = true
		}
		entry = g
	case KindPolicyTest:
		key = Key{Kind: kind, Name: a.str("name")}
		t := PolicyTestEntry{Proto: a.optStr("proto"), Accept: a.list("accept"), Deny: a.list("deny")}
		if src := a.optStr("src"); src != nil {
			t.Src = *src
		} else {
			a.bad = true
		}
		entry = t
	case KindTagOwner:
		key = Key{Kind: kind, Name: a.str("tag")}
		entry = ListEntry(a.list("owners"))
	case KindAutoApprover:
		exit, _ := attrs["exit_node"].(bool)
		var err error
		if key, err = AutoApproverKey(a.str("route"), exit); err != nil {
			return Key{}, nil, ErrIncomplete
		}
		entry = ListEntry(a.list("approvers"))
	}
	if a.bad || key.Name == "" {
		return key, nil, ErrIncomplete
	}
	if err := key.Validate(); err != nil {
		return key, nil, err
	}
	value, err := entry.JSON()
	if err != nil {
		return key, nil, ErrIncomplete
	}
	return key, value, nil
}

// attrReader reads attribute values; bad records a value of the wrong
// type.
type attrReader struct {
	m   map[string]any
	bad bool
}

func (a *attrReader) str(name string) string {
	s, _ := a.m[name].(string)
	return s
}

func (a *attrReader) optStr(name string) *string {
	s, ok := a.m[name].(string)
	if !ok {
		if a.m[name] != nil {
			a.bad = true
		}
		return nil
	}
	return &s
}

// list reads a list of strings: nil when null.
func (a *attrReader) list(name string) []string {
	if a.m[name] == nil {
		return nil
	}
	raw, ok := a.m[name].([]any)
	if !ok {
		a.bad = true
		return nil
	}
	out := make([]string, 0, len(raw))
	for _, e := range raw {
		s, ok := e.(string)
		if !ok {
			a.bad = true
			return nil
		}
		out = append(out, s)
	}
	return out
}
