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
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// sharedKey is the grant that two configurations declare alike.
var sharedKey = policyfile.Key{Kind: policyfile.KindGrant, Name: "ops-to-phone"}

// sharedValue is the entry of grantConfig("ops-to-phone", grantBody).
const sharedValue = `{"dst":["100.64.0.3"],"ip":["tcp:443"],"src":["group:platform-ops"]}`

// ownerPattern is what owners are made of.
var ownerPattern = regexp.MustCompile(`^[a-z2-9]{10}$`)

// expectOwnedBy checks that the entry of key in the policy file is marked
// once, for the owner that the state of addr holds.
func expectOwnedBy(env *acctest.Env, addr string, key policyfile.Key) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[addr]
		if !ok {
			return fmt.Errorf("%s is not in the state", addr)
		}
		owner := rs.Primary.Attributes["owner"]
		if !ownerPattern.MatchString(owner) {
			return fmt.Errorf("%s has the owner %q in its state", addr, owner)
		}
		body, _ := env.Tailnet.Policy()
		doc, err := policyfile.Parse(body)
		if err != nil {
			return err
		}
		if f := doc.Get(key); !f.Marked || f.Owner != owner {
			return fmt.Errorf("%s is marked for %q (found=%v, marked=%v), want the owner %q of %s:\n%s", key, f.Owner, f.Found, f.Marked, owner, addr, body)
		}
		if n := markerLines(body, key); n != 1 {
			return fmt.Errorf("%d markers of %s, want 1:\n%s", n, key, body)
		}
		return nil
	}
}

// expectGrantsOwnerOf checks that the grant of key is marked once, for
// the owner that the qtail_grants of grantsConfig holds for it.
func expectGrantsOwnerOf(env *acctest.Env, key policyfile.Key) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[grantsAddr]
		if !ok {
			return fmt.Errorf("%s is not in the state", grantsAddr)
		}
		owner := rs.Primary.Attributes["owners."+key.Name]
		body, _ := env.Tailnet.Policy()
		doc, err := policyfile.Parse(body)
		if err != nil {
			return err
		}
		if f := doc.Get(key); !ownerPattern.MatchString(owner) || f.Owner != owner || markerLines(body, key) != 1 {
			return fmt.Errorf("%s is marked for %q, %d times; the state of %s has the owner %q:\n%s", key, f.Owner, markerLines(body, key), grantsAddr, owner, body)
		}
		return nil
	}
}

// TestGrant_twoStatesOneName: two configurations (two states) declare a
// grant of one name and the same content. The second one's plan is
// refused, with the import block, and so is its apply; whatever it does,
// the first one's grant stays as it is and its plan stays empty.
func TestGrant_twoStatesOneName(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	config := grantConfig("ops-to-phone", grantBody)
	refused := acctest.ErrorRE(`Policy Entry Already Owned`)
	importBlock := acctest.ErrorRE(`import { to = qtail_grant.NAME id = "ops-to-phone" }`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check:  resource.ComposeTestCheckFunc(expectFragment(env, sharedKey, sharedValue), expectOwnedBy(env, grantAddr, sharedKey)),
			},
			{
				PreConfig: func() {
					before, _ := env.Tailnet.Policy()
					env.Faults.ResetCalls()
					t.Run("second configuration", func(t *testing.T) {
						resource.UnitTest(t, resource.TestCase{
							ProtoV6ProviderFactories: env.Factories(),
							Steps: []resource.TestStep{
								{Config: config, PlanOnly: true, ExpectError: refused},
								{Config: config, PlanOnly: true, ExpectError: importBlock},
								// The apply plans first, and stops there.
								{Config: config, ExpectError: refused},
							},
							// The destroy at the end finds nothing of its own.
						})
					})
					if after, _ := env.Tailnet.Policy(); string(after) != string(before) || env.Faults.Count(routeSetPolicy) != 0 {
						t.Errorf("the second configuration wrote the policy file (%d writes):\n%s", env.Faults.Count(routeSetPolicy), after)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: resource.ComposeTestCheckFunc(expectFragment(env, sharedKey, sharedValue), expectOwnedBy(env, grantAddr, sharedKey)),
			},
		},
	})
}

// TestFragments_destroyLeavesAnotherOwnersEntry: once the entry of a
// resource is marked for another owner (another configuration took it
// over: here, a hand edit of the marker), a refresh warns, a change of
// the entry is refused at plan, and the destroy leaves the entry where it
// is, for its owner.
func TestFragments_destroyLeavesAnotherOwnersEntry(t *testing.T) {
	t.Parallel()
	const other = "k3x9q2mfa7"
	tagOwner := func(owners string) string {
		return `
resource "qtail_tag_owner" "web" {
  tag    = "tag:web"
  owners = ` + owners + `
}
`
	}
	policyTest := func(dst string) string {
		return `
resource "qtail_policy_test" "carol" {
  name   = "carol-reach-phone"
  src    = "carol@example.com"
  accept = ["` + dst + `"]
}
`
	}
	for _, tc := range []struct {
		name, config, changed string
		key                   policyfile.Key
	}{
		{"grant", grantConfig("ops-to-phone", grantBody), grantConfig("ops-to-phone", strings.Replace(grantBody, "tcp:443", "tcp:8443", 1)), sharedKey},
		{"grants", grantsConfig(map[string]string{"ops-to-phone": grantsBody("100.64.0.3", "tcp:443")}),
			grantsConfig(map[string]string{"ops-to-phone": grantsBody("100.64.0.3", "tcp:8443")}), sharedKey},
		{"tag owner", tagOwner(`["group:platform-ops"]`), tagOwner(`["carol@example.com"]`), policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:web"}},
		{"policy test", policyTest("100.64.0.3:443"), policyTest("100.64.0.3:22"), policyfile.Key{Kind: policyfile.KindPolicyTest, Name: "carol-reach-phone"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := acctest.New(t)
			var owner string
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{
					{
						Config: tc.config,
						Check: func(*terraform.State) error {
							body, _ := env.Tailnet.Policy()
							doc, err := policyfile.Parse(body)
							if err != nil {
								return err
							}
							if owner = doc.Get(tc.key).Owner; owner == "" {
								return fmt.Errorf("%s has no owner:\n%s", tc.key, body)
							}
							return nil
						},
					},
					{
						PreConfig: func() {
							env.EditPolicy(t, tc.key.Marker()+"#"+owner, tc.key.Marker()+"#"+other)
						},
						Config:   tc.config,
						PlanOnly: true,
					},
					{
						Config:      tc.changed,
						ExpectError: acctest.ErrorRE(`Policy Entry Owned by Another Configuration`),
					},
				},
				CheckDestroy: func(*terraform.State) error {
					body, _ := env.Tailnet.Policy()
					doc, err := policyfile.Parse(body)
					if err != nil {
						return err
					}
					if f := doc.Get(tc.key); !f.Found || f.Owner != other {
						return fmt.Errorf("the destroy removed %s, which its marker gives to another owner (found=%v, owner %q):\n%s", tc.key, f.Found, f.Owner, body)
					}
					return nil
				},
			})
		})
	}
}

// TestGrant_lostAnswerAdoptsItsOwnEntry: the write of a new grant (of a
// qtail_grant and of a qtail_grants) goes through but its answers are
// lost, once or every time the provider asks again; the grant is written
// once, the resource adopts it (its marker names the owner it drew) and
// the next plan is empty.
func TestGrant_lostAnswerAdoptsItsOwnEntry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		count int
	}{
		// The retry of the write is answered 412: the Store reads the
		// file again and finds its entry.
		{"one lost answer", 1},
		// Every answer is lost: the Store gives up, and the resource
		// finds its entry when it reads the file again.
		{"every answer lost", 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := acctest.New(t)
			config := grantConfig("ops-to-phone", grantBody) + grantsConfig(map[string]string{"ops-to-laptop": grantsBody("100.64.0.1", "tcp:22")})
			laptopKey := policyfile.Key{Kind: policyfile.KindGrant, Name: "ops-to-laptop"}
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{
					{
						PreConfig: func() {
							env.Faults.Add(faults.Rule{Route: routeSetPolicy, AfterHandler: true, Drop: true, Count: tc.count})
						},
						Config: config,
						Check: resource.ComposeTestCheckFunc(
							expectFragment(env, sharedKey, sharedValue),
							expectOwnedBy(env, grantAddr, sharedKey),
							expectFragment(env, laptopKey, grantsValue("100.64.0.1", "tcp:22")),
							expectGrantsOwnerOf(env, laptopKey),
						),
					},
					{
						PreConfig: env.Faults.Reset,
						Config:    config,
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectEmptyPlan(),
						}},
					},
				},
			})
		})
	}
}

// legacyPolicy is the sandbox policy file with a grant, a tag owner and a
// test marked as qtail wrote them before markers named their owner.
func legacyPolicy(t *testing.T, env *acctest.Env) string {
	t.Helper()
	body, _ := env.Tailnet.Policy()
	doc, err := policyfile.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []policyfile.Mutation{
		{Key: sharedKey, Value: []byte(sharedValue)},
		{Key: policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:web"}, Value: []byte(`["group:platform-ops"]`)},
		{Key: legacyLaptopKey, Value: []byte(grantsValue("100.64.0.1", "tcp:22"))},
	} {
		if err := doc.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	out := string(doc.Bytes())
	if strings.Contains(out, "qtail:grant:ops-to-phone#") {
		t.Fatalf("a key without an owner wrote one:\n%s", out)
	}
	return out
}

// legacyLaptopKey is the grant of the qtail_grants of legacyConfig.
var legacyLaptopKey = policyfile.Key{Kind: policyfile.KindGrant, Name: "ops-to-laptop"}

var legacyConfig = grantsConfig(map[string]string{"ops-to-laptop": grantsBody("100.64.0.1", "tcp:22")}) + `
resource "qtail_grant" "ops" {
  name = "ops-to-phone"
  src  = ["group:platform-ops"]
  dst  = ["100.64.0.3"]
  ip   = ["tcp:443"]
}

resource "qtail_tag_owner" "web" {
  tag    = "tag:web"
  owners = ["group:platform-ops"]
}
`

// TestFragments_markersWithoutOwnerMigrate: a policy file whose markers
// name no owner, as qtail wrote them before, and states without an owner.
// The refresh draws each resource's owner and writes it in its marker, in
// place, every other byte as it was; the plan is empty. A marker that
// loses its owner again (a file restored from before) gets the state's
// owner back, the plan still empty.
func TestFragments_markersWithoutOwnerMigrate(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	start := legacyPolicy(t, env)
	env.SetPolicy(t, start)
	tagKey := policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:web"}
	var grantOwner string
	migrated := func(s *terraform.State) error {
		body, _ := env.Tailnet.Policy()
		want := start
		for addr, k := range map[string]policyfile.Key{grantAddr: sharedKey, "qtail_tag_owner.web": tagKey, grantsAddr: legacyLaptopKey} {
			rs := s.RootModule().Resources[addr]
			if rs == nil {
				return fmt.Errorf("%s is not in the state", addr)
			}
			owner := rs.Primary.Attributes["owner"]
			if addr == grantsAddr {
				owner = rs.Primary.Attributes["owners."+k.Name]
			}
			// The owner in the marker is the only change.
			want = strings.Replace(want, k.Marker()+"\n", k.Marker()+"#"+owner+"\n", 1)
		}
		if string(body) != want {
			return fmt.Errorf("the policy file is not the old one with the owners in its markers:\n%s\nwant:\n%s", body, want)
		}
		return nil
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			// States without an owner, from the markers without one.
			{
				Config:             legacyConfig,
				ResourceName:       grantAddr,
				ImportState:        true,
				ImportStateId:      "ops-to-phone",
				ImportStatePersist: true,
			},
			{
				Config:             legacyConfig,
				ResourceName:       "qtail_tag_owner.web",
				ImportState:        true,
				ImportStateId:      "tag:web",
				ImportStatePersist: true,
			},
			{
				Config:             legacyConfig,
				ResourceName:       grantsAddr,
				ImportState:        true,
				ImportStateId:      "ops-to-laptop",
				ImportStatePersist: true,
			},
			{
				Config: legacyConfig,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(grantAddr, tfjsonpath.New("owner"), knownvalue.StringRegexp(ownerPattern)),
					statecheck.ExpectKnownValue(grantAddr, tfjsonpath.New("marker"), knownvalue.StringExact("qtail:grant:ops-to-phone")),
				},
				Check: resource.ComposeTestCheckFunc(migrated,
					expectOwnedBy(env, grantAddr, sharedKey), expectOwnedBy(env, "qtail_tag_owner.web", tagKey),
					expectGrantsOwnerOf(env, legacyLaptopKey),
					acctest.Capture(grantAddr, "owner", &grantOwner)),
			},
			{
				// The file restored from before the migration.
				PreConfig: func() {
					env.EditPolicy(t, sharedKey.Marker()+"#"+grantOwner+"\n", sharedKey.Marker()+"\n")
				},
				Config: legacyConfig,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: resource.ComposeTestCheckFunc(expectOwnedBy(env, grantAddr, sharedKey),
					resource.TestCheckResourceAttrPtr(grantAddr, "owner", &grantOwner)),
			},
		},
	})
}
