package tailnet

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

const egressPolicy = `{
	"tagOwners": {
		"tag:k8s-operator": [],
		"tag:k8s":          ["tag:k8s-operator"],
		"tag:db":           ["tag:k8s-operator"],
	},
	"grants": [
		// Proxies to the database, PostgreSQL only.
		{"src": ["tag:k8s"], "dst": ["tag:db"], "ip": ["tcp:5432"]},
	],
	"tests": [
		{"src": "tag:k8s", "accept": ["tag:db:5432"]},
	],
}
`

func TestRunPolicyTests(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	e.srv.AddDevice(tailnetapi.DeviceSpec{Hostname: "db", Tags: []string{"tag:db"}, IPv4: "100.64.0.9"})
	e.setPolicy(egressPolicy)
	c := e.client(Config{})
	const route = "/api/v2/tailnet/{tailnet}/acl/validate"

	// Nothing to run: no call.
	if failed, err := c.RunPolicyTests(t.Context(), nil); err != nil || failed != nil {
		t.Fatalf("no tests: %v %v", failed, err)
	}
	if n := e.count("POST", route); n != 0 {
		t.Fatalf("%d calls for no tests", n)
	}

	// Every test passes.
	failed, err := c.RunPolicyTests(t.Context(), []PolicyTest{
		{Src: "tag:k8s", Proto: "tcp", Accept: []string{"100.64.0.9:5432"}},
		{Src: "tag:k8s", Proto: "tcp", Deny: []string{"100.64.0.9:22"}},
	})
	if err != nil || failed != nil {
		t.Fatalf("passing tests: %v %v", failed, err)
	}
	req := e.rec.last(t, "POST", "/acl/validate")
	if ct := req.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var sent []map[string]any
	if err := json.NewDecoder(req.Body).Decode(&sent); err != nil || len(sent) != 2 || sent[0]["proto"] != "tcp" || sent[1]["deny"] == nil {
		t.Errorf("body %v (%v), want the two tests as a JSON array", sent, err)
	}

	// One call tells which tests failed, and which destinations.
	failed, err = c.RunPolicyTests(t.Context(), []PolicyTest{
		{Src: "tag:k8s", Proto: "tcp", Accept: []string{"100.64.0.9:5432", "100.64.0.9:6379"}},
		{Src: "tag:db", Proto: "tcp", Accept: []string{"100.64.0.9:5432"}},
		{Src: "tag:nope", Proto: "tcp", Accept: []string{"100.64.0.9:5432"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []ErrorData{
		{User: "tag:k8s", Errors: []string{`address "100.64.0.9:6379": want: Accept, got: Drop`}},
		{User: "tag:db", Errors: []string{`address "100.64.0.9:5432": want: Accept, got: Drop`}},
		{User: "tag:nope", Errors: []string{`src "tag:nope": tag not found: "tag:nope"`}},
	}
	if !slices.EqualFunc(failed, want, func(a, b ErrorData) bool {
		return a.User == b.User && slices.Equal(a.Errors, b.Errors)
	}) {
		t.Errorf("failed = %+v\nwant %+v", failed, want)
	}

	// The policy file, its own tests included, is unchanged.
	if stored, _ := e.srv.Policy(); string(stored) != egressPolicy {
		t.Errorf("running tests changed the policy file:\n%s", stored)
	}
	if n := e.count("POST", route); n != 2 {
		t.Errorf("%d validate calls, want 2", n)
	}
}

func TestRunPolicyTestsAnswers(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	c := e.client(Config{})
	tests := []PolicyTest{{Src: "tag:k8s", Accept: []string{"100.64.0.9:5432"}}}
	reply := func(status int, body string) {
		e.srv.Faults().Add(faults.Rule{Route: "POST /tailscale/api/v2/tailnet/{tailnet}/acl/validate", Status: status, Body: json.RawMessage(body)})
	}

	// Warnings only: the tests pass.
	reply(200, `{"message":"warning(s) found","data":[{"user":"group:x","warnings":["group has no members"]}]}`)
	if failed, err := c.RunPolicyTests(t.Context(), tests); err != nil || failed != nil {
		t.Errorf("warnings: %v %v", failed, err)
	}

	// Data entries that are plain strings still count.
	reply(200, `{"message":"test(s) failed","data":["tag:k8s: address \"100.64.0.9:5432\": want: Accept, got: Drop"]}`)
	if failed, err := c.RunPolicyTests(t.Context(), tests); err != nil || len(failed) != 1 || failed[0].User != "" {
		t.Errorf("string data: %+v %v", failed, err)
	}

	// A message without failing tests: the tests could not be read.
	reply(200, `{"message":"json: unknown field \"dst\""}`)
	_, err := c.RunPolicyTests(t.Context(), tests)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Message != `json: unknown field "dst"` {
		t.Errorf("message only: %T %v", err, err)
	}

	// An error status is an APIError.
	reply(403, `{"message":"forbidden"}`)
	if _, err := c.RunPolicyTests(t.Context(), tests); !errors.As(err, new(*APIError)) {
		t.Errorf("403: %T %v", err, err)
	}
}
