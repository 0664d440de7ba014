package policyfragment

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fragment"
	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ resource.Resource                = &allowAllRemovalResource{}
	_ resource.ResourceWithConfigure   = &allowAllRemovalResource{}
	_ resource.ResourceWithImportState = &allowAllRemovalResource{}
	_ resource.ResourceWithModifyPlan  = &allowAllRemovalResource{}
)

// NewAllowAllRemovalResource returns the qtail_allow_all_removal resource,
// described by fragment.AllowAllRemoval.
func NewAllowAllRemovalResource() resource.Resource {
	return &allowAllRemovalResource{}
}

type allowAllRemovalResource struct {
	conn.ResourceBase
}

type allowAllRemovalModel struct {
	ID types.String `tfsdk:"id"`
}

func (r *allowAllRemovalResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + strings.TrimPrefix(fragment.AllowAllRemoval.Type, fragment.Provider)
}

func (r *allowAllRemovalResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = kindSchema(fragment.AllowAllRemoval)
}

// ModifyPlan validates the policy file without the rule, together with the
// fragment changes planned before, and records the removal so that the
// changes planned after it (a test that only passes without the rule) are
// validated without it too.
func (r *allowAllRemovalResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !r.Configured() || req.Plan.Raw.IsNull() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("id"), fragment.AllowAllID)...)
	if !req.State.Raw.IsNull() || r.Clients.TailnetUnknown() {
		return
	}
	if _, diags := r.Clients.Policy(); diags.HasError() {
		resp.Diagnostics.Append(diags...)
		return
	}
	muts := []policyfile.Mutation{{Key: policyfile.AllowAllKey(), Delete: true}}
	err := r.Clients.Planner().Check(ctx, muts)
	var unchecked *policy.ValidateCallError
	switch {
	case err == nil:
	case errors.As(err, &unchecked) && !policy.IsRejected(err):
		resp.Diagnostics.AddWarning("Policy Change Not Validated",
			fmt.Sprintf("qtail could not ask Tailscale to validate the policy file without the allow-all rule at plan time; "+
				"Tailscale checks it again when it is written, so nothing needs to be done unless the apply fails.\n\n%v", unchecked.Err))
	case policy.IsRejected(err):
		resp.Diagnostics.AddError("Tailscale Rejects the Policy File Without the Allow-All Rule",
			fmt.Sprintf("Without the allow-all rule, Tailscale refuses the policy file:\n\n%v%s\n\n"+
				"A test of the policy file relies on the rule: add the grants that give that access first "+
				"(and make them dependencies of this resource), or change the test.", err, explainRefusal(ctx, r.Clients.Planner(), muts, err)))
	default:
		resp.Diagnostics.AddError("Invalid Policy Change", fmt.Sprintf("qtail cannot remove the allow-all rule: %v. "+
			"Fix the policy file, then plan again.", err))
	}
}

func (r *allowAllRemovalResource) Create(ctx context.Context, _ resource.CreateRequest, resp *resource.CreateResponse) {
	store, diags := r.Clients.Policy()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	if err := store.Apply(ctx, policyfile.Mutation{Key: policyfile.AllowAllKey(), Delete: true}); err != nil {
		fragmentWriteError(&resp.Diagnostics, "remove the allow-all rule from the policy file", err)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &allowAllRemovalModel{ID: types.StringValue(fragment.AllowAllID)})...)
}

func (r *allowAllRemovalResource) Read(ctx context.Context, _ resource.ReadRequest, resp *resource.ReadResponse) {
	store, diags := r.Clients.Policy()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	f, err := store.Read(ctx, policyfile.AllowAllKey())
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "read the policy file", err)
		return
	}
	if f.Found {
		resp.Diagnostics.AddWarning("Allow-All Rule Back in the Policy File",
			"Someone put the default allow-all rule back in the tailnet policy file: every device reaches every proxy again. "+
				"The plan removes it again: apply it.")
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &allowAllRemovalModel{ID: types.StringValue(fragment.AllowAllID)})...)
}

// Update never runs: the resource has no configurable attribute.
func (r *allowAllRemovalResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.Append(resp.State.Set(ctx, &allowAllRemovalModel{ID: types.StringValue(fragment.AllowAllID)})...)
}

// Delete leaves the policy file as it is: qtail never writes the allow-all
// rule back.
func (r *allowAllRemovalResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}

func (r *allowAllRemovalResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if _, err := fragment.AllowAllRemoval.ImportKey(req.ID); err != nil {
		tfx.InvalidImportID(&resp.Diagnostics, req.ID, err.Error())
		return
	}
	store, diags := r.Clients.Policy()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	f, err := store.Read(ctx, policyfile.AllowAllKey())
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "read the policy file", err)
		return
	}
	if f.Found {
		resp.Diagnostics.AddError("Allow-All Rule Still in the Policy File",
			"There is nothing to import: the policy file still has the default allow-all rule. Apply the configuration to remove it.")
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), fragment.AllowAllID)...)
}
