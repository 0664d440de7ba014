package policyfile

import (
	"bytes"
	"testing"
)

func TestRemoveAllowAllKeepsEverythingElse(t *testing.T) {
	src := []byte(`// a hand-written policy
{
	"groups": {"group:ops": ["alice@example.com"]},
	"grants": [
		// the rule a new tailnet ships with
		{"src": ["*"], "dst": ["*"], "ip": ["*"]},
		{"src": ["group:ops"], "dst": ["tag:k8s"], "ip": ["tcp:443"]}, // ops
	],
	"ACLs": [
		{"Action": "accept", "Users": ["*"], "Ports": ["*:*"]},
	],
}
`)
	doc, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if !HasAllowAll(doc) {
		t.Fatal("HasAllowAll = false before removal")
	}
	if f := doc.Get(AllowAllKey()); !f.Found {
		t.Fatal("Get(AllowAllKey) did not find the rule")
	}
	if err := doc.Apply(Mutation{Key: AllowAllKey(), Delete: true}); err != nil {
		t.Fatal(err)
	}
	out := doc.Bytes()
	if HasAllowAll(doc) || doc.Get(AllowAllKey()).Found {
		t.Fatalf("the rule is still there:\n%s", out)
	}
	for _, keep := range []string{
		"// a hand-written policy",
		"// the rule a new tailnet ships with",
		`{"src": ["group:ops"], "dst": ["tag:k8s"], "ip": ["tcp:443"]}, // ops`,
		`"groups": {"group:ops": ["alice@example.com"]},`,
		`"ACLs": [`,
	} {
		if !bytes.Contains(out, []byte(keep)) {
			t.Errorf("lost %q:\n%s", keep, out)
		}
	}
	if _, err := Parse(out); err != nil {
		t.Fatalf("result is not valid HuJSON: %v\n%s", err, out)
	}
	// Removing again changes nothing; writing the rule is refused.
	again := doc.Clone()
	if again.Delete(AllowAllKey()) {
		t.Error("a second removal reported a change")
	}
	if err := doc.Apply(Mutation{Key: AllowAllKey(), Value: []byte(`{}`)}); err == nil {
		t.Error("writing the allow-all rule was accepted")
	}
	if _, ok := parseMarker("// qtail:allow_all:default"); ok {
		t.Error("allow_all parsed as a marker")
	}
}
