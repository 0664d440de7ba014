package policyfragment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// ModifyPlan plans id and marker, then checks a created or changed entry:
// locally against the policy file read by this provider instance (an
// entry it would overwrite), and with Tailscale's /acl/validate against
// the policy file as it would be after this change and the ones planned
// before it. It also warns while the default allow-all rule exists.
func (r *fragmentResource[M, P]) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !r.Configured() {
		return
	}
	var state P
	if !req.State.Raw.IsNull() {
		state = P(new(M))
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if req.Plan.Raw.IsNull() {
		r.planDelete(state)
		return
	}
	plan := P(new(M))
	resp.Diagnostics.Append(req.Plan.Get(ctx, plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	key, keyKnown := plan.fragmentKey()
	if keyKnown {
		setComputed(plan, key, true)
		resp.Diagnostics.Append(resp.Plan.Set(ctx, plan)...)
	}
	value, valueKnown := plan.entry()

	var oldKey policy.Key
	var oldValue json.RawMessage
	creating := state == nil
	if state != nil {
		oldKey, _ = state.fragmentKey()
		oldValue, _ = state.entry()
		creating = !keyKnown || oldKey != key
	}
	changing := creating || !valueKnown || !policy.SameJSON(oldValue, value)
	if !changing || r.Clients.TailnetUnknown() {
		return
	}
	if _, diags := r.Clients.Policy(); diags.HasError() {
		resp.Diagnostics.Append(diags...)
		return
	}
	planner := r.Clients.Planner()
	if planner.WarnAllowAll(ctx) {
		resp.Diagnostics.AddWarning("Default Allow-All Rule Still in the Policy File", allowAllWarning)
	}
	if !keyKnown || !valueKnown {
		return
	}
	muts := []policy.Mutation{{Key: key, Value: value, Overwrite: !creating}}
	if creating {
		if state != nil && oldKey.Name != "" {
			muts = append([]policy.Mutation{{Key: oldKey, Delete: true}}, muts...)
		}
		if c := planner.OwnedElsewhere(ctx, key, value); c != nil {
			resp.Diagnostics.AddError("Policy Entry Already Owned", ownedElsewhereMessage(c))
			return
		}
	}
	reportCheck(&resp.Diagnostics, key, planner.Check(ctx, muts))
}

// reportCheck adds what the plan-time check of the change of key found
// (see policy.Planner.Check).
func reportCheck(diags *diag.Diagnostics, key policy.Key, err error) {
	var conflict *policy.UnmanagedConflictError
	var unchecked *policy.ValidateCallError
	switch {
	case err == nil:
	case errors.As(err, &conflict):
		diags.AddError("Entry Exists Without qtail's Marker", conflict.Error()+".")
	case errors.As(err, &unchecked) && !policy.IsRejected(err):
		diags.AddWarning("Policy Change Not Validated",
			fmt.Sprintf("qtail could not ask Tailscale to validate the policy file with %s at plan time; "+
				"Tailscale checks it again when it is written, so nothing needs to be done unless the apply fails.\n\n%v", key, unchecked.Err))
	case policy.IsRejected(err):
		diags.AddError("Tailscale Rejects the Policy Change",
			fmt.Sprintf("Tailscale refuses the policy file as it would be with %s:\n\n%v\n\nChange the configuration so that the entry is valid.%s",
				key, err, rejectionHint(err)))
	default:
		diags.AddError("Invalid Policy Change", fmt.Sprintf("qtail cannot apply %s to the policy file: %v. "+
			"Fix the policy file or the configuration, then plan again.", key, err))
	}
}

// planDelete records a planned removal, so that the entries planned after
// it are validated without it.
func (r *fragmentResource[M, P]) planDelete(state P) {
	if state == nil || r.Clients.TailnetOrNil() == nil {
		return
	}
	key, ok := state.fragmentKey()
	if !ok {
		return
	}
	if planner := r.Clients.Planner(); planner != nil {
		planner.Record(policy.Mutation{Key: key, Delete: true})
	}
}

const allowAllWarning = "The policy file still holds the rule that every new tailnet ships with, " +
	"a grant with src [\"*\"], dst [\"*\"] and ip [\"*\"] (or the ACL with src [\"*\"] and dst [\"*:*\"]). " +
	"It lets every device reach every other device, including every proxy qtail puts on the tailnet, " +
	"so the grants of this configuration restrict nothing while it is there. " +
	"Once your grants cover the access you need, remove the rule with a qtail_allow_all_removal resource that depends on them " +
	"(if this configuration already has one, the apply removes the rule and this warning goes away), " +
	"or delete it in the Tailscale admin console. The qtail_policy data source reports it as findings.allow_all_present."

// rejectionHint adds advice to a rejection that names something missing.
func rejectionHint(err error) string {
	if !strings.Contains(err.Error(), "not found") {
		return ""
	}
	return "\n\nIf another resource of this configuration declares what is missing (a qtail_tag_owner for a tag, say), " +
		"refer to its attribute, for example src = [qtail_tag_owner.web.tag], so that Terraform plans it first " +
		"and qtail validates both changes together."
}

// ownedElsewhereMessage says whose the entry is and what to do.
func ownedElsewhereMessage(c *policy.OwnershipConflict) string {
	if c.InPlan {
		return fmt.Sprintf("Another resource of this configuration also writes %s with other content. "+
			"Each fragment qtail owns has a unique key: give the resources different names.", c.Key)
	}
	return fmt.Sprintf("The policy file already has the entry marked %s, with other content: %s. "+
		"Another Terraform configuration sharing this tailnet policy probably manages it, and fragment keys are unique across "+
		"everyone who shares the file. Choose another key, or, if this configuration should own that entry, import it: "+
		"terraform import <address> %s", c.Key.Marker(), c.Existing, tfx.ShellWord(c.Key.ImportID()))
}
