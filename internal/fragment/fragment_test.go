package fragment

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// attrs decodes attribute values the way they appear in a JSON plan.
func attrs(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// fragmentOf is the fragment that a resource of type typ with the values
// of a JSON plan writes, every value known.
func fragmentOf(typ string, m map[string]any) (policyfile.Key, json.RawMessage, error) {
	k, ok := ByType(typ)
	if !ok {
		return policyfile.Key{}, nil, errors.New(typ + " is not a fragment resource")
	}
	return k.Fragment(k.PlanValues(m, func(string) bool { return false }))
}

func TestFragmentOfPlanValues(t *testing.T) {
	for _, tc := range []struct {
		typ, attrs string
		key        policyfile.Key
		entry      string
	}{
		// Null members are left out, empty lists kept, app written as
		// compact JSON; the plan's computed id and marker are ignored.
		{"qtail_grant", `{"name": "web", "src": ["group:ops"], "dst": ["tag:web"], "ip": ["tcp:443"], "app": null, "via": null, "src_posture": null, "id": null, "marker": null}`,
			policyfile.Key{Kind: policyfile.KindGrant, Name: "web"}, `{"dst":["tag:web"],"ip":["tcp:443"],"src":["group:ops"]}`},
		{"qtail_grant", `{"name": "k8s", "src": ["group:ops"], "dst": ["tag:k8s"], "ip": [], "app": "{\"tailscale.com/cap/kubernetes\": [{\"impersonate\": {\"groups\": [\"system:masters\"]}}]}", "via": ["tag:router"], "src_posture": ["posture:latest"]}`,
			policyfile.Key{Kind: policyfile.KindGrant, Name: "k8s"}, `{"app":{"tailscale.com/cap/kubernetes":[{"impersonate":{"groups":["system:masters"]}}]},"dst":["tag:k8s"],"ip":[],"src":["group:ops"],"srcPosture":["posture:latest"],"via":["tag:router"]}`},
		{"qtail_policy_test", `{"name": "ops", "src": "group:ops", "proto": null, "accept": ["tag:web:443"], "deny": null}`,
			policyfile.Key{Kind: policyfile.KindPolicyTest, Name: "ops"}, `{"accept":["tag:web:443"],"src":"group:ops"}`},
		{"qtail_policy_test", `{"name": "dns", "src": "carol@example.com", "proto": "udp", "accept": null, "deny": ["tag:dns:53"]}`,
			policyfile.Key{Kind: policyfile.KindPolicyTest, Name: "dns"}, `{"deny":["tag:dns:53"],"proto":"udp","src":"carol@example.com"}`},
		{"qtail_tag_owner", `{"tag": "tag:k8s", "owners": ["tag:k8s-operator"]}`, policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:k8s"}, `["tag:k8s-operator"]`},
		{"qtail_tag_owner", `{"tag": "tag:k8s-operator", "owners": []}`, policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:k8s-operator"}, `[]`},
		{"qtail_auto_approver", `{"route": "10.0.0.0/16", "exit_node": false, "approvers": ["tag:router"]}`, policyfile.RouteKey("10.0.0.0/16"), `["tag:router"]`},
		{"qtail_auto_approver", `{"route": null, "exit_node": true, "approvers": ["tag:exit"]}`, policyfile.ExitNodeKey(), `["tag:exit"]`},
	} {
		key, entry, err := fragmentOf(tc.typ, attrs(t, tc.attrs))
		if err != nil || key != tc.key || string(entry) != tc.entry {
			t.Errorf("%s %s:\n got %v %s %v\nwant %v %s", tc.typ, tc.attrs, key, entry, err, tc.key, tc.entry)
		}
	}
	if key, entry, err := fragmentOf("qtail_allow_all_removal", attrs(t, `{"id": "allow_all"}`)); err != nil || key != policyfile.AllowAllKey() || entry != nil {
		t.Errorf("allow-all removal: %v %s %v", key, entry, err)
	}
}

func TestFragmentOfIncomplete(t *testing.T) {
	for _, tc := range []struct{ typ, attrs string }{
		{"qtail_grant", `{"name": "web", "src": null, "dst": ["tag:web"]}`},    // as after an import
		{"qtail_grant", `{"src": ["*"], "dst": ["tag:web"]}`},                  // name unknown
		{"qtail_grant", `{"name": "web", "src": ["*"], "dst": [null]}`},        // an element unknown
		{"qtail_policy_test", `{"name": "t", "src": null, "accept": ["a:1"]}`}, // src unknown
		{"qtail_tag_owner", `{"tag": "tag:web", "owners": null}`},              // owners unknown
		{"qtail_auto_approver", `{"route": "10.0.0.0/8", "exit_node": true}`},  // both
		{"qtail_auto_approver", `{"route": null, "exit_node": false, "approvers": []}`},
	} {
		if _, _, err := fragmentOf(tc.typ, attrs(t, tc.attrs)); !errors.Is(err, ErrIncomplete) {
			t.Errorf("%s %s: err %v, want ErrIncomplete", tc.typ, tc.attrs, err)
		}
	}
	if _, _, err := fragmentOf("qtail_tag_owner", attrs(t, `{"tag": "k8s", "owners": []}`)); err == nil || errors.Is(err, ErrIncomplete) {
		t.Errorf("invalid tag: %v", err)
	}
	if _, _, err := fragmentOf("qtail_exposed_service", nil); err == nil {
		t.Error("not a fragment resource")
	}
	// An attribute known only after apply leaves the entry out, not the
	// key.
	g := attrs(t, `{"name": "web", "src": ["*"], "dst": ["tag:web"], "ip": null}`)
	key, _, err := Grant.Fragment(Grant.PlanValues(g, func(name string) bool { return name == "ip" }))
	if !errors.Is(err, ErrIncomplete) || key != (policyfile.Key{Kind: policyfile.KindGrant, Name: "web"}) {
		t.Errorf("an unknown ip: %v %v", key, err)
	}
}

func TestEntries(t *testing.T) {
	for _, tc := range []struct {
		kind *Kind
		v    Values
		want string
	}{
		{Grant, Values{"src": []string{"a"}, "dst": []string{"b"}}, `{"dst":["b"],"src":["a"]}`},
		{Grant, Values{"src": []string{"a"}, "dst": []string{}, "ip": []string{"*"}, "app": `{"x":[]}`, "via": []string{"tag:v"}, "src_posture": []string{"p"}},
			`{"app":{"x":[]},"dst":[],"ip":["*"],"src":["a"],"srcPosture":["p"],"via":["tag:v"]}`},
		{PolicyTest, Values{"src": "a"}, `{"src":"a"}`},
		{PolicyTest, Values{"src": "a", "proto": "tcp", "accept": []string{"b:1"}, "deny": []string{}}, `{"accept":["b:1"],"deny":[],"proto":"tcp","src":"a"}`},
		{TagOwner, Values{"owners": []string{}}, `[]`},
		{AutoApprover, Values{"approvers": []string{"x", "y"}}, `["x","y"]`},
	} {
		got, ok := tc.kind.Entry(tc.v)
		if !ok || string(got) != tc.want {
			t.Errorf("%s %v: %s, %v; want %s", tc.kind.Type, tc.v, got, ok, tc.want)
		}
	}
	for _, tc := range []struct {
		kind *Kind
		v    Values
	}{
		{Grant, Values{"dst": []string{"b"}}},                                   // a grant needs src
		{Grant, Values{"src": []string{"a"}}},                                   // and dst
		{Grant, Values{"src": []string{"a"}, "dst": []string{"b"}, "app": `{`}}, // the app of a grant is JSON
		{Grant, Values{"src": []string{"a"}, "dst": Unknown}},
		{TagOwner, Values{}}, // the list of owners is not set
	} {
		if got, ok := tc.kind.Entry(tc.v); ok {
			t.Errorf("%s %v: entry %s", tc.kind.Type, tc.v, got)
		}
	}
}

// The entries are what the Document takes, and a grant comes out laid out
// in the documented member order.
func TestEntriesApply(t *testing.T) {
	doc, err := policyfile.Parse([]byte("{\n\t\"grants\": [],\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := Grant.Entry(Values{"src": []string{"group:ops"}, "dst": []string{"tag:web"}, "ip": []string{"tcp:443"}})
	tst, _ := PolicyTest.Entry(Values{"src": "group:ops", "proto": "tcp", "accept": []string{"tag:web:443"}})
	if err := doc.Put(policyfile.Key{Kind: policyfile.KindGrant, Name: "web"}, g); err != nil {
		t.Fatal(err)
	}
	if err := doc.Put(policyfile.Key{Kind: policyfile.KindPolicyTest, Name: "web"}, tst); err != nil {
		t.Fatal(err)
	}
	want := "{\n\t\"grants\": [\n\t\t// qtail:grant:web\n\t\t{\n\t\t\t\"src\": [\"group:ops\"],\n\t\t\t\"dst\": [\"tag:web\"],\n\t\t\t\"ip\": [\"tcp:443\"],\n\t\t},\n\t],\n" +
		"\t\"tests\": [\n\t\t// qtail:policy_test:web\n\t\t{\n\t\t\t\"src\": \"group:ops\",\n\t\t\t\"proto\": \"tcp\",\n\t\t\t\"accept\": [\"tag:web:443\"],\n\t\t},\n\t],\n}\n"
	if got := string(doc.Bytes()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// An entry read back gives the values it was made of; legacy member names
// and other cases are read, and what cannot be read is said.
func TestDecode(t *testing.T) {
	key := policyfile.Key{Kind: policyfile.KindPolicyTest, Name: "t"}
	v, problems := PolicyTest.Decode(key, json.RawMessage(`{"User":"a@b.c","allow":["tag:x:1"],"proto":"tcp"}`))
	if len(problems) != 0 || v["name"] != "t" || v["src"] != "a@b.c" || v["proto"] != "tcp" || fmt.Sprint(v["accept"]) != "[tag:x:1]" || v["deny"] != nil {
		t.Errorf("legacy test: %v %q", v, problems)
	}
	_, problems = Grant.Decode(policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, json.RawMessage(`{"src":"*","dst":["*"],"srcPosture":[1]}`))
	if want := []string{`"src" in the policy file is not a list of strings: "*". Correct it in the policy file.`,
		`"srcPosture" in the policy file is not a list of strings: [1]. Correct it in the policy file.`}; strings.Join(problems, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems %q, want %q", problems, want)
	}
	_, problems = Grant.Decode(policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, json.RawMessage(`[1]`))
	if len(problems) != 1 || !strings.HasPrefix(problems[0], `the entry of qtail_grant "g" in the policy file is not a JSON object: `) {
		t.Errorf("not an object: %q", problems)
	}
	owned := policyfile.Key{Kind: policyfile.KindAutoApprover, Name: "route:10.0.0.0/8", Owner: "abc"}
	v, problems = AutoApprover.Decode(owned, json.RawMessage(`null`))
	if len(problems) != 0 || v["route"] != "10.0.0.0/8" || v["exit_node"] != false || v["owner"] != "abc" || fmt.Sprintf("%#v", v["approvers"]) != "[]string{}" {
		t.Errorf("approvers: %v %q", v, problems)
	}
	if k, ok := AutoApprover.Key(v); !ok || k != owned {
		t.Errorf("key of the decoded approvers: %v", k)
	}
	_, problems = TagOwner.Decode(policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:x"}, json.RawMessage(`{}`))
	if len(problems) != 1 || problems[0] != `The value of tagOwners["tag:x"] in the policy file is not a list of strings: {}. Correct it in the policy file.` {
		t.Errorf("tag owners: %q", problems)
	}
}

func TestKeys(t *testing.T) {
	for _, tc := range []struct {
		route any
		exit  bool
		key   policyfile.Key
		ok    bool
	}{
		{nil, true, policyfile.ExitNodeKey(), true},
		{"10.0.0.0/8", false, policyfile.RouteKey("10.0.0.0/8"), true},
		{"10.0.0.0/8", true, policyfile.Key{}, false},
		{nil, false, policyfile.Key{}, false},
	} {
		k, ok := AutoApprover.Key(Values{"route": tc.route, "exit_node": tc.exit})
		if k != tc.key || ok != tc.ok {
			t.Errorf("AutoApprover.Key(%v, %v) = %v, %v", tc.route, tc.exit, k, ok)
		}
	}
	for kind, typ := range map[policyfile.Kind]string{policyfile.KindGrant: "qtail_grant", policyfile.KindTagOwner: "qtail_tag_owner",
		policyfile.KindAutoApprover: "qtail_auto_approver", policyfile.KindPolicyTest: "qtail_policy_test", policyfile.KindAllowAll: "qtail_allow_all_removal"} {
		k, ok := ByKind(kind)
		if !ok || k.Type != typ {
			t.Errorf("ByKind(%s) = %v, %v", kind, k, ok)
		}
		if back, ok := ByType(typ); !ok || back != k {
			t.Errorf("ByType(%s) = %v, %v", typ, back, ok)
		}
	}
	if _, ok := ByType("qtail_section"); ok {
		t.Error("ByType of an unknown type")
	}
	for s, want := range map[string]string{"web-1_a.b": "web-1_a.b", "it's": `'it'\''s'`, "": ""} {
		if got := shellQuote(s); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", s, got, want)
		}
	}
	for k, want := range map[policyfile.Key]string{
		{Kind: policyfile.KindGrant, Name: "web"}:       `the qtail_grant with name = "web"`,
		{Kind: policyfile.KindPolicyTest, Name: "t"}:    `the qtail_policy_test with name = "t"`,
		{Kind: policyfile.KindTagOwner, Name: "tag:db"}: `the qtail_tag_owner with tag = "tag:db"`,
		policyfile.ExitNodeKey():                        "the qtail_auto_approver with exit_node = true",
		policyfile.RouteKey("10.0.0.0/8"):               `the qtail_auto_approver with route = "10.0.0.0/8"`,
	} {
		if got := kindOf(t, k.Kind).Claimant(k); got != want {
			t.Errorf("Claimant(%v) = %q, want %q", k, got, want)
		}
	}
}

func kindOf(t *testing.T, kind policyfile.Kind) *Kind {
	t.Helper()
	k, ok := ByKind(kind)
	if !ok {
		t.Fatalf("no description of %s", kind)
	}
	return k
}

// A change of an attribute that makes the key replaces the resource, an
// unknown one too; other changes do not.
func TestReplaced(t *testing.T) {
	state := Values{"route": "10.0.0.0/8", "exit_node": false, "approvers": []string{"a@b.c"}, "owner": "abc"}
	for _, tc := range []struct {
		planned Values
		want    bool
	}{
		{Values{"route": "10.0.0.0/8", "exit_node": false, "approvers": []string{"x@b.c"}, "owner": Unknown}, false},
		{Values{"route": "10.1.0.0/16", "exit_node": false}, true},
		{Values{"route": nil, "exit_node": true}, true},
		{Values{"route": Unknown, "exit_node": false}, true},
	} {
		if got := AutoApprover.Replaced(state, tc.planned); got != tc.want {
			t.Errorf("Replaced(%v) = %v, want %v", tc.planned, got, tc.want)
		}
	}
	if got := AutoApprover.Replacing(); strings.Join(got, ",") != "route,exit_node,service" {
		t.Errorf("replacing attributes %q", got)
	}
}

// Every kind describes its attributes whole, and the package names them
// once: internal/policy and internal/policyfile, which know the policy
// file, name no resource type and no attribute of their own in their code
// (comments may show the marker format).
func TestDescriptions(t *testing.T) {
	var names []string
	for _, k := range Kinds() {
		names = append(names, k.Type)
		for _, a := range k.Attrs {
			if a.Description == "" || a.Required && (a.Optional || a.Computed) || !a.Required && !a.Optional && !a.Computed {
				t.Errorf("%s.%s: description %q, required %v optional %v computed %v", k.Type, a.Name, a.Description, a.Required, a.Optional, a.Computed)
			}
			if a.Optional && a.Computed && a.Default == nil {
				t.Errorf("%s.%s is optional and computed without a default", k.Type, a.Name)
			}
			if strings.Contains(a.Name, "_") {
				names = append(names, a.Name)
			}
		}
		if _, ok := k.Attr(IDAttr); !ok {
			t.Errorf("%s has no %s", k.Type, IDAttr)
		}
	}
	var files []string
	for _, dir := range []string{"../policy", "../policyfile"} {
		found, err := filepath.Glob(dir + "/*.go")
		if err != nil || len(found) == 0 {
			t.Fatalf("the files of %s: %v %v", dir, found, err)
		}
		files = append(files, found...)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		var s scanner.Scanner
		s.Init(fset.AddFile(f, -1, len(src)), src, nil, 0)
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok != token.STRING && tok != token.IDENT {
				continue
			}
			for _, n := range append(names, Provider+"_") {
				if strings.Contains(strings.ToLower(lit), n) {
					t.Errorf("%s: %q names %s, which internal/fragment describes", fset.Position(pos), lit, n)
				}
			}
		}
	}
}
