package manifestservice_test

import (
	"context"
	"fmt"
	"regexp"
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
	"github.com/qtail/terraform-provider-qtail/internal/fake/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

const egressAddr = "qtail_egress_service.db"

// egressConfig is one egress Service named db in envID; body adds
// attributes.
func egressConfig(envID, body string) string {
	return fmt.Sprintf(`
resource "qtail_egress_service" "db" {
  environment_id = %q
  name           = "db"
  %s
  %s
}
`, envID, connectorChartGit, body)
}

// environmentNamespace is the namespace the fake Qovery API gives the
// environment, through its built-in variable.
func environmentNamespace(t *testing.T, env *acctest.Env, envID string) string {
	t.Helper()
	ns := env.Qovery.ResolvedVariables(envID)["QOVERY_KUBERNETES_NAMESPACE_NAME"]
	if ns == "" {
		t.Fatalf("the environment %s has no QOVERY_KUBERNETES_NAMESPACE_NAME", envID)
	}
	return ns
}

// egressOnCluster returns the egress Service name the cluster runs.
func egressOnCluster(env *acctest.Env, name string) (cluster.EgressService, bool) {
	for _, s := range env.Cluster.EgressServices() {
		if s.Name == name {
			return s, true
		}
	}
	return cluster.EgressService{}, false
}

// checkEgressOnCluster checks that the cluster runs the egress Service db
// in namespace, accepted by the operator, which pointed its externalName
// at a Service of its own namespace (the proxy's, or the ProxyGroup's),
// and lets check look at it.
func checkEgressOnCluster(env *acctest.Env, namespace string, check func(cluster.EgressService) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		s, ok := egressOnCluster(env, "db")
		if !ok {
			return fmt.Errorf("no egress Service db on the cluster; events: %v", env.Cluster.Events())
		}
		ops := env.Cluster.Operators()
		if s.Namespace != namespace || s.Type != "ExternalName" || len(ops) != 1 ||
			!strings.HasSuffix(s.ExternalName, "."+ops[0].Namespace+".svc.cluster.local") {
			return fmt.Errorf("egress Service %+v, want an ExternalName in %s pointed at the operator's namespace", s, namespace)
		}
		if !s.Valid {
			return fmt.Errorf("the operator refused the egress Service: %s", s.Problem)
		}
		if check != nil {
			return check(s)
		}
		return nil
	}
}

// deployProxyGroup deploys an egress ProxyGroup named name in envID the way
// a person would by hand: a Helm service of the tailnet-manifests chart.
func deployProxyGroup(t *testing.T, env *acctest.Env, envID, name string) {
	t.Helper()
	ctx := acctest.Background(t)
	q := env.QoveryClient(t)
	values, err := manifest.RenderProxyGroup(manifest.ProxyGroup{Name: name, Type: manifest.ProxyGroupEgress})
	if err != nil {
		t.Fatal(err)
	}
	h, err := q.CreateHelm(ctx, envID, &qovery.HelmRequest{
		Name: "proxygroup-" + name,
		Source: qovery.HelmSourceRequest{GitRepository: &qovery.GitRepository{
			URL: "https://github.com/qtail/terraform-provider-qtail.git", RootPath: "/examples/charts/tailnet-manifests",
		}},
		AllowClusterWideResources: true,
		ValuesOverride: qovery.HelmValuesOverride{File: &qovery.HelmValuesFile{Raw: &qovery.HelmRawValues{
			Values: []qovery.HelmRawValuesFile{{Name: manifest.ManifestsFileName, Content: values}},
		}}},
	})
	if err != nil {
		t.Fatalf("creating the ProxyGroup's Helm service: %v", err)
	}
	before, err := q.GetHelmStatus(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.DeployHelm(ctx, h.ID, nil); err != nil {
		t.Fatalf("deploying the ProxyGroup: %v", err)
	}
	get := func(ctx2 context.Context) (*qovery.Status, error) { return q.GetHelmStatus(ctx2, h.ID) }
	if _, err := qovery.WaitForDeployment(ctx, get, qovery.WaitOptions{PollInterval: 5 * time.Millisecond, Since: before}); err != nil {
		t.Fatalf("ProxyGroup deployment: %v", err)
	}
}

func TestEgressService_fqdnCreatesImportsAndDestroys(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	ns := environmentNamespace(t, env, envID)
	dnsName := "db." + ns + ".svc.cluster.local"
	config := egressConfig(envID, `tailnet_fqdn = "db.tail1234.ts.net"`)
	var helmID string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(egressAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("helm_service_name"), knownvalue.StringExact("tailscale-egress-db")),
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("namespace"), knownvalue.StringExact(ns)),
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("cluster_dns_name"), knownvalue.StringExact(dnsName)),
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("cluster_wide_resources_allowed"), knownvalue.Bool(false)),
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("values"), knownvalue.StringRegexp(acctest.ErrorRE("tailscale.com/tailnet-fqdn: db.tail1234.ts.net"))),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(egressAddr, tfjsonpath.New("deployed"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(egressAddr, tfjsonpath.New("cluster_wide_resources_allowed"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(egressAddr, tfjsonpath.New("cluster_dns_name"), knownvalue.StringRegexp(regexp.MustCompile(`^db\.z[0-9a-f]+-.+\.svc\.cluster\.local$`))),
					statecheck.ExpectKnownValue(egressAddr, tfjsonpath.New("cluster_dns_name"), knownvalue.StringExact(dnsName)),
					statecheck.ExpectKnownValue(egressAddr, tfjsonpath.New("tailnet_ip"), knownvalue.Null()),
					statecheck.ExpectKnownValue(egressAddr, tfjsonpath.New("ports"), knownvalue.Null()),
				},
				Check: resource.ComposeTestCheckFunc(
					acctest.Capture(egressAddr, "id", &helmID),
					func(*terraform.State) error {
						h, ok := env.Qovery.Helm(helmID)
						if !ok {
							return fmt.Errorf("no Helm service %s", helmID)
						}
						if h.AllowClusterWideResources || h.Name != "tailscale-egress-db" {
							return fmt.Errorf("Helm service %+v", h)
						}
						if h.ValuesOverride.File == nil || h.ValuesOverride.File.Raw == nil || len(h.ValuesOverride.File.Raw.Values) != 1 {
							return fmt.Errorf("values override %+v", h.ValuesOverride)
						}
						f := h.ValuesOverride.File.Raw.Values[0]
						e, err := manifest.ReadEgressService(f.Content)
						if f.Name != manifest.ManifestsFileName || err != nil {
							return fmt.Errorf("values file %s: %v", f.Name, err)
						}
						if e.Name != "db" || e.TailnetFQDN != "db.tail1234.ts.net" || e.TailnetIP != "" || e.ProxyGroup != "" || len(e.Ports) != 0 {
							return fmt.Errorf("egress Service in the values: %+v", e)
						}
						return nil
					},
					checkEgressOnCluster(env, ns, func(s cluster.EgressService) error {
						if s.TailnetFQDN != "db.tail1234.ts.net" {
							return fmt.Errorf("the cluster's Service targets %q", s.TailnetFQDN)
						}
						return nil
					}),
				),
			},
			{
				// A plan-only step fails on any change.
				Config:   config,
				PlanOnly: true,
			},
			{
				ResourceName:                         egressAddr,
				ImportState:                          true,
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "id",
				ImportStateVerifyIgnore:              []string{"timeouts"},
			},
		},
		CheckDestroy: func(*terraform.State) error {
			if _, ok := env.Qovery.Helm(helmID); ok {
				return fmt.Errorf("the Helm service %s is still there", helmID)
			}
			if _, ok := egressOnCluster(env, "db"); ok {
				return fmt.Errorf("the egress Service is still on the cluster")
			}
			return nil
		},
	})
}

func TestEgressService_tailnetIPThroughProxyGroup(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	deployProxyGroup(t, env, envID, "egress")
	ns := environmentNamespace(t, env, envID)
	config := egressConfig(envID, `tailnet_ip  = "100.64.0.1"
  proxy_group = "egress"
  ports       = ["tcp:5432", "udp:53"]`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(egressAddr, tfjsonpath.New("tailnet_fqdn"), knownvalue.Null()),
					statecheck.ExpectKnownValue(egressAddr, tfjsonpath.New("ports"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringExact("tcp:5432"), knownvalue.StringExact("udp:53"),
					})),
					statecheck.ExpectKnownValue(egressAddr, tfjsonpath.New("namespace"), knownvalue.StringExact(ns)),
				},
				Check: checkEgressOnCluster(env, ns, func(s cluster.EgressService) error {
					want := []cluster.ServicePort{{Name: "tcp-5432", Port: 5432, Protocol: "TCP"}, {Name: "udp-53", Port: 53, Protocol: "UDP"}}
					if s.TailnetIP != "100.64.0.1" || s.ProxyGroup != "egress" || fmt.Sprint(s.Ports) != fmt.Sprint(want) {
						return fmt.Errorf("the cluster's Service: %+v", s)
					}
					return nil
				}),
			},
			{
				Config:   config,
				PlanOnly: true,
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

func TestEgressService_switchingTargetUpdatesInPlace(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	ns := environmentNamespace(t, env, envID)
	var helmID string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: egressConfig(envID, `tailnet_fqdn = "db.tail1234.ts.net."
  ports = ["tcp:5432"]`),
				ConfigStateChecks: []statecheck.StateCheck{
					// The trailing dot is kept as written.
					statecheck.ExpectKnownValue(egressAddr, tfjsonpath.New("tailnet_fqdn"), knownvalue.StringExact("db.tail1234.ts.net.")),
				},
				Check: resource.ComposeTestCheckFunc(
					acctest.Capture(egressAddr, "id", &helmID),
					checkEgressOnCluster(env, ns, nil),
				),
			},
			{
				Config: egressConfig(envID, `tailnet_ip = "fd7a:115c:a1e0::1"
  ports = ["tcp:5432"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(egressAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("cluster_dns_name"), knownvalue.StringExact("db."+ns+".svc.cluster.local")),
				}},
				Check: resource.ComposeTestCheckFunc(
					func(s *terraform.State) error {
						if id := s.RootModule().Resources[egressAddr].Primary.ID; id != helmID {
							return fmt.Errorf("the Helm service changed from %s to %s", helmID, id)
						}
						if n := env.DeployCount(helmID); n != 2 {
							return fmt.Errorf("%d deployments, want 2", n)
						}
						return nil
					},
					checkEgressOnCluster(env, ns, func(s cluster.EgressService) error {
						if s.TailnetIP != "fd7a:115c:a1e0::1" || s.TailnetFQDN != "" {
							return fmt.Errorf("the cluster's Service: %+v", s)
						}
						return nil
					}),
				),
			},
			{
				// A new name is a new Service: replaced, with its DNS name
				// in the plan.
				Config: strings.Replace(egressConfig(envID, `tailnet_ip = "fd7a:115c:a1e0::1"
  ports = ["tcp:5432"]`), `name           = "db"`, `name = "pg"`, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(egressAddr, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("cluster_dns_name"), knownvalue.StringExact("pg."+ns+".svc.cluster.local")),
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("helm_service_name"), knownvalue.StringExact("tailscale-egress-pg")),
				}},
				Check: func(*terraform.State) error {
					if _, ok := egressOnCluster(env, "db"); ok {
						return fmt.Errorf("the Service db is still on the cluster")
					}
					if s, ok := egressOnCluster(env, "pg"); !ok || !s.Valid {
						return fmt.Errorf("the Service pg is not on the cluster, or refused: %+v", s)
					}
					return nil
				},
			},
		},
	})
}

func TestEgressService_invalidInputsCreateNothing(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	envID := env.Seed().Regions[acctest.Region].EnvironmentID
	ns := environmentNamespace(t, env, envID)
	longName := "a" + strings.Repeat("b", 62-len(ns))
	cases := []struct {
		name, body, want string
	}{
		{"fqdn and ip", `tailnet_fqdn = "db.tail1234.ts.net"
  tailnet_ip = "100.64.0.1"`, "Two Egress Targets"},
		{"no target", `ports = ["tcp:5432"]`, "No Egress Target"},
		{"short name", `tailnet_fqdn = "db"`, "full MagicDNS name"},
		{"fqdn with a port", `tailnet_fqdn = "db.tail1234.ts.net:5432"`, "not a DNS name"},
		{"fqdn with an empty label", `tailnet_fqdn = "db..ts.net"`, "not a DNS name"},
		{"bad ip", `tailnet_ip = "100.64.0.256"`, "not an IPv4 or IPv6 address"},
		{"ip with prefix", `tailnet_ip = "100.64.0.1/32"`, "without prefix length"},
		{"port zero", `tailnet_ip = "100.64.0.1"
  ports = ["tcp:0"]`, "not a number from 1 to 65535"},
		{"port too high", `tailnet_ip = "100.64.0.1"
  ports = ["tcp:65536"]`, "not a number from 1 to 65535"},
		{"sctp", `tailnet_ip = "100.64.0.1"
  ports = ["sctp:5"]`, `the protocol "sctp" is not tcp or udp`},
		{"no protocol", `tailnet_ip = "100.64.0.1"
  ports = ["5432"]`, "give the protocol and the port"},
		{"upper case", `tailnet_ip = "100.64.0.1"
  ports = ["TCP:5432"]`, "lower case: tcp:5432"},
		{"leading zero", `tailnet_ip = "100.64.0.1"
  ports = ["tcp:05432"]`, "without sign or leading zeros"},
		{"duplicate ports", `tailnet_ip = "100.64.0.1"
  ports = ["tcp:5432", "udp:5432", "tcp:5432"]`, "tcp:5432 is listed twice (also at index 0)"},
		{"empty ports", `tailnet_ip = "100.64.0.1"
  ports = []`, "at least 1"},
		{"proxy group without ports", `tailnet_ip = "100.64.0.1"
  proxy_group = "egress"`, "Ports Required With a ProxyGroup"},
		{"bad proxy group", `tailnet_ip = "100.64.0.1"
  proxy_group = "Egress"
  ports = ["tcp:5432"]`, "not a valid Kubernetes name"},
		{"bad name", `tailnet_ip = "100.64.0.1"`, "not a valid Service name"},
		{"name starting with a digit", `tailnet_ip = "100.64.0.1"`, "not a valid Service name"},
		{"proxy hostname too long", `tailnet_ip = "100.64.0.1"`, "Service Name Too Long"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			config := egressConfig(envID, tc.body)
			rename := map[string]string{"bad name": "Db_1", "name starting with a digit": "1db", "proxy hostname too long": longName}
			if n, ok := rename[tc.name]; ok {
				config = strings.Replace(config, `name           = "db"`, fmt.Sprintf("name = %q", n), 1)
			}
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{{
					Config:      config,
					PlanOnly:    true,
					ExpectError: acctest.ErrorRE(tc.want),
				}},
			})
		})
	}
	if n := env.Calls("POST /qovery/environment/{environmentId}/helm"); n != 0 {
		t.Errorf("%d Helm services created by refused plans", n)
	}
}

func TestEgressService_drift(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	ns := environmentNamespace(t, env, envID)
	config := egressConfig(envID, `tailnet_fqdn = "db.tail1234.ts.net"
  ports = ["tcp:5432"]`)
	var helmID string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check:  acctest.Capture(egressAddr, "id", &helmID),
			},
			{
				// The values edited in the Qovery console.
				PreConfig: func() {
					values, err := manifest.RenderEgressService(manifest.EgressService{Name: "db", TailnetFQDN: "other.tail1234.ts.net",
						Ports: []manifest.ServicePort{{Port: 5433, Protocol: "TCP"}}})
					if err != nil {
						t.Fatal(err)
					}
					if err := env.Qovery.SetHelmRawValues(helmID, qoveryapi.ValuesFile{Name: manifest.ManifestsFileName, Content: values}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(egressAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("tailnet_fqdn"), knownvalue.StringExact("db.tail1234.ts.net")),
				}},
				Check: checkEgressOnCluster(env, ns, func(s cluster.EgressService) error {
					if s.TailnetFQDN != "db.tail1234.ts.net" || len(s.Ports) != 1 || s.Ports[0].Port != 5432 {
						return fmt.Errorf("the cluster's Service: %+v", s)
					}
					return nil
				}),
			},
			{
				// Cluster-wide resources turned on in the console.
				PreConfig: func() {
					if err := env.Qovery.SetHelmAllowClusterWideResources(helmID, true); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(egressAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("cluster_wide_resources_allowed"), knownvalue.Bool(false)),
				}},
				Check: func(*terraform.State) error {
					if h, _ := env.Qovery.Helm(helmID); h.AllowClusterWideResources {
						return fmt.Errorf("cluster-wide resources are still allowed")
					}
					return nil
				},
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
					plancheck.ExpectResourceAction(egressAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(egressAddr, tfjsonpath.New("cluster_dns_name"), knownvalue.StringExact("db."+ns+".svc.cluster.local")),
				}},
				Check: checkEgressOnCluster(env, ns, nil),
			},
			{
				Config:   config,
				PlanOnly: true,
			},
		},
	})
}

// An egress Service that names an ingress qtail_proxy_group of the plan is
// refused before anything is created.
func TestEgressService_throughAnIngressGroupIsRefused(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	before := env.Calls("POST /qovery/environment/{environmentId}/helm")
	config := proxyGroupConfig(envID, `type = "ingress"`) + egressConfig(envID, `tailnet_ip = "100.64.0.9"
  ports = ["tcp:5432"]
  proxy_group = qtail_proxy_group.ingress.name`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      config,
			ExpectError: acctest.ErrorRE(`ProxyGroup Not of Type Egress`),
		}},
	})
	if n := env.Calls("POST /qovery/environment/{environmentId}/helm") - before; n != 0 {
		t.Errorf("%d Helm services created by a refused plan", n)
	}
}

// A Helm service made by hand with the name qtail would give the Service
// is refused at plan, with the import command that adopts it.
func TestEgressService_helmServiceNameTakenIsRefusedAtPlan(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	taken := env.CreateManifestService(t, "tailscale-egress-db", "manifests: []\n")
	before := env.Calls("POST /qovery/environment/{environmentId}/helm")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: egressConfig(envID, `tailnet_fqdn = "db.tail4f2a.ts.net"
  ports = ["tcp:5432"]`),
			ExpectError: regexp.MustCompile(`Helm Service Name Taken[\s\S]*terraform import qtail_egress_service.NAME ` + taken),
		}},
	})
	if n := env.Calls("POST /qovery/environment/{environmentId}/helm") - before; n != 0 {
		t.Errorf("%d Helm services created by a refused plan", n)
	}
}
