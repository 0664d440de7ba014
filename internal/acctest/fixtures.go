package acctest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// Region is the seeded region most tests run in.
const Region = "us-east-1"

// HomeLabRoutes are the six routes of the recipe's home lab: the pod
// network, four home VLANs and the LoadBalancer range.
var HomeLabRoutes = []string{"10.244.0.0/16", "10.10.0.0/16", "10.50.0.0/24", "10.101.0.0/16", "192.168.0.0/24", "10.20.0.0/16"}

// AllHomeLabRoutes are the routes a home-lab device advertises: the six
// subnets and the exit node routes.
var AllHomeLabRoutes = append(slices.Clone(HomeLabRoutes), manifest.ExitNodeRoutes...)

// HelmRepositoryConfig is one qtail_helm_repository named "tailscale";
// extra adds attributes.
func HelmRepositoryConfig(orgID, name, extra string) string {
	return fmt.Sprintf(`
resource "qtail_helm_repository" "tailscale" {
  organization_id = %q
  name            = %q
  %s
}
`, orgID, name, extra)
}

// ExposedServiceAddr is the address of the exposure of ExposedServiceConfig.
const ExposedServiceAddr = "qtail_exposed_service.billing"

// ExposedServiceConfig is one qtail_exposed_service named "billing" of the
// application appID; extra adds attributes.
func ExposedServiceConfig(appID, hostname, extra string) string {
	return fmt.Sprintf(`
resource "qtail_exposed_service" "billing" {
  application_id = %q
  hostname       = %q
  %s
}
`, appID, hostname, extra)
}

// NewExposureEnv is a world with a running operator in Region and the tag
// tag:k8s-billing owned by the operator's tag. It returns the ID of the
// seeded application billing-api.
func NewExposureEnv(t *testing.T, opts ...Option) (*Env, string) {
	t.Helper()
	env := New(t, opts...)
	env.InstallOperator(t, Region)
	env.DeclareTagOwners(t, map[string][]string{"tag:k8s-billing": {"tag:k8s-operator"}})
	return env, env.ApplicationID(t, Region, "billing-api")
}

// SetPolicy replaces the tailnet's policy file as a person does in the
// admin console.
func (e *Env) SetPolicy(t testing.TB, body string) {
	t.Helper()
	if err := e.Tailnet.SetPolicyDirect([]byte(body)); err != nil {
		t.Fatalf("the tailnet refused the hand edit: %v\n%s", err, body)
	}
}

// EditPolicy applies a textual hand edit to the tailnet's policy file: old
// must occur exactly once.
func (e *Env) EditPolicy(t testing.TB, old, replacement string) {
	t.Helper()
	body, _ := e.Tailnet.Policy()
	if n := strings.Count(string(body), old); n != 1 {
		t.Fatalf("hand edit: %q occurs %d times in the policy file:\n%s", old, n, body)
	}
	e.SetPolicy(t, strings.Replace(string(body), old, replacement, 1))
}

// CreateManifestService creates, without deploying it, a Helm service of the
// seeded Region environment whose raw values file is values, the way
// qtail_connector, qtail_proxy_group and qtail_egress_service do. It
// returns the service's ID.
func (e *Env) CreateManifestService(t testing.TB, name, values string) string {
	t.Helper()
	h, err := e.QoveryClient(t).CreateHelm(Background(t), e.Seed().Regions[Region].EnvironmentID, &qovery.HelmRequest{
		Name:       name,
		AutoDeploy: false,
		Source: qovery.HelmSourceRequest{GitRepository: &qovery.GitRepository{
			URL: "https://github.com/qtail/terraform-provider-qtail.git", Branch: "main", RootPath: "/examples/charts/tailnet-manifests",
		}},
		AllowClusterWideResources: true,
		ValuesOverride: qovery.HelmValuesOverride{File: &qovery.HelmValuesFile{Raw: &qovery.HelmRawValues{
			Values: []qovery.HelmRawValuesFile{{Name: manifest.ManifestsFileName, Content: values}},
		}}},
	})
	if err != nil {
		t.Fatalf("creating the Helm service %s: %v", name, err)
	}
	return h.ID
}

// LogsURLPattern is a regular expression that matches the Qovery console
// page of the logs of a deployment of a service of the seeded region's
// environment: serviceID is the service's ID, or "" for any.
func (e *Env) LogsURLPattern(region, serviceID string) string {
	s := e.Seed()
	if serviceID == "" {
		serviceID = `[0-9a-f-]{36}`
	} else {
		serviceID = regexp.QuoteMeta(serviceID)
	}
	return regexp.QuoteMeta(fmt.Sprintf("%s/organization/%s/project/%s/environment/%s/service/", qovery.ConsoleURL,
		s.OrganizationID, s.ProjectID, s.Regions[region].EnvironmentID)) + serviceID + `/deployments/logs/\S+`
}

// ForEachDeletedAnswer runs f in a parallel subtest for each of the real
// Qovery API's answers about a deleted object (403, and 400 "<kind> does
// not exist"), with the option that selects it and its status code.
func ForEachDeletedAnswer(t *testing.T, f func(t *testing.T, answer Option, status int)) {
	for _, a := range []struct {
		name   string
		answer qoveryapi.DeletedAnswer
		status int
	}{
		{"403", qoveryapi.DeletedForbidden, http.StatusForbidden},
		{"400 does not exist", qoveryapi.DeletedDoesNotExist, http.StatusBadRequest},
	} {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			f(t, WithAfterDelete(a.answer), a.status)
		})
	}
}

// AnsweredAsDeleted checks that err, from a read of a deleted object, came
// from the API's answer status about it (as is, or taken by the client for
// "gone"): the answer a test that finished in spite of it had to handle.
func AnsweredAsDeleted(err error, status int) error {
	var ae *qovery.APIError
	if errors.As(err, &ae) && (ae.Status == status ||
		ae.Status == http.StatusNotFound && strings.Contains(ae.Detail, fmt.Sprintf("answered %d ", status))) {
		return nil
	}
	return fmt.Errorf("the deleted object's read answered %v, want the status %d", err, status)
}

// DeployManifestService creates a Helm service of the seeded Region
// environment whose raw values file is values (CreateManifestService),
// deploys it and waits for that deployment, as a person does for objects
// that qtail does not manage (a ProxyClass, say). It returns the service's
// ID.
func (e *Env) DeployManifestService(t testing.TB, name, values string) string {
	t.Helper()
	id := e.CreateManifestService(t, name, values)
	ctx := Background(t)
	q := e.QoveryClient(t)
	before, err := q.GetHelmStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	trigger, err := q.DeployHelm(ctx, id, nil)
	if err != nil {
		t.Fatalf("deploying the Helm service %s: %v", name, err)
	}
	get := func(ctx context.Context) (*qovery.Status, error) { return q.GetHelmStatus(ctx, id) }
	if _, err := qovery.WaitForDeployment(ctx, get, qovery.WaitOptions{PollInterval: 5 * time.Millisecond, Since: before, Trigger: trigger}); err != nil {
		t.Fatalf("deployment of the Helm service %s: %v", name, err)
	}
	return id
}

// ServiceApproverConfig is a qtail_auto_approver "svc" that approves the
// devices tagged approvers as hosts of the Tailscale Service of hostname
// (svc:HOSTNAME), which an exposure through an ingress ProxyGroup needs.
func ServiceApproverConfig(hostname string, approvers ...string) string {
	quoted := make([]string, len(approvers))
	for i, a := range approvers {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	return fmt.Sprintf(`
resource "qtail_auto_approver" "svc" {
  service   = "svc:%s"
  approvers = [%s]
}
`, hostname, strings.Join(quoted, ", "))
}

// DependsOnServiceApprover is the depends_on of an exposure on the
// qtail_auto_approver of ServiceApproverConfig.
const DependsOnServiceApprover = "depends_on = [qtail_auto_approver.svc]"
