package policyfragment_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/tailscale/hujson"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/provider"
)

// sandboxPolicy is the starting policy of the sandbox tailnet.
const sandboxPolicy = sandbox.DefaultPolicy

// Routes of the fake Tailscale API, as the sandbox counts them.
const (
	routeGetPolicy      = "GET /tailscale/api/v2/tailnet/{tailnet}/acl"
	routeSetPolicy      = "POST /tailscale/api/v2/tailnet/{tailnet}/acl"
	routeValidatePolicy = "POST /tailscale/api/v2/tailnet/{tailnet}/acl/validate"
)

// sectionEntries returns the canonical JSON of every element of a
// top-level array section (grants, tests) of a policy file, whatever the
// casing of its name.
func sectionEntries(body []byte, section string) ([]string, error) {
	std, err := hujson.Standardize(bytes.Clone(body))
	if err != nil {
		return nil, fmt.Errorf("the policy file is not HuJSON: %w", err)
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(std, &root); err != nil {
		return nil, err
	}
	var out []string
	for name, v := range root {
		if !strings.EqualFold(name, section) {
			continue
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(v, &elems); err != nil {
			return nil, fmt.Errorf("%s is not an array: %w", section, err)
		}
		for _, e := range elems {
			c, err := policyfile.Canonicalize(e)
			if err != nil {
				return nil, err
			}
			out = append(out, string(c))
		}
	}
	return out, nil
}

// mustGrantEntries is sectionEntries of the grants, for a test goroutine.
func mustGrantEntries(t testing.TB, body []byte) []string {
	t.Helper()
	out, err := sectionEntries(body, "grants")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// conflicts refuses the next n policy writes with 412, as Tailscale does
// when the policy file changed since it was read.
func conflicts(n int) faults.Rule {
	return faults.Rule{Route: routeSetPolicy, Status: 412, Count: n,
		Body: json.RawMessage(`{"message":"precondition failed, invalid old hash"}`)}
}

// expectOnlyAllowAllGrant checks that the grants of the policy file are
// down to the allow-all rule of the sandbox.
func expectOnlyAllowAllGrant(t *testing.T, env *acctest.Env) resource.TestCheckFunc {
	return func(*terraform.State) error {
		body, _ := env.Tailnet.Policy()
		if n := len(mustGrantEntries(t, body)); n != 1 {
			return fmt.Errorf("want only the allow-all grant left after destroy, got %d grants:\n%s", n, body)
		}
		return nil
	}
}

// expectNoGrantValued checks that no grant of the policy file holds value
// (canonical JSON), marked or not.
func expectNoGrantValued(t *testing.T, env *acctest.Env, value string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		body, _ := env.Tailnet.Policy()
		for _, e := range mustGrantEntries(t, body) {
			if e == value {
				return fmt.Errorf("the old grant is still in the policy file:\n%s", body)
			}
		}
		return nil
	}
}

// markerLines counts the lines of body that are key's marker. For a key
// without an owner it also counts the markers that name an owner: those
// of a grant, a tag owner or a test, and those of the approvers that
// owners added to the list of an auto approver.
func markerLines(body []byte, key policyfile.Key) int {
	n := 0
	for _, line := range strings.Split(string(body), "\n") {
		if isMarkerLine(line, key) {
			n++
		}
	}
	return n
}

// isMarkerLine reports whether line is the marker of key: for a key
// without an owner, with any owner or none.
func isMarkerLine(line string, key policyfile.Key) bool {
	line = strings.TrimSpace(line)
	return line == key.Marker() || !key.Owned() && strings.HasPrefix(line, key.Marker()+"#")
}

// ownedKey is key with the owner of the qtail_auto_approver at addr in s.
func ownedKey(s *terraform.State, addr string, key policyfile.Key) (policyfile.Key, error) {
	rs, ok := s.RootModule().Resources[addr]
	if !ok {
		return key, fmt.Errorf("%s is not in the state", addr)
	}
	key.Owner = rs.Primary.Attributes["owner"]
	if key.Owner == "" {
		return key, fmt.Errorf("%s has no owner in the state", addr)
	}
	return key, nil
}

// expectApprovers is expectFragment for the approvers that the
// qtail_auto_approver at addr added to the list of key.
func expectApprovers(env *acctest.Env, addr string, key policyfile.Key, want string) func(*terraform.State) error {
	return func(s *terraform.State) error {
		k, err := ownedKey(s, addr, key)
		if err != nil {
			return err
		}
		return expectFragment(env, k, want)(s)
	}
}

// expectFragment checks that the fake tailnet's policy file holds key's
// fragment once, marked, with the canonical value want, and no unmarked
// copy of it. The approvers of an owner carry one marker each.
func expectFragment(env *acctest.Env, key policyfile.Key, want string) func(*terraform.State) error {
	return func(*terraform.State) error {
		body, _ := env.Tailnet.Policy()
		doc, err := policyfile.Parse(body)
		if err != nil {
			return err
		}
		f := doc.Get(key)
		if !f.Found || !f.Marked {
			return fmt.Errorf("%s: found=%v marked=%v in the policy file:\n%s", key, f.Found, f.Marked, body)
		}
		if string(f.Value) != want {
			return fmt.Errorf("%s holds %s, want %s", key, f.Value, want)
		}
		markers := 1
		if key.Owned() {
			var approvers []json.RawMessage
			if err := json.Unmarshal([]byte(want), &approvers); err != nil {
				return err
			}
			markers = len(approvers)
		}
		if n := markerLines(body, key); n != markers {
			return fmt.Errorf("the marker of %s appears %d times, want %d:\n%s", key, n, markers, body)
		}
		if section := map[policyfile.Kind]string{policyfile.KindGrant: "grants", policyfile.KindPolicyTest: "tests"}[key.Kind]; section != "" {
			entries, err := sectionEntries(body, section)
			if err != nil {
				return err
			}
			n := 0
			for _, e := range entries {
				if e == want {
					n++
				}
			}
			if n != 1 {
				return fmt.Errorf("%s: %d entries of %s hold %s:\n%s", key, n, section, want, body)
			}
		}
		return nil
	}
}

// expectNoFragment checks that key's fragment and its marker are gone.
func expectNoFragment(env *acctest.Env, key policyfile.Key) func(*terraform.State) error {
	return func(*terraform.State) error {
		body, _ := env.Tailnet.Policy()
		doc, err := policyfile.Parse(body)
		if err != nil {
			return err
		}
		if f := doc.Get(key); f.Found && f.Marked {
			return fmt.Errorf("%s is still in the policy file:\n%s", key, body)
		}
		if markerLines(body, key) != 0 {
			return fmt.Errorf("the marker of %s is still in the policy file:\n%s", key, body)
		}
		return nil
	}
}

// stripFragments returns body with every fragment qtail owns removed,
// markers included: the bytes that belong to others.
func stripFragments(body []byte) ([]byte, error) {
	doc, err := policyfile.Parse(body)
	if err != nil {
		return nil, err
	}
	for _, f := range doc.Fragments() {
		doc.Delete(f.Key)
	}
	return doc.Bytes(), nil
}

// mustStrip is stripFragments for a body already parsed successfully.
func mustStrip(body []byte) []byte {
	out, err := stripFragments(body)
	if err != nil {
		return nil
	}
	return out
}

// withoutFragments is stripFragments for a test goroutine.
func withoutFragments(t testing.TB, body []byte) []byte {
	t.Helper()
	out, err := stripFragments(body)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// deleteByHand removes key's entry and its marker from the tailnet's
// policy file, as a person cleaning up the file would.
func deleteByHand(t *testing.T, env *acctest.Env, key policyfile.Key) {
	t.Helper()
	body, _ := env.Tailnet.Policy()
	doc, err := policyfile.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	if f := doc.Get(key); key.Kind != policyfile.KindAutoApprover && f.Marked {
		key.Owner = f.Owner
	}
	if !doc.Delete(key) {
		t.Fatalf("hand delete: %s is not in the policy file:\n%s", key, body)
	}
	env.SetPolicy(t, string(doc.Bytes()))
}

// removeMarkerByHand deletes the line of key's marker, leaving the entry.
func removeMarkerByHand(t *testing.T, env *acctest.Env, key policyfile.Key) {
	t.Helper()
	body, _ := env.Tailnet.Policy()
	var out []string
	removed := 0
	for _, line := range strings.SplitAfter(string(body), "\n") {
		if isMarkerLine(line, key) {
			removed++
			continue
		}
		out = append(out, line)
	}
	if removed != 1 {
		t.Fatalf("hand edit: the marker of %s appears %d times:\n%s", key, removed, body)
	}
	env.SetPolicy(t, strings.Join(out, ""))
}

// handwrittenPolicy is a policy file as people write it: comments of both
// kinds, blank lines, odd indentation, trailing commas or not, legacy key
// casing (ACLs, TagOwners, Grants, Hosts) and sections qtail never touches.
const handwrittenPolicy = `/* Tailnet policy of example.com.
   Edited by hand and by several Terraform runs. */
{
	// Groups of people.
	"groups": {
		"group:eng":  ["alice@example.com", "bob@example.com",],
		"group:ops": ["carol@example.com"], // on-call rotation
	},

  "Hosts": {"nas": "100.64.0.10", "phone": "100.64.0.3"},

	"ACLs": [
		{"action": "accept", "src": ["group:ops"], "dst": ["tag:db:5432"]},
	],

	"TagOwners": {
	   "tag:db":     ["group:ops"],
	   "tag:web": ["group:eng"] // no trailing comma here
	},

	"Grants": [
		// Engineers reach the web tier.
		{
			"src": ["group:eng"],
			"dst": ["tag:web"],
			"ip":  ["tcp:443"],
		},

		{"src": ["group:ops"], "dst": ["phone"], "ip": ["tcp:22"]}, // ops to the phone
	],

	"autoApprovers": {
		"routes": {
			"10.1.0.0/16": ["tag:db"],
		},
	},

	"tests": [
	    // Written by hand.
	    {"src": "carol@example.com", "accept": ["tag:db:5432"]},
	],

	"postures": {"posture:latest": ["node:tsReleaseTrack == 'stable'"]},
	"nodeAttrs": [{"target": ["group:eng"], "attr": ["funnel"]}],
	"randomizeClientPort": true, /* newer than some clients */
}
`

// everyKind is one fragment of each kind.
func everyKind(grantIP, cacheOwners, routeApprovers, exitApprovers, testAccept string) string {
	return fmt.Sprintf(`
resource "qtail_tag_owner" "cache" {
  tag    = "tag:cache"
  owners = %s
}

resource "qtail_grant" "eng_db" {
  name = "eng-to-db"
  src  = ["group:eng"]
  dst  = ["tag:db", qtail_tag_owner.cache.tag]
  ip   = %s
}

resource "qtail_auto_approver" "route" {
  route     = "10.2.0.0/16"
  approvers = %s
}

resource "qtail_auto_approver" "exit" {
  exit_node = true
  approvers = %s
}

resource "qtail_policy_test" "eng_db" {
  name       = "eng-reach-db"
  src        = "alice@example.com"
  accept     = [%q]
  depends_on = [qtail_grant.eng_db]
}
`, cacheOwners, grantIP, routeApprovers, exitApprovers, testAccept)
}

// expectOthersIntact checks that the policy file, without qtail's
// fragments, is the original byte for byte, and that it holds n fragments.
func expectOthersIntact(t *testing.T, env *acctest.Env, original string, n int) func(*terraform.State) error {
	return func(*terraform.State) error {
		body, _ := env.Tailnet.Policy()
		if got := withoutFragments(t, body); string(got) != original {
			return fmt.Errorf("bytes outside qtail's fragments changed:\n--- got (fragments removed)\n%s\n--- policy file\n%s", got, body)
		}
		doc, err := policyfile.Parse(body)
		if err != nil {
			return err
		}
		if got := len(doc.Fragments()); got != n {
			return fmt.Errorf("%d fragments in the policy file, want %d:\n%s", got, n, body)
		}
		return nil
	}
}

// TestFragments_goldenHandwrittenPolicy applies, updates and destroys one
// fragment of each kind in a hand-written policy file: every byte outside
// the fragments stays, and destroy gives the original file back.
func TestFragments_goldenHandwrittenPolicy(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithPolicy(handwrittenPolicy))
	env.SetPolicy(t, handwrittenPolicy) // the fake tailnet accepts it as it is
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy: func(*terraform.State) error {
			if body, _ := env.Tailnet.Policy(); string(body) != handwrittenPolicy {
				return fmt.Errorf("after destroy the policy file differs from the original:\n%s", body)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: everyKind(`["tcp:5432"]`, `["group:ops"]`, `["tag:db"]`, `["group:ops"]`, "tag:db:5432"),
				Check: resource.ComposeTestCheckFunc(
					expectOthersIntact(t, env, handwrittenPolicy, 5),
					expectFragment(env, policyfile.Key{Kind: policyfile.KindGrant, Name: "eng-to-db"}, `{"dst":["tag:db","tag:cache"],"ip":["tcp:5432"],"src":["group:eng"]}`),
					expectFragment(env, policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:cache"}, `["group:ops"]`),
					expectApprovers(env, "qtail_auto_approver.route", policyfile.RouteKey("10.2.0.0/16"), `["tag:db"]`),
					expectApprovers(env, "qtail_auto_approver.exit", policyfile.ExitNodeKey(), `["group:ops"]`),
					expectFragment(env, policyfile.Key{Kind: policyfile.KindPolicyTest, Name: "eng-reach-db"}, `{"accept":["tag:db:5432"],"src":"alice@example.com"}`),
				),
			},
			{
				Config: everyKind(`["tcp:5432", "tcp:5433"]`, `["group:ops", "group:eng"]`, `["tag:db", "tag:cache"]`, `["group:eng"]`, "tag:db:5433"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_grant.eng_db", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("qtail_tag_owner.cache", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("qtail_auto_approver.route", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("qtail_auto_approver.exit", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("qtail_policy_test.eng_db", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					expectOthersIntact(t, env, handwrittenPolicy, 5),
					expectFragment(env, policyfile.Key{Kind: policyfile.KindGrant, Name: "eng-to-db"}, `{"dst":["tag:db","tag:cache"],"ip":["tcp:5432","tcp:5433"],"src":["group:eng"]}`),
					expectFragment(env, policyfile.Key{Kind: policyfile.KindPolicyTest, Name: "eng-reach-db"}, `{"accept":["tag:db:5433"],"src":"alice@example.com"}`),
				),
			},
		},
	})
}

// regionGrants is what the r-th region's Terraform run declares: n grants
// named REGION-NN.
func regionGrants(region string, r, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `
resource "qtail_grant" "g%02d" {
  name = "%s-%02d"
  src  = ["group:ops"]
  dst  = ["%s"]
  ip   = ["tcp:443"]
}
`, i, region, i, regionGrantDst(r, i))
	}
	return b.String()
}

func regionGrantDst(r, i int) string { return fmt.Sprintf("100.64.%d.%d", r+1, i+1) }

// regionFactories returns a provider instance of its own for one region's
// run against env, like env.Factories(), with a budget of ten attempts per
// policy write instead of the four of acctest's fast retry policy. The
// Store counts 412s against the retry policy's MaxAttempts; with four
// stores writing to one policy file as fast as an in-process fake answers,
// a batch can lose four races in a row (it does in most runs), so this
// test would then measure that budget rather than qtail's merging.
func regionFactories(env *acctest.Env) map[string]func() (tfprotov6.ProviderServer, error) {
	opts := env.ProviderOptions()
	opts.Retry.MaxAttempts = 10
	return map[string]func() (tfprotov6.ProviderServer, error){
		"qtail": provider.Server(provider.NewWithOptions("test", opts)),
	}
}

// applyAtOnce runs one Terraform configuration per region at the same
// time against env, each with a provider instance of its own: each
// applies and runs its check; the last one to have applied runs
// allApplied while nothing changes the policy file; then each plans
// again, and the plan must be empty. Each destroys what it made at the
// end.
func applyAtOnce(t *testing.T, env *acctest.Env, regions []string, config func(r int, region string) string,
	check func(r int, region string) resource.TestCheckFunc, allApplied func() error) {
	t.Helper()
	var (
		mu       sync.Mutex
		arrived  int
		allThere = make(chan struct{})
		checkErr error
	)
	arrive := func() {
		mu.Lock()
		defer mu.Unlock()
		if arrived++; arrived == len(regions) {
			checkErr = allApplied()
			close(allThere)
		}
	}
	// The runs start together: t.Run is called from one goroutine per
	// region, so the -parallel limit does not serialize them.
	var wg sync.WaitGroup
	for r, region := range regions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(region, func(t *testing.T) {
				var once sync.Once
				// A run that fails before arriving must not block the others.
				defer once.Do(arrive)
				cfg := config(r, region)
				resource.UnitTest(t, resource.TestCase{
					ProtoV6ProviderFactories: regionFactories(env),
					Steps: []resource.TestStep{
						{
							Config: cfg,
							Check: resource.ComposeTestCheckFunc(check(r, region),
								func(*terraform.State) error { once.Do(arrive); return nil }),
						},
						{
							// Once every region has applied, a plan here is
							// still empty.
							PreConfig: func() {
								<-allThere
								if checkErr != nil {
									t.Error(checkErr)
								}
							},
							Config:   cfg,
							PlanOnly: true,
						},
					},
				})
			})
		}()
	}
	wg.Wait()
}

// TestFragments_fourRegionsAtOnce runs four Terraform applies at the same
// time against one tailnet, each with its own provider instance and 25
// grants, as four regions would. All 100 grants end in the policy file,
// the hand-written content stays, and a second plan in each is empty.
func TestFragments_fourRegionsAtOnce(t *testing.T) {
	t.Parallel()
	fourRegionsAtOnce(t, regionGrants)
}

// TestGrants_fourRegionsAtOnce is TestFragments_fourRegionsAtOnce with
// the grants of each region in one qtail_grants, and one region with
// qtail_grant resources beside them.
func TestGrants_fourRegionsAtOnce(t *testing.T) {
	t.Parallel()
	fourRegionsAtOnce(t, func(region string, r, n int) string {
		if r == 0 {
			return regionGrants(region, r, n)
		}
		var b strings.Builder
		b.WriteString("\nresource \"qtail_grants\" \"region\" {\n  grants = {\n")
		for i := range n {
			fmt.Fprintf(&b, "    \"%s-%02d\" = { src = [\"group:ops\"], dst = [%q], ip = [\"tcp:443\"] }\n", region, i, regionGrantDst(r, i))
		}
		b.WriteString("  }\n}\n")
		return b.String()
	})
}

// fourRegionsAtOnce applies the configurations of 25 grants of four
// regions at once (config gives the configuration of region, the r-th,
// with n grants) and checks that nothing is lost or duplicated.
func fourRegionsAtOnce(t *testing.T, config func(region string, r, n int) string) {
	const perRegion = 25
	regions := []string{"us-east-1", "eu-west-3", "ap-south-1", "sa-east-1"}
	env := acctest.New(t, acctest.WithPolicy(handwrittenPolicy))
	applyAtOnce(t, env, regions, func(r int, region string) string { return config(region, r, perRegion) },
		func(r int, region string) resource.TestCheckFunc {
			return func(s *terraform.State) error {
				for i := range perRegion {
					k := policyfile.Key{Kind: policyfile.KindGrant, Name: fmt.Sprintf("%s-%02d", region, i)}
					if err := expectFragment(env, k, `{"dst":["`+regionGrantDst(r, i)+`"],"ip":["tcp:443"],"src":["group:ops"]}`)(s); err != nil {
						return err
					}
				}
				return nil
			}
		},
		func() error {
			body, _ := env.Tailnet.Policy()
			doc, err := policyfile.Parse(body)
			switch {
			case err != nil:
				return err
			case len(doc.Fragments()) != len(regions)*perRegion:
				return fmt.Errorf("%d grants owned by qtail, want %d:\n%s", len(doc.Fragments()), len(regions)*perRegion, body)
			case !bytes.Equal(mustStrip(body), []byte(handwrittenPolicy)):
				return fmt.Errorf("the hand-written content changed:\n%s", body)
			}
			for _, r := range regions {
				for i := range perRegion {
					k := policyfile.Key{Kind: policyfile.KindGrant, Name: fmt.Sprintf("%s-%02d", r, i)}
					if n := markerLines(body, k); n != 1 {
						return fmt.Errorf("%s appears %d times", k, n)
					}
				}
			}
			return nil
		})
	if body, _ := env.Tailnet.Policy(); string(body) != handwrittenPolicy {
		t.Errorf("after every region destroyed its grants the policy file differs from the original:\n%s", body)
	}
	t.Logf("policy API calls: %v", env.Faults.Calls())
}

// threeGrants is a configuration of three grants, created in one batch.
const threeGrants = `
resource "qtail_grant" "a" {
  name = "a"
  src  = ["group:platform-ops"]
  dst  = ["100.64.0.1"]
  ip   = ["tcp:22"]
}

resource "qtail_grant" "b" {
  name = "b"
  src  = ["group:platform-ops"]
  dst  = ["100.64.0.2"]
  ip   = ["tcp:22"]
}

resource "qtail_grant" "c" {
  name = "c"
  src  = ["group:platform-ops"]
  dst  = ["100.64.0.3"]
  ip   = ["tcp:22"]
}
`

// expectThreeGrantsOnce checks that each grant of threeGrants is in the
// policy file exactly once.
func expectThreeGrantsOnce(env *acctest.Env) resource.TestCheckFunc {
	var checks []resource.TestCheckFunc
	for i, name := range []string{"a", "b", "c"} {
		checks = append(checks, expectFragment(env, policyfile.Key{Kind: policyfile.KindGrant, Name: name},
			fmt.Sprintf(`{"dst":["100.64.0.%d"],"ip":["tcp:22"],"src":["group:platform-ops"]}`, i+1)))
	}
	return resource.ComposeTestCheckFunc(checks...)
}

// expectFaultsServed checks that every injected failure was answered, so
// that the apply succeeded through them, not around them.
func expectFaultsServed(env *acctest.Env) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if p := env.Faults.Pending(); len(p) != 0 {
			return fmt.Errorf("injected failures left unused: %+v", p)
		}
		return nil
	}
}

// expectPolicyUnchanged checks that the policy file is still start.
func expectPolicyUnchanged(t *testing.T, env *acctest.Env, start string) {
	t.Helper()
	if body, _ := env.Tailnet.Policy(); string(body) != start {
		t.Errorf("a failed apply changed the policy file:\n%s", body)
	}
}

func TestFragments_412Storm(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				// Three writes refused with 412 (as if others kept writing):
				// re-read, re-applied, written on the fourth attempt.
				PreConfig: func() {
					env.Faults.Add(conflicts(3))
				},
				Config: threeGrants,
				Check:  resource.ComposeTestCheckFunc(expectThreeGrantsOnce(env), expectFaultsServed(env)),
			},
		},
	})
}

func TestFragments_412StormBeyondBounds(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					env.Faults.Add(conflicts(1000))
				},
				Config: threeGrants,
				ExpectError: acctest.ErrorRE(`gave up after 10 attempts to write the policy file: it kept changing underneath ` +
					`(each write was refused with HTTP 412 because the file had changed since it was read; last error: ` +
					`tailscale API POST /tailscale/api/v2/tailnet/example.com/acl: precondition failed, invalid old hash (HTTP 412)); ` +
					`nothing was written, run the apply again`),
			},
			{
				// The storm is over: the same apply succeeds, with no copies.
				PreConfig: func() {
					expectPolicyUnchanged(t, env, sandboxPolicy)
					env.Faults.Reset()
				},
				Config: threeGrants,
				Check:  expectThreeGrantsOnce(env),
			},
		},
	})
}

func TestFragments_429WithRetryAfter(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				// A Retry-After longer than the provider waits for: the apply
				// fails at once, says how long the API asked to wait and
				// when to try again, and nothing is written.
				PreConfig: func() {
					env.Faults.Add(faults.Rule{Route: routeSetPolicy, Status: 429, RetryAfter: 3600, Count: 1})
				},
				Config: threeGrants,
				ExpectError: regexp.MustCompile(acctest.ErrorRE("Too Many Requests (HTTP 429); the API asked to wait 1 hour before the next request (Retry-After: 3600); try again after").String() +
					`\s+\d{4}-\d\d-\d\d\s+\d\d:\d\d:\d\d\s+UTC.*` + strings.TrimPrefix(acctest.ErrorRE("asked it to wait 1 hour, longer than qtail waits").String(), "(?s)")),
			},
			{
				// Two 429s asking for a one second wait: waited for, then
				// written once.
				PreConfig: func() {
					expectPolicyUnchanged(t, env, sandboxPolicy)
					env.Faults.Reset()
					env.Faults.Add(faults.Rule{Route: routeSetPolicy, Status: 429, RetryAfter: 1, Count: 2})
				},
				Config: threeGrants,
				Check:  resource.ComposeTestCheckFunc(expectThreeGrantsOnce(env), expectFaultsServed(env)),
			},
		},
	})
}

func TestFragments_503(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				// Unavailable for longer than the retry policy lasts.
				PreConfig: func() {
					env.Faults.Add(faults.Rule{Route: routeSetPolicy, Status: 503, Count: 1000})
				},
				Config:      threeGrants,
				ExpectError: acctest.ErrorRE(`tailscale API POST /tailscale/api/v2/tailnet/example.com/acl: Service Unavailable (HTTP 503, after 4 attempts)`),
			},
			{
				// A short outage of reads and writes: retried, written once.
				PreConfig: func() {
					expectPolicyUnchanged(t, env, sandboxPolicy)
					env.Faults.Reset()
					env.Faults.Add(
						faults.Rule{Route: routeGetPolicy, Status: 503, Count: 2},
						faults.Rule{Route: routeSetPolicy, Status: 503, Count: 2},
					)
				},
				Config: threeGrants,
				Check:  resource.ComposeTestCheckFunc(expectThreeGrantsOnce(env), expectFaultsServed(env)),
			},
		},
	})
}
