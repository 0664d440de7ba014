package policyfragment_test

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
	"github.com/qtail/terraform-provider-qtail/internal/policy"
)

var (
	routeKey    = policy.RouteKey("10.20.0.0/16")
	exitNodeKey = policy.ExitNodeKey()
)

// approvers is a route approver and the exit node approver, approved for
// the subnet router tag of a tag owner in the same configuration.
func approvers(route, routeApprovers, exitApprovers string) string {
	return fmt.Sprintf(`
resource "qtail_tag_owner" "router" {
  tag    = "tag:router"
  owners = ["group:platform-ops"]
}

resource "qtail_auto_approver" "route" {
  route     = %q
  approvers = %s
}

resource "qtail_auto_approver" "exit" {
  exit_node = true
  approvers = %s
}
`, route, routeApprovers, exitApprovers)
}

func TestAutoApprover_lifecycle(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy: func(s *terraform.State) error {
			if err := expectNoFragment(env, routeKey)(s); err != nil {
				return err
			}
			return expectNoFragment(env, exitNodeKey)(s)
		},
		Steps: []resource.TestStep{
			{
				Config: approvers("10.20.0.0/16", `[qtail_tag_owner.router.tag]`, `["group:platform-ops"]`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("qtail_auto_approver.route", tfjsonpath.New("id"), knownvalue.StringExact("route:10.20.0.0/16")),
					statecheck.ExpectKnownValue("qtail_auto_approver.route", tfjsonpath.New("exit_node"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue("qtail_auto_approver.route", tfjsonpath.New("marker"), knownvalue.StringExact("qtail:auto_approver:route:10.20.0.0/16")),
					statecheck.ExpectKnownValue("qtail_auto_approver.exit", tfjsonpath.New("id"), knownvalue.StringExact("exitNode")),
					statecheck.ExpectKnownValue("qtail_auto_approver.exit", tfjsonpath.New("route"), knownvalue.Null()),
					statecheck.ExpectKnownValue("qtail_auto_approver.exit", tfjsonpath.New("marker"), knownvalue.StringExact("qtail:auto_approver:exitNode")),
				},
				Check: resource.ComposeTestCheckFunc(
					expectFragment(env, routeKey, `["tag:router"]`),
					expectFragment(env, exitNodeKey, `["group:platform-ops"]`),
				),
			},
			{
				Config: approvers("10.20.0.0/16", `[qtail_tag_owner.router.tag, "group:platform-ops"]`, `[qtail_tag_owner.router.tag]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_auto_approver.route", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("qtail_auto_approver.exit", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					expectFragment(env, routeKey, `["tag:router","group:platform-ops"]`),
					expectFragment(env, exitNodeKey, `["tag:router"]`),
				),
			},
			{
				ResourceName:      "qtail_auto_approver.route",
				ImportState:       true,
				ImportStateId:     "route:10.20.0.0/16",
				ImportStateVerify: true,
			},
			{
				ResourceName:      "qtail_auto_approver.exit",
				ImportState:       true,
				ImportStateId:     "exitNode",
				ImportStateVerify: true,
			},
			{
				// Another route replaces the entry.
				Config: approvers("fd7a:115c:a1e0:b1a::/64", `[qtail_tag_owner.router.tag]`, `[qtail_tag_owner.router.tag]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_auto_approver.route", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("qtail_auto_approver.exit", plancheck.ResourceActionNoop),
				}},
				Check: resource.ComposeTestCheckFunc(
					expectNoFragment(env, routeKey),
					expectFragment(env, policy.RouteKey("fd7a:115c:a1e0:b1a::/64"), `["tag:router"]`),
				),
			},
		},
	})
}

func TestAutoApprover_drift(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	config := approvers("10.20.0.0/16", `[qtail_tag_owner.router.tag]`, `["group:platform-ops"]`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					env.EditPolicy(t, `"10.20.0.0/16": ["tag:router"]`, `"10.20.0.0/16": ["tag:router", "alice@example.com"]`)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_auto_approver.route", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("qtail_auto_approver.exit", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("qtail_tag_owner.router", plancheck.ResourceActionNoop),
				}},
				Check: expectFragment(env, routeKey, `["tag:router"]`),
			},
			{
				PreConfig: func() { deleteByHand(t, env, exitNodeKey) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_auto_approver.exit", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("qtail_auto_approver.route", plancheck.ResourceActionNoop),
				}},
				Check: expectFragment(env, exitNodeKey, `["group:platform-ops"]`),
			},
			{
				PreConfig: func() { removeMarkerByHand(t, env, routeKey) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_auto_approver.route", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("qtail_auto_approver.route", tfjsonpath.New("marker"),
						knownvalue.StringExact("qtail:auto_approver:route:10.20.0.0/16")),
				}},
				Check: func(s *terraform.State) error {
					if err := expectFragment(env, routeKey, `["tag:router"]`)(s); err != nil {
						return err
					}
					body, _ := env.Tailnet.Policy()
					if n := strings.Count(string(body), `"10.20.0.0/16":`); n != 1 {
						return fmt.Errorf("the route is a key %d times:\n%s", n, body)
					}
					return nil
				},
			},
		},
	})
}

func TestAutoApprover_unmarkedEntryWithOtherApprovers(t *testing.T) {
	t.Parallel()
	start := strings.Replace(sandboxPolicy, `"grants": [`, `"autoApprovers": {
		"routes": {"10.20.0.0/16": ["alice@example.com"]},
		"exitNode": ["bob@example.com"],
	},

	"grants": [`, 1)
	env := acctest.New(t, acctest.WithPolicy(start))
	config := `
resource "qtail_auto_approver" "route" {
  route     = "10.20.0.0/16"
  approvers = ["group:platform-ops"]
}
`
	exitConfig := `
resource "qtail_auto_approver" "exit" {
  exit_node = true
  approvers = ["group:platform-ops"]
}
`
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config:      config,
				ExpectError: acctest.ErrorRE(`autoApprovers.routes["10.20.0.0/16"] already exists in the policy file with a different value, ["alice@example.com"], and is not managed by qtail; to manage it with Terraform, import it: terraform import qtail_auto_approver.NAME 'route:10.20.0.0/16'`),
			},
			{
				Config:      exitConfig,
				ExpectError: acctest.ErrorRE(`autoApprovers.exitNode already exists in the policy file with a different value, ["bob@example.com"], and is not managed by qtail; to manage it with Terraform, import it: terraform import qtail_auto_approver.NAME exitNode`),
			},
			{
				PreConfig: func() {
					if body, _ := env.Tailnet.Policy(); string(body) != start || env.Faults.Count(routeSetPolicy) != 0 {
						t.Errorf("the refused plans changed the policy file:\n%s", body)
					}
				},
				Config:             config,
				ResourceName:       "qtail_auto_approver.route",
				ImportState:        true,
				ImportStateId:      "route:10.20.0.0/16",
				ImportStatePersist: true,
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_auto_approver.route", plancheck.ResourceActionUpdate),
				}},
				Check: expectFragment(env, routeKey, `["group:platform-ops"]`),
			},
		},
	})
}

func TestAutoApprover_invalidInput(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	before, _ := env.Tailnet.Policy()
	for _, tc := range []struct{ name, body, want string }{
		{"host bits set", `route = "10.20.1.0/16"
  approvers = ["group:platform-ops"]`, `has address bits set beyond its prefix length; use "10.20.0.0/16"`},
		{"not canonical", `route = "FD7A:115C:A1E0:B1A::/64"
  approvers = ["group:platform-ops"]`, `write it in canonical form, "fd7a:115c:a1e0:b1a::/64"`},
		{"not a CIDR", `route = "10.20.0.0"
  approvers = ["group:platform-ops"]`, `is not a CIDR`},
		{"route and exit node", `route = "10.20.0.0/16"
  exit_node = true
  approvers = ["group:platform-ops"]`, `Set either route`},
		{"neither", `approvers = ["group:platform-ops"]`, `Set route to the CIDR`},
		{"no approvers", `route = "10.20.0.0/16"
  approvers = []`, `approvers list must contain at least 1 elements`},
		{"undeclared tag", `route = "10.20.0.0/16"
  approvers = ["tag:router"]`, `tag not found: "tag:router"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{{
					Config:      "resource \"qtail_auto_approver\" \"a\" {\n  " + tc.body + "\n}\n",
					ExpectError: acctest.ErrorRE(tc.want),
				}},
			})
		})
	}
	if after, _ := env.Tailnet.Policy(); string(after) != string(before) || env.Faults.Count(routeSetPolicy) != 0 {
		t.Errorf("refused configurations wrote the policy file (%d writes):\n%s", env.Faults.Count(routeSetPolicy), after)
	}
}
