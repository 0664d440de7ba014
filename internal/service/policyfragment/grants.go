package policyfragment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fragment"
	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// qtail_grants holds many grants in one resource. Each grant is still its
// own marked fragment of the policy file, written and read exactly as a
// qtail_grant writes and reads it, so that both resources, hand edits and
// other configurations share the file the same way. What changes is the
// cost: one resource is one plan-time validation and one write, whatever
// the number of grants, where Terraform hands qtail_grant resources over in
// waves of its parallelism.

var (
	_ resource.Resource                   = &grantsResource{}
	_ resource.ResourceWithConfigure      = &grantsResource{}
	_ resource.ResourceWithImportState    = &grantsResource{}
	_ resource.ResourceWithModifyPlan     = &grantsResource{}
	_ resource.ResourceWithValidateConfig = &grantsResource{}
)

// NewGrantsResource returns the qtail_grants resource.
func NewGrantsResource() resource.Resource { return &grantsResource{} }

type grantsResource struct {
	conn.ResourceBase
}

type grantsModel struct {
	ID       types.String `tfsdk:"id"`
	Grants   types.Map    `tfsdk:"grants"`
	Owners   types.Map    `tfsdk:"owners"`
	Unmarked types.List   `tfsdk:"unmarked"`
}

// grantObjectType is the type of one grant of a qtail_grants: the content
// of a grant (fragment.Grant).
var grantObjectType = objectType(fragment.Grant.Content())

// grantsImportSeparator separates the names of an import ID.
const grantsImportSeparator = ","

func (r *grantsResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_grants"
}

func (r *grantsResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Many grants of the tailnet policy file in one resource, by name. Each grant is written exactly as a " +
			"`qtail_grant` writes it: one element of `grants`, marked by the comment `// qtail:grant:NAME` on the line above it, and " +
			"qtail never touches the rest of the policy file, so several Terraform configurations can still share one tailnet policy.\n\n" +
			"Use it for many grants that one team manages together (hundreds, or thousands): the whole set costs one plan-time " +
			"validation and one write of the policy file, as a single resource does, while `qtail_grant` resources cost one of each " +
			"per wave of Terraform's parallelism. A plan shows only the grants that change.\n\n" +
			"A grant name belongs to one resource only. To move `qtail_grant` resources into a `qtail_grants`, replace each with a " +
			"`removed` block (`lifecycle { destroy = false }`), add its grant, unchanged, to the map, and import the set with an " +
			"`import` block whose `id` lists the names, in the same apply: the grants stay where they are in the policy file, and the " +
			"`qtail_grants` takes them over. Without the import the plan is refused, as for any grant that the policy file already has " +
			"marked: qtail cannot tell a grant that this configuration gave up from another configuration's.\n\n" +
			"Each grant is this resource's alone, as a `qtail_grant`'s is: its marker names its owner (`// qtail:grant:NAME#OWNER`, " +
			"see `owners`), another configuration that declares the same name is refused at plan, and a destroy removes a grant only " +
			"while its marker names its owner.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Import ID: the names of the grants, sorted, separated by commas, for example " +
					"`ops-to-billing,ops-to-web`.",
			},
			"grants": schema.MapNestedAttribute{
				Required: true,
				MarkdownDescription: "The grants, by name. A name is written in the grant's marker comment `// qtail:grant:NAME` " +
					"and must be unique among all the configurations that share the policy file. Letters, digits, `.`, `_` and `-`, " +
					"starting with a letter or a digit. At least one grant. Renaming a grant replaces it in the policy file, in the " +
					"same write as the rest of the change.",
				NestedObject: schema.NestedAttributeObject{Attributes: schemaAttributes(fragment.Grant.Content())},
				Validators: []validator.Map{
					mapvalidator.SizeAtLeast(1),
					mapvalidator.KeysAre(grantNameValidator()),
				},
			},
			"owners": schema.MapAttribute{
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "The owner of each grant, by name: drawn at random when this resource creates the grant (or first " +
					"reads one marked before markers named their owner), taken from its marker after an import, and written after `#` " +
					"in its marker comment, as in `// qtail:grant:ops-to-billing#p7mv2rt4ha`.",
			},
			"unmarked": schema.ListAttribute{
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Names of the grants found in the policy file without their marker comment (a person removed " +
					"it), sorted: the next apply puts the markers back. Empty after every apply.",
			},
		},
	}
}

// grantNameValidator checks the names of the grants: each is the name of
// a grant (fragment.Grant's name).
func grantNameValidator() validator.String {
	name, _ := fragment.Grant.Attr("name")
	return tfx.StringCheck{Rule: name.Rule, Check: name.Check}
}

// grantEntries returns the entry of each grant of m, by name: nil while a
// value of the grant is unknown. ok is false when the map is unknown or
// null.
func grantEntries(m types.Map) (map[string]json.RawMessage, bool) {
	if m.IsNull() || m.IsUnknown() {
		return nil, false
	}
	out := make(map[string]json.RawMessage, len(m.Elements()))
	for name, v := range m.Elements() {
		out[name] = nil
		g, ok := grantOf(v)
		if !ok {
			continue
		}
		if value, known := fragment.Grant.Entry(g); known {
			out[name] = value
		}
	}
	return out, true
}

// grantOf reads the values of one grant of a qtail_grants; ok is false
// while it is unknown. It reads the attributes directly: reflection
// (Object.As) costs more than the rest of a plan of a thousand grants.
func grantOf(v attr.Value) (fragment.Values, bool) {
	obj, ok := v.(types.Object)
	if !ok || obj.IsUnknown() || obj.IsNull() {
		return nil, false
	}
	return values(fragment.Grant.Content(), obj.Attributes()), true
}

// grantObject is the value of the grant g in a qtail_grants.
func grantObject(g fragment.Values) (types.Object, diag.Diagnostics) {
	attrs := make(map[string]attr.Value, len(grantObjectType.AttrTypes))
	for _, a := range fragment.Grant.Content() {
		attrs[a.Name] = attrValue(a.Type, g[a.Name])
	}
	return types.ObjectValue(grantObjectType.AttrTypes, attrs)
}

// grantMap is the value of grants for the entries of the policy file.
func grantMap(entries map[string]json.RawMessage) (types.Map, diag.Diagnostics) {
	var diags diag.Diagnostics
	elems := make(map[string]attr.Value, len(entries))
	for name, value := range entries {
		g, problems := fragment.Grant.Decode(grantKey(name), value)
		for _, p := range problems {
			diags.AddError("Unexpected Policy Entry", p)
		}
		if diags.HasError() {
			return types.MapNull(grantObjectType), diags
		}
		obj, d := grantObject(g)
		if diags.Append(d...); diags.HasError() {
			return types.MapNull(grantObjectType), diags
		}
		elems[name] = obj
	}
	m, d := types.MapValue(grantObjectType, elems)
	diags.Append(d...)
	return m, diags
}

func grantKey(name string) policyfile.Key {
	return policyfile.Key{Kind: policyfile.KindGrant, Name: name}
}

// ownedGrantKey is the key of the grant of name with its owner among
// owners ("" when it has none).
func ownedGrantKey(name string, owners map[string]string) policyfile.Key {
	k := grantKey(name)
	k.Owner = owners[name]
	return k
}

// grantOwners reads the owners of a state or a plan, by name; a grant
// without a known owner is not in the result.
func grantOwners(m types.Map) map[string]string {
	out := map[string]string{}
	if m.IsNull() || m.IsUnknown() {
		return out
	}
	for name, v := range m.Elements() {
		if s, ok := v.(types.String); ok && !s.IsNull() && !s.IsUnknown() && s.ValueString() != "" {
			out[name] = s.ValueString()
		}
	}
	return out
}

// ownersMap is the value of owners for the grants of names: the owner of
// each among owners, and for a grant without one, missing (unknown in a
// plan, where it is still to be drawn, null in a state).
func ownersMap(names []string, owners map[string]string, missing attr.Value) types.Map {
	elems := make(map[string]attr.Value, len(names))
	for _, name := range names {
		elems[name] = missing
		if o := owners[name]; o != "" {
			elems[name] = types.StringValue(o)
		}
	}
	return types.MapValueMust(types.StringType, elems)
}

// grantsID is the ID of the grants of names.
func grantsID(names []string) string {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	return strings.Join(sorted, grantsImportSeparator)
}

// grantsClaim is the key under which the change of the grants of names is
// expected by the Planner and the Store: the grant that sorts first.
func grantsClaim(names []string) policyfile.Key {
	return grantKey(slices.Min(names))
}

// grantsClaimant names the qtail_grants that writes the grant of name, in
// the message of a duplicate claim.
func grantsClaimant(name string) string {
	return fmt.Sprintf("the qtail_grants with the grant %q", name)
}

// grantAt is the path of the grant of name.
func grantAt(name string) path.Path { return path.Root("grants").AtMapKey(name) }

func (r *grantsResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var grants types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("grants"), &grants)...)
	if resp.Diagnostics.HasError() || grants.IsNull() || grants.IsUnknown() {
		return
	}
	names := slices.Collect(maps.Keys(grants.Elements()))
	if len(names) > 0 && r.Configured() {
		if planner := plannerOf(r.Clients); planner != nil {
			planner.Expect(ctx, grantsClaim(names))
		}
	}
	for name, v := range grants.Elements() {
		if g, ok := grantOf(v); ok {
			for _, p := range fragment.Grant.Validate(g) {
				resp.Diagnostics.AddAttributeError(grantAt(name).AtName(p.Attr), p.Summary, p.Detail)
			}
		}
	}
}

// grantsChange is what an apply of the grants writes.
type grantsChange struct {
	muts []policyfile.Mutation
	// names[i] is the name of the grant of muts[i].
	names []string
}

// add appends a mutation of the grant of name.
func (c *grantsChange) add(name string, m policyfile.Mutation) {
	c.muts = append(c.muts, m)
	c.names = append(c.names, name)
}

// changes returns the mutations that turn the grants old (the state, with
// the names in unmarked found without their marker) into planned, in the
// order of the names, each under its owner among owners. A grant found without its marker is adopted first,
// as it is, so that its change does not add a second one. A nil value in
// planned is unknown: it is not in the result.
func changes(old, planned map[string]json.RawMessage, unmarked []string, owners map[string]string) grantsChange {
	var c grantsChange
	names := slices.Collect(maps.Keys(old))
	for name := range planned {
		if _, ok := old[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		key := ownedGrantKey(name, owners)
		before, had := old[name]
		after, want := planned[name]
		lost := slices.Contains(unmarked, name)
		switch {
		case !want:
			if lost {
				c.add(name, policyfile.Mutation{Key: key, Value: before})
			}
			c.add(name, policyfile.Mutation{Key: key, Delete: true})
		case after == nil:
			// Unknown until apply.
		case !had:
			c.add(name, policyfile.Mutation{Key: key, Value: after})
		case lost && policyfile.SameJSON(before, after):
			c.add(name, policyfile.Mutation{Key: key, Value: after})
		case lost:
			c.add(name, policyfile.Mutation{Key: key, Value: before})
			c.add(name, policyfile.Mutation{Key: key, Value: after, Overwrite: true})
		case !policyfile.SameJSON(before, after):
			c.add(name, policyfile.Mutation{Key: key, Value: after, Overwrite: true})
		}
	}
	return c
}

// anyUnknown reports whether a grant of entries is unknown.
func anyUnknown(entries map[string]json.RawMessage) bool {
	for _, v := range entries {
		if v == nil {
			return true
		}
	}
	return false
}

// stateGrants reads the grants and the unmarked names of a state.
func stateGrants(m *grantsModel) (map[string]json.RawMessage, []string) {
	if m == nil {
		return nil, nil
	}
	old, _ := grantEntries(m.Grants)
	unmarked, _ := tfx.Strings(m.Unmarked)
	return old, unmarked
}

// ModifyPlan plans id and unmarked, then checks the grants that change:
// that no other resource of the configuration writes them, that no other
// configuration owns them, and, with Tailscale's /acl/validate, the policy
// file as it would be after the whole change and the ones planned before
// it, in one call. When Tailscale refuses it, the grants at fault are
// found and blamed alone.
func (r *grantsResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !r.Configured() {
		return
	}
	var state *grantsModel
	if !req.State.Raw.IsNull() {
		state = new(grantsModel)
		if resp.Diagnostics.Append(req.State.Get(ctx, state)...); resp.Diagnostics.HasError() {
			return
		}
	}
	old, unmarked := stateGrants(state)
	owners := map[string]string{}
	if state != nil {
		owners = grantOwners(state.Owners)
	}
	planner := plannerOf(r.Clients)
	if req.Plan.Raw.IsNull() {
		if planner != nil {
			planner.Record(changes(old, nil, unmarked, owners).muts...)
		}
		return
	}
	var plan grantsModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	planned, known := grantEntries(plan.Grants)
	if !known {
		plan.ID, plan.Unmarked, plan.Owners = types.StringUnknown(), types.ListUnknown(types.StringType), types.MapUnknown(types.StringType)
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	names := slices.Collect(maps.Keys(planned))
	plan.ID, plan.Unmarked = types.StringValue(grantsID(names)), tfx.StringList([]string{})
	plan.Owners = ownersMap(names, owners, types.StringUnknown())
	if resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	r.checkPlan(ctx, &resp.Diagnostics, old, planned, unmarked, owners)
}

// newOwner is the owner that the grant of name gets when this process
// writes it without one: the Planner's (see policy.Planner.Owner), or a
// new one without a Planner.
func newOwner(planner *policy.Planner, name string) string {
	if planner == nil {
		return policyfile.NewOwner()
	}
	return planner.Owner(grantKey(name))
}

// withNewOwners returns owners with, for each new grant of planned whose
// value is known, the owner that its write will draw in this process: the
// check of a plan then validates the markers that the apply writes, and
// the apply writes the document the check made.
func withNewOwners(planner *policy.Planner, old, planned map[string]json.RawMessage, owners map[string]string) map[string]string {
	out := maps.Clone(owners)
	if out == nil {
		out = map[string]string{}
	}
	for name, value := range planned {
		if _, had := old[name]; !had && value != nil && out[name] == "" {
			out[name] = planner.Owner(grantKey(name))
		}
	}
	return out
}

// checkPlan checks the plan of the grants planned (nil values are
// unknown), from old (the state, with its unmarked names and its owners):
// the claims, the owners, and Tailscale's validation of the policy file
// as the change leaves it. ModifyPlan and the fast path
// (GrantsFastPath.PlanResourceChange) share it.
func (r *grantsResource) checkPlan(ctx context.Context, diags *diag.Diagnostics, old, planned map[string]json.RawMessage, unmarked []string, owners map[string]string) {
	names := slices.Collect(maps.Keys(planned))
	planner := plannerOf(r.Clients)
	if planner != nil {
		owners = withNewOwners(planner, old, planned, owners)
	}
	change := changes(old, planned, unmarked, owners)
	unknown := anyUnknown(planned)
	changing := len(change.muts) > 0 || unknown
	if planner == nil {
		if changing && !r.Clients.TailnetUnknown() {
			_, d := r.Clients.Policy()
			diags.Append(d...)
		}
		return
	}
	claim := grantsClaim(names)
	defer func() { planner.Forget(claim, changing && !diags.HasError()) }()
	for _, name := range slices.Sorted(maps.Keys(planned)) {
		if earlier, taken := planner.Claim(grantKey(name), policy.Claim{Who: grantsClaimant(name)}); taken {
			diags.AddAttributeError(grantAt(name), "Two Resources Claim One Policy Entry", duplicateClaimMessage(grantKey(name), earlier))
		}
	}
	if diags.HasError() || !changing {
		return
	}
	if planner.WarnAllowAll(ctx) {
		diags.AddWarning("Default Allow-All Rule Still in the Policy File", allowAllWarning)
	}
	for _, name := range change.names {
		if _, had := old[name]; had || planned[name] == nil {
			continue
		}
		if c := planner.OwnedElsewhere(ctx, ownedGrantKey(name, owners)); c != nil {
			diags.AddAttributeError(grantAt(name), "Policy Entry Already Owned", ownedElsewhereMessageFor(c, "qtail_grants"))
		}
	}
	if diags.HasError() || len(change.muts) == 0 {
		return
	}
	err := planner.CheckAll(ctx, claim, change.muts)
	if err != nil && policy.IsRejected(err) && len(change.muts) > 1 {
		r.reportBlame(ctx, diags, planner, change, planned, err)
		return
	}
	r.reportCheck(ctx, diags, change, planned, err, explainRefusal(ctx, planner, change.muts, err))
}

// reportCheck adds what the plan-time check of change found (see
// policy.Planner.CheckAll); explained says which tests a refusal fails
// and why (see explainRefusal).
func (r *grantsResource) reportCheck(ctx context.Context, diags *diag.Diagnostics, change grantsChange, planned map[string]json.RawMessage, err error, explained string) {
	var conflict *policyfile.UnmanagedConflictError
	var owned *policyfile.OwnedError
	var unchecked *policy.ValidateCallError
	var tooLarge *policy.TooLargeError
	what := describeGrants(change.names)
	switch {
	case err == nil:
	case errors.As(err, &conflict):
		diags.AddAttributeError(grantAt(conflict.Key.Name), "Entry Exists Without qtail's Marker", conflict.Error()+".")
	case errors.As(err, &owned):
		diags.AddAttributeError(grantAt(owned.Key.Name), "Policy Entry Owned by Another Configuration",
			ownedByOtherMessage(fragment.Grant, owned.Key, owned.Owner))
	case errors.As(err, &unchecked) && !policy.IsRejected(err):
		diags.AddWarning("Policy Change Not Validated",
			fmt.Sprintf("qtail could not ask Tailscale to validate the policy file with %s at plan time; "+
				"Tailscale checks it again when it is written, so nothing needs to be done unless the apply fails.\n\n%v", what, unchecked.Err))
	case errors.As(err, &tooLarge):
		diags.AddAttributeError(path.Root("grants"), "Policy File Too Large", fmt.Sprintf("qtail refuses to write %s: %v.", what, tooLarge))
	case policy.IsRejected(err):
		blameGrant(diags, change.names[0], planned[change.names[0]], err, explained, rejectionHint(ctx, r.Clients, err))
	default:
		diags.AddAttributeError(path.Root("grants"), "Invalid Policy Change", fmt.Sprintf("qtail cannot apply %s to the policy file: %v. "+
			"Fix the policy file or the configuration, then plan again.", what, err))
	}
}

// reportBlame reports a refused change of several grants: each grant that
// Tailscale refuses on its own is blamed alone, on the attribute its
// message names.
func (r *grantsResource) reportBlame(ctx context.Context, diags *diag.Diagnostics, planner *policy.Planner, change grantsChange, planned map[string]json.RawMessage, refusal error) {
	errs := planner.Blame(ctx, change.muts)
	blamed := map[string]bool{}
	for i, err := range errs {
		name := change.names[i]
		if err == nil || blamed[name] {
			continue
		}
		blamed[name] = true
		var unchecked *policy.ValidateCallError
		if errors.As(err, &unchecked) {
			continue
		}
		blameGrant(diags, name, planned[name], err, explainRefusal(ctx, planner, change.muts[i:i+1], err), rejectionHint(ctx, r.Clients, err))
	}
	if !diags.HasError() {
		diags.AddAttributeError(path.Root("grants"), "Tailscale Rejects the Policy Change",
			fmt.Sprintf("Tailscale refuses the policy file as it would be with %s, though it accepts each of them on its own:\n\n%v\n\n"+
				"Change the configuration so that the grants are valid together.", describeGrants(change.names), refusal))
	}
}

// blameGrant adds Tailscale's refusal of the grant of name (value nil when
// the grant goes) on the attribute that its message quotes; explained
// says which tests the refusal fails and why, hint what to do.
func blameGrant(diags *diag.Diagnostics, name string, value json.RawMessage, err error, explained, hint string) {
	key := grantKey(name)
	if value == nil {
		diags.AddAttributeError(path.Root("grants"), "Tailscale Rejects the Policy Change",
			fmt.Sprintf("Tailscale refuses the policy file without %s:\n\n%v%s\n\nKeep the grant, or change what needs it (a test of the policy file, say).", key, err, explained))
		return
	}
	detail := fmt.Sprintf("Tailscale refuses the policy file as it would be with %s:\n\n%v%s\n\nChange the configuration so that the grant is valid.%s",
		key, err, explained, hint)
	at := grantAt(name)
	if p, ok := blamedPath(fragment.Grant, value, err.Error()); ok {
		at = tfx.Under(at, p)
	}
	diags.AddAttributeError(at, "Tailscale Rejects the Policy Change", detail)
}

// describeGrants names the grants of a change in messages.
func describeGrants(names []string) string {
	names = slices.Compact(slices.Clone(names))
	if len(names) == 1 {
		return grantKey(names[0]).String()
	}
	if len(names) <= 3 {
		return "the grants " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("the grants %s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}

// write applies change to the policy file and reports its failure.
func (r *grantsResource) write(ctx context.Context, diags *diag.Diagnostics, change grantsChange, planned map[string]json.RawMessage, claimed []string) bool {
	if len(change.muts) == 0 {
		return true
	}
	store, d := r.Clients.Policy()
	if diags.Append(d...); store == nil {
		return false
	}
	err := store.ApplyAll(ctx, grantsClaim(claimed), change.muts)
	if err == nil || wentThrough(ctx, store, change.muts) {
		return true
	}
	var rejected *policy.RejectedError
	if errors.As(err, &rejected) {
		for _, name := range change.names {
			if value := planned[name]; value != nil {
				if p, ok := blamedPath(fragment.Grant, value, rejected.Err.Error()); ok {
					diags.AddAttributeError(tfx.Under(grantAt(name), p), "Tailscale Rejected the Policy File",
						fmt.Sprintf("qtail could not write %s: Tailscale refused the policy file.\n\n%v%s\n\n"+
							"Nothing was written. Change the configuration (or the policy file) so that Tailscale accepts it, then apply again.",
							describeGrants(change.names), rejected.Err, explainWrite(ctx, store, change.muts, err)))
					return false
				}
			}
		}
	}
	explainedWriteError(ctx, diags, store, "write "+describeGrants(change.names), change.muts, err)
	return false
}

// wentThrough reports, after a failed write of muts, whether the policy
// file shows every one of them all the same: the write went through and
// its answer was lost. Each grant put is there with its value (the last
// put of its name), marked for its owner (one drawn for this write, for
// a new grant), and each grant deleted is gone.
func wentThrough(ctx context.Context, store *policy.Store, muts []policyfile.Mutation) bool {
	if _, err := store.Refresh(ctx); err != nil {
		return false
	}
	last := map[string]policyfile.Mutation{}
	for _, m := range muts {
		last[m.Key.Name] = m
	}
	for _, m := range last {
		f, err := store.Read(ctx, m.Key)
		switch {
		case err != nil:
			return false
		case m.Delete:
			if f.Found {
				return false
			}
		case m.Key.Owner == "" || !f.Found || !f.Marked || f.Owner != m.Key.Owner || !policyfile.SameJSON(f.Value, m.Value):
			return false
		}
	}
	return true
}

func (r *grantsResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.apply(ctx, nil, req.Plan, &resp.State, &resp.Diagnostics)
}

func (r *grantsResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var state grantsModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &state)...); resp.Diagnostics.HasError() {
		return
	}
	r.apply(ctx, &state, req.Plan, &resp.State, &resp.Diagnostics)
}

// apply writes the grants of plan over those of state (nil for a creation)
// and saves the plan as the new state.
func (r *grantsResource) apply(ctx context.Context, state *grantsModel, planValue tfsdk.Plan, out *tfsdk.State, diags *diag.Diagnostics) {
	var plan grantsModel
	if diags.Append(planValue.Get(ctx, &plan)...); diags.HasError() {
		return
	}
	old, unmarked := stateGrants(state)
	planned, known := grantEntries(plan.Grants)
	if !known || anyUnknown(planned) {
		diags.AddError("Unknown Values at Apply Time", "A grant was still unknown when it was written, which Terraform does not allow. "+
			"Please report this issue to the qtail developers.")
		return
	}
	owners := map[string]string{}
	if state != nil {
		owners = grantOwners(state.Owners)
	}
	if !r.writePlanned(ctx, diags, old, unmarked, owners, planned) {
		return
	}
	names := slices.Collect(maps.Keys(planned))
	plan.ID, plan.Unmarked = types.StringValue(grantsID(names)), tfx.StringList([]string{})
	plan.Owners = ownersMap(names, owners, types.StringNull())
	diags.Append(out.Set(ctx, &plan)...)
}

// writePlanned writes the grants planned (all known) over old, with its
// unmarked names, and reports whether the write went through. A grant
// without an owner in owners gets one, added to owners. apply and the fast
// path (GrantsFastPath.ApplyResourceChange) share it.
func (r *grantsResource) writePlanned(ctx context.Context, diags *diag.Diagnostics, old map[string]json.RawMessage, unmarked []string, owners map[string]string, planned map[string]json.RawMessage) bool {
	names := slices.Collect(maps.Keys(planned))
	// A grant without an owner gets one: a new grant, or one of a state
	// from before markers named their owner, whose marker gets it too.
	var drawn []string
	for _, name := range slices.Sorted(maps.Keys(planned)) {
		if owners[name] == "" {
			owners[name] = newOwner(plannerOf(r.Clients), name)
			drawn = append(drawn, name)
		}
	}
	change := changes(old, planned, unmarked, owners)
	for _, name := range drawn {
		if _, had := old[name]; had && !slices.Contains(change.names, name) {
			change.add(name, policyfile.Mutation{Key: ownedGrantKey(name, owners), Value: planned[name]})
		}
	}
	return r.write(ctx, diags, change, planned, names)
}

func (r *grantsResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state grantsModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &state)...); resp.Diagnostics.HasError() {
		return
	}
	store, d := r.Clients.Policy()
	if resp.Diagnostics.Append(d...); store == nil {
		return
	}
	// A state without grants comes from an import: its ID names them.
	importing := state.Grants.IsNull()
	want := map[string]json.RawMessage{}
	if importing {
		for _, name := range strings.Split(state.ID.ValueString(), grantsImportSeparator) {
			want[name] = nil
		}
	} else {
		var known bool
		want, known = grantEntries(state.Grants)
		if !known {
			resp.Diagnostics.AddError("Invalid State", "The state of these grants does not list them. "+
				"Remove it from the state with terraform state rm, then import it again.")
			return
		}
	}
	found := make(map[string]json.RawMessage, len(want))
	owners := grantOwners(state.Owners)
	var migrate []policyfile.Mutation
	var unmarked, missing []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		f, err := store.Lookup(ctx, grantKey(name), want[name])
		if err != nil {
			tfx.APIError(&resp.Diagnostics, "read the policy file", err)
			return
		}
		if !f.Found {
			missing = append(missing, name)
			continue
		}
		found[name] = f.Value
		if !f.Marked {
			unmarked = append(unmarked, name)
		}
		switch owner := owners[name]; {
		case !f.Marked:
		case owner == "" && f.Owner != "":
			owners[name] = f.Owner
		case f.Owner == "":
			// A marker from before markers named their owner: it gets
			// the grant's, in place.
			if owner == "" {
				owners[name] = policyfile.NewOwner()
			}
			migrate = append(migrate, policyfile.Mutation{Key: ownedGrantKey(name, owners), Value: f.Value})
		case f.Owner != owner:
			resp.Diagnostics.AddAttributeWarning(grantAt(name), "Policy Entry Owned by Another Configuration",
				ownedByOtherMessage(fragment.Grant, ownedGrantKey(name, owners), f.Owner))
		}
		unmanagedWarning(&resp.Diagnostics, fragment.Grant, grantKey(name), f.Value)
	}
	switch {
	case importing && len(missing) > 0:
		resp.Diagnostics.AddError("Nothing to Import",
			fmt.Sprintf("The policy file has no grant marked %s. %s", strings.Join(markersOf(missing), ", "), fragment.Grant.ImportHint))
		return
	case len(found) == 0:
		// Every grant is gone: so is the resource.
		resp.State.RemoveResource(ctx)
		return
	}
	grants, d := grantMap(found)
	if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() {
		return
	}
	if len(migrate) > 0 {
		if err := store.ApplyAll(ctx, grantsClaim(slices.Collect(maps.Keys(found))), migrate); err != nil {
			resp.Diagnostics.AddWarning("Owners Not Written in the Markers",
				fmt.Sprintf("qtail could not write the owners of %d grants in their markers, which name none "+
					"(they were written before markers named their owner): %v. The state keeps the owners, and the next refresh writes them again.",
					len(migrate), err))
		}
	}
	state.Grants, state.Unmarked = grants, tfx.StringList(append([]string{}, unmarked...))
	state.Owners = ownersMap(slices.Collect(maps.Keys(found)), owners, types.StringNull())
	if importing {
		state.ID = types.StringValue(grantsID(slices.Collect(maps.Keys(found))))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// markersOf returns the marker of the grant of each name.
func markersOf(names []string) []string {
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = grantKey(name).Marker()
	}
	return out
}

func (r *grantsResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state grantsModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &state)...); resp.Diagnostics.HasError() {
		return
	}
	old, unmarked := stateGrants(&state)
	if len(old) == 0 {
		return
	}
	owners := grantOwners(state.Owners)
	store, d := r.Clients.Policy()
	if resp.Diagnostics.Append(d...); store == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(old)) {
		if owners[name] == "" {
			continue
		}
		f, err := store.Read(ctx, grantKey(name))
		if err != nil {
			tfx.APIError(&resp.Diagnostics, "read the policy file", err)
			return
		}
		if f.Found && f.Marked && f.Owner != "" && f.Owner != owners[name] {
			resp.Diagnostics.AddAttributeWarning(grantAt(name), "Policy Entry Left to Its Owner",
				ownedByOtherMessage(fragment.Grant, ownedGrantKey(name, owners), f.Owner)+" qtail leaves it in the policy file.")
			delete(old, name)
		}
	}
	if len(old) == 0 {
		return
	}
	r.write(ctx, &resp.Diagnostics, changes(old, nil, unmarked, owners), nil, slices.Collect(maps.Keys(old)))
}

func (r *grantsResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	names, expected := parseGrantsImportID(req.ID)
	if expected != "" {
		tfx.InvalidImportID(&resp.Diagnostics, req.ID, expected)
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), grantsID(names))...)
}

// parseGrantsImportID returns the names of the grants that the import ID
// of a qtail_grants lists, separated by commas and optionally by spaces;
// or what such an ID is, when id is not one.
func parseGrantsImportID(id string) (names []string, expected string) {
	names = strings.Split(id, grantsImportSeparator)
	for i, name := range names {
		names[i] = strings.TrimSpace(name)
		if !fragment.NameRE.MatchString(names[i]) {
			return nil, "the names of the grants separated by commas, for example ops-to-billing,ops-to-web " +
				"(each the NAME of a marker // qtail:grant:NAME)"
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
		return nil, "distinct grant names separated by commas"
	}
	return names, ""
}
