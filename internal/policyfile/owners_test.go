package policyfile

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// ownedPolicy holds a grant, a tag owner and a test marked for the owner
// p7mv2rt4ha, and the same kinds marked before markers named owners.
const ownedPolicy = `{
	"tagOwners": {
		// qtail:tag_owner:tag:web#p7mv2rt4ha
		"tag:web": ["group:ops"],
		// qtail:tag_owner:tag:db
		"tag:db":  ["group:ops"], // by the database team
	},
	"grants": [
		// qtail:grant:web#p7mv2rt4ha
		{"src": ["group:ops"], "dst": ["tag:web"], "ip": ["tcp:443"]},
		// Kept for the on-call rota.
		// qtail:grant:db
		{"src": ["group:ops"], "dst": ["tag:db"], "ip": ["tcp:5432"]}, // legacy
	],
	"tests": [
		// qtail:policy_test:web#p7mv2rt4ha
		{"src": "carol@example.com", "accept": ["tag:web:443"]},
		// qtail:policy_test:db
		{"src": "carol@example.com", "accept": ["tag:db:5432"]},
	],
}
`

const (
	ownerA = "p7mv2rt4ha"
	ownerB = "k3x9q2mfa7"
)

// ownedKeys are the keys of ownedPolicy marked for ownerA, and those
// marked without an owner, with their values.
var ownedKeys = []struct {
	key, legacy         Key
	value, legacyValue  string
	newValue, markerOld string
}{
	{Key{Kind: KindGrant, Name: "web"}, Key{Kind: KindGrant, Name: "db"},
		`{"src":["group:ops"],"dst":["tag:web"],"ip":["tcp:443"]}`, `{"src":["group:ops"],"dst":["tag:db"],"ip":["tcp:5432"]}`,
		`{"src":["group:ops"],"dst":["tag:web"],"ip":["tcp:8443"]}`, "// qtail:grant:db\n"},
	{Key{Kind: KindTagOwner, Name: "tag:web"}, Key{Kind: KindTagOwner, Name: "tag:db"},
		`["group:ops"]`, `["group:ops"]`, `["group:ops","carol@example.com"]`, "// qtail:tag_owner:tag:db\n"},
	{Key{Kind: KindPolicyTest, Name: "web"}, Key{Kind: KindPolicyTest, Name: "db"},
		`{"src":"carol@example.com","accept":["tag:web:443"]}`, `{"src":"carol@example.com","accept":["tag:db:5432"]}`,
		`{"src":"carol@example.com","accept":["tag:web:8443"]}`, "// qtail:policy_test:db\n"},
}

// withOwner returns k with owner.
func withOwner(k Key, owner string) Key {
	k.Owner = owner
	return k
}

func TestOwnersMarkersName(t *testing.T) {
	doc := mustParse(t, []byte(ownedPolicy))
	for _, tc := range ownedKeys {
		// Get finds an entry whoever owns it, and says whose it is.
		for _, k := range []Key{tc.key, withOwner(tc.key, ownerA), withOwner(tc.key, ownerB)} {
			if f := doc.Get(k); !f.Found || !f.Marked || f.Owner != ownerA || !SameJSON(f.Value, raw(tc.value)) {
				t.Errorf("Get(%#v) = %+v, want the entry marked for %s", k, f, ownerA)
			}
		}
		if f := doc.Get(tc.legacy); !f.Found || !f.Marked || f.Owner != "" {
			t.Errorf("Get(%#v) = %+v, want the entry marked for no owner", tc.legacy, f)
		}
	}
	got := map[Key]bool{}
	for _, f := range doc.Fragments() {
		if f.Owner != f.Key.Owner {
			t.Errorf("fragment %#v: owner %q, not its key's", f.Key, f.Owner)
		}
		got[f.Key] = true
	}
	for _, tc := range ownedKeys {
		if !got[withOwner(tc.key, ownerA)] || !got[tc.legacy] {
			t.Errorf("Fragments lack %#v with its owner or %#v without one: %v", tc.key, tc.legacy, got)
		}
	}
}

func TestOwnersPutWritesTheOwner(t *testing.T) {
	doc := mustParse(t, []byte(`{"grants": []}`))
	for _, k := range []Key{
		{Kind: KindGrant, Name: "new", Owner: ownerA},
		{Kind: KindTagOwner, Name: "tag:new", Owner: ownerA},
		{Kind: KindPolicyTest, Name: "new", Owner: ownerA},
	} {
		value := raw(`{"src":["group:ops"],"dst":["tag:new"],"ip":["tcp:443"]}`)
		switch k.Kind {
		case KindTagOwner:
			value = raw(`["group:ops"]`)
		case KindPolicyTest:
			value = raw(`{"src":"carol@example.com","accept":["tag:new:443"]}`)
		}
		if err := doc.Put(k, value); err != nil {
			t.Fatalf("Put(%#v): %v", k, err)
		}
		out := string(doc.Bytes())
		if !strings.Contains(out, "// qtail:"+string(k.Kind)+":"+k.Name+"#"+ownerA+"\n") {
			t.Errorf("Put(%#v) did not write the marker with its owner:\n%s", k, out)
		}
		if f := doc.Get(k.List()); f.Owner != ownerA {
			t.Errorf("after Put(%#v), Get = %+v", k, f)
		}
	}
}

func TestOwnersRefuseAnotherOwner(t *testing.T) {
	for _, tc := range ownedKeys {
		doc := mustParse(t, []byte(ownedPolicy))
		err := doc.Put(withOwner(tc.key, ownerB), raw(tc.value))
		var owned *OwnedError
		if !errors.As(err, &owned) || owned.Owner != ownerA || !SameJSON(owned.Existing, raw(tc.value)) {
			t.Errorf("Put of %s for another owner, same content: %v, want an *OwnedError naming %s", tc.key, err, ownerA)
		}
		if err := doc.Apply(Mutation{Key: withOwner(tc.key, ownerB), Value: raw(tc.newValue), Overwrite: true}); !errors.As(err, &owned) {
			t.Errorf("overwrite of %s for another owner: %v, want an *OwnedError", tc.key, err)
		}
		if doc.Delete(withOwner(tc.key, ownerB)) {
			t.Errorf("Delete of %s for another owner removed it", tc.key)
		}
		if out := doc.Bytes(); !bytes.Equal(out, []byte(ownedPolicy)) {
			t.Fatalf("refused changes of %s changed the file:\n%s", tc.key, out)
		}
		if msg := err.Error(); !strings.Contains(msg, tc.key.Marker()+"#"+ownerA) {
			t.Errorf("the error does not show the marker with its owner: %s", msg)
		}
	}
}

func TestOwnersOwnEntry(t *testing.T) {
	for _, tc := range ownedKeys {
		doc := mustParse(t, []byte(ownedPolicy))
		key := withOwner(tc.key, ownerA)
		// The same owner, the same content: nothing to write (a write
		// retried after its answer was lost).
		if err := doc.Put(key, raw(tc.value)); err != nil || !bytes.Equal(doc.Bytes(), []byte(ownedPolicy)) {
			t.Fatalf("Put of %s as it is: %v\n%s", key, err, doc.Bytes())
		}
		if err := doc.Apply(Mutation{Key: key, Value: raw(tc.newValue), Overwrite: true}); err != nil {
			t.Fatalf("update of %s by its owner: %v", key, err)
		}
		if f := doc.Get(tc.key); !SameJSON(f.Value, raw(tc.newValue)) || f.Owner != ownerA {
			t.Errorf("after the update of %s: %+v", key, f)
		}
		if n := strings.Count(string(doc.Bytes()), tc.key.Marker()+"#"); n != 1 {
			t.Errorf("%d markers of %s after its update:\n%s", n, key, doc.Bytes())
		}
		if !doc.Delete(key) || doc.Get(tc.key).Found {
			t.Errorf("Delete of %s by its owner left it:\n%s", key, doc.Bytes())
		}
	}
}

// A marker written before markers named their owner gets the owner of
// the first key with one that writes the entry: in place, every other
// byte as it was, the comments next to it included.
func TestOwnersMigrateMarkerInPlace(t *testing.T) {
	for _, tc := range ownedKeys {
		doc := mustParse(t, []byte(ownedPolicy))
		key := withOwner(tc.legacy, ownerB)
		if err := doc.Put(key, raw(tc.legacyValue)); err != nil {
			t.Fatalf("Put of %s on its marker without owner: %v", key, err)
		}
		want := strings.Replace(ownedPolicy, tc.markerOld, strings.TrimSuffix(tc.markerOld, "\n")+"#"+ownerB+"\n", 1)
		if out := string(doc.Bytes()); out != want {
			t.Errorf("the owner of %s was not written in place:\n%s\nwant:\n%s", key, out, want)
		}
		if f := doc.Get(tc.legacy); f.Owner != ownerB || !f.Marked {
			t.Errorf("after the migration of %s: %+v", key, f)
		}
		// From then on the entry is ownerB's.
		var owned *OwnedError
		if err := doc.Put(withOwner(tc.legacy, ownerA), raw(tc.legacyValue)); !errors.As(err, &owned) || owned.Owner != ownerB {
			t.Errorf("after the migration, a put of %s for another owner: %v", tc.legacy, err)
		}
	}
	// A delete with an owner removes an entry marked for none.
	for _, tc := range ownedKeys {
		doc := mustParse(t, []byte(ownedPolicy))
		if !doc.Delete(withOwner(tc.legacy, ownerB)) || doc.Get(tc.legacy).Found {
			t.Errorf("Delete of %s with an owner left its entry marked for none:\n%s", tc.legacy, doc.Bytes())
		}
	}
}

// A key without an owner changes the entry whoever owns it, and keeps the
// owner that its marker names.
func TestOwnersKeyWithoutOwner(t *testing.T) {
	for _, tc := range ownedKeys {
		doc := mustParse(t, []byte(ownedPolicy))
		if err := doc.Apply(Mutation{Key: tc.key, Value: raw(tc.newValue), Overwrite: true}); err != nil {
			t.Fatalf("update of %s without an owner: %v", tc.key, err)
		}
		if f := doc.Get(tc.key); f.Owner != ownerA || !SameJSON(f.Value, raw(tc.newValue)) {
			t.Errorf("after the update of %s without an owner: %+v", tc.key, f)
		}
		if !doc.Delete(tc.key) {
			t.Errorf("Delete of %s without an owner left it", tc.key)
		}
	}
}
