package review

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzReview reads any input of the review command, the JSON of a saved
// plan or the log of a failed one, and reviews it against a fake tailnet:
// nothing panics; an input that is not a plan is an error that says so; a
// failed plan makes a report that fails; and a review that runs makes a
// report whose JSON decodes, whose fragment changes are added, changed or
// removed, and whose exit code is one of the command's.
func FuzzReview(f *testing.F) {
	names, err := filepath.Glob(filepath.Join("testdata", "plans", "*"))
	if err != nil || len(names) < 5 {
		f.Fatalf("plan fixtures: %v, %d files", err, len(names))
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	w := newWorld(f, fuzzPolicy)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, failed, err := parseInput("plan.json", b)
		switch {
		case err != nil:
			if err.Error() == "" {
				t.Fatal("an input refused without a message")
			}
			return
		case failed != nil:
			rep := &Report{Validation: Validation{Passed: true}}
			rep.AddFailedPlans([]FailedPlan{*failed})
			checkReport(t, rep)
			if rep.ExitCode() != ExitError {
				t.Fatalf("a failed plan gives the exit code %d", rep.ExitCode())
			}
			return
		}
		rep, err := Run(t.Context(), w.api, []Plan{p})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("a review failed without a message")
			}
			return
		}
		checkReport(t, rep)
		if len(rep.Plans) != 1 || rep.Plans[0].Label != "plan.json" {
			t.Fatalf("plans %+v", rep.Plans)
		}
		for _, c := range rep.Fragments {
			if !slices.Contains([]string{"added", "changed", "removed"}, c.Action) {
				t.Fatalf("fragment change %+v", c)
			}
		}
	})
}

// fuzzPolicy is the tailnet's policy file in FuzzReview: it declares what
// the plan fixtures name, so that most of their reviews pass validation
// and go on to the previews.
const fuzzPolicy = `{
	"groups": {"group:ops": ["alice@example.com"], "group:eng": ["bob@example.com"]},
	"tagOwners": {"tag:web": [], "tag:db": [], "tag:router": [], "tag:k8s-operator": [], "tag:k8s-billing": ["tag:k8s-operator"], "tag:a": [], "tag:b": []},
	"autoApprovers": {"routes": {"10.10.0.0/16": ["tag:router"]}},
	"grants": [
		{"src": ["*"], "dst": ["*"], "ip": ["*"]},
		// qtail:grant:ops-web#p7mv2rt4ha
		{"src": ["group:ops"], "dst": ["tag:web"], "ip": ["tcp:443"]},
		// qtail:grant:eng-db#p7mv2rt4ha
		{"src": ["group:eng"], "dst": ["tag:db"], "ip": ["tcp:5432"]},
	],
	"tests": [{"src": "alice@example.com", "accept": ["tag:web:443"]}],
}
`

func checkReport(t *testing.T, rep *Report) {
	t.Helper()
	b, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("the JSON report does not decode: %v", err)
	}
	if rep.Markdown() == "" {
		t.Fatal("empty Markdown report")
	}
	if c := rep.ExitCode(); c != ExitNoAccessChange && c != ExitError && c != ExitAccessChange {
		t.Fatalf("exit code %d", c)
	}
}
