package policyfile

import (
	"encoding/json"
	"errors"
	"testing"
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

func TestFragmentOf(t *testing.T) {
	for _, tc := range []struct {
		typ, attrs string
		key        Key
		entry      string
	}{
		// Null members are left out, empty lists kept, app written as
		// compact JSON; the plan's computed id and marker are ignored.
		{"qtail_grant", `{"name": "web", "src": ["group:ops"], "dst": ["tag:web"], "ip": ["tcp:443"], "app": null, "via": null, "src_posture": null, "id": null, "marker": null}`,
			Key{Kind: KindGrant, Name: "web"}, `{"dst":["tag:web"],"ip":["tcp:443"],"src":["group:ops"]}`},
		{"qtail_grant", `{"name": "k8s", "src": ["group:ops"], "dst": ["tag:k8s"], "ip": [], "app": "{\"tailscale.com/cap/kubernetes\": [{\"impersonate\": {\"groups\": [\"system:masters\"]}}]}", "via": ["tag:router"], "src_posture": ["posture:latest"]}`,
			Key{Kind: KindGrant, Name: "k8s"}, `{"app":{"tailscale.com/cap/kubernetes":[{"impersonate":{"groups":["system:masters"]}}]},"dst":["tag:k8s"],"ip":[],"src":["group:ops"],"srcPosture":["posture:latest"],"via":["tag:router"]}`},
		{"qtail_policy_test", `{"name": "ops", "src": "group:ops", "proto": null, "accept": ["tag:web:443"], "deny": null}`,
			Key{Kind: KindPolicyTest, Name: "ops"}, `{"accept":["tag:web:443"],"src":"group:ops"}`},
		{"qtail_policy_test", `{"name": "dns", "src": "carol@example.com", "proto": "udp", "accept": null, "deny": ["tag:dns:53"]}`,
			Key{Kind: KindPolicyTest, Name: "dns"}, `{"deny":["tag:dns:53"],"proto":"udp","src":"carol@example.com"}`},
		{"qtail_tag_owner", `{"tag": "tag:k8s", "owners": ["tag:k8s-operator"]}`, Key{Kind: KindTagOwner, Name: "tag:k8s"}, `["tag:k8s-operator"]`},
		{"qtail_tag_owner", `{"tag": "tag:k8s-operator", "owners": []}`, Key{Kind: KindTagOwner, Name: "tag:k8s-operator"}, `[]`},
		{"qtail_auto_approver", `{"route": "10.0.0.0/16", "exit_node": false, "approvers": ["tag:router"]}`, RouteKey("10.0.0.0/16"), `["tag:router"]`},
		{"qtail_auto_approver", `{"route": null, "exit_node": true, "approvers": ["tag:exit"]}`, ExitNodeKey(), `["tag:exit"]`},
	} {
		key, entry, err := FragmentOf(tc.typ, attrs(t, tc.attrs))
		if err != nil || key != tc.key || string(entry) != tc.entry {
			t.Errorf("%s %s:\n got %v %s %v\nwant %v %s", tc.typ, tc.attrs, key, entry, err, tc.key, tc.entry)
		}
	}
	if key, entry, err := FragmentOf("qtail_allow_all_removal", attrs(t, `{"id": "allow_all"}`)); err != nil || key != AllowAllKey() || entry != nil {
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
		if _, _, err := FragmentOf(tc.typ, attrs(t, tc.attrs)); !errors.Is(err, ErrIncomplete) {
			t.Errorf("%s %s: err %v, want ErrIncomplete", tc.typ, tc.attrs, err)
		}
	}
	if _, _, err := FragmentOf("qtail_tag_owner", attrs(t, `{"tag": "k8s", "owners": []}`)); err == nil || errors.Is(err, ErrIncomplete) {
		t.Errorf("invalid tag: %v", err)
	}
	if _, _, err := FragmentOf("qtail_exposed_service", nil); err == nil {
		t.Error("not a fragment resource")
	}
}

// TestEntriesApply: the entries are what the Document takes, and a grant
// comes out laid out in the documented member order.
func TestEntriesApply(t *testing.T) {
	doc, err := Parse([]byte("{\n\t\"grants\": [],\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	proto := "tcp"
	g, _ := GrantEntry{Src: []string{"group:ops"}, Dst: []string{"tag:web"}, IP: []string{"tcp:443"}}.JSON()
	tst, _ := PolicyTestEntry{Src: "group:ops", Proto: &proto, Accept: []string{"tag:web:443"}}.JSON()
	if err := doc.Put(Key{Kind: KindGrant, Name: "web"}, g); err != nil {
		t.Fatal(err)
	}
	if err := doc.Put(Key{Kind: KindPolicyTest, Name: "web"}, tst); err != nil {
		t.Fatal(err)
	}
	want := "{\n\t\"grants\": [\n\t\t// qtail:grant:web\n\t\t{\n\t\t\t\"src\": [\"group:ops\"],\n\t\t\t\"dst\": [\"tag:web\"],\n\t\t\t\"ip\": [\"tcp:443\"],\n\t\t},\n\t],\n" +
		"\t\"tests\": [\n\t\t// qtail:policy_test:web\n\t\t{\n\t\t\t\"src\": \"group:ops\",\n\t\t\t\"proto\": \"tcp\",\n\t\t\t\"accept\": [\"tag:web:443\"],\n\t\t},\n\t],\n}\n"
	if got := string(doc.Bytes()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := (ListEntry(nil)).JSON(); err == nil {
		t.Error("a nil list has an entry")
	}
	if _, err := (GrantEntry{Src: []string{"*"}, Dst: []string{"*"}, App: json.RawMessage("{")}).JSON(); err == nil {
		t.Error("invalid app JSON accepted")
	}
}
