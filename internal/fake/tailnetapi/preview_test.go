package tailnetapi

import (
	"encoding/json"
	"net/url"
	"reflect"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

const previewPath = aclPath + "/preview"

// previewTopology is the sandbox's kind of tailnet: three users, one laptop
// each.
var previewTopology = aclcheck.Topology{
	Users: []aclcheck.User{
		{ID: 1, Name: "alice", Email: "alice@example.com"},
		{ID: 2, Name: "bob", Email: "bob@example.com"},
	},
	Nodes: map[string]aclcheck.Node{
		"alice-laptop": {Hostname: "alice-laptop", IPv4: "100.64.0.1", User: "alice"},
		"bob-laptop":   {Hostname: "bob-laptop", IPv4: "100.64.0.2", User: "bob"},
	},
}

// previewedPolicy grants group:ops port 443 of the proxies and bob the
// billing proxy's admin port; its test fails (bob cannot reach 443).
const previewedPolicy = `{
	"groups": {"group:ops": ["alice@example.com"]},
	"tagOwners": {"tag:k8s": [], "tag:billing": []},
	"grants": [
		{"src": ["group:ops"], "dst": ["tag:k8s"], "ip": ["tcp:443"]},
		{"src": ["bob@example.com"], "dst": ["tag:billing"], "ip": ["tcp:8080"]},
	],
	"tests": [{"src": "bob@example.com", "accept": ["tag:k8s:443"]}],
}`

func previewQuery(typ, previewFor string) string {
	return previewPath + "?" + url.Values{"type": {typ}, "previewFor": {previewFor}}.Encode()
}

func decodePreview(t *testing.T, r reply) previewResponse {
	t.Helper()
	var out previewResponse
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	return out
}

func TestPreviewPolicy(t *testing.T) {
	h := newHarness(t, Options{Topology: previewTopology})
	proxy := h.srv.AddDevice(DeviceSpec{Hostname: "billing-api", Tags: []string{"tag:k8s", "tag:billing"}, IPv4: "100.64.0.10"})
	before, _ := h.srv.Policy()

	// Who reaches the proxy on 443, then on 8080: the device is found by
	// its address and matched through its tags. The failing test does
	// not stop a preview.
	r := h.do("POST", previewQuery("ipport", proxy.Addresses[0]+":443"), previewedPolicy, map[string]string{"Content-Type": "application/hujson"}).want(t, 200)
	got := decodePreview(t, r)
	want := previewResponse{Type: "ipport", PreviewFor: "100.64.0.10:443", Matches: []aclcheck.PreviewMatch{
		{Users: []string{"group:ops"}, Ports: []string{"tag:k8s:tcp:443"}, LineNumber: 5},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ipport 443:\n got %+v\nwant %+v", got, want)
	}
	var raw struct {
		Matches []map[string]json.RawMessage `json:"matches"`
	}
	if err := json.Unmarshal(r.body, &raw); err != nil || len(raw.Matches) != 1 || string(raw.Matches[0]["postures"]) != "null" {
		t.Errorf("postures: %s, want null", r.body)
	}
	got = decodePreview(t, h.do("POST", previewQuery("ipport", "100.64.0.10:8080"), previewedPolicy, nil).want(t, 200))
	if len(got.Matches) != 1 || got.Matches[0].Users[0] != "bob@example.com" || got.Matches[0].LineNumber != 6 {
		t.Errorf("ipport 8080: %+v", got)
	}

	// No rule: an empty list, not null.
	r = h.do("POST", previewQuery("ipport", "100.64.0.10:22"), previewedPolicy, nil).want(t, 200)
	if list, ok := r.json(t)["matches"].([]any); !ok || len(list) != 0 {
		t.Errorf("ipport 22: %s", r.body)
	}

	// What a user reaches, by login.
	got = decodePreview(t, h.do("POST", previewQuery("user", "bob@example.com"), previewedPolicy, nil).want(t, 200))
	if want := []string{"tag:billing:tcp:8080"}; len(got.Matches) != 1 || !reflect.DeepEqual(got.Matches[0].Ports, want) || got.Type != "user" {
		t.Errorf("user bob: %+v", got)
	}

	if after, _ := h.srv.Policy(); string(after) != string(before) {
		t.Error("a preview changed the policy")
	}
}

// TestPreviewPolicyErrors: a bad policy gets the 400 and the message of
// POST /acl; a bad type or previewFor a 400 too.
func TestPreviewPolicyErrors(t *testing.T) {
	h := newHarness(t, Options{Topology: previewTopology})
	for _, body := range []string{
		`{"grants": [], "nodeVisibilty": "all"}`,
		`{"grants": [{"src": "*", "dst": ["*"], "ip": ["*"]}]}`,
		"{\n  \"grants\": [,]\n}",
		`{"grants": [{"src": ["group:nobody"], "dst": ["*"], "ip": ["*"]}]}`,
		`{"grants": [{"src": ["*"], "dst": ["*"], "ip": ["icmp"]}]}`,
	} {
		want := h.do("POST", aclPath, body, nil).want(t, 400).message(t)
		got := h.do("POST", previewQuery("ipport", "100.64.0.1:22"), body, nil).want(t, 400).message(t)
		if got != want || got == "" {
			t.Errorf("policy %s: preview says %q, /acl says %q", body, got, want)
		}
	}
	for _, q := range []string{
		previewPath,
		previewQuery("device", "100.64.0.1:22"),
		previewQuery("ipport", "alice-laptop:22"),
		previewQuery("ipport", ""),
		previewQuery("user", "mallory@example.com"),
	} {
		if msg := h.do("POST", q, previewedPolicy, nil).want(t, 400).message(t); msg == "" {
			t.Errorf("%s: no message", q)
		}
	}
	h.do("POST", previewQuery("user", "alice@example.com"), "", nil).want(t, 400)
	h.do("GET", previewQuery("user", "alice@example.com"), "", nil).want(t, 405)
}

// TestPreviewPolicyScope: previewing needs policy_file:read, like reading
// the policy.
func TestPreviewPolicyScope(t *testing.T) {
	h := newHarness(t, Options{Topology: previewTopology})
	for _, tc := range []struct {
		scopes []string
		status int
	}{
		{[]string{"policy_file:read"}, 200},
		{[]string{"policy_file"}, 200},
		{[]string{"devices:core:read"}, 403},
	} {
		id, secret := h.srv.SeedOAuthClient("", "", tc.scopes, nil)
		tok, _ := h.do("POST", "/api/v2/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}.Encode(),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": ""}).want(t, 200).json(t)["access_token"].(string)
		h.do("POST", previewQuery("user", "alice@example.com"), previewedPolicy, map[string]string{"Authorization": "Bearer " + tok}).want(t, tc.status)
	}
}
