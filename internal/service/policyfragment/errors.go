package policyfragment

import (
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

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
