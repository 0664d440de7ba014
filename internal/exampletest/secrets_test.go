package exampletest

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
)

// credentialShapes match every secret that the fake Tailscale API issues
// (OAuth client secrets, OAuth access tokens, auth keys), whatever its
// value: the test cannot know the access tokens the provider was given.
var credentialShapes = regexp.MustCompile(`tskey-(client-k[0-9A-Za-z]+-[0-9A-Za-z]{32}|oauth-[0-9A-Za-z]{40}|auth-[0-9A-Za-z-]{16,})`)

// The quickstart, planned, reviewed, applied, planned again and destroyed
// with Terraform's and the provider's logs at trace level (and Go's HTTP
// debug output turned on): no credential shows in any log or output, in
// the state, in the plan or in the review's report. The credentials are
// the provider's (the Qovery token, the Tailscale API key), the secret of
// the OAuth client the operator is given, written as a Qovery secret, and
// the access tokens that secret is exchanged for.
func TestExamples_secretsStayOutOfEveryLog(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "")
	ws := newWorkspace(t, w)
	seed := w.Seed()
	region := seed.Regions["us-east-1"]
	logs := t.TempDir()
	vars := []string{
		"TF_VAR_organization_id=" + seed.OrganizationID,
		"TF_VAR_environment_id=" + region.EnvironmentID,
		"TF_VAR_application_id=" + region.Applications["billing-api"],
		"TF_VAR_web_application_id=" + region.Applications["web"],
		"TF_LOG=trace",
		"TF_LOG_PROVIDER=trace",
		"GODEBUG=http2debug=2",
	}
	step := func(name string) *root {
		return ws.root("quickstart", append(slices.Clone(vars), "TF_LOG_PATH="+filepath.Join(logs, name+".log"))...)
	}

	var outputs []string
	outputs = append(outputs, step("plan").must("plan", "-input=false", "-no-color", "-out=tfplan"))
	planJSON := step("show").must("show", "-json", "-no-color", "tfplan")
	planFile := filepath.Join(logs, "plan.json")
	if err := os.WriteFile(planFile, []byte(planJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(logs, "review.md")
	outputs = append(outputs, review(t, ws, report, planFile))
	outputs = append(outputs, step("apply").must("apply", "-input=false", "-no-color", "tfplan"))

	// The secrets qtail wrote to Qovery, read before the destroy deletes
	// them: the operator's OAuth client secret.
	secrets := []string{sandbox.QoveryToken, sandbox.TailscaleAPIKey}
	for _, v := range w.Qovery.Variables() {
		if v.IsSecret && v.Value != "" {
			secrets = append(secrets, v.Value)
		}
	}
	if len(secrets) < 3 {
		t.Fatalf("the apply wrote no Qovery secret; the quickstart's operator should hold its OAuth client's secret in one")
	}

	// A credential sent as HTTP Basic user ("Authorization: Basic ...")
	// shows encoded.
	for _, s := range slices.Clone(secrets) {
		secrets = append(secrets, base64.StdEncoding.EncodeToString([]byte(s+":")), base64.StdEncoding.EncodeToString([]byte(s)))
	}

	step("replan").emptyPlan()
	outputs = append(outputs, step("destroy").must("destroy", "-auto-approve", "-input=false", "-no-color"))

	// What to search: every log, every output, the plan, the report, and
	// the state files.
	files := map[string][]byte{}
	for i, out := range outputs {
		files[fmt.Sprintf("the output of step %d", i+1)] = []byte(out)
	}
	for prefix, dir := range map[string]string{"": logs, "quickstart/": filepath.Join(ws.examples, "quickstart")} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[prefix+e.Name()] = b
		}
	}
	for _, name := range []string{"plan.log", "review.md", "apply.log", "destroy.log", "plan.json", "quickstart/terraform.tfstate"} {
		if len(files[name]) == 0 {
			t.Errorf("%s is missing or empty: the test would search nothing there", name)
		}
	}
	if !bytes.Contains(files["apply.log"], []byte("API call")) {
		t.Errorf("the apply's trace log holds no provider trace record (%d bytes): the provider's logs were not searched", len(files["apply.log"]))
	}
	for name, b := range files {
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds a credential (%d characters, starting %.8q)", name, len(s), s)
			}
		}
		if m := credentialShapes.Find(b); m != nil {
			t.Errorf("%s holds something shaped like a Tailscale secret (%.16q...)", name, m)
		}
	}
}

// review runs the provider binary's review command on plans, with the
// workspace's environment, and returns its output; the report goes to
// report.
func review(t *testing.T, ws *workspace, report string, plans ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(providerDir(t), "terraform-provider-qtail"), append([]string{"review", "-o", report}, plans...)...)
	cmd.Env = append(slices.Clone(ws.env), "TF_LOG=trace", "GODEBUG=http2debug=2")
	out, err := cmd.CombinedOutput()
	// Exit code 2 says that access changes, as a first plan's does.
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 2) {
		t.Fatalf("review: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(report); err != nil || len(b) == 0 {
		t.Fatalf("the review wrote no report (%v)", err)
	}
	return string(out)
}
