package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

const (
	testToken  = "test-token"
	testAPIKey = "tskey-api-test"
	// deployTime is how long a deployment of the fake takes. Inside a
	// synctest bubble it passes on the bubble's clock, at once.
	deployTime = time.Minute
)

// inMemory is a transport that serves each request with a handler in the
// calling goroutine: no socket, so that inside a synctest bubble every
// goroutine of a test blocks only on the bubble's clock and channels.
type inMemory struct{ h http.Handler }

func (m inMemory) RoundTrip(r *http.Request) (*http.Response, error) {
	req := r.Clone(r.Context())
	if req.Body == nil {
		req.Body = http.NoBody
	}
	req.RequestURI = r.URL.RequestURI()
	rec := httptest.NewRecorder()
	m.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

// deployer is the fake cluster of a world: it fails the deployments and
// deletions of the services named in fail, with that reason, and counts
// what it was asked.
type deployer struct {
	mu      sync.Mutex
	fail    map[string]string
	deploys map[string]int
}

func (d *deployer) failing(id, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fail[id] = reason
}

func (d *deployer) act(id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deploys[id]++
	if why, ok := d.fail[id]; ok {
		return errString(why)
	}
	return nil
}

func (d *deployer) Deploy(_ context.Context, svc qoveryapi.ServiceSnapshot) error {
	return d.act(svc.ID)
}
func (d *deployer) Delete(_ context.Context, svc qoveryapi.ServiceSnapshot) error {
	return d.act(svc.ID)
}

type errString string

func (e errString) Error() string { return string(e) }

// world is one organization with a project and two clusters, an
// environment on each and a second environment on the first, in the fake
// Qovery API, and a tailnet in the fake Tailscale API. Its clients call
// the fakes in memory.
type world struct {
	t   *testing.T
	ctx context.Context

	Qovery   *qoveryapi.Server
	Tailnet  *tailnetapi.Server
	deployer *deployer
	handler  http.Handler

	q  *qovery.Client
	tn *tailnet.Client

	org, project string
	// cluster, env and app are the first cluster's; other is a second
	// environment on it, otherCluster and otherEnv the second cluster's.
	cluster, env, app, other string
	otherCluster, otherEnv   string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, ctx: t.Context(), deployer: &deployer{fail: map[string]string{}, deploys: map[string]int{}}}
	w.Qovery = qoveryapi.New(qoveryapi.Options{Token: testToken, DeployTime: deployTime, Deployer: w.deployer, Seed: 1})
	t.Cleanup(w.Qovery.Close)
	w.Tailnet = tailnetapi.New(tailnetapi.Options{APIKey: testAPIKey, Tailnet: "example.com", MagicDNSSuffix: "tail0000.ts.net"})
	mux := http.NewServeMux()
	mux.Handle("/qovery/", http.StripPrefix("/qovery", w.Qovery.Handler()))
	mux.Handle("/tailscale/", http.StripPrefix("/tailscale", w.Tailnet.Handler()))
	w.handler = mux

	var err error
	w.org = w.Qovery.SeedOrganization("acme")
	w.project = w.must(w.Qovery.SeedProject(w.org, "platform"))
	w.cluster = w.must(w.Qovery.SeedCluster(w.org, "prod-us-east-1", "us-east-1"))
	w.env = w.must(w.Qovery.SeedEnvironment(w.project, w.cluster, "prod-us-east-1"))
	w.other = w.must(w.Qovery.SeedEnvironment(w.project, w.cluster, "staging-us-east-1"))
	w.otherCluster = w.must(w.Qovery.SeedCluster(w.org, "prod-eu-west-3", "eu-west-3"))
	w.otherEnv = w.must(w.Qovery.SeedEnvironment(w.project, w.otherCluster, "prod-eu-west-3"))
	w.app = w.must(w.Qovery.SeedApplication(w.env, "billing-api", qoveryapi.Port{Name: "https", InternalPort: 443, Protocol: "HTTP"}))

	hc := &http.Client{Transport: inMemory{mux}}
	if w.q, err = qovery.New(qovery.Config{BaseURL: "http://127.0.0.1/qovery", Token: testToken, HTTPClient: hc}); err != nil {
		t.Fatal(err)
	}
	if w.tn, err = tailnet.New(tailnet.Config{BaseURL: "http://127.0.0.1/tailscale", APIKey: testAPIKey, Tailnet: "example.com", HTTPClient: hc}); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) must(id string, err error) string {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

// environment reads an environment of the world.
func (w *world) environment(id string) *qovery.Environment {
	w.t.Helper()
	env, err := w.q.GetEnvironment(w.ctx, id)
	if err != nil {
		w.t.Fatal(err)
	}
	return env
}

// lookup is the lookup of the first cluster, from its first environment.
func (w *world) lookup() *Lookup { return NewLookup(w.q, w.environment(w.env)) }

// clients are the provider's clients of the world, served on loopback (the
// conn package builds its own transport): for the checks that take them,
// which wait for nothing. They make each call once, so that an injected
// failure reaches the code under test without retries.
func (w *world) clients() *conn.Clients {
	w.t.Helper()
	srv := httptest.NewServer(w.handler)
	w.t.Cleanup(srv.Close)
	c := conn.New("test", conn.Options{PollInterval: time.Millisecond, Retry: retry.Policy{MaxAttempts: 1}})
	c.ConfigureQovery(conn.Setting{Value: testToken}, conn.Setting{Value: srv.URL + "/qovery"})
	c.ConfigureTailnet(conn.TailnetSettings{APIKey: conn.Setting{Value: testAPIKey}, Tailnet: conn.Setting{Value: "example.com"},
		BaseURL: conn.Setting{Value: srv.URL + "/tailscale"}})
	return c
}

// operatorRepository creates a Helm repository of Tailscale's stable
// channel and returns its ID.
func (w *world) operatorRepository() string {
	w.t.Helper()
	repo, err := w.q.CreateHelmRepository(w.ctx, w.org, &qovery.HelmRepositoryRequest{
		Name: "tailscale", Kind: qovery.HelmRepositoryKindHTTPS, URL: qoveryapi.TailscaleStableURL,
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return repo.ID
}

// operator creates, in the environment envID, the Helm service of an
// operator whose values file is values ("" for none), and returns its ID.
func (w *world) operator(envID, values string) string {
	w.t.Helper()
	req := &qovery.HelmRequest{
		Name: "tailscale-operator",
		Source: qovery.HelmSourceRequest{HelmRepository: &qovery.HelmRepositorySourceRequest{
			Repository: w.operatorRepository(), ChartName: OperatorChart, ChartVersion: "1.102.4"}},
		AllowClusterWideResources: true,
	}
	if values != "" {
		req.ValuesOverride = qovery.HelmValuesOverride{File: &qovery.HelmValuesFile{Raw: &qovery.HelmRawValues{
			Values: []qovery.HelmRawValuesFile{{Name: manifest.ValuesFileName, Content: values}}}}}
	}
	h, err := w.q.CreateHelm(w.ctx, envID, req)
	if err != nil {
		w.t.Fatal(err)
	}
	return h.ID
}

// operatorValues renders an operator values file.
func (w *world) operatorValues(v manifest.OperatorValues, extra map[string]any) string {
	w.t.Helper()
	s, err := manifest.RenderOperatorValues(v, extra)
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// manifests creates, in the environment envID, a Helm service of the
// tailnet-manifests chart whose raw values file is values, and returns its
// ID.
func (w *world) manifests(envID, name, values string) string {
	w.t.Helper()
	return w.helm(envID, name, qovery.HelmValuesOverride{File: &qovery.HelmValuesFile{Raw: &qovery.HelmRawValues{
		Values: []qovery.HelmRawValuesFile{{Name: manifest.ManifestsFileName, Content: values}}}}})
}

// helm creates a Helm service of the tailnet-manifests chart from Git with
// these values, and returns its ID.
func (w *world) helm(envID, name string, values qovery.HelmValuesOverride) string {
	w.t.Helper()
	h, err := w.q.CreateHelm(w.ctx, envID, &qovery.HelmRequest{
		Name: name,
		Source: qovery.HelmSourceRequest{GitRepository: &qovery.GitRepository{
			URL: "https://github.com/qtail/terraform-provider-qtail.git", Branch: "main", RootPath: "/examples/charts/" + ManifestsChart,
		}},
		AllowClusterWideResources: true,
		ValuesOverride:            values,
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return h.ID
}

// clientIDVariable gives the Helm service of an operator the variable
// TS_OAUTH_CLIENT_ID, plain or secret.
func (w *world) clientIDVariable(helmID, value string, secret bool) {
	w.t.Helper()
	if _, err := w.q.CreateVariable(w.ctx, &qovery.VariableRequest{Key: manifest.OAuthClientIDVariable, Value: value, IsSecret: secret,
		VariableScope: qovery.VariableScopeHelm, VariableParentID: helmID}); err != nil {
		w.t.Fatal(err)
	}
}

// tagOwners adds tagOwners entries to the tailnet policy, as a person does
// in the admin console.
func (w *world) tagOwners(owners map[string][]string) {
	w.t.Helper()
	body, _ := w.Tailnet.Policy()
	doc, err := policyfile.Parse(body)
	if err != nil {
		w.t.Fatal(err)
	}
	for tag, list := range owners {
		if list == nil {
			list = []string{}
		}
		v, err := json.Marshal(list)
		if err != nil {
			w.t.Fatal(err)
		}
		if err := doc.Put(policyfile.Key{Kind: policyfile.KindTagOwner, Name: tag}, v); err != nil {
			w.t.Fatal(err)
		}
	}
	if err := w.Tailnet.SetPolicyDirect(doc.Bytes()); err != nil {
		w.t.Fatal(err)
	}
}

// isOn reports whether a diagnostic is about the attribute at.
func isOn(d diag.Diagnostic, at path.Path) bool {
	p, ok := d.(diag.DiagnosticWithPath)
	return ok && p.Path().Equal(at)
}

// proxyGroupValues is a manifests values file with one ProxyGroup.
func proxyGroupValues(name, typ string) string {
	return "manifests:\n  - apiVersion: tailscale.com/v1alpha1\n    kind: ProxyGroup\n    metadata:\n      name: " + name +
		"\n    spec:\n      type: " + typ + "\n"
}

// proxyClassValues is a manifests values file with one ProxyClass of this
// spec (YAML, indented for the spec key).
func proxyClassValues(name, spec string) string {
	return "manifests:\n  - apiVersion: tailscale.com/v1alpha1\n    kind: ProxyClass\n    metadata:\n      name: " + name +
		"\n    spec:\n" + spec
}
