package helmrepository

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ resource.Resource                   = &helmRepositoryResource{}
	_ resource.ResourceWithConfigure      = &helmRepositoryResource{}
	_ resource.ResourceWithImportState    = &helmRepositoryResource{}
	_ resource.ResourceWithValidateConfig = &helmRepositoryResource{}
	_ resource.ResourceWithModifyPlan     = &helmRepositoryResource{}
)

// NewHelmRepositoryResource returns the qtail_helm_repository resource.
func NewHelmRepositoryResource() resource.Resource {
	return &helmRepositoryResource{}
}

type helmRepositoryResource struct {
	conn.ResourceBase
}

func (r *helmRepositoryResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_helm_repository"
}

func (r *helmRepositoryResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan helmRepositoryModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client, diags := r.Clients.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	repo, err := client.CreateHelmRepository(ctx, plan.OrganizationID.ValueString(), plan.request())
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "create the Helm repository", err)
		return
	}
	plan.fill(repo, plan.OrganizationID.ValueString())
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *helmRepositoryResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state helmRepositoryModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client, diags := r.Clients.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	repo, err := client.GetHelmRepository(ctx, state.OrganizationID.ValueString(), state.ID.ValueString())
	if qovery.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "read the Helm repository", err)
		return
	}
	state.fill(repo, state.OrganizationID.ValueString())
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *helmRepositoryResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state helmRepositoryModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client, diags := r.Clients.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	repo, err := client.EditHelmRepository(ctx, state.OrganizationID.ValueString(), state.ID.ValueString(), plan.request())
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "update the Helm repository", err)
		return
	}
	plan.fill(repo, state.OrganizationID.ValueString())
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *helmRepositoryResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state helmRepositoryModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client, diags := r.Clients.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	err := client.DeleteHelmRepository(ctx, state.OrganizationID.ValueString(), state.ID.ValueString())
	if err != nil && !qovery.IsNotFound(err) {
		tfx.APIError(&resp.Diagnostics, "delete the Helm repository", err)
	}
}

func (r *helmRepositoryResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	parts, diags := tfx.SplitImportID(req.ID, 2, "ORGANIZATION_ID/REPOSITORY_ID")
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("organization_id"), parts[0])...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), parts[1])...)
}
