package qovery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

const token = "qov-token"

// fixture is a fake Qovery API with one organization, project, cluster,
// environment and application, and a client pointed at it.
type fixture struct {
	t       *testing.T
	fake    *qoveryapi.Server
	c       *qovery.Client
	waits   *waits
	org     string
	project string
	cluster string
	env     string
	app     string
	// requests records every request the fake received.
	mu       sync.Mutex
	requests []recorded
}

type recorded struct {
	method, path string
	header       http.Header
	body         []byte
}

type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

func newFixture(t *testing.T, opts qoveryapi.Options) *fixture {
	t.Helper()
	opts.Token = token
	if opts.DeployTime == 0 {
		opts.DeployTime = 20 * time.Millisecond
	}
	f := &fixture{t: t, fake: qoveryapi.New(opts), waits: &waits{}}
	// Serve under a path prefix, as the sandbox does.
	inner := http.StripPrefix("/qovery", f.fake.Handler())
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.mu.Lock()
		f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.Header.Clone(), body})
		f.mu.Unlock()
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ts.Close()
		f.fake.Close()
	})
	policy := retry.Policy{MaxAttempts: 3, Sleep: f.waits.sleep}
	c, err := qovery.New(qovery.Config{
		BaseURL:    ts.URL + "/qovery/",
		Token:      token,
		UserAgent:  "qtail-test/1.0",
		HTTPClient: &http.Client{Transport: policy.Transport(nil)},
		// A 404 is read again this soon.
		NotFoundDelay: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	f.org = f.fake.SeedOrganization("acme")
	if f.project, err = f.fake.SeedProject(f.org, "platform"); err != nil {
		t.Fatal(err)
	}
	if f.cluster, err = f.fake.SeedCluster(f.org, "prod-us", "us-east-1"); err != nil {
		t.Fatal(err)
	}
	if f.env, err = f.fake.SeedEnvironment(f.project, f.cluster, "tailscale"); err != nil {
		t.Fatal(err)
	}
	if f.app, err = f.fake.SeedApplication(f.env, "billing-api", qoveryapi.Port{Name: "http", InternalPort: 8080, PubliclyAccessible: true}); err != nil {
		t.Fatal(err)
	}
	return f
}

// last returns the last recorded request with that method whose path ends
// with suffix.
func (f *fixture) last(method, suffix string) recorded {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.requests) - 1; i >= 0; i-- {
		if r := f.requests[i]; r.method == method && strings.HasSuffix(r.path, suffix) {
			return r
		}
	}
	f.t.Fatalf("no %s request to ...%s", method, suffix)
	return recorded{}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestNewValidatesConfig(t *testing.T) {
	if _, err := qovery.New(qovery.Config{}); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("no token: %v", err)
	}
	for _, u := range []string{"ftp://x", "https://", "://bad", "https://api.example.com/?a=b"} {
		if _, err := qovery.New(qovery.Config{Token: "t", BaseURL: u}); err == nil {
			t.Errorf("base URL %q accepted", u)
		}
	}
	c, err := qovery.New(qovery.Config{Token: "t"})
	if err != nil || c.BaseURL() != qovery.DefaultBaseURL {
		t.Errorf("default base URL: %v %v", c, err)
	}
}

func TestHeaders(t *testing.T) {
	f := newFixture(t, qoveryapi.Options{})
	if _, err := f.c.ListOrganizations(ctx(t)); err != nil {
		t.Fatal(err)
	}
	r := f.last(http.MethodGet, "/qovery/organization")
	for k, want := range map[string]string{
		"Authorization": "Token " + token,
		"User-Agent":    "qtail-test/1.0",
		"Accept":        "application/json",
		"Content-Type":  "application/json",
	} {
		if got := r.header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if _, err := f.c.CreateAnnotationsGroup(ctx(t), f.org, &qovery.AnnotationsGroupRequest{Name: "g", Scopes: []string{"SERVICES"}}); err != nil {
		t.Fatal(err)
	}
	r = f.last(http.MethodPost, "/annotationsGroups")
	if r.header.Get("Authorization") != "Token "+token || r.header.Get("Content-Type") != "application/json" {
		t.Errorf("POST headers %v", r.header)
	}
	// Nil lists are sent as [] for required fields.
	if !bytes.Contains(r.body, []byte(`"annotations":[]`)) {
		t.Errorf("body %s", r.body)
	}

	// A wrong token is a 401 APIError; the default User-Agent is qtail's.
	bad, err := qovery.New(qovery.Config{BaseURL: f.c.BaseURL(), Token: "wrong", HTTPClient: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.ListOrganizations(ctx(t))
	if qovery.StatusCode(err) != http.StatusUnauthorized {
		t.Errorf("wrong token: %v", err)
	}
	if got := f.last(http.MethodGet, "/organization").header.Get("User-Agent"); got != qovery.DefaultUserAgent {
		t.Errorf("default User-Agent %q", got)
	}
}

func TestErrorTyping(t *testing.T) {
	f := newFixture(t, qoveryapi.Options{})
	const unknown = "00000000-0000-4000-8000-000000000000"
	_, err := f.c.GetHelm(ctx(t), unknown)
	if !qovery.IsNotFound(err) || qovery.IsConflict(err) || qovery.StatusCode(err) != 404 {
		t.Fatalf("GetHelm(unknown) = %v", err)
	}
	var apiErr *qovery.APIError
	if !errors.As(err, &apiErr) || apiErr.Method != "GET" || apiErr.Path != "/helm/"+unknown || apiErr.Detail == "" {
		t.Errorf("APIError %+v", apiErr)
	}
	if msg := err.Error(); !strings.Contains(msg, "GET /helm/"+unknown) || !strings.Contains(msg, "404 Not Found") || strings.Contains(msg, "attempts") {
		t.Errorf("message %q", msg)
	}
	if apiErr.HTTPStatus() != 404 {
		t.Errorf("HTTPStatus %d", apiErr.HTTPStatus())
	}
	// Ids are escaped as one path segment.
	if _, err := f.c.GetHelm(ctx(t), "a/b c"); !qovery.IsNotFound(err) || !strings.Contains(err.Error(), "helm a/b c not found") {
		t.Errorf("escaped id: %v", err)
	}

	// 400: the server's detail is in the message.
	_, err = f.c.CreateHelmRepository(ctx(t), f.org, &qovery.HelmRepositoryRequest{Name: "r", Kind: "HTTPS", URL: "http://insecure.example.com"})
	if qovery.StatusCode(err) != 400 || !strings.Contains(err.Error(), "POST /organization/"+f.org+"/helmRepository: 400 Bad Request: url: a repository of kind HTTPS needs an https:// URL") {
		t.Errorf("400: %v", err)
	}

	// 409 on a duplicate Helm name.
	repo := f.repo(qoveryapi.TailscaleStableURL)
	if _, err := f.c.CreateHelm(ctx(t), f.env, operatorRequest(repo.ID, "1.102.4")); err != nil {
		t.Fatal(err)
	}
	_, err = f.c.CreateHelm(ctx(t), f.env, operatorRequest(repo.ID, "1.102.4"))
	if !qovery.IsConflict(err) || qovery.IsNotFound(err) || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("duplicate: %v", err)
	}

	// After retries, the message says how many attempts were made.
	f.fake.Faults().Add(faults.Rule{Route: "GET /helm/{helmId}", Status: 503, Count: 5, Body: json.RawMessage(`{"status":503,"detail":"maintenance"}`)})
	_, err = f.c.GetHelm(ctx(t), unknown)
	if !errors.As(err, &apiErr) || apiErr.Status != 503 || apiErr.Attempts != 3 || !strings.HasSuffix(err.Error(), "503 Service Unavailable: maintenance (after 3 attempts)") {
		t.Errorf("exhausted: %v (%+v)", err, apiErr)
	}
	if qovery.StatusCode(errors.New("plain")) != 0 || qovery.IsNotFound(nil) {
		t.Error("non-API errors have no status")
	}
}

func TestRetriedThroughTheTransport(t *testing.T) {
	f := newFixture(t, qoveryapi.Options{Prefix: "/qovery"})
	f.fake.Faults().Add(faults.Rule{Route: "GET /qovery/application/{applicationId}", Status: 503, RetryAfter: 1, Count: 2})
	app, err := f.c.GetApplication(ctx(t), f.app)
	if err != nil || app.Name != "billing-api" {
		t.Fatalf("GetApplication after two 503: %v %v", app, err)
	}
	if got := f.fake.Faults().Count("GET /qovery/application/{applicationId}"); got != 3 {
		t.Errorf("%d calls", got)
	}
	if w := f.waits.all(); len(w) != 2 || w[0] != time.Second || w[1] != time.Second {
		t.Errorf("waits %v, want the server's Retry-After twice", w)
	}
}

func TestReadOnlyObjects(t *testing.T) {
	f := newFixture(t, qoveryapi.Options{})
	c := ctx(t)
	orgs, err := f.c.ListOrganizations(c)
	if err != nil || len(orgs) != 1 || orgs[0].ID != f.org || orgs[0].Name != "acme" {
		t.Fatalf("organizations %+v %v", orgs, err)
	}
	projects, err := f.c.ListProjects(c, f.org)
	if err != nil || len(projects) != 1 || projects[0].ID != f.project || projects[0].Organization.ID != f.org {
		t.Fatalf("projects %+v %v", projects, err)
	}
	envs, err := f.c.ListEnvironments(c, f.project)
	if err != nil || len(envs) != 1 || envs[0].ID != f.env {
		t.Fatalf("environments %+v %v", envs, err)
	}
	env, err := f.c.GetEnvironment(c, f.env)
	if err != nil || env.ClusterID != f.cluster || env.ClusterName != "prod-us" || env.Project.ID != f.project || env.Organization.ID != f.org {
		t.Fatalf("environment %+v %v", env, err)
	}
	clusters, err := f.c.ListClusters(c, f.org)
	if err != nil || len(clusters) != 1 || clusters[0].Region != "us-east-1" {
		t.Fatalf("clusters %+v %v", clusters, err)
	}
	cl, err := f.c.GetCluster(c, f.org, f.cluster)
	if err != nil || cl.ID != f.cluster || cl.Name != "prod-us" {
		t.Fatalf("GetCluster %+v %v", cl, err)
	}
	_, err = f.c.GetCluster(c, f.org, "00000000-0000-4000-8000-000000000000")
	if !qovery.IsNotFound(err) || !strings.Contains(err.Error(), "cluster 00000000-0000-4000-8000-000000000000 not found") {
		t.Errorf("GetCluster(unknown) = %v", err)
	}
	apps, err := f.c.ListApplications(c, f.env)
	if err != nil || len(apps) != 1 || apps[0].ID != f.app || len(apps[0].Raw) == 0 || apps[0].Ports[0].InternalPort != 8080 {
		t.Fatalf("applications %+v %v", apps, err)
	}
	if _, err := f.c.ListProjects(c, "00000000-0000-4000-8000-000000000000"); !qovery.IsNotFound(err) {
		t.Errorf("unknown organization: %v", err)
	}
}

func (f *fixture) repo(url string) *qovery.HelmRepository {
	f.t.Helper()
	r, err := f.c.CreateHelmRepository(ctx(f.t), f.org, &qovery.HelmRepositoryRequest{
		Name: "tailscale-" + strings.TrimPrefix(url, "https://pkgs.tailscale.com/"), Kind: qovery.HelmRepositoryKindHTTPS, URL: url,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func TestHelmRepositories(t *testing.T) {
	f := newFixture(t, qoveryapi.Options{})
	c := ctx(t)
	r, err := f.c.CreateHelmRepository(c, f.org, &qovery.HelmRepositoryRequest{
		Name: "tailscale", Kind: "HTTPS", URL: qoveryapi.TailscaleStableURL,
		Config: qovery.HelmRepositoryConfig{Username: "u", Password: "p"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.ID == "" || r.CreatedAt.IsZero() || r.Config.Username != "u" || r.Config.Password != "" {
		t.Errorf("created %+v", r)
	}
	if body := f.last(http.MethodPost, "/helmRepository").body; !bytes.Contains(body, []byte(`"skip_tls_verification":false`)) || !bytes.Contains(body, []byte(`"password":"p"`)) {
		t.Errorf("request %s", body)
	}
	got, err := f.c.GetHelmRepository(c, f.org, r.ID)
	if err != nil || got.URL != qoveryapi.TailscaleStableURL {
		t.Fatalf("get %+v %v", got, err)
	}
	list, err := f.c.ListHelmRepositories(c, f.org)
	if err != nil || len(list) != 1 {
		t.Fatalf("list %+v %v", list, err)
	}
	charts, err := f.c.ListHelmCharts(c, f.org, r.ID, "tailscale-operator")
	if err != nil || len(charts) != 1 || charts[0].ChartName != "tailscale-operator" || !contains(charts[0].Versions, "1.102.4") {
		t.Fatalf("charts %+v %v", charts, err)
	}
	if got := f.last(http.MethodGet, "/charts"); !strings.HasSuffix(got.path, "/helmRepository/"+r.ID+"/charts") {
		t.Errorf("path %s", got.path)
	}
	if charts, err := f.c.ListHelmCharts(c, f.org, r.ID, "nginx"); err != nil || len(charts) != 0 || charts == nil {
		t.Errorf("filtered charts %+v %v", charts, err)
	}
	edited, err := f.c.EditHelmRepository(c, f.org, r.ID, &qovery.HelmRepositoryRequest{Name: "tailscale-unstable", Kind: "HTTPS", URL: qoveryapi.TailscaleUnstableURL})
	if err != nil || edited.URL != qoveryapi.TailscaleUnstableURL || edited.Config.Username != "" {
		t.Fatalf("edit %+v %v", edited, err)
	}
	if charts, err := f.c.ListHelmCharts(c, f.org, r.ID, ""); err != nil || !contains(charts[0].Versions, "1.105.47") {
		t.Errorf("unstable charts %+v %v", charts, err)
	}
	if err := f.c.DeleteHelmRepository(c, f.org, r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.GetHelmRepository(c, f.org, r.ID); !qovery.IsNotFound(err) {
		t.Errorf("after delete: %v", err)
	}
	if _, err := f.c.CreateHelmRepository(c, f.org, nil); err == nil {
		t.Error("nil request accepted")
	}
}

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}
