package review

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommand: the help, and the errors a CI job can meet before the
// review starts, each with exit code 1 and a message that says what to do.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	planPath := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(planPath, []byte(`{"format_version": "1.2", "terraform_version": "1.11.4"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	notPlan := filepath.Join(dir, "plan.out")
	if err := os.WriteFile(notPlan, []byte("binary plan file"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(vars map[string]string, args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Main(t.Context(), args, Env{Version: "test", Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return vars[k] }})
		return code, stdout.String(), stderr.String()
	}
	key := map[string]string{"TAILSCALE_API_KEY": "tskey-api-x", "TAILSCALE_BASE_URL": "http://127.0.0.1:1"}

	code, stdout, _ := run(nil, "-h")
	if code != 0 || !strings.HasPrefix(stdout, "Usage: terraform-provider-qtail review [flags] PLAN.json...") || !strings.Contains(stdout, "-format") {
		t.Errorf("-h: %d %q", code, stdout)
	}
	for _, tc := range []struct {
		vars map[string]string
		args []string
		want string
	}{
		{key, nil, "give at least one plan"},
		{key, []string{"-bogus", planPath}, "flag provided but not defined: -bogus"},
		{key, []string{"-format", "html", planPath}, `-format "html": use markdown or json`},
		{key, []string{notPlan}, "is not the JSON of a Terraform plan (write it with `terraform show -json PLANFILE"},
		{key, []string{filepath.Join(dir, "missing.json")}, "no such file"},
		{nil, []string{planPath}, "tailscale credentials: missing"},
		{map[string]string{"TAILSCALE_API_KEY": "k", "TAILSCALE_BASE_URL": "http://api.example.com"}, []string{planPath}, "plain http is only allowed to a loopback address"},
		// Nothing listens there: the review cannot read the policy.
		{key, []string{"-timeout", "2s", planPath}, "reading the tailnet policy file"},
	} {
		code, _, stderr := run(tc.vars, tc.args...)
		if code != ExitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit code %d, stderr %q; want 1 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestFailedPlanLog: the log of a failed plan is reviewed as a failed
// plan, each error a finding on its resource, and the exit code is 1.
func TestFailedPlanLog(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "us-east-1.failed.json")
	log := `{"@level":"info","@message":"Terraform 1.11.4","@module":"terraform.ui","terraform":"1.11.4","type":"version","ui":"1.2"}
{"@level":"warn","@message":"Warning: x","type":"diagnostic","diagnostic":{"severity":"warning","summary":"x","detail":""}}
{"@level":"error","@message":"Error: Tailscale Rejects the Policy Change","type":"diagnostic","diagnostic":{"severity":"error","summary":"Tailscale Rejects the Policy Change","detail":"The change breaks qtail_policy_test \"carol\".","address":"module.region.qtail_grant.access[\"billing-api/carol\"]","range":{"filename":"../../modules/region/main.tf","start":{"line":64}}}}
`
	if err := os.WriteFile(logPath, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	p, fp, err := ReadInput(logPath)
	if err != nil || fp == nil || p.Plan != nil {
		t.Fatalf("ReadInput: %+v %+v %v, want a failed plan", p, fp, err)
	}
	if len(fp.Diagnostics) != 1 || fp.Diagnostics[0].Address != `module.region.qtail_grant.access["billing-api/carol"]` || fp.Diagnostics[0].Where != "../../modules/region/main.tf line 64" {
		t.Fatalf("diagnostics %+v", fp.Diagnostics)
	}
	rep := &Report{Validation: Validation{Passed: true}}
	rep.AddFailedPlans([]FailedPlan{*fp})
	if rep.ExitCode() != ExitError || len(rep.Findings) != 1 || rep.Findings[0].Kind != FindingPlanFailed {
		t.Fatalf("exit code %d, findings %+v", rep.ExitCode(), rep.Findings)
	}
	md := rep.Markdown()
	for _, want := range []string{"**1 plan failed**", "`us-east-1.failed.json` (**failed**: 1 error)",
		"The plan `us-east-1.failed.json` failed on `module.region.qtail_grant.access[\"billing-api/carol\"]` (../../modules/region/main.tf line 64): Tailscale Rejects the Policy Change. The change breaks qtail_policy_test \"carol\"."} {
		if !strings.Contains(md, want) {
			t.Errorf("the report does not say %q:\n%s", want, md)
		}
	}
	// A plan's JSON is still a plan.
	planPath := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(planPath, []byte(`{"format_version": "1.2", "terraform_version": "1.11.4"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, fp, err := ReadInput(planPath); err != nil || fp != nil || p.Plan == nil {
		t.Errorf("ReadInput(plan.json): %+v %+v %v", p, fp, err)
	}
}
