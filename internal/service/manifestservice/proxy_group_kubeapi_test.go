package manifestservice_test

import (
	"fmt"
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
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

const kubeAPIAddr = "qtail_proxy_group.kubeapi"

// kubeAPIConfig is a kube-apiserver ProxyGroup named kubeapi in envID, in
// mode; grant adds a grant of the kubernetes capability to tag:k8s, which
// the ProxyGroup depends on.
func kubeAPIConfig(envID, mode string, grant bool) string {
	grantHCL, dependsOn := "", ""
	if grant {
		grantHCL = `
resource "qtail_grant" "kubernetes_read" {
  name = "kubernetes-read"
  src  = ["autogroup:admin"]
  dst  = ["tag:k8s"]
  app = jsonencode({
    "tailscale.com/cap/kubernetes" = [{ impersonate = { groups = ["tailnet-readers"] } }]
  })
}
`
		dependsOn = "depends_on = [qtail_grant.kubernetes_read]"
	}
	return grantHCL + fmt.Sprintf(`
resource "qtail_proxy_group" "kubeapi" {
  environment_id = %q
  name           = "kubeapi"
  type           = "kube-apiserver"
  kube_apiserver = {
    mode = %q
  }
  %s
  %s
}
`, envID, mode, connectorChartGit, dependsOn)
}

// kubeAPIEnv is an environment with an operator and HTTPS certificates on.
func kubeAPIEnv(t *testing.T) (*acctest.Env, string) {
	t.Helper()
	env, envID := connectorEnv(t)
	env.Tailnet.SetHTTPSEnabled(true)
	return env, envID
}

// checkKubeAPIServing checks that the cluster runs the ProxyGroup of
// helmID in mode, and that the operator reports it serving at its URL
// through the Tailscale Service svc:kubeapi, tagged tag:k8s, which both
// replicas advertise.
func checkKubeAPIServing(env *acctest.Env, helmID *string, mode string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		g, ok := clusterProxyGroup(env, *helmID)
		if !ok || g.Type != manifest.ProxyGroupKubeAPIServer || g.KubeAPIServer == nil {
			return fmt.Errorf("the cluster runs %+v (found %v)", g, ok)
		}
		k := g.KubeAPIServer
		if k.Mode != mode {
			return fmt.Errorf("the ProxyGroup runs in mode %q, want %q", k.Mode, mode)
		}
		want := "https://kubeapi." + env.Tailnet.MagicDNSSuffix()
		if c := k.Conditions[cluster.ConditionKubeAPIServerProxyConfigured]; c.Status != "True" || k.URL != want {
			return fmt.Errorf("status.url %q, condition %+v; want %s, True (cluster events: %q)", k.URL, c, want, env.Cluster.Events())
		}
		for _, s := range env.Tailnet.Services() {
			if s.Name == "svc:kubeapi" {
				if !sameStrings(s.Tags, []string{"tag:k8s"}) || !sameStrings(s.Ports, []string{"tcp:443"}) {
					return fmt.Errorf("Tailscale Service %+v", s)
				}
				return nil
			}
		}
		return fmt.Errorf("no Tailscale Service svc:kubeapi on the tailnet")
	}
}

// In auth mode the replicas impersonate callers as the groups that grants
// of tailscale.com/cap/kubernetes give: without one the plan refuses the
// ProxyGroup on kube_apiserver.mode; with it the ProxyGroup applies, its
// devices join, and the operator serves it. Import, drift of the mode in
// the Qovery console, and the empty plans follow.
func TestProxyGroup_kubeAPIServerAuth(t *testing.T) {
	t.Parallel()
	env, envID := kubeAPIEnv(t)
	var helmID string
	editMode := func(mode string) func() {
		return func() {
			values, err := manifest.RenderProxyGroup(manifest.ProxyGroup{Name: "kubeapi", Type: manifest.ProxyGroupKubeAPIServer, KubeAPIServerMode: mode})
			if err != nil {
				t.Fatal(err)
			}
			if err := env.Qovery.SetHelmRawValues(helmID, qoveryapi.ValuesFile{Name: manifest.ManifestsFileName, Content: values}); err != nil {
				t.Fatal(err)
			}
		}
	}
	config := kubeAPIConfig(envID, "auth", true)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config:      kubeAPIConfig(envID, "auth", false),
				ExpectError: acctest.ErrorOn("kube_apiserver.mode", `has no such grant to ["tag:k8s"]`),
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(kubeAPIAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(kubeAPIAddr, tfjsonpath.New("values"), knownvalue.StringRegexp(acctest.ErrorRE("kubeAPIServer: mode: auth"))),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(kubeAPIAddr, tfjsonpath.New("kube_apiserver").AtMapKey("mode"), knownvalue.StringExact("auth")),
				},
				Check: resource.ComposeTestCheckFunc(
					acctest.Capture(kubeAPIAddr, "id", &helmID),
					checkKubeAPIDevices(env),
					checkKubeAPIServing(env, &helmID, "auth"),
				),
			},
			{
				Config:   config,
				PlanOnly: true,
			},
			{
				ResourceName:                         kubeAPIAddr,
				ImportState:                          true,
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "id",
			},
			{
				// The mode edited in the Qovery console.
				PreConfig: editMode("noauth"),
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(kubeAPIAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(kubeAPIAddr, tfjsonpath.New("kube_apiserver").AtMapKey("mode"), knownvalue.StringExact("auth")),
				}},
				Check: checkKubeAPIServing(env, &helmID, "auth"),
			},
			{
				Config:   config,
				PlanOnly: true,
			},
		},
		CheckDestroy: func(s *terraform.State) error {
			for _, svc := range env.Tailnet.Services() {
				if svc.Name == "svc:kubeapi" {
					return fmt.Errorf("the Tailscale Service svc:kubeapi is still on the tailnet")
				}
			}
			return checkNoDevices(env, "kubeapi-0", "kubeapi-1")(s)
		},
	})
}

// checkKubeAPIDevices checks the replicas' devices of the ProxyGroup
// kubeapi.
func checkKubeAPIDevices(env *acctest.Env) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs := s.RootModule().Resources[kubeAPIAddr]
		if rs == nil || rs.Primary.Attributes["devices.#"] != "2" {
			return fmt.Errorf("%s lists no two devices: %v", kubeAPIAddr, rs)
		}
		for _, h := range []string{"kubeapi-0", "kubeapi-1"} {
			devs := env.DevicesNamed(h)
			if len(devs) != 1 || !sameStrings(devs[0].Tags, []string{"tag:k8s"}) {
				return fmt.Errorf("devices %s: %+v", h, devs)
			}
		}
		return nil
	}
}

// noauth needs no grant, and a mode change is an update in place.
func TestProxyGroup_kubeAPIServerNoAuth(t *testing.T) {
	t.Parallel()
	env, envID := kubeAPIEnv(t)
	var helmID, second string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: kubeAPIConfig(envID, "noauth", false),
				Check: resource.ComposeTestCheckFunc(
					acctest.Capture(kubeAPIAddr, "id", &helmID),
					checkKubeAPIDevices(env),
					checkKubeAPIServing(env, &helmID, "noauth"),
				),
			},
			{
				Config:   kubeAPIConfig(envID, "noauth", false),
				PlanOnly: true,
			},
			{
				Config: kubeAPIConfig(envID, "auth", true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(kubeAPIAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					acctest.Capture(kubeAPIAddr, "id", &second),
					checkKubeAPIServing(env, &helmID, "auth"),
					func(*terraform.State) error {
						if second != helmID {
							return fmt.Errorf("the Helm service %s was replaced by %s", helmID, second)
						}
						return nil
					},
				),
			},
		},
	})
}

// The replicas serve TLS with the tailnet's certificate: with HTTPS
// certificates off, the plan refuses the ProxyGroup in either mode.
func TestProxyGroup_kubeAPIServerNeedsHTTPS(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	env.Tailnet.SetHTTPSEnabled(false)
	for _, mode := range []string{"auth", "noauth"} {
		t.Run(mode, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{{
					Config:      kubeAPIConfig(envID, mode, mode == "auth"),
					ExpectError: acctest.ErrorOn("kube_apiserver.mode", "the tailnet settings say HTTPS certificates are off (httpsEnabled is false)"),
				}},
			})
		})
	}
	if g := env.Cluster.ProxyGroups(); len(g) != 0 {
		t.Fatalf("refused plans left ProxyGroups: %+v", g)
	}
}

// The ProxyGroup CRD has the type kube-apiserver from chart 1.86: on a
// cluster whose operator runs an older chart, the plan refuses it on type.
func TestProxyGroup_kubeAPIServerNeedsChart186(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	op := env.InstallOperator(t, acctest.Region)
	env.Tailnet.SetHTTPSEnabled(true)
	if err := env.Qovery.SetHelmChartVersion(op.HelmID, "1.84.3"); err != nil {
		t.Fatal(err)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      kubeAPIConfig(op.EnvironmentID, "noauth", false),
			ExpectError: acctest.ErrorOn("type", `The ProxyGroup CRD of operator chart 1.84.3`),
		}},
	})
}
