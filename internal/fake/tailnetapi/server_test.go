package tailnetapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
)

func TestErrorBodiesAreJSON(t *testing.T) {
	h := newHarness(t, Options{Tailnet: "example.com"})
	cases := []struct {
		name, method, path string
		hdr                map[string]string
		status             int
		message            string
	}{
		{"unknown route", "GET", "/api/v2/nothing", nil, 404, "not found"},
		{"outside the API", "GET", "/", nil, 404, "not found"},
		{"wrong method", "PUT", aclPath, nil, 405, "method not allowed"},
		{"wrong method on a device", "PATCH", "/api/v2/device/n1CNTRL", nil, 405, "method not allowed"},
		{"no credentials", "GET", aclPath, map[string]string{"Authorization": ""}, 401, "API token required"},
		{"bad API key", "GET", aclPath, map[string]string{"Authorization": "Basic dG9rZW46"}, 401, "API token invalid"},
		{"bad bearer", "GET", aclPath, map[string]string{"Authorization": "Bearer nope"}, 401, "API token invalid"},
		{"unknown tailnet", "GET", "/api/v2/tailnet/other.org/acl", nil, 404, "tailnet not found"},
		{"unknown device", "GET", "/api/v2/device/nope", nil, 404, "no manageable device matching this ID found"},
		{"bad key body", "POST", keysPath, nil, 400, "invalid request body"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := ""
			if c.method == "POST" {
				body = "{"
			}
			r := h.do(c.method, c.path, body, c.hdr).want(t, c.status)
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if msg := r.message(t); !strings.HasPrefix(msg, c.message) {
				t.Errorf("message %q, want prefix %q", msg, c.message)
			}
		})
	}
	if allow := h.do("DELETE", aclPath, "", nil).want(t, 405).header.Get("Allow"); allow != "GET, POST" {
		t.Errorf("Allow %q", allow)
	}

	// The API key also works as a Bearer token; the tailnet's name and
	// "-" address the same tailnet.
	h.do("GET", "/api/v2/tailnet/example.com/acl", "", map[string]string{"Authorization": "Bearer " + testKey}).want(t, 200)
	h.do("GET", "/api/v2/tailnet/EXAMPLE.com/devices", "", nil).want(t, 200)
}

func TestFaultsAndCounters(t *testing.T) {
	f := &faults.Set{}
	srv := New(Options{APIKey: testKey, Prefix: "/tailscale", Faults: f})
	if srv.Faults() != f {
		t.Fatal("Faults() is not the set passed in")
	}
	mux := http.NewServeMux()
	mux.Handle("/tailscale/", http.StripPrefix("/tailscale", srv.Handler()))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	h := &harness{t: t, srv: srv, ts: ts}

	route := "GET /tailscale/api/v2/tailnet/{tailnet}/acl"
	f.Add(faults.Rule{Route: route, Status: 429, RetryAfter: 3, Count: 2})
	for range 2 {
		r := h.do("GET", "/tailscale"+aclPath, "", nil).want(t, 429)
		if r.header.Get("Retry-After") != "3" || r.message(t) == "" {
			t.Errorf("injected answer %v %s", r.header, r.body)
		}
	}
	h.do("GET", "/tailscale"+aclPath, "", nil).want(t, 200)
	h.do("POST", "/tailscale"+aclPath+"/validate", "{}", nil).want(t, 200)
	h.do("GET", "/tailscale/api/v2/nowhere", "", nil).want(t, 404)

	calls := f.Calls()
	if calls[route] != 3 || calls["POST /tailscale/api/v2/tailnet/{tailnet}/acl/validate"] != 1 || len(calls) != 2 {
		t.Errorf("calls %v", calls)
	}
	if len(f.Pending()) != 0 {
		t.Errorf("rules left %v", f.Pending())
	}
}

func TestResetRestoresInitialState(t *testing.T) {
	h := newHarness(t, Options{InitialPolicy: []byte(operatorPolicy)})
	if err := h.srv.SetPolicyDirect([]byte(DefaultPolicy)); err != nil {
		t.Fatal(err)
	}
	h.do("POST", keysPath, `{"keyType":"client","scopes":["dns:read"]}`, nil).want(t, 200)
	h.srv.AddDevice(DeviceSpec{Hostname: "x"})
	h.srv.Reset()
	if body, _ := h.srv.Policy(); string(body) != operatorPolicy {
		t.Errorf("policy after Reset:\n%s", body)
	}
	if r := h.do("GET", keysPath, "", nil).want(t, 200); string(r.body) != `{"keys":[]}` {
		t.Errorf("keys after Reset: %s", r.body)
	}
	if len(h.srv.Devices()) != 0 {
		t.Error("devices after Reset")
	}
}
