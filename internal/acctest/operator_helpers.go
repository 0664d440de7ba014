package acctest

import (
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// OperatorTagOwners are the tagOwners entries the recipe asks for.
var OperatorTagOwners = map[string][]string{
	"tag:k8s-operator": {},
	"tag:k8s":          {"tag:k8s-operator"},
}

// OperatorScopes are the scopes of an OAuth client fit for the operator.
var OperatorScopes = []string{"devices:core", "auth_keys", "services"}

// SeedOperatorClient adds an OAuth client fit for the operator (tagged
// tag:k8s-operator) and returns its credentials.
func (e *Env) SeedOperatorClient() (id, secret string) {
	return e.Tailnet.SeedOAuthClient("", "", OperatorScopes, []string{"tag:k8s-operator"})
}

// SeedOperatorFederatedIdentity adds a federated identity fit for an
// operator on the cluster of region (tagged tag:k8s-operator, with the
// operator's scopes), trusting the service account tokens of that cluster
// for the operator chart's service account in any namespace, and returns
// its ID and audience (audience, or by default the service's
// api.tailscale.com/<ID>).
func (e *Env) SeedOperatorFederatedIdentity(region, audience string) (id, aud string) {
	return e.Tailnet.SeedFederatedIdentity(tailnetapi.FederatedIdentity{
		Issuer:   e.Cluster.Issuer(e.Seed().Regions[region].ClusterID),
		Subject:  cluster.ServiceAccountSubject("*", cluster.OperatorServiceAccount),
		Audience: audience,
		Scopes:   OperatorScopes,
		Tags:     []string{"tag:k8s-operator"},
	})
}

// CreateOperatorRepository creates an organization Helm repository of
// Tailscale's stable channel through the API and returns its ID.
func (e *Env) CreateOperatorRepository(t testing.TB, name string) string {
	t.Helper()
	repo, err := e.QoveryClient(t).CreateHelmRepository(Background(t), e.Seed().OrganizationID, &qovery.HelmRepositoryRequest{
		Name: name, Kind: qovery.HelmRepositoryKindHTTPS, URL: qoveryapi.TailscaleStableURL,
	})
	if err != nil {
		t.Fatalf("creating the Helm repository: %v", err)
	}
	return repo.ID
}

// TailnetClient returns a Tailscale API client for the world.
func (e *Env) TailnetClient(t testing.TB) *tailnet.Client {
	t.Helper()
	env := e.Environ()
	c, err := tailnet.New(tailnet.Config{BaseURL: env["TAILSCALE_BASE_URL"], APIKey: env["TAILSCALE_API_KEY"], Tailnet: env["TAILSCALE_TAILNET"]})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// DeviceByHostname returns the device with exactly this hostname.
func (e *Env) DeviceByHostname(hostname string) (tailnetapi.Device, bool) {
	for _, d := range e.Tailnet.Devices() {
		if d.Hostname == hostname {
			return d, true
		}
	}
	return tailnetapi.Device{}, false
}

// HelmOwnVariables returns the variables defined on a service itself, by
// key, secret values included (the fake keeps them).
func (e *Env) HelmOwnVariables(serviceID string) map[string]qoveryapi.Variable {
	out := map[string]qoveryapi.Variable{}
	for _, v := range e.Qovery.Variables() {
		if v.ParentID == serviceID {
			out[v.Key] = v
		}
	}
	return out
}

// OperatorSecret returns the value of the TS_OAUTH_CLIENT_SECRET variable
// of a Helm service, "" when there is none.
func (e *Env) OperatorSecret(helmID string) string {
	return e.HelmOwnVariables(helmID)[manifest.OAuthClientSecretVariable].Value
}

// DeployCount returns how many deployments or deletions a service had.
func (e *Env) DeployCount(serviceID string) int {
	st, ok := e.Qovery.Status(serviceID)
	if !ok {
		return 0
	}
	return st.RequestsCount
}

// CreateIdleOperator creates the Helm service of a Tailscale operator in a
// seeded region without deploying it: qtail sees an operator on the
// cluster, but the cluster runs none (no CRDs, no device).
func (e *Env) CreateIdleOperator(t testing.TB, region string) string {
	t.Helper()
	r, ok := e.Seed().Regions[region]
	if !ok {
		t.Fatalf("no seeded region %q", region)
	}
	repoID := e.CreateOperatorRepository(t, "tailscale-idle-"+region)
	h, err := e.QoveryClient(t).CreateHelm(Background(t), r.EnvironmentID, &qovery.HelmRequest{
		Name:                      "tailscale-operator-idle",
		Source:                    qovery.HelmSourceRequest{HelmRepository: &qovery.HelmRepositorySourceRequest{Repository: repoID, ChartName: "tailscale-operator", ChartVersion: "1.102.4"}},
		AllowClusterWideResources: true,
	})
	if err != nil {
		t.Fatalf("creating the operator's Helm service: %v", err)
	}
	return h.ID
}
