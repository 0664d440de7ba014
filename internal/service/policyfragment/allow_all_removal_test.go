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
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

const allowAllAddr = "qtail_allow_all_removal.this"

const allowAllRemovalConfig = `
resource "qtail_allow_all_removal" "this" {}
`

// hasAllowAll reports whether the fake tailnet's policy has the rule.
func hasAllowAll(t *testing.T, env *acctest.Env) bool {
	t.Helper()
	body, _ := env.Tailnet.Policy()
	doc, err := policyfile.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	return policyfile.HasAllowAll(doc)
}

func TestAllowAllRemoval_lifecycle(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	if !hasAllowAll(t, env) {
		t.Fatal("the sandbox policy should start with the allow-all rule")
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy: func(*terraform.State) error {
			// Destroying the resource never writes the rule back.
			if hasAllowAll(t, env) {
				return fmt.Errorf("the allow-all rule came back on destroy")
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: allowAllRemovalConfig,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(allowAllAddr, tfjsonpath.New("id"), knownvalue.StringExact("allow_all")),
				},
				Check: func(*terraform.State) error {
					body, _ := env.Tailnet.Policy()
					if hasAllowAll(t, env) {
						return fmt.Errorf("the rule is still there:\n%s", body)
					}
					// Everything else stays: the groups, the SSH rule and the
					// comments of the sandbox's hand-written policy.
					for _, keep := range []string{"// Groups are maintained by hand", `"group:platform-ops"`, `"action": "check"`, "// The default rule of a new tailnet"} {
						if !strings.Contains(string(body), keep) {
							return fmt.Errorf("lost %q:\n%s", keep, body)
						}
					}
					return nil
				},
			},
			{
				// Someone puts the rule back by hand: the plan removes it again.
				PreConfig: func() {
					if err := env.Tailnet.SetPolicyDirect([]byte(sandbox.DefaultPolicy)); err != nil {
						t.Fatal(err)
					}
				},
				Config: allowAllRemovalConfig,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(allowAllAddr, plancheck.ResourceActionCreate),
				}},
				Check: func(*terraform.State) error {
					if hasAllowAll(t, env) {
						return fmt.Errorf("the rule was not removed again")
					}
					return nil
				},
			},
			{
				ResourceName:      allowAllAddr,
				ImportState:       true,
				ImportStateId:     "allow_all",
				ImportStateVerify: true,
			},
		},
	})
}

// The acls form of the rule, with legacy casing, is removed too.
func TestAllowAllRemoval_aclsForm(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(`{
  // old style
  "ACLs": [
    {"Action": "accept", "Users": ["*"], "Ports": ["*:*"]},
  ],
  "TagOwners": {"tag:k8s": []},
}
`))
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: allowAllRemovalConfig,
			Check: func(*terraform.State) error {
				body, _ := env.Tailnet.Policy()
				want := "{\n  // old style\n  \"ACLs\": [],\n  \"TagOwners\": {\"tag:k8s\": []},\n}\n"
				if string(body) != want {
					return fmt.Errorf("policy after removal:\n%s\nwant:\n%s", body, want)
				}
				return nil
			},
		}},
	})
}

// A policy test that needs the rule (carol reaches billing only through it)
// makes the removal fail at plan, with Tailscale's message, and nothing is
// written; a deny test planned after the removal is validated without the
// rule and passes.
func TestAllowAllRemoval_validatedAtPlan(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	before, _ := env.Tailnet.Policy()
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: `
resource "qtail_policy_test" "carol_reaches_alice" {
  name   = "carol-reaches-alice"
  src    = "carol@example.com"
  accept = ["100.64.0.1:22"]
}

resource "qtail_allow_all_removal" "this" {
  depends_on = [qtail_policy_test.carol_reaches_alice]
}
`,
				ExpectError: acctest.ErrorRE("Tailscale Rejects the Policy File Without the Allow-All Rule"),
			},
			{
				PreConfig: func() {
					if after, _ := env.Tailnet.Policy(); string(after) != string(before) {
						t.Fatalf("a refused plan wrote the policy file:\n%s", after)
					}
				},
				Config: `
resource "qtail_grant" "ops_ssh" {
  name = "platform-ops-ssh"
  src  = ["group:platform-ops"]
  dst  = ["*"]
  ip   = ["tcp:22"]
}

resource "qtail_allow_all_removal" "this" {
  depends_on = [qtail_grant.ops_ssh]
}

resource "qtail_policy_test" "carol_denied" {
  name       = "carol-denied-ssh"
  src        = "carol@example.com"
  deny       = ["100.64.0.1:22"]
  depends_on = [qtail_allow_all_removal.this]
}
`,
				Check: func(*terraform.State) error {
					body, _ := env.Tailnet.Policy()
					if hasAllowAll(t, env) || !strings.Contains(string(body), "qtail:policy_test:carol-denied-ssh") {
						return fmt.Errorf("unexpected policy:\n%s", body)
					}
					return nil
				},
			},
		},
	})
}
