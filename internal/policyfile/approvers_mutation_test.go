package policyfile

import (
	"fmt"
	"strings"
	"testing"
)

func TestDeleteApproversUnderASectionOfTheWrongType(t *testing.T) {
	for _, src := range []string{
		"{\n\t\"autoApprovers\": {\"routes\": []},\n}\n",
		"{\n\t\"autoApprovers\": [],\n}\n",
	} {
		doc := mustParse(t, []byte(src))
		for _, key := range []Key{RouteKey("10.0.0.0/16"), {Kind: KindAutoApprover, Name: RoutePrefix + "10.0.0.0/16", Owner: "k3x9q2mfa7"}} {
			if doc.Delete(key) {
				t.Errorf("%q: Delete(%v) reported a removal", src, key)
			}
			if got := string(doc.Bytes()); got != src {
				t.Errorf("%q: Delete(%v) changed the file to %q", src, key, got)
			}
		}
	}
}

func TestDeleteLegacyMarkedApproverThatIsNotAList(t *testing.T) {
	src := "{\n\t\"tagOwners\": {},\n\t\"autoApprovers\": {\n\t\t// qtail:auto_approver:exitNode\n\t\t\"exitNode\": \"tag:exit\",\n\t\t\"routes\": {},\n\t},\n}\n"
	doc := mustParse(t, []byte(src))
	if got := doc.Get(ExitNodeKey()); got.Found {
		t.Errorf("Get of a member that is not a list = %+v, want not found", got)
	}
	if !doc.Delete(ExitNodeKey()) {
		t.Fatal("Delete of the marked exitNode that is not a list reported nothing removed")
	}
	want := "{\n\t\"tagOwners\": {},\n\t\"autoApprovers\": {\n\t\t\"routes\": {},\n\t},\n}\n"
	if got := string(doc.Bytes()); got != want {
		t.Errorf("after Delete:\n%q\nwant\n%q", got, want)
	}
	// Without the marker the member is not qtail's and stays.
	unmarked := "{\n\t\"autoApprovers\": {\n\t\t\"exitNode\": \"tag:exit\",\n\t},\n}\n"
	doc = mustParse(t, []byte(unmarked))
	if doc.Delete(ExitNodeKey()) || string(doc.Bytes()) != unmarked {
		t.Errorf("an unmarked exitNode that is not a list was removed: %q", doc.Bytes())
	}
}

func TestLookupUnownedApproversBesideOwnedOnes(t *testing.T) {
	src := "{\n\t\"autoApprovers\": {\n\t\t\"exitNode\": [\n\t\t\t\"tag:hand\",\n\t\t\t// qtail:auto_approver:exitNode#k3x9q2mfa7\n\t\t\t\"tag:k8s\",\n\t\t],\n\t},\n}\n"
	doc := mustParse(t, []byte(src))
	got := doc.Get(ExitNodeKey())
	if !got.Found || got.Marked || string(got.Value) != `["tag:hand"]` {
		t.Errorf("Get(exitNode) = %+v %s, want the unowned [\"tag:hand\"], not marked", got, got.Value)
	}
	owned := Key{Kind: KindAutoApprover, Name: ExitNodeName, Owner: "k3x9q2mfa7"}
	got = doc.Get(owned)
	if !got.Found || !got.Marked || string(got.Value) != `["tag:k8s"]` {
		t.Errorf("Get(owned) = %+v %s, want [\"tag:k8s\"], marked", got, got.Value)
	}
	// Once every approver has an owner, the part without one is gone.
	only := "{\n\t\"autoApprovers\": {\n\t\t\"exitNode\": [\n\t\t\t// qtail:auto_approver:exitNode#k3x9q2mfa7\n\t\t\t\"tag:k8s\",\n\t\t],\n\t},\n}\n"
	if got := mustParse(t, []byte(only)).Get(ExitNodeKey()); got.Found {
		t.Errorf("Get(exitNode) of a list whose approvers all have owners = %+v %s, want not found", got, got.Value)
	}
	// An empty list that nobody owns is found, empty.
	empty := "{\n\t\"autoApprovers\": {\n\t\t\"exitNode\": [],\n\t},\n}\n"
	if got := mustParse(t, []byte(empty)).Get(ExitNodeKey()); !got.Found || string(got.Value) != `[]` {
		t.Errorf("Get(exitNode) of an empty list = %+v %s, want found []", got, got.Value)
	}
}

// fragmentsText writes Fragments() one per line as "key owner value".
func fragmentsText(d *Document) string {
	var b strings.Builder
	for _, f := range d.Fragments() {
		fmt.Fprintf(&b, "%s %s#%s %s\n", f.Key.Kind, f.Key.Name, f.Key.Owner, f.Value)
	}
	return b.String()
}

func TestSharedApproverListsAcrossOwners(t *testing.T) {
	doc := mustParse(t, []byte("{\n\t\"grants\": [],\n}\n"))
	a := Key{Kind: KindAutoApprover, Name: ExitNodeName, Owner: "aaaaaaaaaa"}
	b := Key{Kind: KindAutoApprover, Name: ExitNodeName, Owner: "bbbbbbbbbb"}
	r := Key{Kind: KindAutoApprover, Name: RoutePrefix + "10.0.0.0/8", Owner: "aaaaaaaaaa"}
	for _, p := range []struct {
		key Key
		val string
	}{{a, `["tag:a","tag:s"]`}, {b, `["tag:b","tag:s"]`}, {r, `["tag:r"]`}} {
		if err := doc.Put(p.key, raw(p.val)); err != nil {
			t.Fatalf("Put(%v): %v", p.key, err)
		}
	}
	if got := string(doc.Bytes()); got != sharedSrc {
		t.Fatalf("after the puts:\n%s\nwant\n%s", got, sharedSrc)
	}
	doc = mustParse(t, []byte(sharedSrc))
	if got, want := fragmentsText(doc), ""+
		"auto_approver route:10.0.0.0/8#aaaaaaaaaa [\"tag:r\"]\n"+
		"auto_approver exitNode#aaaaaaaaaa [\"tag:a\",\"tag:s\"]\n"+
		"auto_approver exitNode#bbbbbbbbbb [\"tag:s\",\"tag:b\"]\n"; got != want {
		t.Errorf("Fragments:\n%s\nwant\n%s", got, want)
	}
	// The first owner leaves: the list that qtail created stays while the
	// other owner needs it.
	if !doc.Delete(a) {
		t.Fatal("Delete(a) removed nothing")
	}
	afterA := "{\n\t\"grants\": [],\n\t// qtail:section:autoApprovers\n\t\"autoApprovers\": {\n\t\t// qtail:auto_approver:exitNode\n\t\t\"exitNode\": [\n\t\t\t// qtail:auto_approver:exitNode#bbbbbbbbbb\n\t\t\t\"tag:s\",\n\t\t\t// qtail:auto_approver:exitNode#bbbbbbbbbb\n\t\t\t\"tag:b\",\n\t\t],\n\t\t// qtail:section:routes\n\t\t\"routes\": {\n\t\t\t// qtail:auto_approver:route:10.0.0.0/8\n\t\t\t\"10.0.0.0/8\": [\n\t\t\t\t// qtail:auto_approver:route:10.0.0.0/8#aaaaaaaaaa\n\t\t\t\t\"tag:r\",\n\t\t\t],\n\t\t},\n\t},\n}\n"
	if got := string(doc.Bytes()); got != afterA {
		t.Errorf("after Delete(a):\n%s\nwant\n%s", got, afterA)
	}
	if !doc.Delete(r) {
		t.Fatal("Delete(r) removed nothing")
	}
	afterR := "{\n\t\"grants\": [],\n\t// qtail:section:autoApprovers\n\t\"autoApprovers\": {\n\t\t// qtail:auto_approver:exitNode\n\t\t\"exitNode\": [\n\t\t\t// qtail:auto_approver:exitNode#bbbbbbbbbb\n\t\t\t\"tag:s\",\n\t\t\t// qtail:auto_approver:exitNode#bbbbbbbbbb\n\t\t\t\"tag:b\",\n\t\t],\n\t},\n}\n"
	if got := string(doc.Bytes()); got != afterR {
		t.Errorf("after Delete(r):\n%s\nwant\n%s", got, afterR)
	}
	if !doc.Delete(b) {
		t.Fatal("Delete(b) removed nothing")
	}
	if got, want := string(doc.Bytes()), "{\n\t\"grants\": [],\n}\n"; got != want {
		t.Errorf("after the last owner left:\n%q\nwant %q", got, want)
	}
}

const sharedSrc = "{\n\t\"grants\": [],\n\t// qtail:section:autoApprovers\n\t\"autoApprovers\": {\n\t\t// qtail:auto_approver:exitNode\n\t\t\"exitNode\": [\n\t\t\t// qtail:auto_approver:exitNode#aaaaaaaaaa\n\t\t\t\"tag:a\",\n\t\t\t// qtail:auto_approver:exitNode#aaaaaaaaaa\n\t\t\t// qtail:auto_approver:exitNode#bbbbbbbbbb\n\t\t\t\"tag:s\",\n\t\t\t// qtail:auto_approver:exitNode#bbbbbbbbbb\n\t\t\t\"tag:b\",\n\t\t],\n\t\t// qtail:section:routes\n\t\t\"routes\": {\n\t\t\t// qtail:auto_approver:route:10.0.0.0/8\n\t\t\t\"10.0.0.0/8\": [\n\t\t\t\t// qtail:auto_approver:route:10.0.0.0/8#aaaaaaaaaa\n\t\t\t\t\"tag:r\",\n\t\t\t],\n\t\t},\n\t},\n}\n"

func TestApproversSectionFirstInTheFile(t *testing.T) {
	// autoApprovers is the first member of the file, exitNode the first of
	// autoApprovers: both are found and pruned at index 0.
	owned := Key{Kind: KindAutoApprover, Name: ExitNodeName, Owner: "aaaaaaaaaa"}
	src := "{\n\t// qtail:section:autoApprovers\n\t\"autoApprovers\": {\n\t\t// qtail:auto_approver:exitNode\n\t\t\"exitNode\": [\n\t\t\t// qtail:auto_approver:exitNode#aaaaaaaaaa\n\t\t\t\"tag:a\",\n\t\t],\n\t\t\"routes\": {},\n\t},\n\t\"grants\": [],\n}\n"
	doc := mustParse(t, []byte(src))
	if got, want := fragmentsText(doc), "auto_approver exitNode#aaaaaaaaaa [\"tag:a\"]\n"; got != want {
		t.Errorf("Fragments = %q, want %q", got, want)
	}
	if err := doc.Put(owned, raw(`["tag:a"]`)); err != nil || string(doc.Bytes()) != src {
		t.Fatalf("Put of the same approvers: %v\n%s", err, doc.Bytes())
	}
	if !doc.Delete(owned) {
		t.Fatal("Delete removed nothing")
	}
	// routes was written by hand: it stays, and so does autoApprovers.
	want := "{\n\t// qtail:section:autoApprovers\n\t\"autoApprovers\": {\n\t\t\"routes\": {},\n\t},\n\t\"grants\": [],\n}\n"
	if got := string(doc.Bytes()); got != want {
		t.Errorf("after Delete:\n%q\nwant %q", got, want)
	}
	doc = mustParse(t, []byte(strings.Replace(src, "\t\t\"routes\": {},\n", "", 1)))
	if !doc.Delete(owned) {
		t.Fatal("Delete removed nothing")
	}
	if got, want := string(doc.Bytes()), "{\n\t\"grants\": [],\n}\n"; got != want {
		t.Errorf("after Delete:\n%q\nwant %q", got, want)
	}
}

func TestFragmentsOfMarkedApproverLists(t *testing.T) {
	for _, tc := range []struct{ name, exitNode, want string }{
		{"legacy member that is not a list", "// qtail:auto_approver:exitNode\n\t\t\"exitNode\": \"tag:x\"",
			"auto_approver exitNode# \"tag:x\"\n"},
		{"unmarked member that is not a list", "\"exitNode\": \"tag:x\"", ""},
		{"marked empty list", "// qtail:auto_approver:exitNode\n\t\t\"exitNode\": []",
			"auto_approver exitNode# []\n"},
		{"marked list of owned approvers only", "// qtail:auto_approver:exitNode\n\t\t\"exitNode\": [\n\t\t\t// qtail:auto_approver:exitNode#aaaaaaaaaa\n\t\t\t\"tag:a\",\n\t\t]",
			"auto_approver exitNode#aaaaaaaaaa [\"tag:a\"]\n"},
		{"marked list of owned and unowned approvers", "// qtail:auto_approver:exitNode\n\t\t\"exitNode\": [\n\t\t\t\"tag:hand\",\n\t\t\t// qtail:auto_approver:exitNode#aaaaaaaaaa\n\t\t\t\"tag:a\",\n\t\t]",
			"auto_approver exitNode# [\"tag:hand\"]\nauto_approver exitNode#aaaaaaaaaa [\"tag:a\"]\n"},
		{"unmarked list of owned and unowned approvers", "\"exitNode\": [\n\t\t\t\"tag:hand\",\n\t\t\t// qtail:auto_approver:exitNode#aaaaaaaaaa\n\t\t\t\"tag:a\",\n\t\t]",
			"auto_approver exitNode#aaaaaaaaaa [\"tag:a\"]\n"},
		{"unmarked empty list", "\"exitNode\": []", ""},
	} {
		src := "{\n\t\"autoApprovers\": {\n\t\t" + tc.exitNode + ",\n\t},\n}\n"
		if got := fragmentsText(mustParse(t, []byte(src))); got != tc.want {
			t.Errorf("%s: Fragments = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestApproverListThatIsNotAnArrayIsNamedInTheError(t *testing.T) {
	for _, tc := range []struct {
		key  Key
		src  string
		want string
	}{
		{Key{Kind: KindAutoApprover, Name: ExitNodeName, Owner: "aaaaaaaaaa"},
			"{\n\t\"autoApprovers\": {\n\t\t\"exitNode\": \"tag:x\",\n\t},\n}\n",
			"policy: autoApprovers.exitNode in the policy file is not an array"},
		{Key{Kind: KindAutoApprover, Name: RoutePrefix + "10.0.0.0/8", Owner: "aaaaaaaaaa"},
			"{\n\t\"autoApprovers\": {\n\t\t\"routes\": {\"10.0.0.0/8\": {}},\n\t},\n}\n",
			`policy: autoApprovers.routes["10.0.0.0/8"] in the policy file is not an array`},
	} {
		doc := mustParse(t, []byte(tc.src))
		err := doc.Put(tc.key, raw(`["tag:a"]`))
		if err == nil || err.Error() != tc.want {
			t.Errorf("Put(%v) = %v, want %q", tc.key, err, tc.want)
		}
		if got := string(doc.Bytes()); got != tc.src {
			t.Errorf("a refused Put changed the file:\n%s", got)
		}
	}
}

func TestPutApproversDropsTheFirstOneNoLongerNeeded(t *testing.T) {
	a := Key{Kind: KindAutoApprover, Name: ExitNodeName, Owner: "aaaaaaaaaa"}
	doc := mustParse(t, []byte("{\n\t\"grants\": [],\n}\n"))
	if err := doc.Put(a, raw(`["tag:a","tag:b"]`)); err != nil {
		t.Fatal(err)
	}
	if err := doc.Put(a, raw(`["tag:b"]`)); err != nil {
		t.Fatal(err)
	}
	want := "{\n\t\"grants\": [],\n\t// qtail:section:autoApprovers\n\t\"autoApprovers\": {\n\t\t// qtail:auto_approver:exitNode\n\t\t\"exitNode\": [\n\t\t\t// qtail:auto_approver:exitNode#aaaaaaaaaa\n\t\t\t\"tag:b\",\n\t\t],\n\t},\n}\n"
	if got := string(doc.Bytes()); got != want {
		t.Errorf("after the second Put:\n%q\nwant\n%q", got, want)
	}
	// No approvers at all: the list and sections qtail created go.
	if err := doc.Put(a, raw(`[]`)); err != nil {
		t.Fatal(err)
	}
	if got, want := string(doc.Bytes()), "{\n\t\"grants\": [],\n}\n"; got != want {
		t.Errorf("after an empty Put:\n%q\nwant %q", got, want)
	}
	if err := doc.Put(a, raw(`[]`)); err != nil {
		t.Fatal(err)
	}
	if got, want := string(doc.Bytes()), "{\n\t\"grants\": [],\n}\n"; got != want {
		t.Errorf("an empty Put on a file without approvers:\n%q\nwant %q", got, want)
	}
}

// A section of the other kind than the one a fragment goes in is named in
// the error, with the kind it should be.
func TestSectionOfTheWrongKindIsNamedInTheError(t *testing.T) {
	for _, tc := range []struct {
		key   Key
		src   string
		value string
		want  string
	}{
		{Key{Kind: KindGrant, Name: "web"}, "{\n\t\"grants\": {},\n}\n", `{"src": ["*"], "dst": ["*"], "ip": ["*"]}`,
			`policy: "grants" in the policy file is not an array`},
		{Key{Kind: KindTagOwner, Name: "tag:web"}, "{\n\t\"tagOwners\": [],\n}\n", `["group:ops"]`,
			`policy: "tagOwners" in the policy file is not an object`},
	} {
		doc := mustParse(t, []byte(tc.src))
		if err := doc.Put(tc.key, raw(tc.value)); err == nil || err.Error() != tc.want {
			t.Errorf("Put(%v) = %v, want %q", tc.key, err, tc.want)
		}
	}
}

// A marker written before owners were gets its owner in place, and keeps
// the line ending of the file.
func TestMarkerGetsItsOwnerInACRLFFile(t *testing.T) {
	const value = `{"src": ["*"], "dst": ["tag:web"], "ip": ["tcp:443"]}`
	src := "{\r\n\t\"grants\": [\r\n\t\t// qtail:grant:web\r\n\t\t" + value + ",\r\n\t],\r\n}\r\n"
	doc := mustParse(t, []byte(src))
	if err := doc.Put(Key{Kind: KindGrant, Name: "web", Owner: "aaaaaaaaaa"}, raw(value)); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(src, "// qtail:grant:web\r\n", "// qtail:grant:web#aaaaaaaaaa\r\n", 1)
	if got := string(doc.Bytes()); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// withoutFinalBreak drops the final line break of an extra, unless it ends
// a line comment.
func TestWithoutFinalBreak(t *testing.T) {
	for in, want := range map[string]string{
		"":             "",
		"\n":           "",
		"\r\n":         "",
		"\t\n":         "\t",
		"\n\t\t":       "\n\t\t",
		"// c\n":       "// c\n",
		"// c\r\n":     "// c\r\n",
		"// c\n\t\n":   "// c\n\t",
		"/* c */\n":    "/* c */",
		"// c\n\t\r\n": "// c\n\t",
	} {
		if got := string(withoutFinalBreak([]byte(in))); got != want {
			t.Errorf("withoutFinalBreak(%q) = %q, want %q", in, got, want)
		}
	}
}
