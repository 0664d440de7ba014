package policyfile

import (
	"slices"
	"strings"
	"sync"

	"github.com/tailscale/hujson"
)

// A policy file may hold thousands of grants. Finding one by reading the
// comments before every entry costs a pass over the file per fragment, and
// a plan or an apply of N fragments N passes: the indexes below find an
// entry of a large section (grants, tests, tagOwners,
// autoApprovers.routes) at once. A section's index is built on its first
// search and kept up to date by every change the Document makes to the
// section; a Clone copies it.

// indexes are the section indexes of one Document. The read methods of a
// Document may run concurrently, and build indexes: mu guards them.
type indexes struct {
	mu   sync.Mutex
	list []*sectionIndex
}

// sectionIndex finds the entries of one section.
type sectionIndex struct {
	kind Kind
	// of is the *hujson.Array or *hujson.Object of the section.
	of any
	// marked lists, for an array, the entries by the markers before them
	// (their keys without owner, see Key.ident), each list in document
	// order.
	marked map[Key][]int
	// unmarked lists, for an array, the entries without a marker of kind
	// by their canonical form; nil until an unmarked entry is looked for.
	unmarked map[string][]int
	// names lists, for an object, the members by name, in order.
	names map[string][]int
}

// containerID is what identifies the section c in the tree.
func containerID(c container) any {
	if c.arr != nil {
		return c.arr
	}
	return c.obj
}

// indexed reports whether the section of key, c, is one that grows large
// enough to index: grants, tests, tagOwners, and the routes of auto
// approvers (not the autoApprovers object itself, which holds exitNode,
// found whatever its casing, and routes; nor the few services).
func indexed(key Key, c container) bool {
	switch key.Kind {
	case KindGrant, KindPolicyTest:
		return c.arr != nil
	case KindTagOwner:
		return c.obj != nil
	case KindAutoApprover:
		return c.obj != nil && strings.HasPrefix(key.Name, RoutePrefix)
	}
	return false
}

// of returns the index of c, building it when c is the section of key
// and has none yet; nil when c is not indexed.
func (x *indexes) of(c container, key Key) *sectionIndex {
	id := containerID(c)
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, idx := range x.list {
		if idx.of == id {
			return idx
		}
	}
	if !indexed(key, c) {
		return nil
	}
	idx := buildIndex(key.Kind, c)
	x.list = append(x.list, idx)
	return idx
}

// existing returns the index of c if there is one, without building it.
func (x *indexes) existing(c container) *sectionIndex {
	id := containerID(c)
	for _, idx := range x.list {
		if idx.of == id {
			return idx
		}
	}
	return nil
}

func buildIndex(kind Kind, c container) *sectionIndex {
	idx := &sectionIndex{kind: kind, of: containerID(c)}
	if c.arr != nil {
		idx.marked = map[Key][]int{}
		for i := 0; i < c.len(); i++ {
			for _, k := range markersIn(*c.lead(i)) {
				idx.marked[k.ident()] = appendOnce(idx.marked[k.ident()], i)
			}
		}
		return idx
	}
	idx.names = map[string][]int{}
	for i := range c.obj.Members {
		name := memberName(&c.obj.Members[i])
		idx.names[name] = append(idx.names[name], i)
	}
	return idx
}

// appendOnce appends i to a sorted list unless it ends with it already (a
// lead that holds the same marker twice).
func appendOnce(l []int, i int) []int {
	if n := len(l); n > 0 && l[n-1] == i {
		return l
	}
	return append(l, i)
}

// find is container.find through the index. x.mu is not held: the maps
// are read under it.
func (x *indexes) find(c container, key Key, want []byte) (int, bool, bool) {
	idx := x.of(c, key)
	if idx == nil {
		return 0, false, false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if c.obj != nil {
		for _, i := range idx.names[key.entryKey()] {
			return i, hasMarker(c.obj.Members[i].Name.BeforeExtra, key), true
		}
		return -1, false, true
	}
	if l := idx.marked[key.ident()]; len(l) > 0 {
		return l[0], true, true
	}
	if want == nil {
		return -1, false, true
	}
	if idx.unmarked == nil {
		idx.unmarked = map[string][]int{}
		for i := 0; i < c.len(); i++ {
			if !hasMarkerOfKind(*c.lead(i), idx.kind) {
				k := string(canonical(c.value(i)))
				idx.unmarked[k] = append(idx.unmarked[k], i)
			}
		}
	}
	if l := idx.unmarked[string(want)]; len(l) > 0 {
		return l[0], false, true
	}
	return -1, false, true
}

// clone copies the indexes for a copy of the document whose tree is
// root: each index is bound to the copy's section at the same place.
func (x *indexes) clone(root *hujson.Value) []*sectionIndex {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []*sectionIndex
	if len(x.list) == 0 {
		return out
	}
	copyDoc := &Document{root: *root}
	for _, idx := range x.list {
		key := sectionKey(idx.kind)
		c, ok, err := copyDoc.section(key, false)
		if !ok || err != nil || !indexed(key, c) {
			continue
		}
		n := &sectionIndex{kind: idx.kind, of: containerID(c)}
		n.marked = cloneLists(idx.marked)
		n.unmarked = cloneLists(idx.unmarked)
		n.names = cloneLists(idx.names)
		out = append(out, n)
	}
	return out
}

// sectionKey is a key whose section is the one indexed for kind.
func sectionKey(kind Kind) Key {
	if kind == KindAutoApprover {
		return RouteKey("")
	}
	return Key{Kind: kind}
}

func cloneLists[K comparable](m map[K][]int) map[K][]int {
	if m == nil {
		return nil
	}
	out := make(map[K][]int, len(m))
	for k, l := range m {
		out[k] = slices.Clone(l)
	}
	return out
}

// appended records the entry just appended at the end of c.
func (x *indexes) appended(c container) {
	x.mu.Lock()
	defer x.mu.Unlock()
	idx := x.existing(c)
	if idx == nil {
		return
	}
	i := c.len() - 1
	if c.obj != nil {
		name := memberName(&c.obj.Members[i])
		idx.names[name] = append(idx.names[name], i)
		return
	}
	idx.add(c, i)
}

// add records the markers of entry i of an array, which is in no list.
func (idx *sectionIndex) add(c container, i int) {
	lead := *c.lead(i)
	for _, k := range markersIn(lead) {
		idx.marked[k.ident()] = insertSorted(idx.marked[k.ident()], i)
	}
	if idx.unmarked != nil && !hasMarkerOfKind(lead, idx.kind) {
		k := string(canonical(c.value(i)))
		idx.unmarked[k] = insertSorted(idx.unmarked[k], i)
	}
}

// relead records that the leading extra of entry i of c changed (a
// marker added, or the comments of a removed neighbour joined).
func (x *indexes) relead(c container, i int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	idx := x.existing(c)
	if idx == nil || c.arr == nil {
		return
	}
	dropEntry(idx.marked, i, false)
	dropEntry(idx.unmarked, i, false)
	idx.add(c, i)
}

// removed records that entry i of c is gone: the entries after it move up
// by one. The entry that follows it, which takes over its comments, is
// read again.
func (x *indexes) removed(c container, i int) {
	x.mu.Lock()
	idx := x.existing(c)
	if idx == nil {
		x.mu.Unlock()
		return
	}
	dropEntry(idx.marked, i, true)
	dropEntry(idx.unmarked, i, true)
	dropEntry(idx.names, i, true)
	x.mu.Unlock()
}

// dropEntry removes entry i from every list of m and, with shift, moves
// the entries after it up by one.
func dropEntry[K comparable](m map[K][]int, i int, shift bool) {
	for k, l := range m {
		n := 0
		for _, j := range l {
			if j == i {
				continue
			}
			if j > i && shift {
				j--
			}
			l[n] = j
			n++
		}
		if n == 0 {
			delete(m, k)
			continue
		}
		m[k] = l[:n]
	}
}

func insertSorted(l []int, i int) []int {
	p, found := slices.BinarySearch(l, i)
	if found {
		return l
	}
	return slices.Insert(l, p, i)
}
