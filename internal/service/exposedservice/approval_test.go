package exposedservice_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// The devices of an ingress ProxyGroup advertise the Tailscale Service of
// each exposure they serve, and carry its traffic only once the tailnet
// approves them: by autoApprovers.services or by an admin.

const (
	approvedHostname = "billing-api-us-east-1"
	approvedService  = "svc:" + approvedHostname
	approverAddr     = "qtail_auto_approver.svc"
)

// ingressGroupConfig is the ingress ProxyGroup of the environment envID;
// extra adds attributes to it.
func ingressGroupConfig(envID, extra string) string {
	return fmt.Sprintf(`
resource "qtail_proxy_group" "ingress" {
  environment_id  = %q
  name            = "ingress"
  type            = "ingress"
  hostname_prefix = "ingress-us"
  chart = {
    git_repository = {
      url       = "https://github.com/qtail/terraform-provider-qtail.git"
      root_path = "/examples/charts/tailnet-manifests"
    }
  }
  %s
}
`, envID, extra)
}

// checkHostsApproved checks that the Service has hosts, each with the
// approval want.
func checkHostsApproved(env *acctest.Env, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		hosts := env.Tailnet.ServiceHosts(approvedService)
		if len(hosts) == 0 {
			return fmt.Errorf("no device hosts %s", approvedService)
		}
		for _, h := range hosts {
			if h.Approval != want {
				return fmt.Errorf("host %s of %s: approval %q, want %q", h.Hostname, approvedService, h.Approval, want)
			}
		}
		return nil
	}
}

// removeServiceApprovers deletes every autoApprovers.services entry of the
// policy, as a person editing it in the console.
func removeServiceApprovers(t *testing.T, env *acctest.Env) {
	t.Helper()
	body, _ := env.Tailnet.Policy()
	doc, err := policyfile.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	removed := 0
	for _, f := range doc.Fragments() {
		if f.Key.Kind == policyfile.KindAutoApprover && strings.HasPrefix(f.Key.Name, policyfile.ServicePrefix) && doc.Delete(f.Key) {
			removed++
		}
	}
	if removed == 0 {
		t.Fatalf("no autoApprovers.services entry to remove in\n%s", body)
	}
	env.SetPolicy(t, string(doc.Bytes()))
}

// Without an approver the plan refuses the exposure on proxy_group, with
// the qtail_auto_approver to add, and creates nothing.
func TestExposedService_throughAnIngressGroupNeedsAnApprover(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	envID := env.Seed().Regions[acctest.Region].EnvironmentID
	helmsBefore, groupsBefore := len(env.Qovery.Helms()), len(env.Qovery.AnnotationsGroups())
	config := ingressGroupConfig(envID, "") + acctest.ExposedServiceConfig(appID, approvedHostname, `proxy_group     = qtail_proxy_group.ingress.name
  wait_for_device = false`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      config,
			ExpectError: acctest.ErrorOn("proxy_group", "Tailscale Service Not Approved"),
		}, {
			Config: config,
			ExpectError: acctest.ErrorRE(`no entry of autoApprovers.services in the tailnet policy (as it will be after this plan) ` +
				`approves them, neither "svc:billing-api-us-east-1" nor one of the Service's tags with one of the devices' tags ` +
				`among its approvers. The apply would expose nothing. Approve them with a qtail_auto_approver, and make this ` +
				`exposure depend on it so that it is planned first: resource "qtail_auto_approver" "svc_billing_api_us_east_1" { service = "svc:billing-api-us-east-1" ` +
				`approvers = ["tag:k8s"] } depends_on = [qtail_auto_approver.svc_billing_api_us_east_1]`),
		}},
	})
	if n := len(env.Qovery.Helms()); n != helmsBefore {
		t.Errorf("the refused plan created Helm services: %d, was %d", n, helmsBefore)
	}
	if n := len(env.Qovery.AnnotationsGroups()); n != groupsBefore {
		t.Errorf("the refused plan created annotations groups: %d, was %d", n, groupsBefore)
	}
	if n := env.Calls(routeRedeployApplication); n != 0 {
		t.Errorf("the refused plan redeployed applications %d times", n)
	}
}

// With a qtail_auto_approver of the Service the exposure applies, the
// ProxyGroup's devices are approved hosts, and a second plan is empty; the
// data source shows the hosts; the approver removed by hand is drift on
// the approver, and the hosts lose their approval.
func TestExposedService_throughAnIngressGroupWithAnApprover(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	envID := env.Seed().Regions[acctest.Region].EnvironmentID
	config := ingressGroupConfig(envID, "") + acctest.ServiceApproverConfig(approvedHostname, "tag:k8s") +
		acctest.ExposedServiceConfig(appID, approvedHostname, `proxy_group     = qtail_proxy_group.ingress.name
  wait_for_device = false
  `+acctest.DependsOnServiceApprover)
	status := config + `
data "qtail_service_status" "billing" {
  name       = "svc:billing-api-us-east-1"
  depends_on = [qtail_exposed_service.billing]
}
`
	const ds = "data.qtail_service_status.billing"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check:  checkHostsApproved(env, tailnetapi.ApprovalAuto),
			},
			{
				Config:   config,
				PlanOnly: true,
			},
			{
				Config: status,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr(ds, "exists", "true"),
					resource.TestCheckResourceAttr(ds, "approved", "true"),
					resource.TestCheckResourceAttr(ds, "hosts.#", "2"),
					resource.TestCheckResourceAttr(ds, "hosts.0.hostname", "ingress-us-0"),
					resource.TestCheckResourceAttr(ds, "hosts.0.approval", tailnetapi.ApprovalAuto),
					resource.TestCheckResourceAttr(ds, "hosts.0.approved", "true"),
					resource.TestCheckResourceAttr(ds, "hosts.1.approved", "true"),
					resource.TestCheckResourceAttr(ds, "tags.#", "1"),
					resource.TestCheckResourceAttr(ds, "tags.0", "tag:k8s"),
					resource.TestCheckResourceAttr(ds, "missing.#", "0"),
				),
			},
			{
				// The approver removed in the console: the hosts carry no
				// traffic, the data source says so, and the plan puts the
				// approver back.
				PreConfig: func() {
					removeServiceApprovers(t, env)
					if env.Tailnet.ServiceServed(approvedService) {
						t.Error("the Service is still served without its approver")
					}
				},
				Config: status,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(approverAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction(acctest.ExposedServiceAddr, plancheck.ResourceActionNoop),
				}},
				Check: checkHostsApproved(env, tailnetapi.ApprovalAuto),
			},
			{
				Config:   status,
				PlanOnly: true,
			},
		},
	})
}

// The data source shows no Service, then hosts that advertise it without
// being approved and what approves them; an admin's approval makes them
// hosts.
func TestServiceStatus_advertisedNotApproved(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	envID := env.Seed().Regions[acctest.Region].EnvironmentID
	config := ingressGroupConfig(envID, "") + acctest.ServiceApproverConfig(approvedHostname, "tag:k8s") +
		acctest.ExposedServiceConfig(appID, approvedHostname, `proxy_group     = qtail_proxy_group.ingress.name
  wait_for_device = false
  `+acctest.DependsOnServiceApprover)
	status := `
data "qtail_service_status" "billing" {
  name = "svc:billing-api-us-east-1"
}
`
	const ds = "data.qtail_service_status.billing"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: status,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr(ds, "exists", "false"),
					resource.TestCheckResourceAttr(ds, "approved", "false"),
					resource.TestCheckResourceAttr(ds, "hosts.#", "0"),
					resource.TestCheckResourceAttrWith(ds, "missing.0", func(v string) error {
						if !strings.Contains(v, "no Tailscale Service svc:billing-api-us-east-1") {
							return fmt.Errorf("missing.0 = %q", v)
						}
						return nil
					}),
				),
			},
			{Config: config},
			{
				// The approver removed in the console: the hosts still
				// advertise the Service, not approved. The data source is
				// read at plan, before the apply puts the approver back.
				PreConfig: func() { removeServiceApprovers(t, env) },
				Config:    config + status,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr(ds, "exists", "true"),
					resource.TestCheckResourceAttr(ds, "approved", "false"),
					resource.TestCheckResourceAttr(ds, "hosts.#", "2"),
					resource.TestCheckResourceAttr(ds, "hosts.0.approval", tailnetapi.ApprovalNone),
					resource.TestCheckResourceAttr(ds, "hosts.0.approved", "false"),
					resource.TestCheckResourceAttrWith(ds, "missing.0", func(v string) error {
						for _, want := range []string{"ingress-us-0", "ingress-us-1", "are not approved",
							`service   = "svc:billing-api-us-east-1"`, `approvers = ["tag:k8s"]`} {
							if !strings.Contains(v, want) {
								return fmt.Errorf("missing.0 = %q, want %q in it", v, want)
							}
						}
						return nil
					}),
				),
			},
			{
				PreConfig: func() {
					for _, h := range env.Tailnet.ServiceHosts(approvedService) {
						if err := env.Tailnet.ApproveServiceHost(approvedService, h.NodeID, true); err != nil {
							t.Fatal(err)
						}
					}
				},
				Config: config + status,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr(ds, "approved", "true"),
					resource.TestCheckResourceAttr(ds, "hosts.0.approval", tailnetapi.ApprovalManual),
					resource.TestCheckResourceAttr(ds, "missing.#", "0"),
				),
			},
		},
	})
}

// A policy that qtail may not read (an API key without the policy_file
// scope) leaves the approval unchecked at plan, with a warning. The apply
// finds the ProxyGroup's devices advertising the Service without being
// approved and says so, with the approver to add, instead of reporting the
// exposure served.
func TestExposedService_advertisedNotApprovedFailsTheApply(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	envID := env.Seed().Regions[acctest.Region].EnvironmentID
	env.Faults.Add(faults.Rule{Route: "GET /tailscale/api/v2/tailnet/{tailnet}/acl", Status: http.StatusForbidden, Count: 1000})
	config := ingressGroupConfig(envID, "") + acctest.ExposedServiceConfig(appID, approvedHostname, `proxy_group     = qtail_proxy_group.ingress.name
  wait_for_device = false
  timeouts        = { create = "3s" }`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: config,
			ExpectError: acctest.ErrorRE(`could not see the Tailscale Service of the ProxyGroup ingress carry traffic. ` +
				`The exposure is saved as tainted: the next apply removes it and tries again. ` +
				`the Tailscale Service svc:billing-api-us-east-1 is advertised, not approved: its hosts ingress-us-0`),
		}, {
			// The failed apply left the Service advertised, not served.
			PreConfig: func() {
				if env.Tailnet.ServiceServed(approvedService) {
					t.Error("the Service is served")
				}
				if hosts := env.Tailnet.ServiceHosts(approvedService); len(hosts) != 2 {
					t.Errorf("hosts of %s: %+v, want the two replicas", approvedService, hosts)
				}
			},
			Config: config,
			ExpectError: acctest.ErrorRE(`Add the approver, then apply again: resource "qtail_auto_approver" "svc_billing_api_us_east_1" { ` +
				`service = "svc:billing-api-us-east-1" approvers = ["tag:k8s"] }`),
		}},
	})
}

// Renaming an exposure through an ingress ProxyGroup makes a new Tailscale
// Service: the plan refuses the new hostname that no approver covers.
func TestExposedService_renamedThroughAnIngressGroupNeedsAnApprover(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	envID := env.Seed().Regions[acctest.Region].EnvironmentID
	exposure := func(hostname string) string {
		return ingressGroupConfig(envID, "") + acctest.ServiceApproverConfig(approvedHostname, "tag:k8s") +
			acctest.ExposedServiceConfig(appID, hostname, `proxy_group     = qtail_proxy_group.ingress.name
  wait_for_device = false
  `+acctest.DependsOnServiceApprover)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: exposure(approvedHostname), Check: checkHostsApproved(env, tailnetapi.ApprovalAuto)},
			{
				Config:      exposure("billing-api-renamed"),
				ExpectError: acctest.ErrorOn("proxy_group", "Tailscale Service Not Approved"),
			},
		},
	})
}

// A ProxyGroup created in the same apply with tags of its own: Terraform
// plans the exposure again once the ProxyGroup exists, and that plan
// checks the approver against the ProxyGroup's tags, before the exposure
// is created.
func TestExposedService_proxyGroupTagsAreCheckedAtApply(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	env.DeclareTagOwners(t, map[string][]string{"tag:k8s-ingress": {"tag:k8s-operator"}})
	envID := env.Seed().Regions[acctest.Region].EnvironmentID
	config := ingressGroupConfig(envID, `tags = ["tag:k8s-ingress"]`) + acctest.ServiceApproverConfig(approvedHostname, "tag:k8s") +
		acctest.ExposedServiceConfig(appID, approvedHostname, `proxy_group     = qtail_proxy_group.ingress.name
  wait_for_device = false
  `+acctest.DependsOnServiceApprover)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      config,
			ExpectError: acctest.ErrorRE(`its devices, tagged tag:k8s-ingress, advertise the Service`),
		}, {
			// The ProxyGroup is there, the exposure is not.
			PreConfig: func() {
				if n := len(env.Qovery.AnnotationsGroups()); n != 0 {
					t.Errorf("%d annotations groups created", n)
				}
			},
			Config:      config,
			ExpectError: acctest.ErrorOn("proxy_group", "Tailscale Service Not Approved"),
		}},
	})
}
