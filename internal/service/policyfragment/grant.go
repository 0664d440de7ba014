package policyfragment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ resource.Resource                   = &grantResource{}
	_ resource.ResourceWithConfigure      = &grantResource{}
	_ resource.ResourceWithImportState    = &grantResource{}
	_ resource.ResourceWithModifyPlan     = &grantResource{}
	_ resource.ResourceWithValidateConfig = &grantResource{}
)

// NewGrantResource returns the qtail_grant resource.
func NewGrantResource() resource.Resource {
	return &grantResource{fragmentResource[grantModel, *grantModel]{
		what:       "grant",
		members:    grantMembers,
		importHint: grantImportHint,
	}}
}

// grantMembers are the members of a grant that qtail manages, lower-cased.
var grantMembers = []string{"src", "dst", "ip", "app", "via", "srcposture"}

// grantImportHint says how to take over a grant written by hand.
const grantImportHint = "A grant is known by its marker only. To take over a grant written by hand, put the line " +
	"`// qtail:grant:NAME` on its own line just above it and import again, " +
	"or declare a grant with the same content: qtail then marks the existing grant instead of adding a copy."

type grantResource struct {
	fragmentResource[grantModel, *grantModel]
}

type grantModel struct {
	ID         types.String `tfsdk:"id"`
	Name       types.String `tfsdk:"name"`
	Src        types.List   `tfsdk:"src"`
	Dst        types.List   `tfsdk:"dst"`
	IP         types.List   `tfsdk:"ip"`
	App        appJSON      `tfsdk:"app"`
	Via        types.List   `tfsdk:"via"`
	SrcPosture types.List   `tfsdk:"src_posture"`
	Marker     types.String `tfsdk:"marker"`
}

// fragmentNameRE is the form of the name of a grant or a policy test.
var fragmentNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func (m *grantModel) fragmentKey() (policyfile.Key, bool) {
	if m.Name.IsUnknown() || m.Name.IsNull() {
		return policyfile.Key{}, false
	}
	return policyfile.Key{Kind: policyfile.KindGrant, Name: m.Name.ValueString()}, true
}

func (m *grantModel) entry() (json.RawMessage, bool) { return m.fields().entry() }

func (m *grantModel) setEntry(key policyfile.Key, value json.RawMessage) diag.Diagnostics {
	var f grantFields
	diags := f.setEntry(key, value)
	if !diags.HasError() {
		m.Name = types.StringValue(key.Name)
		m.Src, m.Dst, m.IP, m.App, m.Via, m.SrcPosture = f.Src, f.Dst, f.IP, f.App, f.Via, f.SrcPosture
	}
	return diags
}

func (m *grantModel) fields() grantFields {
	return grantFields{Src: m.Src, Dst: m.Dst, IP: m.IP, App: m.App, Via: m.Via, SrcPosture: m.SrcPosture}
}

// grantFields is the content of a grant: the attributes of grantAttributes.
type grantFields struct {
	Src        types.List `tfsdk:"src"`
	Dst        types.List `tfsdk:"dst"`
	IP         types.List `tfsdk:"ip"`
	App        appJSON    `tfsdk:"app"`
	Via        types.List `tfsdk:"via"`
	SrcPosture types.List `tfsdk:"src_posture"`
}

// entry returns the grant as qtail writes it; ok is false while a value is
// unknown, or when src or dst is missing (as after an import).
func (g grantFields) entry() (json.RawMessage, bool) {
	if g.Src.IsNull() || g.Dst.IsNull() {
		return nil, false
	}
	var e policyfile.GrantEntry
	known := stringsOf(&e.Src, g.Src) && stringsOf(&e.Dst, g.Dst) && stringsOf(&e.IP, g.IP) &&
		stringsOf(&e.Via, g.Via) && stringsOf(&e.SrcPosture, g.SrcPosture)
	app, appKnown := optString(g.App.StringValue)
	if !known || !appKnown {
		return nil, false
	}
	if app != nil {
		e.App = json.RawMessage(*app)
	}
	return entryJSON(e)
}

// setEntry fills g from the standardized value of the grant of key.
func (g *grantFields) setEntry(key policyfile.Key, value json.RawMessage) diag.Diagnostics {
	var diags diag.Diagnostics
	f, err := parseEntryFields(key, value)
	if err != nil {
		diags.AddError("Unexpected Policy Entry", err.Error()+". Correct it in the policy file.")
		return diags
	}
	g.Src = f.list(&diags, "src")
	g.Dst = f.list(&diags, "dst")
	g.IP = f.list(&diags, "ip")
	g.App = appJSON{StringValue: f.raw("app")}
	g.Via = f.list(&diags, "via")
	g.SrcPosture = f.list(&diags, "srcPosture")
	return diags
}

// checkAccess adds an error on the ip attribute under at when the grant
// has neither ip nor app.
func (g grantFields) checkAccess(at path.Path, diags *diag.Diagnostics) {
	if g.IP.IsUnknown() || g.App.IsUnknown() {
		return
	}
	if (g.IP.IsNull() || len(g.IP.Elements()) == 0) && g.App.IsNull() {
		diags.AddAttributeError(at.AtName("ip"), "Missing Access",
			"A grant needs at least one of ip and app: Tailscale refuses a grant whose ip and app are both empty. "+
				"Set ip (for example [\"tcp:443\"]) or app.")
	}
}

func (m *grantModel) computed() (*types.String, *types.String) { return &m.ID, &m.Marker }

func (r *grantResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_grant"
}

func (r *grantResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "One grant of the tailnet policy file: who (`src`) may reach what (`dst`), on which ports (`ip`) " +
			"or with which application capabilities (`app`). qtail writes it as one element of `grants`, marked by the comment " +
			"`// qtail:grant:NAME` on the line above it, and never touches the rest of the policy file, so that several " +
			"Terraform configurations can share one tailnet policy.\n\n" +
			"At plan time qtail checks the values locally, then asks Tailscale to validate the policy file as it would be " +
			"with this grant, and warns while the default allow-all rule of a new tailnet is still in the file.",
		Attributes: tfx.MergeAttributes(grantAttributes(), map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Import ID of the grant: its `name`.",
			},
			"name": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Name of the grant, written in its marker comment `// qtail:grant:NAME`. It must be unique among " +
					"all the configurations that share the policy file. Letters, digits, `.`, `_` and `-`, starting with a letter or a digit. " +
					"Changing it replaces the grant.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{fragmentNameValidator()},
			},
			"marker": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Marker comment that identifies the grant in the policy file, without the leading `//`, " +
					"for example `qtail:grant:web-to-billing`. It reads as an empty string when the grant is in the policy file " +
					"without its marker (a person removed the comment): the next apply puts it back.",
			},
		}),
	}
}

// grantAttributes are the attributes of a grant's content, the same in a
// qtail_grant and in each grant of a qtail_grants.
func grantAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"src": schema.ListAttribute{
			Required:    true,
			ElementType: types.StringType,
			MarkdownDescription: "Sources: `*`, user emails, `group:`, `tag:`, `autogroup:` names, hosts, IPs or CIDRs. " +
				"At least one.",
			Validators: []validator.List{
				listvalidator.SizeAtLeast(1),
				listvalidator.ValueStringsAre(selectorValidator(policyfile.GrantSrc)),
			},
		},
		"dst": schema.ListAttribute{
			Required:    true,
			ElementType: types.StringType,
			MarkdownDescription: "Destinations: `*`, user emails, `group:`, `tag:`, `autogroup:`, `svc:` names, hosts, IPs or CIDRs, " +
				"without ports (ports go in `ip`). At least one.",
			Validators: []validator.List{
				listvalidator.SizeAtLeast(1),
				listvalidator.ValueStringsAre(selectorValidator(policyfile.GrantDst)),
			},
		},
		"ip": schema.ListAttribute{
			Optional:    true,
			ElementType: types.StringType,
			MarkdownDescription: "Network access, one port or port range per entry, optionally after a protocol: `*`, `443`, " +
				"`80-443`, `tcp:443`, `udp:53`, `icmp:*`. At least one of `ip` and `app` must be set.",
			Validators: []validator.List{
				listvalidator.ValueStringsAre(tfx.StringCheck{Rule: "must be a port, a port range or \"*\", optionally after a protocol", Check: policyfile.ValidIPPort}),
			},
		},
		"app": schema.StringAttribute{
			Optional:   true,
			CustomType: appJSONType{},
			MarkdownDescription: "Application capabilities, as a JSON object (use `jsonencode`) that maps each capability name, " +
				"of the form `{domain}/{path}`, to a list of objects, for example " +
				"`jsonencode({ \"tailscale.com/cap/kubernetes\" = [{ impersonate = { groups = [\"system:masters\"] } }] })`. " +
				"Formatting and member order do not matter: a value that means the same JSON shows no difference.",
			Validators: []validator.String{tfx.StringCheck{Rule: "must be a JSON object of capability names to lists of objects", Check: checkAppJSON}},
		},
		"via": schema.ListAttribute{
			Optional:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Tags of the devices (subnet routers, exit nodes, app connectors) through which the access is routed.",
			Validators: []validator.List{
				listvalidator.ValueStringsAre(tfx.StringCheck{Rule: "must be a tag", Check: policyfile.ValidVia}),
			},
		},
		"src_posture": schema.ListAttribute{
			Optional:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Device posture conditions the source must meet, as `posture:NAME` names from the `postures` section of the policy file.",
			Validators: []validator.List{
				listvalidator.ValueStringsAre(tfx.StringCheck{Rule: "must be a posture:NAME", Check: checkPosture}),
			},
		}}
}

func (r *grantResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg grantModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.expect(&cfg)
	cfg.fields().checkAccess(path.Empty(), &resp.Diagnostics)
}

func (r *grantResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !fragmentNameRE.MatchString(req.ID) {
		tfx.InvalidImportID(&resp.Diagnostics, req.ID, "the name of a grant (the NAME of its marker // qtail:grant:NAME)")
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
}

// fragmentNameValidator checks the name of a grant or a policy test.
func fragmentNameValidator() validator.String {
	return tfx.StringCheck{Rule: "must start with a letter or a digit, followed by letters, digits, '.', '_' or '-'", Check: func(s string) error {
		if !fragmentNameRE.MatchString(s) {
			return errors.New("names start with a letter or a digit, followed by letters, digits, '.', '_' or '-'")
		}
		return nil
	}}
}

// selectorValidator checks a source or a destination.
func selectorValidator(use policyfile.SelectorUse) validator.String {
	return tfx.StringCheck{Rule: "must be a valid selector", Check: func(s string) error { return policyfile.ValidSelector(s, use) }}
}

// checkPosture checks a posture name.
func checkPosture(s string) error {
	name, ok := strings.CutPrefix(s, "posture:")
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
		return errors.New("postures are named \"posture:NAME\"")
	}
	return nil
}

// checkAppJSON checks the app value of a grant: a JSON object whose keys are
// capability names {domain}/{path} and whose values are lists of objects.
func checkAppJSON(s string) error {
	var app map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &app); err != nil {
		return fmt.Errorf("app must be a JSON object of capability names to lists of objects: %v", err)
	}
	if len(app) == 0 {
		return errors.New("app must name at least one capability")
	}
	for name, v := range app {
		domain, p, ok := strings.Cut(name, "/")
		if !ok || p == "" || !validDomainName(domain) {
			return fmt.Errorf("capability %q: capability name must have the form {domain}/{path}", name)
		}
		var list []map[string]json.RawMessage
		if err := json.Unmarshal(v, &list); err != nil {
			return fmt.Errorf("capability %q: the value must be a list of JSON objects", name)
		}
	}
	return nil
}

// validDomainName reports whether d is a DNS name: dot-separated labels of
// letters, digits and dashes.
func validDomainName(d string) bool {
	if d == "" {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" {
			return false
		}
		for i := 0; i < len(label); i++ {
			if !isDNSByte(label[i]) {
				return false
			}
		}
	}
	return true
}

func isDNSByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-'
}

// appJSONType is the type of a grant's app: a JSON string whose formatting
// and member order do not matter.
type appJSONType struct {
	basetypes.StringType
}

var _ basetypes.StringTypable = appJSONType{}

func (t appJSONType) Equal(o attr.Type) bool {
	_, ok := o.(appJSONType)
	return ok
}

func (t appJSONType) String() string { return "appJSONType" }

func (t appJSONType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return appJSON{StringValue: in}, nil
}

func (t appJSONType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return appJSON{StringValue: s}, nil
}

func (t appJSONType) ValueType(context.Context) attr.Value { return appJSON{} }

// appJSON is a value of appJSONType. Two values are semantically equal
// when they are the same JSON in canonical form.
type appJSON struct {
	basetypes.StringValue
}

var _ basetypes.StringValuableWithSemanticEquals = appJSON{}

func (v appJSON) Equal(o attr.Value) bool {
	other, ok := o.(appJSON)
	return ok && v.StringValue.Equal(other.StringValue)
}

func (v appJSON) Type(context.Context) attr.Type { return appJSONType{} }

func (v appJSON) StringSemanticEquals(_ context.Context, newValuable basetypes.StringValuable) (bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	other, ok := newValuable.(appJSON)
	if !ok {
		diags.AddError("Semantic Equality Check Error", fmt.Sprintf("qtail compared the app JSON of a grant with a %T. Please report this issue to the qtail developers.", newValuable))
		return false, diags
	}
	return policyfile.SameJSON(json.RawMessage(v.ValueString()), json.RawMessage(other.ValueString())), diags
}
