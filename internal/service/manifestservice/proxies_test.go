package manifestservice_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

// What the operator needs to bring up a proxy, as the real one behaves:
// the tags its OAuth client can apply, a free hostname, a Ready
// ProxyClass, the services scope for ingress ProxyGroups.

// proxyClassValues is a values file of the tailnet-manifests chart with
// one ProxyClass; spec is its spec in YAML flow style.
func proxyClassValues(name, spec string) string {
	return fmt.Sprintf("manifests:\n  - {apiVersion: tailscale.com/v1alpha1, kind: ProxyClass, metadata: {name: %s}, spec: %s}\n", name, spec)
}

// deviceOf returns the tailnet's device with this hostname, or fails.
func deviceOf(env *acctest.Env, hostname string) (tailnetapi.Device, error) {
	devs := env.DevicesNamed(hostname)
	if len(devs) != 1 {
		return tailnetapi.Device{}, fmt.Errorf("want one device named %s, the tailnet has %+v", hostname, devs)
	}
	return devs[0], nil
}

// An egress Service without a ProxyGroup gets a proxy device of its own:
// planned (hostname, tags), waited for, recorded, renamed in place, and
// replaced with new tags.
func TestEgressService_proxyDeviceIsPlannedWaitedForAndRenamed(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	env.DeclareTagOwners(t, map[string][]string{"tag:k8s-db": {"tag:k8s-operator"}})
	ns := environmentNamespace(t, env, envID)
	target := `tailnet_fqdn = "db.tail1234.ts.net"`
	var deviceID string
	device := func(hostname string, tags string, same bool) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			d, err := deviceOf(env, hostname)
			if err != nil {
				return err
			}
			attrs := s.RootModule().Resources[egressAddr].Primary.Attributes
			if attrs["devices.#"] != "1" || attrs["devices.0.id"] != d.NodeID || attrs["devices.0.hostname"] != hostname {
				return fmt.Errorf("state devices %v, tailnet device %+v", attrs, d)
			}
			if fmt.Sprint(d.Tags) != tags || attrs["proxy_tags.0"] != d.Tags[0] {
				return fmt.Errorf("device %s tagged %v, proxy_tags %s, want %s", hostname, d.Tags, attrs["proxy_tags.0"], tags)
			}
			if same && d.NodeID != deviceID {
				return fmt.Errorf("device %s is %s, want the device %s kept", hostname, d.NodeID, deviceID)
			}
			deviceID = d.NodeID
			return nil
		}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy: func(*terraform.State) error {
			if devs := append(env.DevicesNamed("db-proxy"), env.DevicesNamed(ns+"-db")...); len(devs) != 0 {
				return fmt.Errorf("proxy devices left after destroy: %+v", devs)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: egressConfig(envID, target),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("proxy_hostname"), knownvalue.StringExact(ns+"-db")),
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("proxy_tags"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("tag:k8s")})),
					plancheck.ExpectUnknownValue(egressAddr, tfjsonpath.New("devices")),
				}},
				Check: resource.ComposeTestCheckFunc(device(ns+"-db", "[tag:k8s]", false), checkEgressOnCluster(env, ns, nil)),
			},
			{
				// A new hostname renames the proxy's device.
				Config: egressConfig(envID, target+"\n  hostname = \"db-proxy\""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(egressAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("proxy_hostname"), knownvalue.StringExact("db-proxy")),
				}},
				Check: resource.ComposeTestCheckFunc(device("db-proxy", "[tag:k8s]", true), func(*terraform.State) error {
					if devs := env.DevicesNamed(ns + "-db"); len(devs) != 0 {
						return fmt.Errorf("a device keeps the old hostname: %+v", devs)
					}
					return nil
				}),
			},
			{
				// The proxy keeps the tags of its first auth key: new tags
				// replace the egress Service, and so its proxy.
				Config: egressConfig(envID, target+"\n  hostname = \"db-proxy\"\n  tags = [\"tag:k8s-db\"]"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(egressAddr, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("proxy_tags"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("tag:k8s-db")})),
				}},
				Check: device("db-proxy", "[tag:k8s-db]", false),
			},
			{
				// The proxy's device removed by hand: redeployed, and the
				// operator brings a device back.
				PreConfig: func() {
					if n := env.Tailnet.RemoveDevicesByHostname("db-proxy"); n != 1 {
						t.Fatalf("removed %d devices", n)
					}
				},
				Config: egressConfig(envID, target+"\n  hostname = \"db-proxy\"\n  tags = [\"tag:k8s-db\"]"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(egressAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(egressAddr, tfjsonpath.New("devices")),
				}},
				Check: device("db-proxy", "[tag:k8s-db]", false),
			},
			{
				ResourceName:            egressAddr,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
	})
}

// The plan of an egress Service refuses what would leave it without a
// proxy: tags the operator's OAuth client cannot apply, a hostname that
// another device uses, a ProxyClass the cluster does not have.
func TestEgressService_planRefusesAProxyTheOperatorCannotMake(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	env.DeclareTagOwners(t, map[string][]string{"tag:ops-only": {"group:platform-ops"}})
	taken := env.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: "db-proxy", User: "alice@example.com"})
	target := `tailnet_fqdn = "db.tail1234.ts.net"` + "\n  "
	cases := []struct{ name, body, want string }{
		{"tags the client cannot apply", target + `tags = ["tag:ops-only"]`, `tag:ops-only is owned by [group:platform-ops] in tagOwners`},
		{"hostname of another device", target + `hostname = "db-proxy"`, "already use its hostnames: db-proxy (" + taken.NodeID + ")"},
		{"ProxyClass not on the cluster", target + `proxy_class = "small"`, "renders the ProxyClass small (named in proxy_class)"},
		{"hostname with a ProxyGroup", target + "hostname = \"db-proxy\"\n  proxy_group = \"egress\"\n  ports = [\"tcp:5432\"]", `"proxy_group"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps:                    []resource.TestStep{{Config: egressConfig(envID, tc.body), ExpectError: acctest.ErrorRE(tc.want)}},
			})
		})
	}
	if _, ok := egressOnCluster(env, "db"); ok {
		t.Error("a refused plan deployed the egress Service")
	}
}

// A Connector that names a ProxyClass gets no device until a Helm service
// of the cluster renders that ProxyClass and it is Ready: the plan refuses
// it before, and accepts it once rendered.
func TestConnector_proxyClassMustBeOnTheCluster(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	env.CreateManifestService(t, "proxyclass-broken", proxyClassValues("broken", "{metrics: {enable: false, serviceMonitor: {enable: true}}}"))
	body := func(class string) string {
		return fmt.Sprintf("hostname = \"homelab\"\n  subnet_routes = [\"10.10.0.0/16\"]\n  proxy_class = %q", class)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config:      connectorConfig(envID, body("small")),
				ExpectError: acctest.ErrorRE("No Helm service of cluster " + env.Seed().Regions[acctest.Region].ClusterID + " renders the ProxyClass small"),
			},
			{
				Config:      connectorConfig(envID, body("broken")),
				ExpectError: acctest.ErrorRE("ServiceMonitor can only be enabled if metrics are enabled"),
			},
			{
				PreConfig: func() { deployManifestService(t, env, "proxyclass-small", proxyClassValues("small", "{}")) },
				Config:    connectorConfig(envID, body("small")),
				Check: func(*terraform.State) error {
					_, err := deviceOf(env, "homelab")
					return err
				},
			},
		},
	})
}

// The operator applies its default ProxyClass to ProxyGroups: one that the
// cluster does not have is refused at plan, in the operator's words.
func TestProxyGroup_operatorDefaultProxyClassMustBeOnTheCluster(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	op := env.InstallOperatorWith(t, acctest.Region, acctest.OperatorOptions{
		ExtraValues: map[string]any{"proxyConfig": map[string]any{"defaultProxyClass": "shared"}},
	})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: proxyGroupConfig(op.EnvironmentID, `type = "egress"
  hostname_prefix = "egress-us"`),
			ExpectError: acctest.ErrorRE("renders the ProxyClass shared (the operator's default, proxyConfig.defaultProxyClass in its extra_values)"),
		}},
	})
}

// An exposure through an ingress ProxyGroup is a Tailscale Service that the
// operator creates with its OAuth client, which needs the services scope:
// an ingress ProxyGroup on a cluster whose operator's client lacks it is
// refused at plan; an egress one is fine.
func TestProxyGroup_ingressNeedsTheServicesScope(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	op := env.InstallOperatorWith(t, acctest.Region, acctest.OperatorOptions{Scopes: []string{"devices:core", "auth_keys"}, PlainClientID: true})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: proxyGroupConfig(op.EnvironmentID, `type = "ingress"
  hostname_prefix = "ingress-us"`),
				ExpectError: acctest.ErrorRE(`The operator of cluster ` + op.ClusterID + ` uses the OAuth client ` + op.OAuthClientID +
					`, whose scopes are ["devices:core", "auth_keys"]. An exposure through the ingress ProxyGroup ingress is served as a Tailscale Service`),
			},
			{
				Config: proxyGroupConfig(op.EnvironmentID, `type = "egress"
  hostname_prefix = "egress-us"`),
				Check: func(*terraform.State) error {
					_, err := deviceOf(env, "egress-us-0")
					return err
				},
			},
		},
	})
}

// The operator starts whatever its proxy tags, and mints each proxy's
// auth key with its OAuth client: a device it can no longer mint a key for
// never comes back, and qtail says why at once instead of waiting for the
// timeout.
func TestConnector_waitStopsWhenTheOperatorCannotTagTheDevice(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	op := env.InstallOperatorWith(t, acctest.Region, acctest.OperatorOptions{PlainClientID: true})
	config := connectorConfig(op.EnvironmentID, "hostname = \"homelab\"\n  subnet_routes = [\"10.10.0.0/16\"]\n  timeouts = { update = \"2m\" }")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					env.Tailnet.RemoveDevicesByHostname("homelab")
					env.DeclareTagOwners(t, map[string][]string{"tag:k8s": {"autogroup:admin"}})
				},
				Config: config,
				ExpectError: acctest.ErrorRE(`is deployed, but no device will appear: the operator mints the proxy's auth key with its ` +
					`OAuth client ` + op.OAuthClientID + `, tagged ["tag:k8s-operator"], and the tailnet policy does not let those tags own ["tag:k8s"]`),
			},
		},
	})
}

// A Connector that names no tags gets the operator's proxy tags
// (PROXY_TAGS): an import reads them, and finds its device.
func TestConnector_importWithoutTagsReadsTheOperatorsProxyTags(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	op := env.InstallOperatorWith(t, acctest.Region, acctest.OperatorOptions{ProxyTags: []string{"tag:k8s-proxies"}})
	env.DeclareTagOwners(t, map[string][]string{"tag:k8s-proxies": {"tag:k8s-operator"}})
	values, err := manifest.RenderConnector(manifest.Connector{Name: "homelab", Hostname: "homelab", SubnetRoutes: []string{"10.10.0.0/16"}})
	if err != nil {
		t.Fatal(err)
	}
	helmID := deployManifestService(t, env, "tailscale-connector-homelab", values)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:        connectorConfig(op.EnvironmentID, "hostname = \"homelab\"\n  subnet_routes = [\"10.10.0.0/16\"]\n  tags = [\"tag:k8s-proxies\"]"),
			ResourceName:  connectorAddr,
			ImportState:   true,
			ImportStateId: helmID,
			ImportStateCheck: func(states []*terraform.InstanceState) error {
				attrs := states[0].Attributes
				d, err := deviceOf(env, "homelab")
				if err != nil {
					return err
				}
				if attrs["tags.#"] != "1" || attrs["tags.0"] != "tag:k8s-proxies" || attrs["devices.#"] != "1" || attrs["devices.0.id"] != d.NodeID {
					return fmt.Errorf("imported tags and devices: %v", attrs)
				}
				return nil
			},
		}},
	})
	if strings.Contains(values, "tags") {
		t.Fatalf("the hand-made Connector names tags:\n%s", values)
	}
}
