package policyfragment_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
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
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

const grantsAddr = "qtail_grants.team"

// grantsConfig is a qtail_grants with one grant per body, by name.
func grantsConfig(bodies map[string]string) string {
	var b strings.Builder
	b.WriteString("\nresource \"qtail_grants\" \"team\" {\n  grants = {\n")
	for _, name := range slices.Sorted(maps.Keys(bodies)) {
		fmt.Fprintf(&b, "    %q = {\n      %s\n    }\n", name, bodies[name])
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// grantsBody is a grant from group:platform-ops to dst on ip.
func grantsBody(dst, ip string) string {
	return fmt.Sprintf(`src = ["group:platform-ops"]
      dst = [%q]
      ip  = [%q]`, dst, ip)
}

func grantsValue(dst, ip string) string {
	return `{"dst":["` + dst + `"],"ip":["` + ip + `"],"src":["group:platform-ops"]}`
}

func teamGrants(phoneIP string) map[string]string {
	return map[string]string{
		"ops-to-phone":  grantsBody("100.64.0.3", phoneIP),
		"ops-to-laptop": grantsBody("100.64.0.1", "tcp:22"),
		"ops-to-nas":    grantsBody("100.64.0.2", "tcp:445"),
	}
}

// expectBefore checks the value of attr in the state that the plan of
// addr starts from.
func expectBefore(addr, attr string, want any) plancheck.PlanCheck {
	return beforeCheck{addr, attr, want}
}

type beforeCheck struct {
	addr, attr string
	want       any
}

func (c beforeCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.addr {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		if got := before[c.attr]; !reflect.DeepEqual(got, c.want) {
			resp.Error = fmt.Errorf("%s.%s before the plan: %#v, want %#v", c.addr, c.attr, got, c.want)
		}
		return
	}
	resp.Error = fmt.Errorf("no change of %s in the plan", c.addr)
}

// blamedOn matches an error with text on the nested attribute at.
func blamedOn(text, at string) *regexp.Regexp {
	return regexp.MustCompile(acctest.ErrorRE(text).String() + `.*Attribute: ` + regexp.QuoteMeta(at) + `\n`)
}

// either matches a then b, or b then a.
func either(a, b string) string {
	return "(" + a + ".*" + b + ")|(" + b + ".*" + a + ")"
}

func gkey(name string) policyfile.Key { return policyfile.Key{Kind: policyfile.KindGrant, Name: name} }

// expectCalls checks the number of calls of route since the counters were
// last reset.
func expectCalls(env *acctest.Env, route string, want int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if got := env.Faults.Count(route); got != want {
			return fmt.Errorf("%s: %d calls, want %d", route, got, want)
		}
		return nil
	}
}

func TestGrants_lifecycle(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy: resource.ComposeTestCheckFunc(
			expectNoFragment(env, gkey("ops-to-phone")), expectNoFragment(env, gkey("ops-to-laptop")), expectNoFragment(env, gkey("ops-to-nas-v2"))),
		Steps: []resource.TestStep{
			{
				// Three grants: one validation at plan, one write.
				PreConfig: env.Faults.ResetCalls,
				Config:    grantsConfig(teamGrants("tcp:443")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantsAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(grantsAddr, tfjsonpath.New("id"), knownvalue.StringExact("ops-to-laptop,ops-to-nas,ops-to-phone")),
					plancheck.ExpectKnownValue(grantsAddr, tfjsonpath.New("unmarked"), knownvalue.ListSizeExact(0)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(grantsAddr, tfjsonpath.New("grants").AtMapKey("ops-to-phone").AtMapKey("ip"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("tcp:443")})),
					statecheck.ExpectKnownValue(grantsAddr, tfjsonpath.New("grants").AtMapKey("ops-to-phone").AtMapKey("app"), knownvalue.Null()),
				},
				Check: resource.ComposeTestCheckFunc(
					expectFragment(env, gkey("ops-to-phone"), grantsValue("100.64.0.3", "tcp:443")),
					expectFragment(env, gkey("ops-to-laptop"), grantsValue("100.64.0.1", "tcp:22")),
					expectFragment(env, gkey("ops-to-nas"), grantsValue("100.64.0.2", "tcp:445")),
					expectCalls(env, routeSetPolicy, 1),
				),
			},
			{
				// One port changes, one grant is renamed, in one write.
				PreConfig: env.Faults.ResetCalls,
				Config: grantsConfig(map[string]string{
					"ops-to-phone":  grantsBody("100.64.0.3", "tcp:8443"),
					"ops-to-laptop": grantsBody("100.64.0.1", "tcp:22"),
					"ops-to-nas-v2": grantsBody("100.64.0.2", "tcp:445"),
				}),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantsAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(grantsAddr, tfjsonpath.New("id"), knownvalue.StringExact("ops-to-laptop,ops-to-nas-v2,ops-to-phone")),
				}},
				Check: resource.ComposeTestCheckFunc(
					expectFragment(env, gkey("ops-to-phone"), grantsValue("100.64.0.3", "tcp:8443")),
					expectFragment(env, gkey("ops-to-laptop"), grantsValue("100.64.0.1", "tcp:22")),
					expectFragment(env, gkey("ops-to-nas-v2"), grantsValue("100.64.0.2", "tcp:445")),
					expectNoFragment(env, gkey("ops-to-nas")),
					expectCalls(env, routeSetPolicy, 1),
				),
			},
			{
				ResourceName:      grantsAddr,
				ImportState:       true,
				ImportStateId:     "ops-to-phone, ops-to-nas-v2,ops-to-laptop",
				ImportStateVerify: true,
			},
		},
	})
}

// grantsImportBlock imports the grants of names.
func grantsImportBlock(id string) string {
	return fmt.Sprintf("\nimport {\n  to = %s\n  id = %q\n}\n", grantsAddr, id)
}

// handMarkedGrants is the sandbox policy with two grants a person wrote
// with qtail's markers, as another configuration would have.
func handMarkedGrants(phoneIP string) string {
	return strings.Replace(sandboxPolicy, `{"src": ["*"], "dst": ["*"], "ip": ["*"]},`,
		`{"src": ["*"], "dst": ["*"], "ip": ["*"]},
		// qtail:grant:ops-to-phone
		{"src": ["group:platform-ops"], "dst": ["100.64.0.3"], "ip": ["`+phoneIP+`"]},
		// qtail:grant:ops-to-laptop
		{"src": ["group:platform-ops"], "dst": ["100.64.0.1"], "ip": ["tcp:22"]},`, 1)
}

func TestGrants_importBlock(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(handMarkedGrants("tcp:443")))
	two := map[string]string{"ops-to-phone": grantsBody("100.64.0.3", "tcp:443"), "ops-to-laptop": grantsBody("100.64.0.1", "tcp:22")}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				// A name the policy file does not have: the import fails
				// and names its marker.
				Config:      grantsConfig(teamGrants("tcp:443")) + grantsImportBlock("ops-to-phone,ops-to-nas"),
				ExpectError: regexp.MustCompile(`(?s)Nothing to Import.*qtail:grant:ops-to-nas`),
			},
			{
				// The grants as they are: imported, nothing to change.
				Config: grantsConfig(two) + grantsImportBlock("ops-to-phone,ops-to-laptop"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantsAddr, plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(grantsAddr, tfjsonpath.New("id"), knownvalue.StringExact("ops-to-laptop,ops-to-phone")),
				},
			},
			{
				// Then a third grant joins in one update.
				Config: grantsConfig(teamGrants("tcp:443")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantsAddr, plancheck.ResourceActionUpdate),
				}},
				Check: expectFragment(env, gkey("ops-to-nas"), grantsValue("100.64.0.2", "tcp:445")),
			},
		},
	})
}

func TestGrants_driftEditedDeletedAndUnmarked(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	config := grantsConfig(teamGrants("tcp:443"))
	onlyOne := func(name string, want knownvalue.Check) plancheck.PlanCheck {
		return plancheck.ExpectKnownValue(grantsAddr, tfjsonpath.New("grants").AtMapKey(name).AtMapKey("ip"), want)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				// A port edited by hand: an update that puts it back.
				PreConfig: func() { env.EditPolicy(t, `"ip": ["tcp:443"]`, `"ip": ["tcp:443", "tcp:8443"]`) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantsAddr, plancheck.ResourceActionUpdate),
					onlyOne("ops-to-phone", knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("tcp:443")})),
				}},
				Check: expectFragment(env, gkey("ops-to-phone"), grantsValue("100.64.0.3", "tcp:443")),
			},
			{
				// One grant deleted by hand, marker and all: it comes back.
				PreConfig: func() { deleteByHand(t, env, gkey("ops-to-nas")) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantsAddr, plancheck.ResourceActionUpdate),
				}},
				Check: expectFragment(env, gkey("ops-to-nas"), grantsValue("100.64.0.2", "tcp:445")),
			},
			{
				// A marker removed by hand: the plan names the grant in
				// unmarked, and the apply marks it again without a copy.
				PreConfig: func() { removeMarkerByHand(t, env, gkey("ops-to-laptop")) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantsAddr, plancheck.ResourceActionUpdate),
					expectBefore(grantsAddr, "unmarked", []any{"ops-to-laptop"}),
					plancheck.ExpectKnownValue(grantsAddr, tfjsonpath.New("unmarked"), knownvalue.ListSizeExact(0)),
				}},
				Check: expectFragment(env, gkey("ops-to-laptop"), grantsValue("100.64.0.1", "tcp:22")),
			},
			{
				// A marker removed and the grant changed at once: adopted,
				// then changed, no copy left behind.
				PreConfig: func() { removeMarkerByHand(t, env, gkey("ops-to-phone")) },
				Config:    grantsConfig(teamGrants("tcp:8443")),
				Check: func(s *terraform.State) error {
					if err := expectFragment(env, gkey("ops-to-phone"), grantsValue("100.64.0.3", "tcp:8443"))(s); err != nil {
						return err
					}
					return expectNoGrantValued(t, env, grantsValue("100.64.0.3", "tcp:443"))(s)
				},
			},
			{
				// Every grant deleted by hand: the resource is gone and is
				// planned for creation.
				PreConfig: func() {
					for _, name := range []string{"ops-to-phone", "ops-to-laptop", "ops-to-nas"} {
						deleteByHand(t, env, gkey(name))
					}
				},
				Config: grantsConfig(teamGrants("tcp:8443")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantsAddr, plancheck.ResourceActionCreate),
				}},
				Check: expectFragment(env, gkey("ops-to-phone"), grantsValue("100.64.0.3", "tcp:8443")),
			},
			{
				// A marker removed, then the resource destroyed: the entry
				// goes too.
				PreConfig: func() { removeMarkerByHand(t, env, gkey("ops-to-nas")) },
				Config:    grantsConfig(teamGrants("tcp:8443")),
				Destroy:   true,
				Check:     expectOnlyAllowAllGrant(t, env),
			},
		},
	})
}

func TestGrants_badGrantsAreBlamedAloneAtPlan(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	before, _ := env.Tailnet.Policy()
	good := grantsBody("100.64.0.3", "tcp:443")
	cases := []struct {
		name   string
		grants map[string]string
		want   *regexp.Regexp
	}{
		{"bad name", map[string]string{"-ops": good}, acctest.ErrorRE(`names start with a letter or a digit`)},
		{"empty", map[string]string{}, acctest.ErrorRE(`grants map must contain at least 1 elements`)},
		{"neither ip nor app", map[string]string{"good": good, "bad": `src = ["group:platform-ops"]
      dst = ["100.64.0.3"]`}, blamedOn(`A grant needs at least one of ip and app`, `grants["bad"].ip`)},
		{"bad tag locally", map[string]string{"good": good, "bad": `src = ["tag:web_tier"]
      dst = ["100.64.0.3"]
      ip  = ["*"]`}, blamedOn(`tag names can only contain`, `grants["bad"].src[0]`)},
		// Refused by Tailscale: the grant at fault is blamed, on the
		// attribute the message quotes.
		{"undeclared tag", map[string]string{"good": good, "bad": `src = ["group:platform-ops"]
      dst = ["100.64.0.3", "tag:billing"]
      ip  = ["*"]`}, blamedOn(`tag not found: "tag:billing"`, `grants["bad"].dst[1]`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps:                    []resource.TestStep{{Config: grantsConfig(tc.grants), ExpectError: tc.want}},
			})
		})
	}
	t.Run("two bad grants among good ones", func(t *testing.T) {
		// Tailscale's message names one problem at a time: each grant at
		// fault gets its own error, and the good ones none.
		grants := map[string]string{
			"bad-app": `src = ["group:platform-ops"]
      dst = ["autogroup:internet"]
      app = jsonencode({ "example.com/cap/x" = [{}] })`,
			"bad-tag": `src = ["tag:billing"]
      dst = ["100.64.0.3"]
      ip  = ["*"]`,
		}
		for i := range 6 {
			grants[fmt.Sprintf("good-%d", i)] = good
		}
		env.Faults.ResetCalls()
		resource.UnitTest(t, resource.TestCase{
			ProtoV6ProviderFactories: env.Factories(),
			Steps: []resource.TestStep{{
				Config: grantsConfig(grants),
				ExpectError: regexp.MustCompile(`(?s)` + either(
					`"bad-app" = \{.*`+acctest.ErrorRE(`cannot use app grants with autogroup:internet`).String()[4:],
					blamedOn(`tag not found: "tag:billing"`, `grants["bad-tag"].src[0]`).String()[4:])),
			}},
		})
		// One call for the whole set, then halves down to the culprits:
		// far fewer than one per grant of each bisection.
		if n := env.Faults.Count(routeValidatePolicy); n < 3 || n > 16 {
			t.Errorf("%d validations to blame 2 grants of 8, want between 3 and 16", n)
		}
	})
	after, _ := env.Tailnet.Policy()
	if string(after) != string(before) {
		t.Errorf("refused configurations changed the policy file:\n%s", after)
	}
	if n := env.Faults.Count(routeSetPolicy); n != 0 {
		t.Errorf("refused configurations made %d policy writes, want 0", n)
	}
}

func TestGrants_nameClaimedByAGrantResource(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: grantConfig("ops-to-phone", grantBody) + grantsConfig(teamGrants("tcp:443")),
			ExpectError: regexp.MustCompile(`(?s)Two Resources Claim One Policy Entry.*(the qtail_grant with name = "ops-to-phone"|` +
				`the qtail_grants with the grant "ops-to-phone")`),
		}},
	})
}

func TestGrants_ownedByAnotherConfiguration(t *testing.T) {
	t.Parallel()
	// Another configuration owns ops-to-phone with another port.
	env := acctest.New(t, acctest.WithPolicy(handMarkedGrants("tcp:22")))
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      grantsConfig(map[string]string{"ops-to-phone": grantsBody("100.64.0.3", "tcp:443"), "ops-to-tv": grantsBody("100.64.0.4", "tcp:443")}),
			ExpectError: regexp.MustCompile(`(?s)Policy Entry Already Owned.*"ops-to-phone" = \{.*import \{\s+to = qtail_grants\.NAME\s+id = "ops-to-phone"`),
		}},
	})
}

func TestGrants_412StormAndRefusedWrite(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				// Three writes refused with 412: read again, the whole set
				// re-applied, written once on the fourth attempt.
				PreConfig: func() {
					env.Faults.Add(conflicts(3))
				},
				Config: grantsConfig(teamGrants("tcp:443")),
				Check: resource.ComposeTestCheckFunc(expectFaultsServed(env),
					expectFragment(env, gkey("ops-to-phone"), grantsValue("100.64.0.3", "tcp:443")),
					expectFragment(env, gkey("ops-to-laptop"), grantsValue("100.64.0.1", "tcp:22")),
					expectFragment(env, gkey("ops-to-nas"), grantsValue("100.64.0.2", "tcp:445"))),
			},
			{
				// Validation unavailable at plan (a warning), then the write
				// refused: the error is on the grant at fault, and nothing
				// of the set is written.
				PreConfig: func() {
					env.Faults.Reset()
					env.Faults.Add(faults.Rule{Route: routeValidatePolicy, Status: 503, Count: 1000})
				},
				Config: grantsConfig(map[string]string{
					"ops-to-phone":  grantsBody("100.64.0.3", "tcp:8443"),
					"ops-to-laptop": grantsBody("100.64.0.1", "tcp:22"),
					"ops-to-nas":    grantsBody("tag:billing", "tcp:445"),
				}),
				ExpectError: blamedOn(`Tailscale refused the policy file`, `grants["ops-to-nas"].dst[0]`),
			},
			{
				PreConfig: func() { env.Faults.Reset() },
				Config:    grantsConfig(teamGrants("tcp:443")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: expectFragment(env, gkey("ops-to-phone"), grantsValue("100.64.0.3", "tcp:443")),
			},
		},
	})
}

func TestGrants_takeOverQtailGrantResources(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	removed := `
removed {
  from = qtail_grant.ops
  lifecycle {
    destroy = false
  }
}

removed {
  from = qtail_grant.other
  lifecycle {
    destroy = false
  }
}
`
	set := grantsConfig(map[string]string{
		"ops-to-phone": grantsBody("100.64.0.3", "tcp:443"),
		"carol-to-alice": `src = ["carol@example.com"]
      dst = ["100.64.0.1"]
      ip  = ["tcp:22"]`,
	})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: twoGrants("tcp:443")},
			{
				// Both qtail_grant leave the state without being deleted; a
				// set that would create their grants is refused: their
				// markers name their owners, which the plan cannot tell
				// from another configuration's.
				PreConfig:   env.Faults.ResetCalls,
				Config:      removed + set,
				ExpectError: acctest.ErrorRE(`import it here with an import block`),
			},
			{
				// Imported, the set takes them over: no write, one marker
				// each.
				PreConfig: env.Faults.ResetCalls,
				Config: removed + set + `
import {
  to = qtail_grants.team
  id = "carol-to-alice,ops-to-phone"
}
`,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantsAddr, plancheck.ResourceActionNoop),
				}},
				Check: resource.ComposeTestCheckFunc(
					expectFragment(env, opsGrantKey, opsGrantValue("tcp:443")),
					expectFragment(env, otherGrantKey, `{"dst":["100.64.0.1"],"ip":["tcp:22"],"src":["carol@example.com"]}`),
					expectCalls(env, routeSetPolicy, 0),
				),
			},
		},
	})
}
