package exampletest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// handWrittenPolicy is a tailnet's policy file before qtail: the groups and
// a grant a platform team keeps by hand, with their comments, and the
// allow-all rule of a new tailnet.
const handWrittenPolicy = `// Kept by hand by the platform team.
{
	// Who runs the platform.
	"groups": {
		"group:platform-ops": ["alice@example.com", "bob@example.com"],
	},

	"grants": [
		// Laptops reach each other for pairing.
		{"src": ["alice@example.com"], "dst": ["bob@example.com"], "ip": ["tcp:22"]},
		{"src": ["*"], "dst": ["*"], "ip": ["*"]},
	],
}
`

// regionRoots are the region roots of examples/multi-region.
var regionRoots = []string{"us-east-1", "eu-west-3"}

// examples/multi-region as CI runs it: the platform root, then both region
// roots at the same time (two Terraform processes, two states, one policy
// file), then a second plan of every root, then one region retired.
func TestMultiRegion_regionsInParallelShareOneTailnet(t *testing.T) {
	t.Parallel()
	w := newWorld(t, handWrittenPolicy)
	ws := newWorkspace(t, w)
	seed := w.Seed()

	platform := ws.root("multi-region/platform", "TF_VAR_organization_id="+seed.OrganizationID)
	platform.get()
	platform.apply()
	tailnet := platform.outputJSON("tailnet")

	regions := map[string]*root{}
	for _, region := range regionRoots {
		r := seed.Regions[region]
		regions[region] = ws.root("multi-region/"+region,
			"TF_VAR_tailnet="+tailnet,
			"TF_VAR_environment_id="+r.EnvironmentID,
			"TF_VAR_billing_api_application_id="+r.Applications["billing-api"],
		)
		regions[region].get()
	}

	// Both regions at once, as two CI jobs would.
	inParallel(t, regionRoots, func(ctx context.Context, region string) (string, error) {
		return regions[region].tryRun(ctx, "apply", "-auto-approve", "-input=false", "-no-color", "-compact-warnings")
	})

	doc := currentPolicy(t, w)
	checkHandWritten(t, doc)
	owned := fragmentKeys(doc)
	for _, want := range []string{
		"tag_owner:tag:k8s-operator", "tag_owner:tag:k8s", "tag_owner:tag:k8s-billing",
		"tag_owner:tag:k8s-us-east-1", "tag_owner:tag:k8s-billing-us-east-1",
		"tag_owner:tag:k8s-eu-west-3", "tag_owner:tag:k8s-billing-eu-west-3",
		"policy_test:tailnet-carol-denied-billing",
		"grant:us-east-1-billing-api-platform-ops", "grant:us-east-1-connector-routes",
		"policy_test:us-east-1-billing-api-platform-ops",
		"grant:eu-west-3-billing-api-platform-ops", "grant:eu-west-3-connector-routes",
		"policy_test:eu-west-3-billing-api-platform-ops",
	} {
		if !owned[want] {
			t.Errorf("the policy file lacks qtail's fragment %s; it holds %v", want, slices.Sorted(maps.Keys(owned)))
		}
	}
	if policyfile.HasAllowAll(doc) {
		t.Error("the allow-all rule is still in the policy file after the platform root removed it")
	}
	for _, region := range regionRoots {
		for _, hostname := range regionHostnames(region) {
			checkConnected(t, w, hostname)
		}
		var urls map[string][]string
		regions[region].output("urls", &urls)
		want := []string{
			"billing-api-" + region + "." + sandbox.MagicDNSSuffix + ":443",
			"http://billing-api-" + region + "." + sandbox.MagicDNSSuffix + ":8080/",
		}
		if !slices.Equal(urls["billing-api"], want) {
			t.Errorf("%s's billing-api URLs are %v, want %v", region, urls["billing-api"], want)
		}
	}

	// Nothing left to do in any root.
	inParallel(t, append([]string{"platform"}, regionRoots...), func(ctx context.Context, name string) (string, error) {
		r := platform
		if name != "platform" {
			r = regions[name]
		}
		return r.tryPlanEmpty(ctx)
	})

	// Retiring eu-west-3 leaves us-east-1 and the platform as they were.
	regions["eu-west-3"].destroy()
	doc = currentPolicy(t, w)
	checkHandWritten(t, doc)
	owned = fragmentKeys(doc)
	for k := range owned {
		// The region's tags are the platform root's: they stay.
		if strings.Contains(k, "eu-west-3") && !strings.HasPrefix(k, "tag_owner:") {
			t.Errorf("the retired region's fragment %s is still in the policy file", k)
		}
	}
	for _, want := range []string{
		"tag_owner:tag:k8s-operator", "tag_owner:tag:k8s", "tag_owner:tag:k8s-billing",
		"tag_owner:tag:k8s-billing-us-east-1", "tag_owner:tag:k8s-billing-eu-west-3",
		"policy_test:tailnet-carol-denied-billing",
		"grant:us-east-1-billing-api-platform-ops", "grant:us-east-1-connector-routes",
		"policy_test:us-east-1-billing-api-platform-ops",
	} {
		if !owned[want] {
			t.Errorf("retiring eu-west-3 took %s out of the policy file", want)
		}
	}
	for _, hostname := range regionHostnames("us-east-1") {
		checkConnected(t, w, hostname)
	}
	for _, d := range w.Tailnet.Devices() {
		if strings.HasPrefix(d.Hostname, "billing-api-eu-west-3") || strings.HasPrefix(d.Hostname, "vpc-eu-west-3") {
			t.Errorf("the retired region's proxy %s is still on the tailnet", d.Hostname)
		}
	}
	inParallel(t, []string{"platform", "us-east-1"}, func(ctx context.Context, name string) (string, error) {
		r := platform
		if name != "platform" {
			r = regions[name]
		}
		return r.tryPlanEmpty(ctx)
	})
}

// inParallel runs f once per name at the same time and fails the test with
// the output of each run that failed.
func inParallel(t *testing.T, names []string, f func(ctx context.Context, name string) (string, error)) {
	t.Helper()
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			if out, err := f(t.Context(), name); err != nil {
				errs[i] = fmt.Errorf("%s: %w\n%s", name, err, out)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// tryRun is run that reports a non-zero exit as an error, for use outside
// the test's goroutine.
func (r *root) tryRun(ctx context.Context, args ...string) (string, error) {
	out, code, err := r.run(ctx, args...)
	if err == nil && code != 0 {
		err = fmt.Errorf("terraform %s in %s exited %d", strings.Join(args, " "), r.rel(), code)
	}
	return out, err
}

// tryPlanEmpty reports an error unless a plan of the root has no change
// (plan -detailed-exitcode exits 0).
func (r *root) tryPlanEmpty(ctx context.Context) (string, error) {
	out, err := r.tryRun(ctx, "plan", "-detailed-exitcode", "-input=false", "-no-color", "-compact-warnings")
	if err != nil {
		err = fmt.Errorf("a second plan of %s is not empty: %w", r.rel(), err)
	}
	return out, err
}

// regionHostnames are the devices a region root of examples/multi-region
// puts on the tailnet: its operator, billing-api's proxy and its connector.
func regionHostnames(region string) []string {
	return []string{"tailscale-operator-" + region, "billing-api-" + region, "vpc-" + region}
}

func currentPolicy(t *testing.T, w *world) *policyfile.Document {
	t.Helper()
	body, _ := w.Tailnet.Policy()
	doc, err := policyfile.Parse(body)
	if err != nil {
		t.Fatalf("the tailnet's policy file does not parse: %v\n%s", err, body)
	}
	return doc
}

// checkHandWritten fails the test unless the hand-written parts of
// handWrittenPolicy are still there, comments included.
func checkHandWritten(t *testing.T, doc *policyfile.Document) {
	t.Helper()
	body := string(doc.Bytes())
	for _, want := range []string{
		"// Kept by hand by the platform team.",
		"// Who runs the platform.",
		`"group:platform-ops": ["alice@example.com", "bob@example.com"]`,
		"// Laptops reach each other for pairing.",
		`{"src": ["alice@example.com"], "dst": ["bob@example.com"], "ip": ["tcp:22"]}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the hand-written %q is gone from the policy file:\n%s", want, body)
		}
	}
}

// fragmentKeys are the fragments with qtail's marker, as KIND:NAME.
func fragmentKeys(doc *policyfile.Document) map[string]bool {
	keys := map[string]bool{}
	for _, f := range doc.Fragments() {
		keys[string(f.Key.Kind)+":"+f.Key.Name] = true
	}
	return keys
}

// checkConnected fails the test unless a device with hostname is on the
// tailnet and connected.
func checkConnected(t *testing.T, w *world, hostname string) {
	t.Helper()
	for _, d := range w.Tailnet.Devices() {
		if d.Hostname == hostname && d.ConnectedToControl {
			return
		}
	}
	var have []string
	for _, d := range w.Tailnet.Devices() {
		have = append(have, fmt.Sprintf("%s (connected %t)", d.Hostname, d.ConnectedToControl))
	}
	t.Errorf("no connected device %s on the tailnet; it has %v", hostname, have)
}
