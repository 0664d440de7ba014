package qovery

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// canned is one answer of a stub server.
type canned struct {
	status int
	header http.Header
	body   string
	// short cuts the body off before the length the header announces.
	short bool
}

// stubRequest is a request a stub received.
type stubRequest struct {
	method, path, query, body string
}

// stub answers every request with ans, or with the answer byRoute holds
// for its "METHOD /path", and records the requests.
type stub struct {
	mu      sync.Mutex
	ans     canned
	byRoute map[string]canned
	reqs    []stubRequest
}

func (s *stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, stubRequest{r.Method, r.URL.Path, r.URL.RawQuery, string(body)})
	a, ok := s.byRoute[r.Method+" "+r.URL.Path]
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
		w.Header().Set("Content-Length", strconv.Itoa(len(a.body)+10))
	}
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.body)
}

func (s *stub) requests() []stubRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]stubRequest(nil), s.reqs...)
}

// stubClient returns a client of s through an HTTP client without
// retries, that gathers no deployments.
func stubClient(t testing.TB, s *stub) *Client {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	c, err := New(Config{BaseURL: ts.URL, Token: "qov-token", HTTPClient: &http.Client{}, NotFoundDelay: time.Millisecond, DeployQuiet: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDeployAllRequestAdd(t *testing.T) {
	var r DeployAllRequest
	r.Add(ServiceDeploy{Kind: ServiceApplication, ID: "a1"})
	r.Add(ServiceDeploy{Kind: ServiceContainer, ID: "c1"})
	r.Add(ServiceDeploy{Kind: ServiceHelm, ID: "h1", Helm: &HelmDeployRequest{ChartVersion: "1.2.3", GitCommitID: "abc", ValuesOverrideGitCommitID: "def"}})
	r.Add(ServiceDeploy{Kind: ServiceHelm, ID: "h2"})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"applications":[{"application_id":"a1"}],"containers":[{"id":"c1"}],"helms":[{"id":"h1","chart_version":"1.2.3","git_commit_id":"abc","values_override_git_commit_id":"def"},{"id":"h2"}]}`
	if string(b) != want {
		t.Errorf("request\n%s\nwant\n%s", b, want)
	}
}

func TestDeployServiceUsesEachKindsAction(t *testing.T) {
	cases := []struct {
		s          ServiceDeploy
		path, body string
	}{
		{ServiceDeploy{Kind: ServiceApplication, ID: "a1"}, "/application/a1/redeploy", ""},
		{ServiceDeploy{Kind: ServiceContainer, ID: "c1"}, "/container/c1/redeploy", ""},
		{ServiceDeploy{Kind: ServiceHelm, ID: "h1"}, "/helm/h1/deploy", ""},
		{ServiceDeploy{Kind: ServiceHelm, ID: "h2", Helm: &HelmDeployRequest{ChartVersion: "2.0.0"}}, "/helm/h2/deploy", `{"chart_version":"2.0.0"}`},
	}
	for _, tc := range cases {
		s := &stub{ans: canned{status: 202, body: `{"id":"` + tc.s.ID + `","state":"DEPLOYMENT_QUEUED","deployment_request_id":"r1"}`}}
		c := stubClient(t, s)
		st, err := c.DeployService(t.Context(), tc.s)
		if err != nil {
			t.Fatal(err)
		}
		if st.ID != tc.s.ID || st.State != StateDeploymentQueued || st.DeploymentRequestID == nil || *st.DeploymentRequestID != "r1" {
			t.Errorf("%s: status %+v", tc.s.ID, st)
		}
		reqs := s.requests()
		if len(reqs) != 1 || reqs[0].method != http.MethodPost || reqs[0].path != tc.path || reqs[0].body != tc.body {
			t.Errorf("%s: requests %+v, want one POST %s with body %q", tc.s.ID, reqs, tc.path, tc.body)
		}
	}
}

func TestAmbiguousCreateFindsAnOlderNamesake(t *testing.T) {
	// The create's answer is lost (502); the look-up finds an object of
	// the same name created long before the request: the name is taken,
	// a 409 that says by what.
	old := "2020-01-02T03:04:05Z"
	t.Run("helm", func(t *testing.T) {
		s := &stub{ans: canned{status: 500}, byRoute: map[string]canned{
			"POST /environment/e1/helm": {status: 502},
			"GET /environment/e1/helm":  {status: 200, body: `{"results":[{"id":"other","name":"Web","created_at":"` + old + `"}]}`},
		}}
		_, err := stubClient(t, s).CreateHelm(t.Context(), "e1", &HelmRequest{Name: "web"})
		want := `a service named "Web" already exists (other, created at 2020-01-02T03:04:05Z, before this request) in this environment`
		if !IsConflict(err) || !strings.HasSuffix(err.Error(), want) {
			t.Fatalf("error %v, want a conflict ending with %q", err, want)
		}
		if n := len(s.requests()); n != 2 {
			t.Errorf("%d requests, want the create and the look-up: %+v", n, s.requests())
		}
	})
	t.Run("variable", func(t *testing.T) {
		s := &stub{ans: canned{status: 500}, byRoute: map[string]canned{
			"POST /variable": {status: 504},
			"GET /variable": {status: 200, body: `{"results":[{"id":"v0","key":"TOKEN","scope":"APPLICATION","variable_type":"VALUE","created_at":"` + old + `"},` +
				`{"id":"v9","key":"TOKEN","scope":"ENVIRONMENT","variable_type":"VALUE","created_at":"` + old + `"}]}`},
		}}
		_, err := stubClient(t, s).CreateVariable(t.Context(), &VariableRequest{Key: "TOKEN", Value: "s3cr3t-value", VariableScope: "APPLICATION", VariableParentID: "a1"})
		want := "a variable TOKEN already exists (v0, created at 2020-01-02T03:04:05Z, before this request) on this APPLICATION"
		if !IsConflict(err) || !strings.HasSuffix(err.Error(), want) {
			t.Fatalf("error %v, want a conflict ending with %q", err, want)
		}
		reqs := s.requests()
		if len(reqs) < 2 || reqs[1].method != http.MethodGet || reqs[1].query != "parent_id=a1&scope=APPLICATION" {
			t.Errorf("requests %+v, want the look-up of the parent's variables second", reqs)
		}
	})
}

func TestNotFoundRereadsWaitTheDelay(t *testing.T) {
	// A 404 is read again NotFoundRereads times, Config.NotFoundDelay
	// apart; a delay of zero or less is the default.
	for _, tc := range []struct {
		delay, want time.Duration
	}{
		{0, NotFoundRereads * DefaultNotFoundDelay},
		{-time.Second, NotFoundRereads * DefaultNotFoundDelay},
		{time.Millisecond, NotFoundRereads * time.Millisecond},
	} {
		synctest.Test(t, func(t *testing.T) {
			s := &stub{ans: canned{status: 404, body: `{"status":404,"detail":"Environment not found"}`}}
			c, err := New(Config{BaseURL: "https://api.qovery.test", Token: "qov-token", NotFoundDelay: tc.delay,
				HTTPClient: &http.Client{Transport: memTransport{s}}})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = c.GetHelmRepository(t.Context(), "o1", "r1")
			if took := time.Since(start); took != tc.want || !IsNotFound(err) {
				t.Errorf("delay %v: took %v and gave %v, want %v and a 404", tc.delay, took, err, tc.want)
			}
			if n := len(s.requests()); n < NotFoundRereads+1 {
				t.Errorf("delay %v: %d requests, want at least %d reads", tc.delay, n, NotFoundRereads+1)
			}
		})
	}
}
