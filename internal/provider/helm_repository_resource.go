package provider

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// The Tailscale Helm chart channels.
const (
	TailscaleStableChartsURL   = "https://pkgs.tailscale.com/helmcharts"
	TailscaleUnstableChartsURL = "https://pkgs.tailscale.com/unstable/helmcharts"
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
	resourceBase
}

type helmRepositoryModel struct {
	ID                  types.String `tfsdk:"id"`
	OrganizationID      types.String `tfsdk:"organization_id"`
	Name                types.String `tfsdk:"name"`
	URL                 types.String `tfsdk:"url"`
	AllowUnstable       types.Bool   `tfsdk:"allow_unstable"`
	SkipTLSVerification types.Bool   `tfsdk:"skip_tls_verification"`
}

func (r *helmRepositoryResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_helm_repository"
}

func (r *helmRepositoryResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An organization Helm repository in Qovery (kind `HTTPS`) that serves the Tailscale operator chart. " +
			"It defaults to Tailscale's stable channel; the `unstable` channel is refused unless `allow_unstable = true`, " +
			"so that it stays out of production by accident.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "ID of the Helm repository in Qovery.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"organization_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "ID of the Qovery organization that owns the repository. Changing it replaces the repository.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{uuidValidator()},
			},
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the repository, unique within the organization.",
				Validators:          []validator.String{nonBlankValidator()},
			},
			"url": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(TailscaleStableChartsURL),
				MarkdownDescription: "HTTPS URL of the chart repository. Defaults to Tailscale's stable channel, `" + TailscaleStableChartsURL +
					"`. The unstable channel, `" + TailscaleUnstableChartsURL + "`, needs `allow_unstable = true`.",
				Validators: []validator.String{httpsURLValidator()},
			},
			"allow_unstable": schema.BoolAttribute{
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
				MarkdownDescription: "Allow Tailscale's unstable chart channel. Keep it out of production. Default `false`.",
			},
			"skip_tls_verification": schema.BoolAttribute{
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
				MarkdownDescription: "Skip TLS certificate verification when Qovery pulls from the repository. Default `false`.",
			},
		},
	}
}

// isUnstableChannel reports whether u points at Tailscale's unstable
// channel, whatever its trailing slash or case.
func isUnstableChannel(u string) bool {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil {
		return false
	}
	return strings.EqualFold(p.Hostname(), "pkgs.tailscale.com") &&
		strings.HasPrefix(strings.Trim(strings.ToLower(p.Path), "/"), "unstable")
}

func (r *helmRepositoryResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg helmRepositoryModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() || cfg.URL.IsUnknown() || cfg.URL.IsNull() || cfg.AllowUnstable.IsUnknown() {
		return
	}
	if isUnstableChannel(cfg.URL.ValueString()) && !cfg.AllowUnstable.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("url"), "Unstable Tailscale Channel",
			fmt.Sprintf("%s is Tailscale's unstable chart channel: its charts are pre-releases. Use the stable channel %s, "+
				"or set allow_unstable = true to accept it knowingly.", cfg.URL.ValueString(), TailscaleStableChartsURL))
	}
}

// ModifyPlan refuses, before anything is created, a name that another
// repository of the organization already has, and a missing Qovery
// credential.
func (r *helmRepositoryResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !r.configured() {
		return
	}
	if r.data.qovery == nil {
		if !r.data.qoveryUnknown {
			_, diags := r.data.Qovery()
			resp.Diagnostics.Append(diags...)
		}
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
	creating := req.State.Raw.IsNull() || !plan.OrganizationID.Equal(state.OrganizationID)
	renaming := !creating && !plan.Name.Equal(state.Name)
	if !creating && !renaming {
		return
	}
	repos, err := r.data.qovery.ListHelmRepositories(ctx, plan.OrganizationID.ValueString())
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
				fmt.Sprintf("The organization already has a Helm repository named %q (ID %s). Choose another name, or adopt it with:\n\n"+
					"  terraform import <address> %s/%s", repo.Name, repo.ID, plan.OrganizationID.ValueString(), repo.ID))
			return
		}
	}
}

func (m *helmRepositoryModel) request() *qovery.HelmRepositoryRequest {
	return &qovery.HelmRepositoryRequest{
		Name:                m.Name.ValueString(),
		Kind:                qovery.HelmRepositoryKindHTTPS,
		URL:                 m.URL.ValueString(),
		SkipTLSVerification: m.SkipTLSVerification.ValueBool(),
	}
}

func (m *helmRepositoryModel) fill(repo *qovery.HelmRepository, orgID string) {
	m.ID = types.StringValue(repo.ID)
	m.OrganizationID = types.StringValue(orgID)
	m.Name = types.StringValue(repo.Name)
	m.URL = types.StringValue(repo.URL)
	m.SkipTLSVerification = types.BoolValue(repo.SkipTLSVerification)
	if m.AllowUnstable.IsNull() || m.AllowUnstable.IsUnknown() {
		m.AllowUnstable = types.BoolValue(isUnstableChannel(repo.URL))
	}
}

func (r *helmRepositoryResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan helmRepositoryModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client, diags := r.data.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	repo, err := client.CreateHelmRepository(ctx, plan.OrganizationID.ValueString(), plan.request())
	if err != nil {
		apiError(&resp.Diagnostics, "create the Helm repository", err)
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
	client, diags := r.data.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	repo, err := client.GetHelmRepository(ctx, state.OrganizationID.ValueString(), state.ID.ValueString())
	if qovery.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		apiError(&resp.Diagnostics, "read the Helm repository", err)
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
	client, diags := r.data.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	repo, err := client.EditHelmRepository(ctx, state.OrganizationID.ValueString(), state.ID.ValueString(), plan.request())
	if err != nil {
		apiError(&resp.Diagnostics, "update the Helm repository", err)
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
	client, diags := r.data.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	err := client.DeleteHelmRepository(ctx, state.OrganizationID.ValueString(), state.ID.ValueString())
	if err != nil && !qovery.IsNotFound(err) {
		apiError(&resp.Diagnostics, "delete the Helm repository", err)
	}
}

func (r *helmRepositoryResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	parts, diags := splitImportID(req.ID, 2, "ORGANIZATION_ID/REPOSITORY_ID")
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("organization_id"), parts[0])...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), parts[1])...)
}
