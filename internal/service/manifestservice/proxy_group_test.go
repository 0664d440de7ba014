package manifestservice_test

import (
	"fmt"
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
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

const proxyGroupAddr = "qtail_proxy_group.ingress"

// proxyGroupConfig is one ProxyGroup named ingress in envID; body adds
// attributes (the type among them).
func proxyGroupConfig(envID, body string) string {
	return fmt.Sprintf(`
resource "qtail_proxy_group" "ingress" {
  environment_id = %q
  name           = "ingress"
  %s
  %s
}
`, envID, connectorChartGit, body)
}

// checkProxyGroupDevices checks that the tailnet has exactly one device per
// hostname, each tagged tags, and that the state lists them in order.
func checkProxyGroupDevices(env *acctest.Env, tags []string, hostnames ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs := s.RootModule().Resources[proxyGroupAddr]
		if rs == nil {
			return fmt.Errorf("%s is not in the state", proxyGroupAddr)
		}
		a := rs.Primary.Attributes
		if a["devices.#"] != fmt.Sprint(len(hostnames)) {
			return fmt.Errorf("the state lists %s devices, want %d", a["devices.#"], len(hostnames))
		}
		for i, h := range hostnames {
			devs := env.DevicesNamed(h)
			if len(devs) != 1 {
				return fmt.Errorf("want one device %s on the tailnet, got %d (cluster events: %q)", h, len(devs), env.Cluster.Events())
			}
			if !sameStrings(devs[0].Tags, tags) {
				return fmt.Errorf("device %s is tagged %v, want %v", h, devs[0].Tags, tags)
			}
			if got := a[fmt.Sprintf("devices.%d.hostname", i)]; got != h {
				return fmt.Errorf("devices[%d] is %s, want %s", i, got, h)
			}
			if got := a[fmt.Sprintf("devices.%d.id", i)]; got != devs[0].NodeID && got != devs[0].ID {
				return fmt.Errorf("devices[%d] has ID %s, want %s", i, got, devs[0].NodeID)
			}
		}
		return nil
	}
}

// checkNoDevices checks that no device of these hostnames is on the tailnet.
func checkNoDevices(env *acctest.Env, hostnames ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, h := range hostnames {
			if n := len(env.DevicesNamed(h)); n != 0 {
				return fmt.Errorf("%d devices %s still on the tailnet", n, h)
			}
		}
		return nil
	}
}

// clusterProxyGroup returns the ProxyGroup the simulated cluster runs for
// the Helm service helmID.
func clusterProxyGroup(env *acctest.Env, helmID string) (cluster.ProxyGroup, bool) {
	for _, g := range env.Cluster.ProxyGroups() {
		if g.HelmID == helmID {
			return g, true
		}
	}
	return cluster.ProxyGroup{}, false
}

func TestProxyGroup_defaultsImportAndDestroy(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	config := proxyGroupConfig(envID, `type = "ingress"`)
	var helmID string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(proxyGroupAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(proxyGroupAddr, tfjsonpath.New("helm_service_name"), knownvalue.StringExact("tailscale-proxygroup-ingress")),
					plancheck.ExpectKnownValue(proxyGroupAddr, tfjsonpath.New("values"), knownvalue.StringRegexp(acctest.ErrorRE("kind: ProxyGroup"))),
					plancheck.ExpectKnownValue(proxyGroupAddr, tfjsonpath.New("replicas"), knownvalue.Int64Exact(2)),
					plancheck.ExpectKnownValue(proxyGroupAddr, tfjsonpath.New("cluster_wide_resources_allowed"), knownvalue.Bool(true)),
					plancheck.ExpectUnknownValue(proxyGroupAddr, tfjsonpath.New("devices")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(proxyGroupAddr, tfjsonpath.New("deployed"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(proxyGroupAddr, tfjsonpath.New("tags"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("tag:k8s")})),
					statecheck.ExpectKnownValue(proxyGroupAddr, tfjsonpath.New("hostname_prefix"), knownvalue.Null()),
					statecheck.ExpectKnownValue(proxyGroupAddr, tfjsonpath.New("wait_for_devices"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(proxyGroupAddr, tfjsonpath.New("devices").AtSliceIndex(0).AtMapKey("advertised_routes"), knownvalue.ListSizeExact(0)),
				},
				Check: resource.ComposeTestCheckFunc(
					acctest.Capture(proxyGroupAddr, "id", &helmID),
					checkProxyGroupDevices(env, []string{"tag:k8s"}, "ingress-0", "ingress-1"),
					func(*terraform.State) error {
						h, ok := env.Qovery.Helm(helmID)
						if !ok {
							return fmt.Errorf("no Helm service %s", helmID)
						}
						if h.Name != "tailscale-proxygroup-ingress" || !h.AllowClusterWideResources {
							return fmt.Errorf("Helm service %+v", h)
						}
						g, ok := clusterProxyGroup(env, helmID)
						if !ok || g.Type != manifest.ProxyGroupIngress || g.Replicas != 2 {
							return fmt.Errorf("the cluster runs %+v (found %v)", g, ok)
						}
						return nil
					},
				),
			},
			{
				Config:   config,
				PlanOnly: true,
			},
			{
				ResourceName:                         proxyGroupAddr,
				ImportState:                          true,
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "id",
			},
			{
				ResourceName:  proxyGroupAddr,
				ImportState:   true,
				ImportStateId: "ingress",
				ExpectError:   acctest.ErrorRE("is not the ID of the ProxyGroup's Helm service"),
			},
		},
		CheckDestroy: func(s *terraform.State) error {
			if _, ok := env.Qovery.Helm(helmID); ok {
				return fmt.Errorf("the Helm service %s is still there", helmID)
			}
			if _, ok := clusterProxyGroup(env, helmID); ok {
				return fmt.Errorf("the cluster still runs the ProxyGroup")
			}
			return checkNoDevices(env, "ingress-0", "ingress-1")(s)
		},
	})
}

func TestProxyGroup_replicasAndPrefixInPlace(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	body := func(prefix string, n int) string {
		return fmt.Sprintf("type = \"egress\"\n  hostname_prefix = %q\n  replicas = %d", prefix, n)
	}
	var helmID string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: proxyGroupConfig(envID, body("egress-us-east-1", 2)),
			Check: resource.ComposeTestCheckFunc(
				acctest.Capture(proxyGroupAddr, "id", &helmID),
				checkProxyGroupDevices(env, []string{"tag:k8s"}, "egress-us-east-1-0", "egress-us-east-1-1"),
				checkNoDevices(env, "ingress-0"),
			),
		}, {
			Config: proxyGroupConfig(envID, body("egress-us-east-1", 3)),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(proxyGroupAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectUnknownValue(proxyGroupAddr, tfjsonpath.New("devices")),
			}},
			Check: checkProxyGroupDevices(env, []string{"tag:k8s"}, "egress-us-east-1-0", "egress-us-east-1-1", "egress-us-east-1-2"),
		}, {
			Config: proxyGroupConfig(envID, body("egress-us-east-1", 1)),
			Check: resource.ComposeTestCheckFunc(
				checkProxyGroupDevices(env, []string{"tag:k8s"}, "egress-us-east-1-0"),
				checkNoDevices(env, "egress-us-east-1-1", "egress-us-east-1-2"),
			),
		}, {
			Config: proxyGroupConfig(envID, body("egress-use1", 1)),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(proxyGroupAddr, plancheck.ResourceActionUpdate),
			}},
			Check: resource.ComposeTestCheckFunc(
				acctest.Capture(proxyGroupAddr, "id", &helmID),
				checkProxyGroupDevices(env, []string{"tag:k8s"}, "egress-use1-0"),
				checkNoDevices(env, "egress-us-east-1-0"),
			),
		}, {
			Config: proxyGroupConfig(envID, body("egress-use1", 0)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(proxyGroupAddr, tfjsonpath.New("devices"), knownvalue.ListSizeExact(0)),
			},
			Check: checkNoDevices(env, "egress-use1-0"),
		}, {
			Config:   proxyGroupConfig(envID, body("egress-use1", 0)),
			PlanOnly: true,
		}},
	})
}

func TestProxyGroup_typeChangeReplaces(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	var firstID, secondID string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: proxyGroupConfig(envID, `type = "ingress"`),
			Check:  acctest.Capture(proxyGroupAddr, "id", &firstID),
		}, {
			Config: proxyGroupConfig(envID, `type = "egress"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(proxyGroupAddr, plancheck.ResourceActionReplace),
			}},
			Check: resource.ComposeTestCheckFunc(
				acctest.Capture(proxyGroupAddr, "id", &secondID),
				checkProxyGroupDevices(env, []string{"tag:k8s"}, "ingress-0", "ingress-1"),
				func(*terraform.State) error {
					if secondID == firstID {
						return fmt.Errorf("the Helm service %s was kept", firstID)
					}
					if _, ok := env.Qovery.Helm(firstID); ok {
						return fmt.Errorf("the replaced Helm service %s is still there", firstID)
					}
					g, ok := clusterProxyGroup(env, secondID)
					if !ok || g.Type != manifest.ProxyGroupEgress {
						return fmt.Errorf("the cluster runs %+v (found %v)", g, ok)
					}
					return nil
				},
			),
		}, {
			Config:   proxyGroupConfig(envID, `type = "egress"`),
			PlanOnly: true,
		}},
	})
}

func TestProxyGroup_invalidInputsCreateNothing(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	before := env.Calls("POST /qovery/environment/{environmentId}/helm")
	cases := []struct {
		name, config, want string
	}{
		{"bad type", proxyGroupConfig(envID, `type = "Ingress"`), `the type must be "ingress", "egress" or "kube-apiserver"`},
		{"kube-apiserver without its mode", proxyGroupConfig(envID, `type = "kube-apiserver"`), "Missing kube_apiserver"},
		{"kube_apiserver on an ingress group", proxyGroupConfig(envID, "type = \"ingress\"\n  kube_apiserver = { mode = \"auth\" }"),
			"kube_apiserver Without the kube-apiserver Type"},
		{"bad mode", proxyGroupConfig(envID, "type = \"kube-apiserver\"\n  kube_apiserver = { mode = \"true\" }"), `the mode must be "auth" or "noauth"`},
		{"no type", proxyGroupConfig(envID, ``), `"type" is required`},
		{"bad name", strings.Replace(proxyGroupConfig(envID, `type = "ingress"`), `name           = "ingress"`, `name = "Ingress.Group"`, 1),
			"not a valid Kubernetes name"},
		{"bad tag", proxyGroupConfig(envID, "type = \"ingress\"\n  tags = [\"k8s\"]"), "is not a valid tag"},
		{"duplicate tags", proxyGroupConfig(envID, "type = \"ingress\"\n  tags = [\"tag:k8s\", \"tag:k8s\"]"), "duplicate"},
		{"too many replicas", proxyGroupConfig(envID, "type = \"ingress\"\n  replicas = 11"), "between 0 and 10"},
		{"bad prefix", proxyGroupConfig(envID, "type = \"ingress\"\n  hostname_prefix = \"-ingress\""), "pattern for hostnamePrefix"},
		{"prefix too long", proxyGroupConfig(envID, fmt.Sprintf("type = \"ingress\"\n  hostname_prefix = %q\n  replicas = 10", strings.Repeat("p", 62))),
			"Shorten hostname_prefix"},
		{"name too long for the hostnames", strings.Replace(proxyGroupConfig(envID, `type = "ingress"`), `name           = "ingress"`, fmt.Sprintf("name = %q", strings.Repeat("n", 62)), 1),
			"Shorten name, or set a shorter hostname_prefix"},
		{"tag not owned", proxyGroupConfig(envID, "type = \"ingress\"\n  tags = [\"tag:ingress\"]"), "tag:ingress is not declared in tagOwners"},
		{"bad environment", proxyGroupConfig("4a3c0b9e-0000-4000-8000-000000000000", `type = "ingress"`), "Environment Not Found"},
	}
	// The group returns once its parallel subtests are done.
	t.Run("plans", func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				resource.UnitTest(t, resource.TestCase{
					ProtoV6ProviderFactories: env.Factories(),
					Steps:                    []resource.TestStep{{Config: tc.config, ExpectError: acctest.ErrorRE(tc.want)}},
				})
			})
		}
	})
	if n := env.Calls("POST /qovery/environment/{environmentId}/helm") - before; n != 0 {
		t.Errorf("%d Helm services created by refused plans", n)
	}
}

func TestProxyGroup_hostnameTakenIsRefusedAtPlan(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	env.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: "ingress-1", User: "alice@example.com"})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      proxyGroupConfig(envID, `type = "ingress"`),
			ExpectError: acctest.ErrorRE("Hostname Taken on the Tailnet"),
		}},
	})
}

func TestProxyGroup_withoutOperatorTheDeploymentFails(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	envID := env.Seed().Regions[acctest.Region].EnvironmentID
	// The tags are in order, and qtail sees an operator's Helm service:
	// only the running operator is missing.
	env.DeclareTagOwners(t, map[string][]string{"tag:k8s-operator": {}, "tag:k8s": {"tag:k8s-operator"}})
	env.CreateIdleOperator(t, acctest.Region)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      proxyGroupConfig(envID, `type = "ingress"`),
			ExpectError: acctest.ErrorRE("ProxyGroup Deployment Failed"),
		}},
	})
}

func TestProxyGroup_drift(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	config := proxyGroupConfig(envID, `type = "ingress"`)
	var helmID string
	editValues := func(p manifest.ProxyGroup) func() {
		return func() {
			values, err := manifest.RenderProxyGroup(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := env.Qovery.SetHelmRawValues(helmID, qoveryapi.ValuesFile{Name: manifest.ManifestsFileName, Content: values}); err != nil {
				t.Fatal(err)
			}
		}
	}
	one := int64(1)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check:  acctest.Capture(proxyGroupAddr, "id", &helmID),
			},
			{
				// The values edited in the Qovery console.
				PreConfig: editValues(manifest.ProxyGroup{Name: "ingress", Type: manifest.ProxyGroupIngress, Replicas: &one}),
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(proxyGroupAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(proxyGroupAddr, tfjsonpath.New("replicas"), knownvalue.Int64Exact(2)),
				}},
				Check: checkProxyGroupDevices(env, []string{"tag:k8s"}, "ingress-0", "ingress-1"),
			},
			{
				// The type edited in the console: the cluster would refuse
				// it, so the values are written back, in place.
				PreConfig: editValues(manifest.ProxyGroup{Name: "ingress", Type: manifest.ProxyGroupEgress}),
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(proxyGroupAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkProxyGroupDevices(env, []string{"tag:k8s"}, "ingress-0", "ingress-1"),
					func(*terraform.State) error {
						g, ok := clusterProxyGroup(env, helmID)
						if !ok || g.Type != manifest.ProxyGroupIngress {
							return fmt.Errorf("the cluster runs %+v (found %v)", g, ok)
						}
						return nil
					},
				),
			},
			{
				// A device removed from the tailnet.
				PreConfig: func() {
					d, _ := env.DeviceByHostname("ingress-1")
					env.Tailnet.RemoveDevice(d.ID)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(proxyGroupAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(proxyGroupAddr, tfjsonpath.New("devices")),
				}},
				Check: checkProxyGroupDevices(env, []string{"tag:k8s"}, "ingress-0", "ingress-1"),
			},
			{
				// The Helm service deleted in the console: a refresh
				// removes the ProxyGroup from the state.
				PreConfig: func() {
					if err := env.Qovery.DeleteService(helmID); err != nil {
						t.Fatal(err)
					}
				},
				RefreshState: true,
				Check: func(s *terraform.State) error {
					if _, ok := s.RootModule().Resources[proxyGroupAddr]; ok {
						return fmt.Errorf("%s is still in the state", proxyGroupAddr)
					}
					return nil
				},
				RefreshPlanChecks: resource.RefreshPlanChecks{PostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(proxyGroupAddr, plancheck.ResourceActionCreate),
				}},
				ExpectNonEmptyPlan: true,
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(proxyGroupAddr, plancheck.ResourceActionCreate),
				}},
				Check: checkProxyGroupDevices(env, []string{"tag:k8s"}, "ingress-0", "ingress-1"),
			},
			{
				Config:   config,
				PlanOnly: true,
			},
		},
	})
}

// proxyGroupExposureConfig is a ProxyGroup of type typ and an exposure of
// the application appID served through it, with the auto approver of its
// Tailscale Service.
func proxyGroupExposureConfig(envID, typ, appID string) string {
	return proxyGroupConfig(envID, fmt.Sprintf(`type = %q`, typ)) + acctest.ServiceApproverConfig("billing-api-us-east-1", "tag:k8s") +
		acctest.ExposedServiceConfig(appID, "billing-api-us-east-1", `proxy_group     = qtail_proxy_group.ingress.name
  wait_for_device = false
  `+acctest.DependsOnServiceApprover)
}

func TestProxyGroup_exposureThroughAnEgressGroupIsRefused(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	envID := env.Seed().Regions[acctest.Region].EnvironmentID
	before := env.Calls("POST /qovery/environment/{environmentId}/helm")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      proxyGroupExposureConfig(envID, manifest.ProxyGroupEgress, appID),
			ExpectError: acctest.ErrorRE(`declares the ProxyGroup "ingress" on cluster`),
		}},
	})
	if n := env.Calls("POST /qovery/environment/{environmentId}/helm") - before; n != 0 {
		t.Errorf("%d Helm services created by a refused plan", n)
	}
}

func TestProxyGroup_exposureThroughAnIngressGroup(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	envID := env.Seed().Regions[acctest.Region].EnvironmentID
	config := proxyGroupExposureConfig(envID, manifest.ProxyGroupIngress, appID)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("annotations").AtMapKey("tailscale.com/proxy-group"), knownvalue.StringExact("ingress")),
			},
			Check: resource.ComposeTestCheckFunc(
				checkProxyGroupDevices(env, []string{"tag:k8s"}, "ingress-0", "ingress-1"),
				checkNoDevices(env, "billing-api-us-east-1"),
				func(*terraform.State) error {
					for _, e := range env.Cluster.Events() {
						if strings.Contains(e, `served by ProxyGroup "ingress"`) {
							return nil
						}
					}
					return fmt.Errorf("the cluster did not serve the application through the ProxyGroup: %q", env.Cluster.Events())
				},
			),
		}, {
			Config:   config,
			PlanOnly: true,
		}},
	})
}
