package policyfragment

import (
	"context"
	"encoding/json"
	"fmt"

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
	_ resource.Resource                   = &policyTestResource{}
	_ resource.ResourceWithConfigure      = &policyTestResource{}
	_ resource.ResourceWithImportState    = &policyTestResource{}
	_ resource.ResourceWithModifyPlan     = &policyTestResource{}
	_ resource.ResourceWithValidateConfig = &policyTestResource{}
)

// NewPolicyTestResource returns the qtail_policy_test resource.
func NewPolicyTestResource() resource.Resource {
	return &policyTestResource{fragmentResource[policyTestModel, *policyTestModel]{
		what:    "policy test",
		members: []string{"src", "user", "proto", "accept", "allow", "deny"},
		importHint: "A policy test is known by its marker only. To take over a test written by hand, put the line " +
			"`// qtail:policy_test:NAME` on its own line just above it and import again, " +
			"or declare a qtail_policy_test with the same content: qtail then marks the existing test instead of adding a copy.",
	}}
}

type policyTestResource struct {
	fragmentResource[policyTestModel, *policyTestModel]
}

type policyTestModel struct {
	ID     types.String `tfsdk:"id"`
	Name   types.String `tfsdk:"name"`
	Src    types.String `tfsdk:"src"`
	Proto  types.String `tfsdk:"proto"`
	Accept types.List   `tfsdk:"accept"`
	Deny   types.List   `tfsdk:"deny"`
	Marker types.String `tfsdk:"marker"`
}

func (m *policyTestModel) fragmentKey() (policyfile.Key, bool) {
	if m.Name.IsUnknown() || m.Name.IsNull() {
		return policyfile.Key{}, false
	}
	return policyfile.Key{Kind: policyfile.KindPolicyTest, Name: m.Name.ValueString()}, true
}

func (m *policyTestModel) entry() (json.RawMessage, bool) {
	if m.Src.IsNull() {
		return nil, false
	}
	t := policyfile.PolicyTestEntry{Src: m.Src.ValueString()}
	proto, protoKnown := optString(m.Proto)
	t.Proto = proto
	if m.Src.IsUnknown() || !protoKnown || !stringsOf(&t.Accept, m.Accept) || !stringsOf(&t.Deny, m.Deny) {
		return nil, false
	}
	return entryJSON(t)
}

func (m *policyTestModel) setEntry(key policyfile.Key, value json.RawMessage) diag.Diagnostics {
	var diags diag.Diagnostics
	f, err := parseEntryFields(key, value)
	if err != nil {
		diags.AddError("Unexpected Policy Entry", err.Error()+". Correct it in the policy file.")
		return diags
	}
	m.Name = types.StringValue(key.Name)
	// "user" and "allow" are the legacy names of src and accept.
	m.Src = f.str(&diags, "src", "user")
	m.Proto = f.str(&diags, "proto")
	m.Accept = f.list(&diags, "accept", "allow")
	m.Deny = f.list(&diags, "deny")
	return diags
}

func (m *policyTestModel) computed() (*types.String, *types.String) { return &m.ID, &m.Marker }

func (r *policyTestResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_policy_test"
}

func (r *policyTestResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "One test of the tailnet policy file: from a source, which destinations must be reachable (`accept`) " +
			"and which must not (`deny`). qtail writes it as one element of `tests`, marked by the comment " +
			"`// qtail:policy_test:NAME` on the line above it. From then on Tailscale itself refuses every change of the policy " +
			"file that breaks the test, whoever makes it: another Terraform run, the admin console or a GitOps push.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Import ID of the policy test: its `name`.",
			},
			"name": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Name of the test, written in its marker comment `// qtail:policy_test:NAME`. It must be unique among " +
					"all the configurations that share the policy file. Letters, digits, `.`, `_` and `-`, starting with a letter or a digit. " +
					"Changing it replaces the test.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{fragmentNameValidator()},
			},
			"src": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The source the test runs from: one user email, `group:`, `tag:`, host name or IP. " +
					"Wildcards are not allowed.",
				Validators: []validator.String{selectorValidator(policyfile.TestSrc)},
			},
			"proto": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "IP protocol of the test, such as `tcp`, `udp` or `icmp`, or an IANA protocol number. " +
					"When unset, the test covers TCP, UDP and ICMP as Tailscale does.",
				Validators: []validator.String{tfx.StringCheck{Rule: "must be an IP protocol name or number", Check: checkProto}},
			},
			"accept": schema.ListAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Destinations that `src` must reach, each a host, tag, user or IP followed by one port, " +
					"such as `tag:billing:443` or `100.64.0.10:22`. At least one of `accept` and `deny` must be set.",
				Validators: []validator.List{
					listvalidator.ValueStringsAre(selectorValidator(policyfile.TestDst)),
				},
			},
			"deny": schema.ListAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Destinations that `src` must not reach, in the form of `accept`.",
				Validators: []validator.List{
					listvalidator.ValueStringsAre(selectorValidator(policyfile.TestDst)),
				},
			},
			"marker": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Marker comment that identifies the test in the policy file, without the leading `//`, " +
					"for example `qtail:policy_test:ops-reach-billing`. It reads as an empty string when the test is in the policy " +
					"file without its marker: the next apply puts the marker back.",
			},
		},
	}
}

func (r *policyTestResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg policyTestModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.expect(&cfg)
	if cfg.Accept.IsUnknown() || cfg.Deny.IsUnknown() {
		return
	}
	if len(cfg.Accept.Elements()) == 0 && len(cfg.Deny.Elements()) == 0 {
		resp.Diagnostics.AddAttributeError(path.Root("accept"), "Missing Destinations",
			"A policy test needs at least one destination in accept or deny: Tailscale refuses a test with neither. "+
				"Add a destination such as \"tag:web:443\" to accept or deny.")
	}
}

func (r *policyTestResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !fragmentNameRE.MatchString(req.ID) {
		tfx.InvalidImportID(&resp.Diagnostics, req.ID, "the name of a policy test (the NAME of its marker // qtail:policy_test:NAME)")
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
}

// checkProto checks the protocol of a policy test.
func checkProto(s string) error {
	if s == "" || s == "*" {
		return fmt.Errorf("name one protocol, such as \"tcp\"")
	}
	return policyfile.ValidIPPort(s + ":*")
}
