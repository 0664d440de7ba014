package helmrepository

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

func (r *helmRepositoryResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg helmRepositoryModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() || cfg.URL.IsUnknown() || cfg.URL.IsNull() || cfg.AllowUnstable.IsUnknown() {
		return
	}
	if isUnstableChannel(cfg.URL.ValueString()) && !cfg.AllowUnstable.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("url"), "Unstable Tailscale Channel",
			fmt.Sprintf("%s is Tailscale's unstable chart channel: its charts are pre-releases. Use the stable channel %s, "+
				"or set allow_unstable = true to accept it knowingly.", cfg.URL.ValueString(), cluster.StableChartsURL))
	}
}

// ModifyPlan refuses, before anything is created, a name that another
// repository of the organization already has, and a missing Qovery
// credential.
func (r *helmRepositoryResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !r.Configured() {
		return
	}
	q := r.Clients.PlanQovery(&resp.Diagnostics)
	if q == nil {
		return
	}
	var plan, state helmRepositoryModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() || plan.OrganizationID.IsUnknown() || plan.Name.IsUnknown() {
		return
	}
	creating := req.State.Raw.IsNull() || replacingAttributes.ReplacedBy(ctx, req, &resp.Diagnostics)
	renaming := !creating && !plan.Name.Equal(state.Name)
	if !creating && !renaming {
		return
	}
	repos, err := q.ListHelmRepositories(ctx, plan.OrganizationID.ValueString())
	if err != nil {
		if qovery.IsNotFound(err) {
			resp.Diagnostics.AddAttributeError(path.Root("organization_id"), "Organization Not Found",
				fmt.Sprintf("Qovery has no organization %s visible to this API token. Check organization_id, and that the token "+
					"belongs to that organization.", plan.OrganizationID.ValueString()))
			return
		}
		resp.Diagnostics.AddWarning("Repository Name Not Checked", fmt.Sprintf("qtail could not list the Helm repositories of the "+
			"organization to check that the name is free: %v. Nothing needs to be done: Qovery refuses a name that is taken when "+
			"the repository is created.", err))
		return
	}
	for _, repo := range repos {
		if strings.EqualFold(repo.Name, plan.Name.ValueString()) && repo.ID != state.ID.ValueString() {
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Helm Repository Name Already Taken",
				fmt.Sprintf("The organization already has a Helm repository named %q (ID %s). Choose another name, or adopt it with %s",
					repo.Name, repo.ID, tfx.ImportHint("qtail_helm_repository", plan.OrganizationID.ValueString()+"/"+repo.ID)))
			return
		}
	}
}
