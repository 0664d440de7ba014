package manifestservice_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

const connectorAddr = "qtail_connector.homelab"

// connectorChartGit is the chart source of the tests: the chart shipped in
// qtail's repository.
const connectorChartGit = `chart = {
    git_repository = {
      url       = "https://github.com/qtail/terraform-provider-qtail.git"
      root_path = "/examples/charts/tailnet-manifests"
    }
  }`

// connectorConfig is one connector in envID; body adds attributes.
func connectorConfig(envID, body string) string {
	return fmt.Sprintf(`
resource "qtail_connector" "homelab" {
  environment_id = %q
  name           = "homelab"
  %s
  %s
}
`, envID, connectorChartGit, body)
}

// hclList renders strings as an HCL list.
func hclList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// homeLabBody is the recipe's home-lab connector: one device named homelab,
// subnet router for six routes and exit node.
func homeLabBody(extra string) string {
	return fmt.Sprintf("hostname       = \"homelab\"\n  subnet_routes  = %s\n  exit_node      = true\n  %s", hclList(acctest.HomeLabRoutes), extra)
}

// connectorEnv is a world with a running operator in us-east-1; it returns
// the operator's environment.
func connectorEnv(t *testing.T) (*acctest.Env, string) {
	t.Helper()
	env := acctest.New(t)
	op := env.InstallOperator(t, acctest.Region)
	return env, op.EnvironmentID
}

func checkDeviceRoutes(env *acctest.Env, hostname string, advertised, enabled []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		d, ok := env.DeviceByHostname(hostname)
		if !ok {
			return fmt.Errorf("no device %s on the tailnet", hostname)
		}
		if !sameStrings(d.AdvertisedRoutes, advertised) {
			return fmt.Errorf("device %s advertises %v, want %v", hostname, d.AdvertisedRoutes, advertised)
		}
		if !sameStrings(d.EnabledRoutes, enabled) {
			return fmt.Errorf("device %s has %v enabled, want %v", hostname, d.EnabledRoutes, enabled)
		}
		return nil
	}
}

func sameStrings(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestConnector_homeLabApprovesRoutesAndImports(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	var helmID string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: connectorConfig(envID, homeLabBody("approve_routes = true")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(connectorAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("helm_service_name"), knownvalue.StringExact("tailscale-connector-homelab")),
					plancheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("routes_approved"), knownvalue.Bool(true)),
					plancheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("values"), knownvalue.StringRegexp(acctest.ErrorRE("kind: Connector"))),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("deployed"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("cluster_wide_resources_allowed"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("replicas"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("tags"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("tag:k8s")})),
					statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("chart").AtMapKey("git_repository").AtMapKey("branch"), knownvalue.StringExact("main")),
					statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("devices").AtSliceIndex(0).AtMapKey("hostname"), knownvalue.StringExact("homelab")),
					statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("devices").AtSliceIndex(0).AtMapKey("approved_routes"), knownvalue.ListSizeExact(len(acctest.AllHomeLabRoutes))),
				},
				Check: resource.ComposeTestCheckFunc(
					acctest.Capture(connectorAddr, "id", &helmID),
					checkDeviceRoutes(env, "homelab", acctest.AllHomeLabRoutes, acctest.AllHomeLabRoutes),
					func(*terraform.State) error {
						h, ok := env.Qovery.Helm(helmID)
						if !ok {
							return fmt.Errorf("no Helm service %s", helmID)
						}
						if !h.AllowClusterWideResources || h.Source.Git == nil || h.Source.Git.RootPath != "/examples/charts/tailnet-manifests" {
							return fmt.Errorf("Helm service %+v", h)
						}
						return nil
					},
				),
			},
			{
				Config:   connectorConfig(envID, homeLabBody("approve_routes = true")),
				PlanOnly: true,
			},
			{
				ResourceName:                         connectorAddr,
				ImportState:                          true,
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "id",
				// Qovery does not know whether qtail approves the routes:
				// an import takes the default.
				ImportStateVerifyIgnore: []string{"approve_routes", "timeouts"},
			},
		},
	})
}

func TestConnector_autoApproverApprovesWithoutTheAPI(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	config := `
resource "qtail_auto_approver" "lan" {
  route     = "10.20.0.0/16"
  approvers = ["tag:k8s"]
}
` + connectorConfig(envID, `hostname = "homelab"
  subnet_routes = ["10.20.0.0/16", "10.50.0.0/24"]
  depends_on = [qtail_auto_approver.lan]`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("routes_approved"), knownvalue.Bool(false)),
			},
			Check: resource.ComposeTestCheckFunc(
				checkDeviceRoutes(env, "homelab", []string{"10.20.0.0/16", "10.50.0.0/24"}, []string{"10.20.0.0/16"}),
				func(*terraform.State) error {
					if n := env.Calls("POST /tailscale/api/v2/device/{id}/routes"); n != 0 {
						return fmt.Errorf("qtail approved routes through the API %d times without approve_routes", n)
					}
					return nil
				},
			),
		}, {
			Config:   config,
			PlanOnly: true,
		}},
	})
}

func TestConnector_replicasScaleInPlace(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	body := func(n int) string {
		return fmt.Sprintf("hostname_prefix = \"lan\"\n  replicas = %d\n  subnet_routes = [\"10.0.0.0/16\"]\n  approve_routes = true", n)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: connectorConfig(envID, body(2)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("devices"), knownvalue.ListSizeExact(2)),
				statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("devices").AtSliceIndex(1).AtMapKey("hostname"), knownvalue.StringExact("lan-1")),
			},
		}, {
			Config: connectorConfig(envID, body(3)),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(connectorAddr, plancheck.ResourceActionUpdate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("devices"), knownvalue.ListSizeExact(3)),
			},
			Check: checkDeviceRoutes(env, "lan-2", []string{"10.0.0.0/16"}, []string{"10.0.0.0/16"}),
		}, {
			Config: connectorConfig(envID, body(1)),
			Check: func(*terraform.State) error {
				if len(env.DevicesNamed("lan-1")) != 0 || len(env.DevicesNamed("lan-2")) != 0 {
					return fmt.Errorf("scaled-down replicas are still on the tailnet")
				}
				return nil
			},
		}},
	})
}

func TestConnector_invalidInputsCreateNothing(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	envID := env.Seed().Regions[acctest.Region].EnvironmentID
	cases := []struct {
		name, body, want string
	}{
		{"overlapping routes", `subnet_routes = ["10.0.0.0/8", "10.1.0.0/16"]`, "10.1.0.0/16 overlaps 10.0.0.0/8"},
		{"duplicate route", `subnet_routes = ["10.1.0.0/16", "10.1.0.0/16"]`, "listed twice"},
		{"default route", `subnet_routes = ["0.0.0.0/0"]`, "set exit_node = true"},
		{"default IPv6 route", `subnet_routes = ["::/0"]`, "is a default route"},
		{"host bits", `subnet_routes = ["10.1.2.3/16"]`, "Use 10.1.0.0/16"},
		{"not a CIDR", `subnet_routes = ["10.1.0.0"]`, "is not a CIDR"},
		{"hostname with replicas", `hostname = "homelab"
  replicas = 2
  exit_node = true`, "Set hostname_prefix instead"},
		{"hostname and prefix", `hostname = "homelab"
  hostname_prefix = "lab"
  exit_node = true`, "hostname_prefix"},
		{"no role", `hostname = "homelab"`, "subnet router, an exit node, or both"},
		{"replicas without prefix", `replicas = 2
  exit_node = true`, "Set hostname_prefix: replica N is then PREFIX-N"},
		{"empty routes", `subnet_routes = []`, "at least 1"},
		{"approve without waiting", `exit_node = true
  approve_routes = true
  wait_for_devices = false`, "needs wait_for_devices = true"},
		{"bad hostname", `hostname = "Home_Lab"
  exit_node = true`, "Connector CRD's pattern"},
		{"bad tag", `tags = ["k8s"]
  exit_node = true`, "is not a valid tag"},
		{"bad name", `exit_node = true`, "not a valid Kubernetes name"},
		{"default hostname too long", `exit_node = true`, "Default Hostname Too Long"},
	}
	names := map[string]string{"bad name": "Home.Lab", "default hostname too long": strings.Repeat("a", 60)}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			config := connectorConfig(envID, tc.body)
			want := tc.want
			if name, ok := names[tc.name]; ok {
				config = strings.Replace(config, `name           = "homelab"`, fmt.Sprintf("name = %q", name), 1)
			}
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{{
					Config:      config,
					PlanOnly:    true,
					ExpectError: acctest.ErrorRE(want),
				}},
			})
		})
	}
	if n := env.Calls("POST /qovery/environment/{environmentId}/helm"); n != 0 {
		t.Errorf("%d Helm services created by refused plans", n)
	}
}

func TestConnector_tagNotOwnedByTheOperatorIsRefusedAtPlan(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	before := env.Calls("POST /qovery/environment/{environmentId}/helm")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: connectorConfig(envID, `exit_node = true
  tags = ["tag:lan"]`),
			ExpectError: acctest.ErrorRE("tag:lan is not declared in tagOwners"),
		}},
	})
	if n := env.Calls("POST /qovery/environment/{environmentId}/helm") - before; n != 0 {
		t.Errorf("%d Helm services created", n)
	}
}

func TestConnector_hostnameTakenIsRefusedAtPlan(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	env.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: "homelab", User: "alice@example.com"})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      connectorConfig(envID, homeLabBody("")),
			ExpectError: acctest.ErrorRE("Hostname Taken on the Tailnet"),
		}},
	})
}

func TestConnector_withoutOperatorIsRefusedAtPlan(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	envID := env.Seed().Regions[acctest.Region].EnvironmentID
	env.DeclareTagOwners(t, map[string][]string{"tag:k8s-operator": {}, "tag:k8s": {"tag:k8s-operator"}})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      connectorConfig(envID, homeLabBody("")),
			ExpectError: acctest.ErrorRE("No Tailscale Operator on the Cluster"),
		}},
	})
	if n := env.Calls("POST /qovery/environment/{environmentId}/helm"); n != 0 {
		t.Errorf("%d Helm services created", n)
	}
}

func TestConnector_operatorNotRunningFailsTheDeployment(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	envID := env.Seed().Regions[acctest.Region].EnvironmentID
	env.DeclareTagOwners(t, map[string][]string{"tag:k8s-operator": {}, "tag:k8s": {"tag:k8s-operator"}})
	env.CreateIdleOperator(t, acctest.Region)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: connectorConfig(envID, homeLabBody("")),
				ExpectError: regexp.MustCompile(`(?s)Connector Deployment Failed.*ended\s+in\s+DEPLOYMENT_ERROR\s+at\s+the\s+step\s+DEPLOYMENT.*` +
					env.LogsURLPattern(acctest.Region, "")),
			},
			{
				// The reason is in the deployment's logs: the fake's own
				// record. The failed connector is then destroyed.
				PreConfig: func() {
					var failed []string
					for _, h := range env.Qovery.Helms() {
						if st, _ := env.Qovery.Status(h.ID); st.State == "DEPLOYMENT_ERROR" {
							failed = append(failed, st.Message)
						}
					}
					if len(failed) != 1 || !strings.Contains(failed[0], "ensure CRDs are installed first") {
						t.Fatalf("want one deployment failed for want of the operator's CRDs, got %q", failed)
					}
				},
				Config: `provider "qtail" {}`,
			},
		},
	})
}

func TestConnector_drift(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	config := connectorConfig(envID, homeLabBody("approve_routes = true"))
	var helmID, deviceID string
	tn := env.TailnetClient(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeTestCheckFunc(
					acctest.Capture(connectorAddr, "id", &helmID),
					acctest.Capture(connectorAddr, "devices.0.id", &deviceID),
				),
			},
			{
				// A route revoked by hand in the admin console.
				PreConfig: func() {
					routes := slices.DeleteFunc(slices.Clone(acctest.AllHomeLabRoutes), func(r string) bool { return r == "10.20.0.0/16" })
					if err := tn.SetDeviceRoutes(acctest.Background(t), deviceID, routes); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(connectorAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("routes_approved"), knownvalue.Bool(true)),
					// The plan shows exactly the route approved again.
					plancheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("devices").AtSliceIndex(0).AtMapKey("approved_routes"),
						knownvalue.ListSizeExact(len(acctest.AllHomeLabRoutes))),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkDeviceRoutes(env, "homelab", acctest.AllHomeLabRoutes, acctest.AllHomeLabRoutes),
					func(*terraform.State) error {
						// Approving again needs no redeployment.
						if n := env.DeployCount(helmID); n != 1 {
							return fmt.Errorf("%d deployments, want 1", n)
						}
						return nil
					},
				),
			},
			{
				// The values edited in the Qovery console.
				PreConfig: func() {
					c := manifest.Connector{Name: "homelab", Hostname: "homelab", SubnetRoutes: []string{"10.20.0.0/16"}, ExitNode: true}
					values, err := manifest.RenderConnector(c)
					if err != nil {
						t.Fatal(err)
					}
					if err := env.Qovery.SetHelmRawValues(helmID, qoveryapi.ValuesFile{Name: manifest.ManifestsFileName, Content: values}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(connectorAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("subnet_routes"), knownvalue.ListSizeExact(len(acctest.HomeLabRoutes))),
				}},
				Check: checkDeviceRoutes(env, "homelab", acctest.AllHomeLabRoutes, acctest.AllHomeLabRoutes),
			},
			{
				// The device removed from the tailnet.
				PreConfig: func() {
					d, _ := env.DeviceByHostname("homelab")
					env.Tailnet.RemoveDevice(d.ID)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(connectorAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(connectorAddr, tfjsonpath.New("devices")),
				}},
				Check: checkDeviceRoutes(env, "homelab", acctest.AllHomeLabRoutes, acctest.AllHomeLabRoutes),
			},
			{
				// Cluster-wide resources turned off in the console.
				PreConfig: func() {
					if err := env.Qovery.SetHelmAllowClusterWideResources(helmID, false); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(connectorAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("cluster_wide_resources_allowed"), knownvalue.Bool(true)),
				}},
			},
			{
				// The Helm service deleted in the console.
				PreConfig: func() {
					if err := env.Qovery.DeleteService(helmID); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(connectorAddr, plancheck.ResourceActionCreate),
				}},
				Check: checkDeviceRoutes(env, "homelab", acctest.AllHomeLabRoutes, acctest.AllHomeLabRoutes),
			},
			{
				Config:   config,
				PlanOnly: true,
			},
		},
	})
}

func TestConnector_routeApprovedByHandIsNotDrift(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	config := connectorConfig(envID, `hostname = "homelab"
  subnet_routes = ["10.20.0.0/16"]`)
	var deviceID string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: config,
			Check:  acctest.Capture(connectorAddr, "devices.0.id", &deviceID),
		}, {
			PreConfig: func() {
				if err := env.TailnetClient(t).SetDeviceRoutes(acctest.Background(t), deviceID, []string{"10.20.0.0/16"}); err != nil {
					t.Fatal(err)
				}
			},
			Config:   config,
			PlanOnly: true,
		}, {
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("routes_approved"), knownvalue.Bool(true)),
			},
		}},
	})
}

func TestConnector_helmRepositoryChartAndDestroy(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	config := fmt.Sprintf(`
resource "qtail_helm_repository" "manifests" {
  organization_id = %q
  name            = "manifests"
  url             = "https://charts.example.com/qtail"
}

resource "qtail_connector" "homelab" {
  environment_id = %q
  name           = "homelab"
  chart = {
    helm_repository = {
      repository_id = qtail_helm_repository.manifests.id
      chart_version = "0.1.0"
    }
  }
  exit_node = true
}
`, env.Seed().OrganizationID, envID)
	var helmID string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("chart").AtMapKey("helm_repository").AtMapKey("chart_name"), knownvalue.StringExact("tailnet-manifests")),
				statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("devices").AtSliceIndex(0).AtMapKey("hostname"), knownvalue.StringExact("homelab-connector")),
			},
			Check: resource.ComposeTestCheckFunc(
				acctest.Capture(connectorAddr, "id", &helmID),
				checkDeviceRoutes(env, "homelab-connector", manifest.ExitNodeRoutes, nil),
			),
		}},
		CheckDestroy: func(*terraform.State) error {
			if _, ok := env.Qovery.Helm(helmID); ok {
				return fmt.Errorf("the Helm service %s is still there", helmID)
			}
			if len(env.DevicesNamed("homelab-connector")) != 0 {
				return fmt.Errorf("the connector's device is still on the tailnet")
			}
			return nil
		},
	})
}

func TestConnector_tagChangeReplaces(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	env.DeclareTagOwners(t, map[string][]string{"tag:lan": {"tag:k8s-operator"}})
	var before string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: connectorConfig(envID, homeLabBody("")),
			Check:  acctest.Capture(connectorAddr, "id", &before),
		}, {
			Config: connectorConfig(envID, homeLabBody(`tags = ["tag:lan"]`)),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(connectorAddr, plancheck.ResourceActionReplace),
			}},
			Check: func(*terraform.State) error {
				if _, ok := env.Qovery.Helm(before); ok {
					return fmt.Errorf("the replaced Helm service %s is still there", before)
				}
				devs := env.DevicesNamed("homelab")
				if len(devs) != 1 || !slices.Equal(devs[0].Tags, []string{"tag:lan"}) {
					return fmt.Errorf("devices named homelab: %+v", devs)
				}
				return nil
			},
		}},
	})
}

// A route known only at apply (from another resource) leaves the values
// file unknown at plan instead of failing the plan.
func TestConnector_routeKnownOnlyAtApply(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	config := `
resource "terraform_data" "vpc" {
  input = "10.30.0.0/16"
}
` + connectorConfig(envID, `hostname = "homelab"
  subnet_routes = ["10.20.0.0/16", terraform_data.vpc.output]
  tags = [terraform_data.vpc.output == "" ? "tag:none" : "tag:k8s"]`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectUnknownValue(connectorAddr, tfjsonpath.New("values")),
				plancheck.ExpectUnknownValue(connectorAddr, tfjsonpath.New("devices")),
			}},
			Check: checkDeviceRoutes(env, "homelab", []string{"10.20.0.0/16", "10.30.0.0/16"}, nil),
		}, {
			Config:   config,
			PlanOnly: true,
		}},
	})
}

// The Connector's name or tags edited in the values in the Qovery console:
// the plan writes the values back in place, instead of replacing the
// connector (which would give its devices new addresses).
func TestConnector_nameAndTagsEditedInTheConsoleAreWrittenBack(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	config := connectorConfig(envID, homeLabBody(""))
	var helmID, deviceID string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: config,
			Check: resource.ComposeTestCheckFunc(
				acctest.Capture(connectorAddr, "id", &helmID),
				acctest.Capture(connectorAddr, "devices.0.id", &deviceID),
			),
		}, {
			PreConfig: func() {
				c := manifest.Connector{Name: "lab", Hostname: "homelab", SubnetRoutes: acctest.HomeLabRoutes, ExitNode: true, Tags: []string{"tag:lan"}}
				values, err := manifest.RenderConnector(c)
				if err != nil {
					t.Fatal(err)
				}
				if err := env.Qovery.SetHelmRawValues(helmID, qoveryapi.ValuesFile{Name: manifest.ManifestsFileName, Content: values}); err != nil {
					t.Fatal(err)
				}
			},
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(connectorAddr, plancheck.ResourceActionUpdate),
			}},
			Check: func(*terraform.State) error {
				d, ok := env.DeviceByHostname("homelab")
				if !ok || d.NodeID != deviceID && d.ID != deviceID {
					return fmt.Errorf("the connector's device %s was replaced: %+v", deviceID, d)
				}
				return nil
			},
		}, {
			Config:   config,
			PlanOnly: true,
		}},
	})
}

// Approving the routes fails (the credential lacks devices:routes): the
// apply says so, the state keeps the devices, and the next plan approves
// the routes again without redeploying.
func TestConnector_failedApprovalIsRetriedByTheNextApply(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	config := func(approve bool) string {
		return connectorConfig(envID, fmt.Sprintf(`hostname = "homelab"
  subnet_routes = ["10.20.0.0/16"]
  approve_routes = %t`, approve))
	}
	var helmID string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: config(false),
			Check: resource.ComposeTestCheckFunc(
				acctest.Capture(connectorAddr, "id", &helmID),
				checkDeviceRoutes(env, "homelab", []string{"10.20.0.0/16"}, nil),
			),
		}, {
			PreConfig: func() {
				env.Faults.Add(faults.Rule{Route: "POST /tailscale/api/v2/device/{id}/routes", Status: 403,
					Body: json.RawMessage(`{"message":"calling actor does not have enough permissions to perform this function"}`)})
			},
			Config:      config(true),
			ExpectError: acctest.ErrorRE("enough permissions"),
		}, {
			Config: config(true),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(connectorAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("devices").AtSliceIndex(0).AtMapKey("approved_routes"),
					knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("10.20.0.0/16")})),
			}},
			Check: resource.ComposeTestCheckFunc(
				checkDeviceRoutes(env, "homelab", []string{"10.20.0.0/16"}, []string{"10.20.0.0/16"}),
				func(*terraform.State) error {
					if n := env.DeployCount(helmID); n != 1 {
						return fmt.Errorf("%d deployments, want 1", n)
					}
					return nil
				},
			),
		}},
	})
}

// A Connector is cluster-scoped: a second one with the same name, in
// another environment of the same cluster, is refused at plan (Helm would
// refuse to take over the first one's object).
func TestConnector_nameTakenOnTheClusterIsRefusedAtPlan(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	seed := env.Seed()
	other, err := env.Qovery.SeedEnvironment(seed.ProjectID, seed.Regions[acctest.Region].ClusterID, "networking")
	if err != nil {
		t.Fatal(err)
	}
	first := connectorConfig(envID, homeLabBody(""))
	second := strings.NewReplacer(`"homelab" {`, `"again" {`, envID, other, `hostname       = "homelab"`, `hostname = "homelab-2"`).
		Replace(connectorConfig(envID, homeLabBody("")))
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: first,
		}, {
			Config:      first + second,
			ExpectError: acctest.ErrorRE("Connector Name Taken on the Cluster"),
		}},
	})
}

// Qovery answers 403, or 400 "helm does not exist", about a deleted Helm
// service: destroy takes either for "gone" (the environment's list proves
// it) and finishes.
func TestConnector_destroyFinishesWhatQoveryAnswersAboutTheDeleted(t *testing.T) {
	t.Parallel()
	acctest.ForEachDeletedAnswer(t, func(t *testing.T, answer acctest.Option, status int) {
		env := acctest.New(t, answer)
		op := env.InstallOperator(t, acctest.Region)
		var helmID string
		resource.UnitTest(t, resource.TestCase{
			ProtoV6ProviderFactories: env.Factories(),
			CheckDestroy: func(*terraform.State) error {
				if _, ok := env.Qovery.Helm(helmID); ok {
					return fmt.Errorf("the connector's Helm service %s is left after destroy", helmID)
				}
				if _, ok := env.DeviceByHostname("homelab"); ok {
					return fmt.Errorf("the connector's device is left after destroy")
				}
				_, err := env.QoveryClient(t).GetHelm(acctest.Background(t), helmID)
				return acctest.AnsweredAsDeleted(err, status)
			},
			Steps: []resource.TestStep{{
				Config: connectorConfig(op.EnvironmentID, homeLabBody("")),
				Check:  acctest.Capture(connectorAddr, "id", &helmID),
			}},
		})
	})
}
