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
	"github.com/qtail/terraform-provider-qtail/internal/tfwire"
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
	if !f.plain {
		return nil, false
	}
	attrs, ok := f.known(req.ProposedNewState)
	if !ok {
		return nil, false
	}
	grants, ok := attrs["grants"].(map[string]any)
	if !ok || len(grants) == 0 {
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
	planned, ok := wireEntries(grants)
	if !ok {
		return nil, false
	}
	owners := prior.owners
	if owners == nil {
		owners = map[string]string{}
	}
	names := slices.Sorted(maps.Keys(planned))
	plannedState, err := f.dynamicValue(withComputed(attrs, names, owners))
	if err != nil {
		return nil, false
	}

	var diags diag.Diagnostics
	r := &grantsResource{ResourceBase: conn.ResourceBase{Clients: clients}}
	r.checkPlan(ctx, &diags, prior.grants, planned, prior.unmarked, owners)
	resp := &tfprotov6.PlanResourceChangeResponse{PlannedState: plannedState, PlannedPrivate: req.PriorPrivate, Diagnostics: protocolDiagnostics(diags)}
	tflog.Debug(ctx, "qtail_grants: the change is planned without the framework", map[string]any{"grants": len(names)})
	return resp, true
}

// dynamicValue encodes the wire value v of a qtail_grants.
func (f *GrantsFastPath) dynamicValue(v any) (*tfprotov6.DynamicValue, error) {
	b, err := tfwire.Encode(v, f.typ)
	if err != nil {
		return nil, err
	}
	return &tfprotov6.DynamicValue{MsgPack: b}, nil
}

// priorOf reads a prior state: its grants, and their wire values by
// name. A null state (a create) has none; ok is false for a state the
// fast path does not read.
func (f *GrantsFastPath) priorOf(dv *tfprotov6.DynamicValue) (rawGrants, map[string]any, bool) {
	if dv == nil || dv.MsgPack == nil {
		return rawGrants{}, nil, true
	}
	v, err := tfwire.Decode(dv.MsgPack, f.typ)
	if err != nil {
		return rawGrants{}, nil, false
	}
	if v == nil {
		return rawGrants{}, nil, true
	}
	attrs, ok := v.(map[string]any)
	if !ok || !tfwire.FullyKnown(attrs) {
		return rawGrants{}, nil, false
	}
	prior, ok := decodeAttrs(attrs)
	if !ok {
		return rawGrants{}, nil, false
	}
	values, _ := attrs["grants"].(map[string]any)
	return prior, values, true
}

// wireEntries returns the entry of each known grant value, by name.
func wireEntries(grants map[string]any) (map[string]json.RawMessage, bool) {
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
func withComputed(attrs map[string]any, names []string, owners map[string]string) map[string]any {
	ownerValues := make(map[string]any, len(names))
	for _, name := range names {
		ownerValues[name] = tfwire.Unknown{}
		if o := owners[name]; o != "" {
			ownerValues[name] = o
		}
	}
	out := maps.Clone(attrs)
	out["id"] = grantsID(names)
	out["unmarked"] = []any{}
	out["owners"] = ownerValues
	return out
}

// sameJSONBytes reports whether the JSON attributes of the grant g have
// the bytes they have in the prior grant (true when there is none).
func sameJSONBytes(g, prior any) bool {
	if prior == nil {
		return true
	}
	ga, ok := g.(map[string]any)
	pa, pok := prior.(map[string]any)
	if !ok || !pok {
		return false
	}
	for _, a := range fragment.Grant.Content() {
		if a.Type == fragment.JSON && ga[a.Name] != pa[a.Name] {
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
	cfg, ok := f.known(req.Config)
	if !ok {
		return nil, false
	}
	grants, ok := cfg["grants"].(map[string]any)
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

// grantPlainValues returns the plain values (see fragment.Values) of the
// known grant g, a wire value.
func grantPlainValues(g any) (fragment.Values, bool) {
	attrs, ok := g.(map[string]any)
	if !ok {
		return nil, false
	}
	v := make(fragment.Values, len(attrs))
	for _, a := range fragment.Grant.Content() {
		val, ok := wirePlainValue(a.Type, attrs[a.Name])
		if !ok {
			return nil, false
		}
		v[a.Name] = val
	}
	return v, true
}

// wirePlainValue is the plain value of the known wire value v of type t.
func wirePlainValue(t fragment.Type, v any) (any, bool) {
	if v == nil {
		return nil, true
	}
	if t == fragment.List {
		return tfwire.Strings(v)
	}
	var ok bool
	if t == fragment.Bool {
		_, ok = v.(bool)
	} else {
		_, ok = v.(string)
	}
	return v, ok
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
	if req.TypeName != grantsTypeName || clients == nil || !f.plain {
		return nil, false
	}
	attrs, ok := f.object(req.PlannedState)
	if !ok || !tfwire.FullyKnown(attrs["grants"]) {
		return nil, false
	}
	grants, ok := attrs["grants"].(map[string]any)
	if !ok || len(grants) == 0 {
		return nil, false
	}
	prior, _, ok := f.priorOf(req.PriorState)
	if !ok {
		return nil, false
	}
	planned, ok := wireEntries(grants)
	if !ok {
		return nil, false
	}
	owners := maps.Clone(prior.owners)
	if owners == nil {
		owners = map[string]string{}
	}
	var diags diag.Diagnostics
	r := &grantsResource{ResourceBase: conn.ResourceBase{Clients: clients}}
	var newState any
	if r.writePlanned(ctx, &diags, prior.grants, prior.unmarked, owners, planned) {
		// Every grant has its owner now: none is unknown.
		newState = withComputed(attrs, slices.Sorted(maps.Keys(planned)), owners)
	}
	dv, err := f.dynamicValue(newState)
	if err != nil {
		diags.AddError("Unexpected State", "qtail could not encode the state of the grants: "+err.Error()+". Please report this issue to the qtail developers.")
	}
	tflog.Debug(ctx, "qtail_grants: the change is applied without the framework", map[string]any{"grants": len(planned)})
	return &tfprotov6.ApplyResourceChangeResponse{NewState: dv, Private: req.PlannedPrivate, Diagnostics: protocolDiagnostics(diags)}, true
}
