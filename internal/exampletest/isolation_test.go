package exampletest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

// examples/multi-region with eu-west-3's access given to another principal
// (bob@example.com instead of group:platform-ops): asked through
// /acl/preview, each region's billing-api proxy is reached by its own
// region's principal alone. With shared tags, us-east-1's grant to
// group:platform-ops would reach eu-west-3's proxy as well.
func TestMultiRegion_aGrantReachesItsOwnRegionOnly(t *testing.T) {
	t.Parallel()
	w := newWorld(t, handWrittenPolicy)
	ws := newWorkspace(t, w)
	seed := w.Seed()

	platform := ws.root("multi-region/platform", "TF_VAR_organization_id="+seed.OrganizationID)
	platform.get()
	platform.apply()
	tailnet := platform.outputJSON("tailnet")

	eu := filepath.Join(ws.examples, "multi-region", "eu-west-3", "main.tf")
	body, err := os.ReadFile(eu)
	if err != nil {
		t.Fatal(err)
	}
	const platformOps = `platform-ops = { src = ["group:platform-ops"] }`
	if !bytes.Contains(body, []byte(platformOps)) {
		t.Fatalf("examples/multi-region/eu-west-3/main.tf no longer grants billing-api with %s", platformOps)
	}
	body = bytes.Replace(body, []byte(platformOps), []byte(`oncall = { src = ["bob@example.com"] }`), 1)
	if err := os.WriteFile(eu, body, 0o600); err != nil {
		t.Fatal(err)
	}
	roots := map[string]*root{}
	for _, region := range regionRoots {
		r := seed.Regions[region]
		roots[region] = ws.root("multi-region/"+region,
			"TF_VAR_tailnet="+tailnet,
			"TF_VAR_environment_id="+r.EnvironmentID,
			"TF_VAR_billing_api_application_id="+r.Applications["billing-api"],
		)
		roots[region].get()
		roots[region].apply()
	}

	policy, _ := w.Tailnet.Policy()
	want := map[string][]string{
		"us-east-1": {"group:platform-ops"},
		"eu-west-3": {"bob@example.com"},
	}
	for _, region := range regionRoots {
		addr := deviceAddress(t, w, "billing-api-"+region)
		for _, port := range []string{"443", "8080"} {
			got := previewSources(t, w, policy, addr+":"+port)
			if !slices.Equal(got, want[region]) {
				t.Errorf("billing-api-%s (%s:%s) is reached by the grants to %q, want %q alone", region, addr, port, got, want[region])
			}
		}
	}

	// A pull request that adds alice to eu-west-3's access: its review
	// says that she gains eu-west-3's billing-api, and nothing of
	// us-east-1's.
	body = bytes.Replace(body, []byte(`oncall = { src = ["bob@example.com"] }`), []byte(`oncall = { src = ["bob@example.com", "alice@example.com"] }`), 1)
	if err := os.WriteFile(eu, body, 0o600); err != nil {
		t.Fatal(err)
	}
	roots["eu-west-3"].must("plan", "-input=false", "-no-color", "-out=tfplan")
	planJSON := roots["eu-west-3"].must("show", "-json", "-no-color", "tfplan")
	dir := t.TempDir()
	planFile := filepath.Join(dir, "eu-west-3.json")
	if err := os.WriteFile(planFile, []byte(planJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "review.md")
	review(t, ws, report, planFile)
	text, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(text, []byte("alice@example.com")) || !bytes.Contains(text, []byte("billing-api-eu-west-3")) {
		t.Errorf("the review does not say that alice gains billing-api-eu-west-3:\n%s", text)
	}
	if bytes.Contains(text, []byte("billing-api-us-east-1")) {
		t.Errorf("the review of eu-west-3's change speaks of us-east-1's billing-api:\n%s", text)
	}
	if testing.Verbose() {
		t.Logf("the review of the pull request:\n%s", text)
	}
}

// deviceAddress is the IPv4 address of the tailnet device hostname.
func deviceAddress(t *testing.T, w *world, hostname string) string {
	t.Helper()
	for _, d := range w.Tailnet.Devices() {
		if d.Hostname != hostname {
			continue
		}
		for _, a := range d.Addresses {
			if !strings.Contains(a, ":") {
				return a
			}
		}
	}
	t.Fatalf("no device %s with an IPv4 address on the tailnet", hostname)
	return ""
}

// previewSources asks the Tailscale API's /acl/preview which rules of
// policy reach ipport, and returns their sources, sorted.
func previewSources(t *testing.T, w *world, policy []byte, ipport string) []string {
	t.Helper()
	url := w.url + "/tailscale/api/v2/tailnet/-/acl/preview?type=ipport&previewFor=" + ipport
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(policy))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(sandbox.TailscaleAPIKey, "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /acl/preview for %s: %s %v: %s", ipport, resp.Status, err, b)
	}
	var answer struct {
		Matches []aclcheck.PreviewMatch `json:"matches"`
	}
	if err := json.Unmarshal(b, &answer); err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range answer.Matches {
		users = append(users, m.Users...)
	}
	slices.Sort(users)
	return slices.Compact(users)
}
