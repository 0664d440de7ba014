package policyfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestIndexListHelpers(t *testing.T) {
	m := map[string][]int{"a": {1, 3, 5}, "b": {3}, "c": {0}}
	dropEntry(m, 3, true)
	if fmt.Sprint(m) != "map[a:[1 4] c:[0]]" {
		t.Errorf("dropEntry with shift: %v", m)
	}
	m = map[string][]int{"a": {1, 3, 5}, "b": {3}}
	dropEntry(m, 3, false)
	if fmt.Sprint(m) != "map[a:[1 5]]" {
		t.Errorf("dropEntry without shift: %v", m)
	}
	for _, tc := range []struct {
		l    []int
		i    int
		want string
	}{
		{nil, 2, "[2]"}, {[]int{1, 5}, 3, "[1 3 5]"}, {[]int{1, 3}, 3, "[1 3]"}, {[]int{1, 3}, 0, "[0 1 3]"}, {[]int{1, 3}, 4, "[1 3 4]"},
	} {
		if got := fmt.Sprint(insertSorted(slices.Clone(tc.l), tc.i)); got != tc.want {
			t.Errorf("insertSorted(%v, %d) = %s, want %s", tc.l, tc.i, got, tc.want)
		}
	}
	for _, tc := range []struct {
		l    []int
		i    int
		want string
	}{
		{nil, 0, "[0]"}, {[]int{1, 2}, 2, "[1 2]"}, {[]int{1}, 2, "[1 2]"}, {[]int{2}, 1, "[2 1]"},
	} {
		if got := fmt.Sprint(appendOnce(slices.Clone(tc.l), tc.i)); got != tc.want {
			t.Errorf("appendOnce(%v, %d) = %s, want %s", tc.l, tc.i, got, tc.want)
		}
	}
}

// TestIndexedDocumentAgreesWithAFreshParse edits one document over and over
// and compares every answer with that of a document parsed afresh from its
// bytes, whose indexes are built from scratch.
func TestIndexedDocumentAgreesWithAFreshParse(t *testing.T) {
	t.Parallel()
	src := "{\n\t\"grants\": [\n\t\t{\"src\": [\"*\"], \"dst\": [\"tag:v1\"], \"ip\": [\"*\"]},\n\t\t// qtail:grant:g1\n\t\t{\"src\": [\"*\"], \"dst\": [\"tag:v2\"], \"ip\": [\"*\"]},\n\t\t{\"src\": [\"*\"], \"dst\": [\"tag:v1\"], \"ip\": [\"*\"]},\n\t],\n\t\"tests\": [],\n\t\"tagOwners\": {\"tag:t1\": [\"a@b.c\"], \"tag:t2\": []},\n\t\"autoApprovers\": {\"routes\": {\"10.0.0.0/8\": [\"tag:v1\"]}},\n}\n"
	doc := mustParse(t, []byte(src))
	rnd := rand.New(rand.NewPCG(1, 2))
	value := func(kind Kind, n int) json.RawMessage {
		switch kind {
		case KindGrant:
			return raw(fmt.Sprintf(`{"src":["*"],"dst":["tag:v%d"],"ip":["*"]}`, n))
		case KindPolicyTest:
			return raw(fmt.Sprintf(`{"src":"tag:v%d","accept":["tag:v1:22"]}`, n))
		}
		return raw(fmt.Sprintf(`["tag:v%d"]`, n))
	}
	keys := func(kind Kind, n int) Key {
		switch kind {
		case KindTagOwner:
			return Key{Kind: kind, Name: fmt.Sprintf("tag:t%d", n)}
		case KindAutoApprover:
			return RouteKey(fmt.Sprintf("10.%d.0.0/16", n))
		}
		return Key{Kind: kind, Name: fmt.Sprintf("g%d", n)}
	}
	kinds := []Kind{KindGrant, KindGrant, KindPolicyTest, KindTagOwner, KindAutoApprover}
	for step := range 150 {
		kind := kinds[rnd.IntN(len(kinds))]
		key, val := keys(kind, rnd.IntN(4)), value(kind, rnd.IntN(3))
		switch op := rnd.IntN(10); {
		case op < 5:
			if err := doc.Apply(Mutation{Key: key, Value: val, Overwrite: op == 0}); err != nil {
				var uc *UnmanagedConflictError
				if !errors.As(err, &uc) {
					t.Fatalf("step %d: Put(%v): %v", step, key, err)
				}
			}
		case op < 8:
			doc.Delete(key)
		default:
			doc = doc.Clone()
		}
		fresh := mustParse(t, doc.Bytes())
		for _, k := range kinds {
			for n := range 4 {
				key := keys(k, n)
				for v := range 3 {
					want := value(k, v)
					if got, exp := doc.Lookup(key, want), fresh.Lookup(key, want); got.Found != exp.Found || got.Marked != exp.Marked || string(got.Value) != string(exp.Value) {
						t.Fatalf("step %d: Lookup(%v, %s) = %+v, a fresh parse says %+v\n%s", step, key, want, got, exp, doc.Bytes())
					}
				}
			}
		}
		if got, exp := fmt.Sprint(doc.Fragments()), fmt.Sprint(fresh.Fragments()); got != exp {
			t.Fatalf("step %d: Fragments = %s, a fresh parse says %s", step, got, exp)
		}
	}
}

// indexedSections lists, for each section key, whether d holds an index of
// that section's container.
func indexedSections(t *testing.T, d *Document) map[Kind]bool {
	t.Helper()
	out := map[Kind]bool{}
	for _, key := range []Key{{Kind: KindGrant}, {Kind: KindTagOwner}, RouteKey(""), ExitNodeKey(), {Kind: KindPolicyTest}} {
		c, ok, err := d.section(key, false)
		if !ok || err != nil {
			t.Fatalf("section %v: %v %v", key, ok, err)
		}
		for _, idx := range d.index.list {
			if idx.of == containerID(c) {
				name := key.Kind
				if key.Name == ExitNodeName {
					name = "exitNode"
				}
				out[name] = true
			}
		}
	}
	if len(d.index.list) != len(out) {
		t.Errorf("%d indexes, %d of them of sections", len(d.index.list), len(out))
	}
	return out
}

func TestCloneKeepsTheIndexes(t *testing.T) {
	src := "{\n\t\"grants\": [],\n\t\"tests\": [],\n\t\"tagOwners\": {},\n\t\"autoApprovers\": {\"routes\": {}, \"exitNode\": []},\n}\n"
	d := mustParse(t, []byte(src))
	if got := indexedSections(t, d); len(got) != 0 {
		t.Fatalf("indexes before any look-up: %v", got)
	}
	if c := d.Clone(); len(c.index.list) != 0 {
		t.Errorf("a clone without indexes has %d", len(c.index.list))
	}
	for _, key := range []Key{{Kind: KindGrant, Name: "g"}, {Kind: KindTagOwner, Name: "tag:x"}, RouteKey("10.0.0.0/8"), ExitNodeKey()} {
		d.Get(key)
	}
	want := "map[auto_approver:true grant:true tag_owner:true]"
	if got := fmt.Sprint(indexedSections(t, d)); got != want {
		t.Errorf("indexed sections %s, want %s", got, want)
	}
	c := d.Clone()
	if got := fmt.Sprint(indexedSections(t, c)); got != want {
		t.Errorf("the clone's indexed sections %s, want %s", got, want)
	}
}
