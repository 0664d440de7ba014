package policyfile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fuzzSeedFiles are the policy files that seed the fuzz tests of the
// editor: the inputs of the golden tests, their golden outputs (which hold
// qtail's fragments), and policy files recorded from Tailscale SaaS
// (testdata/captures, see its README).
func fuzzSeedFiles(f *testing.F) [][]byte {
	f.Helper()
	var out [][]byte
	for _, pattern := range []string{"*.*json", "golden/*.*json", "captures/*.json"} {
		names, err := filepath.Glob(filepath.Join("testdata", pattern))
		if err != nil {
			f.Fatal(err)
		}
		for _, name := range names {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, b)
		}
	}
	if len(out) < 20 {
		f.Fatalf("only %d seed files under testdata", len(out))
	}
	return out
}

// editKey is a key that the edit sequences of FuzzEdits change, with the
// values a put may give it.
type editKey struct {
	key    Key
	values []string
	// set: the value is a list of approvers of one owner, whose order the
	// file keeps as it finds it when owners share approvers.
	set bool
}

var editKeys = []editKey{
	{key: Key{Kind: KindGrant, Name: "fz-a", Owner: "fzowner1"}, values: []string{
		`{"src":["tag:fz"],"dst":["tag:fz"],"ip":["tcp:1"]}`,
		`{"src":["group:fz","tag:fz"],"dst":["tag:fz-db"],"ip":["tcp:5432","udp:53"],"via":["tag:fz-router"]}`,
	}},
	{key: Key{Kind: KindGrant, Name: "fz-b"}, values: []string{
		`{"src":["*"],"dst":["autogroup:internet"],"ip":["*"]}`,
		`{"src":["fz@example.com"],"dst":["10.250.0.0/16"],"ip":["tcp:22"],"app":{"example.com/cap/fz":[{"role":"reader"}]}}`,
	}},
	{key: Key{Kind: KindTagOwner, Name: "tag:fz-a", Owner: "fzowner1"}, values: []string{`["group:fz"]`, `[]`}},
	{key: Key{Kind: KindTagOwner, Name: "tag:fz-b"}, values: []string{`["fz@example.com","tag:fz-a"]`}},
	{key: Key{Kind: KindAutoApprover, Name: RoutePrefix + "10.250.0.0/16", Owner: "fzowner1"}, values: []string{`["tag:fz-a"]`, `["tag:fz-a","tag:fz-b"]`}, set: true},
	{key: Key{Kind: KindAutoApprover, Name: RoutePrefix + "10.250.0.0/16", Owner: "fzowner2"}, values: []string{`["tag:fz-b"]`, `["tag:fz-c","tag:fz-a"]`}, set: true},
	{key: Key{Kind: KindAutoApprover, Name: RoutePrefix + "fd7a:115c:a1e0:ab12::/64", Owner: "fzowner2"}, values: []string{`["group:fz"]`}, set: true},
	{key: Key{Kind: KindAutoApprover, Name: ExitNodeName, Owner: "fzowner1"}, values: []string{
		`["tag:fz-a","group:a-very-long-group-name-to-force-one-approver-per-line","group:and-another-one"]`,
	}, set: true},
	{key: Key{Kind: KindAutoApprover, Name: ServicePrefix + "svc:fz", Owner: "fzowner1"}, values: []string{`["tag:fz-a"]`}, set: true},
	{key: Key{Kind: KindPolicyTest, Name: "fz-t", Owner: "fzowner2"}, values: []string{
		`{"src":"tag:fz","accept":["tag:fz:1"]}`,
		`{"src":"fz@example.com","accept":["tag:fz-db:5432"],"deny":["tag:fz-db:22"]}`,
	}},
}

// FuzzEdits applies a sequence of puts and deletes, which the fuzz input
// drives two bytes per operation, to any policy file, and checks after
// each operation that:
//
//   - the file still parses, and a refused put changed nothing;
//   - every byte of the original file is still there, in order (the
//     operations only touch keys that the original does not hold);
//   - every key reads back as a model of the operations says: absent, or
//     marked with the value last put;
//   - Fragments lists the original's fragments and the model's keys;
//   - a put of an absent key immediately followed by its delete gives back
//     the bytes from before the put, byte for byte, with the exceptions
//     that doc.go documents: a section that the put created stays, empty,
//     and an empty section whose brackets stand on separate lines with
//     only blanks between them comes back with its brackets together.
func FuzzEdits(f *testing.F) {
	seedOps := [][]byte{
		{0, 0, 0, 1},             // put a grant, delete it
		{0, 0, 2, 0, 0, 1, 2, 1}, // two kinds, deleted in order
		{4, 0, 5, 2, 4, 1, 5, 1}, // two owners share a route
		{4, 2, 5, 0, 4, 1, 5, 1, 7, 0, 7, 1},
		{9, 0, 9, 2, 9, 1, 1, 0, 3, 0, 6, 0, 8, 0, 8, 1, 6, 1, 3, 1, 1, 1},
		{0, 0, 0, 2, 2, 0, 2, 2, 4, 0, 4, 2, 9, 0, 9, 2},
	}
	for _, src := range fuzzSeedFiles(f) {
		for _, ops := range seedOps {
			f.Add(src, ops)
		}
	}
	f.Fuzz(func(t *testing.T, src, ops []byte) {
		if len(ops) > 64 {
			ops = ops[:64] // enough to combine every kind; keeps each run short
		}
		doc, err := Parse(src)
		if err != nil {
			return
		}
		orig := doc.Bytes()
		origFragments := doc.Fragments()
		// Only the keys that the original holds in no form are changed: a
		// key it holds is a fragment of someone else (or one a put would
		// adopt), whose bytes an operation may change.
		usable := make([]bool, len(editKeys))
		for i, ek := range editKeys {
			usable[i] = !doc.Get(ek.key).Found && !doc.Get(ek.key.List()).Found
			for _, v := range ek.values {
				usable[i] = usable[i] && !doc.Lookup(ek.key, raw(v)).Found
			}
		}
		model := map[int]string{} // index in editKeys -> canonical value put

		for n := 0; n+1 < len(ops); n += 2 {
			i := int(ops[n]) % len(editKeys)
			if !usable[i] {
				continue
			}
			ek := editKeys[i]
			del := ops[n+1]&1 == 1
			before := doc.Bytes()
			if del {
				doc.Delete(ek.key)
				delete(model, i)
			} else {
				v := raw(ek.values[int(ops[n+1]>>1)%len(ek.values)])
				_, present := model[i]
				restores := !present && putRestores(doc, ek.key)
				if err := doc.Apply(Mutation{Key: ek.key, Value: v}); err != nil {
					// A section of another type: the put is refused
					// whole.
					if !bytes.Equal(doc.Bytes(), before) {
						t.Fatalf("refused put %s (%v) changed the file:\n%q\n%q", ek.key, err, before, doc.Bytes())
					}
					continue
				}
				model[i] = mustCanon(t, v)
				// The next operation, when it is the delete of this key,
				// must restore the bytes from before the put.
				if !present && n+3 < len(ops) && int(ops[n+2])%len(editKeys) == i && ops[n+3]&1 == 1 {
					checkPutDelete(t, doc, ek.key, before, restores)
					n += 2
					delete(model, i)
				}
			}
			out := doc.Bytes()
			again, err := Parse(out)
			if err != nil {
				t.Fatalf("after %d operations the file does not parse: %v\n%s", n/2+1, err, out)
			}
			if !isSubsequence(orig, out) {
				t.Fatalf("the operations changed bytes of the original:\n%q\n%q", orig, out)
			}
			checkModel(t, again, model, origFragments, out)
		}
	})
}

// putRestores reports whether a put of key, absent from doc, followed by
// its delete gives doc back byte for byte: the section of key exists and
// is not an empty one written over two lines (see doc.go). For an auto
// approver the section is the list of the route, the exit nodes or the
// Service, inside autoApprovers.
func putRestores(doc *Document, key Key) bool {
	if key.Kind == KindAutoApprover {
		_, _, list, ok, err := doc.approverMember(key, false)
		return ok && err == nil && !blankEmpty(list)
	}
	c, ok, err := doc.section(key, false)
	return ok && err == nil && !blankEmpty(c)
}

// blankEmpty reports whether c is empty with its brackets on separate
// lines and nothing but blanks between them.
func blankEmpty(c container) bool {
	return c.len() == 0 && !hasComment(*c.closing()) && len(lineBreaks(*c.closing())) > 0
}

// checkPutDelete deletes key, just put into doc, and checks the bytes against
// before, those from before the put: equal when the put restores them,
// and otherwise a second put and delete gives the same bytes again.
func checkPutDelete(t *testing.T, doc *Document, key Key, before []byte, restores bool) {
	t.Helper()
	if !doc.Delete(key) {
		t.Fatalf("delete of %s, just put, found nothing:\n%s", key, doc.Bytes())
	}
	deleted := doc.Bytes()
	if restores {
		if !bytes.Equal(deleted, before) {
			t.Fatalf("put then delete of %s changed the file:\n%q\n%q", key, before, deleted)
		}
		return
	}
	// The exception: what stays is stable.
	if err := doc.Apply(Mutation{Key: key, Value: raw(editKeyValue(key))}); err != nil {
		t.Fatal(err)
	}
	doc.Delete(key)
	if !bytes.Equal(doc.Bytes(), deleted) {
		t.Fatalf("a second put and delete of %s differs:\n%q\n%q", key, deleted, doc.Bytes())
	}
}

func editKeyValue(key Key) string {
	i := slices.IndexFunc(editKeys, func(ek editKey) bool { return ek.key == key })
	return editKeys[i].values[0]
}

// checkModel compares what doc reads with the model of the operations.
func checkModel(t *testing.T, doc *Document, model map[int]string, origFragments []OwnedFragment, out []byte) {
	t.Helper()
	want := slices.Clone(origFragments)
	for i, ek := range editKeys {
		got := doc.Get(ek.key)
		v, present := model[i]
		if !present {
			if got.Found {
				t.Fatalf("%s is still there after its delete: %+v\n%s", ek.key, got, out)
			}
			continue
		}
		want = append(want, OwnedFragment{Key: ek.key})
		if !got.Found || !got.Marked {
			t.Fatalf("%s is not there after its put: %+v\n%s", ek.key, got, out)
		}
		if ek.set {
			if !sameSet(t, got.Value, json.RawMessage(v)) {
				t.Fatalf("%s reads %s, want the approvers %s\n%s", ek.key, got.Value, v, out)
			}
		} else if string(got.Value) != v {
			t.Fatalf("%s reads %s, want %s\n%s", ek.key, got.Value, v, out)
		}
		if got.Owner != "" && got.Owner != ek.key.Owner {
			t.Fatalf("%s reads the owner %q", ek.key, got.Owner)
		}
	}
	if got := fragmentKeys(doc.Fragments()); !slices.Equal(got, fragmentKeys(want)) {
		t.Fatalf("Fragments lists %v, want %v\n%s", got, fragmentKeys(want), out)
	}
}

func sameSet(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y []string
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// fragmentKeys returns the keys of fs as sorted strings, owners included.
func fragmentKeys(fs []OwnedFragment) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.Key.Marker())
	}
	slices.Sort(out)
	return out
}
