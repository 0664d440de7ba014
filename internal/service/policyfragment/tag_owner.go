package policyfragment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ resource.Resource                   = &tagOwnerResource{}
	_ resource.ResourceWithConfigure      = &tagOwnerResource{}
	_ resource.ResourceWithImportState    = &tagOwnerResource{}
	_ resource.ResourceWithModifyPlan     = &tagOwnerResource{}
	_ resource.ResourceWithValidateConfig = &tagOwnerResource{}
)

// NewTagOwnerResource returns the qtail_tag_owner resource.
func NewTagOwnerResource() resource.Resource {
	return &tagOwnerResource{fragmentResource[tagOwnerModel, *tagOwnerModel]{
		listAttr:   "owners",
		what:       "tag owner",
		importHint: "Declare the tag in tagOwners first, or create it with a qtail_tag_owner resource.",
	}}
}

type tagOwnerResource struct {
	fragmentResource[tagOwnerModel, *tagOwnerModel]
}

type tagOwnerModel struct {
	ID     types.String `tfsdk:"id"`
	Tag    types.String `tfsdk:"tag"`
	Owners types.List   `tfsdk:"owners"`
	Marker types.String `tfsdk:"marker"`
}

func (m *tagOwnerModel) fragmentKey() (policyfile.Key, bool) {
	if m.Tag.IsUnknown() || m.Tag.IsNull() {
		return policyfile.Key{}, false
	}
	return policyfile.Key{Kind: policyfile.KindTagOwner, Name: m.Tag.ValueString()}, true
}

func (m *tagOwnerModel) entry() (json.RawMessage, bool) { return listJSON(m.Owners) }

func (m *tagOwnerModel) setEntry(key policyfile.Key, value json.RawMessage) diag.Diagnostics {
	var diags diag.Diagnostics
	m.Tag = types.StringValue(key.Name)
	m.Owners = readList(&diags, key, value)
	return diags
}

func (m *tagOwnerModel) computed() (*types.String, *types.String) { return &m.ID, &m.Marker }

func (r *tagOwnerResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tag_owner"
}

func (r *tagOwnerResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "One tag of the tailnet policy file's `tagOwners`: the tag and who may apply it to devices. " +
			"qtail writes it as the member `\"TAG\": [owners]` of `tagOwners`, marked by the comment `// qtail:tag_owner:TAG` " +
			"on the line above it, and never touches the other tags.\n\n" +
			"A tag that already exists in `tagOwners` without qtail's marker is not taken over silently: if its owners differ, " +
			"the plan fails and tells how to import it; if they are the same, qtail adopts it.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Import ID of the tag owner: its `tag`.",
			},
			"tag": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The tag, `tag:` then a letter, then letters, digits or dashes, for example `tag:k8s-operator`. " +
					"Changing it replaces the tag owner.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{tfx.StringCheck{Rule: "must be a tag", Check: policyfile.ValidTag}},
			},
			"owners": schema.ListAttribute{
				Required:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Who may apply the tag: user emails, `group:` names, `autogroup:` names or other tags " +
					"(a device with an owner tag may apply this tag, as the Tailscale operator does with `tag:k8s`). " +
					"May be empty (`[]`), as for `tag:k8s-operator`: then only admins can apply the tag.",
				Validators: []validator.List{
					listvalidator.ValueStringsAre(tfx.StringCheck{Rule: "must be a user email, group:, autogroup: or tag:", Check: checkOwner}),
				},
			},
			"marker": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Marker comment that identifies the tag owner in the policy file, without the leading `//`, " +
					"for example `qtail:tag_owner:tag:k8s`. It reads as an empty string when the tag is in the policy file " +
					"without its marker: the next apply puts the marker back.",
			},
		},
	}
}

// ValidateConfig has nothing to check that the schema does not: it tells
// the plan-time checks that this tag owner is on its way.
func (r *tagOwnerResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg tagOwnerModel
	if resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...); !resp.Diagnostics.HasError() {
		r.expect(&cfg)
	}
}

func (r *tagOwnerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if err := policyfile.ValidTag(req.ID); err != nil {
		tfx.InvalidImportID(&resp.Diagnostics, req.ID, fmt.Sprintf("a tag such as tag:k8s (%v)", err))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("tag"), req.ID)...)
}

// checkOwner checks a tag owner or an auto approver: a user email, a
// group, an autogroup or a tag.
func checkOwner(s string) error {
	if err := policyfile.OneListElement(s); err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(s, "tag:"):
		return policyfile.ValidTag(s)
	case strings.HasPrefix(s, "group:"), strings.HasPrefix(s, "autogroup:"):
		return policyfile.ValidSelector(s, policyfile.GrantSrc)
	case strings.Contains(s, "@") && !strings.Contains(s, ":"):
		return policyfile.ValidSelector(s, policyfile.GrantSrc)
	}
	return errors.New("owners and approvers are user emails, group:, autogroup: or tag: names")
}
