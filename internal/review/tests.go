package review

import (
	"fmt"

	"github.com/qtail/terraform-provider-qtail/internal/fragment"
	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// BrokenTest is a test of the planned policy file that fails: which test
// it is, and which fragments of the plans break it.
type BrokenTest struct {
	policy.FailedTest
	// Test is the qtail_policy_test's resource address (or its fragment,
	// when no plan holds it); empty for a test written by hand.
	Test string `json:"test,omitempty"`
	// Culprits are the fragments of the plans that break the test, by
	// resource address when the plans hold it.
	Culprits []string `json:"culprits,omitempty"`
	// Message says it in a sentence or two.
	Message string `json:"message"`
}

// brokenTests explains Tailscale's failures of the planned policy file
// (see policy.ExplainTests): muts are the plans' fragment changes, and rs
// the qtail resources, which give the fragments their addresses.
func brokenTests(curDoc, nextDoc *policyfile.Document, rs []resource, muts []policyfile.Mutation, v Validation) []BrokenTest {
	// ExplainTests explains each error: a failure with warnings alone
	// explains nothing.
	var failures []policy.TestFailure
	for _, f := range v.Failures {
		failures = append(failures, policy.TestFailure{Src: f.User, Errors: f.Errors})
	}
	if len(failures) == 0 {
		return nil
	}
	var changed []policyfile.Key
	for _, m := range muts {
		changed = append(changed, m.Key)
	}
	where := fragmentAddresses(rs)
	name := func(k policyfile.Key) string {
		if addr, ok := where[k]; ok {
			return addr
		}
		if k.Kind == policyfile.KindPolicyTest {
			return fmt.Sprintf("%s (marked %s)", k, k.Marker())
		}
		return k.String()
	}
	var out []BrokenTest
	for _, f := range policy.ExplainTests(curDoc, nextDoc, changed, failures) {
		b := BrokenTest{FailedTest: f, Message: f.Explain(name)}
		if f.Key.Name != "" {
			b.Test = where[f.Key]
			if b.Test == "" {
				b.Test = f.Key.String()
			}
		}
		for _, k := range f.Culprits {
			c := where[k]
			if c == "" {
				c = k.String()
			}
			b.Culprits = append(b.Culprits, c)
		}
		out = append(out, b)
	}
	return out
}

// fragmentAddresses maps the fragments of the plans' qtail resources,
// changed or not, to their resource addresses, followed by the plan's
// label when the resources come from several plans.
func fragmentAddresses(rs []resource) map[policyfile.Key]string {
	out := map[policyfile.Key]string{}
	plans := map[string]bool{}
	for _, r := range rs {
		plans[r.plan] = true
	}
	for _, r := range rs {
		desc, ok := fragment.ByType(r.typ)
		if !ok {
			continue
		}
		for _, v := range []map[string]any{r.after, r.before} {
			if v == nil {
				continue
			}
			key, _, err := desc.Fragment(desc.PlanValues(v, known))
			if err != nil || key.Name == "" {
				continue
			}
			if _, seen := out[key]; !seen {
				out[key] = r.address
				if len(plans) > 1 {
					out[key] += " (" + r.plan + ")"
				}
			}
		}
	}
	return out
}
