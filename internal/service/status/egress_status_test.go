package status_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

const callValidatePolicy = "POST /tailscale/api/v2/tailnet/{tailnet}/acl/validate"

// esPolicy lets the default proxies reach the database on PostgreSQL only,
// the proxies of the egress ProxyGroup on PostgreSQL and Redis, and the
// default proxies reach a LAN gateway behind a subnet router.
const esPolicy = `{
	"tagOwners": {
		"tag:k8s-operator": [],
		"tag:k8s":          ["tag:k8s-operator"],
		"tag:k8s-egress":   ["tag:k8s-operator"],
		"tag:db":           ["tag:k8s-operator"],
	},
	"grants": [
		{"src": ["tag:k8s"], "dst": ["tag:db"], "ip": ["tcp:5432"]},
		{"src": ["tag:k8s-egress"], "dst": ["tag:db"], "ip": ["tcp:5432", "tcp:6379"]},
		{"src": ["tag:k8s"], "dst": ["10.20.0.0/16"], "ip": ["tcp:443"]},
	],
}
`

// esCreateEgress creates the Helm service of an egress Service.
func esCreateEgress(t *testing.T, env *acctest.Env, e manifest.EgressService) string {
	t.Helper()
	values, err := manifest.RenderEgressService(e)
	if err != nil {
		t.Fatal(err)
	}
	return env.CreateManifestService(t, "egress-"+e.Name, values)
}

func esPorts(specs ...string) []manifest.ServicePort {
	var out []manifest.ServicePort
	for _, s := range specs {
		var p manifest.ServicePort
		var proto string
		if _, err := fmt.Sscanf(s, "%3s:%d", &proto, &p.Port); err != nil {
			panic(err)
		}
		if proto == "udp" {
			p.Protocol = "UDP"
		} else {
			p.Protocol = "TCP"
		}
		out = append(out, p)
	}
	return out
}

func esPortsExact(ports map[string]bool, order ...string) knownvalue.Check {
	checks := make([]knownvalue.Check, 0, len(order))
	for _, p := range order {
		checks = append(checks, knownvalue.ObjectExact(map[string]knownvalue.Check{
			"port":    knownvalue.StringExact(p),
			"allowed": knownvalue.Bool(ports[p]),
		}))
	}
	return knownvalue.ListExact(checks)
}

func TestEgressStatus(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(esPolicy))
	db := env.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: "db", Tags: []string{"tag:db"}, IPv4: "100.64.0.9"})
	env.Tailnet.AddDevice(tailnetapi.DeviceSpec{
		Hostname: "lan-router", Tags: []string{"tag:k8s"}, AdvertisedRoutes: []string{"10.20.0.0/16"}, EnabledRoutes: []string{"10.20.0.0/16"},
	})
	fqdn := "db." + env.Seed().MagicDNSSuffix

	standalone := esCreateEgress(t, env, manifest.EgressService{Name: "db", TailnetFQDN: fqdn + ".", Ports: esPorts("tcp:5432", "tcp:6379")})
	values, err := manifest.RenderProxyGroup(manifest.ProxyGroup{Name: "egress-pg", Type: manifest.ProxyGroupEgress, Tags: []string{"tag:k8s-egress"}})
	if err != nil {
		t.Fatal(err)
	}
	env.CreateManifestService(t, "proxy-group-egress-pg", values)
	grouped := esCreateEgress(t, env, manifest.EgressService{Name: "db-pg", TailnetFQDN: fqdn, ProxyGroup: "egress-pg", Ports: esPorts("tcp:5432", "tcp:6379")})
	byIP := esCreateEgress(t, env, manifest.EgressService{Name: "db-ip", TailnetIP: "100.64.0.9", Ports: esPorts("tcp:5432", "udp:53")})
	routed := esCreateEgress(t, env, manifest.EgressService{Name: "gateway", TailnetIP: "10.20.0.10", Ports: esPorts("tcp:443")})
	tagged := esCreateEgress(t, env, manifest.EgressService{Name: "db-tagged", TailnetFQDN: fqdn, Tags: []string{"tag:k8s-egress"}, Ports: esPorts("tcp:5432", "tcp:6379")})
	gone := esCreateEgress(t, env, manifest.EgressService{Name: "gone", TailnetFQDN: "gone." + env.Seed().MagicDNSSuffix, Ports: esPorts("tcp:22")})

	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				// The default proxy tag may reach PostgreSQL, not Redis.
				PreConfig: env.Faults.ResetCalls,
				Config:    fmt.Sprintf(`data "qtail_egress_status" "db" { egress_service_id = %q }`, standalone),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("target"), knownvalue.StringExact(fqdn+".")),
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("target_device_id"), knownvalue.StringExact(db.NodeID)),
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("target_addresses"), rsStrings(db.Addresses)),
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("source_tags"), rsStrings([]string{"tag:k8s"})),
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("ports"),
						esPortsExact(map[string]bool{"tcp:5432": true}, "tcp:5432", "tcp:6379")),
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("allowed"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("missing"), rsStrings([]string{
						fmt.Sprintf(`tag:k8s may not reach %s (100.64.0.9) on tcp:6379: add a qtail_grant with src = ["tag:k8s"], `+
							`dst = ["100.64.0.9"] and ip = ["tcp:6379"]`, fqdn),
					})),
				},
				Check: func(*terraform.State) error {
					calls := env.Faults.Calls()
					t.Logf("egress_service_id (standalone proxy): %v", calls)
					// The operator's proxy tags: one lookup of the cluster's
					// operator (projects, environments, Helm services).
					if calls[callGetHelm] != 1 || calls[callListDevices] != 1 || calls[callValidatePolicy] != 1 || calls[callListHelms] != 1 {
						return fmt.Errorf("API calls: %v", calls)
					}
					return nil
				},
			},
			{
				// Through the egress ProxyGroup: its tags, both ports.
				PreConfig: env.Faults.ResetCalls,
				Config:    fmt.Sprintf(`data "qtail_egress_status" "db" { egress_service_id = %q }`, grouped),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("source_tags"), rsStrings([]string{"tag:k8s-egress"})),
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("ports"),
						esPortsExact(map[string]bool{"tcp:5432": true, "tcp:6379": true}, "tcp:5432", "tcp:6379")),
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("allowed"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("missing"), knownvalue.ListExact([]knownvalue.Check{})),
				},
				Check: func(*terraform.State) error {
					calls := env.Faults.Calls()
					t.Logf("egress_service_id (ProxyGroup): %v", calls)
					if calls[callGetHelm] != 1 || calls[callListHelms] != 1 || calls[callListDevices] != 1 || calls[callValidatePolicy] != 1 {
						return fmt.Errorf("API calls: %v", calls)
					}
					return nil
				},
			},
			{
				// Its own proxy, tagged by its tags annotation: those tags.
				Config: fmt.Sprintf(`data "qtail_egress_status" "db" { egress_service_id = %q }`, tagged),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("source_tags"), rsStrings([]string{"tag:k8s-egress"})),
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("allowed"), knownvalue.Bool(true)),
				},
			},
			{
				// By IP, two source tags, two protocols: one call per protocol.
				PreConfig: env.Faults.ResetCalls,
				Config: fmt.Sprintf(`data "qtail_egress_status" "db" {
  egress_service_id = %q
  source_tags       = ["tag:k8s", "tag:k8s-egress"]
}`, byIP),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("target"), knownvalue.StringExact("100.64.0.9")),
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("target_device_id"), knownvalue.StringExact(db.NodeID)),
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("ports"),
						esPortsExact(map[string]bool{"tcp:5432": true}, "tcp:5432", "udp:53")),
					statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("missing"), rsStrings([]string{
						`tag:k8s may not reach 100.64.0.9 on udp:53: add a qtail_grant with src = ["tag:k8s"], dst = ["100.64.0.9"] and ip = ["udp:53"]`,
						`tag:k8s-egress may not reach 100.64.0.9 on udp:53: add a qtail_grant with src = ["tag:k8s-egress"], dst = ["100.64.0.9"] and ip = ["udp:53"]`,
					})),
				},
				Check: func(*terraform.State) error {
					if n := env.Calls(callValidatePolicy); n != 2 {
						return fmt.Errorf("%d validate calls, want one per protocol", n)
					}
					return nil
				},
			},
			{
				// An IP behind a subnet router: no target device, but tested.
				Config: fmt.Sprintf(`data "qtail_egress_status" "gateway" { egress_service_id = %q }`, routed),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_egress_status.gateway", tfjsonpath.New("target_device_id"), knownvalue.Null()),
					statecheck.ExpectKnownValue("data.qtail_egress_status.gateway", tfjsonpath.New("target_addresses"), knownvalue.ListExact([]knownvalue.Check{})),
					statecheck.ExpectKnownValue("data.qtail_egress_status.gateway", tfjsonpath.New("ports"),
						esPortsExact(map[string]bool{"tcp:443": true}, "tcp:443")),
					statecheck.ExpectKnownValue("data.qtail_egress_status.gateway", tfjsonpath.New("allowed"), knownvalue.Bool(true)),
				},
			},
			{
				// A target that is not on the tailnet: nothing to test.
				PreConfig: env.Faults.ResetCalls,
				Config:    fmt.Sprintf(`data "qtail_egress_status" "gone" { egress_service_id = %q }`, gone),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_egress_status.gone", tfjsonpath.New("target_device_id"), knownvalue.Null()),
					statecheck.ExpectKnownValue("data.qtail_egress_status.gone", tfjsonpath.New("ports"), esPortsExact(nil, "tcp:22")),
					statecheck.ExpectKnownValue("data.qtail_egress_status.gone", tfjsonpath.New("allowed"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue("data.qtail_egress_status.gone", tfjsonpath.New("missing"), rsStrings([]string{
						fmt.Sprintf("gone.%s is not on the tailnet: no device has this MagicDNS name; check tailnet_fqdn of the egress "+
							"service (the full name, such as db.tail4f2a.ts.net), or bring the machine onto the tailnet", env.Seed().MagicDNSSuffix),
					})),
				},
				Check: func(*terraform.State) error {
					if n := env.Calls(callValidatePolicy); n != 0 {
						return fmt.Errorf("%d validate calls for a target that is not on the tailnet", n)
					}
					return nil
				},
			},
		},
	})
}

func TestEgressStatusErrors(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	connector := rsCreateConnector(t, env, rsLabConnector())
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config:      `data "qtail_egress_status" "x" { egress_service_id = "3fa85f64-5717-4562-b3fc-2c963f66afa6" }`,
				ExpectError: acctest.ErrorRE("Egress Service Not Found"),
			},
			{
				Config:      fmt.Sprintf(`data "qtail_egress_status" "x" { egress_service_id = %q }`, connector),
				ExpectError: acctest.ErrorRE("is not a qtail_egress_service: its values file qtail-manifests.yaml holds no readable Service"),
			},
			{
				Config: `data "qtail_egress_status" "x" {
  egress_service_id = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
  source_tags       = ["k8s"]
}`,
				PlanOnly:    true,
				ExpectError: acctest.ErrorRE("tags must start with 'tag:'"),
			},
		},
	})
}

// Proxies that name no tags get the operator's proxy tags (PROXY_TAGS):
// a Connector's devices, those of a ProxyGroup, and an egress proxy.
func TestStatusUsesTheOperatorsProxyTags(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(`{
	"tagOwners": {
		"tag:k8s-operator": [],
		"tag:k8s":          ["tag:k8s-operator"],
		"tag:k8s-lab":      ["tag:k8s-operator"],
		"tag:db":           ["tag:k8s-operator"],
	},
	"grants": [
		{"src": ["tag:k8s-lab"], "dst": ["tag:db"], "ip": ["tcp:5432"]},
		{"src": ["group:ops"], "dst": ["10.30.0.0/16"], "ip": ["*"]},
	],
	"groups": {"group:ops": ["carol@example.com"]},
}`))
	env.InstallOperatorWith(t, acctest.Region, acctest.OperatorOptions{ProxyTags: []string{"tag:k8s-lab"}})
	env.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: "db", Tags: []string{"tag:db"}, IPv4: "100.64.0.9"})
	values, err := manifest.RenderProxyGroup(manifest.ProxyGroup{Name: "egress-pg", Type: manifest.ProxyGroupEgress})
	if err != nil {
		t.Fatal(err)
	}
	env.CreateManifestService(t, "proxy-group-egress-pg", values)
	grouped := esCreateEgress(t, env, manifest.EgressService{Name: "db-pg", TailnetIP: "100.64.0.9", ProxyGroup: "egress-pg", Ports: esPorts("tcp:5432")})
	lab := rsCreateConnector(t, env, manifest.Connector{Name: "lab", Hostname: "lab", SubnetRoutes: []string{"10.30.0.0/16"}})
	dev := env.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: "lab", Tags: []string{"tag:k8s-lab"}, AdvertisedRoutes: []string{"10.30.0.0/16"}})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
data "qtail_egress_status" "db" { egress_service_id = %q }
data "qtail_route_status" "lab" { connector_id = %q }
`, grouped, lab),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("source_tags"), rsStrings([]string{"tag:k8s-lab"})),
				statecheck.ExpectKnownValue("data.qtail_egress_status.db", tfjsonpath.New("allowed"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("data.qtail_route_status.lab", tfjsonpath.New("missing"), rsStrings([]string{
					fmt.Sprintf("10.30.0.0/16 is not approved on lab (%s): set approve_routes = true on the connector, add a "+
						"qtail_auto_approver for route:10.30.0.0/16 with the connector's tag (tag:k8s-lab), or approve it in the admin console", dev.NodeID),
				})),
			},
		}},
	})
}
