package tailnet

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

func TestNewChecksConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no credentials", Config{}, "missing"},
		{"both", Config{APIKey: "k", OAuthClientID: "i", OAuthClientSecret: "s"}, "not both"},
		{"id without secret", Config{OAuthClientID: "i"}, "both its ID and its secret"},
		{"plain http to a remote host", Config{APIKey: "k", BaseURL: "http://api.example.com"}, "loopback"},
		{"not a URL", Config{APIKey: "k", BaseURL: "api.tailscale.com"}, "absolute http(s) URL"},
		{"user info", Config{APIKey: "k", BaseURL: "https://u:p@api.tailscale.com"}, "user info"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want it to mention %q", err, c.want)
			}
		})
	}
	for _, base := range []string{"", "https://api.tailscale.com/", "http://127.0.0.1:8787/tailscale", "http://localhost:1", "http://[::1]:2"} {
		c, err := New(Config{APIKey: "k", BaseURL: base})
		if err != nil {
			t.Errorf("%q: %v", base, err)
			continue
		}
		if c.Tailnet() != "-" || c.API().Tailnet != "-" || c.API().UserAgent != DefaultUserAgent {
			t.Errorf("%q: defaults not applied", base)
		}
	}
}

func TestAPIKeyAuth(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	c := e.client(Config{UserAgent: "qtail-test/1"})
	if _, _, err := c.GetPolicy(t.Context()); err != nil {
		t.Fatal(err)
	}
	req := e.rec.last(t, "GET", "/acl")
	if user, pass, ok := req.BasicAuth(); !ok || user != testAPIKey || pass != "" {
		t.Errorf("Basic auth %q %q %v", user, pass, ok)
	}
	if ua := req.Header.Get("User-Agent"); ua != "qtail-test/1" {
		t.Errorf("User-Agent %q", ua)
	}
	if req.URL.Path != "/tailscale/api/v2/tailnet/-/acl" {
		t.Errorf("path %q", req.URL.Path)
	}
	// Client v2 calls carry the same credentials.
	if _, err := c.ListDevices(t.Context(), ListDevicesOptions{}); err != nil {
		t.Fatal(err)
	}
	if user, _, _ := e.rec.last(t, "GET", "/devices").BasicAuth(); user != testAPIKey {
		t.Errorf("client v2 request not authenticated: %q", user)
	}

	bad := e.client(Config{APIKey: "tskey-api-wrong"})
	_, _, err := bad.GetPolicy(t.Context())
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Message != "API token invalid" {
		t.Fatalf("wrong key: %v", err)
	}
}

func TestOAuthAuthThroughOurHTTPClient(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{InitialPolicy: []byte(operatorPolicy)})
	id, secret := e.srv.SeedOAuthClient("", "", []string{"policy_file", "devices:core"}, []string{"tag:k8s-operator"})
	c := e.client(Config{OAuthClientID: id, OAuthClientSecret: secret})

	for range 3 {
		if _, _, err := c.GetPolicy(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.ListDevices(t.Context(), ListDevicesOptions{}); err != nil {
		t.Fatal(err)
	}
	// One token for four calls, fetched through our transport (the
	// recorder saw it) from BASE/api/v2/oauth/token.
	if n := e.count("POST", "/api/v2/oauth/token"); n != 1 {
		t.Errorf("%d token requests, want 1", n)
	}
	tokReq := e.rec.last(t, "POST", "/oauth/token")
	if tokReq.URL.Path != "/tailscale/api/v2/oauth/token" {
		t.Errorf("token path %q", tokReq.URL.Path)
	}
	if auth := e.rec.last(t, "GET", "/acl").Header.Get("Authorization"); !strings.HasPrefix(auth, "Bearer ") {
		t.Errorf("API request Authorization %q", auth)
	}
	if e.count("GET", "/api/v2/tailnet/{tailnet}/acl") != 3 {
		t.Errorf("calls %v", e.srv.Faults().Calls())
	}
}

func TestOAuthTokensRenewedWhenExpired(t *testing.T) {
	// Tokens that live less than x/oauth2's 10 s safety margin are
	// renewed on every call.
	e := newEnv(t, tailnetapi.Options{TokenTTL: 5 * time.Second})
	id, secret := e.srv.SeedOAuthClient("", "", []string{"all"}, nil)
	c := e.client(Config{OAuthClientID: id, OAuthClientSecret: secret})
	for range 3 {
		if _, _, err := c.GetPolicy(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.count("POST", "/api/v2/oauth/token"); n != 3 {
		t.Errorf("%d token requests, want 3", n)
	}
}

func TestOAuthWrongSecret(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	id, _ := e.srv.SeedOAuthClient("", "", []string{"all"}, nil)
	c := e.client(Config{OAuthClientID: id, OAuthClientSecret: "tskey-client-wrong"})
	_, _, err := c.GetPolicy(t.Context())
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("want *APIError, got %T %v", err, err)
	}
	if ae.Status != 401 || ae.Path != "/tailscale/api/v2/oauth/token" || !strings.Contains(ae.Message, "invalid_client") {
		t.Errorf("error %+v", ae)
	}
	if msg := err.Error(); !strings.Contains(msg, "OAuth client credentials rejected") || !strings.Contains(msg, "HTTP 401") {
		t.Errorf("message %q", msg)
	}
	if e.count("GET", "/api/v2/tailnet/{tailnet}/acl") != 0 || e.count("POST", "/api/v2/oauth/token") != 1 {
		t.Errorf("calls %v", e.srv.Faults().Calls())
	}
	// The same through a client v2 call.
	if _, err := c.ListDevices(t.Context(), ListDevicesOptions{}); !errors.As(err, &ae) || ae.Status != 401 {
		t.Errorf("client v2 call: %v", err)
	}
}

func TestOAuthScopes(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	id, secret := e.srv.SeedOAuthClient("", "", []string{"all"}, nil)
	c := e.client(Config{OAuthClientID: id, OAuthClientSecret: secret, Scopes: []string{"devices:core:read"}})
	if _, err := c.ListDevices(t.Context(), ListDevicesOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.GetPolicy(t.Context())
	if ae, ok := AsAPIError(err); !ok || ae.Status != http.StatusForbidden {
		t.Errorf("narrow token read the policy: %v", err)
	}
	tokReq := e.rec.last(t, "POST", "/oauth/token")
	if err := tokReq.ParseForm(); err != nil {
		t.Fatal(err)
	}
	if tokReq.PostForm.Get("scope") != "devices:core:read" || tokReq.PostForm.Get("grant_type") != "client_credentials" || tokReq.PostForm.Get("client_id") != id {
		t.Errorf("token request form %v", tokReq.PostForm)
	}
}

func TestCredentialsStayOnTheAPIOrigin(t *testing.T) {
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = append(leaked, r.Header.Get("Authorization"))
		w.Header().Set("ETag", `"x"`)
		_, _ = w.Write([]byte("{}"))
	}))
	t.Cleanup(other.Close)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(api.Close)
	c, err := New(Config{APIKey: testAPIKey, BaseURL: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.GetPolicy(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(leaked) != 1 || leaked[0] != "" {
		t.Errorf("Authorization sent to another origin: %q", leaked)
	}
}

func TestRetryAfter429ThenSuccess(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	e.srv.Faults().Add(faults.Rule{Route: "GET /tailscale/api/v2/tailnet/{tailnet}/acl", Status: 429, RetryAfter: 2, Count: 2})
	c := e.client(Config{})
	body, etag, err := c.GetPolicy(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != tailnetapi.DefaultPolicy || etag == "" {
		t.Errorf("body %q etag %q", body, etag)
	}
	if e.count("GET", "/api/v2/tailnet/{tailnet}/acl") != 3 {
		t.Errorf("calls %v", e.srv.Faults().Calls())
	}
	if len(e.sleeps) != 2 || e.sleeps[0] != 2*time.Second || e.sleeps[1] != 2*time.Second {
		t.Errorf("waits %v, want the server's Retry-After twice", e.sleeps)
	}

	// A 429 that outlasts the attempts says how many were made, also
	// through client v2.
	e.srv.Faults().Add(faults.Rule{Route: "GET /tailscale/api/v2/tailnet/{tailnet}/devices", Status: 429, RetryAfter: 1, Count: 5})
	_, err = c.ListDevices(t.Context(), ListDevicesOptions{})
	ae, ok := AsAPIError(err)
	if !ok || ae.Status != 429 || ae.Attempts != 3 || !strings.HasSuffix(err.Error(), "(HTTP 429, after 3 attempts)") {
		t.Errorf("exhausted 429: %v", err)
	}

	// The token request is retried too.
	id, secret := e.srv.SeedOAuthClient("", "", []string{"all"}, nil)
	e.srv.Faults().Add(faults.Rule{Route: "POST /tailscale/api/v2/oauth/token", Status: 429, RetryAfter: 1})
	oc := e.client(Config{OAuthClientID: id, OAuthClientSecret: secret})
	if _, _, err := oc.GetPolicy(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := e.count("POST", "/api/v2/oauth/token"); n != 2 {
		t.Errorf("%d token requests, want 2", n)
	}
}
