package policyfragment

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fragment"
)

// plainContent reports whether the framework plans the grants' content as
// the configuration gives it: no attribute of a grant is computed, has a
// default, or carries a plan modifier. Only then does the fast path plan
// a change (planChange); the schema of a later version that adds one
// sends every plan to the framework again.
func plainContent() bool {
	for _, a := range fragment.Grant.Content() {
		if a.Computed || a.Default != nil || a.Replaces || a.Kept {
			return false
		}
	}
	return true
}

// planChange answers the plan of a create or an update of grants whose
// configuration is known, as the framework answers it: the grants as the
// configuration gives them, the computed attributes as ModifyPlan plans
// them, and the same checks (grantsResource.checkPlan). It declines (ok
// false) whatever it cannot answer as the framework would: a destroy, a
// value still unknown, a prior state it does not read, and a JSON value
// (app) that differs from the state's in its bytes, which the framework's
// semantic equality may keep as the state has it.
func (f *GrantsFastPath) planChange(ctx context.Context, clients *conn.Clients, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, bool) {
	if !f.plain || req.ProposedNewState == nil || req.ProposedNewState.MsgPack == nil {
		return nil, false
	}
	proposed, err := req.ProposedNewState.Unmarshal(f.typ)
	if err != nil || proposed.IsNull() || !proposed.IsFullyKnown() {
		return nil, false
	}
	var attrs map[string]tftypes.Value
	if proposed.As(&attrs) != nil {
		return nil, false
	}
	var grants map[string]tftypes.Value
	if attrs["grants"].IsNull() || attrs["grants"].As(&grants) != nil || len(grants) == 0 {
		return nil, false
	}
	prior, priorValues, ok := f.priorOf(req.PriorState)
	if !ok {
		return nil, false
	}
	for name, g := range grants {
		if !sameJSONBytes(g, priorValues[name]) {
			return nil, false
		}
	}
	planned, ok := protocolEntries(grants)
	if !ok {
		return nil, false
	}
	owners := prior.owners
	if owners == nil {
		owners = map[string]string{}
	}
	names := slices.Sorted(maps.Keys(planned))
	plannedState, err := tfprotov6.NewDynamicValue(f.typ, f.withComputed(attrs, names, owners))
	if err != nil {
		return nil, false
	}

	var diags diag.Diagnostics
	r := &grantsResource{ResourceBase: conn.ResourceBase{Clients: clients}}
	r.checkPlan(ctx, &diags, prior.grants, planned, prior.unmarked, owners)
	resp := &tfprotov6.PlanResourceChangeResponse{PlannedState: &plannedState, PlannedPrivate: req.PriorPrivate, Diagnostics: protocolDiagnostics(diags)}
	tflog.Debug(ctx, "qtail_grants: the change is planned without the framework", map[string]any{"grants": len(names)})
	return resp, true
}

// priorOf reads a prior state: its grants, and their values by name. A
// null state (a create) has none; ok is false for a state the fast path
// does not read.
func (f *GrantsFastPath) priorOf(dv *tfprotov6.DynamicValue) (rawGrants, map[string]tftypes.Value, bool) {
	if dv == nil || dv.MsgPack == nil {
		return rawGrants{}, nil, true
	}
	v, err := dv.Unmarshal(f.typ)
	switch {
	case err != nil:
		return rawGrants{}, nil, false
	case v.IsNull():
		return rawGrants{}, nil, true
	}
	prior, ok := f.decode(dv)
	if !ok {
		return rawGrants{}, nil, false
	}
	values, ok := grantValues(v)
	return prior, values, ok
}

// protocolEntries returns the entry of each known grant value, by name.
func protocolEntries(grants map[string]tftypes.Value) (map[string]json.RawMessage, bool) {
	out := make(map[string]json.RawMessage, len(grants))
	for name, g := range grants {
		entry, ok := grantEntry(g)
		if !ok {
			return nil, false
		}
		out[name] = entry
	}
	return out, true
}

// withComputed is attrs with the computed attributes of the grants of
// names (sorted) as ModifyPlan plans them and apply sets them: the ID, no
// unmarked grant, and the owner of each, unknown while it is still to be
// drawn.
func (f *GrantsFastPath) withComputed(attrs map[string]tftypes.Value, names []string, owners map[string]string) tftypes.Value {
	ownerValues := make(map[string]tftypes.Value, len(names))
	for _, name := range names {
		ownerValues[name] = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
		if o := owners[name]; o != "" {
			ownerValues[name] = tftypes.NewValue(tftypes.String, o)
		}
	}
	out := maps.Clone(attrs)
	out["id"] = tftypes.NewValue(tftypes.String, grantsID(names))
	out["unmarked"] = tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, []tftypes.Value{})
	out["owners"] = tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, ownerValues)
	return tftypes.NewValue(f.typ, out)
}

// grantValues returns the grants of a state, by name.
func grantValues(state tftypes.Value) (map[string]tftypes.Value, bool) {
	var attrs map[string]tftypes.Value
	if state.As(&attrs) != nil {
		return nil, false
	}
	var grants map[string]tftypes.Value
	if attrs["grants"].IsNull() {
		return map[string]tftypes.Value{}, true
	}
	if attrs["grants"].As(&grants) != nil {
		return nil, false
	}
	return grants, true
}

// sameJSONBytes reports whether the JSON attributes of the grant g have
// the bytes they have in the prior grant (true when there is none).
func sameJSONBytes(g, prior tftypes.Value) bool {
	if prior.Type() == nil || prior.IsNull() {
		return true
	}
	var ga, pa map[string]tftypes.Value
	if g.As(&ga) != nil || prior.As(&pa) != nil {
		return false
	}
	for _, a := range fragment.Grant.Content() {
		if a.Type == fragment.JSON && !ga[a.Name].Equal(pa[a.Name]) {
			return false
		}
	}
	return true
}

// protocolDiagnostics converts the framework's diagnostics into the
// protocol's, as the framework does.
func protocolDiagnostics(diags diag.Diagnostics) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, d := range diags {
		pd := &tfprotov6.Diagnostic{Severity: tfprotov6.DiagnosticSeverityError, Summary: d.Summary(), Detail: d.Detail()}
		if d.Severity() == diag.SeverityWarning {
			pd.Severity = tfprotov6.DiagnosticSeverityWarning
		}
		if wp, ok := d.(diag.DiagnosticWithPath); ok {
			pd.Attribute = attributePath(wp.Path())
		}
		out = append(out, pd)
	}
	return out
}

// attributePath is the protocol path of p.
func attributePath(p path.Path) *tftypes.AttributePath {
	out := tftypes.NewAttributePath()
	for _, step := range p.Steps() {
		switch s := step.(type) {
		case path.PathStepAttributeName:
			out = out.WithAttributeName(string(s))
		case path.PathStepElementKeyString:
			out = out.WithElementKeyString(string(s))
		case path.PathStepElementKeyInt:
			out = out.WithElementKeyInt(int(s))
		default:
			// A set element: the diagnostic points at the set.
			return out
		}
	}
	return out
}

// ValidateResourceConfig answers the validation of a known configuration
// of qtail_grants that every check of the schema and of ValidateConfig
// accepts: the framework would answer it with no diagnostics. Any value
// it refuses, and any value still unknown, goes to the framework, which
// words the errors.
func (f *GrantsFastPath) ValidateResourceConfig(ctx context.Context, clients *conn.Clients, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, bool) {
	if req.TypeName != grantsTypeName || req.Config == nil || req.Config.MsgPack == nil {
		return nil, false
	}
	// The plan that follows reads the policy file.
	prefetch(ctx, clients)
	cfg, err := req.Config.Unmarshal(f.typ)
	if err != nil || cfg.IsNull() || !cfg.IsFullyKnown() {
		return nil, false
	}
	grants, ok := grantValues(cfg)
	if !ok || len(grants) == 0 {
		return nil, false
	}
	name, _ := fragment.Grant.Attr("name")
	for n, g := range grants {
		if name.Check != nil && name.Check(n) != nil {
			return nil, false
		}
		v, ok := grantPlainValues(g)
		if !ok || !acceptedBySchema(v) || len(fragment.Grant.Validate(v)) > 0 {
			return nil, false
		}
	}
	if planner := plannerOf(clients); planner != nil {
		planner.Expect(ctx, grantsClaim(slices.Collect(maps.Keys(grants))))
	}
	tflog.Debug(ctx, "qtail_grants: the configuration is valid; its validation is answered without the framework", map[string]any{"grants": len(grants)})
	return &tfprotov6.ValidateResourceConfigResponse{}, true
}

// grantPlainValues returns the plain values of the known grant g.
func grantPlainValues(g tftypes.Value) (fragment.Values, bool) {
	var attrs map[string]tftypes.Value
	if g.IsNull() || g.As(&attrs) != nil {
		return nil, false
	}
	v := make(fragment.Values, len(attrs))
	for _, a := range fragment.Grant.Content() {
		val, ok := protocolValue(a.Type, attrs[a.Name])
		if !ok {
			return nil, false
		}
		v[a.Name] = val
	}
	return v, true
}

// acceptedBySchema reports whether the validators that schemaAttribute
// gives the content of a grant accept the values v.
func acceptedBySchema(v fragment.Values) bool {
	for _, a := range fragment.Grant.Content() {
		switch val := v[a.Name].(type) {
		case nil:
		case []string:
			if a.MinItems > 0 && len(val) < a.MinItems {
				return false
			}
			if a.Unique && len(slices.Compact(slices.Sorted(slices.Values(val)))) != len(val) {
				return false
			}
			if a.Check != nil {
				for _, s := range val {
					if a.Check(s) != nil {
						return false
					}
				}
			}
		case string:
			if a.Check != nil && a.Type != fragment.Bool && a.Check(val) != nil {
				return false
			}
		case bool:
		default:
			return false
		}
	}
	return true
}

// ApplyResourceChange answers the apply of a create or an update of
// grants as the framework answers it (Create or Update, then the planned
// state with its computed attributes), sharing the write with the
// framework's path (grantsResource.writePlanned). A destroy, a prior
// state it does not read, and grants still unknown go to the framework.
func (f *GrantsFastPath) ApplyResourceChange(ctx context.Context, clients *conn.Clients, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, bool) {
	if req.TypeName != grantsTypeName || clients == nil || !f.plain || req.PlannedState == nil || req.PlannedState.MsgPack == nil {
		return nil, false
	}
	plannedValue, err := req.PlannedState.Unmarshal(f.typ)
	if err != nil || plannedValue.IsNull() {
		return nil, false
	}
	var attrs map[string]tftypes.Value
	if plannedValue.As(&attrs) != nil || !attrs["grants"].IsFullyKnown() {
		return nil, false
	}
	grants, ok := grantValues(plannedValue)
	if !ok || len(grants) == 0 {
		return nil, false
	}
	prior, _, ok := f.priorOf(req.PriorState)
	if !ok {
		return nil, false
	}
	planned, ok := protocolEntries(grants)
	if !ok {
		return nil, false
	}
	owners := maps.Clone(prior.owners)
	if owners == nil {
		owners = map[string]string{}
	}
	var diags diag.Diagnostics
	r := &grantsResource{ResourceBase: conn.ResourceBase{Clients: clients}}
	newState := tftypes.NewValue(f.typ, nil)
	if r.writePlanned(ctx, &diags, prior.grants, prior.unmarked, owners, planned) {
		// Every grant has its owner now: none is unknown.
		newState = f.withComputed(attrs, slices.Sorted(maps.Keys(planned)), owners)
	}
	dv, err := tfprotov6.NewDynamicValue(f.typ, newState)
	if err != nil {
		diags.AddError("Unexpected State", "qtail could not encode the state of the grants: "+err.Error()+". Please report this issue to the qtail developers.")
	}
	tflog.Debug(ctx, "qtail_grants: the change is applied without the framework", map[string]any{"grants": len(planned)})
	return &tfprotov6.ApplyResourceChangeResponse{NewState: &dv, Private: req.PlannedPrivate, Diagnostics: protocolDiagnostics(diags)}, true
}
