// Package reviewacc runs the review command on plans that a real
// Terraform CLI makes of qtail configurations, against the sandbox: a
// grant added or narrowed, a policy test added, an exposure removed, no
// change, and the plans of two regions reviewed together, with the
// least-privilege credentials of a CI job. It lives apart from
// internal/review so that the review's unit tests, which mutation testing
// runs once per mutant, stay fast.
//
// The package has tests only.
package reviewacc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/review"
)

// The scenario: the operator runs in both regions (installed by hand);
// the us-east-1 root exposes billing-api at billing-api-us-east-1 with its
// own tag, lets group:platform-ops (alice and bob) in on 443 and 8080,
// removes the allow-all rule and tests that the group reaches 443. Each
// case plans a change of that root (or, for two regions, of both roots)
// and reviews the saved plan against the same sandbox.

const usHost = "billing-api-us-east-1"

// usRoot is the us-east-1 root: its base, and HCL in place of the grant's
// ip, with extra resources.
func usRoot(appID string, ip string, exposed bool, extra string) string {
	config := fmt.Sprintf(`
resource "qtail_tag_owner" "billing" {
  tag    = "tag:k8s-billing"
  owners = ["tag:k8s-operator"]
}

resource "qtail_grant" "ops_billing" {
  name = "platform-ops-to-billing"
  src  = ["group:platform-ops"]
  dst  = [qtail_tag_owner.billing.tag]
  ip   = %s
}

resource "qtail_allow_all_removal" "this" {
  depends_on = [qtail_grant.ops_billing]
}

resource "qtail_policy_test" "ops_reach_billing" {
  name       = "platform-ops-reach-billing"
  src        = "group:platform-ops"
  accept     = ["tag:k8s-billing:443"]
  depends_on = [qtail_grant.ops_billing]
}
`, ip)
	if exposed {
		config += fmt.Sprintf(`
resource "qtail_exposed_service" "billing" {
  application_id = %q
  hostname       = %q
  tags           = [qtail_tag_owner.billing.tag]
}
`, appID, usHost)
	}
	return config + extra
}

const bothPorts = `["tcp:443", "tcp:8080"]`

// euRoot is the eu-west-3 root: a new exposure of billing-api with its own
// tag, and a grant to it.
func euRoot(appID string) string {
	return fmt.Sprintf(`
resource "qtail_tag_owner" "billing_eu" {
  tag    = "tag:k8s-billing-eu"
  owners = ["tag:k8s-operator"]
}

resource "qtail_exposed_service" "billing_eu" {
  application_id = %q
  hostname       = "billing-api-eu-west-3"
  tags           = [qtail_tag_owner.billing_eu.tag]
}

resource "qtail_grant" "ops_billing_eu" {
  name = "platform-ops-to-billing-eu"
  src  = ["group:platform-ops"]
  dst  = [qtail_tag_owner.billing_eu.tag]
  ip   = ["tcp:443"]
}
`, appID)
}

// outcome is what one review gave: the exit code and the report, also as
// Markdown.
type outcome struct {
	code     int
	rep      review.Report
	markdown string
	stderr   string
}

// Least privilege: what a plan of these roots needs (read-only), and what
// the review needs.
var (
	planScopes   = []string{"policy_file:read", "devices:core:read", "devices:routes:read", "oauth_keys:read"}
	reviewScopes = []string{"policy_file:read", "devices:core:read"}
)

// ciIdentity gives the reviews of env the credentials of a CI job with
// workload identity: a federated identity with the review's scopes that
// trusts the job's identity tokens, and a stand-in for GitHub Actions'
// token endpoint. It returns the environment of such a job.
func ciIdentity(t *testing.T, env *acctest.Env) map[string]string {
	t.Helper()
	iss := tailnetapi.NewIssuer("https://token.actions.githubusercontent.com")
	id, aud := env.Tailnet.SeedFederatedIdentity(tailnetapi.FederatedIdentity{
		Issuer: iss, Subject: "repo:acme/platform:pull_request", Scopes: reviewScopes,
	})
	const requestToken = "gh-job-request-token"
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "bearer "+requestToken || r.URL.Query().Get("audience") != aud {
			http.Error(w, `{"message":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"value": iss.Token("repo:acme/platform:pull_request", aud, nil)})
	}))
	t.Cleanup(gh.Close)
	vars := env.Environ()
	delete(vars, "TAILSCALE_API_KEY")
	vars["TAILSCALE_OAUTH_CLIENT_ID"] = id
	vars["TAILSCALE_AUDIENCE"] = aud
	vars["ACTIONS_ID_TOKEN_REQUEST_URL"] = gh.URL + "/token?api-version=2.0"
	vars["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] = requestToken
	return vars
}

// runReview writes the plans as `terraform show -json` does and runs the
// command on them in the environment vars.
func runReview(ctx context.Context, vars map[string]string, dir string, plans map[string]*tfjson.Plan, order ...string) (outcome, error) {
	var args []string
	for _, label := range order {
		b, err := json.Marshal(plans[label])
		if err != nil {
			return outcome{}, err
		}
		path := filepath.Join(dir, label)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return outcome{}, err
		}
		args = append(args, path)
	}
	var out outcome
	for _, format := range []string{"json", "markdown"} {
		var stdout, stderr bytes.Buffer
		code := review.Main(ctx, append([]string{"-format", format}, args...), review.Env{
			Version: "test", Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return vars[k] },
		})
		if format == "json" {
			out.code, out.stderr = code, stderr.String()
			if err := json.Unmarshal(stdout.Bytes(), &out.rep); err != nil {
				return out, fmt.Errorf("exit code %d, stderr %s: the JSON report does not decode: %w", code, stderr.String(), err)
			}
		} else {
			if code != out.code {
				return out, fmt.Errorf("exit code %d with -format markdown, %d with json", code, out.code)
			}
			out.markdown = stdout.String()
		}
	}
	return out, nil
}

// reviewCheck reviews the plan of a step, alone or with plans captured
// before, and asserts on the outcome.
type reviewCheck struct {
	vars   map[string]string
	dir    string
	label  string
	others map[string]*tfjson.Plan
	// capture, when set, keeps the plan for a later review.
	capture **tfjson.Plan
	assert  func(o outcome) error
}

func (c reviewCheck) CheckPlan(ctx context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	if c.capture != nil {
		*c.capture = req.Plan
	}
	if c.assert == nil {
		return
	}
	plans := map[string]*tfjson.Plan{c.label: req.Plan}
	order := []string{}
	for label, p := range c.others {
		plans[label] = p
		order = append(order, label)
	}
	slices.Sort(order)
	order = append(order, c.label)
	o, err := runReview(ctx, c.vars, c.dir, plans, order...)
	if err == nil {
		err = c.assert(o)
	}
	if err != nil {
		resp.Error = fmt.Errorf("%w\n\nstderr: %s\nreport:\n%s", err, o.stderr, o.markdown)
	}
}

// port returns the access to one port of the us-east-1 billing service.
func port(o outcome, p uint16) (review.PortAccess, error) {
	target := usHost
	for _, ta := range o.rep.Access {
		if ta.Name != target {
			continue
		}
		for _, pa := range ta.Ports {
			if pa.Port == p {
				return pa, nil
			}
		}
		return review.PortAccess{}, fmt.Errorf("the report has no port %d for %s: %+v", p, target, ta)
	}
	return review.PortAccess{}, fmt.Errorf("the report has no target %s", target)
}

func userAccess(o outcome, user string) (review.UserAccess, error) {
	for _, u := range o.rep.Users {
		if u.User == user {
			return u, nil
		}
	}
	return review.UserAccess{}, fmt.Errorf("the report has no user %s", user)
}

// expect collects failed expectations.
type expect struct{ errs []error }

func (e *expect) that(ok bool, format string, args ...any) {
	if !ok {
		e.errs = append(e.errs, fmt.Errorf(format, args...))
	}
}

func (e *expect) err() error { return errors.Join(e.errs...) }

func (e *expect) fragment(o outcome, action, fragment string) {
	e.that(slices.ContainsFunc(o.rep.Fragments, func(c review.FragmentChange) bool { return c.Action == action && c.Fragment == fragment }),
		"no fragment change %s %s in %+v", action, fragment, o.rep.Fragments)
}

func (e *expect) contains(md string, parts ...string) {
	for _, p := range parts {
		e.that(strings.Contains(md, p), "the Markdown report lacks %q", p)
	}
}

func TestReview(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	env.InstallOperator(t, "us-east-1")
	env.InstallOperator(t, "eu-west-3")
	usApp := env.ApplicationID(t, "us-east-1", "billing-api")
	euApp := env.ApplicationID(t, "eu-west-3", "billing-api")
	dir := t.TempDir()
	base := usRoot(usApp, bothPorts, true, "")
	ci := ciIdentity(t, env)
	check := func(label string, assert func(o outcome) error) resource.ConfigPlanChecks {
		return resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{reviewCheck{vars: ci, dir: dir, label: label, assert: assert}}}
	}
	// After the first apply, the plans run with a read-only OAuth client,
	// as in CI.
	readOnly := func() {
		id, secret := env.Tailnet.SeedOAuthClient("", "", planScopes, nil)
		env.Setenv("TAILSCALE_API_KEY", "")
		env.Setenv("TAILSCALE_OAUTH_CLIENT_ID", id)
		env.Setenv("TAILSCALE_OAUTH_CLIENT_SECRET", secret)
	}
	var narrowed *tfjson.Plan

	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: base},
			{
				// A grant added: carol reaches the admin port.
				PreConfig: readOnly,
				Config: usRoot(usApp, bothPorts, true, `
resource "qtail_grant" "carol_billing" {
  name = "carol-to-billing"
  src  = ["carol@example.com"]
  dst  = ["tag:k8s-billing"]
  ip   = ["tcp:8080"]
}
`),
				PlanOnly: true, ExpectNonEmptyPlan: true,
				ConfigPlanChecks: check("grant-added.json", func(o outcome) error {
					var e expect
					e.that(o.code == review.ExitAccessChange, "exit code %d, want %d", o.code, review.ExitAccessChange)
					e.that(o.rep.AccessChanged && o.rep.Validation.Passed, "access changed %t, validation %+v", o.rep.AccessChanged, o.rep.Validation)
					e.fragment(o, "added", `qtail_grant "carol-to-billing"`)
					if p, err := port(o, 8080); err != nil {
						e.that(false, "%v", err)
					} else {
						e.that(slices.Equal(p.Gained, []string{"carol@example.com"}) && len(p.Lost) == 0 &&
							slices.Equal(p.Before, []string{"group:platform-ops"}) && slices.Equal(p.After, []string{"carol@example.com", "group:platform-ops"}), "port 8080: %+v", p)
					}
					if p, err := port(o, 443); err == nil {
						e.that(!p.Declared || len(p.Gained)+len(p.Lost) == 0, "port 443 changed: %+v", p)
					}
					if u, err := userAccess(o, "carol@example.com"); err != nil {
						e.that(false, "%v", err)
					} else {
						e.that(slices.Equal(u.Gained, []string{"tag:k8s-billing:tcp:8080"}) && len(u.Before) == 0, "carol: %+v", u)
					}
					e.contains(o.markdown, review.Marker, "**Access changes**: 1 service touched, 1 principal gaining, 0 losing", "```mermaid", `["carol@example.com"]`, `|"gains 8080"|`,
						"| `"+usHost+"` (service, `tag:k8s-billing`) | 8080 | `group:platform-ops` | `carol@example.com`, `group:platform-ops` | **gained** `carol@example.com` |",
						"+\t\t// qtail:grant:carol-to-billing", "**Pass**")
					return e.err()
				}),
			},
			{
				// A grant narrowed: the group keeps 443 and loses 8080, and
				// so do its members.
				Config:   usRoot(usApp, `["tcp:443"]`, true, ""),
				PlanOnly: true, ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{reviewCheck{vars: ci, dir: dir, label: "us-east-1.json", capture: &narrowed,
					assert: func(o outcome) error {
						var e expect
						e.that(o.code == review.ExitAccessChange, "exit code %d", o.code)
						e.fragment(o, "changed", `qtail_grant "platform-ops-to-billing"`)
						p8080, err := port(o, 8080)
						e.that(err == nil && slices.Equal(p8080.Lost, []string{"group:platform-ops"}) && len(p8080.After) == 0, "port 8080: %+v %v", p8080, err)
						p443, err := port(o, 443)
						e.that(err == nil && len(p443.Gained)+len(p443.Lost) == 0 && slices.Equal(p443.After, []string{"group:platform-ops"}), "port 443: %+v %v", p443, err)
						for _, user := range []string{"alice@example.com", "bob@example.com"} {
							u, err := userAccess(o, user)
							e.that(err == nil && slices.Equal(u.Lost, []string{"tag:k8s-billing:tcp:8080"}) && len(u.Gained) == 0, "%s: %+v %v", user, u, err)
						}
						e.contains(o.markdown, "**Access changes**: 1 service touched, 0 principals gaining, 3 losing", `-.->|"loses 8080"|`,
							"-\t\t\t\"ip\": [\"tcp:443\", \"tcp:8080\"],", "+\t\t\t\"ip\": [\"tcp:443\"],")
						return e.err()
					}}}},
			},
			{
				// A policy test added: no access change, the test is listed
				// and Tailscale runs it.
				Config: usRoot(usApp, bothPorts, true, `
resource "qtail_policy_test" "carol_denied" {
  name = "carol-denied-billing"
  src  = "carol@example.com"
  deny = ["tag:k8s-billing:443", "tag:k8s-billing:8080"]
}
`),
				PlanOnly: true, ExpectNonEmptyPlan: true,
				ConfigPlanChecks: check("test-added.json", func(o outcome) error {
					var e expect
					e.that(o.code == review.ExitNoAccessChange && !o.rep.AccessChanged, "exit code %d", o.code)
					e.that(slices.Equal(o.rep.Tests.Added, []string{"carol-denied-billing"}), "tests %+v", o.rep.Tests)
					e.that(o.rep.Validation.Passed && o.rep.Validation.Tests == 2, "validation %+v", o.rep.Validation)
					e.fragment(o, "added", `qtail_policy_test "carol-denied-billing"`)
					e.contains(o.markdown, "**No access change**", "policy tests **pass** (2)", "Tests added by the plans: `carol-denied-billing`.")
					return e.err()
				}),
			},
			{
				// An exposure removed: whoever reached the service loses it.
				Config:   usRoot(usApp, bothPorts, false, ""),
				PlanOnly: true, ExpectNonEmptyPlan: true,
				ConfigPlanChecks: check("exposure-removed.json", func(o outcome) error {
					var e expect
					e.that(o.code == review.ExitAccessChange, "exit code %d", o.code)
					e.that(len(o.rep.Fragments) == 0 && o.rep.PolicyDiff == "", "fragments %+v, diff %q", o.rep.Fragments, o.rep.PolicyDiff)
					for _, n := range []uint16{443, 8080} {
						p, err := port(o, n)
						e.that(err == nil && slices.Equal(p.Lost, []string{"group:platform-ops"}) && len(p.After) == 0, "port %d: %+v %v", n, p, err)
					}
					e.contains(o.markdown, "(service, removed, `tag:k8s-billing`)", `|"loses 443, 8080"|`)
					return e.err()
				}),
			},
			{
				// No change at all: the review says so and exits 0.
				Config:   base,
				PlanOnly: true,
				ConfigPlanChecks: check("no-change.json", func(o outcome) error {
					var e expect
					e.that(o.code == review.ExitNoAccessChange, "exit code %d", o.code)
					e.that(len(o.rep.Fragments) == 0 && len(o.rep.Users) == 0 && o.rep.Graph == "", "report %+v", o.rep)
					p, err := port(o, 443)
					e.that(err == nil && slices.Equal(p.Before, []string{"group:platform-ops"}) && slices.Equal(p.After, p.Before), "port 443: %+v %v", p, err)
					e.contains(o.markdown, "**No access change**", "The plans change no fragment of the policy file.")
					e.that(!strings.Contains(o.markdown, "```mermaid"), "a graph without changes")
					return e.err()
				}),
			},
			{
				// Two regions' plans together: the us-east-1 narrowing
				// captured above, and the eu-west-3 root that exposes
				// billing-api there and grants the group 443. The eu device
				// does not exist before apply, so the group's members show
				// what they gain.
				PreConfig: func() {
					resource.UnitTest(t, resource.TestCase{
						ProtoV6ProviderFactories: env.Factories(),
						Steps: []resource.TestStep{{
							Config: euRoot(euApp), PlanOnly: true, ExpectNonEmptyPlan: true,
							ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{reviewCheck{
								vars: ci, dir: dir, label: "eu-west-3.json", others: map[string]*tfjson.Plan{"us-east-1.json": narrowed},
								assert: func(o outcome) error {
									var e expect
									e.that(o.code == review.ExitAccessChange, "exit code %d", o.code)
									e.that(len(o.rep.Plans) == 2 && o.rep.Plans[0].Label == "us-east-1.json" && o.rep.Plans[0].Fragments == 1 &&
										o.rep.Plans[1].Label == "eu-west-3.json" && o.rep.Plans[1].Fragments == 2, "plans %+v", o.rep.Plans)
									e.fragment(o, "changed", `qtail_grant "platform-ops-to-billing"`)
									e.fragment(o, "added", `qtail_grant "platform-ops-to-billing-eu"`)
									e.fragment(o, "added", `qtail_tag_owner "tag:k8s-billing-eu"`)
									p, err := port(o, 8080)
									e.that(err == nil && slices.Equal(p.Lost, []string{"group:platform-ops"}), "us port 8080: %+v %v", p, err)
									u, err := userAccess(o, "alice@example.com")
									e.that(err == nil && slices.Equal(u.Gained, []string{"tag:k8s-billing-eu:tcp:443"}) &&
										slices.Equal(u.Lost, []string{"tag:k8s-billing:tcp:8080"}), "alice: %+v %v", u, err)
									e.contains(o.markdown, "`us-east-1.json` (1 fragment change), `eu-west-3.json` (2 fragment changes)",
										"`billing-api-eu-west-3` (service, added, `tag:k8s-billing-eu`) | | | | its address is known only once its device exists",
										`["alice@example.com"]`, `-->|"gains tcp:443"|`, `["billing-api-eu-west-3"]`)
									return e.err()
								}}}},
						}},
					})
				},
				Config:   base,
				PlanOnly: true,
			},
			{
				// Back to the API key, which may destroy.
				PreConfig: func() {
					env.Setenv("TAILSCALE_OAUTH_CLIENT_ID", "")
					env.Setenv("TAILSCALE_OAUTH_CLIENT_SECRET", "")
					env.Setenv("TAILSCALE_API_KEY", sandbox.TailscaleAPIKey)
				},
				Config:   base,
				PlanOnly: true,
			},
		},
	})
}
