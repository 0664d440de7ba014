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

const grantAddr = "qtail_grant.ops"

// grantConfig is a grant from group:platform-ops (a group of the sandbox
// policy) with the given body.
func grantConfig(name, body string) string {
	return fmt.Sprintf(`
resource "qtail_grant" "ops" {
  name = %q
  %s
}
`, name, body)
}

const grantBody = `src = ["group:platform-ops"]
  dst = ["100.64.0.3"]
  ip  = ["tcp:443"]`

func TestGrant_lifecycle(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	key := policyfile.Key{Kind: policyfile.KindGrant, Name: "ops-to-phone"}

	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy:             expectNoFragment(env, key),
		Steps: []resource.TestStep{
			{
				Config: grantConfig("ops-to-phone", grantBody),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(grantAddr, tfjsonpath.New("marker"), knownvalue.StringExact("qtail:grant:ops-to-phone")),
					plancheck.ExpectKnownValue(grantAddr, tfjsonpath.New("id"), knownvalue.StringExact("ops-to-phone")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(grantAddr, tfjsonpath.New("id"), knownvalue.StringExact("ops-to-phone")),
					statecheck.ExpectKnownValue(grantAddr, tfjsonpath.New("marker"), knownvalue.StringExact("qtail:grant:ops-to-phone")),
					statecheck.ExpectKnownValue(grantAddr, tfjsonpath.New("ip"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("tcp:443")})),
					statecheck.ExpectKnownValue(grantAddr, tfjsonpath.New("app"), knownvalue.Null()),
					statecheck.ExpectKnownValue(grantAddr, tfjsonpath.New("via"), knownvalue.Null()),
				},
				Check: expectFragment(env, key, `{"dst":["100.64.0.3"],"ip":["tcp:443"],"src":["group:platform-ops"]}`),
			},
			{
				// Every attribute changes but the name: one in-place update.
				// The tag comes from a tag owner of the same configuration,
				// validated together with the grant at plan time.
				PreConfig: func() { addPostures(t, env) },
				Config: grantConfig("ops-to-phone", `src = ["group:platform-ops", "carol@example.com"]
  dst = ["100.64.0.3", "tag:k8s"]
  ip  = ["tcp:443", "udp:53"]
  app = jsonencode({ "example.com/cap/billing" = [{ role = "reader" }] })
  via = [qtail_tag_owner.k8s.tag]
  src_posture = ["posture:latest"]`) + tagOwnerConfigFor("k8s", "tag:k8s", `["group:platform-ops"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantAddr, plancheck.ResourceActionUpdate),
				}},
				Check: expectFragment(env, key, `{"app":{"example.com/cap/billing":[{"role":"reader"}]},"dst":["100.64.0.3","tag:k8s"],`+
					`"ip":["tcp:443","udp:53"],"src":["group:platform-ops","carol@example.com"],"srcPosture":["posture:latest"],"via":["tag:k8s"]}`),
			},
			{
				ResourceName:      grantAddr,
				ImportState:       true,
				ImportStateId:     "ops-to-phone",
				ImportStateVerify: true,
			},
			{
				// Renaming replaces the grant: the old marker goes, the new
				// one comes, nothing else changes.
				Config: grantConfig("ops-to-phone-v2", grantBody),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: func(s *terraform.State) error {
					if err := expectNoFragment(env, key)(s); err != nil {
						return err
					}
					return expectFragment(env, policyfile.Key{Kind: policyfile.KindGrant, Name: "ops-to-phone-v2"},
						`{"dst":["100.64.0.3"],"ip":["tcp:443"],"src":["group:platform-ops"]}`)(s)
				},
			},
		},
	})
}

func tagOwnerConfigFor(label, tag, owners string) string {
	return fmt.Sprintf(`
resource "qtail_tag_owner" %q {
  tag    = %q
  owners = %s
}
`, label, tag, owners)
}

// addPostures adds a postures section to the tailnet's policy by hand, as
// a person would, so that grants may name posture:latest.
func addPostures(t *testing.T, env *acctest.Env) {
	t.Helper()
	body, _ := env.Tailnet.Policy()
	edited := strings.Replace(string(body), `"ssh": [`, `"postures": {"posture:latest": ["node:tsReleaseTrack == 'stable'"]},

	"ssh": [`, 1)
	if err := env.Tailnet.SetPolicyDirect([]byte(edited)); err != nil {
		t.Fatalf("adding postures to the policy: %v", err)
	}
}

// twoGrants is a configuration of two grants, so that drift tests can show
// that a hand change to one shows on that one only.
func twoGrants(opsIP string) string {
	return fmt.Sprintf(`
resource "qtail_grant" "ops" {
  name = "ops-to-phone"
  src  = ["group:platform-ops"]
  dst  = ["100.64.0.3"]
  ip   = [%q]
}

resource "qtail_grant" "other" {
  name = "carol-to-alice"
  src  = ["carol@example.com"]
  dst  = ["100.64.0.1"]
  ip   = ["tcp:22"]
}
`, opsIP)
}

const otherGrantAddr = "qtail_grant.other"

var (
	opsGrantKey   = policyfile.Key{Kind: policyfile.KindGrant, Name: "ops-to-phone"}
	otherGrantKey = policyfile.Key{Kind: policyfile.KindGrant, Name: "carol-to-alice"}
)

func opsGrantValue(ip string) string {
	return `{"dst":["100.64.0.3"],"ip":["` + ip + `"],"src":["group:platform-ops"]}`
}

func TestGrant_driftEditedByHand(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: twoGrants("tcp:443")},
			{
				PreConfig: func() { env.EditPolicy(t, `"ip": ["tcp:443"]`, `"ip": ["tcp:443", "tcp:8443"]`) },
				Config:    twoGrants("tcp:443"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(grantAddr, tfjsonpath.New("ip"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("tcp:443")})),
					plancheck.ExpectResourceAction(otherGrantAddr, plancheck.ResourceActionNoop),
				}},
				Check: resource.ComposeTestCheckFunc(
					expectFragment(env, opsGrantKey, opsGrantValue("tcp:443")),
					expectFragment(env, otherGrantKey, `{"dst":["100.64.0.1"],"ip":["tcp:22"],"src":["carol@example.com"]}`),
				),
			},
		},
	})
}

func TestGrant_driftDeletedByHand(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: twoGrants("tcp:443")},
			{
				PreConfig: func() { deleteByHand(t, env, opsGrantKey) },
				Config:    twoGrants("tcp:443"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction(otherGrantAddr, plancheck.ResourceActionNoop),
				}},
				Check: expectFragment(env, opsGrantKey, opsGrantValue("tcp:443")),
			},
		},
	})
}

func TestGrant_driftMarkerRemovedIsAdopted(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: twoGrants("tcp:443")},
			{
				// Marker gone, content intact: an in-place update of the
				// marker only, which marks the entry again without adding a
				// second one.
				PreConfig: func() { removeMarkerByHand(t, env, opsGrantKey) },
				Config:    twoGrants("tcp:443"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(grantAddr, tfjsonpath.New("marker"), knownvalue.StringExact("qtail:grant:ops-to-phone")),
					plancheck.ExpectResourceAction(otherGrantAddr, plancheck.ResourceActionNoop),
				}},
				Check: expectFragment(env, opsGrantKey, opsGrantValue("tcp:443")),
			},
			{
				// Marker gone and the configuration changes at once: the
				// entry is adopted, then changed; no copy is left behind.
				PreConfig: func() { removeMarkerByHand(t, env, opsGrantKey) },
				Config:    twoGrants("tcp:8443"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(grantAddr, plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					if err := expectFragment(env, opsGrantKey, opsGrantValue("tcp:8443"))(s); err != nil {
						return err
					}
					return expectNoGrantValued(t, env, opsGrantValue("tcp:443"))(s)
				},
			},
			{
				// Marker gone, then the resource is destroyed: the entry goes.
				PreConfig: func() { removeMarkerByHand(t, env, opsGrantKey) },
				Config:    twoGrants("tcp:8443"),
				Destroy:   true,
				Check:     expectOnlyAllowAllGrant(t, env),
			},
		},
	})
}

func TestGrant_identicalUnmarkedGrantIsAdopted(t *testing.T) {
	t.Parallel()
	// A person wrote the grant before qtail managed it, and another grant
	// with other content that is not qtail's business.
	start := strings.Replace(sandboxPolicy, `{"src": ["*"], "dst": ["*"], "ip": ["*"]},`,
		`{"src": ["*"], "dst": ["*"], "ip": ["*"]},
		{"dst": ["100.64.0.3"], "src": ["group:platform-ops"], "ip": ["tcp:443"]}, // written by hand
		{"src": ["group:platform-ops"], "dst": ["100.64.0.3"], "ip": ["tcp:22"]},`, 1)
	env := acctest.New(t, acctest.WithPolicy(start))
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: grantConfig("ops-to-phone", grantBody),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(grantAddr, plancheck.ResourceActionCreate),
			}},
			Check: func(s *terraform.State) error {
				if err := expectFragment(env, opsGrantKey, opsGrantValue("tcp:443"))(s); err != nil {
					return err
				}
				body, _ := env.Tailnet.Policy()
				if n := len(mustGrantEntries(t, body)); n != 3 {
					return fmt.Errorf("want 3 grants (allow-all, adopted, other), got %d:\n%s", n, body)
				}
				// Adoption only adds the marker line.
				if got := string(withoutFragments(t, body)); !strings.Contains(got, "// written by hand") {
					return fmt.Errorf("the comment of the adopted grant is gone:\n%s", body)
				}
				return nil
			},
		}},
	})
}

func TestGrant_invalidInputFailsAtPlanWithNothingWritten(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	before, _ := env.Tailnet.Policy()
	cases := []struct {
		name   string
		config string
		want   string
	}{
		{"bad name", grantConfig("-ops", grantBody), `names start with a letter or a digit`},
		{"empty src", grantConfig("g", `src = []
  dst = ["100.64.0.3"]
  ip  = ["*"]`), `src list must contain at least 1 elements`},
		{"bad tag in src", grantConfig("g", `src = ["tag:web_tier"]
  dst = ["100.64.0.3"]
  ip  = ["*"]`), `tag names can only contain numbers, letters, or dashes`},
		{"port in dst", grantConfig("g", `src = ["group:platform-ops"]
  dst = ["tag:web:443"]
  ip  = ["*"]`), `grants take no port in src or dst`},
		{"port zero", grantConfig("g", `src = ["group:platform-ops"]
  dst = ["100.64.0.3"]
  ip  = ["tcp:0"]`), `first port must be >0`},
		{"neither ip nor app", grantConfig("g", `src = ["group:platform-ops"]
  dst = ["100.64.0.3"]`), `A grant needs at least one of ip and app`},
		{"app not JSON", grantConfig("g", `src = ["group:platform-ops"]
  dst = ["100.64.0.3"]
  app = "{not json"`), `app must be a JSON object of capability names`},
		{"app capability name", grantConfig("g", `src = ["group:platform-ops"]
  dst = ["100.64.0.3"]
  app = jsonencode({ "billing" = [{}] })`), `capability name must have the form {domain}/{path}`},
		{"via not a tag", grantConfig("g", `src = ["group:platform-ops"]
  dst = ["100.64.0.3"]
  ip  = ["*"]
  via = ["group:platform-ops"]`), `via can only be a tag`},
		{"posture name", grantConfig("g", `src = ["group:platform-ops"]
  dst = ["100.64.0.3"]
  ip  = ["*"]
  src_posture = ["latest"]`), `postures are named "posture:NAME"`},
		// Valid locally, refused by Tailscale's validation at plan time,
		// with the server's message.
		{"undeclared tag", grantConfig("g", `src = ["tag:billing"]
  dst = ["100.64.0.3"]
  ip  = ["*"]`), `src=tag not found: "tag:billing"`},
		{"reserved capability", grantConfig("g", `src = ["group:platform-ops"]
  dst = ["100.64.0.3"]
  app = jsonencode({ "tailscale.com/cap/secret-sauce" = [{}] })`), `capability name must not be in the tailscale.com domain`},
		{"app to the internet", grantConfig("g", `src = ["group:platform-ops"]
  dst = ["autogroup:internet"]
  app = jsonencode({ "example.com/cap/x" = [{}] })`), `cannot use app grants with autogroup:internet`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{{
					Config:      tc.config,
					ExpectError: acctest.ErrorRE(tc.want),
				}},
			})
		})
	}
	after, _ := env.Tailnet.Policy()
	if string(after) != string(before) {
		t.Errorf("refused configurations changed the policy file:\n%s", after)
	}
	if n := env.Faults.Count(routeSetPolicy); n != 0 {
		t.Errorf("refused configurations made %d policy writes, want 0", n)
	}
	if n := env.Faults.Count(routeValidatePolicy); n == 0 {
		t.Error("no /acl/validate call was made at plan time")
	}
}

func TestGrant_undeclaredTagHintsAtReference(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: grantConfig("g", `src = ["tag:billing"]
  dst = ["100.64.0.3"]
  ip  = ["*"]`),
			ExpectError: acctest.ErrorRE(`refer to its attribute, for example src = [qtail_tag_owner.web.tag]`),
		}},
	})
}

// A tag or a group that the policy file does not declare, but that is a
// typo of one it does, is refused with the names it may have been meant
// for; a new tag is sent to the configuration that owns the tag owners.
func TestGrant_unknownNamesSuggestTheNearest(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(`{
  "groups": {"group:platform-ops": ["alice@example.com"]},
  "tagOwners": {"tag:k8s-billing": [], "tag:k8s-billing-us-east-1": [], "tag:web": []},
  "grants": [],
}`))
	for _, tc := range []struct{ name, src, want string }{
		{"typo of a tag", "tag:k8s-biling", `Did you mean "tag:k8s-billing"? The policy file's tagOwners declares "tag:k8s-billing".`},
		{"a region's tag", "tag:k8s-billing-us-east1", `Did you mean "tag:k8s-billing-us-east-1"?`},
		{"typo of a group", "group:platform-op", `Did you mean "group:platform-ops"? The policy file's groups declares "group:platform-ops". ` +
			`Groups are written by hand in the policy file (groups); qtail does not manage them.`},
		{"a new tag", "tag:database", `If the tag is new, declare it with a qtail_tag_owner in the configuration that manages this tailnet's tag owners`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{{
					Config: grantConfig("g", fmt.Sprintf(`src = [%q]
  dst = ["100.64.0.3"]
  ip  = ["*"]`, tc.src)),
					ExpectError: acctest.ErrorRE(tc.want),
				}},
			})
		})
	}
}

func TestGrant_missingTailscaleCredential(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	env.Setenv("TAILSCALE_API_KEY", "")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      grantConfig("ops-to-phone", grantBody),
			ExpectError: regexp.MustCompile(`(?s)tailscale_api_key.*TAILSCALE_API_KEY`),
		}},
	})
	if n := len(env.Faults.Calls()); n != 0 {
		t.Errorf("without a credential qtail made API calls: %v", env.Faults.Calls())
	}
}
