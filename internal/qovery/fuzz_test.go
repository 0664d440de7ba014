package qovery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// memTransport serves requests with a handler, in memory: the client's
// whole stack runs, without sockets, so that a fuzz input costs little.
type memTransport struct{ h http.Handler }

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil {
		r = r.Clone(r.Context())
		r.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	m.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// memClient returns a client whose requests h serves through rt (h alone
// when rt is nil), with rereads of a 404 that do not wait.
func memClient(t testing.TB, h http.Handler, rt func(http.RoundTripper) http.RoundTripper) *Client {
	t.Helper()
	var tr http.RoundTripper = memTransport{h}
	if rt != nil {
		tr = rt(tr)
	}
	c, err := New(Config{BaseURL: "https://api.qovery.test", Token: "qov-token", HTTPClient: &http.Client{Transport: tr},
		NotFoundDelay: time.Nanosecond, DeployQuiet: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readCall is one call that reads an answer into a value; path is the
// request path it sends first.
type readCall struct {
	name, method, path string
	run                func(ctx context.Context, c *Client) error
}

func readCalls() []readCall {
	ctx := func(f func(context.Context, *Client) error) func(context.Context, *Client) error { return f }
	return []readCall{
		{"ListOrganizations", "GET", "/organization", ctx(func(ctx context.Context, c *Client) error { _, err := c.ListOrganizations(ctx); return err })},
		{"ListProjects", "GET", "/organization/o1/project", ctx(func(ctx context.Context, c *Client) error { _, err := c.ListProjects(ctx, "o1"); return err })},
		{"ListClusters", "GET", "/organization/o1/cluster", ctx(func(ctx context.Context, c *Client) error { _, err := c.ListClusters(ctx, "o1"); return err })},
		{"GetCluster", "GET", "/organization/o1/cluster", ctx(func(ctx context.Context, c *Client) error { _, err := c.GetCluster(ctx, "o1", "k1"); return err })},
		{"ListEnvironments", "GET", "/project/p1/environment", ctx(func(ctx context.Context, c *Client) error { _, err := c.ListEnvironments(ctx, "p1"); return err })},
		{"GetEnvironment", "GET", "/environment/e1", ctx(func(ctx context.Context, c *Client) error { _, err := c.GetEnvironment(ctx, "e1"); return err })},
		{"ListApplications", "GET", "/environment/e1/application", ctx(func(ctx context.Context, c *Client) error { _, err := c.ListApplications(ctx, "e1"); return err })},
		{"GetApplication", "GET", "/application/a1", ctx(func(ctx context.Context, c *Client) error { _, err := c.GetApplication(ctx, "a1"); return err })},
		{"GetApplicationStatus", "GET", "/application/a1/status", ctx(func(ctx context.Context, c *Client) error { _, err := c.GetApplicationStatus(ctx, "a1"); return err })},
		{"ListContainers", "GET", "/environment/e1/container", ctx(func(ctx context.Context, c *Client) error { _, err := c.ListContainers(ctx, "e1"); return err })},
		{"GetContainer", "GET", "/container/c1", ctx(func(ctx context.Context, c *Client) error { _, err := c.GetContainer(ctx, "c1"); return err })},
		{"GetContainerStatus", "GET", "/container/c1/status", ctx(func(ctx context.Context, c *Client) error { _, err := c.GetContainerStatus(ctx, "c1"); return err })},
		{"ListHelms", "GET", "/environment/e1/helm", ctx(func(ctx context.Context, c *Client) error { _, err := c.ListHelms(ctx, "e1"); return err })},
		{"GetHelm", "GET", "/helm/h1", ctx(func(ctx context.Context, c *Client) error { _, err := c.GetHelm(ctx, "h1"); return err })},
		{"GetHelmStatus", "GET", "/helm/h1/status", ctx(func(ctx context.Context, c *Client) error { _, err := c.GetHelmStatus(ctx, "h1"); return err })},
		{"ListHelmRepositories", "GET", "/organization/o1/helmRepository", ctx(func(ctx context.Context, c *Client) error { _, err := c.ListHelmRepositories(ctx, "o1"); return err })},
		{"GetHelmRepository", "GET", "/organization/o1/helmRepository/r1", ctx(func(ctx context.Context, c *Client) error { _, err := c.GetHelmRepository(ctx, "o1", "r1"); return err })},
		{"ListVariables", "GET", "/variable", ctx(func(ctx context.Context, c *Client) error {
			_, err := c.ListVariables(ctx, "a1", "APPLICATION")
			return err
		})},
		{"ListAnnotationsGroups", "GET", "/organization/o1/annotationsGroups", ctx(func(ctx context.Context, c *Client) error { _, err := c.ListAnnotationsGroups(ctx, "o1"); return err })},
		{"GetAnnotationsGroup", "GET", "/organization/o1/annotationsGroups/g1", ctx(func(ctx context.Context, c *Client) error {
			_, err := c.GetAnnotationsGroup(ctx, "o1", "g1")
			return err
		})},
		{"RedeployApplication", "POST", "/application/a1/redeploy", ctx(func(ctx context.Context, c *Client) error { _, err := c.RedeployApplication(ctx, "a1"); return err })},
		{"DeployServices", "POST", "/environment/e1/service/deploy", ctx(func(ctx context.Context, c *Client) error {
			_, err := c.DeployServices(ctx, "e1", DeployAllRequest{Applications: []DeployAllApplication{{ApplicationID: "a1"}}})
			return err
		})},
	}
}

// fakeAnswers returns the bodies the fake Qovery API answers to reads of
// an organization with a project, a cluster, an environment, an
// application, a container and a variable: the seeds of the fuzz targets.
func fakeAnswers(f *testing.F) [][]byte {
	f.Helper()
	srv := qoveryapi.New(qoveryapi.Options{Token: "qov-token", DeployTime: time.Millisecond})
	f.Cleanup(srv.Close)
	org := srv.SeedOrganization("acme")
	project, err := srv.SeedProject(org, "platform")
	if err != nil {
		f.Fatal(err)
	}
	cl, err := srv.SeedCluster(org, "prod", "us-east-1")
	if err != nil {
		f.Fatal(err)
	}
	env, err := srv.SeedEnvironment(project, cl, "prod")
	if err != nil {
		f.Fatal(err)
	}
	app, err := srv.SeedApplication(env, "api", qoveryapi.Port{Name: "http", InternalPort: 80})
	if err != nil {
		f.Fatal(err)
	}
	ctr, err := srv.SeedContainer(env, "web", "nginx", "1.27", qoveryapi.Port{Name: "http", InternalPort: 8080})
	if err != nil {
		f.Fatal(err)
	}
	c := memClient(f, srv.Handler(), nil)
	if _, err := c.CreateVariable(context.Background(), &VariableRequest{Key: "LOG_LEVEL", Value: "debug", VariableScope: "APPLICATION", VariableParentID: app}); err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, p := range []string{
		"/organization", "/organization/" + org + "/project", "/organization/" + org + "/cluster", "/project/" + project + "/environment",
		"/environment/" + env, "/environment/" + env + "/application", "/application/" + app, "/application/" + app + "/status",
		"/environment/" + env + "/container", "/container/" + ctr, "/container/" + ctr + "/status", "/environment/" + env + "/helm",
		"/organization/" + org + "/helmRepository", "/variable?parent_id=" + app + "&scope=APPLICATION", "/organization/" + org + "/annotationsGroups",
		"/helm/nope", "/organization/" + org + "/annotationsGroups/nope",
	} {
		req := httptest.NewRequestWithContext(context.Background(), "GET", p, nil)
		req.Header.Set("Authorization", "Token qov-token")
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		out = append(out, rec.Body.Bytes())
	}
	return out
}

// FuzzAnswer serves one answer (status and body) to every read of the
// client: no call panics; an answer outside 2xx is an *APIError with that
// status (a 400, 403 or 404 may be settled as 404, an object gone) and
// the server's message; a 2xx body that is not JSON, or empty, is an
// error, never a value with every field unset.
func FuzzAnswer(f *testing.F) {
	for _, body := range fakeAnswers(f) {
		f.Add(200, body)
		f.Add(404, body)
	}
	f.Add(409, []byte(`{"status":409,"detail":"a service named web already exists"}`))
	f.Add(400, []byte(`{"status":400,"detail":"Helm does not exist"}`))
	f.Add(403, []byte(`{"detail":{"reason":"forbidden","fields":["x"]}}`))
	f.Add(429, []byte(`{"message":"rate limited"}`))
	f.Add(502, []byte("<html>bad gateway</html>"))
	f.Add(200, []byte(" "))
	f.Add(200, []byte(`{"results":null}`))
	f.Add(200, []byte(`[]`))
	f.Add(202, []byte(`{"id":"a1","state":"DEPLOYMENT_QUEUED"}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		status = fuzzStatus(status)
		h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(body)
		})
		c := memClient(t, h, nil)
		for _, call := range readCalls() {
			err := call.run(context.Background(), c)
			if status/100 == 2 {
				if err == nil && !json.Valid(body) {
					t.Errorf("%s: success for a body that is not JSON: %q", call.name, body)
				}
				if err != nil && StatusCode(err) == 0 && !strings.HasPrefix(err.Error(), "qovery: ") {
					t.Errorf("%s: error %q does not say it is Qovery's", call.name, err)
				}
				continue
			}
			var e *APIError
			if !asAPIError(err, &e) {
				t.Fatalf("%s: HTTP %d gave %v (%T), want an *APIError", call.name, status, err, err)
			}
			settled := status == 400 || status == 403 || status == 404
			if e.Status != status && (!settled || e.Status != http.StatusNotFound) {
				t.Errorf("%s: status %d, want %d", call.name, e.Status, status)
			}
			if detail := errorDetail(body); !settled && e.Detail != detail {
				t.Errorf("%s: detail %q, want %q", call.name, e.Detail, detail)
			}
			if !strings.Contains(err.Error(), strconv.Itoa(e.Status)) {
				t.Errorf("%s: %q does not give the status", call.name, err)
			}
		}
	})
}

// asAPIError finds an *APIError in err's chain.
func asAPIError(err error, e **APIError) bool {
	for err != nil {
		if x, ok := err.(*APIError); ok {
			*e = x
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// FuzzErrorBody builds the error of an answer from its status, its retry
// headers and its body: the status is kept, a wait not made is reported
// with what the header said, and the message is the body's detail,
// message or error, or the start of a body that is not JSON.
func FuzzErrorBody(f *testing.F) {
	f.Add(409, "", "", []byte(`{"status":409,"detail":"name already used"}`))
	f.Add(400, "2", "", []byte(`{"detail":[{"loc":["body","name"],"msg":"field required"}]}`))
	f.Add(429, "3", "120 2026-03-01T13:00:00Z", []byte(`{"message":"Too many requests"}`))
	f.Add(500, "", "", []byte(`{"error":"internal"}`))
	f.Add(502, "", "-1 never", []byte("<html>"+strings.Repeat("x", 600)+"</html>"))
	f.Add(403, "x", "", []byte(`{"detail":"","message":"","error":""}`))
	f.Fuzz(func(t *testing.T, status int, attempts, notBefore string, body []byte) {
		resp := &http.Response{StatusCode: status, Header: http.Header{}}
		resp.Header.Set(retry.AttemptsHeader, attempts)
		resp.Header.Set(retry.NotBeforeHeader, notBefore)
		e := newAPIError(resp, "POST", "/environment/e1/helm", body)
		if e.Status != status {
			t.Errorf("status %d, want %d", e.Status, status)
		}
		if n, err := strconv.Atoi(attempts); err == nil && e.Attempts != n {
			t.Errorf("%d attempts, the header says %d", e.Attempts, n)
		}
		later, ok := retry.LaterOf(resp.Header)
		if ok != (e.Later != nil) || ok && *e.Later != later {
			t.Errorf("Later %+v, the header gives %+v, %v", e.Later, later, ok)
		}
		text := e.Error()
		if ok && !strings.Contains(text, later.String()) {
			t.Errorf("%q does not say how long to wait", text)
		}
		if !strings.HasPrefix(text, "qovery: POST /environment/e1/helm: "+strconv.Itoa(status)) {
			t.Errorf("%q does not start with the request and the status", text)
		}
		if e.Detail != "" && !strings.Contains(text, e.Detail) {
			t.Errorf("%q leaves out the detail %q", text, e.Detail)
		}
		var payload struct {
			Detail  any    `json:"detail"`
			Message string `json:"message"`
			Error   string `json:"error"`
		}
		trimmed := bytes.TrimSpace(body)
		if json.Unmarshal(trimmed, &payload) != nil {
			if len(trimmed) > 0 && e.Detail == "" {
				t.Errorf("no detail for a body that is not JSON: %q", body)
			}
			return
		}
		if s, isString := payload.Detail.(string); isString && s != "" && e.Detail != s {
			t.Errorf("detail %q, the body says %q", e.Detail, s)
		}
		if payload.Detail == nil && payload.Message != "" && e.Detail != payload.Message {
			t.Errorf("detail %q, the body's message is %q", e.Detail, payload.Message)
		}
	})
}

// FuzzRetryAfter answers a read with a 429 or a 503 and a Retry-After,
// then with the list: every wait the client makes is within
// Policy.MaxRetryAfter and never negative; an answer that asks for more is
// returned at once as an *APIError that says how long and until when.
func FuzzRetryAfter(f *testing.F) {
	for _, v := range []string{"5", "0", "60", "61", "3600", "-1", "10000000000", "99999999999999999999", "+7", " 5",
		"Wed, 21 Oct 2015 07:28:00 GMT", "Sun, 06 Nov 2994 08:49:37 GMT", "soon", ""} {
		f.Add(true, v)
		f.Add(false, v)
	}
	f.Fuzz(func(t *testing.T, busy bool, retryAfter string) {
		status := http.StatusTooManyRequests
		if busy {
			status = http.StatusServiceUnavailable
		}
		calls := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			calls++
			w.Header().Set("Content-Type", "application/json")
			if calls == 1 {
				w.Header()["Retry-After"] = []string{retryAfter}
				w.WriteHeader(status)
				_, _ = fmt.Fprintf(w, `{"status":%d,"detail":"slow down"}`, status)
				return
			}
			_, _ = w.Write([]byte(`{"results":[{"id":"o1","name":"acme"}]}`))
		})
		var waits []time.Duration
		p := retry.Default()
		p.Sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return ctx.Err() }
		c := memClient(t, h, func(rt http.RoundTripper) http.RoundTripper { return p.Transport(rt) })
		orgs, err := c.ListOrganizations(context.Background())
		for _, d := range waits {
			if d < 0 || d > p.MaxRetryAfter {
				t.Fatalf("Retry-After %q: waited %v", retryAfter, d)
			}
		}
		if err == nil {
			if len(orgs) != 1 || calls != 2 || len(waits) != 1 {
				t.Fatalf("Retry-After %q: %d calls, waits %v, organizations %+v", retryAfter, calls, waits, orgs)
			}
			return
		}
		var e *APIError
		if !asAPIError(err, &e) || e.Status != status || e.Later == nil || e.Later.Wait <= p.MaxRetryAfter || calls != 1 {
			t.Fatalf("Retry-After %q: %d calls, error %v", retryAfter, calls, err)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("(Retry-After: %d)", int64(e.Later.Wait/time.Second))) {
			t.Errorf("%q does not quote the Retry-After", err)
		}
	})
}

// fuzzStatus maps any fuzzed number onto an HTTP status that a server can
// send with a body: one from 200 to 599 stays, another is brought into that
// range, and 204 and 304, which carry no body, become 200 and 300. Every
// input is then tried, none skipped.
func fuzzStatus(n int) int {
	s := n
	if s < 200 || s > 599 {
		s = 200 + int(uint(n)%400)
	}
	switch s {
	case 204:
		return 200
	case 304:
		return 300
	}
	return s
}
