package policyfragment

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// explainedWriteError is fragmentWriteError for a write of muts to store:
// when Tailscale refused it because tests fail, it says which tests, and
// which of muts break them (see explainRefusal).
func explainedWriteError(ctx context.Context, diags *diag.Diagnostics, store *policy.Store, action string, muts []policyfile.Mutation, err error) {
	var rejected *policy.RejectedError
	if errors.As(err, &rejected) {
		if explained := explainWrite(ctx, store, muts, err); explained != "" {
			diags.AddError("Tailscale Rejected the Policy File", fmt.Sprintf("qtail could not %s: Tailscale refused the policy file.\n\n%v%s\n\n"+
				"Nothing was written. Someone may have changed the policy file since the plan: change the configuration (or the policy file) so that Tailscale accepts it, then apply again.",
				action, rejected.Err, explained))
			return
		}
	}
	fragmentWriteError(diags, action, err)
}

// explainWrite is explainRefusal for a write of muts to store that
// Tailscale refused (see policy.Store.ExplainTests).
func explainWrite(ctx context.Context, store *policy.Store, muts []policyfile.Mutation, err error) string {
	if store == nil || !policy.IsRejected(err) {
		return ""
	}
	var b strings.Builder
	for _, f := range store.ExplainTests(ctx, muts, testFailures(err)) {
		b.WriteString("\n\n")
		b.WriteString(f.Explain(nameFragment))
	}
	return b.String()
}

// fragmentWriteError adds the error of a failed change of the policy file.
func fragmentWriteError(diags *diag.Diagnostics, action string, err error) {
	var conflict *policyfile.UnmanagedConflictError
	var owned *policyfile.OwnedError
	var contention *policy.ContentionError
	var rejected *policy.RejectedError
	switch {
	case errors.As(err, &conflict):
		diags.AddError("Entry Exists Without qtail's Marker", fmt.Sprintf("qtail could not %s: %v.", action, conflict))
	case errors.As(err, &owned):
		diags.AddError("Policy Entry Owned by Another Configuration", fmt.Sprintf("qtail could not %s: %v. "+
			"Another configuration that shares this tailnet policy owns that entry: give this resource another key, "+
			"or remove it from the configuration.", action, owned))
	case errors.As(err, &contention):
		diags.AddError("Policy File Kept Changing", fmt.Sprintf("qtail could not %s: %v.", action, contention))
	case errors.As(err, &rejected):
		diags.AddError("Tailscale Rejected the Policy File", fmt.Sprintf("qtail could not %s: Tailscale refused the policy file.\n\n%v\n\n"+
			"Nothing was written. Change the configuration (or the policy file) so that Tailscale accepts it, then apply again.", action, rejected.Err))
	default:
		tfx.APIError(diags, action, err)
	}
}

// explainRefusal says, for a refusal of muts by Tailscale because tests
// of the policy file fail, which test each failure is (the
// qtail_policy_test, or a test written by hand, quoted) and which grants
// planned so far break it (see policy.Planner.ExplainTests). It is empty
// for any other outcome, and starts with a blank line otherwise.
func explainRefusal(ctx context.Context, planner *policy.Planner, muts []policyfile.Mutation, err error) string {
	if err == nil || planner == nil || !policy.IsRejected(err) {
		return ""
	}
	var b strings.Builder
	for _, f := range planner.ExplainTests(ctx, muts, testFailures(err)) {
		b.WriteString("\n\n")
		b.WriteString(f.Explain(nameFragment))
	}
	return b.String()
}

// nameFragment names a fragment in an explanation: its resource type and
// key, and for a test its marker, which is how the policy file shows it.
func nameFragment(key policyfile.Key) string {
	if key.Kind == policyfile.KindPolicyTest {
		return fmt.Sprintf("%s (marked %s)", key, key.Marker())
	}
	return key.String()
}

// testFailures returns the failing tests of Tailscale's refusal.
func testFailures(err error) []policy.TestFailure {
	var data []tailnet.ErrorData
	var ve *tailnet.ValidationError
	if errors.As(err, &ve) {
		data = ve.Data
	} else if ae, ok := tailnet.AsAPIError(err); ok {
		data = ae.Data
	}
	out := make([]policy.TestFailure, 0, len(data))
	for _, d := range data {
		if len(d.Errors) > 0 {
			out = append(out, policy.TestFailure{Src: d.User, Errors: d.Errors})
		}
	}
	return out
}
