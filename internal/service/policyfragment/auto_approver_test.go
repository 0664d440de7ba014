package policyfragment_test

import (
	"fmt"
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
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

var (
	routeKey    = policyfile.RouteKey("10.20.0.0/16")
	exitNodeKey = policyfile.ExitNodeKey()
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

// ownerRE matches prefix followed by the owner of an auto approver.
func ownerRE(prefix string) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.QuoteMeta(prefix) + "#[a-z0-9]{10}$")
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
					statecheck.ExpectKnownValue("qtail_auto_approver.route", tfjsonpath.New("id"), knownvalue.StringRegexp(ownerRE("route:10.20.0.0/16"))),
					statecheck.ExpectKnownValue("qtail_auto_approver.route", tfjsonpath.New("exit_node"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue("qtail_auto_approver.route", tfjsonpath.New("marker"), knownvalue.StringRegexp(ownerRE("qtail:auto_approver:route:10.20.0.0/16"))),
					statecheck.ExpectKnownValue("qtail_auto_approver.exit", tfjsonpath.New("id"), knownvalue.StringRegexp(ownerRE("exitNode"))),
					statecheck.ExpectKnownValue("qtail_auto_approver.exit", tfjsonpath.New("route"), knownvalue.Null()),
					statecheck.ExpectKnownValue("qtail_auto_approver.exit", tfjsonpath.New("marker"), knownvalue.StringRegexp(ownerRE("qtail:auto_approver:exitNode"))),
				},
				Check: resource.ComposeTestCheckFunc(
					expectApprovers(env, "qtail_auto_approver.route", routeKey, `["tag:router"]`),
					expectApprovers(env, "qtail_auto_approver.exit", exitNodeKey, `["group:platform-ops"]`),
				),
			},
			{
				Config: approvers("10.20.0.0/16", `[qtail_tag_owner.router.tag, "group:platform-ops"]`, `[qtail_tag_owner.router.tag]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_auto_approver.route", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("qtail_auto_approver.exit", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					expectApprovers(env, "qtail_auto_approver.route", routeKey, `["tag:router","group:platform-ops"]`),
					expectApprovers(env, "qtail_auto_approver.exit", exitNodeKey, `["tag:router"]`),
				),
			},
			{
				// The ID of the state, route:CIDR#OWNER.
				ResourceName:      "qtail_auto_approver.route",
				ImportState:       true,
				ImportStateVerify: true,
			},
			{
				ResourceName:      "qtail_auto_approver.exit",
				ImportState:       true,
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
					expectApprovers(env, "qtail_auto_approver.route", policyfile.RouteKey("fd7a:115c:a1e0:b1a::/64"), `["tag:router"]`),
				),
			},
		},
	})
}

// captureKey records in *k, during a Check, key with the owner of the
// qtail_auto_approver at addr, for a later PreConfig.
func captureKey(k *policyfile.Key, addr string, key policyfile.Key) func(*terraform.State) error {
	return func(s *terraform.State) (err error) {
		*k, err = ownedKey(s, addr, key)
		return err
	}
}

func TestAutoApprover_drift(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	config := approvers("10.20.0.0/16", `[qtail_tag_owner.router.tag]`, `["group:platform-ops"]`)
	var routeOwned, exitOwned policyfile.Key
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeTestCheckFunc(
					captureKey(&routeOwned, "qtail_auto_approver.route", routeKey),
					captureKey(&exitOwned, "qtail_auto_approver.exit", exitNodeKey),
				),
			},
			{
				// An approver a person adds without a marker is someone
				// else's: it stays, and the plan is empty.
				PreConfig: func() {
					env.EditPolicy(t, `"tag:router",`, `"tag:router",
				"alice@example.com",`)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: func(s *terraform.State) error {
					if body, _ := env.Tailnet.Policy(); !strings.Contains(string(body), `"alice@example.com",`) {
						return fmt.Errorf("the approver added by hand is gone:\n%s", body)
					}
					return expectApprovers(env, "qtail_auto_approver.route", routeKey, `["tag:router"]`)(s)
				},
			},
			{
				// A marked approver changed by hand is drift: the update
				// puts back the configured one.
				PreConfig: func() {
					env.EditPolicy(t, `"tag:router",
				"alice`, `"carol@example.com",
				"alice`)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_auto_approver.route", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("qtail_auto_approver.exit", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("qtail_tag_owner.router", plancheck.ResourceActionNoop),
				}},
				Check: func(s *terraform.State) error {
					if body, _ := env.Tailnet.Policy(); strings.Contains(string(body), "carol@example.com") {
						return fmt.Errorf("the approver changed by hand stays:\n%s", body)
					}
					return expectApprovers(env, "qtail_auto_approver.route", routeKey, `["tag:router"]`)(s)
				},
			},
			{
				PreConfig: func() { deleteByHand(t, env, exitOwned) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_auto_approver.exit", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("qtail_auto_approver.route", plancheck.ResourceActionNoop),
				}},
				Check: expectApprovers(env, "qtail_auto_approver.exit", exitNodeKey, `["group:platform-ops"]`),
			},
			{
				// Without its marker the approver is no longer this
				// resource's: it is created again and adopts the approver.
				PreConfig: func() { removeMarkerByHand(t, env, routeOwned) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_auto_approver.route", plancheck.ResourceActionCreate),
				}},
				Check: func(s *terraform.State) error {
					if err := expectApprovers(env, "qtail_auto_approver.route", routeKey, `["tag:router"]`)(s); err != nil {
						return err
					}
					body, _ := env.Tailnet.Policy()
					if n := strings.Count(string(body), `"10.20.0.0/16":`); n != 1 {
						return fmt.Errorf("the route is a key %d times:\n%s", n, body)
					}
					if n := strings.Count(string(body), `"tag:router",`); n != 1 {
						return fmt.Errorf("the approver is in the list %d times:\n%s", n, body)
					}
					return nil
				},
			},
		},
	})
}

// Approvers written by hand share the list with qtail's: they stay, and
// the list that a person wrote stays after destroy. An import of the
// list without an owner takes over the approvers no owner marked.
func TestAutoApprover_unmarkedEntryWithOtherApprovers(t *testing.T) {
	t.Parallel()
	start := strings.Replace(sandboxPolicy, `"grants": [`, `"autoApprovers": {
		"routes": {"10.20.0.0/16": ["alice@example.com"]},
		"exitNode": ["bob@example.com"],
	},

	"grants": [`, 1)
	env := acctest.New(t, acctest.WithPolicy(start))
	routeConfig := `
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
	handApprovers := func(*terraform.State) error {
		body, _ := env.Tailnet.Policy()
		doc, err := policyfile.Parse(body)
		if err != nil {
			return err
		}
		if f := doc.Get(routeKey); !f.Found || string(f.Value) != `["alice@example.com"]` {
			return fmt.Errorf("the route's approver written by hand: %s, want [\"alice@example.com\"]:\n%s", f.Value, body)
		}
		if f := doc.Get(exitNodeKey); !f.Found || string(f.Value) != `["bob@example.com"]` {
			return fmt.Errorf("the exit node approver written by hand: %s, want [\"bob@example.com\"]:\n%s", f.Value, body)
		}
		return nil
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy: func(*terraform.State) error {
			body, _ := env.Tailnet.Policy()
			if !strings.Contains(string(body), `"exitNode": ["bob@example.com"],`) {
				return fmt.Errorf("the exit node list written by hand changed:\n%s", body)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: routeConfig + exitConfig,
				Check: resource.ComposeTestCheckFunc(
					handApprovers,
					expectApprovers(env, "qtail_auto_approver.route", routeKey, `["group:platform-ops"]`),
					expectApprovers(env, "qtail_auto_approver.exit", exitNodeKey, `["group:platform-ops"]`),
				),
			},
			{
				// The route's approvers go; the list written by hand
				// is back as it was, byte for byte.
				Config: exitConfig,
				Check: resource.ComposeTestCheckFunc(handApprovers, func(*terraform.State) error {
					if body, _ := env.Tailnet.Policy(); !strings.Contains(string(body), `"routes": {"10.20.0.0/16": ["alice@example.com"]},`) {
						return fmt.Errorf("the route list written by hand changed:\n%s", body)
					}
					return nil
				}),
			},
			{
				Config:             routeConfig + exitConfig,
				ResourceName:       "qtail_auto_approver.route",
				ImportState:        true,
				ImportStateId:      "route:10.20.0.0/16",
				ImportStatePersist: true,
			},
			{
				Config: routeConfig + exitConfig,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_auto_approver.route", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					expectApprovers(env, "qtail_auto_approver.route", routeKey, `["group:platform-ops"]`),
					func(*terraform.State) error {
						body, _ := env.Tailnet.Policy()
						doc, err := policyfile.Parse(body)
						if err != nil {
							return err
						}
						if f := doc.Get(routeKey); f.Found {
							return fmt.Errorf("the imported approvers stay without an owner, %s:\n%s", f.Value, body)
						}
						return nil
					},
				),
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

// regionApprovers is what one region's configuration declares: a subnet
// router tag of its own, and approvers for the exit node and a route
// that another region also approves, with one approver in common.
func regionApprovers(region string) string {
	return fmt.Sprintf(`
resource "qtail_tag_owner" "router" {
  tag    = "tag:router-%[1]s"
  owners = ["group:platform-ops"]
}

resource "qtail_auto_approver" "exit" {
  exit_node = true
  approvers = ["group:platform-ops", qtail_tag_owner.router.tag]
}

resource "qtail_auto_approver" "route" {
  route     = "10.20.0.0/16"
  approvers = ["group:platform-ops", qtail_tag_owner.router.tag]
}
`, region)
}

// TestAutoApprover_twoConfigurationsShareApprovers applies two regions'
// configurations at once, each approving the exit node and one route with
// an approver of its own and one in common: both plans stay empty, the
// common approver is in each list once, and when both are destroyed the
// policy file is the original again, without an empty autoApprovers.
func TestAutoApprover_twoConfigurationsShareApprovers(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	applyAtOnce(t, env, []string{"eu", "us"}, func(_ int, region string) string { return regionApprovers(region) },
		func(_ int, region string) resource.TestCheckFunc {
			return resource.ComposeTestCheckFunc(
				expectApprovers(env, "qtail_auto_approver.exit", exitNodeKey, `["group:platform-ops","tag:router-`+region+`"]`),
				expectApprovers(env, "qtail_auto_approver.route", routeKey, `["group:platform-ops","tag:router-`+region+`"]`),
			)
		},
		func() error {
			body, _ := env.Tailnet.Policy()
			doc, err := policyfile.Parse(body)
			if err != nil {
				return err
			}
			if strings.Count(string(body), `"group:platform-ops",`) != 2 {
				return fmt.Errorf("the common approver is not once in each list:\n%s", body)
			}
			for _, key := range []policyfile.Key{exitNodeKey, routeKey} {
				if f := doc.Get(key); f.Found {
					return fmt.Errorf("%s has approvers without an owner, %s:\n%s", key, f.Value, body)
				}
				if n := markerLines(body, key); n != 1+2+2 {
					return fmt.Errorf("%s: %d markers, want the list's and two per region:\n%s", key, n, body)
				}
			}
			return nil
		})
	// The tagOwners section that qtail created stays, empty; the
	// autoApprovers it created goes.
	if body, _ := env.Tailnet.Policy(); strings.Contains(string(body), "autoApprovers") || strings.Contains(string(body), "qtail:") {
		t.Errorf("after both regions destroyed their approvers the policy file keeps autoApprovers or a marker:\n%s", body)
	}
}

// TestFragments_duplicateClaims: two resources of one configuration that
// write the same entry are refused at plan, the error naming the other
// one by what it writes, and nothing is written.
func TestFragments_duplicateClaims(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	before, _ := env.Tailnet.Policy()
	for _, tc := range []struct{ name, config, other string }{
		{"grant", `
resource "qtail_grant" "a" {
  name = "web"
  src  = ["group:platform-ops"]
  dst  = ["*"]
  ip   = ["tcp:443"]
}
resource "qtail_grant" "b" {
  name = "web"
  src  = ["group:platform-ops"]
  dst  = ["*"]
  ip   = ["tcp:80"]
}`, `the qtail_grant with name = "web"`},
		{"tag owner", `
resource "qtail_tag_owner" "a" {
  tag    = "tag:web"
  owners = ["group:platform-ops"]
}
resource "qtail_tag_owner" "b" {
  tag    = "tag:web"
  owners = ["alice@example.com"]
}`, `the qtail_tag_owner with tag = "tag:web"`},
		{"policy test", `
resource "qtail_policy_test" "a" {
  name   = "reach"
  src    = "alice@example.com"
  accept = ["100.64.0.1:443"]
}
resource "qtail_policy_test" "b" {
  name   = "reach"
  src    = "bob@example.com"
  accept = ["100.64.0.1:443"]
}`, `the qtail_policy_test with name = "reach"`},
		{"route", `
resource "qtail_auto_approver" "a" {
  route     = "10.20.0.0/16"
  approvers = ["group:platform-ops"]
}
resource "qtail_auto_approver" "b" {
  route     = "10.20.0.0/16"
  approvers = ["alice@example.com"]
}`, `the qtail_auto_approver with route = "10.20.0.0/16"`},
		{"exit node", `
resource "qtail_auto_approver" "a" {
  exit_node = true
  approvers = ["group:platform-ops"]
}
resource "qtail_auto_approver" "b" {
  exit_node = true
  approvers = ["group:platform-ops"]
}`, `the qtail_auto_approver with exit_node = true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{{
					Config: tc.config,
					ExpectError: regexp.MustCompile(`Two Resources Claim One Policy Entry(?s).*` +
						strings.TrimPrefix(acctest.ErrorRE("This resource and "+tc.other+", another resource of this configuration").String(), "(?s)")),
				}},
			})
		})
	}
	if after, _ := env.Tailnet.Policy(); string(after) != string(before) || env.Faults.Count(routeSetPolicy) != 0 {
		t.Errorf("refused configurations wrote the policy file (%d writes):\n%s", env.Faults.Count(routeSetPolicy), after)
	}
}
