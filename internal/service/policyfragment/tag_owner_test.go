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
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

var (
	operatorTagKey = policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:k8s-operator"}
	k8sTagKey      = policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:k8s"}
)

// operatorTags is the tagOwners part of the Tailscale operator recipe: the
// operator's own tag, owned by admins only, and the tag of its proxies,
// owned by the operator.
func operatorTags(k8sOwners string) string {
	return fmt.Sprintf(`
resource "qtail_tag_owner" "operator" {
  tag    = "tag:k8s-operator"
  owners = []
}

resource "qtail_tag_owner" "k8s" {
  tag    = "tag:k8s"
  owners = %s
}
`, k8sOwners)
}

func TestTagOwner_lifecycle(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy: func(s *terraform.State) error {
			if err := expectNoFragment(env, operatorTagKey)(s); err != nil {
				return err
			}
			return expectNoFragment(env, k8sTagKey)(s)
		},
		Steps: []resource.TestStep{
			{
				Config: operatorTags(`[qtail_tag_owner.operator.tag]`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("qtail_tag_owner.operator", tfjsonpath.New("owners"), knownvalue.ListSizeExact(0)),
					statecheck.ExpectKnownValue("qtail_tag_owner.operator", tfjsonpath.New("id"), knownvalue.StringExact("tag:k8s-operator")),
					statecheck.ExpectKnownValue("qtail_tag_owner.operator", tfjsonpath.New("marker"), knownvalue.StringExact("qtail:tag_owner:tag:k8s-operator")),
					statecheck.ExpectKnownValue("qtail_tag_owner.k8s", tfjsonpath.New("owners"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("tag:k8s-operator")})),
				},
				Check: resource.ComposeTestCheckFunc(
					expectFragment(env, operatorTagKey, `[]`),
					expectFragment(env, k8sTagKey, `["tag:k8s-operator"]`),
				),
			},
			{
				Config: operatorTags(`[qtail_tag_owner.operator.tag, "group:platform-ops"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_tag_owner.k8s", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("qtail_tag_owner.operator", plancheck.ResourceActionNoop),
				}},
				Check: expectFragment(env, k8sTagKey, `["tag:k8s-operator","group:platform-ops"]`),
			},
			{
				ResourceName:      "qtail_tag_owner.operator",
				ImportState:       true,
				ImportStateId:     "tag:k8s-operator",
				ImportStateVerify: true,
			},
			{
				ResourceName:      "qtail_tag_owner.k8s",
				ImportState:       true,
				ImportStateId:     "tag:k8s",
				ImportStateVerify: true,
			},
		},
	})
}

func TestTagOwner_drift(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	config := operatorTags(`[qtail_tag_owner.operator.tag]`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				// Edited by hand: a diff on that tag only.
				PreConfig: func() {
					env.EditPolicy(t, `"tag:k8s": ["tag:k8s-operator"]`, `"tag:k8s": ["tag:k8s-operator", "carol@example.com"]`)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_tag_owner.k8s", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("qtail_tag_owner.operator", plancheck.ResourceActionNoop),
				}},
				Check: expectFragment(env, k8sTagKey, `["tag:k8s-operator"]`),
			},
			{
				// Deleted by hand, marker and all: planned for creation.
				PreConfig: func() { deleteByHand(t, env, k8sTagKey) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_tag_owner.k8s", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("qtail_tag_owner.operator", plancheck.ResourceActionNoop),
				}},
				Check: expectFragment(env, k8sTagKey, `["tag:k8s-operator"]`),
			},
			{
				// Marker removed, content intact: adopted in place.
				PreConfig: func() { removeMarkerByHand(t, env, k8sTagKey) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_tag_owner.k8s", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("qtail_tag_owner.k8s", tfjsonpath.New("marker"), knownvalue.StringExact("qtail:tag_owner:tag:k8s")),
				}},
				Check: func(s *terraform.State) error {
					if err := expectFragment(env, k8sTagKey, `["tag:k8s-operator"]`)(s); err != nil {
						return err
					}
					body, _ := env.Tailnet.Policy()
					if n := strings.Count(string(body), `"tag:k8s":`); n != 1 {
						return fmt.Errorf(`"tag:k8s" is a key %d times:%s`, n, body)
					}
					return nil
				},
			},
		},
	})
}

func TestTagOwner_unmarkedEntryWithOtherOwners(t *testing.T) {
	t.Parallel()
	start := strings.Replace(sandboxPolicy, `"grants": [`, `"tagOwners": {
		"tag:db": ["carol@example.com"], // owned by the database team
		"tag:web": ["group:platform-ops"],
	},

	"grants": [`, 1)
	env := acctest.New(t, acctest.WithPolicy(start))
	dbConfig := func(owners string) string {
		return `
resource "qtail_tag_owner" "db" {
  tag    = "tag:db"
  owners = ` + owners + `
}
`
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				// Another value, no marker: refused at plan, with the import
				// command, and nothing written.
				Config:      dbConfig(`["group:platform-ops"]`),
				ExpectError: acctest.ErrorRE(`tagOwners["tag:db"] already exists in the policy file with a different value, ["carol@example.com"], and is not managed by qtail; to manage it with Terraform, import it: terraform import qtail_tag_owner.NAME 'tag:db'`),
			},
			{
				PreConfig: func() {
					body, _ := env.Tailnet.Policy()
					if string(body) != start || env.Faults.Count(routeSetPolicy) != 0 {
						t.Errorf("the refused plan changed the policy file:\n%s", body)
					}
				},
				// The same owners, no marker: adopted.
				Config: `
resource "qtail_tag_owner" "web" {
  tag    = "tag:web"
  owners = ["group:platform-ops"]
}
`,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_tag_owner.web", plancheck.ResourceActionCreate),
				}},
				Check: expectFragment(env, policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:web"}, `["group:platform-ops"]`),
			},
			{
				// The import the error advised, then the configured owners.
				Config:             dbConfig(`["group:platform-ops"]`),
				ResourceName:       "qtail_tag_owner.db",
				ImportState:        true,
				ImportStateId:      "tag:db",
				ImportStatePersist: true,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					for _, st := range states {
						if st.ID == "tag:db" && st.Attributes["owners.0"] == "carol@example.com" && st.Attributes["marker"] == "" {
							return nil
						}
					}
					return fmt.Errorf("want tag:db imported unmarked with its owners, got %+v", states)
				},
			},
			{
				Config: dbConfig(`["group:platform-ops"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_tag_owner.db", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("qtail_tag_owner.db", tfjsonpath.New("marker"), knownvalue.StringExact("qtail:tag_owner:tag:db")),
				}},
				Check: func(s *terraform.State) error {
					if err := expectFragment(env, policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:db"}, `["group:platform-ops"]`)(s); err != nil {
						return err
					}
					body, _ := env.Tailnet.Policy()
					if !strings.Contains(string(body), "// owned by the database team") {
						return fmt.Errorf("the comment next to the adopted entry is gone:\n%s", body)
					}
					return nil
				},
			},
		},
	})
}

func TestTagOwner_invalidInput(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	before, _ := env.Tailnet.Policy()
	for _, tc := range []struct{ name, tag, owners, want string }{
		{"no prefix", "k8s", `[]`, `tags must start with 'tag:'`},
		{"bad character", "tag:k8s_proxy", `[]`, `tag names can only contain numbers, letters, or dashes`},
		{"digit first", "tag:8s", `[]`, `tag names must start with a letter, after 'tag:'`},
		{"bad owner", "tag:k8s", `["*"]`, `owners and approvers are user emails, group:, autogroup: or tag: names`},
		{"undeclared owner tag", "tag:k8s", `["tag:nobody"]`, `tag not found: "tag:nobody"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{{
					Config:      tagOwnerConfigFor("t", tc.tag, tc.owners),
					ExpectError: acctest.ErrorRE(tc.want),
				}},
			})
		})
	}
	if after, _ := env.Tailnet.Policy(); string(after) != string(before) || env.Faults.Count(routeSetPolicy) != 0 {
		t.Errorf("refused configurations wrote the policy file (%d writes):\n%s", env.Faults.Count(routeSetPolicy), after)
	}
}
