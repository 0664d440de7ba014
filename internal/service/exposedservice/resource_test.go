package exposedservice_test

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// exposureBillingPorts is what the plan shows for the seeded billing-api.
var exposureBillingPorts = knownvalue.ListExact([]knownvalue.Check{
	knownvalue.ObjectExact(map[string]knownvalue.Check{
		"name": knownvalue.StringExact("https"), "internal_port": knownvalue.Int64Exact(443),
		"protocol": knownvalue.StringExact("HTTP"), "publicly_accessible": knownvalue.Bool(false),
	}),
	knownvalue.ObjectExact(map[string]knownvalue.Check{
		"name": knownvalue.StringExact("admin"), "internal_port": knownvalue.Int64Exact(8080),
		"protocol": knownvalue.StringExact("HTTP"), "publicly_accessible": knownvalue.Bool(false),
	}),
})

// exposureAppWithoutGroups is an application as compared before and after an
// exposure: everything but the attached groups and the bookkeeping.
func exposureAppWithoutGroups(a qoveryapi.Application) qoveryapi.Application {
	a.AnnotationsGroupIDs = nil
	a.UpdatedAt = a.CreatedAt
	a.Status = qoveryapi.ServiceStatus{}
	a.GitRepository.DeployedCommitID = ""
	return a
}

func exposureAnnotationsOf(g qoveryapi.AnnotationsGroup) map[string]string {
	out := map[string]string{}
	for _, a := range g.Annotations {
		out[a.Key] = a.Value
	}
	return out
}

// exposureCheckDevice checks that the tailnet has exactly one device named
// hostname, with these tags, and that the state shows it.
func exposureCheckDevice(env *acctest.Env, hostname string, tags ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		devs := env.DevicesNamed(hostname)
		if len(devs) != 1 {
			return fmt.Errorf("want one device %s on the tailnet, got %d (cluster events: %q)", hostname, len(devs), env.Cluster.Events())
		}
		d := devs[0]
		got := slices.Clone(d.Tags)
		sort.Strings(got)
		if !slices.Equal(got, tags) {
			return fmt.Errorf("device %s has tags %v, want %v", hostname, got, tags)
		}
		rs := s.RootModule().Resources[acctest.ExposedServiceAddr]
		if rs == nil {
			return fmt.Errorf("%s is not in the state", acctest.ExposedServiceAddr)
		}
		a := rs.Primary.Attributes
		if a["device_id"] != d.NodeID {
			return fmt.Errorf("device_id = %q, want the device's node id %q", a["device_id"], d.NodeID)
		}
		if want := hostname + "." + sandbox.MagicDNSSuffix; a["tailnet_fqdn"] != want || d.Name != want {
			return fmt.Errorf("tailnet_fqdn = %q, device name %q, want %q", a["tailnet_fqdn"], d.Name, want)
		}
		if a["tailnet_ips.#"] != fmt.Sprint(len(d.Addresses)) || len(d.Addresses) != 2 {
			return fmt.Errorf("tailnet_ips has %s entries, the device has %v", a["tailnet_ips.#"], d.Addresses)
		}
		for i, ip := range d.Addresses {
			if a[fmt.Sprintf("tailnet_ips.%d", i)] != ip {
				return fmt.Errorf("tailnet_ips.%d = %q, want %q", i, a[fmt.Sprintf("tailnet_ips.%d", i)], ip)
			}
		}
		return nil
	}
}

func TestExposedService_lifecycle(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	hostname := "billing-api-us-east-1"
	original, _ := env.Qovery.Application(appID)
	var groupID string
	var redeploys int

	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy: func(*terraform.State) error {
			if gs := env.Qovery.AnnotationsGroups(); len(gs) != 0 {
				return fmt.Errorf("annotations groups left after destroy: %+v", gs)
			}
			app, _ := env.Qovery.Application(appID)
			if len(app.AnnotationsGroupIDs) != 0 {
				return fmt.Errorf("groups still attached after destroy: %v", app.AnnotationsGroupIDs)
			}
			if !reflect.DeepEqual(exposureAppWithoutGroups(app), exposureAppWithoutGroups(original)) {
				return fmt.Errorf("destroy changed the application:\n got  %+v\n want %+v", exposureAppWithoutGroups(app), exposureAppWithoutGroups(original))
			}
			if devs := env.DevicesNamed(hostname); len(devs) != 0 {
				return fmt.Errorf("proxy device still on the tailnet after destroy: %+v", devs)
			}
			if len(env.Cluster.Proxies()) != 0 {
				return fmt.Errorf("proxy still running: %+v", env.Cluster.Proxies())
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: acctest.ExposedServiceConfig(appID, hostname, `tags = ["tag:k8s-billing"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acctest.ExposedServiceAddr, plancheck.ResourceActionCreate),
					// The plan shows what becomes reachable.
					plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("ports"), exposureBillingPorts),
					plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("annotations_group_name"), knownvalue.StringExact("tailscale-"+hostname)),
					plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("annotations"), knownvalue.MapExact(map[string]knownvalue.Check{
						"tailscale.com/expose":   knownvalue.StringExact("true"),
						"tailscale.com/hostname": knownvalue.StringExact(hostname),
						"tailscale.com/tags":     knownvalue.StringExact("tag:k8s-billing"),
					})),
					plancheck.ExpectUnknownValue(acctest.ExposedServiceAddr, tfjsonpath.New("device_id")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("ports"), exposureBillingPorts),
					statecheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("attached"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("organization_id"), knownvalue.StringExact(env.Seed().OrganizationID)),
					statecheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("tailnet_fqdn"), knownvalue.StringExact(hostname+"."+sandbox.MagicDNSSuffix)),
				},
				Check: resource.ComposeTestCheckFunc(
					acctest.Capture(acctest.ExposedServiceAddr, "annotations_group_id", &groupID),
					resource.TestCheckResourceAttrPtr(acctest.ExposedServiceAddr, "annotations_group_id", &groupID),
					func(s *terraform.State) error {
						if id := s.RootModule().Resources[acctest.ExposedServiceAddr].Primary.ID; id != appID+"/"+groupID {
							return fmt.Errorf("id = %q, want APPLICATION_ID/ANNOTATIONS_GROUP_ID", id)
						}
						g, ok := env.Qovery.AnnotationsGroup(groupID)
						if !ok {
							return fmt.Errorf("annotations group %s not in Qovery", groupID)
						}
						want := map[string]string{"tailscale.com/expose": "true", "tailscale.com/hostname": hostname, "tailscale.com/tags": "tag:k8s-billing"}
						if got := exposureAnnotationsOf(g); !reflect.DeepEqual(got, want) || g.Name != "tailscale-"+hostname {
							return fmt.Errorf("group %q has annotations %v, want %v", g.Name, got, want)
						}
						if !slices.Equal(g.Scopes, []string{"SERVICES"}) {
							return fmt.Errorf("group scopes %v, want [SERVICES] only", g.Scopes)
						}
						app, _ := env.Qovery.Application(appID)
						if !slices.Equal(app.AnnotationsGroupIDs, []string{groupID}) {
							return fmt.Errorf("application groups %v, want [%s]", app.AnnotationsGroupIDs, groupID)
						}
						// The round trip of the application's body changed
						// nothing else: ports (with their ids), storage,
						// health checks, resources, Git source.
						if !reflect.DeepEqual(exposureAppWithoutGroups(app), exposureAppWithoutGroups(original)) {
							return fmt.Errorf("attaching changed the application:\n got  %+v\n want %+v", exposureAppWithoutGroups(app), exposureAppWithoutGroups(original))
						}
						if app.Status.State != "DEPLOYED" || app.Status.DeploymentStatus != "UP_TO_DATE" {
							return fmt.Errorf("application not redeployed: %+v", app.Status)
						}
						redeploys = env.Calls(routeRedeployApplication)
						if redeploys != 1 {
							return fmt.Errorf("want one redeployment, got %d", redeploys)
						}
						return nil
					},
					exposureCheckDevice(env, hostname, "tag:k8s-billing"),
				),
			},
			{
				// In place: the proxy class and the group name.
				Config: acctest.ExposedServiceConfig(appID, hostname, `tags = ["tag:k8s-billing"]
  proxy_class            = "small-proxies"
  annotations_group_name = "ts-billing"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acctest.ExposedServiceAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("device_id"), knownvalue.NotNull()),
					// The proxy keeps its name and addresses: the plan says so
					// instead of "(known after apply)".
					plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("tailnet_fqdn"), knownvalue.StringExact(hostname+"."+sandbox.MagicDNSSuffix)),
					plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("tailnet_ips"), knownvalue.ListSizeExact(2)),
					plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("ports"), exposureBillingPorts),
				}},
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttrPtr(acctest.ExposedServiceAddr, "annotations_group_id", &groupID),
					func(*terraform.State) error {
						g, _ := env.Qovery.AnnotationsGroup(groupID)
						if g.Name != "ts-billing" || exposureAnnotationsOf(g)["tailscale.com/proxy-class"] != "small-proxies" {
							return fmt.Errorf("group not updated: %+v", g)
						}
						if n := env.Calls(routeRedeployApplication); n != redeploys+1 {
							return fmt.Errorf("want one more redeployment after the update, got %d then %d", redeploys, n)
						}
						return nil
					},
					exposureCheckDevice(env, hostname, "tag:k8s-billing"),
				),
			},
			{
				ResourceName:      acctest.ExposedServiceAddr,
				ImportState:       true,
				ImportStateVerify: true,
				ImportStateIdFunc: func(*terraform.State) (string, error) { return appID + "/" + groupID, nil },
			},
		},
	})
}

// New timeouts are an update that only saves them: no redeployment.
func TestExposedService_timeoutsChangeRedeploysNothing(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	hostname := "billing-api-us-east-1"
	var redeploys int
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: acctest.ExposedServiceConfig(appID, hostname, `tags = ["tag:k8s-billing"]`),
				Check: func(*terraform.State) error {
					redeploys = env.Calls(routeRedeployApplication)
					return nil
				},
			},
			{
				Config: acctest.ExposedServiceConfig(appID, hostname, `tags = ["tag:k8s-billing"]
  timeouts = { create = "30m", update = "30m" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acctest.ExposedServiceAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("device_id"), knownvalue.NotNull()),
					plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("tailnet_ips"), knownvalue.ListSizeExact(2)),
				}},
				Check: resource.ComposeTestCheckFunc(
					exposureCheckDevice(env, hostname, "tag:k8s-billing"),
					func(*terraform.State) error {
						if n := env.Calls(routeRedeployApplication); n != redeploys {
							return fmt.Errorf("new timeouts redeployed the application: %d redeployments, %d before", n, redeploys)
						}
						return nil
					},
				),
			},
		},
	})
}

func TestExposedService_tagsChangeReplaces(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	hostname := "billing-api-us-east-1"
	var firstGroup, firstDevice string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: acctest.ExposedServiceConfig(appID, hostname, `tags = ["tag:k8s-billing"]`),
				Check: resource.ComposeTestCheckFunc(
					acctest.Capture(acctest.ExposedServiceAddr, "annotations_group_id", &firstGroup),
					acctest.Capture(acctest.ExposedServiceAddr, "device_id", &firstDevice),
					exposureCheckDevice(env, hostname, "tag:k8s-billing"),
				),
			},
			{
				// Back to the operator's default tag: a new proxy.
				Config: acctest.ExposedServiceConfig(appID, hostname, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acctest.ExposedServiceAddr, plancheck.ResourceActionReplace),
					plancheck.ExpectUnknownValue(acctest.ExposedServiceAddr, tfjsonpath.New("device_id")),
				}},
				Check: resource.ComposeTestCheckFunc(
					exposureCheckDevice(env, hostname, "tag:k8s"),
					func(s *terraform.State) error {
						a := s.RootModule().Resources[acctest.ExposedServiceAddr].Primary.Attributes
						if a["device_id"] == firstDevice || a["annotations_group_id"] == firstGroup {
							return fmt.Errorf("the replacement kept the device or the group: %s, %s", a["device_id"], a["annotations_group_id"])
						}
						if _, ok := env.Qovery.AnnotationsGroup(firstGroup); ok {
							return fmt.Errorf("the replaced group %s still exists", firstGroup)
						}
						return nil
					},
				),
			},
		},
	})
}

// exposureDriftCase is one change made outside Terraform after an exposure was
// created, the plan it must give, and a check after the repair.
type exposureDriftCase struct {
	name   string
	drift  func(t *testing.T, env *acctest.Env, appID, groupID string)
	action plancheck.ResourceActionType
	plan   []plancheck.PlanCheck
	check  func(env *acctest.Env, appID, oldGroupID string) resource.TestCheckFunc
	// noRedeploy is set for a repair that changes nothing the
	// application's Service sees: it must not redeploy.
	noRedeploy bool
}

func TestExposedService_drift(t *testing.T) {
	t.Parallel()
	hostname := "billing-api-us-east-1"
	redeployed := func(env *acctest.Env, before *int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			if n := env.Calls(routeRedeployApplication); n != *before+1 {
				return fmt.Errorf("want the repair to redeploy once, redeployments went from %d to %d", *before, n)
			}
			return nil
		}
	}
	attached := func(env *acctest.Env, appID string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			groupID := s.RootModule().Resources[acctest.ExposedServiceAddr].Primary.Attributes["annotations_group_id"]
			app, _ := env.Qovery.Application(appID)
			if !slices.Equal(app.AnnotationsGroupIDs, []string{groupID}) {
				return fmt.Errorf("application groups %v, want [%s]", app.AnnotationsGroupIDs, groupID)
			}
			g, _ := env.Qovery.AnnotationsGroup(groupID)
			want := map[string]string{"tailscale.com/expose": "true", "tailscale.com/hostname": hostname, "tailscale.com/tags": "tag:k8s-billing"}
			if got := exposureAnnotationsOf(g); !reflect.DeepEqual(got, want) {
				return fmt.Errorf("group annotations %v, want %v", got, want)
			}
			return nil
		}
	}
	cases := []exposureDriftCase{
		{
			name: "group detached in the console",
			drift: func(t *testing.T, env *acctest.Env, appID, groupID string) {
				if err := env.Qovery.DetachAnnotationsGroup(appID, groupID); err != nil {
					t.Fatal(err)
				}
			},
			action: plancheck.ResourceActionUpdate,
			plan:   []plancheck.PlanCheck{plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("attached"), knownvalue.Bool(true))},
		},
		{
			name: "hostname annotation edited in the console",
			drift: func(t *testing.T, env *acctest.Env, _, groupID string) {
				err := env.Qovery.SetAnnotations(groupID,
					qoveryapi.Annotation{Key: "tailscale.com/expose", Value: "true"},
					qoveryapi.Annotation{Key: "tailscale.com/hostname", Value: "billing-renamed"},
					qoveryapi.Annotation{Key: "tailscale.com/tags", Value: "tag:k8s-billing"})
				if err != nil {
					t.Fatal(err)
				}
			},
			action: plancheck.ResourceActionUpdate,
			plan: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("hostname"), knownvalue.StringExact(hostname)),
				plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("annotations").AtMapKey("tailscale.com/hostname"), knownvalue.StringExact(hostname)),
			},
		},
		{
			name: "expose annotation switched off in the console",
			drift: func(t *testing.T, env *acctest.Env, _, groupID string) {
				err := env.Qovery.SetAnnotations(groupID,
					qoveryapi.Annotation{Key: "tailscale.com/expose", Value: "false"},
					qoveryapi.Annotation{Key: "tailscale.com/hostname", Value: hostname},
					qoveryapi.Annotation{Key: "tailscale.com/tags", Value: "tag:k8s-billing"})
				if err != nil {
					t.Fatal(err)
				}
				// Deployed that way, the proxy is gone.
				if err := env.Qovery.Deploy(env.ApplicationID(t, acctest.Region, "billing-api")); err != nil {
					t.Fatal(err)
				}
				exposureWaitForNoDevice(t, env, hostname)
			},
			action: plancheck.ResourceActionUpdate,
			plan: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("annotations").AtMapKey("tailscale.com/expose"), knownvalue.StringExact("true")),
				plancheck.ExpectUnknownValue(acctest.ExposedServiceAddr, tfjsonpath.New("device_id")),
			},
		},
		{
			name: "group deleted in the console",
			drift: func(t *testing.T, env *acctest.Env, _, groupID string) {
				if err := env.Qovery.DeleteAnnotationsGroup(groupID); err != nil {
					t.Fatal(err)
				}
			},
			action: plancheck.ResourceActionCreate,
			check: func(_ *acctest.Env, _, oldGroupID string) resource.TestCheckFunc {
				return func(s *terraform.State) error {
					if id := s.RootModule().Resources[acctest.ExposedServiceAddr].Primary.Attributes["annotations_group_id"]; id == oldGroupID {
						return fmt.Errorf("want a new group, got the deleted one %s", id)
					}
					return nil
				}
			},
		},
		{
			name: "ports changed in the console",
			drift: func(t *testing.T, env *acctest.Env, appID, _ string) {
				err := env.Qovery.SetApplicationPorts(appID,
					qoveryapi.Port{Name: "https", InternalPort: 443, Protocol: "HTTP"},
					qoveryapi.Port{Name: "debug", InternalPort: 6060, Protocol: "TCP"})
				if err != nil {
					t.Fatal(err)
				}
			},
			action: plancheck.ResourceActionUpdate,
			plan: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("ports"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectPartial(map[string]knownvalue.Check{"internal_port": knownvalue.Int64Exact(443)}),
					knownvalue.ObjectPartial(map[string]knownvalue.Check{"name": knownvalue.StringExact("debug"), "internal_port": knownvalue.Int64Exact(6060), "protocol": knownvalue.StringExact("TCP")}),
				})),
			},
			check: func(env *acctest.Env, appID, _ string) resource.TestCheckFunc {
				return func(*terraform.State) error {
					if st, _ := env.Qovery.Status(appID); st.DeploymentStatus != "UP_TO_DATE" {
						return fmt.Errorf("the application was not redeployed with its new ports: %+v", st)
					}
					return nil
				}
			},
		},
		{
			name: "group renamed in the console",
			drift: func(_ *testing.T, env *acctest.Env, _, groupID string) {
				env.Qovery.Do(func(st *qoveryapi.State) { st.AnnotationsGroups[groupID].Name = "renamed-by-hand" })
			},
			action:     plancheck.ResourceActionUpdate,
			noRedeploy: true,
			plan: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("annotations_group_name"), knownvalue.StringExact("tailscale-"+hostname)),
				plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("device_id"), knownvalue.NotNull()),
			},
			check: func(env *acctest.Env, _, groupID string) resource.TestCheckFunc {
				return func(*terraform.State) error {
					if g, _ := env.Qovery.AnnotationsGroup(groupID); g.Name != "tailscale-"+hostname {
						return fmt.Errorf("group name not repaired: %q", g.Name)
					}
					return nil
				}
			},
		},
		{
			name: "proxy device removed from the tailnet",
			drift: func(t *testing.T, env *acctest.Env, _, _ string) {
				if n := env.Tailnet.RemoveDevicesByHostname(hostname); n != 1 {
					t.Fatalf("removed %d devices", n)
				}
			},
			action: plancheck.ResourceActionUpdate,
			plan:   []plancheck.PlanCheck{plancheck.ExpectUnknownValue(acctest.ExposedServiceAddr, tfjsonpath.New("device_id"))},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, appID := acctest.NewExposureEnv(t)
			config := acctest.ExposedServiceConfig(appID, hostname, `tags = ["tag:k8s-billing"]`)
			var groupID string
			var redeploys int
			checks := []resource.TestCheckFunc{exposureCheckDevice(env, hostname, "tag:k8s-billing"), attached(env, appID)}
			switch {
			case tc.noRedeploy:
				checks = append(checks, func(*terraform.State) error {
					if n := env.Calls(routeRedeployApplication); n != redeploys {
						return fmt.Errorf("the repair redeployed the application: redeployments went from %d to %d", redeploys, n)
					}
					return nil
				})
			case tc.action == plancheck.ResourceActionUpdate:
				checks = append(checks, redeployed(env, &redeploys))
			}
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{
					{
						Config: config,
						Check:  acctest.Capture(acctest.ExposedServiceAddr, "annotations_group_id", &groupID),
					},
					{
						PreConfig: func() {
							tc.drift(t, env, appID, groupID)
							redeploys = env.Calls(routeRedeployApplication)
						},
						Config: config,
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append([]plancheck.PlanCheck{
							plancheck.ExpectResourceAction(acctest.ExposedServiceAddr, tc.action),
						}, tc.plan...)},
						Check: resource.ComposeTestCheckFunc(append(checks, func(s *terraform.State) error {
							if tc.check == nil {
								return nil
							}
							return tc.check(env, appID, groupID)(s)
						})...),
					},
				},
			})
		})
	}
}

// exposureWaitForNoDevice waits (briefly) until the tailnet has no device named
// hostname: a console deployment runs in the background.
func exposureWaitForNoDevice(t *testing.T, env *acctest.Env, hostname string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if st, _ := env.Qovery.Status(env.ApplicationID(t, acctest.Region, "billing-api")); st.State == "DEPLOYED" && len(env.DevicesNamed(hostname)) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("device %s still on the tailnet (events %q)", hostname, env.Cluster.Events())
}

func TestExposedService_refusedAtPlan(t *testing.T) {
	t.Parallel()
	env, billing := acctest.NewExposureEnv(t)
	ctx := acctest.Background(t)
	org := env.Seed().OrganizationID
	web := env.ApplicationID(t, acctest.Region, "web")
	worker := env.ApplicationID(t, acctest.Region, "worker")
	euBilling := env.ApplicationID(t, "eu-west-3", "billing-api")
	euWeb := env.ApplicationID(t, "eu-west-3", "web")

	// What the tailnet and the organization already hold.
	env.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: "alice-billing", User: "alice@example.com"})
	env.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: "build-server", Tags: []string{"tag:server"}})
	env.DeclareTagOwners(t, map[string][]string{"tag:ops-only": {"group:platform-ops"}, "tag:server": {"group:platform-ops"}})
	q := env.QoveryClient(t)
	expose := func(name, hostname string) string {
		g, err := q.CreateAnnotationsGroup(ctx, org, &qovery.AnnotationsGroupRequest{Name: name, Scopes: []string{"SERVICES"},
			Annotations: []qovery.Annotation{{Key: "tailscale.com/expose", Value: "true"}, {Key: "tailscale.com/hostname", Value: hostname}}})
		if err != nil {
			t.Fatal(err)
		}
		return g.ID
	}
	expose("tailscale-legacy", "legacy-billing")
	webGroup := expose("tailscale-web-by-hand", "web-by-hand")
	if err := env.Qovery.AttachAnnotationsGroup(web, webGroup); err != nil {
		t.Fatal(err)
	}
	groupsBefore := len(env.Qovery.AnnotationsGroups())

	cases := []struct {
		name   string
		config string
		want   string
	}{
		{"no port", acctest.ExposedServiceConfig(worker, "worker", ""), "declares no port"},
		{"unknown application", acctest.ExposedServiceConfig("00000000-0000-4000-8000-000000000000", "ghost", ""), "Application Not Found"},
		{"hostname of a person's device", acctest.ExposedServiceConfig(billing, "alice-billing", ""), `already has a device named "alice-billing"`},
		{"hostname of another tagged device", acctest.ExposedServiceConfig(billing, "build-server", ""), `already has a device named "build-server"`},
		{"hostname of another exposure of the organization", acctest.ExposedServiceConfig(billing, "legacy-billing", ""), `annotations group "tailscale-legacy"`},
		{"application already exposed", acctest.ExposedServiceConfig(web, "web-us-east-1", ""), `already has the annotations group "tailscale-web-by-hand"`},
		{"hostname planned twice", acctest.ExposedServiceConfig(euBilling, "shared-name", "") + `
resource "qtail_exposed_service" "web" {
  application_id = "` + euWeb + `"
  hostname       = "shared-name"
}
`, `Another qtail_exposed_service of this configuration exposes application`},
		{"tag not declared", acctest.ExposedServiceConfig(billing, "billing-api-us-east-1", `tags = ["tag:k8s-unknown"]`),
			`tag:k8s-unknown is not declared in tagOwners, so the operator's tag tag:k8s-operator does not own it`},
		{"tag owned by someone else", acctest.ExposedServiceConfig(billing, "billing-api-us-east-1", `tags = ["tag:ops-only"]`),
			`tag:ops-only is owned by [group:platform-ops] in tagOwners`},
		{"wait without redeploy", acctest.ExposedServiceConfig(billing, "billing-api-us-east-1", `redeploy = false`), "Nothing Would Create the Proxy Device"},
		{"proxy group and wait", acctest.ExposedServiceConfig(billing, "billing-api-us-east-1", `proxy_group = "ingress"`), "Has No Device of Its Own"},
		{"upper-case hostname", acctest.ExposedServiceConfig(billing, "Billing-API", ""), `use lower case ("billing-api")`},
		{"hostname not a label", acctest.ExposedServiceConfig(billing, "-billing", ""), "must be a DNS label"},
		{"hostname too long", acctest.ExposedServiceConfig(billing, strings.Repeat("a", 64), ""), "must be a DNS label"},
		{"invalid tag", acctest.ExposedServiceConfig(billing, "billing-api-us-east-1", `tags = ["k8s-billing"]`), "tags must start with 'tag:'"},
		{"invalid proxy class", acctest.ExposedServiceConfig(billing, "billing-api-us-east-1", `proxy_class = "Small_Proxies"`), "must be the name of a Kubernetes ProxyClass"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps:                    []resource.TestStep{{Config: tc.config, ExpectError: acctest.ErrorRE(tc.want)}},
			})
		})
	}
	if n := len(env.Qovery.AnnotationsGroups()); n != groupsBefore {
		t.Errorf("refused plans created annotations groups: %d, was %d", n, groupsBefore)
	}
	if n := env.Calls(routeEditApplication); n != 0 {
		t.Errorf("refused plans edited applications %d times", n)
	}
	if n := env.Calls(routeRedeployApplication); n != 0 {
		t.Errorf("refused plans redeployed applications %d times", n)
	}
}

func TestExposedService_withoutRedeploy(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	hostname := "billing-api-us-east-1"
	config := acctest.ExposedServiceConfig(appID, hostname, "redeploy = false\n  wait_for_device = false")
	var groupID string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy: func(*terraform.State) error {
			if _, ok := env.Qovery.AnnotationsGroup(groupID); ok {
				return fmt.Errorf("group %s left after destroy", groupID)
			}
			if app, _ := env.Qovery.Application(appID); len(app.AnnotationsGroupIDs) != 0 {
				return fmt.Errorf("group still attached: %v", app.AnnotationsGroupIDs)
			}
			if n := env.Calls(routeRedeployApplication); n != 0 {
				return fmt.Errorf("redeploy = false, yet the application was redeployed %d times", n)
			}
			// Not redeployed: the proxy stays until the next deployment.
			if len(env.DevicesNamed(hostname)) != 1 {
				return fmt.Errorf("the proxy device should stay until the application's next deployment")
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("device_id"), knownvalue.Null()),
					statecheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("tailnet_fqdn"), knownvalue.StringExact(hostname+"."+sandbox.MagicDNSSuffix)),
				},
				Check: resource.ComposeTestCheckFunc(
					acctest.Capture(acctest.ExposedServiceAddr, "annotations_group_id", &groupID),
					func(*terraform.State) error {
						app, _ := env.Qovery.Application(appID)
						if !slices.Equal(app.AnnotationsGroupIDs, []string{groupID}) {
							return fmt.Errorf("group not attached: %v", app.AnnotationsGroupIDs)
						}
						if app.Status.DeploymentStatus != "OUT_OF_DATE" {
							return fmt.Errorf("want the application OUT_OF_DATE until its next deployment, got %+v", app.Status)
						}
						if len(env.DevicesNamed(hostname)) != 0 {
							return fmt.Errorf("a device appeared without a deployment")
						}
						return nil
					},
				),
			},
			{
				// Deployed from the console: the device appears, the
				// refresh fills it in, and there is nothing to change.
				PreConfig: func() {
					if err := env.Qovery.Deploy(appID); err != nil {
						t.Fatal(err)
					}
					exposureWaitForDevice(t, env, hostname)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: exposureCheckDevice(env, hostname, "tag:k8s"),
			},
		},
	})
}

// exposureWaitForDevice waits until a console deployment running in the background
// has brought up the device hostname.
func exposureWaitForDevice(t *testing.T, env *acctest.Env, hostname string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if len(env.DevicesNamed(hostname)) > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("device %s did not appear (events %q)", hostname, env.Cluster.Events())
}

func TestExposedService_failedCreateIsTainted(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	hostname := "billing-api-us-east-1"
	config := acctest.ExposedServiceConfig(appID, hostname, `tags = ["tag:k8s-billing"]`)
	var failedGroup string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					// A 500 on each of the four attempts of acctest's
					// retry policy (a single 500 is retried).
					env.Faults.Add(faults.Rule{Route: routeEditApplication, Status: 500, Count: 4,
						Body: []byte(`{"status":500,"error":"Internal Server Error","detail":"database unavailable"}`)})
				},
				Config:      config,
				ExpectError: acctest.ErrorRE("could not attach it to application " + appID + ". The exposure is saved as tainted"),
			},
			{
				// The group exists and the state knows it: the next plan
				// replaces the tainted exposure.
				PreConfig: func() {
					gs := env.Qovery.AnnotationsGroups()
					if len(gs) != 1 {
						t.Fatalf("want the group of the failed create, got %+v", gs)
					}
					failedGroup = gs[0].ID
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acctest.ExposedServiceAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeTestCheckFunc(
					exposureCheckDevice(env, hostname, "tag:k8s-billing"),
					func(*terraform.State) error {
						if _, ok := env.Qovery.AnnotationsGroup(failedGroup); ok {
							return fmt.Errorf("the group of the failed create was not removed")
						}
						if n := len(env.Qovery.AnnotationsGroups()); n != 1 {
							return fmt.Errorf("want one group, got %d", n)
						}
						return nil
					},
				),
			},
		},
	})
}

func TestExposedService_deviceTimeout(t *testing.T) {
	t.Parallel()
	// The cluster of eu-west-3 has an operator's Helm service that was
	// never deployed: the plan sees an operator, the proxy never appears.
	env := acctest.New(t)
	appID := env.ApplicationID(t, "eu-west-3", "billing-api")
	idle := env.CreateIdleOperator(t, "eu-west-3")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config:      acctest.ExposedServiceConfig(appID, "billing-api-eu-west-3", `timeouts = { create = "1s" }`),
				ExpectError: acctest.ErrorRE(`no device billing-api-eu-west-3 tagged (the operator's default proxy tags) joined the tailnet within the 1s timeout (timeouts.create)`),
			},
			{
				// Once the operator runs, the tainted exposure is replaced.
				PreConfig: func() {
					if err := env.Qovery.DeleteService(idle); err != nil {
						t.Fatal(err)
					}
					for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
						if _, ok := env.Qovery.Helm(idle); !ok {
							break
						}
						if time.Now().After(deadline) {
							t.Fatal("the idle operator was not deleted")
						}
					}
					env.InstallOperator(t, "eu-west-3")
				},
				Config: acctest.ExposedServiceConfig(appID, "billing-api-eu-west-3", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acctest.ExposedServiceAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: exposureCheckDevice(env, "billing-api-eu-west-3", "tag:k8s"),
			},
		},
	})
}

// No operator runs on the application's cluster and none is planned: the
// plan refuses the exposure on application_id, before anything is created.
func TestExposedService_noOperatorRefusedAtPlan(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	appID := env.ApplicationID(t, "eu-west-3", "billing-api")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      acctest.ExposedServiceConfig(appID, "billing-api-eu-west-3", ""),
			ExpectError: regexp.MustCompile(`(?s)No Tailscale Operator on the Cluster.*application_id = .*qtail found no Helm service of the`),
		}},
	})
	if n := len(env.Qovery.AnnotationsGroups()); n != 0 {
		t.Errorf("%d annotations groups created", n)
	}
	if n := env.Calls(routeRedeployApplication); n != 0 {
		t.Errorf("%d redeployments", n)
	}
}

// One application exposed by two resources of a configuration: refused at
// plan on application_id, naming the other exposure's hostname.
func TestExposedService_sameApplicationTwiceRefusedAtPlan(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: acctest.ExposedServiceConfig(appID, "billing-a", "") + fmt.Sprintf(`
resource "qtail_exposed_service" "again" {
  application_id = %q
  hostname       = "billing-b"
}
`, appID),
			ExpectError: regexp.MustCompile(`(?s)Application Exposed Twice.*application_id = .*exposes\s+application\s+` + appID +
				`,\s+at\s+the\s+hostname\s+"billing-[ab]";\s+this\s+one\s+would\s+expose\s+it\s+again\s+at\s+the\s+hostname\s+"billing-[ab]"`),
		}},
	})
	if n := len(env.Qovery.AnnotationsGroups()); n != 0 {
		t.Errorf("%d annotations groups created", n)
	}
}

func TestDeviceDataSource(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	op := env.InstallOperator(t, acctest.Region)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: fmt.Sprintf(`data "qtail_device" "operator" { hostname = %q }`, op.Hostname),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_device.operator", tfjsonpath.New("tags"), knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("tag:k8s-operator")})),
					statecheck.ExpectKnownValue("data.qtail_device.operator", tfjsonpath.New("fqdn"), knownvalue.StringExact(op.Hostname+"."+sandbox.MagicDNSSuffix)),
					statecheck.ExpectKnownValue("data.qtail_device.operator", tfjsonpath.New("connected"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("data.qtail_device.operator", tfjsonpath.New("addresses"), knownvalue.ListSizeExact(2)),
				},
				Check: func(s *terraform.State) error {
					devs := env.DevicesNamed(op.Hostname)
					if got := s.RootModule().Resources["data.qtail_device.operator"].Primary.Attributes["id"]; len(devs) != 1 || got != devs[0].NodeID {
						return fmt.Errorf("id = %q, want the node id of %+v", got, devs)
					}
					return nil
				},
			},
			{
				Config:      `data "qtail_device" "none" { hostname = "nobody-here" }`,
				ExpectError: acctest.ErrorRE(`The tailnet has no device with the hostname "nobody-here"`),
			},
		},
	})
}

// An exposure through an ingress ProxyGroup has no device of its own: the
// operator serves it as the Tailscale Service svc:HOSTNAME, which the
// apply waits for.
func TestExposedService_proxyGroup(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	envID := env.Seed().Regions[acctest.Region].EnvironmentID
	hostname := "billing-api-us-east-1"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: ingressExposureConfig(envID, appID, ""),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("device_id"), knownvalue.Null()),
				statecheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("tailnet_fqdn"), knownvalue.StringExact(hostname+"."+sandbox.MagicDNSSuffix)),
				statecheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("annotations").AtMapKey("tailscale.com/proxy-group"), knownvalue.StringExact("ingress")),
			},
			Check: func(*terraform.State) error {
				if n := env.Calls(routeRedeployApplication); n != 1 {
					return fmt.Errorf("want the application redeployed once, got %d", n)
				}
				if len(env.DevicesNamed(hostname)) != 0 {
					return fmt.Errorf("a ProxyGroup exposure got a device of its own")
				}
				for _, s := range env.Tailnet.Services() {
					if s.Name == "svc:"+hostname {
						return nil
					}
				}
				return fmt.Errorf("no Tailscale Service svc:%s: %+v; cluster events %q", hostname, env.Tailnet.Services(), env.Cluster.Events())
			},
		}},
	})
}

// An application deleted in Qovery answers 403 (or 400 "application does
// not exist"): the refresh proves it gone with its environment's list
// (environment_id) and drops the exposure, and the configuration without
// it applies.
func TestExposedService_applicationDeletedInQovery(t *testing.T) {
	t.Parallel()
	acctest.ForEachDeletedAnswer(t, func(t *testing.T, answer acctest.Option, status int) {
		env, appID := acctest.NewExposureEnv(t, answer)
		envID := env.Seed().Regions[acctest.Region].EnvironmentID
		config := acctest.ExposedServiceConfig(appID, "billing-api-us-east-1", "")
		resource.UnitTest(t, resource.TestCase{
			ProtoV6ProviderFactories: env.Factories(),
			CheckDestroy: func(*terraform.State) error {
				_, err := env.QoveryClient(t).GetApplication(acctest.Background(t), appID)
				return acctest.AnsweredAsDeleted(err, status)
			},
			Steps: []resource.TestStep{
				{
					Config: config,
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("environment_id"), knownvalue.StringExact(envID)),
					},
				},
				{
					PreConfig: func() {
						if err := env.Qovery.DeleteService(appID); err != nil {
							t.Fatal(err)
						}
						for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
							if _, ok := env.Qovery.Application(appID); !ok {
								break
							}
							if time.Now().After(deadline) {
								t.Fatal("the application was not deleted")
							}
						}
					},
					Config: `provider "qtail" {}`,
					Check: func(s *terraform.State) error {
						if _, ok := s.RootModule().Resources[acctest.ExposedServiceAddr]; ok {
							return fmt.Errorf("the exposure of the deleted application is still in the state")
						}
						return nil
					},
				},
			},
		})
	})
}

// Qovery's status says that the redeployment failed and at which step,
// never why: the error names the step and the console page of the
// application's deployment logs, where the reason is.
func TestExposedService_failedRedeploymentSaysWhereTheLogsAre(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	env.Cluster.BreakApplication(appID, "back-off pulling image billing-api:v2")
	config := acctest.ExposedServiceConfig(appID, "billing-api-us-east-1", "")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				ExpectError: regexp.MustCompile(`(?s)Unable to Expose the Application.*could\s+not\s+redeploy\s+application.*` +
					`The\s+deployment\s+of\s+application\s+` + appID + `\s+ended\s+in\s+DEPLOYMENT_ERROR\s+at\s+the\s+step\s+DEPLOYMENT.*` +
					`Qovery's\s+status\s+gives\s+no\s+reason.*` + env.LogsURLPattern(acctest.Region, appID)),
			},
			{
				// The reason is in the logs (the fake's own record). Once
				// the application deploys again, the tainted exposure is
				// replaced.
				PreConfig: func() {
					if st, _ := env.Qovery.Status(appID); !strings.Contains(st.Message, "back-off pulling image") {
						t.Fatalf("the deployment failed for another reason: %q", st.Message)
					}
					env.Cluster.RepairApplication(appID)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acctest.ExposedServiceAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: exposureCheckDevice(env, "billing-api-us-east-1", "tag:k8s"),
			},
		},
	})
}

// A container is exposed as an application is: the group attached to the
// container, the container redeployed, its ports planned; imported as
// container/CONTAINER_ID/GROUP_ID; a group detached in the console is
// attached again.
func TestExposedService_container(t *testing.T) {
	t.Parallel()
	env, _ := acctest.NewExposureEnv(t)
	ctrID := containerID(t, env, acctest.Region, "metrics")
	hostname := "metrics-us-east-1"
	config := containerExposureConfig(ctrID, hostname, `tags = ["tag:k8s-billing"]`)
	var groupID string
	attached := func(*terraform.State) error {
		c, _ := env.Qovery.Container(ctrID)
		if !slices.Contains(c.AnnotationsGroupIDs, groupID) {
			return fmt.Errorf("group %s not attached to the container: %v", groupID, c.AnnotationsGroupIDs)
		}
		return nil
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy: func(*terraform.State) error {
			if c, _ := env.Qovery.Container(ctrID); len(c.AnnotationsGroupIDs) != 0 {
				return fmt.Errorf("groups still attached to the container after destroy: %v", c.AnnotationsGroupIDs)
			}
			if devs := env.DevicesNamed(hostname); len(devs) != 0 {
				return fmt.Errorf("proxy device still on the tailnet after destroy: %+v", devs)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("ports"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectExact(map[string]knownvalue.Check{
							"name": knownvalue.StringExact("metrics"), "internal_port": knownvalue.Int64Exact(9102),
							"protocol": knownvalue.StringExact("HTTP"), "publicly_accessible": knownvalue.Bool(false),
						}),
					})),
				}},
				Check: resource.ComposeTestCheckFunc(
					acctest.Capture(acctest.ExposedServiceAddr, "annotations_group_id", &groupID),
					resource.TestCheckResourceAttrWith(acctest.ExposedServiceAddr, "id", func(v string) error {
						if v != "container/"+ctrID+"/"+groupID {
							return fmt.Errorf("id = %q, want container/%s/%s", v, ctrID, groupID)
						}
						return nil
					}),
					resource.TestCheckNoResourceAttr(acctest.ExposedServiceAddr, "application_id"),
					attached,
					func(*terraform.State) error {
						if n := env.Calls("POST /qovery/container/{containerId}/redeploy"); n != 1 {
							return fmt.Errorf("want one redeployment of the container, got %d", n)
						}
						return nil
					},
					exposureCheckDevice(env, hostname, "tag:k8s-billing"),
				),
			},
			{
				ResourceName:      acctest.ExposedServiceAddr,
				ImportState:       true,
				ImportStateVerify: true,
				ImportStateIdFunc: func(*terraform.State) (string, error) { return "container/" + ctrID + "/" + groupID, nil },
			},
			{
				PreConfig: func() {
					if err := env.Qovery.DetachAnnotationsGroup(ctrID, groupID); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acctest.ExposedServiceAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("attached"), knownvalue.Bool(true)),
				}},
				Check: attached,
			},
		},
	})
}

// Exactly one of application_id and container_id, refused at plan on the
// attribute.
func TestExposedService_applicationOrContainer(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	ctrID := containerID(t, env, acctest.Region, "metrics")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config:   acctest.ExposedServiceConfig(appID, "both", fmt.Sprintf("container_id = %q", ctrID)),
				PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Invalid Attribute Combination.*application_id = .*2 attributes specified when one \(and only one\) of\s+` +
					`\[application_id,container_id\] is required.*container_id = `),
			},
			{
				Config: `
resource "qtail_exposed_service" "billing" {
  hostname = "neither"
}`,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Invalid Attribute Combination.*one \(and only one\) of\s+\[application_id,container_id\] is required`),
			},
		},
	})
	if n := len(env.Qovery.AnnotationsGroups()); n != 0 {
		t.Errorf("%d annotations groups created", n)
	}
}
