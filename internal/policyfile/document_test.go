package policyfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const basePolicy = `{
	// People.
	"groups": {"group:ops": ["carol@example.com"]},
	"tagOwners": {
		"tag:db": ["group:ops"],
	},
	"grants": [
		{"src": ["group:ops"], "dst": ["tag:db"], "ip": ["tcp:5432"]},
	],
}
`

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func grantValue(name string) []byte {
	return []byte(fmt.Sprintf(`{"src":["group:ops"],"dst":["tag:%s"],"ip":["tcp:443"]}`, name))
}

func TestAdoptIdenticalGrant(t *testing.T) {
	doc := mustParse(t, []byte(basePolicy))
	key := Key{Kind: KindGrant, Name: "ops-db"}
	want := raw(`{"ip":["tcp:5432"],"src":["group:ops"],"dst":["tag:db"]}`)

	if got := doc.Get(key); got.Found {
		t.Fatalf("Get without marker found %+v", got)
	}
	got := doc.Lookup(key, want)
	if !got.Found || got.Marked {
		t.Fatalf("Lookup of identical content = %+v, want found and not marked", got)
	}
	if err := doc.Put(key, want); err != nil {
		t.Fatal(err)
	}
	out := string(doc.Bytes())
	if n := strings.Count(out, `"tcp:5432"`); n != 1 {
		t.Fatalf("the grant is written %d times:\n%s", n, out)
	}
	wantOut := strings.Replace(basePolicy, "\t\t{\"src\": [\"group:ops\"]", "\t\t// qtail:grant:ops-db\n\t\t{\"src\": [\"group:ops\"]", 1)
	if out != wantOut {
		t.Fatalf("adoption should only add the marker:\n%s", out)
	}
	if got := doc.Get(key); !got.Found || !got.Marked {
		t.Fatalf("after adoption Get = %+v", got)
	}
	// Deleting the adopted grant removes it and its marker only.
	doc.Delete(key)
	if strings.Contains(string(doc.Bytes()), "tcp:5432") || strings.Contains(string(doc.Bytes()), "qtail:") {
		t.Fatalf("delete left the grant or its marker:\n%s", doc.Bytes())
	}
	mustParse(t, doc.Bytes())
}

func TestAdoptIdenticalKeyedEntries(t *testing.T) {
	src := `{
  "tagOwners": {"tag:db": ["group:ops"]},
  "AutoApprovers": {"Routes": {"10.0.0.0/16": ["tag:router"]}, "ExitNode": ["tag:exit"]},
}`
	for _, tc := range []struct {
		key Key
		val string
	}{
		{Key{Kind: KindTagOwner, Name: "tag:db"}, `["group:ops"]`},
		{RouteKey("10.0.0.0/16"), `["tag:router"]`},
		{ExitNodeKey(), `["tag:exit"]`},
	} {
		doc := mustParse(t, []byte(src))
		got := doc.Get(tc.key)
		if !got.Found || got.Marked || string(got.Value) != tc.val {
			t.Fatalf("%s: Get = %+v, want found by key, not marked", tc.key, got)
		}
		if err := doc.Put(tc.key, raw(tc.val)); err != nil {
			t.Fatalf("%s: %v", tc.key, err)
		}
		if got := doc.Get(tc.key); !got.Found || !got.Marked {
			t.Fatalf("%s: after adoption Get = %+v", tc.key, got)
		}
		out := doc.Bytes()
		if !isSubsequence([]byte(src), out) || bytes.Count(out, []byte(tc.val)) != 1 {
			t.Fatalf("%s: adoption changed more than the marker:\n%s", tc.key, out)
		}
	}
}

func TestMarkerRemovedByHand(t *testing.T) {
	doc := mustParse(t, []byte(basePolicy))
	grant := Key{Kind: KindGrant, Name: "web"}
	owner := Key{Kind: KindTagOwner, Name: "tag:web"}
	gv, ov := raw(`{"src":["*"],"dst":["tag:web"],"ip":["443"]}`), raw(`["group:ops"]`)
	for k, v := range map[Key]json.RawMessage{grant: gv, owner: ov} {
		if err := doc.Put(k, v); err != nil {
			t.Fatal(err)
		}
	}
	edited := string(doc.Bytes())
	edited = strings.Replace(edited, grant.Marker()+"\n", "", 1)
	edited = strings.Replace(edited, owner.Marker()+"\n", "", 1)
	doc = mustParse(t, []byte(edited))

	if got := doc.Get(grant); got.Found {
		t.Errorf("a grant without its marker is found by name: %+v", got)
	}
	if got := doc.Lookup(grant, gv); !got.Found || got.Marked {
		t.Errorf("Lookup by content = %+v, want found, not marked", got)
	}
	if got := doc.Get(owner); !got.Found || got.Marked {
		t.Errorf("tag owner without marker: Get = %+v, want found by key, not marked", got)
	}
	// The next write adopts them: no duplicate.
	for k, v := range map[Key]json.RawMessage{grant: gv, owner: ov} {
		if err := doc.Put(k, v); err != nil {
			t.Fatal(err)
		}
	}
	out := string(doc.Bytes())
	if strings.Count(out, `"tag:web"`) != 2 || strings.Count(out, "qtail:") != 2 {
		t.Errorf("adoption after a lost marker duplicated something:\n%s", out)
	}
}

func TestEditedByHandShowsAsDiff(t *testing.T) {
	doc := mustParse(t, []byte(basePolicy))
	key := Key{Kind: KindGrant, Name: "web"}
	if err := doc.Put(key, raw(`{"src":["*"],"dst":["tag:web"],"ip":["443"]}`)); err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(doc.Bytes()), `"ip": ["443"]`, `"ip": ["443", "80"] /* by hand */`, 1)
	doc = mustParse(t, []byte(edited))
	got := doc.Get(key)
	if !got.Found || !got.Marked || string(got.Value) != `{"dst":["tag:web"],"ip":["443","80"],"src":["*"]}` {
		t.Fatalf("Get = %+v %s", got, got.Value)
	}
	// Deleted by hand, marker and all: not found, so planned for creation.
	cut := strings.Index(edited, "\t\t// qtail:grant:web")
	end := strings.Index(edited[cut:], "},\n") + cut + len("},\n")
	doc = mustParse(t, []byte(edited[:cut]+edited[end:]))
	if got := doc.Get(key); got.Found {
		t.Fatalf("Get after removal by hand = %+v", got)
	}
}

func TestUnmanagedConflict(t *testing.T) {
	src := `{
	"tagOwners": {"tag:x": ["alice@example.com"]},
	"autoApprovers": {"routes": {"10.0.0.0/16": ["tag:a"]}, "exitNode": ["tag:a"]},
}`
	for _, tc := range []struct {
		key     Key
		import_ string
	}{
		{Key{Kind: KindTagOwner, Name: "tag:x"}, "terraform import qtail_tag_owner.NAME 'tag:x'"},
		{RouteKey("10.0.0.0/16"), "terraform import qtail_auto_approver.NAME 'route:10.0.0.0/16'"},
		{ExitNodeKey(), "terraform import qtail_auto_approver.NAME exitNode"},
	} {
		doc := mustParse(t, []byte(src))
		err := doc.Put(tc.key, raw(`["bob@example.com"]`))
		var ce *UnmanagedConflictError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: err = %v, want *UnmanagedConflictError", tc.key, err)
		}
		if ce.Key != tc.key || len(ce.Existing) == 0 {
			t.Errorf("%s: error fields = %+v", tc.key, ce)
		}
		if !strings.Contains(err.Error(), tc.import_) {
			t.Errorf("%s: message lacks %q: %v", tc.key, tc.import_, err)
		}
		if string(doc.Bytes()) != src {
			t.Errorf("%s: a failed put changed the document", tc.key)
		}
		// Delete does not touch an entry qtail does not own.
		if doc.Delete(tc.key) || string(doc.Bytes()) != src {
			t.Errorf("%s: delete removed an unmanaged entry", tc.key)
		}
		if tc.key.Kind == KindAutoApprover {
			// After an import, the approvers nobody marked are taken
			// over: a delete with Overwrite removes them, and leaves
			// the list that a person wrote.
			taken := mustParse(t, []byte(src))
			if err := taken.Apply(Mutation{Key: tc.key, Delete: true, Overwrite: true}); err != nil {
				t.Fatal(err)
			}
			if got := taken.Get(tc.key); !got.Found || string(got.Value) != "[]" {
				t.Errorf("%s: after a take-over the list holds %+v", tc.key, got)
			}
		}
		// An update after import takes the entry over.
		if err := doc.Apply(Mutation{Key: tc.key, Value: raw(`["bob@example.com"]`), Overwrite: true}); err != nil {
			t.Fatal(err)
		}
		if got := doc.Get(tc.key); !got.Marked || string(got.Value) != `["bob@example.com"]` {
			t.Errorf("%s: overwrite gave %+v", tc.key, got)
		}
	}
}

func TestDeleteAbsent(t *testing.T) {
	for _, key := range []Key{
		{Kind: KindGrant, Name: "nope"}, {Kind: KindPolicyTest, Name: "nope"}, {Kind: KindTagOwner, Name: "tag:nope"},
		RouteKey("10.9.0.0/16"), ExitNodeKey(),
	} {
		for _, src := range []string{basePolicy, "{}", `{"autoApprovers": {}}`} {
			doc := mustParse(t, []byte(src))
			if doc.Delete(key) {
				t.Errorf("Delete(%s) on %q reported a removal", key, src)
			}
			if string(doc.Bytes()) != src {
				t.Errorf("Delete(%s) of an absent fragment changed the document", key)
			}
		}
	}
}

func TestSectionsFoundCaseInsensitively(t *testing.T) {
	src := `{"Grants": [], "TagOwners": {}, "AutoApprovers": {"Routes": {}}, "Tests": []}`
	doc := mustParse(t, []byte(src))
	create, _ := goldenPuts()
	for _, m := range create {
		if err := doc.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	out := string(doc.Bytes())
	for _, s := range []string{`"grants"`, `"tagOwners"`, `"autoApprovers"`, `"routes"`, `"tests"`} {
		if strings.Contains(out, s) {
			t.Errorf("section %s was created although a differently cased one exists:\n%s", s, out)
		}
	}
}

func TestSectionOfWrongType(t *testing.T) {
	doc := mustParse(t, []byte(`{"grants": {}}`))
	if err := doc.Put(Key{Kind: KindGrant, Name: "g"}, raw(`{"src":["*"],"dst":["*"],"ip":["*"]}`)); err == nil {
		t.Fatal("put into a grants object succeeded")
	}
	if got := doc.Get(Key{Kind: KindGrant, Name: "g"}); got.Found {
		t.Fatal("found a grant in a malformed section")
	}
}

func TestPutRejectsBadInput(t *testing.T) {
	doc := mustParse(t, []byte(basePolicy))
	for _, m := range []Mutation{
		{Key: Key{Kind: KindGrant, Name: ""}, Value: raw(`{}`)},
		{Key: Key{Kind: KindGrant, Name: "two words"}, Value: raw(`{}`)},
		{Key: Key{Kind: KindGrant, Name: "g"}, Value: raw(`[]`)},
		{Key: Key{Kind: KindGrant, Name: "g"}, Value: raw(`{"src": [}`)},
		{Key: Key{Kind: KindTagOwner, Name: "tag:x"}, Value: raw(`{}`)},
		{Key: Key{Kind: KindTagOwner, Name: "x"}, Value: raw(`[]`)},
		{Key: Key{Kind: KindAutoApprover, Name: "route:10.0.0.1/16"}, Value: raw(`[]`)},
		{Key: Key{Kind: KindAutoApprover, Name: "exit"}, Value: raw(`[]`)},
		{Key: Key{Kind: "acl", Name: "x"}, Value: raw(`{}`)},
	} {
		if err := doc.Apply(m); err == nil {
			t.Errorf("Apply(%+v) succeeded", m)
		}
	}
	if string(doc.Bytes()) != basePolicy {
		t.Error("failed puts changed the document")
	}
}

func TestUpdateInPlaceKeepsNeighbours(t *testing.T) {
	doc := mustParse(t, []byte(basePolicy))
	a, b, c := Key{Kind: KindGrant, Name: "a"}, Key{Kind: KindGrant, Name: "b"}, Key{Kind: KindGrant, Name: "c"}
	for _, k := range []Key{a, b, c} {
		if err := doc.Put(k, raw(`{"src":["*"],"dst":["tag:`+k.Name+`"],"ip":["1"]}`)); err != nil {
			t.Fatal(err)
		}
	}
	before := string(doc.Bytes())
	if err := doc.Put(b, raw(`{"src":["*"],"dst":["tag:b"],"ip":["2"]}`)); err != nil {
		t.Fatal(err)
	}
	after := string(doc.Bytes())
	if strings.Replace(before, `"ip": ["1"],
		},
		// qtail:grant:c`, `"ip": ["2"],
		},
		// qtail:grant:c`, 1) != after {
		t.Fatalf("update touched more than the value:\n%s", after)
	}
	// Deleting the middle one leaves the others and the original intact.
	doc.Delete(b)
	doc.Delete(a)
	doc.Delete(c)
	if string(doc.Bytes()) != basePolicy {
		t.Fatalf("deletes out of order did not restore the original:\n%s", doc.Bytes())
	}
}

func TestDeleteRemovesEveryCopyOfAMarker(t *testing.T) {
	doc := mustParse(t, []byte(basePolicy))
	key := Key{Kind: KindGrant, Name: "dup"}
	if err := doc.Put(key, raw(`{"src":["*"],"dst":["tag:x"],"ip":["1"]}`)); err != nil {
		t.Fatal(err)
	}
	// Someone copies the marked grant by hand.
	s := string(doc.Bytes())
	i := strings.Index(s, "\t\t// qtail:grant:dup")
	j := strings.Index(s, "\t],")
	s = s[:j] + s[i:j] + s[j:]
	doc = mustParse(t, []byte(s))
	if !doc.Delete(key) {
		t.Fatal("nothing deleted")
	}
	if string(doc.Bytes()) != basePolicy {
		t.Fatalf("delete left a copy:\n%s", doc.Bytes())
	}
}

func TestCommentsAroundDeletedFragmentStay(t *testing.T) {
	src := "{\n\t\"grants\": [\n\t\t{\"src\": [\"*\"], \"dst\": [\"tag:a\"], \"ip\": [\"1\"]}, // first\n" +
		"\t\t// Owned by the platform team:\n" +
		"\t\t// qtail:grant:x\n" +
		"\t\t{\"src\": [\"*\"], \"dst\": [\"tag:x\"], \"ip\": [\"1\"]}, // about x\n" +
		"\t\t{\"src\": [\"*\"], \"dst\": [\"tag:b\"], \"ip\": [\"1\"]}\n" +
		"\t]\n}\n"
	doc := mustParse(t, []byte(src))
	if !doc.Delete(Key{Kind: KindGrant, Name: "x"}) {
		t.Fatal("nothing deleted")
	}
	want := "{\n\t\"grants\": [\n\t\t{\"src\": [\"*\"], \"dst\": [\"tag:a\"], \"ip\": [\"1\"]}, // first\n" +
		"\t\t// Owned by the platform team:\n" +
		" // about x\n" +
		"\t\t{\"src\": [\"*\"], \"dst\": [\"tag:b\"], \"ip\": [\"1\"]}\n" +
		"\t]\n}\n"
	if got := string(doc.Bytes()); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestLastEntryWithoutTrailingComma(t *testing.T) {
	src := "{\n  \"grants\": [\n    {\"src\": [\"*\"], \"dst\": [\"tag:a\"], \"ip\": [\"1\"]} // same line\n  ]\n}"
	doc := mustParse(t, []byte(src))
	key := Key{Kind: KindGrant, Name: "x"}
	if err := doc.Put(key, raw(`{"src":["*"],"dst":["tag:x"],"ip":["1"]}`)); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"grants\": [\n    {\"src\": [\"*\"], \"dst\": [\"tag:a\"], \"ip\": [\"1\"]}, // same line\n" +
		"    // qtail:grant:x\n    {\n      \"src\": [\"*\"],\n      \"dst\": [\"tag:x\"],\n      \"ip\": [\"1\"]\n    }\n  ]\n}"
	if got := string(doc.Bytes()); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	doc.Delete(key)
	if got := string(doc.Bytes()); got != src {
		t.Fatalf("delete did not restore:\n%s", got)
	}
}

func TestCRLF(t *testing.T) {
	src := "{\r\n\t\"tagOwners\": {\r\n\t\t\"tag:a\": [], // a\r\n\t},\r\n}\r\n"
	doc := mustParse(t, []byte(src))
	key := Key{Kind: KindTagOwner, Name: "tag:b"}
	if err := doc.Put(key, raw(`["tag:a"]`)); err != nil {
		t.Fatal(err)
	}
	out := string(doc.Bytes())
	if strings.Count(out, "\n") != strings.Count(out, "\r\n") {
		t.Fatalf("mixed line endings:\n%q", out)
	}
	doc.Delete(key)
	if got := string(doc.Bytes()); got != src {
		t.Fatalf("delete did not restore:\n%q", got)
	}
}

func TestEmptySectionWithComment(t *testing.T) {
	for _, src := range []string{
		"{\"grants\": []}",
		"{\"grants\": [ ]}",
		"{\"grants\": [ /* none yet */ ]}",
		"{\n\t\"grants\": [ // none yet\n\t],\n}",
		"{\n\t\"grants\": [\n\t\t// none yet\n\t],\n}",
	} {
		doc := mustParse(t, []byte(src))
		key := Key{Kind: KindGrant, Name: "x"}
		if err := doc.Put(key, raw(`{"src":["*"],"dst":["tag:x"],"ip":["1"]}`)); err != nil {
			t.Fatal(err)
		}
		mustParse(t, doc.Bytes())
		doc.Delete(key)
		if got := string(doc.Bytes()); got != src {
			t.Errorf("put then delete on %q gave %q", src, got)
		}
	}
}

func TestFragments(t *testing.T) {
	doc := mustParse(t, []byte(basePolicy))
	create, _ := goldenPuts()
	for _, m := range create {
		if err := doc.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	got := doc.Fragments()
	if len(got) != len(create) {
		t.Fatalf("Fragments() = %+v", got)
	}
	seen := map[Key]string{}
	for _, f := range got {
		seen[f.Key] = string(f.Value)
	}
	for _, m := range create {
		if seen[m.Key] != mustCanon(t, m.Value) {
			t.Errorf("Fragments()[%s] = %s", m.Key, seen[m.Key])
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, src := range []string{"", "[]", `{"a": }`, "// only a comment\n"} {
		if _, err := Parse([]byte(src)); err == nil {
			t.Errorf("Parse(%q) succeeded", src)
		}
	}
}

func TestParseMarker(t *testing.T) {
	for s, want := range map[string]Key{
		"// qtail:grant:web":                        {Kind: KindGrant, Name: "web"},
		"//qtail:tag_owner:tag:k8s":                 {Kind: KindTagOwner, Name: "tag:k8s"},
		"  // qtail:auto_approver:route:10.0.0.0/8": {Kind: KindAutoApprover, Name: "route:10.0.0.0/8"},
		"// qtail:auto_approver:exitNode\n":         {Kind: KindAutoApprover, Name: "exitNode"},
		"qtail:policy_test:t1":                      {Kind: KindPolicyTest, Name: "t1"},
	} {
		got, ok := parseMarker(s)
		if !ok || got != want {
			t.Errorf("parseMarker(%q) = %v, %v", s, got, ok)
		}
		if ok && strings.TrimSpace(got.Marker()) != got.Marker() {
			t.Errorf("Marker() has spaces around it: %q", got.Marker())
		}
	}
	for _, s := range []string{"// qtail:acl:x", "// qtail:grant:", "// qtail:grant:a b", "// grant:x", "// qtail:auto_approver:foo", "// qtail:auto_approver:route:"} {
		if k, ok := parseMarker(s); ok {
			t.Errorf("parseMarker(%q) = %v", s, k)
		}
	}
	if m := (Key{Kind: KindGrant, Name: "web"}).Marker(); m != "// qtail:grant:web" {
		t.Errorf("Marker() = %q", m)
	}
}

func TestCanonicalize(t *testing.T) {
	a, err := Canonicalize([]byte(`{ "src": ["*"], // c
		"ip": ["1.0"], "dst": ["a\u003cb"], }`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Canonicalize([]byte(`{"dst":["a<b"],"ip":["1.0"],"src":["*"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) || string(a) != `{"dst":["a<b"],"ip":["1.0"],"src":["*"]}` {
		t.Fatalf("Canonicalize: %s vs %s", a, b)
	}
}

func TestHasAllowAll(t *testing.T) {
	for src, want := range map[string]bool{
		`{"grants": [{"src": ["*"], "dst": ["*"], "ip": ["*"]}]}`:                        true,
		`{"Grants": [{"IP": ["*"], "Src": ["*"], "DST": ["*"],}]}`:                       true,
		`{"acls": [{"action": "accept", "src": ["*"], "dst": ["*:*"]}]}`:                 true,
		`{"ACLs": [{"Action": "accept", "Users": ["*"], "Ports": ["*:*"]}]}`:             true,
		`{"grants": [{"src": ["*"], "dst": ["*"], "ip": ["*"], "via": ["tag:x"]}]}`:      false,
		`{"grants": [{"src": ["group:a"], "dst": ["*"], "ip": ["*"]}]}`:                  false,
		`{"acls": [{"action": "accept", "src": ["*"], "dst": ["*:22"]}]}`:                false,
		`{"acls": [{"action": "accept", "src": ["*"], "proto": "tcp", "dst": ["*:*"]}]}`: false,
		`{}`: false,
	} {
		if got := HasAllowAll(mustParse(t, []byte(src))); got != want {
			t.Errorf("HasAllowAll(%s) = %v", src, got)
		}
	}
}

func TestKeyValidate(t *testing.T) {
	good := []Key{{Kind: KindGrant, Name: "a-b_c.d"}, {Kind: KindTagOwner, Name: "tag:k8s-operator"}, RouteKey("fd7a:115c:a1e0::/48"), ExitNodeKey(), {Kind: KindPolicyTest, Name: "t"}}
	for _, k := range good {
		if err := k.Validate(); err != nil {
			t.Errorf("%v: %v", k, err)
		}
	}
	bad := []Key{{Kind: KindGrant, Name: ""}, {Kind: KindGrant, Name: "a\nb"}, {Kind: KindTagOwner, Name: "tag:1"}, RouteKey("10.0.0.0"), {Kind: KindAutoApprover, Name: "exitnode"}, {Kind: "x", Name: "y"}}
	for _, k := range bad {
		if err := k.Validate(); err == nil {
			t.Errorf("%v validated", k)
		}
	}
}
