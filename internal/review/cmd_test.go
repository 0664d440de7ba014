package review

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	w := newWorld(t, worldPolicy)
	id, secret := w.srv.SeedOAuthClient("", "", []string{"devices:core:read"}, nil)
	readDevices := map[string]string{"TAILSCALE_OAUTH_CLIENT_ID": id, "TAILSCALE_OAUTH_CLIENT_SECRET": secret, "TAILSCALE_BASE_URL": w.url}

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
		// Nothing listens there, and the review gives up at once.
		{key, []string{"-timeout", "0s", planPath}, "reading the tailnet policy file: Get \"http://127.0.0.1:1/api/v2/tailnet/-/acl\": context deadline exceeded"},
		// The credential may not read the policy file.
		{readDevices, []string{planPath}, "reading the tailnet policy file: tailscale API GET /api/v2/tailnet/-/acl: calling actor does not have enough permissions"},
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

// errWriter fails every write, as a closed standard output does.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("write /dev/stdout: broken pipe") }

// TestMainReviews: the command reviews the plans it is given, in order,
// against the tailnet of the environment; writes the report in the format
// asked for, to standard output or to a file; and logs its outcome with
// the exit code, a failed plan first, then Tailscale's refusal, then
// access changes.
func TestMainReviews(t *testing.T) {
	w := newWorld(t, strings.Replace(worldPolicy, `{"src": ["*"], "dst": ["*"], "ip": ["*"]},`, "", 1))
	dir := t.TempDir()
	write := func(name string, p Plan) string {
		t.Helper()
		b, err := json.Marshal(p.Plan)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	grant := func(name string, src string, ip string) map[string]any {
		return change("qtail_grant."+name, "qtail_grant", []string{"create"}, nil, grantAttrs(name, []any{src}, []any{"tag:web"}, []any{ip}), nil)
	}
	unchanged := write("unchanged.json", plan(t, "unchanged.json"))
	gains := write("gains.json", plan(t, "gains.json", grant("bob-web", "bob@example.com", "tcp:443")))
	refused := write("refused.json", plan(t, "refused.json", grant("ghosts-web", "group:ghosts", "tcp:443")))
	failed := filepath.Join("testdata", "plans", "failed-plan.log")
	vars := map[string]string{"TAILSCALE_API_KEY": "tskey-api-review", "TAILSCALE_BASE_URL": w.url, "TAILSCALE_TAILNET": "example.com"}
	run := func(stdout io.Writer, args ...string) (int, string) {
		t.Helper()
		var stderr bytes.Buffer
		code := Main(t.Context(), args, Env{Version: "test", Stdout: stdout, Stderr: &stderr, Getenv: func(k string) string { return vars[k] }})
		return code, stderr.String()
	}

	for _, tc := range []struct {
		args []string
		code int
		log  string
	}{
		{[]string{unchanged}, ExitNoAccessChange, "no access change"},
		{[]string{unchanged, gains}, ExitAccessChange, "access changes"},
		{[]string{gains, refused}, ExitError, "Tailscale refuses the planned policy file"},
		{[]string{refused, failed}, ExitError, "1 plan failed"},
		{[]string{failed, gains, failed}, ExitError, "2 plans failed"},
	} {
		var stdout bytes.Buffer
		code, stderr := run(&stdout, tc.args...)
		if want := fmt.Sprintf("qtail review: %s (exit code %d)\n", tc.log, tc.code); code != tc.code || stderr != want {
			t.Errorf("%q: exit code %d, stderr %q; want %d, %q", tc.args, code, stderr, tc.code, want)
		}
		if md := stdout.String(); !strings.HasPrefix(md, Marker+"\n## qtail plan review\n") || !strings.Contains(md, "Tailnet: `example.com`.") {
			t.Errorf("%q: the Markdown report:\n%s", tc.args, md)
		}
	}

	// JSON, to standard output: the plans in the order given.
	var stdout bytes.Buffer
	code, _ := run(&stdout, "-format", "json", gains, unchanged)
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || code != ExitAccessChange {
		t.Fatalf("-format json: exit code %d, %v:\n%s", code, err, stdout.String())
	}
	if !strings.HasSuffix(stdout.String(), "}\n") || rep.Tailnet != "example.com" || !rep.AccessChanged ||
		len(rep.Plans) != 2 || rep.Plans[0] != (PlanSummary{Label: "gains.json", Fragments: 1, Resources: 1}) || rep.Plans[1] != (PlanSummary{Label: "unchanged.json"}) {
		t.Errorf("-format json: %+v", rep)
	}

	// To a file: nothing on standard output.
	out := filepath.Join(dir, "report.md")
	stdout.Reset()
	if code, stderr := run(&stdout, "-o", out, gains); code != ExitAccessChange || stdout.Len() != 0 || stderr != "qtail review: access changes (exit code 2)\n" {
		t.Errorf("-o: exit code %d, stdout %q, stderr %q", code, stdout.String(), stderr)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.HasPrefix(string(b), Marker) || !strings.Contains(string(b), "**gained** `bob@example.com`") {
		t.Errorf("the report written to %s: %v\n%s", out, err, b)
	}

	// A report that cannot be written is an error, without the outcome.
	for _, tc := range []struct {
		stdout io.Writer
		args   []string
		want   string
	}{
		{errWriter{}, []string{gains}, "qtail review: write /dev/stdout: broken pipe\n"},
		{errWriter{}, []string{"-format", "json", gains}, "qtail review: write /dev/stdout: broken pipe\n"},
		{&stdout, []string{"-o", filepath.Join(dir, "missing", "report.md"), gains}, "qtail review: open " + filepath.Join(dir, "missing", "report.md") + ": no such file or directory\n"},
	} {
		if code, stderr := run(tc.stdout, tc.args...); code != ExitError || stderr != tc.want {
			t.Errorf("%q: exit code %d, stderr %q; want 1, %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestFailedPlanFindings: each error of a failed plan is a finding that
// names the plan, the resource and the line when Terraform gives them; a
// failed plan without errors in its log says where to look.
func TestFailedPlanFindings(t *testing.T) {
	log := `{"@level":"info","type":"version","terraform":"1.11.4"}
not JSON
{"@level":"error","type":"log","diagnostic":{"severity":"error","summary":"Not a diagnostic"}}
{"@level":"error","type":"diagnostic"}
{"@level":"error","type":"diagnostic","diagnostic":{"severity":"error","summary":"Invalid value."}}
{"@level":"error","type":"diagnostic","diagnostic":{"severity":"error","summary":"Bad","detail":"More.","range":{"filename":"main.tf","start":{"line":3}}}}
{"@level":"error","type":"diagnostic","diagnostic":{"severity":"error","summary":"On","address":"qtail_grant.x","range":{"filename":"","start":{"line":9}}}}
{"@level":"error","type":"diagnostic","diagnostic":{"severity":"error","summary":"Long","detail":"` + strings.Repeat("x", 100_000) + `"}}
`
	_, fp, err := parseInput(filepath.Join("logs", "b.failed.json"), []byte(log))
	if err != nil || fp == nil {
		t.Fatalf("parseInput: %+v, %v", fp, err)
	}
	rep := &Report{Validation: Validation{Passed: true}, Findings: []Finding{{Kind: FindingAllowAll, Severity: SeverityWarning, Message: "allow-all"}}}
	rep.AddFailedPlans([]FailedPlan{{Label: "a.failed.json"}, *fp})
	var got []string
	for _, f := range rep.Findings {
		got = append(got, string(f.Kind)+": "+f.Message)
	}
	want := []string{
		"plan_failed: The plan `a.failed.json` failed without an error in its log: see the plan job's output.",
		"plan_failed: The plan `b.failed.json` failed: Invalid value.",
		"plan_failed: The plan `b.failed.json` failed (main.tf line 3): Bad. More.",
		"plan_failed: The plan `b.failed.json` failed on `qtail_grant.x`: On.",
		"plan_failed: The plan `b.failed.json` failed: Long. " + strings.Repeat("x", 100_000),
		"allow_all: allow-all",
	}
	if !slices.Equal(got, want) || len(rep.FailedPlans) != 2 || rep.ExitCode() != ExitError {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
