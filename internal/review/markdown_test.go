package review

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// changesReport is a report with something in every section: failed
// plans, access gained and lost, users, a refused policy file, tests,
// findings, fragments, a diff and notes.
func changesReport() *Report {
	return &Report{
		Tailnet:     "example.com",
		Plans:       []PlanSummary{{Label: "us.json", Fragments: 1}, {Label: "eu.json", Fragments: 2}},
		FailedPlans: []FailedPlan{{Label: "ap.failed.json", Diagnostics: []PlanDiagnostic{{Summary: "x"}, {Summary: "y"}}}},
		Fragments: []FragmentChange{
			{Plan: "us.json", Address: "qtail_grant.a", Fragment: `qtail_grant "a"`, Action: "added"},
			{Plan: "eu.json", Address: "qtail_grant.b", Fragment: `qtail_grant "b|c"`, Action: "changed", Unknown: true},
		},
		PolicyDiff: "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n",
		Access: []TargetAccess{
			{Kind: "service", Name: "web", Status: "changed", Tags: []string{"tag:web", "tag:eu"}, IP: "100.64.0.10", Ports: []PortAccess{
				{Port: 443, Declared: true, Before: []string{"group:ops"}, After: []string{"bob@example.com", "group:ops"}, Gained: []string{"bob@example.com"}},
				{Port: 8080, Before: []string{"alice@example.com"}, After: []string{}, Lost: []string{"alice@example.com"}},
				{Port: 8443, Before: []string{"carol@example.com"}, After: []string{"dave@example.com"}, Gained: []string{"dave@example.com"}, Lost: []string{"carol@example.com"}},
				{Port: 22, Before: []string{"group:ops"}, After: []string{"group:ops"}},
			}},
			{Kind: "route", Name: "10.0.0.0/24", Status: "unchanged", IP: "10.0.0.1", Ports: []PortAccess{}},
			{Kind: "service", Name: "api", Status: "added", Tags: []string{"tag:api"}, Ports: []PortAccess{}, Note: "its address is known | later"},
		},
		Users: []UserAccess{
			{User: "bob@example.com", Before: []string{"tag:a:tcp:1", "tag:b:tcp:2"}, After: []string{"tag:a:tcp:1", "tag:b:tcp:2", "tag:web:tcp:443"}, Gained: []string{"tag:web:tcp:443"}},
			{User: "carol@example.com", Before: []string{"tag:a:tcp:1", "tag:web:tcp:8443"}, After: []string{"tag:a:tcp:1"}, Lost: []string{"tag:web:tcp:8443"}},
			{User: "ghost@example.com", Unknown: true, Reason: "user not found", Before: []string{}, After: []string{}},
		},
		Principals: []PrincipalAccess{
			{Principal: "bob@example.com", Gains: []string{"`web` port 443"}},
			{Principal: "carol@example.com", Loses: []string{"`web` port 8443"}},
		},
		Counts: Counts{Targets: 1, Gaining: 2, Losing: 2},
		Validation: Validation{Message: "test(s) failed:\n  bob", Failures: []tailnet.ErrorData{
			{User: "bob@example.com", Errors: []string{"tag:web:443: want Drop", "tag:web:80:  want Drop"}},
			{User: "carol@example.com"},
		}, Tests: 3},
		Tests:         TestChanges{Added: []string{"t1"}, Removed: []string{"t2", "t3"}},
		BrokenTests:   []BrokenTest{{Message: "The change breaks\nbob-no-web."}},
		Findings:      []Finding{{Severity: SeverityError, New: true, Message: "first"}, {Severity: SeverityWarning, Message: "second,\n\tsaid  twice"}},
		AccessChanged: true,
		Notes:         []string{"a note", "another\nnote"},
	}
}

func TestMarkdown(t *testing.T) {
	want := Marker + "\n## qtail plan review\n\n" +
		"**Access changes**: 1 service touched, 2 principals gaining, 2 losing · **1 plan failed** · policy **refused** by Tailscale · 2 findings\n\n" +
		"Plans: `us.json` (1 fragment change), `eu.json` (2 fragment changes), `ap.failed.json` (**failed**: 2 errors). Tailnet: `example.com`.\n\n" +
		"A plan that failed is not part of the access and policy sections below: its errors are the first findings.\n\n" +
		"### Access\n\n" +
		"| Target | Port | Before | After | Change |\n|---|---|---|---|---|\n" +
		"| `web` (service, changed, `tag:web`, `tag:eu`) | 443 | `group:ops` | `bob@example.com`, `group:ops` | **gained** `bob@example.com` |\n" +
		"| `web` (service, changed, `tag:web`, `tag:eu`) | 8080 | `alice@example.com` | no one | **lost** `alice@example.com` |\n" +
		"| `web` (service, changed, `tag:web`, `tag:eu`) | 8443 | `carol@example.com` | `dave@example.com` | **gained** `dave@example.com`; **lost** `carol@example.com` |\n" +
		"| `web` (service, changed, `tag:web`, `tag:eu`) | 22 | `group:ops` | `group:ops` | unchanged |\n" +
		"| `10.0.0.0/24` (route) | | | | no rule names it on any port asked about |\n" +
		"| `api` (service, added, `tag:api`) | | | | its address is known \\| later |\n" +
		"\n#### Users\n\nWhat each user named by a changed grant reaches, as the destinations of the rules that apply to them.\n\n" +
		"| User | Gains | Loses | Unchanged |\n|---|---|---|---|\n" +
		"| `bob@example.com` | `tag:web:tcp:443` | - | 2 |\n" +
		"| `carol@example.com` | - | `tag:web:tcp:8443` | 1 |\n" +
		"| `ghost@example.com` | not known to the tailnet yet: user not found | | |\n" +
		"\n#### Who gains or loses what\n\n| Principal | Gains | Loses |\n|---|---|---|\n" +
		"| `bob@example.com` | `web` port 443 | - |\n" +
		"| `carol@example.com` | - | `web` port 8443 |\n" +
		"\n### Policy tests\n\n" +
		"**Fail**: Tailscale refuses the planned policy file: test(s) failed: bob\n" +
		"- `bob@example.com`: tag:web:443: want Drop\n" +
		"- `bob@example.com`: tag:web:80: want Drop\n" +
		"\nThe change breaks bob-no-web.\n" +
		"\nTests added by the plans: `t1`.\n" +
		"\nTests removed by the plans: `t2`, `t3`.\n" +
		"\n### Findings\n\n" +
		"- **error** (new): first\n" +
		"- **warning** (already the case): second, said twice\n" +
		"\n### Policy fragments\n\n" +
		"| Change | Fragment | Resource | Plan |\n|---|---|---|---|\n" +
		"| added | `qtail_grant \"a\"` | `qtail_grant.a` | `us.json` |\n" +
		"| changed (known after apply) | `qtail_grant \"b\\|c\"` | `qtail_grant.b` | `eu.json` |\n" +
		"\n<details><summary>Policy file diff (5 lines)</summary>\n\n```diff\n--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n```\n\n</details>\n" +
		"\n### Notes\n\n- a note\n- another note\n"
	if got := changesReport().Markdown(); got != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", got, want)
	}

	// Nothing to say, and a policy file without tests.
	quiet := &Report{Tailnet: "-", Plans: []PlanSummary{{Label: "plan.json"}}, Validation: Validation{Passed: true}}
	want = Marker + "\n## qtail plan review\n\n" +
		"**No access change** · policy tests **pass** (0) · 0 findings\n\n" +
		"Plans: `plan.json` (0 fragment changes). Tailnet: `-`.\n\n" +
		"### Access\n\nThe plans touch no exposed service, route or device.\n" +
		"\n### Policy tests\n\n**Pass**: Tailscale accepts the planned policy file, which has no tests.\n" +
		"\n### Findings\n\nNone.\n" +
		"\n### Policy fragments\n\nThe plans change no fragment of the policy file.\n"
	if got := quiet.Markdown(); got != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", got, want)
	}

	// One of each.
	one := &Report{Tailnet: "-", Plans: []PlanSummary{{Label: "plan.json", Fragments: 1}},
		FailedPlans: []FailedPlan{{Label: "b.failed.json", Diagnostics: []PlanDiagnostic{{Summary: "x"}}}, {Label: "c.failed.json", Diagnostics: []PlanDiagnostic{}}},
		Validation:  Validation{Passed: true, Tests: 1}, Findings: []Finding{{Severity: SeverityWarning, New: true, Message: "m"}},
		AccessChanged: true, Counts: Counts{Targets: 2, Gaining: 1, Losing: 1}, PolicyDiff: "+x\n"}
	md := one.Markdown()
	for _, s := range []string{
		"**Access changes**: 2 services touched, 1 principal gaining, 1 losing · **2 plans failed** · policy tests **pass** (1) · 1 finding\n",
		"Plans: `plan.json` (1 fragment change), `b.failed.json` (**failed**: 1 error), `c.failed.json` (**failed**: 0 errors).",
		"**Pass**: Tailscale accepts the planned policy file, and runs its 1 test: they pass.\n",
		"<details><summary>Policy file diff (1 line)</summary>",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("the report does not say %q:\n%s", s, md)
		}
	}
}

func TestJSON(t *testing.T) {
	b, err := changesReport().JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || !strings.HasPrefix(string(b), "{\n  \"tailnet\": \"example.com\",\n") || !strings.HasSuffix(string(b), "\n}\n") {
		t.Errorf("JSON: %v\n%s", err, b)
	}
	// A fragment value that is not JSON cannot be written.
	broken := &Report{Fragments: []FragmentChange{{After: json.RawMessage(`{"src": [`)}}}
	if b, err := broken.JSON(); err == nil || b != nil {
		t.Errorf("JSON of a broken value: %s, %v", b, err)
	}
}
