package policyfragment

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fragment"
	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfwire"
)

// GrantsFastPath answers the requests of a qtail_grants that change
// nothing (the refresh of grants that are as the state says, the plan of a
// configuration equal to the state, the upgrade of a current state)
// without terraform-plugin-framework. The framework converts every value
// of a request through its schema several times, and for a map of a
// thousand grants that costs more than the rest of the plan (about 1.5 s
// of CPU of a 3 s plan). Every other request, and every one of these that
// is not plainly a no-op, goes to the framework: the fast path only ever
// answers what the framework would answer, and says so by returning
// handled.
type GrantsFastPath struct {
	typ tftypes.Type
	// plain: see plainContent.
	plain bool
}

// grantsTypeName is the type of the resource the fast path serves.
const grantsTypeName = "qtail_grants"

// NewGrantsFastPath returns the fast path of qtail_grants.
func NewGrantsFastPath(ctx context.Context) *GrantsFastPath {
	var resp resource.SchemaResponse
	(&grantsResource{}).Schema(ctx, resource.SchemaRequest{}, &resp)
	return &GrantsFastPath{typ: resp.Schema.Type().TerraformType(ctx), plain: plainContent()}
}

// rawGrants is the state of a qtail_grants read from a protocol value.
type rawGrants struct {
	id       string
	unmarked []string
	// owners are the owners of the grants, by name.
	owners map[string]string
	// grants are the entries by name, as qtail writes them.
	grants map[string]json.RawMessage
}

// decode reads a state or a plan of qtail_grants. ok is false unless the
// value is known and whole, with grants.
func (f *GrantsFastPath) decode(dv *tfprotov6.DynamicValue) (rawGrants, bool) {
	attrs, ok := f.known(dv)
	if !ok {
		return rawGrants{}, false
	}
	return decodeAttrs(attrs)
}

// decodeAttrs reads the attributes of a known state or plan.
func decodeAttrs(attrs map[string]any) (rawGrants, bool) {
	var out rawGrants
	var ok bool
	if out.id, ok = attrs["id"].(string); !ok {
		return out, false
	}
	if out.unmarked, ok = tfwire.Strings(attrs["unmarked"]); !ok {
		return out, false
	}
	grants, ok := attrs["grants"].(map[string]any)
	if !ok {
		return out, false
	}
	owners, ok := attrs["owners"].(map[string]any)
	if !ok && attrs["owners"] != nil {
		return out, false
	}
	out.owners = make(map[string]string, len(owners))
	for name, o := range owners {
		if s, ok := o.(string); ok {
			out.owners[name] = s
		} else if o != nil {
			return out, false
		}
	}
	out.grants = make(map[string]json.RawMessage, len(grants))
	for name, g := range grants {
		entry, ok := grantEntry(g)
		if !ok {
			return out, false
		}
		out.grants[name] = entry
	}
	return out, true
}

// known reads the value of dv as the attributes of a known, fully known
// qtail_grants: ok is false for a null or unknown value, or one the wire
// codec does not read.
func (f *GrantsFastPath) known(dv *tfprotov6.DynamicValue) (map[string]any, bool) {
	attrs, ok := f.object(dv)
	return attrs, ok && tfwire.FullyKnown(attrs)
}

// object reads the value of dv as the attributes of a qtail_grants that is
// neither null nor unknown, though some of its attributes may be.
func (f *GrantsFastPath) object(dv *tfprotov6.DynamicValue) (map[string]any, bool) {
	if dv == nil || dv.MsgPack == nil {
		return nil, false
	}
	v, err := tfwire.Decode(dv.MsgPack, f.typ)
	if err != nil {
		return nil, false
	}
	attrs, ok := v.(map[string]any)
	return attrs, ok
}

// grantEntry is the entry of one grant value, as grantEntries makes it:
// the values of the attributes of fragment.Grant's content, encoded by
// the description.
func grantEntry(g any) (json.RawMessage, bool) {
	v, ok := grantPlainValues(g)
	if !ok {
		return nil, false
	}
	return fragment.Grant.Entry(v)
}

// settled reports whether the state g is as an apply leaves it: every
// grant marked and with an owner, and the ID of its names.
func (g rawGrants) settled() bool {
	if len(g.unmarked) != 0 || len(g.grants) == 0 || len(g.owners) != len(g.grants) {
		return false
	}
	for name := range g.grants {
		if g.owners[name] == "" {
			return false
		}
	}
	return g.id == grantsID(slices.Collect(maps.Keys(g.grants)))
}

// UpgradeResourceState answers the upgrade of a state of the current
// version, which is a conversion from JSON. Terraform refreshes the
// resource next, which reads the policy file: the read starts now.
func (f *GrantsFastPath) UpgradeResourceState(ctx context.Context, clients *conn.Clients, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, bool) {
	if req.TypeName != grantsTypeName {
		return nil, false
	}
	prefetch(ctx, clients)
	if req.Version != 0 || req.RawState == nil || req.RawState.JSON == nil {
		return nil, false
	}
	v, err := tfwire.FromJSON(req.RawState.JSON, f.typ)
	if err != nil {
		return nil, false
	}
	dv, err := f.dynamicValue(v)
	if err != nil {
		return nil, false
	}
	tflog.Debug(ctx, "qtail_grants: the state is of the current version; its upgrade is answered without the framework")
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: dv}, true
}

// prefetch starts reading the policy file that the call under way will
// need (see policy.Store.Prefetch), when the provider is configured for
// the tailnet: the read overlaps the decoding of a large value.
func prefetch(ctx context.Context, clients *conn.Clients) {
	if planner := plannerOf(clients); planner != nil {
		planner.Prefetch(ctx)
	}
}

// ReadResource answers the refresh of grants that the policy file holds,
// marked for their owners, exactly as the state says: the state stays as
// it is.
func (f *GrantsFastPath) ReadResource(ctx context.Context, clients *conn.Clients, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, bool) {
	if req.TypeName != grantsTypeName || plannerOf(clients) == nil {
		return nil, false
	}
	prefetch(ctx, clients)
	state, ok := f.decode(req.CurrentState)
	if !ok || !state.settled() {
		return nil, false
	}
	store, diags := clients.Policy()
	if store == nil || diags.HasError() {
		return nil, false
	}
	for name, want := range state.grants {
		found, err := store.Lookup(ctx, grantKey(name), want)
		if err != nil || !found.Found || !found.Marked || found.Owner != state.owners[name] || !policyfile.SameJSON(found.Value, want) ||
			len(unmanagedMembers(found.Value, fragment.Grant.Members())) > 0 {
			return nil, false
		}
	}
	tflog.Debug(ctx, "qtail_grants: every grant is as the state says; the refresh is answered without the framework", map[string]any{"grants": len(state.grants)})
	return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private}, true
}

// PlanResourceChange answers the plan of a configuration that equals the
// state: nothing changes, and the grants are claimed for this plan as
// ModifyPlan claims them.
func (f *GrantsFastPath) PlanResourceChange(ctx context.Context, clients *conn.Clients, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, bool) {
	planner := plannerOf(clients)
	if req.TypeName != grantsTypeName || planner == nil {
		return nil, false
	}
	if req.PriorState == nil || req.ProposedNewState == nil || !bytes.Equal(req.PriorState.MsgPack, req.ProposedNewState.MsgPack) {
		return f.planChange(ctx, clients, req)
	}
	state, ok := f.decode(req.PriorState)
	if !ok || !state.settled() {
		return nil, false
	}
	names := slices.Sorted(maps.Keys(state.grants))
	resp := &tfprotov6.PlanResourceChangeResponse{PlannedState: req.PriorState, PlannedPrivate: req.PriorPrivate}
	for _, name := range names {
		if earlier, taken := planner.Claim(grantKey(name), policy.Claim{Who: grantsClaimant(name)}); taken {
			resp.Diagnostics = append(resp.Diagnostics, &tfprotov6.Diagnostic{
				Severity: tfprotov6.DiagnosticSeverityError, Summary: "Two Resources Claim One Policy Entry",
				Detail:    duplicateClaimMessage(grantKey(name), earlier),
				Attribute: tftypes.NewAttributePath().WithAttributeName("grants").WithElementKeyString(name),
			})
		}
	}
	planner.Forget(grantsClaim(names), false)
	tflog.Debug(ctx, "qtail_grants: the configuration equals the state; the plan is answered without the framework", map[string]any{"grants": len(names)})
	return resp, true
}
