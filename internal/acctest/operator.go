package acctest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// OperatorFixture is an operator installed by hand (through the APIs, not
// through Terraform), for tests of what needs a running operator.
type OperatorFixture struct {
	HelmID           string
	HelmRepositoryID string
	Hostname         string
	OAuthClientID    string
	EnvironmentID    string
	ClusterID        string
}

// DeclareTagOwners adds tag owners to the tailnet policy as a person would
// in the admin console (entries without qtail markers).
func (e *Env) DeclareTagOwners(t testing.TB, owners map[string][]string) {
	t.Helper()
	body, _ := e.Tailnet.Policy()
	doc, err := policyfile.Parse(body)
	if err != nil {
		t.Fatalf("parsing the tailnet policy: %v", err)
	}
	for tag, list := range owners {
		if list == nil {
			list = []string{}
		}
		v, err := json.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		if err := doc.Put(policyfile.Key{Kind: policyfile.KindTagOwner, Name: tag}, v); err != nil {
			t.Fatalf("declaring %s: %v", tag, err)
		}
	}
	if err := e.Tailnet.SetPolicyDirect(doc.Bytes()); err != nil {
		t.Fatalf("writing the tailnet policy: %v", err)
	}
}

// QoveryClient returns a Qovery API client for the world.
func (e *Env) QoveryClient(t testing.TB) *qovery.Client {
	t.Helper()
	env := e.Environ()
	c, err := qovery.New(qovery.Config{BaseURL: env["QOVERY_API_URL"], Token: env["QOVERY_API_TOKEN"]})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// OperatorOptions change what InstallOperatorWith installs.
type OperatorOptions struct {
	// ProxyTags are proxyConfig.defaultTags, PROXY_TAGS (default
	// tag:k8s, which the recipe's tag owners let tag:k8s-operator own).
	ProxyTags []string
	// Scopes are the OAuth client's (default OperatorScopes).
	Scopes []string
	// PlainClientID keeps TS_OAUTH_CLIENT_ID a plain variable, as
	// qtail_operator does, so that qtail can read which OAuth client the
	// operator uses; the recipe makes both variables secrets.
	PlainClientID bool
	// ExtraValues are more chart values, such as
	// {"proxyConfig": {"defaultProxyClass": "small"}}.
	ExtraValues map[string]any
}

// InstallOperator installs the Tailscale operator in a seeded region the way
// the recipe does it by hand: tag owners, an OAuth client, a Helm repository,
// a Helm service with the two secret variables, a deployment. The OAuth
// client has the scopes the recipe asks for, services included (an
// exposure through an ingress ProxyGroup needs it). It fails the test
// unless the operator device comes up.
func (e *Env) InstallOperator(t testing.TB, region string) OperatorFixture {
	t.Helper()
	return e.InstallOperatorWith(t, region, OperatorOptions{})
}

// InstallOperatorWith is InstallOperator with options.
func (e *Env) InstallOperatorWith(t testing.TB, region string, o OperatorOptions) OperatorFixture {
	t.Helper()
	ctx := Background(t)
	seed := e.Seed()
	r, ok := seed.Regions[region]
	if !ok {
		t.Fatalf("no seeded region %q", region)
	}
	e.DeclareTagOwners(t, map[string][]string{
		"tag:k8s-operator": {},
		"tag:k8s":          {"tag:k8s-operator"},
	})
	if o.ProxyTags == nil {
		o.ProxyTags = []string{"tag:k8s"}
	}
	if o.Scopes == nil {
		o.Scopes = OperatorScopes
	}
	clientID, secret := e.Tailnet.SeedOAuthClient("", "", o.Scopes, []string{"tag:k8s-operator"})

	q := e.QoveryClient(t)
	repo, err := q.CreateHelmRepository(ctx, seed.OrganizationID, &qovery.HelmRepositoryRequest{
		Name: "tailscale-" + region, Kind: qovery.HelmRepositoryKindHTTPS, URL: "https://pkgs.tailscale.com/helmcharts",
	})
	if err != nil {
		t.Fatalf("creating the Helm repository: %v", err)
	}
	hostname := "tailscale-operator-" + region
	values, err := manifest.RenderOperatorValues(manifest.OperatorValues{
		Hostname: hostname, DefaultTags: []string{"tag:k8s-operator"}, ProxyDefaultTags: o.ProxyTags, APIServerProxy: "false",
	}, o.ExtraValues)
	if err != nil {
		t.Fatal(err)
	}
	helm, err := q.CreateHelm(ctx, r.EnvironmentID, &qovery.HelmRequest{
		Name:                      hostname,
		Source:                    qovery.HelmSourceRequest{HelmRepository: &qovery.HelmRepositorySourceRequest{Repository: repo.ID, ChartName: "tailscale-operator", ChartVersion: "1.102.4"}},
		AllowClusterWideResources: true,
		ValuesOverride:            qovery.HelmValuesOverride{File: &qovery.HelmValuesFile{Raw: &qovery.HelmRawValues{Values: []qovery.HelmRawValuesFile{{Name: manifest.ValuesFileName, Content: values}}}}},
	})
	if err != nil {
		t.Fatalf("creating the Helm service: %v", err)
	}
	for _, v := range []struct {
		key, value string
		secret     bool
	}{{manifest.OAuthClientIDVariable, clientID, !o.PlainClientID}, {manifest.OAuthClientSecretVariable, secret, true}} {
		if _, err := q.CreateVariable(ctx, &qovery.VariableRequest{Key: v.key, Value: v.value, IsSecret: v.secret, VariableScope: qovery.VariableScopeHelm, VariableParentID: helm.ID}); err != nil {
			t.Fatalf("creating %s: %v", v.key, err)
		}
	}
	before, err := q.GetHelmStatus(ctx, helm.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.DeployHelm(ctx, helm.ID, nil); err != nil {
		t.Fatalf("deploying the operator: %v", err)
	}
	if _, err := qovery.WaitForDeployment(ctx, func(ctx2 context.Context) (*qovery.Status, error) { return q.GetHelmStatus(ctx2, helm.ID) },
		qovery.WaitOptions{PollInterval: 5 * time.Millisecond, Since: before}); err != nil {
		t.Fatalf("operator deployment: %v", err)
	}
	found := false
	for _, d := range e.Tailnet.Devices() {
		if d.Hostname == hostname {
			found = true
		}
	}
	if !found {
		t.Fatalf("the operator device %s did not appear; cluster events: %v", hostname, e.Cluster.Events())
	}
	return OperatorFixture{HelmID: helm.ID, HelmRepositoryID: repo.ID, Hostname: hostname, OAuthClientID: clientID, EnvironmentID: r.EnvironmentID, ClusterID: r.ClusterID}
}
