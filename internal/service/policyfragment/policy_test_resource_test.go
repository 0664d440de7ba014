package policyfragment_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

const policyTestAddr = "qtail_policy_test.ops"

var opsTestKey = policyfile.Key{Kind: policyfile.KindPolicyTest, Name: "ops-reach-phone"}

// noAllowAll is the sandbox policy without its allow-all grant, so that
// access is what the grants say.
var noAllowAll = strings.Replace(sandboxPolicy, `{"src": ["*"], "dst": ["*"], "ip": ["*"]},`,
	`{"src": ["carol@example.com"], "dst": ["100.64.0.1"], "ip": ["tcp:22"]},`, 1)

// guardedGrant is a grant and a test of what it must allow and what it
// must not; the test depends on the grant so that both are validated
// together at plan time.
func guardedGrant(testBody string) string {
	return `
resource "qtail_grant" "ops" {
  name = "ops-to-phone"
  src  = ["group:platform-ops"]
  dst  = ["100.64.0.3"]
  ip   = ["tcp:443"]
}

resource "qtail_policy_test" "ops" {
  name       = "ops-reach-phone"
  ` + testBody + `
  depends_on = [qtail_grant.ops]
}
`
}

const opsTestBody = `src    = "alice@example.com"
  accept = ["100.64.0.3:443"]
  deny   = ["100.64.0.3:22"]`

const opsTestValue = `{"accept":["100.64.0.3:443"],"deny":["100.64.0.3:22"],"src":"alice@example.com"}`

func TestPolicyTest_lifecycle(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(noAllowAll))
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy:             expectNoFragment(env, opsTestKey),
		Steps: []resource.TestStep{
			{
				Config: guardedGrant(opsTestBody),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(policyTestAddr, tfjsonpath.New("id"), knownvalue.StringExact("ops-reach-phone")),
					statecheck.ExpectKnownValue(policyTestAddr, tfjsonpath.New("marker"), knownvalue.StringExact("qtail:policy_test:ops-reach-phone")),
					statecheck.ExpectKnownValue(policyTestAddr, tfjsonpath.New("proto"), knownvalue.Null()),
				},
				Check: expectFragment(env, opsTestKey, opsTestValue),
			},
			{
				Config: guardedGrant(`src    = "bob@example.com"
  proto  = "tcp"
  accept = ["100.64.0.3:443"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(policyTestAddr, plancheck.ResourceActionUpdate),
				}},
				Check: expectFragment(env, opsTestKey, `{"accept":["100.64.0.3:443"],"proto":"tcp","src":"bob@example.com"}`),
			},
			{
				ResourceName:      policyTestAddr,
				ImportState:       true,
				ImportStateId:     "ops-reach-phone",
				ImportStateVerify: true,
			},
		},
	})
}

// TestPolicyTest_guardsLaterHandEdits shows what the test is for: once it
// is in the policy file, Tailscale refuses a later change that breaks the
// access it describes, from anyone.
func TestPolicyTest_guardsLaterHandEdits(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(noAllowAll))
	refused := func(edit func(string) string, want ...string) {
		t.Helper()
		before, _ := env.Tailnet.Policy()
		err := env.Tailnet.SetPolicyDirect([]byte(edit(string(before))))
		var ae *aclcheck.Error
		if !errors.As(err, &ae) || ae.Message != "test(s) failed" {
			t.Fatalf("want the edit refused with test(s) failed, got %v", err)
		}
		got := fmt.Sprint(ae.Data)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("the refusal does not say %q: %s", w, got)
			}
		}
		if after, _ := env.Tailnet.Policy(); string(after) != string(before) {
			t.Errorf("a refused edit changed the policy file:\n%s", after)
		}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: guardedGrant(opsTestBody)},
			{
				PreConfig: func() {
					// Someone narrows the grant to another port.
					refused(func(p string) string { return strings.Replace(p, `"ip": ["tcp:443"]`, `"ip": ["tcp:8443"]`, 1) },
						"alice@example.com", `address "100.64.0.3:443": want: Accept, got: Drop`)
					// Someone opens everything up again.
					refused(func(p string) string {
						return strings.Replace(p, `{"src": ["carol@example.com"], "dst": ["100.64.0.1"], "ip": ["tcp:22"]},`,
							`{"src": ["*"], "dst": ["*"], "ip": ["*"]},`, 1)
					}, `address "100.64.0.3:22": want: Drop, got: Accept`)
				},
				Config: guardedGrant(opsTestBody),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})
}

func TestPolicyTest_failingTestRefusedAtPlan(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(noAllowAll))
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: guardedGrant(opsTestBody)},
			{
				PreConfig: func() { env.Faults.ResetCalls() },
				Config: guardedGrant(opsTestBody) + `
resource "qtail_policy_test" "carol" {
  name   = "carol-reach-phone"
  src    = "carol@example.com"
  accept = ["100.64.0.3:443"]
}
`,
				ExpectError: acctest.ErrorRE(`test(s) failed: carol@example.com: address "100.64.0.3:443": want: Accept, got: Drop`),
			},
			{
				PreConfig: func() {
					if n := env.Faults.Count(routeSetPolicy); n != 0 {
						t.Errorf("the refused plan wrote the policy file %d times", n)
					}
				},
				Config: guardedGrant(opsTestBody),
				Check:  expectNoFragment(env, policyfile.Key{Kind: policyfile.KindPolicyTest, Name: "carol-reach-phone"}),
			},
		},
	})
}

// A grant that breaks a test's deny is refused at plan with an error that
// names the test and the grant; a test written by hand is quoted as such.
func TestPolicyTest_refusalNamesTheTestAndTheGrant(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(noAllowAll))
	sshGrant := `
resource "qtail_grant" "alice_ssh" {
  name = "alice-ssh-phone"
  src  = ["alice@example.com"]
  dst  = ["100.64.0.3"]
  ip   = ["tcp:22"]
}
`
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: guardedGrant(opsTestBody)},
			{
				Config: guardedGrant(opsTestBody) + sshGrant,
				// The marker carries its owner, which differs from run to run.
				ExpectError: regexp.MustCompile(acctest.ErrorRE(`The change breaks qtail_policy_test "ops-reach-phone" (marked // qtail:policy_test:ops-reach-phone`).String() +
					`#[a-z0-9]+\):\s+` +
					strings.TrimPrefix(acctest.ErrorRE(`its deny says that alice@example.com must not reach 100.64.0.3:22, and with the change it does. `+
						`The planned grants that let it: qtail_grant "alice-ssh-phone".`).String(), `(?s)`)),
			},
			{
				// The same deny, written by hand, instead of qtail's.
				Config: guardedGrant(`src    = "alice@example.com"
  accept = ["100.64.0.3:443"]`),
			},
			{
				PreConfig: func() {
					env.EditPolicy(t, `"tests": [`, `"tests": [
		{"src": "alice@example.com", "deny": ["100.64.0.3:22"]},`)
				},
				Config: guardedGrant(`src    = "alice@example.com"
  accept = ["100.64.0.3:443"]`) + sshGrant,
				ExpectError: acctest.ErrorRE(`The change breaks the test {"deny":["100.64.0.3:22"],"src":"alice@example.com"}, written by hand in the policy file (not qtail's): ` +
					`its deny says that alice@example.com must not reach 100.64.0.3:22, and with the change it does. ` +
					`The planned grants that let it: qtail_grant "alice-ssh-phone".`),
			},
			{
				// Validation unavailable at plan (a warning), the write
				// refused at apply: the error says the same.
				PreConfig: func() { env.Faults.Add(faults.Rule{Route: routeValidatePolicy, Status: 503, Count: 1000}) },
				Config: guardedGrant(`src    = "alice@example.com"
  accept = ["100.64.0.3:443"]`) + sshGrant,
				ExpectError: regexp.MustCompile(acctest.ErrorRE(`qtail could not add qtail_grant "alice-ssh-phone" to the policy file: Tailscale refused the policy file.`).String() +
					`.*` + strings.TrimPrefix(acctest.ErrorRE(`The change breaks the test {"deny":["100.64.0.3:22"],"src":"alice@example.com"}, written by hand in the policy file (not qtail's): `+
					`its deny says that alice@example.com must not reach 100.64.0.3:22, and with the change it does. `+
					`The planned grants that let it: qtail_grant "alice-ssh-phone".`).String(), "(?s)")),
			},
			{
				PreConfig: func() { env.Faults.Reset() },
				Config: guardedGrant(`src    = "alice@example.com"
  accept = ["100.64.0.3:443"]`),
				Check: expectNoFragment(env, policyfile.Key{Kind: policyfile.KindGrant, Name: "alice-ssh-phone"}),
			},
		},
	})
}

func TestPolicyTest_drift(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(noAllowAll))
	config := guardedGrant(opsTestBody)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					env.EditPolicy(t, `"deny": ["100.64.0.3:22"]`, `"deny": ["100.64.0.3:22", "100.64.0.3:80"]`)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(policyTestAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction(grantAddr, plancheck.ResourceActionNoop),
				}},
				Check: expectFragment(env, opsTestKey, opsTestValue),
			},
			{
				PreConfig: func() { deleteByHand(t, env, opsTestKey) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(policyTestAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction(grantAddr, plancheck.ResourceActionNoop),
				}},
				Check: expectFragment(env, opsTestKey, opsTestValue),
			},
			{
				PreConfig: func() { removeMarkerByHand(t, env, opsTestKey) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(policyTestAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(policyTestAddr, tfjsonpath.New("marker"), knownvalue.StringExact("qtail:policy_test:ops-reach-phone")),
				}},
				Check: expectFragment(env, opsTestKey, opsTestValue),
			},
			{
				// A legacy spelling of the same test ("user", "allow") reads
				// as the same values: no diff.
				PreConfig: func() {
					env.EditPolicy(t, `"src": "alice@example.com"`, `"user": "alice@example.com"`)
					env.EditPolicy(t, `"accept": ["100.64.0.3:443"]`, `"allow": ["100.64.0.3:443"]`)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})
}

func TestPolicyTest_invalidInput(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(noAllowAll))
	before, _ := env.Tailnet.Policy()
	for _, tc := range []struct{ name, body, want string }{
		{"wildcard src", `src = "*"
  accept = ["100.64.0.3:443"]`, `tests cannot use wildcards`},
		{"no port", `src = "alice@example.com"
  accept = ["100.64.0.3"]`, `needs one port`},
		{"port range", `src = "alice@example.com"
  deny = ["100.64.0.3:1-100"]`, `needs exactly one port between 1 and 65535`},
		{"no destinations", `src = "alice@example.com"`, `needs at least one destination in accept or deny`},
		{"unknown proto", `src = "alice@example.com"
  proto = "quic"
  accept = ["100.64.0.3:443"]`, `proto name "quic" not known`},
		{"bad name", `src = "alice@example.com"
  accept = ["100.64.0.3:443"]`, `names start with a letter or a digit`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "t"
			if tc.name == "bad name" {
				name = "_t"
			}
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{{
					Config:      fmt.Sprintf("resource \"qtail_policy_test\" \"t\" {\n  name = %q\n  %s\n}\n", name, tc.body),
					ExpectError: acctest.ErrorRE(tc.want),
				}},
			})
		})
	}
	if after, _ := env.Tailnet.Policy(); string(after) != string(before) || env.Faults.Count(routeSetPolicy) != 0 {
		t.Errorf("refused configurations wrote the policy file (%d writes):\n%s", env.Faults.Count(routeSetPolicy), after)
	}
}
