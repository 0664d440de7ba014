package policyfragment

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ datasource.DataSource              = &policyDataSource{}
	_ datasource.DataSourceWithConfigure = &policyDataSource{}
)

// NewPolicyDataSource returns the qtail_policy data source.
func NewPolicyDataSource() datasource.DataSource {
	return &policyDataSource{}
}

type policyDataSource struct {
	conn.DataSourceBase
}

type policyDataSourceModel struct {
	HuJSON    types.String `tfsdk:"hujson"`
	ETag      types.String `tfsdk:"etag"`
	Fragments types.List   `tfsdk:"fragments"`
	Findings  types.Object `tfsdk:"findings"`
}

var (
	policyFragmentAttrTypes = map[string]attr.Type{
		"kind":  types.StringType,
		"key":   types.StringType,
		"value": types.StringType,
	}
	policyFindingsAttrTypes = map[string]attr.Type{
		"allow_all_present": types.BoolType,
		"funnel_to_proxies": types.ListType{ElemType: types.StringType},
	}
)

func (d *policyDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_policy"
}

func (d *policyDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The tailnet policy file as Tailscale returns it, the fragments qtail owns in it (every entry " +
			"marked `// qtail:KIND:KEY`, whichever Terraform configuration wrote it), and findings about it, such as whether " +
			"the default allow-all rule of a new tailnet is still there.",
		Attributes: map[string]schema.Attribute{
			"hujson": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The policy file, byte for byte, comments included (HuJSON).",
			},
			"etag": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The ETag Tailscale returned with the policy file, quotes included. It changes with every change of the file.",
			},
			"fragments": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The entries qtail owns, in the order of the policy file within each section: grants, tag owners, auto approvers, then tests.",
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"kind": schema.StringAttribute{
							Computed:            true,
							MarkdownDescription: "Kind of the fragment: `grant`, `tag_owner`, `auto_approver` or `policy_test`.",
						},
						"key": schema.StringAttribute{
							Computed: true,
							MarkdownDescription: "Key of the fragment, which is also the import ID of its resource: the name of a grant or a test, " +
								"the tag of a tag owner, `route:CIDR` or `exitNode` for an auto approver.",
						},
						"value": schema.StringAttribute{
							Computed:            true,
							MarkdownDescription: "Value of the entry as compact JSON with sorted members (use `jsondecode`).",
						},
					},
				},
			},
			"findings": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "What qtail finds in the policy file.",
				Attributes: map[string]schema.Attribute{
					"allow_all_present": schema.BoolAttribute{
						Computed: true,
						MarkdownDescription: "Whether the policy file still holds the rule every new tailnet ships with, the grant " +
							"`{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"*\"]}` or the ACL with `src` `[\"*\"]` and `dst` `[\"*:*\"]`. " +
							"While it is there every device reaches every other device, every proxy included, whatever the other grants say.",
					},
					"funnel_to_proxies": schema.ListAttribute{
						ElementType: types.StringType,
						Computed:    true,
						MarkdownDescription: "The targets of `nodeAttrs` entries that give the `funnel` attribute to the devices of " +
							"operators and their proxies, sorted: `*`, `tag:k8s-operator`, `tag:k8s`, and every tag that owns another tag " +
							"or that a tag owns in `tagOwners` (an operator owns the tags of its proxies). Empty when none does. With " +
							"`funnel`, a proxy that a `tailscale.com/funnel` annotation reaches is published on the public internet, " +
							"outside the grants; qtail never writes that annotation and refuses it where a user could add it, but other " +
							"tools can. Check it with `length(data.qtail_policy.current.findings.funnel_to_proxies) == 0`.",
					},
				},
			},
		},
	}
}

func (d *policyDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	store, diags := d.Clients.Policy()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	snap, err := store.Snapshot(ctx)
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "read the policy file", err)
		return
	}
	doc, err := policyfile.Parse(snap.HuJSON)
	if err != nil {
		resp.Diagnostics.AddError("Unreadable Policy File", fmt.Sprintf("qtail could not parse the tailnet policy file: %v. "+
			"Correct the policy file in the Tailscale admin console.", err))
		return
	}
	objType := types.ObjectType{AttrTypes: policyFragmentAttrTypes}
	owned := doc.Fragments()
	elems := make([]attr.Value, 0, len(owned))
	for _, f := range owned {
		obj, diags := types.ObjectValue(policyFragmentAttrTypes, map[string]attr.Value{
			"kind":  types.StringValue(string(f.Key.Kind)),
			"key":   types.StringValue(f.Key.ImportID()),
			"value": types.StringValue(string(f.Value)),
		})
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
		elems = append(elems, obj)
	}
	fragments, diags := types.ListValue(objType, elems)
	resp.Diagnostics.Append(diags...)
	findings, diags := types.ObjectValue(policyFindingsAttrTypes, map[string]attr.Value{
		"allow_all_present": types.BoolValue(policyfile.HasAllowAll(doc)),
		"funnel_to_proxies": tfx.StringList(policyfile.FunnelToProxies(doc)),
	})
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	state := policyDataSourceModel{
		HuJSON:    types.StringValue(string(snap.HuJSON)),
		ETag:      types.StringValue(snap.ETag),
		Fragments: fragments,
		Findings:  findings,
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}
