package policyfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// Auto approvers are shared. Two configurations (one per region, say) may
// each need the same route, exit nodes or Tailscale Service approved, by
// approvers of their own or by the same ones. The list of a route,
// autoApprovers.routes[CIDR], of exit nodes, autoApprovers.exitNode, or of
// a Tailscale Service, autoApprovers.services["svc:NAME"] (or
// ["tag:TAG"] for the Services with that tag), is therefore not one fragment
// but a meeting point: each qtail_auto_approver has an owner, drawn when it
// is created, and marks each approver it needs with its marker and owner:
//
//	"exitNode": [
//		// qtail:auto_approver:exitNode#k3x9q2mfa7
//		// qtail:auto_approver:exitNode#p7mv2rt4ha
//		"tag:k8s",
//		// qtail:auto_approver:exitNode#p7mv2rt4ha
//		"tag:k8s-eu",
//	],
//
// An approver stays while one owner marks it; the last owner to leave
// removes it. Approvers nobody marked (written by hand) stay as they are;
// one that an owner needs is adopted (marked), like any identical entry.
// A list, routes or autoApprovers that qtail created carries a marker too
// (the list's key without an owner, or createdMarker), and qtail removes it
// when it has emptied it, so that a destroy leaves no empty
// "autoApprovers": {} behind; one that a person wrote stays.
//
// A key without an owner is the part of the list that no owner marked:
// what an import takes over, and the whole list in files written before
// lists were shared, when a marker before the member made the whole list
// one fragment.

// createdMarker is the marker of a section that qtail created and removes
// once it has emptied it: "autoApprovers", its "routes" and its
// "services". Other sections stay, empty, as people expect them.
func createdMarker(section string) string {
	switch section {
	case "autoApprovers", "routes", "services":
		return "// " + markerPrefix + "section:" + section
	}
	return ""
}

// hasLine reports whether the extra e holds the line comment marker.
func hasLine(e []byte, marker string) bool {
	for _, t := range tokens(e) {
		if t.kind == tokLine && strings.TrimSpace(string(e[t.start:t.end])) == marker {
			return true
		}
	}
	return false
}

// approverMember finds the member that holds the list of key's approvers:
// autoApprovers.routes[CIDR] or autoApprovers.exitNode, in the object
// parent, at index i, and its value as a container. With create, the
// sections and an empty list are added when missing.
func (d *Document) approverMember(key Key, create bool) (parent container, i int, list container, ok bool, err error) {
	parent, ok, err = d.section(key, create)
	if !ok || err != nil {
		return parent, -1, container{}, false, err
	}
	i, _ = d.find(parent, key.List(), nil)
	if i < 0 {
		if !create {
			return parent, -1, container{}, false, nil
		}
		d.appendEntry(parent, key.List(), &hujson.Value{Value: &hujson.Array{}})
		i = parent.len() - 1
	}
	m := &parent.obj.Members[i]
	if m.Value.Value.Kind() != '[' {
		return parent, i, container{}, false, fmt.Errorf("policy: %s in the policy file is not an array", approverPath(key))
	}
	return parent, i, newContainer(&m.Value, parent.entryIndent(i, d.style.unit)), true, nil
}

// approverPath names the list of key in messages.
func approverPath(key Key) string {
	if key.Name == ExitNodeName {
		return "autoApprovers.exitNode"
	}
	if key.isService() {
		return fmt.Sprintf("autoApprovers.services[%q]", key.entryKey())
	}
	return fmt.Sprintf("autoApprovers.routes[%q]", key.entryKey())
}

// ValidServiceApproverKey checks a member name of autoApprovers.services:
// a Tailscale Service, "svc:" then a DNS label (lower-case letters,
// digits and dashes, 1 to 63 of them, starting and ending with a letter
// or a digit), or a tag, for the Services that carry it.
func ValidServiceApproverKey(s string) error {
	if strings.HasPrefix(s, "tag:") {
		return ValidTag(s)
	}
	label, ok := strings.CutPrefix(s, "svc:")
	if !ok {
		return fmt.Errorf("%q must be a Tailscale Service, svc:NAME, or a tag, tag:NAME", s)
	}
	alnum := func(c byte) bool { return 'a' <= c && c <= 'z' || isDigit(c) }
	if label == "" {
		return fmt.Errorf("%q: the service name after 'svc:' must not be empty", s)
	}
	if len(label) > 63 {
		return fmt.Errorf("%q: the service name after 'svc:' is longer than 63 characters", s)
	}
	if !alnum(label[0]) || !alnum(label[len(label)-1]) {
		return fmt.Errorf("%q: the service name after 'svc:' must start and end with a lower-case letter or a digit", s)
	}
	for i := 0; i < len(label); i++ {
		if c := label[i]; !alnum(c) && c != '-' {
			return fmt.Errorf("%q: the service name after 'svc:' can only contain lower-case letters, digits and dashes", s)
		}
	}
	return nil
}

// ownersOf returns the owners that mark an approver of the list name,
// whose leading extra is e.
func ownersOf(e []byte, name string) []string {
	var out []string
	for _, k := range markersIn(e) {
		if k.Kind == KindAutoApprover && k.Name == name && k.Owner != "" && !slices.Contains(out, k.Owner) {
			out = append(out, k.Owner)
		}
	}
	return out
}

// belongs reports whether the approver of list, whose leading extra is e,
// is part of key: marked by its owner, or, for a key without an owner,
// marked by none.
func belongs(e []byte, key Key) bool {
	owners := ownersOf(e, key.Name)
	if key.Owned() {
		return slices.Contains(owners, key.Owner)
	}
	return len(owners) == 0
}

// anyOwned reports whether an owner marks an approver of list.
func anyOwned(list container, key Key) bool {
	for j := 0; j < list.len(); j++ {
		if len(ownersOf(*list.lead(j), key.Name)) > 0 {
			return true
		}
	}
	return false
}

// joinArray writes values as a canonical JSON array.
func joinArray(values []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range values {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(v)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// lookupApprovers reads the approvers of key.
func (d *Document) lookupApprovers(key Key) Fragment {
	f := Fragment{Key: key}
	parent, i, list, ok, err := d.approverMember(key, false)
	if !ok || err != nil {
		return f
	}
	var values []json.RawMessage
	for j := 0; j < list.len(); j++ {
		if belongs(*list.lead(j), key) {
			values = append(values, canonical(list.value(j)))
		}
	}
	if key.Owned() {
		if len(values) == 0 {
			return f
		}
		f.Marked = true
	} else {
		if len(values) == 0 && anyOwned(list, key) {
			return f
		}
		f.Marked = hasMarker(*parent.lead(i), key)
	}
	f.Found, f.Value = true, joinArray(values)
	return f
}

// putApprovers writes the approvers of key. Without an owner it replaces
// the whole list, as files written before lists were shared expect; that
// is refused once owners share the list.
func (d *Document) putApprovers(key Key, val *hujson.Value, overwrite bool) error {
	_, _, list, ok, err := d.approverMember(key, false)
	if err != nil {
		return err
	}
	if !key.Owned() {
		if ok && anyOwned(list, key) {
			return fmt.Errorf("policy: %s is shared by several owners (%s resources); "+
				"qtail writes the approvers of one owner at a time, never the whole list", approverPath(key), naming().Kind(key.Kind))
		}
		return d.put(key, val, overwrite)
	}
	arr, _ := val.Value.(*hujson.Array) // parseFragmentValue checked it is one
	want := make([]string, len(arr.Elements))
	for n := range arr.Elements {
		want[n] = string(canonical(&arr.Elements[n]))
	}
	if !ok {
		if _, _, list, _, err = d.approverMember(key, true); err != nil {
			return err
		}
	}
	// The approvers of key that it no longer needs go first, so that the
	// ones it keeps are found where they are.
	for j := list.len() - 1; j >= 0; j-- {
		if hasMarker(*list.lead(j), key) && !slices.Contains(want, string(canonical(list.value(j)))) {
			d.dropApprover(list, j, key)
		}
	}
	for n, w := range want {
		j := slices.IndexFunc(elementsOf(list), func(v *hujson.Value) bool { return string(canonical(v)) == w })
		if j < 0 {
			d.appendEntry(list, key, &arr.Elements[n])
		} else if !hasMarker(*list.lead(j), key) {
			d.addMarker(list, j, key)
		}
	}
	if list.len() == 0 {
		d.pruneApprovers(key)
	}
	return nil
}

// elementsOf lists the values of the array container c.
func elementsOf(c container) []*hujson.Value {
	out := make([]*hujson.Value, c.len())
	for i := range out {
		out[i] = c.value(i)
	}
	return out
}

// dropApprover removes key's mark from approver j of list, and the
// approver itself when no other owner marks it.
func (d *Document) dropApprover(list container, j int, key Key) {
	if len(ownersOf(*list.lead(j), key.Name)) > 1 {
		*list.lead(j) = dropMarkerLine(*list.lead(j), func(k Key) bool { return k == key }, "")
		return
	}
	d.remove(list, j, key)
}

// deleteApprovers removes the approvers of key, and the list and sections
// that qtail created and that are left empty. With takeOver, a key
// without an owner also takes the approvers that no owner marked from a
// list that qtail did not write: what an import of the list took over.
func (d *Document) deleteApprovers(key Key, takeOver bool) bool {
	parent, i, list, ok, err := d.approverMember(key, false)
	if !ok || err != nil {
		if err == nil || key.Owned() {
			return false
		}
		// Not a list: a file written before lists were shared whose
		// marked member holds something else.
		if i >= 0 && hasMarker(*parent.lead(i), key) {
			d.remove(parent, i, key)
			d.pruneApprovers(key)
			return true
		}
		return false
	}
	removed := false
	if key.Owned() {
		for j := list.len() - 1; j >= 0; j-- {
			if hasMarker(*list.lead(j), key) {
				d.dropApprover(list, j, key)
				removed = true
			}
		}
	} else if !hasMarker(*parent.lead(i), key) && !takeOver {
		// Nobody's list to remove: the member was not written by qtail.
		return false
	} else if hasMarker(*parent.lead(i), key) && !anyOwned(list, key) {
		d.remove(parent, i, key)
		removed = true
	} else {
		// The approvers that no owner marked; a list that a person
		// wrote stays, emptied.
		for j := list.len() - 1; j >= 0; j-- {
			if len(ownersOf(*list.lead(j), key.Name)) == 0 {
				d.remove(list, j, key)
				removed = true
			}
		}
	}
	if removed {
		d.pruneApprovers(key)
	}
	return removed
}

// pruneApprovers removes, from the list of key up to autoApprovers, what
// qtail created and what is now empty.
func (d *Document) pruneApprovers(key Key) {
	if parent, i, list, ok, _ := d.approverMember(key, false); ok && list.len() == 0 && hasMarker(*parent.lead(i), key.List()) {
		d.remove(parent, i, key.List())
	}
	root := d.rootContainer()
	aa, ok, err := d.child(root, "autoApprovers", '{', false)
	if !ok || err != nil {
		return
	}
	if j := memberIndex(aa, "routes"); j >= 0 {
		d.pruneSection(aa, j, "routes")
	}
	if j := memberIndex(aa, "services"); j >= 0 {
		d.pruneSection(aa, j, "services")
	}
	if j := memberIndex(root, "autoApprovers"); j >= 0 {
		d.pruneSection(root, j, "autoApprovers")
	}
}

// pruneSection removes member j of parent, the section name, when it is an
// empty object that qtail created, with no comment inside.
func (d *Document) pruneSection(parent container, j int, name string) {
	m := &parent.obj.Members[j]
	marker := createdMarker(name)
	obj, ok := m.Value.Value.(*hujson.Object)
	if !ok || len(obj.Members) > 0 || hasComment(obj.AfterExtra) || !hasLine(m.Name.BeforeExtra, marker) {
		return
	}
	d.removeWith(parent, j, nil, marker)
}

// memberIndex returns the index of the member of the object c named name,
// whatever its casing, or -1.
func memberIndex(c container, name string) int {
	for i := range c.obj.Members {
		if strings.EqualFold(memberName(&c.obj.Members[i]), name) {
			return i
		}
	}
	return -1
}

// approverFragments lists the auto approvers in the file: for each list,
// the approvers of each owner, and the part that no owner marked when
// qtail wrote the list as a whole.
func (d *Document) approverFragments() []OwnedFragment {
	var out []OwnedFragment
	add := func(key Key, parent container, i int) {
		m := &parent.obj.Members[i]
		if m.Value.Value.Kind() != '[' {
			if hasMarker(m.Name.BeforeExtra, key) {
				out = append(out, OwnedFragment{Key: key, Value: canonical(&m.Value)})
			}
			return
		}
		list := newContainer(&m.Value, "")
		var owners []string
		byOwner := map[string][]json.RawMessage{}
		var unowned []json.RawMessage
		for j := 0; j < list.len(); j++ {
			v := canonical(list.value(j))
			os := ownersOf(*list.lead(j), key.Name)
			if len(os) == 0 {
				unowned = append(unowned, v)
			}
			for _, o := range os {
				if _, seen := byOwner[o]; !seen {
					owners = append(owners, o)
				}
				byOwner[o] = append(byOwner[o], v)
			}
		}
		if hasMarker(m.Name.BeforeExtra, key) && (len(unowned) > 0 || len(owners) == 0) {
			out = append(out, OwnedFragment{Key: key, Value: joinArray(unowned)})
		}
		for _, o := range owners {
			out = append(out, OwnedFragment{Key: Key{Kind: key.Kind, Name: key.Name, Owner: o}, Value: joinArray(byOwner[o])})
		}
	}
	if routes, ok, err := d.section(RouteKey(""), false); ok && err == nil {
		for i := range routes.obj.Members {
			add(RouteKey(memberName(&routes.obj.Members[i])), routes, i)
		}
	}
	if aa, ok, err := d.section(ExitNodeKey(), false); ok && err == nil {
		if i := memberIndex(aa, ExitNodeName); i >= 0 {
			add(ExitNodeKey(), aa, i)
		}
	}
	if services, ok, err := d.section(ServiceKey(""), false); ok && err == nil {
		for i := range services.obj.Members {
			add(ServiceKey(memberName(&services.obj.Members[i])), services, i)
		}
	}
	return out
}
