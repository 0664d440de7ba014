package policyfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// Document is a parsed policy file that qtail edits fragment by fragment.
// Every byte outside the fragments it writes stays as it was. A Document
// is not safe for concurrent use while it is being changed; its read
// methods (Get, Lookup, Fragments, Bytes) may run concurrently.
type Document struct {
	root  hujson.Value
	style style
	// index finds the entries of the large sections without reading
	// every comment; see index.go.
	index indexes
}

// Fragment is what a read finds of one fragment.
type Fragment struct {
	Key Key
	// Found is true when the policy holds the fragment.
	Found bool
	// Marked is true when the fragment carries qtail's marker. A fragment
	// found only by its key, or only by identical content, is not marked:
	// the next write adopts it by adding the marker.
	Marked bool
	// Value is the fragment in canonical JSON (see Canonicalize), nil when
	// not found.
	Value json.RawMessage
	// Owner is the owner that the marker of a grant, a tag owner or a test
	// names; "" when it names none or the fragment is not marked. An auto
	// approver's owner is in its key.
	Owner string
}

// OwnedFragment is one fragment that carries qtail's marker.
type OwnedFragment struct {
	// Key identifies the fragment, with the owner its marker names.
	Key   Key
	Value json.RawMessage // canonical JSON
	// Owner is the owner that the marker names, "" when none: Key's.
	Owner string
}

// Mutation is one change to one fragment.
type Mutation struct {
	Key Key
	// Value is the fragment's new value (a JSON object for grants and
	// tests, a JSON array of owners or approvers otherwise). Ignored when
	// Delete is set.
	Value json.RawMessage
	// Delete removes the fragment instead.
	Delete bool
	// Overwrite lets a put replace a keyed entry that exists without
	// qtail's marker and with other content, instead of failing with an
	// *UnmanagedConflictError. It is for updates of an imported entry.
	// With Delete, on an auto approver key without an owner, it removes
	// the approvers that no owner marked even from a list that qtail did
	// not write: the approvers that an import took over.
	Overwrite bool
}

// Parse parses a policy file. It keeps a copy of b.
func Parse(b []byte) (*Document, error) {
	src := bytes.Clone(b)
	v, err := hujson.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("policy: the policy file is not valid HuJSON: %w", err)
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, errors.New("policy: the policy file is not a JSON object")
	}
	return &Document{root: v, style: detectStyle(src, &v)}, nil
}

// Bytes returns the policy file.
func (d *Document) Bytes() []byte { return d.root.Pack() }

// Clone returns a copy of d that changes independently of d.
//
// A Document never changes the values of the entries of a section in place:
// it replaces them, or changes the section's list of entries (and the
// comments between them). A copy therefore shares the entries of each
// section and copies only the lists, which costs little for a file of
// thousands of grants, except for autoApprovers, whose nested lists qtail
// changes and which is copied whole. The index is copied too.
func (d *Document) Clone() *Document {
	c := &Document{root: cloneSections(d.root), style: d.style}
	c.index.list = d.index.clone(&c.root)
	return c
}

// cloneSections copies the root object of a policy file for Clone.
func cloneSections(root hujson.Value) hujson.Value {
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return cloneValue(root)
	}
	o := &hujson.Object{Members: make([]hujson.ObjectMember, len(obj.Members)), AfterExtra: obj.AfterExtra}
	for i, m := range obj.Members {
		if strings.EqualFold(memberName(&m), "autoApprovers") {
			o.Members[i] = hujson.ObjectMember{Name: cloneValue(m.Name), Value: cloneValue(m.Value)}
			continue
		}
		m.Value = cloneList(m.Value)
		o.Members[i] = m
	}
	root.Value = o
	return root
}

// cloneList copies an array or an object one level deep: a new list of
// entries that share their values.
func cloneList(v hujson.Value) hujson.Value {
	switch t := v.Value.(type) {
	case *hujson.Array:
		v.Value = &hujson.Array{Elements: slices.Clone(t.Elements), AfterExtra: t.AfterExtra}
	case *hujson.Object:
		v.Value = &hujson.Object{Members: slices.Clone(t.Members), AfterExtra: t.AfterExtra}
	}
	return v
}

// Get finds the fragment of key: by its marker, or for a keyed fragment
// (tag owner, auto approver) by its key.
func (d *Document) Get(key Key) Fragment { return d.Lookup(key, nil) }

// Lookup is Get that also finds a grant or a test without a marker when
// its content is identical to want (compared in canonical form).
func (d *Document) Lookup(key Key, want json.RawMessage) Fragment {
	f := Fragment{Key: key}
	if key.Validate() != nil {
		return f
	}
	if key.Kind == KindAllowAll {
		f.Found = HasAllowAll(d)
		return f
	}
	if key.Kind == KindAutoApprover {
		return d.lookupApprovers(key)
	}
	c, ok, err := d.section(key, false)
	if !ok || err != nil {
		return f
	}
	i, marked := d.find(c, key, nil)
	if i < 0 && want != nil {
		// No marked entry: an identical one without its marker. want is
		// canonicalized only now, as a refresh of many marked fragments
		// never needs it.
		if want, err = Canonicalize(want); err == nil {
			i, marked = d.find(c, key, want)
		}
	}
	if i < 0 {
		return f
	}
	f.Found, f.Marked, f.Value = true, marked, canonical(c.value(i))
	if marked {
		f.Owner = markerOwner(*c.lead(i), key)
	}
	return f
}

// ownedByOther reports whether the marked entry whose leading extra is
// lead belongs to another owner than key's: key has an owner, and the
// marker names another one. A marker without an owner is that of any
// key, and a key without an owner changes the entry whoever owns it (see
// Key.Owner).
func ownedByOther(lead []byte, key Key) (string, bool) {
	if key.Owner == "" || key.Kind == KindAutoApprover {
		return "", false
	}
	owner := markerOwner(lead, key)
	return owner, owner != "" && owner != key.Owner
}

// Put creates or updates the fragment of key with value. See Apply.
func (d *Document) Put(key Key, value json.RawMessage) error {
	return d.Apply(Mutation{Key: key, Value: value})
}

// Delete removes the fragment of key with its marker and reports whether
// there was one. An entry without qtail's marker is not qtail's and stays;
// so does, for a key with an owner, an entry marked for another owner.
func (d *Document) Delete(key Key) bool {
	if key.Validate() != nil {
		return false
	}
	if key.Kind == KindAllowAll {
		return removeAllowAll(d) > 0
	}
	if key.Kind == KindAutoApprover {
		return d.deleteApprovers(key, false)
	}
	c, ok, err := d.section(key, false)
	if !ok || err != nil {
		return false
	}
	if key.Kind.keyed() {
		i, marked := d.find(c, key, nil)
		if i < 0 || !marked {
			return false
		}
		if _, other := ownedByOther(*c.lead(i), key); other {
			return false
		}
		d.remove(c, i, key)
		return true
	}
	removed := false
	for {
		i, marked := d.find(c, key, nil)
		if i < 0 || !marked {
			return removed
		}
		if _, other := ownedByOther(*c.lead(i), key); other {
			return removed
		}
		d.remove(c, i, key)
		removed = true
	}
}

// Apply makes one change. A put replaces the value of the marked entry in
// place; without a marker it adopts an identical entry (adding the marker)
// and otherwise appends a new entry at the end of its section, creating
// the section when missing. A keyed entry that exists unmarked with other
// content is an *UnmanagedConflictError unless m.Overwrite is set; an
// entry marked for another owner than the key's is an *OwnedError. A put
// with an owner writes it in the marker. On error the document is
// unchanged.
func (d *Document) Apply(m Mutation) error {
	if err := m.Key.Validate(); err != nil {
		return err
	}
	if m.Delete && m.Overwrite && m.Key.Kind == KindAutoApprover && !m.Key.Owned() {
		d.deleteApprovers(m.Key, true)
		return nil
	}
	if m.Delete {
		d.Delete(m.Key)
		return nil
	}
	if m.Key.Kind == KindAllowAll {
		return errors.New("policy: qtail removes the default allow-all rule; it never writes it")
	}
	val, err := parseFragmentValue(m.Key, m.Value)
	if err != nil {
		return err
	}
	if m.Key.Kind == KindAutoApprover {
		return d.putApprovers(m.Key, &val, m.Overwrite)
	}
	// put checks everything it can refuse before it changes anything.
	return d.put(m.Key, &val, m.Overwrite)
}

// Fragments lists every fragment that carries qtail's marker, in document
// order within each section.
func (d *Document) Fragments() []OwnedFragment {
	var out []OwnedFragment
	list := func(kind Kind) {
		c, ok, err := d.section(Key{Kind: kind}, false)
		if !ok || err != nil {
			return
		}
		for i := 0; i < c.len(); i++ {
			if k, ok := lastMarkerOfKind(*c.lead(i), kind); ok {
				out = append(out, OwnedFragment{Key: k, Value: canonical(c.value(i)), Owner: k.Owner})
			}
		}
	}
	keyed := func(c container, key func(name string) (Key, bool)) {
		for i := range c.obj.Members {
			m := &c.obj.Members[i]
			if k, ok := key(memberName(m)); ok && hasMarker(m.Name.BeforeExtra, k) {
				k.Owner = markerOwner(m.Name.BeforeExtra, k)
				out = append(out, OwnedFragment{Key: k, Value: canonical(&m.Value), Owner: k.Owner})
			}
		}
	}
	list(KindGrant)
	if c, ok, err := d.section(Key{Kind: KindTagOwner}, false); ok && err == nil {
		keyed(c, func(name string) (Key, bool) { return Key{Kind: KindTagOwner, Name: name}, true })
	}
	out = append(out, d.approverFragments()...)
	list(KindPolicyTest)
	return out
}

// parseJSON parses b, which must be standard JSON (json.Valid), in one
// pass: HuJSON that holds no comment and no trailing comma.
func parseJSON(b []byte) (hujson.Value, bool) {
	v, err := hujson.Parse(bytes.Clone(b))
	return v, err == nil && v.IsStandard()
}

// parseFragmentValue checks that value is JSON of the shape of key's kind.
func parseFragmentValue(key Key, value json.RawMessage) (hujson.Value, error) {
	v, ok := parseJSON(value)
	if !ok {
		return hujson.Value{}, fmt.Errorf("policy: the value of %s is not valid JSON", key)
	}
	v.Minimize()
	want, what := hujson.Kind('{'), "a JSON object"
	if key.Kind.keyed() {
		want, what = '[', "a JSON array"
	}
	if v.Value.Kind() != want {
		return hujson.Value{}, fmt.Errorf("policy: the value of %s must be %s", key, what)
	}
	return v, nil
}

func (d *Document) put(key Key, val *hujson.Value, overwrite bool) error {
	want := canonical(val)
	c, ok, err := d.section(key, false)
	if err != nil {
		return err
	}
	if ok {
		if i, marked := d.find(c, key, want); i >= 0 {
			cur := canonical(c.value(i))
			same := bytes.Equal(cur, want)
			if !marked && !same && !overwrite {
				return &UnmanagedConflictError{Key: key, Existing: cur}
			}
			if owner, other := ownedByOther(*c.lead(i), key); marked && other {
				return &OwnedError{Key: key, Owner: owner, Existing: cur}
			}
			if !marked {
				d.addMarker(c, i, key)
			} else if key.Owner != "" && markerOwner(*c.lead(i), key) == "" {
				// A marker written before owners were: it gets the owner.
				*c.lead(i) = withMarker(*c.lead(i), key)
				d.index.relead(c, i)
			}
			if !same {
				ind := c.entryIndent(i, d.style.unit)
				c.value(i).Value = d.style.formatFragment(key.Kind, val, ind).Value
			}
			return nil
		}
	}
	if c, _, err = d.section(key, true); err != nil {
		return err
	}
	d.appendEntry(c, key, val)
	return nil
}

// container is an array or object of the policy seen as a list of entries.
// Exactly one of arr and obj is set.
type container struct {
	arr *hujson.Array
	obj *hujson.Object
	// indent is the indentation of the line on which the container
	// starts, which is also that of its closing bracket.
	indent string
}

// newContainer views v, an array or an object, as a container.
func newContainer(v *hujson.Value, indent string) container {
	if a, ok := v.Value.(*hujson.Array); ok {
		return container{arr: a, indent: indent}
	}
	o, _ := v.Value.(*hujson.Object)
	return container{obj: o, indent: indent}
}

func (c container) len() int {
	if c.arr != nil {
		return len(c.arr.Elements)
	}
	return len(c.obj.Members)
}

// lead is the extra before entry i: after the opening bracket or the
// preceding comma. Markers live here.
func (c container) lead(i int) *hujson.Extra {
	if c.arr != nil {
		return &c.arr.Elements[i].BeforeExtra
	}
	return &c.obj.Members[i].Name.BeforeExtra
}

// trail is the extra after entry i and before its comma. For the last
// entry, a non-nil trail means a trailing comma.
func (c container) trail(i int) *hujson.Extra {
	if c.arr != nil {
		return &c.arr.Elements[i].AfterExtra
	}
	return &c.obj.Members[i].Value.AfterExtra
}

// closing is the extra before the closing bracket.
func (c container) closing() *hujson.Extra {
	if c.arr != nil {
		return &c.arr.AfterExtra
	}
	return &c.obj.AfterExtra
}

// value is entry i's value (for an object, the member's value).
func (c container) value(i int) *hujson.Value {
	if c.arr != nil {
		return &c.arr.Elements[i]
	}
	return &c.obj.Members[i].Value
}

func (c container) removeAt(i int) {
	if c.arr != nil {
		c.arr.Elements = append(c.arr.Elements[:i:i], c.arr.Elements[i+1:]...)
		return
	}
	c.obj.Members = append(c.obj.Members[:i:i], c.obj.Members[i+1:]...)
}

// entryIndent is the indentation of entry i's line.
func (c container) entryIndent(i int, unit string) string {
	if ind, ok := lastLineIndent(*c.lead(i)); ok {
		return ind
	}
	return c.indent + unit
}

// find locates key's entry in c, a section of the policy, and reports
// whether it carries the marker: through the index of the section when
// there is one (see index.go), else by reading every entry.
func (d *Document) find(c container, key Key, want json.RawMessage) (int, bool) {
	if i, marked, ok := d.index.find(c, key, want); ok {
		return i, marked
	}
	return c.find(key, want)
}

// find locates key's entry and reports whether it carries the marker.
// Grants and tests are found by marker, then (when want is set) as an
// unmarked entry whose canonical form is want. Keyed entries are found by
// their key.
func (c container) find(key Key, want json.RawMessage) (int, bool) {
	if key.Kind.keyed() {
		if c.obj == nil {
			return -1, false
		}
		for i := range c.obj.Members {
			if keyMatches(key, memberName(&c.obj.Members[i])) {
				return i, hasMarker(c.obj.Members[i].Name.BeforeExtra, key)
			}
		}
		return -1, false
	}
	for i := 0; i < c.len(); i++ {
		if hasMarker(*c.lead(i), key) {
			return i, true
		}
	}
	if want != nil {
		for i := 0; i < c.len(); i++ {
			if !hasMarkerOfKind(*c.lead(i), key.Kind) && bytes.Equal(canonical(c.value(i)), want) {
				return i, false
			}
		}
	}
	return -1, false
}

func keyMatches(key Key, name string) bool {
	if key.Kind == KindAutoApprover && key.Name == ExitNodeName {
		return strings.EqualFold(name, ExitNodeName)
	}
	return name == key.entryKey()
}

func (d *Document) rootContainer() container {
	ind, _ := lastLineIndent(d.root.BeforeExtra)
	return newContainer(&d.root, ind) // Parse checked that the root is an object
}

// section returns the container that holds the fragments of key's kind:
// the grants or tests array, the tagOwners object, autoApprovers.routes,
// autoApprovers.services, or autoApprovers itself for exitNode. Sections are matched
// case-insensitively; with create, missing ones are appended.
func (d *Document) section(key Key, create bool) (container, bool, error) {
	root := d.rootContainer()
	switch key.Kind {
	case KindGrant:
		return d.child(root, "grants", '[', create)
	case KindPolicyTest:
		return d.child(root, "tests", '[', create)
	case KindTagOwner:
		return d.child(root, "tagOwners", '{', create)
	case KindAutoApprover:
		aa, ok, err := d.child(root, "autoApprovers", '{', create)
		if !ok || err != nil || key.Name == ExitNodeName {
			return aa, ok, err
		}
		if key.isService() {
			return d.child(aa, "services", '{', create)
		}
		return d.child(aa, "routes", '{', create)
	}
	return container{}, false, fmt.Errorf("policy: unknown fragment kind %q", key.Kind)
}

// child returns the member name of the object parent, which must be an
// array ('[') or an object ('{').
func (d *Document) child(parent container, name string, want hujson.Kind, create bool) (container, bool, error) {
	obj := parent.obj
	for i := range obj.Members {
		m := &obj.Members[i]
		if !strings.EqualFold(memberName(m), name) {
			continue
		}
		if m.Value.Value.Kind() != want {
			what := "an array"
			if want == '{' {
				what = "an object"
			}
			return container{}, false, fmt.Errorf("policy: %q in the policy file is not %s", memberName(m), what)
		}
		ind, ok := lastLineIndent(m.Name.BeforeExtra)
		if !ok {
			ind = parent.indent
		}
		return newContainer(&m.Value, ind), true, nil
	}
	if !create {
		return container{}, false, nil
	}
	var empty hujson.ValueTrimmed = &hujson.Array{}
	if want == '{' {
		empty = &hujson.Object{}
	}
	ind, lead, trail, closing := d.slot(parent, createdMarker(name), true)
	obj.Members = append(obj.Members, hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: lead, Value: hujson.String(name)},
		Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: empty, AfterExtra: trail},
	})
	*parent.closing() = closing
	return newContainer(&obj.Members[len(obj.Members)-1].Value, ind), true, nil
}

// slot prepares the end of c for one more entry, laid out like its last
// sibling (same indentation, same trailing-comma habit). It returns the new
// entry's indentation, leading extra (marker included) and trailing extra,
// and the container's new closing extra. What stood on the line of the old
// last entry (a same-line comment) moves in front of the new entry so that
// it stays on its line.
func (d *Document) slot(c container, marker string, section bool) (ind string, lead, trail, closing hujson.Extra) {
	st := d.style
	n := c.len()
	head, tail := splitFirstLine(*c.closing())
	trailing, blank := st.trailing, false
	if n == 0 {
		ind = c.indent + st.unit
		if tail == nil {
			tail = []byte(st.nl + c.indent)
		}
	} else {
		last := *c.lead(n - 1)
		ind = c.entryIndent(n-1, st.unit)
		trailing = *c.trail(n - 1) != nil
		blank = section && hasBlankLine(last)
	}
	lead = concat(head, []byte(st.nl))
	if blank {
		lead = append(lead, st.nl...)
	}
	lead = append(lead, ind...)
	if marker != "" {
		lead = append(lead, marker+st.nl+ind...)
	}
	if trailing {
		trail = hujson.Extra{}
	}
	return ind, lead, trail, concat(tail)
}

// appendEntry writes val as the new last entry of c with key's marker.
func (d *Document) appendEntry(c container, key Key, val *hujson.Value) {
	ind, lead, trail, closing := d.slot(c, key.Marker(), false)
	nv := d.style.formatFragment(key.Kind, val, ind)
	if c.arr != nil {
		c.arr.Elements = append(c.arr.Elements, hujson.Value{BeforeExtra: lead, Value: nv.Value, AfterExtra: trail})
	} else {
		c.obj.Members = append(c.obj.Members, hujson.ObjectMember{
			Name:  hujson.Value{BeforeExtra: lead, Value: hujson.String(key.entryKey())},
			Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: nv.Value, AfterExtra: trail},
		})
	}
	*c.closing() = closing
	d.index.appended(c)
}

// addMarker puts key's marker on its own line just before entry i.
func (d *Document) addMarker(c container, i int, key Key) {
	defer d.index.relead(c, i)
	l := *c.lead(i)
	nl := d.style.nl
	if ind, ok := lastLineIndent(l); ok && bytes.HasSuffix(l, []byte("\n"+ind)) {
		// The entry starts its line: the marker goes on a line of its own
		// above, at the same indentation.
		*c.lead(i) = concat(l, []byte(key.Marker()+nl+ind))
		return
	}
	ind := c.entryIndent(i, d.style.unit)
	l = bytes.TrimRight(l, " \t")
	*c.lead(i) = concat(l, []byte(nl+ind+key.Marker()+nl+ind))
}

// remove deletes entry i and its marker. The comments around it stay, and
// so does the trailing-comma habit of the container. Removing an entry
// that was appended restores the bytes from before the append.
func (d *Document) remove(c container, i int, key Key) {
	d.removeWith(c, i, func(k Key) bool { return sameEntry(k, key) }, "")
}

// removeWith is remove for the entry whose marker is the one isMarker
// accepts, or the comment line marker (a section's, see createdMarker).
func (d *Document) removeWith(c container, i int, isMarker func(Key) bool, marker string) {
	n := c.len()
	prefix := withoutMarker(*c.lead(i), isMarker, marker)
	if marker != "" && i > 0 && hasBlankLine(*c.lead(i - 1)) {
		// A section that slot created after a sibling set off by a blank
		// line got a blank line of its own: it goes with the section.
		prefix = withoutFinalBreak(prefix)
	}
	if t := *c.trail(i); hasComment(t) {
		prefix = concat(prefix, t)
	}
	if i < n-1 {
		*c.lead(i + 1) = joinExtra(prefix, *c.lead(i + 1))
	} else if n > 1 && *c.trail(i) != nil {
		if *c.trail(i - 1) == nil {
			*c.trail(i - 1) = hujson.Extra{}
		}
		*c.closing() = joinExtra(prefix, *c.closing())
	} else if n > 1 {
		prev := *c.trail(i - 1)
		*c.trail(i - 1) = nil
		*c.closing() = joinExtra(concat(prev, prefix), *c.closing())
	} else {
		rest := joinExtra(prefix, *c.closing())
		// Undo the line break that slot adds to an empty "[]" or "{}".
		if suffix := d.style.nl + c.indent; bytes.HasSuffix(rest, []byte(suffix)) {
			before := rest[:len(rest)-len(suffix)]
			if len(lineBreaks(before)) == 0 && !bytes.Contains(before, []byte("//")) {
				rest = before
			}
		}
		*c.closing() = rest
	}
	c.removeAt(i)
	d.index.removed(c, i)
	if i < c.len() {
		d.index.relead(c, i)
	}
}
