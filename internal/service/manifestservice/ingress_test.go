package manifestservice_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

const ingressAddr = "qtail_ingress.billing"

// ingressEnv is a sandbox with an operator in the region, and the
// application billing-api (ports 443 and 8080) with its environment.
func ingressEnv(t *testing.T) (env *acctest.Env, appID, envID string) {
	t.Helper()
	env = acctest.New(t)
	env.InstallOperator(t, acctest.Region)
	return env, env.ApplicationID(t, acctest.Region, "billing-api"), env.Seed().Regions[acctest.Region].EnvironmentID
}

// ingressConfig serves billing-api over HTTPS at billing-https; body adds
// attributes.
func ingressConfig(appID, envID, body string) string {
	return fmt.Sprintf(`
resource "qtail_ingress" "billing" {
  environment_id = %q
  application_id = %q
  hostname       = "billing-https"
  %s
  %s
}
`, envID, appID, connectorChartGit, body)
}

// ingressOnCluster returns the Ingress billing-https the cluster runs.
func ingressOnCluster(env *acctest.Env) (cluster.Ingress, bool) {
	for _, g := range env.Cluster.Ingresses() {
		if g.Name == "billing-https" {
			return g, true
		}
	}
	return cluster.Ingress{}, false
}

// checkServedOverHTTPS checks that the operator serves the Ingress to
// billing-api's port with a certificate of the tailnet.
func checkServedOverHTTPS(env *acctest.Env, appID string, port int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		g, ok := ingressOnCluster(env)
		if !ok {
			return fmt.Errorf("no Ingress billing-https on the cluster; events %q", env.Cluster.Events())
		}
		fqdn := "billing-https." + sandbox.MagicDNSSuffix
		if g.StatusHostname != fqdn || g.BackendService != manifest.ApplicationServiceName(appID) || g.BackendPort != port || !g.TargetServed {
			return fmt.Errorf("the cluster's Ingress %+v; events %q", g, env.Cluster.Events())
		}
		for _, c := range env.Tailnet.Certificates() {
			if c.Domain == fqdn && c.DeviceID == g.DeviceID {
				return nil
			}
		}
		return fmt.Errorf("no certificate for %s among %+v", fqdn, env.Tailnet.Certificates())
	}
}

func TestIngress_servesAnApplicationOverHTTPS(t *testing.T) {
	t.Parallel()
	env, appID, envID := ingressEnv(t)
	url := "https://billing-https." + sandbox.MagicDNSSuffix + "/"
	config := ingressConfig(appID, envID, "backend_port = 8080")
	var helmID string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(ingressAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(ingressAddr, tfjsonpath.New("helm_service_name"), knownvalue.StringExact("tailscale-ingress-billing-https")),
					plancheck.ExpectKnownValue(ingressAddr, tfjsonpath.New("values"), knownvalue.StringRegexp(acctest.ErrorRE("ingressClassName: tailscale"))),
					plancheck.ExpectUnknownValue(ingressAddr, tfjsonpath.New("url")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ingressAddr, tfjsonpath.New("url"), knownvalue.StringExact(url)),
					statecheck.ExpectKnownValue(ingressAddr, tfjsonpath.New("tailnet_fqdn"), knownvalue.StringExact("billing-https."+sandbox.MagicDNSSuffix)),
					statecheck.ExpectKnownValue(ingressAddr, tfjsonpath.New("deployed"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(ingressAddr, tfjsonpath.New("devices").AtSliceIndex(0).AtMapKey("hostname"), knownvalue.StringExact("billing-https")),
				},
				Check: resource.ComposeTestCheckFunc(acctest.Capture(ingressAddr, "id", &helmID), checkServedOverHTTPS(env, appID, 8080)),
			},
			{Config: config, PlanOnly: true},
			{
				ResourceName:            ingressAddr,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				// Another port of the application: an update in place,
				// the same device.
				Config: ingressConfig(appID, envID, "backend_port = 443"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(ingressAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ingressAddr, tfjsonpath.New("url"), knownvalue.StringExact(url)),
				},
				Check: resource.ComposeTestCheckFunc(checkServedOverHTTPS(env, appID, 443), func(*terraform.State) error {
					if g, _ := ingressOnCluster(env); g.Target != "https+insecure://"+manifest.ApplicationServiceName(appID)+"."+g.Namespace+".svc:443/" {
						return fmt.Errorf("the proxy sends requests to %q", g.Target)
					}
					return nil
				}),
			},
			{Config: ingressConfig(appID, envID, "backend_port = 443"), PlanOnly: true},
			{
				// The Ingress deleted with kubectl: the operator removes
				// the proxy, qtail redeploys, and Helm brings both back.
				PreConfig: func() {
					g, _ := ingressOnCluster(env)
					if !env.Cluster.DeleteIngress(g.Namespace, g.Name) {
						t.Fatal("no Ingress to delete")
					}
				},
				Config: ingressConfig(appID, envID, "backend_port = 443"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(ingressAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(ingressAddr, tfjsonpath.New("devices")),
				}},
				Check: checkServedOverHTTPS(env, appID, 443),
			},
			{
				// The Ingress's port changed in the Qovery console: the
				// plan writes the values back.
				PreConfig: func() {
					values, err := manifest.RenderIngress(manifest.Ingress{Name: "billing-https", Hostname: "billing-https",
						BackendService: manifest.ApplicationServiceName(appID), BackendPort: 8080})
					if err != nil {
						t.Fatal(err)
					}
					if err := env.Qovery.SetHelmRawValues(helmID, qoveryapi.ValuesFile{Name: manifest.ManifestsFileName, Content: values}); err != nil {
						t.Fatal(err)
					}
				},
				Config: ingressConfig(appID, envID, "backend_port = 443"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(ingressAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(ingressAddr, tfjsonpath.New("backend_port"), knownvalue.Int64Exact(443)),
				}},
				Check: checkServedOverHTTPS(env, appID, 443),
			},
			{
				// The proxy's device removed in the admin console: qtail
				// redeploys, and the operator brings the proxy back.
				PreConfig: func() {
					if n := env.Tailnet.RemoveDevicesByHostname("billing-https"); n != 1 {
						t.Fatalf("removed %d devices billing-https", n)
					}
				},
				Config: ingressConfig(appID, envID, "backend_port = 443"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(ingressAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(ingressAddr, tfjsonpath.New("devices")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ingressAddr, tfjsonpath.New("url"), knownvalue.StringExact(url)),
				},
				Check: checkServedOverHTTPS(env, appID, 443),
			},
			{Config: ingressConfig(appID, envID, "backend_port = 443"), PlanOnly: true},
		},
		CheckDestroy: func(*terraform.State) error {
			if _, ok := env.Qovery.Helm(helmID); ok {
				return fmt.Errorf("the Helm service %s is still there", helmID)
			}
			if _, ok := ingressOnCluster(env); ok {
				return fmt.Errorf("the Ingress is still on the cluster")
			}
			if n := len(env.DevicesNamed("billing-https")); n != 0 {
				return fmt.Errorf("%d devices billing-https left on the tailnet", n)
			}
			return nil
		},
	})
}

func TestIngress_refusedAtPlan(t *testing.T) {
	t.Parallel()
	env, appID, envID := ingressEnv(t)
	seed := env.Seed()
	otherEnv, err := env.Qovery.SeedEnvironment(seed.ProjectID, seed.Regions[acctest.Region].ClusterID, "staging-"+acctest.Region)
	if err != nil {
		t.Fatal(err)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				// Another environment of the cluster: the Ingress could
				// not reach the application's Service.
				Config:      ingressConfig(appID, otherEnv, "backend_port = 8080"),
				PlanOnly:    true,
				ExpectError: acctest.ErrorOn("environment_id", "Ingress Outside the Application's Environment"),
			},
			{
				// billing-api declares 443 and 8080.
				Config:      ingressConfig(appID, envID, "backend_port = 9000"),
				PlanOnly:    true,
				ExpectError: acctest.ErrorOn("backend_port", "Backend Port Not Declared"),
			},
			{
				PreConfig:   func() { env.Tailnet.SetHTTPSEnabled(false) },
				Config:      ingressConfig(appID, envID, "backend_port = 8080"),
				PlanOnly:    true,
				ExpectError: acctest.ErrorOn("hostname", "HTTPS Certificates Disabled on the Tailnet"),
			},
			{
				PreConfig: func() {
					env.Tailnet.SetHTTPSEnabled(true)
					env.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: "billing-https", OS: "macOS", User: "alice@example.com"})
				},
				Config:      ingressConfig(appID, envID, "backend_port = 8080"),
				PlanOnly:    true,
				ExpectError: acctest.ErrorOn("hostname", "Hostname Taken on the Tailnet"),
			},
		},
	})
}

func TestIngress_hostnameOfATailscaleService(t *testing.T) {
	t.Parallel()
	env, appID, envID := ingressEnv(t)
	// A Tailscale Service made by hand in the admin console.
	req, err := http.NewRequestWithContext(acctest.Background(t), http.MethodPut, env.URL+"/tailscale/api/v2/tailnet/-/vip-services/svc:billing-https",
		strings.NewReader(`{"ports": ["tcp:443"]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(sandbox.TailscaleAPIKey, "")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("creating the Tailscale Service: %s", res.Status)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      ingressConfig(appID, envID, "backend_port = 8080"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`Hostname Taken by a Tailscale Service`),
		}},
	})
}

// ingressProxyGroupConfig is an ingress ProxyGroup of envID and, with
// approved, the auto approver of svc:billing-https for its replicas.
func ingressProxyGroupConfig(envID string, approved bool) string {
	c := fmt.Sprintf(`
resource "qtail_proxy_group" "ingress" {
  environment_id  = %q
  name            = "ingress"
  type            = "ingress"
  hostname_prefix = "ingress-us"
  %s
}
`, envID, connectorChartGit)
	if approved {
		c += acctest.ServiceApproverConfig("billing-https", "tag:k8s")
	}
	return c
}

// Through an ingress ProxyGroup the Ingress is the Tailscale Service
// svc:billing-https, refused at plan while nothing approves its hosts,
// then served by the replicas with the tailnet's certificate.
func TestIngress_throughAnIngressProxyGroup(t *testing.T) {
	t.Parallel()
	env, appID, envID := ingressEnv(t)
	url := "https://billing-https." + sandbox.MagicDNSSuffix + "/"
	ingress := ingressConfig(appID, envID, `backend_port = 8080
  proxy_group  = qtail_proxy_group.ingress.name`)
	config := ingressProxyGroupConfig(envID, true) + strings.Replace(ingress, "proxy_group", "depends_on = [qtail_auto_approver.svc]\n  proxy_group", 1)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config:      ingressProxyGroupConfig(envID, false) + ingress,
				ExpectError: acctest.ErrorOn("proxy_group", "Tailscale Service Not Approved"),
			},
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ingressAddr, tfjsonpath.New("url"), knownvalue.StringExact(url)),
					statecheck.ExpectKnownValue(ingressAddr, tfjsonpath.New("devices"), knownvalue.ListExact(nil)),
				},
				Check: func(*terraform.State) error {
					g, ok := ingressOnCluster(env)
					if !ok || g.ProxyGroup != "ingress" || g.DeviceID != "" || g.StatusHostname != "billing-https."+sandbox.MagicDNSSuffix {
						return fmt.Errorf("the cluster's Ingress %+v (%v); events %q", g, ok, env.Cluster.Events())
					}
					hosts := env.Tailnet.ServiceHosts("svc:billing-https")
					if len(hosts) != 2 || hosts[0].Approval != tailnetapi.ApprovalAuto {
						return fmt.Errorf("hosts of svc:billing-https: %+v", hosts)
					}
					if n := len(env.DevicesNamed("billing-https")); n != 0 {
						return fmt.Errorf("%d devices billing-https through a ProxyGroup", n)
					}
					return nil
				},
			},
			{Config: config, PlanOnly: true},
			{
				ResourceName:            ingressAddr,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
	})
}
