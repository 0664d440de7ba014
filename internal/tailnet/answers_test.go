package tailnet

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// canned is one answer of a stub server.
type canned struct {
	status int
	header http.Header
	body   string
	// short cuts the body off before the length the header announces.
	short bool
}

// stub answers every request with the same canned answer and records the
// paths it was asked for.
type stub struct {
	mu  sync.Mutex
	ans canned
	// byPath, when it has the request's "METHOD /path" or else its path,
	// answers instead of ans.
	byPath map[string]canned
	paths  []string
	// reqs are the requests' headers, in order.
	reqs []http.Header
}

func (s *stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.paths = append(s.paths, r.Method+" "+r.URL.Path)
	s.reqs = append(s.reqs, r.Header.Clone())
	a, ok := s.byPath[r.Method+" "+r.URL.Path]
	if !ok {
		a, ok = s.byPath[r.URL.Path]
	}
	if !ok {
		a = s.ans
	}
	s.mu.Unlock()
	for k, vs := range a.header {
		w.Header()[k] = vs
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	if a.short {
		// Promise more than is sent: the client's read fails.
		w.Header().Set("Content-Length", strconv.Itoa(len(a.body)+10))
	}
	w.WriteHeader(a.status)
	_, _ = w.Write([]byte(a.body))
}

// stubClient returns a client with an API key whose requests all get a,
// through an HTTP client without a transport (http.DefaultTransport) and
// so without retries.
func stubClient(t testing.TB, a canned) (*Client, *stub) {
	t.Helper()
	return stubConfig(t, &stub{ans: a}, Config{APIKey: testAPIKey})
}

// stubConfig serves s and returns a client made with cfg and s's URL.
func stubConfig(t testing.TB, s *stub, cfg Config) (*Client, *stub) {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	cfg.BaseURL = ts.URL
	cfg.HTTPClient = &http.Client{}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// apiCall is one client method, run for its error; path is the request
// path it sends its (first) request to.
type apiCall struct {
	name, method, path string
	run                func(ctx context.Context, c *Client) error
}

var apiCalls = []apiCall{
	{"ListDevices", "GET", "/api/v2/tailnet/-/devices", func(ctx context.Context, c *Client) error {
		_, err := c.ListDevices(ctx, ListDevicesOptions{})
		return err
	}},
	{"GetDevice", "GET", "/api/v2/device/n1", func(ctx context.Context, c *Client) error {
		_, err := c.GetDevice(ctx, "n1")
		return err
	}},
	{"FindDeviceByHostname", "GET", "/api/v2/tailnet/-/devices", func(ctx context.Context, c *Client) error {
		_, err := c.FindDeviceByHostname(ctx, "web")
		return err
	}},
	{"DeleteDevice", "DELETE", "/api/v2/device/n1", func(ctx context.Context, c *Client) error {
		return c.DeleteDevice(ctx, "n1")
	}},
	{"DeviceRoutes", "GET", "/api/v2/device/n1/routes", func(ctx context.Context, c *Client) error {
		_, _, err := c.DeviceRoutes(ctx, "n1")
		return err
	}},
	{"SetDeviceRoutes", "POST", "/api/v2/device/n1/routes", func(ctx context.Context, c *Client) error {
		return c.SetDeviceRoutes(ctx, "n1", nil)
	}},
	{"SetDeviceTags", "POST", "/api/v2/device/n1/tags", func(ctx context.Context, c *Client) error {
		return c.SetDeviceTags(ctx, "n1", nil)
	}},
	{"ListServices", "GET", "/api/v2/tailnet/-/vip-services", func(ctx context.Context, c *Client) error {
		_, err := c.ListServices(ctx)
		return err
	}},
	{"GetService", "GET", "/api/v2/tailnet/-/vip-services/svc:web", func(ctx context.Context, c *Client) error {
		_, err := c.GetService(ctx, "svc:web")
		return err
	}},
	{"FindService", "GET", "/api/v2/tailnet/-/vip-services/svc:web", func(ctx context.Context, c *Client) error {
		_, err := c.FindService(ctx, "svc:web")
		return err
	}},
	{"ServiceHosts", "GET", "/api/v2/tailnet/-/services/svc:web/devices", func(ctx context.Context, c *Client) error {
		_, err := c.ServiceHosts(ctx, "svc:web")
		return err
	}},
	{"GetPolicy", "GET", "/api/v2/tailnet/-/acl", func(ctx context.Context, c *Client) error {
		_, _, err := c.GetPolicy(ctx)
		return err
	}},
	{"PolicyBackend.Get", "GET", "/api/v2/tailnet/-/acl", func(ctx context.Context, c *Client) error {
		_, err := c.PolicyBackend().Get(ctx)
		return err
	}},
	{"SetPolicy", "POST", "/api/v2/tailnet/-/acl", func(ctx context.Context, c *Client) error {
		_, err := c.SetPolicy(ctx, []byte(`{}`), `"e1"`)
		return err
	}},
	{"ValidatePolicy", "POST", "/api/v2/tailnet/-/acl/validate", func(ctx context.Context, c *Client) error {
		return c.ValidatePolicy(ctx, []byte(`{}`))
	}},
	{"RunPolicyTests", "POST", "/api/v2/tailnet/-/acl/validate", func(ctx context.Context, c *Client) error {
		_, err := c.RunPolicyTests(ctx, []PolicyTest{{Src: "alice@example.com", Accept: []string{"100.64.0.1:22"}}})
		return err
	}},
	{"PreviewPolicy", "POST", "/api/v2/tailnet/-/acl/preview", func(ctx context.Context, c *Client) error {
		_, err := c.PreviewPolicy(ctx, []byte(`{}`), PreviewUser, "alice@example.com")
		return err
	}},
	{"ListKeys", "GET", "/api/v2/tailnet/-/keys", func(ctx context.Context, c *Client) error {
		_, err := c.ListKeys(ctx, true)
		return err
	}},
	{"GetKey", "GET", "/api/v2/tailnet/-/keys/k1", func(ctx context.Context, c *Client) error {
		_, err := c.GetKey(ctx, "k1")
		return err
	}},
	{"DeleteKey", "DELETE", "/api/v2/tailnet/-/keys/k1", func(ctx context.Context, c *Client) error {
		return c.DeleteKey(ctx, "k1")
	}},
	{"CreateAuthKey", "POST", "/api/v2/tailnet/-/keys", func(ctx context.Context, c *Client) error {
		_, _, err := c.CreateAuthKey(ctx, AuthKeyOptions{Description: "ci", Tags: []string{"tag:ci"}})
		return err
	}},
	{"CreateOAuthClient", "POST", "/api/v2/tailnet/-/keys", func(ctx context.Context, c *Client) error {
		_, _, err := c.CreateOAuthClient(ctx, []string{"all"}, nil, "ci")
		return err
	}},
	{"GetSettings", "GET", "/api/v2/tailnet/-/settings", func(ctx context.Context, c *Client) error {
		_, err := c.GetSettings(ctx)
		return err
	}},
}

func TestEveryCallReportsAnErrorAnswer(t *testing.T) {
	// A 400 with a message and a failing test, a Retry-After that was not
	// waited for and two attempts: every call returns an *APIError that
	// says all of it.
	at := time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set(retry.AttemptsHeader, "2")
	h.Set(retry.NotBeforeHeader, "3600 "+at.Format(time.RFC3339))
	body := `{"message":"bad request","data":[{"user":"alice@example.com","errors":["want: Drop, got: Accept"]},"plain entry"]}`
	for _, call := range apiCalls {
		t.Run(call.name, func(t *testing.T) {
			c, s := stubClient(t, canned{status: 400, header: h, body: body})
			err := call.run(t.Context(), c)
			e, ok := AsAPIError(err)
			if !ok {
				t.Fatalf("error %v (%T), want an *APIError", err, err)
			}
			if e.Status != 400 || e.Method != call.method || e.Path != call.path || e.Message != "bad request" || e.Attempts != 2 {
				t.Errorf("APIError %+v, want 400 %s %s \"bad request\" after 2 attempts", e, call.method, call.path)
			}
			later, ok := e.RetryLater()
			if !ok || later.Wait != time.Hour || !later.At.Equal(at) {
				t.Errorf("RetryLater() = %+v, %v; want 1h until %v", later, ok, at)
			}
			want := "tailscale API " + call.method + " " + call.path + ": bad request: alice@example.com: want: Drop, got: Accept; (no source): plain entry (HTTP 400, after 2 attempts); the API asked to wait 1 hour"
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("message\n%s\nwant it to start with\n%s", err, want)
			}
			if len(s.paths) != 1 || s.paths[0] != call.method+" "+call.path {
				t.Errorf("requests %v, want one %s %s", s.paths, call.method, call.path)
			}
		})
	}
}

func TestEveryCallReportsANonJSONErrorAnswer(t *testing.T) {
	// A gateway's HTML page: the message is the body's start, trimmed.
	page := "  <html>" + strings.Repeat("x", 300) + "</html>\n"
	for _, call := range apiCalls {
		t.Run(call.name, func(t *testing.T) {
			c, _ := stubClient(t, canned{status: 500, header: http.Header{"Content-Type": {"text/html"}}, body: page})
			err := call.run(t.Context(), c)
			e, ok := AsAPIError(err)
			if !ok {
				t.Fatalf("error %v (%T), want an *APIError", err, err)
			}
			if want := "<html>" + strings.Repeat("x", 194) + "..."; e.Status != 500 || e.Message != want || e.Attempts != 1 {
				t.Errorf("APIError status %d, %d attempts, message %q; want 500, 1 and %q", e.Status, e.Attempts, e.Message, want)
			}
			if _, ok := e.RetryLater(); ok || strings.Contains(err.Error(), "attempts") || strings.Contains(err.Error(), "asked to wait") {
				t.Errorf("message %q speaks of retries that were not made", err)
			}
		})
	}
}

func TestEveryCallRejectsAnAnswerThatIsNotJSON(t *testing.T) {
	// A 200 whose body is not JSON is an error, never an empty success.
	// GetPolicy and SetPolicy take the body as the policy file, or ignore
	// it; the others must decode it.
	undecodable := map[string]bool{"GetPolicy": false, "PolicyBackend.Get": false, "SetPolicy": false,
		"DeleteDevice": false, "SetDeviceRoutes": false, "SetDeviceTags": false, "DeleteKey": false}
	for _, call := range apiCalls {
		t.Run(call.name, func(t *testing.T) {
			c, _ := stubClient(t, canned{status: 200, body: "<html>maintenance</html>"})
			err := call.run(t.Context(), c)
			if _, ignored := undecodable[call.name]; ignored {
				if err != nil {
					t.Fatalf("error %v for an answer the call does not decode", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error for a body that is not JSON")
			}
			if _, ok := AsAPIError(err); ok {
				t.Errorf("error %v is an *APIError for a 200", err)
			}
			if !strings.Contains(err.Error(), call.method) || !strings.Contains(err.Error(), "svc:web") && !strings.Contains(err.Error(), call.path) {
				t.Errorf("error %q does not name the request %s %s", err, call.method, call.path)
			}
		})
	}
}

func TestClientV2ErrorOutsideTheErrorStatuses(t *testing.T) {
	// A 300 without Location reaches client v2 as is, which reports it as
	// its own APIError: it is converted with the request's method and path.
	body := `{"message":"choose one","data":[{"user":"bob@example.com","errors":["e1","e2"]}]}`
	c, _ := stubClient(t, canned{status: http.StatusMultipleChoices, body: body})
	_, err := c.GetDevice(t.Context(), "n1")
	var e *APIError
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want an *APIError", err, err)
	}
	if e.Status != 300 || e.Method != "GET" || e.Path != "/api/v2/device/n1" || e.Message != "choose one" || e.Attempts != 1 {
		t.Errorf("APIError %+v", e)
	}
	if len(e.Data) != 1 || e.Data[0].User != "bob@example.com" || strings.Join(e.Data[0].Errors, ",") != "e1,e2" {
		t.Errorf("data %+v", e.Data)
	}
}

func TestValidateAndPolicyTestAnswers(t *testing.T) {
	ctx := context.Background()
	tests := []PolicyTest{{Src: "alice@example.com", Accept: []string{"100.64.0.1:22"}}}
	cases := []struct {
		name, body string
		// validate is what ValidatePolicy returns: "" for nil, else the
		// error's message.
		validate string
		// failed is the number of failing tests RunPolicyTests returns;
		// runErr its error's message, or "".
		failed int
		runErr string
	}{
		{name: "blank", body: " \n", validate: "", failed: 0},
		{name: "empty object", body: `{}`, validate: "", failed: 0},
		{name: "message only", body: `{"message":"json: unknown field \"x\""}`,
			validate: `tailscale API POST /api/v2/tailnet/-/acl/validate: policy rejected: json: unknown field "x"`,
			runErr:   `tailscale API POST /api/v2/tailnet/-/acl/validate: policy rejected: json: unknown field "x"`},
		{name: "data without a message", body: `{"data":[{"user":"alice@example.com","errors":["want: Accept, got: Drop"]}]}`,
			validate: "tailscale API POST /api/v2/tailnet/-/acl/validate: policy rejected: validation failed: alice@example.com: want: Accept, got: Drop",
			failed:   1},
		{name: "warnings only", body: `{"message":"warnings","data":[{"user":"bob@example.com","warnings":["unused group"]}]}`,
			validate: "tailscale API POST /api/v2/tailnet/-/acl/validate: policy rejected: warnings: bob@example.com (warning): unused group",
			failed:   0},
		{name: "an entry without errors or warnings", body: `{"message":"tests unreadable","data":[{"user":"alice@example.com"}]}`,
			validate: "tailscale API POST /api/v2/tailnet/-/acl/validate: policy rejected: tests unreadable",
			runErr:   "tailscale API POST /api/v2/tailnet/-/acl/validate: policy rejected: tests unreadable"},
		{name: "not JSON", body: `not json`,
			validate: "tailscale API POST /api/v2/tailnet/-/acl/validate: unexpected answer: not json",
			runErr:   "tailscale API POST /api/v2/tailnet/-/acl/validate: unexpected answer: not json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := stubClient(t, canned{status: 200, body: tc.body})
			err := c.ValidatePolicy(ctx, []byte(`{}`))
			if got := errText(err); got != tc.validate {
				t.Errorf("ValidatePolicy: %q, want %q", got, tc.validate)
			}
			if err != nil && tc.name != "not JSON" && !errors.Is(err, policy.ErrRejected) {
				t.Errorf("ValidatePolicy: %v does not match policy.ErrRejected", err)
			}
			failed, err := c.RunPolicyTests(ctx, tests)
			if got := errText(err); got != tc.runErr || len(failed) != tc.failed {
				t.Errorf("RunPolicyTests: %d failed, error %q; want %d and %q", len(failed), got, tc.failed, tc.runErr)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestPreviewWithoutMatches(t *testing.T) {
	c, _ := stubClient(t, canned{status: 200, body: `{"type":"user","previewFor":"alice@example.com"}`})
	p, err := c.PreviewPolicy(t.Context(), []byte(`{}`), PreviewUser, "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if p.Matches == nil || len(p.Matches) != 0 || p.Type != PreviewUser || p.PreviewFor != "alice@example.com" {
		t.Errorf("preview %+v, want no matches as an empty list", p)
	}
}

func TestPolicyAnswerOfTheLargestSize(t *testing.T) {
	body := strings.Repeat(" ", maxResponseBody-2) + "{}"
	c, _ := stubClient(t, canned{status: 200, body: body})
	got, _, err := c.GetPolicy(t.Context())
	if err != nil || len(got) != maxResponseBody || string(got[len(got)-2:]) != "{}" {
		t.Errorf("GetPolicy: %d bytes, error %v; want the whole %d bytes", len(got), err, maxResponseBody)
	}
}

func TestOversizedPolicyAnswer(t *testing.T) {
	c, _ := stubClient(t, canned{status: 200, body: strings.Repeat(" ", maxResponseBody+1)})
	_, _, err := c.GetPolicy(t.Context())
	if want := "tailscale API GET /api/v2/tailnet/-/acl: response larger than 10485760 bytes"; errText(err) != want {
		t.Errorf("error %q, want %q", errText(err), want)
	}
}

func TestCredentialsRefusedAtTheDefaultBaseURLsPaths(t *testing.T) {
	// The API at the root of its host, as DefaultBaseURL is: the token
	// endpoint's refusal is recognised by its path, /api/v2/oauth/token.
	c, s := stubClient(t, canned{status: 401, body: `{"error":"invalid_client","error_description":"unknown client"}`})
	_, err := c.ProveOAuthClient(t.Context(), "kClient", "tskey-client-secret")
	if !IsCredentialsRefused(err) {
		t.Fatalf("error %v, want refused credentials", err)
	}
	e, _ := AsAPIError(err)
	if e.Path != "/api/v2/oauth/token" || e.Status != 401 {
		t.Errorf("APIError %+v, want 401 at /api/v2/oauth/token", e)
	}
	if len(s.paths) != 1 || s.paths[0] != "POST /api/v2/oauth/token" {
		t.Errorf("requests %v", s.paths)
	}
	for _, base := range []string{DefaultBaseURL, DefaultBaseURL + "/", "https://proxy.example.com/tailscale/"} {
		c, err := New(Config{APIKey: testAPIKey, BaseURL: base})
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(base, DefaultBaseURL), "https://proxy.example.com"), "/") + "/api/v2/tailnet/-/acl"
		if got := c.tailnetURL("acl").Path; got != want {
			t.Errorf("base %q: policy path %q, want %q", base, got, want)
		}
	}
}

// testJWT returns an unsigned token whose payload is claims, good enough
// for the local checks.
func testJWT(claims string) string {
	return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + ".c2ln"
}

func TestIdentityTokenExchangeAnswers(t *testing.T) {
	jwt := testJWT(fmt.Sprintf(`{"exp":%d}`, time.Now().Add(time.Hour).Unix()))
	const hint = "; check that the OAuth client ID is the one of a federated identity whose issuer, subject and audience match the identity token"
	cases := []struct {
		name string
		ans  canned
		// want is the error's message; "" for a policy read that works.
		want string
		// status is the *APIError's, 0 when the error is no *APIError.
		status int
	}{
		{name: "not JSON", ans: canned{status: 502, body: " <html>bad gateway</html> "},
			want: "tailscale API POST /api/v2/oauth/token-exchange: identity token exchange refused: <html>bad gateway</html>" + hint + " (HTTP 502)", status: 502},
		{name: "empty body", ans: canned{status: 500},
			want: "tailscale API POST /api/v2/oauth/token-exchange: identity token exchange refused" + hint + " (HTTP 500)", status: 500},
		{name: "OAuth error without description", ans: canned{status: 400, body: `{"error":"invalid_grant"}`},
			want: "tailscale API POST /api/v2/oauth/token-exchange: identity token exchange refused (invalid_grant)" + hint + " (HTTP 400)", status: 400},
		{name: "message", ans: canned{status: 403, body: `{"message":"federation disabled"}`},
			want: "tailscale API POST /api/v2/oauth/token-exchange: identity token exchange refused: federation disabled" + hint + " (HTTP 403)", status: 403},
		{name: "nothing said", ans: canned{status: 401, body: `{}`},
			want: "tailscale API POST /api/v2/oauth/token-exchange: identity token exchange refused" + hint + " (HTTP 401)", status: 401},
		{name: "token echoed", ans: canned{status: 400, body: `{"error":"invalid_grant","error_description":"bad token ` + jwt + `"}`},
			want: "tailscale API POST /api/v2/oauth/token-exchange: identity token exchange refused (invalid_grant): bad token [token hidden]" + hint + " (HTTP 400)", status: 400},
		{name: "success without a token", ans: canned{status: 200, body: `{"token_type":"Bearer"}`},
			want: "tailscale API POST /api/v2/oauth/token-exchange: unexpected token exchange answer (HTTP 200)"},
		{name: "success that is not JSON", ans: canned{status: 200, body: `access_token=x`},
			want: "tailscale API POST /api/v2/oauth/token-exchange: unexpected token exchange answer (HTTP 200)"},
		{name: "cut off", ans: canned{status: 200, body: `{"access_token":"x"}`, short: true},
			want: "tailscale API POST /api/v2/oauth/token-exchange: reading the token exchange answer: unexpected EOF"},
		{name: "granted", ans: canned{status: 200, body: `{"access_token":"at-1","token_type":"Bearer","expires_in":3600}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &stub{ans: canned{status: 200, body: "{}"}, byPath: map[string]canned{"/api/v2/oauth/token-exchange": tc.ans}}
			c, _ := stubConfig(t, s, Config{OAuthClientID: "kFederated", IdentityToken: jwt})
			_, _, err := c.GetPolicy(t.Context())
			if got := errText(err); !strings.HasSuffix(got, tc.want) || (got == "") != (tc.want == "") {
				t.Fatalf("error\n%q\nwant it to end with\n%q", got, tc.want)
			}
			e, ok := AsAPIError(err)
			if (tc.status != 0) != ok || ok && e.Status != tc.status {
				t.Errorf("APIError %+v, %v; want status %d", e, ok, tc.status)
			}
			if tc.want == "" {
				if auth := s.reqs[len(s.reqs)-1].Get("Authorization"); auth != "Bearer at-1" {
					t.Errorf("API request Authorization %q, want the exchanged token", auth)
				}
			}
		})
	}
}

func TestIdentityTokensCheckedBeforeTheExchange(t *testing.T) {
	future := time.Now().Add(time.Hour).Unix()
	for token, want := range map[string]string{
		"a.b":                  "tailscale identity token: not a JWT (want three dot-separated parts, got 2)",
		"a.!!.c":               "tailscale identity token: not a JWT: its payload is not base64url",
		testJWT(`[1]`):         "tailscale identity token: not a JWT: its payload is not a JSON object",
		testJWT(`{}`):          "tailscale identity token: the JWT has no exp (expiry) claim",
		testJWT(`{"exp":0}`):   "tailscale identity token: the JWT has no exp (expiry) claim",
		testJWT(`{"exp":1.5}`): "tailscale identity token: the JWT has no exp (expiry) claim",
		testJWT(`{"exp":1}`):   "tailscale identity token: the JWT expired at 1970-01-01T00:00:01Z; fetch a new one",
		testJWT(fmt.Sprintf(`{"exp":%d}`, future)): "",
	} {
		s := &stub{ans: canned{status: 200, body: `{"access_token":"at","expires_in":60}`}}
		c, _ := stubConfig(t, s, Config{OAuthClientID: "kFederated", IdentityToken: " " + token + "\n"})
		_, _, err := c.GetPolicy(t.Context())
		if got := errText(err); !strings.HasSuffix(got, want) || (got == "") != (want == "") {
			t.Errorf("token %q: error %q, want it to end with %q", token, got, want)
		}
		if n := len(s.paths); want != "" && n != 0 {
			t.Errorf("token %q: %d requests for a token that fails the local checks", token, n)
		}
	}
	// A function that cannot fetch the token.
	s := &stub{ans: canned{status: 200, body: `{}`}}
	c, _ := stubConfig(t, s, Config{OAuthClientID: "kFederated", IdentityTokenFunc: func(context.Context) (string, error) {
		return "", errors.New("no OIDC provider")
	}})
	if _, _, err := c.GetPolicy(t.Context()); !strings.HasSuffix(errText(err), ": tailscale identity token: no OIDC provider") {
		t.Errorf("error %q", errText(err))
	}
}

func TestIdentityTokenExchangeUnreachable(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	base := ts.URL
	ts.Close()
	jwt := testJWT(fmt.Sprintf(`{"exp":%d}`, time.Now().Add(time.Hour).Unix()))
	c, err := New(Config{OAuthClientID: "kFederated", IdentityToken: jwt, BaseURL: base, HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.GetPolicy(t.Context())
	if want := "tailscale API POST /api/v2/oauth/token-exchange: exchanging the identity token: "; !strings.Contains(errText(err), want) {
		t.Errorf("error %q, want it to say %q", errText(err), want)
	}
	if _, ok := AsAPIError(err); ok {
		t.Errorf("a network error is reported as an answer: %v", err)
	}
}

func TestCutOffAnswers(t *testing.T) {
	// The connection closes before the announced length: an error answer
	// keeps what arrived of nothing, a success reports the failed read.
	c, _ := stubClient(t, canned{status: 500, body: `{"message":"boom"}`, short: true})
	_, err := c.GetDevice(t.Context(), "n1")
	e, ok := AsAPIError(err)
	if !ok || e.Status != 500 || e.Message != "" || e.Error() != "tailscale API GET /api/v2/device/n1: Internal Server Error (HTTP 500)" {
		t.Errorf("error %v, want a 500 without a message", err)
	}
	c, _ = stubClient(t, canned{status: 200, body: `{"acls":[]}`, short: true})
	_, _, err = c.GetPolicy(t.Context())
	if want := "tailscale API GET /api/v2/tailnet/-/acl: reading the response: unexpected EOF"; errText(err) != want {
		t.Errorf("error %q, want %q", errText(err), want)
	}
}

func TestAttemptsAndSnippetEdges(t *testing.T) {
	for _, tc := range []struct {
		attempts string
		want     int
	}{{"", 1}, {"0", 1}, {"-2", 1}, {"x", 1}, {"1", 1}, {"3", 3}} {
		h := http.Header{}
		if tc.attempts != "" {
			h.Set(retry.AttemptsHeader, tc.attempts)
		}
		if e := newAPIError("GET", "/p", 500, h, nil); e.Attempts != tc.want {
			t.Errorf("%s %q: %d attempts, want %d", retry.AttemptsHeader, tc.attempts, e.Attempts, tc.want)
		}
	}
	exact := strings.Repeat("y", 200)
	if got := snippet([]byte(exact)); got != exact {
		t.Errorf("a 200-character body is cut: %q", got)
	}
	if got := snippet([]byte(exact + "z")); got != exact+"..." {
		t.Errorf("a 201-character body: %q", got)
	}
}

func TestAPIClientErrorData(t *testing.T) {
	c, _ := stubClient(t, canned{status: 400, body: `{"message":"tests failed","data":[{"user":"a@example.com","errors":["e1"]},{"user":"b@example.com","errors":["e2","e3"]}]}`})
	_, err := c.API().Devices().List(t.Context())
	e, ok := AsAPIError(err)
	if !ok || e.Status != 400 || e.Message != "tests failed" || e.Attempts != 1 {
		t.Fatalf("AsAPIError(%v) = %+v, %v", err, e, ok)
	}
	if len(e.Data) != 2 || e.Data[0].User != "a@example.com" || strings.Join(e.Data[1].Errors, ",") != "e2,e3" {
		t.Errorf("data %+v", e.Data)
	}
}

func TestBaseURLThatDoesNotParse(t *testing.T) {
	_, err := New(Config{APIKey: testAPIKey, BaseURL: "https://[::1"})
	if want := `tailscale base URL "https://[::1": parse "https://[::1": missing ']' in host`; errText(err) != want {
		t.Errorf("error %q, want %q", errText(err), want)
	}
}

func TestErrorsWithoutARequest(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&ValidationError{Message: "m"}, "tailscale API policy rejected: m"},
		{&ValidationError{Method: "POST", Message: "m"}, "tailscale API POST: policy rejected: m"},
		{&ValidationError{Path: "/acl/validate", Message: "m"}, "tailscale API /acl/validate: policy rejected: m"},
		{&APIError{Status: 429}, "tailscale API Too Many Requests (HTTP 429)"},
		{&APIError{Method: "GET", Status: 404, Message: "gone"}, "tailscale API GET: gone (HTTP 404)"},
		{&APIError{Path: "/x", Status: 500, Attempts: 1}, "tailscale API /x: Internal Server Error (HTTP 500)"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestStatusesOfTheSuccessRange(t *testing.T) {
	// Every 2xx is a success whose body is decoded; the statuses around
	// the range are errors.
	for status, ok := range map[int]bool{200: true, 204: true, 299: true, 300: false, 399: false} {
		c, _ := stubClient(t, canned{status: status, body: `{"httpsEnabled":true}`, header: http.Header{"Etag": {`"e1"`}}})
		body, etag, perr := c.GetPolicy(t.Context())
		if status != 204 && ok != (perr == nil) || ok && status != 204 && (string(body) != `{"httpsEnabled":true}` || etag != `"e1"`) {
			t.Errorf("HTTP %d: policy %q, ETag %q, error %v; want success %v", status, body, etag, perr, ok)
		}
		s, err := c.GetSettings(t.Context())
		if status == 204 {
			// A 204 carries no body.
			if err == nil {
				t.Errorf("204: settings %+v from an empty body", s)
			}
			continue
		}
		if ok != (err == nil) || ok && !s.HTTPSEnabled {
			t.Errorf("HTTP %d: settings %+v, error %v; want success %v", status, s, err, ok)
		}
		if e, isAPI := AsAPIError(err); !ok && (!isAPI || e.Status != status) {
			t.Errorf("HTTP %d: error %v, want an *APIError with the status", status, err)
		}
	}
}

func TestExchangedTokenWithoutExpiryIsReused(t *testing.T) {
	jwt := testJWT(fmt.Sprintf(`{"exp":%d}`, time.Now().Add(time.Hour).Unix()))
	s := &stub{ans: canned{status: 200, body: "{}"}, byPath: map[string]canned{
		"/api/v2/oauth/token-exchange": {status: 200, body: `{"access_token":"at-1","token_type":"Bearer"}`},
	}}
	c, _ := stubConfig(t, s, Config{OAuthClientID: "kFederated", IdentityToken: jwt})
	for range 3 {
		if _, _, err := c.GetPolicy(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	exchanges := 0
	for _, p := range s.paths {
		if p == "POST /api/v2/oauth/token-exchange" {
			exchanges++
		}
	}
	if exchanges != 1 || len(s.paths) != 4 {
		t.Errorf("requests %v, want one exchange for three calls", s.paths)
	}
}

func TestKeysOfTheOlderAPIWithoutAType(t *testing.T) {
	// Older answers leave keyType out: such a key is an auth key, whose
	// capabilities are read.
	c, _ := stubClient(t, canned{status: 200, body: `{"id":"k1","created":"2026-03-01T12:00:00Z","description":"ci",` +
		`"capabilities":{"devices":{"create":{"reusable":true,"ephemeral":true,"preauthorized":true,"tags":["tag:ci"]}}}}`})
	k, err := c.GetKey(t.Context(), "k1")
	if err != nil {
		t.Fatal(err)
	}
	if !k.Reusable || !k.Ephemeral || !k.Preauthorized || strings.Join(k.Tags, ",") != "tag:ci" {
		t.Errorf("key %+v, want the capabilities of an auth key", k)
	}
}

func TestAmbiguousAuthKeyCreateDeletesAnUntypedOrphan(t *testing.T) {
	// The create's answer is lost; the list holds a key of the older API
	// (no keyType) with the same description and settings, created since:
	// it is the lost one, deleted before the create is sent again.
	created := time.Now().UTC().Format(time.RFC3339)
	s := &stub{ans: canned{status: 200, body: "{}"}, byPath: map[string]canned{
		"/api/v2/tailnet/-/keys": {status: 502},
	}}
	s.byPath["/api/v2/tailnet/-/keys/k1"] = canned{status: 200}
	s.byPath["GET /api/v2/tailnet/-/keys"] = canned{status: 200, body: `{"keys":[{"id":"k1","created":"` + created + `","description":"ci",` +
		`"capabilities":{"devices":{"create":{"reusable":true,"tags":["tag:ci"]}}}}]}`}
	c, _ := stubConfig(t, s, Config{APIKey: testAPIKey})
	_, _, err := c.CreateAuthKey(t.Context(), AuthKeyOptions{Description: "ci", Reusable: true, Tags: []string{"tag:ci"}})
	if err == nil {
		t.Fatal("no error although the second create failed too")
	}
	want := []string{"POST /api/v2/tailnet/-/keys", "GET /api/v2/tailnet/-/keys", "DELETE /api/v2/tailnet/-/keys/k1", "POST /api/v2/tailnet/-/keys"}
	if strings.Join(s.paths, "; ") != strings.Join(want, "; ") {
		t.Errorf("requests\n%v\nwant\n%v", s.paths, want)
	}
}
