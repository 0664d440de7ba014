package status_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// Routes of the fakes that a route status read calls.
const (
	callGetHelm     = "GET /qovery/helm/{helmId}"
	callListHelms   = "GET /qovery/environment/{environmentId}/helm"
	callListDevices = "GET /tailscale/api/v2/tailnet/{tailnet}/devices"
	callGetDevice   = "GET /tailscale/api/v2/device/{id}"
	callGetPolicy   = "GET /tailscale/api/v2/tailnet/{tailnet}/acl"
)

// rsLabPolicy approves the home lab's routes for tag:k8s and grants them:
// five subnets by CIDR, one through a hosts alias, the exit node through
// autogroup:internet.
const rsLabPolicy = `{
	"groups": {"group:ops": ["carol@example.com"]},
	"hosts": {"home-lan": "192.168.0.0/24"},
	"tagOwners": {
		"tag:k8s-operator": [],
		"tag:k8s":          ["tag:k8s-operator"],
	},
	"autoApprovers": {
		"routes": {
			"10.0.0.0/8":     ["tag:k8s"],
			"192.168.0.0/24": ["tag:k8s"],
		},
		"exitNode": ["tag:k8s"],
	},
	"grants": [
		// qtail:grant:ops-to-lab
		{"src": ["group:ops"], "dst": ["10.244.0.0/16", "10.10.0.0/16", "10.50.0.0/24", "10.101.0.0/16", "10.20.0.0/16"], "ip": ["*"]},
		{"src": ["group:ops"], "dst": ["home-lan"], "ip": ["tcp:443"]},
		// qtail:grant:internet
		{"src": ["group:ops"], "dst": ["autogroup:internet"], "ip": ["*"]},
	],
}
`

// rsCreateConnector creates the Helm service of a connector and returns its ID.
func rsCreateConnector(t *testing.T, env *acctest.Env, c manifest.Connector) string {
	t.Helper()
	values, err := manifest.RenderConnector(c)
	if err != nil {
		t.Fatal(err)
	}
	return env.CreateManifestService(t, "connector-"+c.Name, values)
}

func rsLabConnector() manifest.Connector {
	return manifest.Connector{Name: "homelab", Hostname: "homelab", SubnetRoutes: acctest.HomeLabRoutes, ExitNode: true}
}

// rsRoute is the expected entry of one route.
type rsRoute struct {
	route      string
	advertised []string // hostnames
	approval   string   // "" for not approved
	grantedBy  []string
}

func (r rsRoute) check() knownvalue.Check {
	exit := r.route == "0.0.0.0/0" || r.route == "::/0"
	return knownvalue.ObjectExact(map[string]knownvalue.Check{
		"route":         knownvalue.StringExact(r.route),
		"exit_node":     knownvalue.Bool(exit),
		"advertised":    knownvalue.Bool(len(r.advertised) > 0),
		"advertised_by": rsStrings(r.advertised),
		"approved":      knownvalue.Bool(r.approval != ""),
		"approval":      knownvalue.StringExact(r.approval),
		"granted":       knownvalue.Bool(len(r.grantedBy) > 0),
		"granted_by":    rsStrings(r.grantedBy),
	})
}

func rsRoutesExact(routes ...rsRoute) knownvalue.Check {
	checks := make([]knownvalue.Check, 0, len(routes))
	for _, r := range routes {
		checks = append(checks, r.check())
	}
	return knownvalue.ListExact(checks)
}

func rsStrings(ss []string) knownvalue.Check {
	checks := make([]knownvalue.Check, 0, len(ss))
	for _, s := range ss {
		checks = append(checks, knownvalue.StringExact(s))
	}
	return knownvalue.ListExact(checks)
}

func TestRouteStatusHomeLabConnector(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(rsLabPolicy))
	id := rsCreateConnector(t, env, rsLabConnector())
	dev := env.Tailnet.AddDevice(tailnetapi.DeviceSpec{
		Hostname: "homelab", Tags: []string{"tag:k8s"}, AdvertisedRoutes: acctest.AllHomeLabRoutes, EnabledRoutes: acctest.AllHomeLabRoutes,
	})

	var checks []rsRoute
	for _, r := range acctest.AllHomeLabRoutes {
		c := rsRoute{route: r, advertised: []string{"homelab"}, approval: "auto_approver", grantedBy: []string{`grants[0] (grant "ops-to-lab")`}}
		switch r {
		case "192.168.0.0/24":
			c.grantedBy = []string{"grants[1]"}
		case "0.0.0.0/0", "::/0":
			c.grantedBy = []string{`grants[2] (grant "internet")`}
		}
		checks = append(checks, c)
	}
	const addr = "data.qtail_route_status.homelab"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			PreConfig: env.Faults.ResetCalls,
			Config:    fmt.Sprintf(`data "qtail_route_status" "homelab" { connector_id = %q }`, id),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("ok"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("missing"), knownvalue.ListExact([]knownvalue.Check{})),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("routes"), rsRoutesExact(checks...)),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("devices"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectExact(map[string]knownvalue.Check{
						"hostname":          knownvalue.StringExact("homelab"),
						"id":                knownvalue.StringExact(dev.NodeID),
						"advertised_routes": rsStrings(acctest.AllHomeLabRoutes),
						// Enabled routes read back sorted by address.
						"approved_routes": rsStrings(tailnet.SortRoutes(slices.Clone(acctest.AllHomeLabRoutes))),
					}),
				})),
			},
			Check: func(*terraform.State) error {
				// Every read costs one Helm service, one device lookup and
				// at most one policy read (the store keeps the file).
				helms, devices, policies := env.Calls(callGetHelm), env.Calls(callListDevices), env.Calls(callGetPolicy)
				t.Logf("connector_id: %d reads: %d Helm GETs, %d device lists, %d policy GETs; all calls %v",
					helms, helms, devices, policies, env.Faults.Calls())
				if helms == 0 || devices != helms || policies > helms {
					return fmt.Errorf("API calls: %d Helm GETs, %d device lists, %d policy GETs", helms, devices, policies)
				}
				return nil
			},
		}},
	})
}

func TestRouteStatusProblems(t *testing.T) {
	t.Parallel()
	// No approver covers 10.20.0.0/16; 10.50.0.0/24 is not granted.
	policy := rsLabPolicy
	policy = rsReplaceOnce(t, policy, `"10.0.0.0/8":     ["tag:k8s"],`, `"10.0.0.0/12": ["tag:k8s"], "10.30.0.0/15": ["tag:k8s"], "10.50.0.0/16": ["tag:k8s"], "10.101.0.0/16": ["tag:k8s"], "10.244.0.0/16": ["tag:k8s"],`)
	policy = rsReplaceOnce(t, policy, `"10.50.0.0/24", `, ``)
	policy = rsReplaceOnce(t, policy, `"10.20.0.0/16"]`, `"10.20.0.0/16", "10.30.0.0/15"]`)
	env := acctest.New(t, acctest.WithPolicy(policy))

	homelab := rsCreateConnector(t, env, rsLabConnector())
	approved := []string{}
	for _, r := range acctest.AllHomeLabRoutes {
		if r != "10.20.0.0/16" {
			approved = append(approved, r)
		}
	}
	dev := env.Tailnet.AddDevice(tailnetapi.DeviceSpec{
		Hostname: "homelab", Tags: []string{"tag:k8s"}, AdvertisedRoutes: acctest.AllHomeLabRoutes, EnabledRoutes: approved,
	})

	// A connector with two replicas: edge-1 is missing, edge-0 does not
	// advertise 10.31.0.0/16 yet (autoApprovers will approve it).
	two := int64(2)
	edge := rsCreateConnector(t, env, manifest.Connector{Name: "edge", HostnamePrefix: "edge", Replicas: &two, SubnetRoutes: []string{"10.30.0.0/16", "10.31.0.0/16"}})
	edge0 := env.Tailnet.AddDevice(tailnetapi.DeviceSpec{
		Hostname: "edge-0", Tags: []string{"tag:k8s"}, AdvertisedRoutes: []string{"10.30.0.0/16"}, EnabledRoutes: []string{"10.30.0.0/16"},
	})
	// A connector scaled to zero carries nothing.
	zero := int64(0)
	idle := rsCreateConnector(t, env, manifest.Connector{Name: "idle", HostnamePrefix: "idle", Replicas: &zero, SubnetRoutes: []string{"10.30.0.0/16"}})
	// An unrelated device with the same routes is not one of edge's.
	env.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: "edge-9", Tags: []string{"tag:k8s"}, AdvertisedRoutes: []string{"10.31.0.0/16"}})

	labChecks := make([]rsRoute, 0, len(acctest.AllHomeLabRoutes))
	for _, c := range []rsRoute{
		{route: "10.244.0.0/16", grantedBy: []string{`grants[0] (grant "ops-to-lab")`}},
		{route: "10.10.0.0/16", grantedBy: []string{`grants[0] (grant "ops-to-lab")`}},
		{route: "10.50.0.0/24", grantedBy: nil},
		{route: "10.101.0.0/16", grantedBy: []string{`grants[0] (grant "ops-to-lab")`}},
		{route: "192.168.0.0/24", grantedBy: []string{"grants[1]"}},
		{route: "10.20.0.0/16", grantedBy: []string{`grants[0] (grant "ops-to-lab")`}},
		{route: "0.0.0.0/0", grantedBy: []string{`grants[2] (grant "internet")`}},
		{route: "::/0", grantedBy: []string{`grants[2] (grant "internet")`}},
	} {
		c.advertised = []string{"homelab"}
		c.approval = "auto_approver"
		if c.route == "10.20.0.0/16" {
			c.approval = ""
		}
		labChecks = append(labChecks, c)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
data "qtail_route_status" "homelab" { connector_id = %q }
data "qtail_route_status" "edge"    { connector_id = %q }
data "qtail_route_status" "idle"    { connector_id = %q }
`, homelab, edge, idle),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.qtail_route_status.homelab", tfjsonpath.New("ok"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue("data.qtail_route_status.homelab", tfjsonpath.New("missing"), rsStrings([]string{
					`10.50.0.0/24 is not granted: no grant or ACL has it (or an address, CIDR or hosts alias within it) in dst; ` +
						`add a qtail_grant with dst = ["10.50.0.0/24"] for those who need it`,
					fmt.Sprintf("10.20.0.0/16 is not approved on homelab (%s): set approve_routes = true on the connector, "+
						"add a qtail_auto_approver for route:10.20.0.0/16 with the connector's tag (tag:k8s), or approve it in the admin console", dev.NodeID),
				})),
				statecheck.ExpectKnownValue("data.qtail_route_status.homelab", tfjsonpath.New("routes"), rsRoutesExact(labChecks...)),

				statecheck.ExpectKnownValue("data.qtail_route_status.edge", tfjsonpath.New("ok"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue("data.qtail_route_status.edge", tfjsonpath.New("missing"), rsStrings([]string{
					"device edge-1 of the connector edge is not on the tailnet: deploy the connector's Helm service, then check " +
						"the Connector's status in the cluster (kubectl describe connector edge) and the operator's logs",
					fmt.Sprintf("10.31.0.0/16 is not advertised by edge-0 (%s): the connector lists it, so deploy the connector's "+
						"Helm service again and check the Connector's status in the cluster (kubectl describe connector edge)", edge0.NodeID),
				})),
				statecheck.ExpectKnownValue("data.qtail_route_status.edge", tfjsonpath.New("routes"), rsRoutesExact(
					rsRoute{route: "10.30.0.0/16", advertised: []string{"edge-0"}, approval: "auto_approver", grantedBy: []string{`grants[0] (grant "ops-to-lab")`}},
					rsRoute{route: "10.31.0.0/16", grantedBy: []string{`grants[0] (grant "ops-to-lab")`}},
				)),
				statecheck.ExpectKnownValue("data.qtail_route_status.idle", tfjsonpath.New("missing"), rsStrings([]string{
					"the connector idle has 0 replicas, so no device carries its routes: set replicas to 1 or more",
				})),
				statecheck.ExpectKnownValue("data.qtail_route_status.idle", tfjsonpath.New("routes"), rsRoutesExact(
					rsRoute{route: "10.30.0.0/16", grantedBy: []string{`grants[0] (grant "ops-to-lab")`}},
				)),
				statecheck.ExpectKnownValue("data.qtail_route_status.edge", tfjsonpath.New("devices"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectExact(map[string]knownvalue.Check{
						"hostname":          knownvalue.StringExact("edge-0"),
						"id":                knownvalue.StringExact(edge0.NodeID),
						"advertised_routes": rsStrings([]string{"10.30.0.0/16"}),
						"approved_routes":   rsStrings([]string{"10.30.0.0/16"}),
					}),
				})),
			},
			Check: func(*terraform.State) error {
				helms, devices := env.Calls(callGetHelm), env.Calls(callListDevices)
				t.Logf("two connectors: %d Helm GETs, %d device lists, %d policy GETs", helms, devices, env.Calls(callGetPolicy))
				return nil
			},
		}},
	})
}

// The device inputs: a device of a user, an ACL-style policy, approval by
// hand and by autoApprovers, check_routes.
func TestRouteStatusDevice(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(`{
	"Groups": {"group:ops": ["carol@example.com"]},
	"TagOwners": {"tag:k8s-operator": [], "tag:k8s": ["tag:k8s-operator"]},
	"AutoApprovers": {"Routes": {"10.60.0.0/16": ["group:ops"]}},
	"ACLs": [
		{"action": "accept", "src": ["group:ops"], "dst": ["10.60.0.0/16:*", "192.168.1.10:443"]},
	],
}`))
	// Approved by hand, approved through autoApprovers, approved without
	// being advertised, advertised without being approved.
	nas := env.Tailnet.AddDevice(tailnetapi.DeviceSpec{
		Hostname: "nas", User: "carol@example.com",
		AdvertisedRoutes: []string{"192.168.1.0/24", "10.60.0.0/16", "10.61.0.0/16"},
		EnabledRoutes:    []string{"192.168.1.0/24", "10.60.0.0/16", "10.62.0.0/16"},
	})
	routes := rsRoutesExact(
		rsRoute{route: "192.168.1.0/24", advertised: []string{"nas"}, approval: "manual", grantedBy: []string{"acls[0]"}},
		rsRoute{route: "10.60.0.0/16", advertised: []string{"nas"}, approval: "auto_approver", grantedBy: []string{"acls[0]"}},
		rsRoute{route: "10.61.0.0/16", advertised: []string{"nas"}},
		rsRoute{route: "10.62.0.0/16", approval: "manual"},
	)
	missing := rsStrings([]string{
		fmt.Sprintf("10.61.0.0/16 is not approved on nas (%s): add a qtail_auto_approver for route:10.61.0.0/16 with the device's "+
			"owner (carol@example.com), or approve it in the admin console", nas.NodeID),
		`10.61.0.0/16 is not granted: no grant or ACL has it (or an address, CIDR or hosts alias within it) in dst; ` +
			`add a qtail_grant with dst = ["10.61.0.0/16"] for those who need it`,
		fmt.Sprintf("10.62.0.0/16 is not advertised by nas (%s): advertise it from the device (tailscale set "+
			"--advertise-routes=10.62.0.0/16, with the routes it already advertises), or add it to advertiseRoutes of its Connector", nas.NodeID),
		`10.62.0.0/16 is not granted: no grant or ACL has it (or an address, CIDR or hosts alias within it) in dst; ` +
			`add a qtail_grant with dst = ["10.62.0.0/16"] for those who need it`,
	})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				PreConfig: env.Faults.ResetCalls,
				Config:    fmt.Sprintf(`data "qtail_route_status" "nas" { device_id = %q }`, nas.NodeID),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_route_status.nas", tfjsonpath.New("routes"), routes),
					statecheck.ExpectKnownValue("data.qtail_route_status.nas", tfjsonpath.New("missing"), missing),
					statecheck.ExpectKnownValue("data.qtail_route_status.nas", tfjsonpath.New("ok"), knownvalue.Bool(false)),
				},
				Check: func(*terraform.State) error {
					t.Logf("device_id: %d device GETs, %d policy GETs; all calls %v", env.Calls(callGetDevice), env.Calls(callGetPolicy), env.Faults.Calls())
					if env.Calls(callListDevices) != 0 || env.Calls(callGetPolicy) > env.Calls(callGetDevice) {
						return fmt.Errorf("API calls: %v", env.Faults.Calls())
					}
					return nil
				},
			},
			{
				// The same device by hostname, two routes chosen.
				Config: `data "qtail_route_status" "nas" {
  hostname     = "nas"
  check_routes = ["10.60.0.0/16", "192.168.1.0/24"]
}`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_route_status.nas", tfjsonpath.New("routes"), rsRoutesExact(
						rsRoute{route: "10.60.0.0/16", advertised: []string{"nas"}, approval: "auto_approver", grantedBy: []string{"acls[0]"}},
						rsRoute{route: "192.168.1.0/24", advertised: []string{"nas"}, approval: "manual", grantedBy: []string{"acls[0]"}},
					)),
					statecheck.ExpectKnownValue("data.qtail_route_status.nas", tfjsonpath.New("missing"), knownvalue.ListExact([]knownvalue.Check{})),
					statecheck.ExpectKnownValue("data.qtail_route_status.nas", tfjsonpath.New("ok"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("data.qtail_route_status.nas", tfjsonpath.New("devices").AtSliceIndex(0).AtMapKey("id"),
						knownvalue.StringExact(nas.NodeID)),
				},
			},
		},
	})
}

// A tagged exit node checked by hostname: the exit routes need
// autogroup:internet, which a CIDR grant does not give.
func TestRouteStatusExitNode(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(`{
	"tagOwners": {"tag:k8s-operator": [], "tag:k8s": ["tag:k8s-operator"]},
	"autoApprovers": {"exitNode": ["tag:k8s"]},
	"grants": [{"src": ["autogroup:member"], "dst": ["10.0.0.0/8"], "ip": ["*"]}],
}`))
	exit := env.Tailnet.AddDevice(tailnetapi.DeviceSpec{
		Hostname: "exit", Tags: []string{"tag:k8s"}, AdvertisedRoutes: manifest.ExitNodeRoutes, EnabledRoutes: manifest.ExitNodeRoutes,
	})
	config := `data "qtail_route_status" "exit" { hostname = "exit" }`
	notGranted := func(r string) string {
		return r + ` is not granted: no grant or ACL has autogroup:internet (or *) in dst, so nobody may use the exit node; ` +
			`add a qtail_grant with dst = ["autogroup:internet"] for those who need it`
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_route_status.exit", tfjsonpath.New("routes"), rsRoutesExact(
						rsRoute{route: "0.0.0.0/0", advertised: []string{"exit"}, approval: "auto_approver"},
						rsRoute{route: "::/0", advertised: []string{"exit"}, approval: "auto_approver"},
					)),
					statecheck.ExpectKnownValue("data.qtail_route_status.exit", tfjsonpath.New("missing"),
						rsStrings([]string{notGranted("0.0.0.0/0"), notGranted("::/0")})),
				},
			},
			{
				PreConfig: func() {
					env.EditPolicy(t, `"ip": ["*"]}]`, `"ip": ["*"]}, {"src": ["autogroup:member"], "dst": ["autogroup:internet"], "ip": ["*"]}]`)
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_route_status.exit", tfjsonpath.New("routes"), rsRoutesExact(
						rsRoute{route: "0.0.0.0/0", advertised: []string{"exit"}, approval: "auto_approver", grantedBy: []string{"grants[1]"}},
						rsRoute{route: "::/0", advertised: []string{"exit"}, approval: "auto_approver", grantedBy: []string{"grants[1]"}},
					)),
					statecheck.ExpectKnownValue("data.qtail_route_status.exit", tfjsonpath.New("ok"), knownvalue.Bool(true)),
				},
			},
			{
				// Approval revoked by hand while autoApprovers still cover
				// the routes: they apply only when the device advertises.
				PreConfig: func() {
					if err := env.TailnetClient(t).SetDeviceRoutes(acctest.Background(t), exit.NodeID, nil); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_route_status.exit", tfjsonpath.New("routes").AtSliceIndex(0).AtMapKey("approval"), knownvalue.StringExact("")),
					statecheck.ExpectKnownValue("data.qtail_route_status.exit", tfjsonpath.New("missing"), rsStrings([]string{
						fmt.Sprintf("0.0.0.0/0 is not approved on exit (%s) although autoApprovers.exitNode covers it (Tailscale applies "+
							"autoApprovers when a device advertises a route): restart the device so that it advertises the route again "+
							"(for a connector, its proxy pod), or approve it in the admin console", exit.NodeID),
						fmt.Sprintf("::/0 is not approved on exit (%s) although autoApprovers.exitNode covers it (Tailscale applies "+
							"autoApprovers when a device advertises a route): restart the device so that it advertises the route again "+
							"(for a connector, its proxy pod), or approve it in the admin console", exit.NodeID),
					})),
				},
			},
			{
				// No approver left.
				PreConfig: func() {
					env.EditPolicy(t, `"autoApprovers": {"exitNode": ["tag:k8s"]},`, ``)
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_route_status.exit", tfjsonpath.New("missing"), rsStrings([]string{
						fmt.Sprintf("0.0.0.0/0 is not approved on exit (%s): add a qtail_auto_approver for exitNode with the device's tag (tag:k8s), "+
							"or approve it in the admin console", exit.NodeID),
						fmt.Sprintf("::/0 is not approved on exit (%s): add a qtail_auto_approver for exitNode with the device's tag (tag:k8s), "+
							"or approve it in the admin console", exit.NodeID),
					})),
				},
			},
		},
	})
}

func TestRouteStatusInputs(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	lab := rsCreateConnector(t, env, rsLabConnector())
	notConnector := env.CreateManifestService(t, "not-a-connector", "manifests: []\n")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config:      `data "qtail_route_status" "x" {}`,
				PlanOnly:    true,
				ExpectError: acctest.ErrorRE("Missing Route Source"),
			},
			{
				Config: fmt.Sprintf(`data "qtail_route_status" "x" {
  connector_id = %q
  hostname     = "homelab"
}`, lab),
				PlanOnly:    true,
				ExpectError: acctest.ErrorRE("hostname cannot be set with connector_id: set only one of connector_id, device_id and hostname."),
			},
			{
				Config: `data "qtail_route_status" "x" {
  device_id = "n1"
  hostname  = "homelab"
}`,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Conflicting Route Sources.*hostname cannot be set with device_id`),
			},
			{
				Config: `data "qtail_route_status" "x" {
  hostname     = "homelab"
  check_routes = ["10.0.0.1/8"]
}`,
				PlanOnly:    true,
				ExpectError: acctest.ErrorRE(`"10.0.0.1/8" has address bits set beyond its prefix length; use "10.0.0.0/8"`),
			},
			{
				Config:      `data "qtail_route_status" "x" { connector_id = "3fa85f64-5717-4562-b3fc-2c963f66afa6" }`,
				ExpectError: acctest.ErrorRE("Connector Not Found"),
			},
			{
				Config:      fmt.Sprintf(`data "qtail_route_status" "x" { connector_id = %q }`, notConnector),
				ExpectError: acctest.ErrorRE("is not a qtail_connector"),
			},
			{
				Config:      `data "qtail_route_status" "x" { device_id = "nNOPECNTRL" }`,
				ExpectError: acctest.ErrorRE(`The tailnet has no device with the ID "nNOPECNTRL".`),
			},
			{
				Config:      `data "qtail_route_status" "x" { hostname = "nope" }`,
				ExpectError: acctest.ErrorRE(`The tailnet has no device with the hostname "nope".`),
			},
		},
	})
}

// rsReplaceOnce replaces old, which must occur exactly once in s.
func rsReplaceOnce(t *testing.T, s, old, replacement string) string {
	t.Helper()
	if n := strings.Count(s, old); n != 1 {
		t.Fatalf("%q occurs %d times in:\n%s", old, n, s)
	}
	return strings.Replace(s, old, replacement, 1)
}
