package policyfragment

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ resource.Resource                   = &autoApproverResource{}
	_ resource.ResourceWithConfigure      = &autoApproverResource{}
	_ resource.ResourceWithImportState    = &autoApproverResource{}
	_ resource.ResourceWithModifyPlan     = &autoApproverResource{}
	_ resource.ResourceWithValidateConfig = &autoApproverResource{}
)

// NewAutoApproverResource returns the qtail_auto_approver resource.
func NewAutoApproverResource() resource.Resource {
	return &autoApproverResource{fragmentResource[autoApproverModel, *autoApproverModel]{
		listAttr:   "approvers",
		what:       "auto approver",
		importHint: "Declare it in autoApprovers first, or create it with a qtail_auto_approver resource.",
	}}
}

type autoApproverResource struct {
	fragmentResource[autoApproverModel, *autoApproverModel]
}

type autoApproverModel struct {
	ID        types.String `tfsdk:"id"`
	Route     types.String `tfsdk:"route"`
	ExitNode  types.Bool   `tfsdk:"exit_node"`
	Approvers types.List   `tfsdk:"approvers"`
	Owner     types.String `tfsdk:"owner"`
	Marker    types.String `tfsdk:"marker"`
}

// fragmentKey is the key of the resource's approvers, with its owner once
// it has one.
func (m *autoApproverModel) fragmentKey() (policyfile.Key, bool) {
	if m.Route.IsUnknown() || m.ExitNode.IsUnknown() {
		return policyfile.Key{}, false
	}
	var key policyfile.Key
	switch {
	case m.ExitNode.ValueBool() && m.Route.IsNull():
		key = policyfile.ExitNodeKey()
	case !m.ExitNode.ValueBool() && !m.Route.IsNull():
		key = policyfile.RouteKey(m.Route.ValueString())
	default:
		return policyfile.Key{}, false
	}
	if !m.Owner.IsUnknown() {
		key.Owner = m.Owner.ValueString()
	}
	return key, true
}

func (m *autoApproverModel) ownerAttr() *types.String { return &m.Owner }

func (m *autoApproverModel) entry() (json.RawMessage, bool) { return listJSON(m.Approvers) }

func (m *autoApproverModel) setEntry(key policyfile.Key, value json.RawMessage) diag.Diagnostics {
	var diags diag.Diagnostics
	if cidr, ok := strings.CutPrefix(key.Name, policyfile.RoutePrefix); ok {
		m.Route, m.ExitNode = types.StringValue(cidr), types.BoolValue(false)
	} else {
		m.Route, m.ExitNode = types.StringNull(), types.BoolValue(true)
	}
	m.Approvers = readList(&diags, key, value)
	m.Owner = types.StringNull()
	if key.Owner != "" {
		m.Owner = types.StringValue(key.Owner)
	}
	return diags
}

func (m *autoApproverModel) computed() (*types.String, *types.String) { return &m.ID, &m.Marker }

func (r *autoApproverResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_auto_approver"
}

func (r *autoApproverResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Approvers of the tailnet policy file's `autoApprovers`: who may advertise a subnet route (`route`), " +
			"or exit nodes (`exit_node = true`), with the route approved without an admin. qtail adds each approver to the list " +
			"`autoApprovers.routes[\"CIDR\"]` or `autoApprovers.exitNode`, marked by the comment " +
			"`// qtail:auto_approver:route:CIDR#OWNER` or `// qtail:auto_approver:exitNode#OWNER` on the line above it, " +
			"where `OWNER` is this resource's `owner`, and never touches the rest.\n\n" +
			"The list is shared: other configurations that use the same tailnet (one per region, say) may add their own " +
			"approvers to the same route or to exit nodes, each with its own owner, and an approver that two of them need is " +
			"marked by both and stays until the last one removes it. An approver already in the list without a marker is " +
			"adopted. Inside one configuration, one resource lists all the approvers of a route: a second one for the same " +
			"route (or a second one for exit nodes) fails the plan. Lists and sections that qtail created go when qtail " +
			"removes their last approver.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Import ID of the auto approver: `route:CIDR#OWNER` for a route, `exitNode#OWNER` for exit nodes. " +
					"Import `route:CIDR` or `exitNode`, without an owner, to take over the approvers of the list that no owner marked.",
			},
			"route": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "The route, a CIDR in canonical form (no address bits set beyond the prefix length, " +
					"IPv6 in lower case), for example `10.20.0.0/16` or `fd7a:115c:a1e0:b1a::/64`. Exactly one of `route` and " +
					"`exit_node = true` must be set. Changing it replaces the auto approver.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{tfx.StringCheck{Rule: "must be a CIDR in canonical form", Check: policyfile.ValidCanonicalCIDR}},
			},
			"exit_node": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				MarkdownDescription: "Set to `true` to manage the approvers of exit nodes (`autoApprovers.exitNode`) instead of a route. " +
					"Default `false`. Changing it replaces the auto approver.",
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.RequiresReplace()},
			},
			"approvers": schema.ListAttribute{
				Required:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Who may advertise the route or exit node with it approved: user emails, `group:` names, " +
					"`autogroup:` names or tags (the usual choice for a subnet router, such as `tag:k8s`). At least one.",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(tfx.StringCheck{Rule: "must be a user email, group:, autogroup: or tag:", Check: checkOwner}),
				},
			},
			"owner": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Owner of the approvers this resource adds, drawn at random when it is created: lower-case letters " +
					"and digits, written after `#` in the marker of each approver.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"marker": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Marker comment that stands above each approver this resource adds, without the leading `//`, " +
					"for example `qtail:auto_approver:route:10.20.0.0/16#k3x9q2mfa7`. It reads as an empty string for approvers " +
					"that no owner marked (after an import of `route:CIDR`): the next apply marks them.",
			},
		},
	}
}

func (r *autoApproverResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg autoApproverModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() || cfg.Route.IsUnknown() || cfg.ExitNode.IsUnknown() {
		return
	}
	r.expect(&cfg)
	exitNode := cfg.ExitNode.ValueBool()
	switch {
	case exitNode && !cfg.Route.IsNull():
		resp.Diagnostics.AddAttributeError(path.Root("route"), "Conflicting Attributes",
			"Set either route (the approvers of one route) or exit_node = true (the approvers of exit nodes), not both. "+
				"Exit nodes can also be approved as the routes 0.0.0.0/0 and ::/0.")
	case !exitNode && cfg.Route.IsNull():
		resp.Diagnostics.AddAttributeError(path.Root("route"), "Missing Route",
			"Set route to the CIDR whose approvers this is, or exit_node = true for the approvers of exit nodes.")
	}
}

func (r *autoApproverResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	const want = "route:CIDR (such as route:10.20.0.0/16) or exitNode, each optionally followed by #OWNER"
	name, owner, hasOwner := strings.Cut(req.ID, "#")
	key := policyfile.Key{Kind: policyfile.KindAutoApprover, Name: name, Owner: owner}
	if hasOwner && owner == "" {
		tfx.InvalidImportID(&resp.Diagnostics, req.ID, want+" (the owner is empty)")
		return
	}
	if name != policyfile.ExitNodeName {
		cidr, ok := strings.CutPrefix(name, policyfile.RoutePrefix)
		if !ok {
			tfx.InvalidImportID(&resp.Diagnostics, req.ID, want)
			return
		}
		if err := policyfile.ValidCanonicalCIDR(cidr); err != nil {
			tfx.InvalidImportID(&resp.Diagnostics, req.ID, fmt.Sprintf("%s (%v)", want, err))
			return
		}
	}
	if err := key.Validate(); err != nil {
		tfx.InvalidImportID(&resp.Diagnostics, req.ID, fmt.Sprintf("%s (%v)", want, err))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	if hasOwner {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("owner"), owner)...)
	}
	if name == policyfile.ExitNodeName {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("exit_node"), true)...)
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("route"), strings.TrimPrefix(name, policyfile.RoutePrefix))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("exit_node"), false)...)
}
