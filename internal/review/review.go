// Package review computes what saved Terraform plans of qtail configurations
// would change in a tailnet: the fragments of the policy file they add,
// change and remove, the policy file before and after, who gains or loses
// access to the exposed services, routes and devices they touch (as
// Tailscale's own /acl/preview answers it for both policies), the verdict
// of /acl/validate on the planned policy (which runs the tailnet's tests),
// and findings a reviewer should look at. It is the engine of the
// `terraform-provider-qtail review` command.
package review

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// API is what the review asks of the Tailscale API; *tailnet.Client
// provides it.
type API interface {
	GetPolicy(ctx context.Context) (body []byte, etag string, err error)
	ValidatePolicy(ctx context.Context, body []byte) error
	PreviewPolicy(ctx context.Context, body []byte, typ tailnet.PreviewType, previewFor string) (*tailnet.Preview, error)
	ListDevices(ctx context.Context, opts tailnet.ListDevicesOptions) ([]tailnet.Device, error)
}

// Exit codes of the review command.
const (
	// ExitNoAccessChange: the plans change no one's access (they may
	// still change the policy file, tests for example).
	ExitNoAccessChange = 0
	// ExitError: the review could not be made, or Tailscale refuses the
	// planned policy file (the apply would fail).
	ExitError = 1
	// ExitAccessChange: someone gains or loses access.
	ExitAccessChange = 2
)

// Limits that keep a review (and its report) small.
const (
	maxUsers   = 20
	maxDevices = 10
)

// Report is the outcome of a review.
type Report struct {
	// Tailnet is the tailnet reviewed ("-" for the credential's own).
	Tailnet string        `json:"tailnet"`
	Plans   []PlanSummary `json:"plans"`
	// FailedPlans are the plans that Terraform could not make, read from
	// their logs (see AddFailedPlans).
	FailedPlans []FailedPlan `json:"failed_plans,omitempty"`
	// Fragments are the fragment changes, in plan order.
	Fragments []FragmentChange `json:"fragments"`
	// PolicyDiff is the unified diff of the policy file, current to
	// planned; only qtail's fragments change, so it is limited to them.
	PolicyDiff string `json:"policy_diff"`
	// Access lists the exposed services, routes and devices previewed,
	// and Users the users whose rules the plans touch.
	Access []TargetAccess `json:"access"`
	Users  []UserAccess   `json:"users"`
	// Principals is the gained and lost access by principal, and Counts
	// the headline's numbers.
	Principals []PrincipalAccess `json:"principals"`
	Counts     Counts            `json:"counts"`
	// Validation is the verdict of /acl/validate on the planned policy.
	Validation Validation `json:"validation"`
	// Tests are the policy tests the plans add, change or remove.
	Tests TestChanges `json:"tests"`
	// BrokenTests explain the failing tests of a refused policy file:
	// which test, and which fragments of the plans break it.
	BrokenTests []BrokenTest `json:"broken_tests,omitempty"`
	Findings    []Finding    `json:"findings"`
	// Graph is a Mermaid flowchart of the gained and lost access.
	Graph string `json:"graph,omitempty"`
	// AccessChanged is true when someone gains or loses access.
	AccessChanged bool `json:"access_changed"`
	// Notes say what the review could not compute, and why.
	Notes []string `json:"notes,omitempty"`
}

// PlanSummary names a plan and counts its fragment changes.
type PlanSummary struct {
	Label     string `json:"label"`
	Fragments int    `json:"fragment_changes"`
	Resources int    `json:"qtail_resource_changes"`
}

// Validation is Tailscale's verdict on the planned policy.
type Validation struct {
	// Passed is true when Tailscale accepts the planned policy, its tests
	// included.
	Passed bool `json:"passed"`
	// Message and Failures are Tailscale's reasons otherwise.
	Message  string              `json:"message,omitempty"`
	Failures []tailnet.ErrorData `json:"failures,omitempty"`
	// Tests is the number of tests in the planned policy.
	Tests int `json:"tests"`
}

// TestChanges are the qtail_policy_test fragments the plans change.
type TestChanges struct {
	Added   []string `json:"added,omitempty"`
	Changed []string `json:"changed,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// Run reviews plans against the tailnet that api reaches.
func Run(ctx context.Context, api API, plans []Plan) (*Report, error) {
	cur, _, err := api.GetPolicy(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the tailnet policy file: %w", err)
	}
	curDoc, err := policyfile.Parse(cur)
	if err != nil {
		return nil, err
	}
	rs := resources(plans)
	rep := &Report{Findings: []Finding{}, Access: []TargetAccess{}, Users: []UserAccess{}}
	changes, muts, notes := fragmentChanges(rs, policyfile.HasAllowAll(curDoc))
	rep.Fragments, rep.Notes = changes, notes
	for _, p := range plans {
		s := PlanSummary{Label: p.Label}
		for _, r := range rs {
			if r.plan == p.Label && r.changed() {
				s.Resources++
			}
		}
		for _, c := range changes {
			if c.Plan == p.Label {
				s.Fragments++
			}
		}
		rep.Plans = append(rep.Plans, s)
	}

	planned := curDoc.Clone()
	rep.Findings = append(rep.Findings, conflicts(muts)...)
	for _, m := range muts {
		if err := planned.Apply(m); err != nil {
			rep.Findings = append(rep.Findings, Finding{Kind: FindingConflict, Severity: SeverityError, New: true,
				Message: fmt.Sprintf("%s cannot be applied to the policy file: %v", m.Key, err)})
		}
	}
	next := planned.Bytes()
	rep.PolicyDiff = unifiedDiff(string(cur), string(next), "policy file (current)", "policy file (planned)", 3)
	rep.Tests = testChanges(changes)

	rep.Validation.Tests = countTests(next)
	if err := api.ValidatePolicy(ctx, next); err == nil {
		rep.Validation.Passed = true
	} else {
		var ve *tailnet.ValidationError
		var ae *tailnet.APIError
		if errors.As(err, &ve) {
			rep.Validation.Message, rep.Validation.Failures = ve.Message, ve.Data
		} else if errors.As(err, &ae) && ae.Status == 400 {
			rep.Validation.Message, rep.Validation.Failures = ae.Message, ae.Data
		} else {
			return nil, fmt.Errorf("asking Tailscale to validate the planned policy file: %w", err)
		}
		rep.BrokenTests = brokenTests(curDoc, planned, rs, muts, rep.Validation)
		for _, b := range rep.BrokenTests {
			rep.Findings = append(rep.Findings, Finding{Kind: FindingBrokenTest, Severity: SeverityError, New: true, Message: b.Message})
		}
	}

	a := &accessReview{api: api, cur: cur, next: next, curDoc: curDoc, nextDoc: planned, rep: rep}
	if err := a.run(ctx, rs, changes); err != nil {
		return nil, err
	}
	rep.Principals, rep.Counts = principals(rep)
	rep.Findings = append(rep.Findings, findings(a, rs)...)
	rep.Findings = append(rep.Findings, explainFindings(a, rs, changes)...)
	sort.SliceStable(rep.Findings, func(i, j int) bool { return rep.Findings[i].Severity.rank() < rep.Findings[j].Severity.rank() })
	rep.Graph = mermaid(rep)
	return rep, nil
}

// ExitCode is the command's exit code for the report.
func (r *Report) ExitCode() int {
	if !r.Validation.Passed || len(r.FailedPlans) > 0 {
		return ExitError
	}
	if r.AccessChanged {
		return ExitAccessChange
	}
	return ExitNoAccessChange
}

// conflicts reports fragments that two changes write with different
// content (two plans, say, that both own the same key).
func conflicts(muts []policyfile.Mutation) []Finding {
	var out []Finding
	seen := map[policyfile.Key]policyfile.Mutation{}
	for _, m := range muts {
		if m.Delete {
			continue
		}
		if prev, ok := seen[m.Key]; ok && string(canonical(prev.Value)) != string(canonical(m.Value)) {
			out = append(out, Finding{Kind: FindingConflict, Severity: SeverityError, New: true,
				Message: fmt.Sprintf("%s is written twice with different content (%s, then %s): fragment keys must be unique across the configurations that share the policy file; the last one wins", m.Key, canonical(prev.Value), canonical(m.Value))})
		}
		seen[m.Key] = m
	}
	return out
}

func testChanges(changes []FragmentChange) TestChanges {
	var t TestChanges
	for _, c := range changes {
		if c.Kind != string(policyfile.KindPolicyTest) {
			continue
		}
		switch c.Action {
		case "added":
			t.Added = append(t.Added, c.Name)
		case "changed":
			t.Changed = append(t.Changed, c.Name)
		case "removed":
			t.Removed = append(t.Removed, c.Name)
		}
	}
	return t
}

// countTests counts the entries of the policy's tests.
func countTests(b []byte) int {
	f, err := readPolicyFile(b)
	if err != nil {
		return 0
	}
	return len(f.Tests)
}

// names returns the sorted keys of a set.
func names[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sortedUnique sorts and removes duplicates.
func sortedUnique(ss []string) []string {
	out := slices.Clone(ss)
	sort.Strings(out)
	return slices.Compact(out)
}
