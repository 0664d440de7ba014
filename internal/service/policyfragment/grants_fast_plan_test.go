package policyfragment

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fragment"
)

// grantsPolicyHead opens the policy file of the fast path's tests: the
// group, tag and posture that their grants name, before their "grants".
const grantsPolicyHead = `{"groups": {"group:platform-ops": ["alice@example.com"]}, "tagOwners": {"tag:k8s": ["group:platform-ops"]}, "postures": {"posture:latest": ["node:tsReleaseTrack == 'stable'"]},`

// grantsOnlyProvider serves qtail_grants alone, through the framework,
// with the given clients: the reference the fast path is compared with.
type grantsOnlyProvider struct{ clients *conn.Clients }

func (p grantsOnlyProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "qtail"
}
func (p grantsOnlyProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {
}
func (p grantsOnlyProvider) Configure(_ context.Context, _ provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	resp.ResourceData = p.clients
}
func (p grantsOnlyProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{NewGrantsResource}
}
func (p grantsOnlyProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

// frameworkServer is the framework's server of qtail_grants alone,
// configured with clients.
func frameworkServer(t *testing.T, clients *conn.Clients) tfprotov6.ProviderServer {
	t.Helper()
	srv, err := providerserver.NewProtocol6WithError(grantsOnlyProvider{clients: clients})()
	if err != nil {
		t.Fatal(err)
	}
	empty := tftypes.Object{AttributeTypes: map[string]tftypes.Type{}}
	cfg, err := tfprotov6.NewDynamicValue(empty, tftypes.NewValue(empty, map[string]tftypes.Value{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{Config: &cfg}); err != nil {
		t.Fatal(err)
	}
	return srv
}

// frameworkPlan plans req through the framework, with clients.
func frameworkPlan(t *testing.T, clients *conn.Clients, req *tfprotov6.PlanResourceChangeRequest) *tfprotov6.PlanResourceChangeResponse {
	t.Helper()
	resp, err := frameworkServer(t, clients).PlanResourceChange(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// proposedValue is the proposed new state Terraform sends for the
// configuration grants over prior (nil for a create): the configuration,
// with the computed attributes of the prior state.
func proposedValue(t *testing.T, f *GrantsFastPath, grants map[string]json.RawMessage, prior *tfprotov6.DynamicValue) *tfprotov6.DynamicValue {
	t.Helper()
	cfgState, err := grantsStateValue(t, grants, []string{}).Unmarshal(f.typ)
	if err != nil {
		t.Fatal(err)
	}
	var attrs map[string]tftypes.Value
	if err := cfgState.As(&attrs); err != nil {
		t.Fatal(err)
	}
	objType, ok := f.typ.(tftypes.Object)
	if !ok {
		t.Fatalf("the type of qtail_grants is %T", f.typ)
	}
	for _, computed := range []string{"id", "owners", "unmarked"} {
		attrs[computed] = tftypes.NewValue(objType.AttributeTypes[computed], nil)
	}
	if prior != nil {
		pv, err := prior.Unmarshal(f.typ)
		if err != nil {
			t.Fatal(err)
		}
		var pattrs map[string]tftypes.Value
		if err := pv.As(&pattrs); err != nil {
			t.Fatal(err)
		}
		for _, computed := range []string{"id", "owners", "unmarked"} {
			attrs[computed] = pattrs[computed]
		}
	}
	dv, err := tfprotov6.NewDynamicValue(f.typ, tftypes.NewValue(f.typ, attrs))
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// The fast path plans every change it takes exactly as the framework
// does: the same planned state and the same diagnostics, each on the same
// attribute, over the same policy file.
func TestGrantsFastPath_plansChangesAsTheFrameworkDoes(t *testing.T) {
	ctx := context.Background()
	f := NewGrantsFastPath(ctx)
	policyWith := func(marked map[string]string) []byte {
		var b strings.Builder
		b.WriteString(grantsPolicyHead + "\n\"grants\": [\n")
		for _, name := range slices.Sorted(maps.Keys(marked)) {
			b.WriteString(marked[name] + "\n" + string(fastPathGrants[name]) + ",\n")
		}
		b.WriteString("]}\n")
		return []byte(b.String())
	}
	owned := map[string]string{}
	for name := range fastPathGrants {
		owned[name] = "// qtail:grant:" + name + "#" + fastPathOwner
	}
	onePort := map[string]json.RawMessage{
		"ops-to-phone": json.RawMessage(`{"dst":["100.64.0.3"],"ip":["tcp:8443"],"src":["group:platform-ops"]}`),
		"ops-app":      fastPathGrants["ops-app"],
	}
	added := maps.Clone(fastPathGrants)
	added["ops-ssh"] = json.RawMessage(`{"dst":["tag:k8s"],"ip":["tcp:22"],"src":["group:platform-ops"]}`)
	refused := map[string]json.RawMessage{"ops-to-phone": json.RawMessage(`{"dst":["100.64.0.3"],"ip":["tcp:443"],"src":["group:nobody"]}`)}
	state := grantsStateValue(t, fastPathGrants, []string{})
	unmarkedState := grantsStateValue(t, fastPathGrants, []string{"ops-to-phone"})

	cases := []struct {
		name   string
		policy []byte
		prior  *tfprotov6.DynamicValue
		config map[string]json.RawMessage
		// diagnostics: whether the plan reports one.
		diagnostics bool
	}{
		{name: "create", policy: policyWith(nil), config: fastPathGrants},
		{name: "create of grants another configuration owns", policy: policyWith(map[string]string{"ops-app": "// qtail:grant:ops-app#k3x9q2mfa7"}), config: fastPathGrants, diagnostics: true},
		{name: "one port changed", policy: policyWith(owned), prior: state, config: onePort},
		{name: "a grant added", policy: policyWith(owned), prior: state, config: added},
		{name: "a grant removed", policy: policyWith(owned), prior: state, config: map[string]json.RawMessage{"ops-app": fastPathGrants["ops-app"]}},
		{name: "a change over an unmarked grant", policy: policyWith(map[string]string{"ops-app": owned["ops-app"], "ops-to-phone": ""}), prior: unmarkedState, config: onePort},
		{name: "a change Tailscale refuses", policy: policyWith(nil), config: refused, diagnostics: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := func() *tfprotov6.PlanResourceChangeRequest {
				prior := tc.prior
				if prior == nil {
					null, err := tfprotov6.NewDynamicValue(f.typ, tftypes.NewValue(f.typ, nil))
					if err != nil {
						t.Fatal(err)
					}
					prior = &null
				}
				var priorForProposed *tfprotov6.DynamicValue
				if tc.prior != nil {
					priorForProposed = tc.prior
				}
				proposed := proposedValue(t, f, tc.config, priorForProposed)
				return &tfprotov6.PlanResourceChangeRequest{TypeName: "qtail_grants", PriorState: prior, ProposedNewState: proposed, Config: proposed}
			}
			fwClients, _ := sandboxData(t, tc.policy)
			want := frameworkPlan(t, fwClients, req())
			fastClients, _ := sandboxData(t, tc.policy)
			got, ok := f.PlanResourceChange(ctx, fastClients, req())
			if !ok {
				t.Fatal("the fast path declined the change")
			}
			if tc.diagnostics != (len(want.Diagnostics) > 0) {
				t.Fatalf("the framework's diagnostics: %v", describeDiags(want.Diagnostics))
			}
			if g, w := describeDiags(got.Diagnostics), describeDiags(want.Diagnostics); g != w {
				t.Errorf("diagnostics:\nfast path %s\nframework %s", g, w)
			}
			if len(want.Diagnostics) > 0 && want.PlannedState == nil {
				return
			}
			gv, err := got.PlannedState.Unmarshal(f.typ)
			if err != nil {
				t.Fatal(err)
			}
			wv, err := want.PlannedState.Unmarshal(f.typ)
			if err != nil {
				t.Fatal(err)
			}
			if !gv.Equal(wv) {
				t.Errorf("planned state:\nfast path %v\nframework %v", gv, wv)
			}
			if string(got.PlannedPrivate) != string(want.PlannedPrivate) {
				t.Errorf("private: fast path %q, framework %q", got.PlannedPrivate, want.PlannedPrivate)
			}
		})
	}
}

// The fast path leaves to the framework what it cannot plan as the
// framework would: an app whose bytes differ from the state's, a value
// still unknown, and a destroy.
func TestGrantsFastPath_declinesWhatTheFrameworkMustPlan(t *testing.T) {
	ctx := context.Background()
	f := NewGrantsFastPath(ctx)
	clients, _ := sandboxData(t, []byte(`{"groups": {"group:platform-ops": ["alice@example.com"]}, "tagOwners": {"tag:k8s": ["group:platform-ops"]}, "postures": {"posture:latest": ["node:tsReleaseTrack == 'stable'"]}}`))
	state := grantsStateValue(t, fastPathGrants, []string{})
	// The configuration writes the app of the state with other spaces.
	sv, err := state.Unmarshal(f.typ)
	if err != nil {
		t.Fatal(err)
	}
	appPath := tftypes.NewAttributePath().WithAttributeName("grants").WithElementKeyString("ops-app").WithAttributeName("app")
	reformatted, err := tftypes.Transform(sv, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if p.Equal(appPath) {
			return tftypes.NewValue(tftypes.String, `{"example.com/cap/billing": [ {"role": "reader"} ]}`), nil
		}
		return v, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	changedApp, err := tfprotov6.NewDynamicValue(f.typ, reformatted)
	if err != nil {
		t.Fatal(err)
	}
	appChanged := &changedApp
	if _, ok := f.PlanResourceChange(ctx, clients, &tfprotov6.PlanResourceChangeRequest{TypeName: "qtail_grants", PriorState: state, ProposedNewState: appChanged}); ok {
		t.Error("the fast path planned an app whose bytes differ from the state's")
	}
	unknown, err := tfprotov6.NewDynamicValue(f.typ, tftypes.NewValue(f.typ, tftypes.UnknownValue))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.PlanResourceChange(ctx, clients, &tfprotov6.PlanResourceChangeRequest{TypeName: "qtail_grants", PriorState: state, ProposedNewState: &unknown}); ok {
		t.Error("the fast path planned an unknown configuration")
	}
	null, err := tfprotov6.NewDynamicValue(f.typ, tftypes.NewValue(f.typ, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.PlanResourceChange(ctx, clients, &tfprotov6.PlanResourceChangeRequest{TypeName: "qtail_grants", PriorState: state, ProposedNewState: &null}); ok {
		t.Error("the fast path planned a destroy")
	}
}

// describeDiags writes diagnostics for a comparison.
func describeDiags(diags []*tfprotov6.Diagnostic) string {
	var b strings.Builder
	for _, d := range diags {
		fmt.Fprintf(&b, "[%v %q %q at %v] ", d.Severity, d.Summary, d.Detail, d.Attribute)
	}
	return b.String()
}

// frameworkValidate validates req through the framework.
func frameworkValidate(t *testing.T, req *tfprotov6.ValidateResourceConfigRequest) *tfprotov6.ValidateResourceConfigResponse {
	t.Helper()
	srv, err := providerserver.NewProtocol6WithError(grantsOnlyProvider{})()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.ValidateResourceConfig(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// The fast path answers the validation of a configuration only when the
// framework finds nothing wrong in it, and leaves every other one to it.
func TestGrantsFastPath_validatesOnlyWhatTheFrameworkAccepts(t *testing.T) {
	ctx := context.Background()
	f := NewGrantsFastPath(ctx)
	ok := `{"dst":["100.64.0.3"],"ip":["tcp:443"],"src":["group:platform-ops"]}`
	cases := map[string]map[string]json.RawMessage{
		"valid grants":              fastPathGrants,
		"a name the schema refuses": {"-bad name": json.RawMessage(ok)},
		"no source":                 {"a": json.RawMessage(`{"dst":["100.64.0.3"],"ip":["tcp:443"],"src":[]}`)},
		"a port the check refuses":  {"a": json.RawMessage(`{"dst":["100.64.0.3"],"ip":["tcp:99999"],"src":["group:a"]}`)},
		"neither ip nor app":        {"a": json.RawMessage(`{"dst":["100.64.0.3"],"src":["group:a"]}`)},
		"an app that is no object":  {"a": json.RawMessage(`{"app":"[1]","dst":["100.64.0.3"],"src":["group:a"]}`)},
		"a via that is no tag":      {"a": json.RawMessage(`{"dst":["100.64.0.3"],"ip":["*"],"src":["group:a"],"via":["host"]}`)},
		"a posture without prefix":  {"a": json.RawMessage(`{"dst":["100.64.0.3"],"ip":["*"],"src":["group:a"],"srcPosture":["latest"]}`)},
	}
	for name, grants := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := configValue(t, f, grants)
			req := &tfprotov6.ValidateResourceConfigRequest{TypeName: "qtail_grants", Config: cfg}
			want := frameworkValidate(t, req)
			_, handled := f.ValidateResourceConfig(ctx, nil, req)
			if valid := len(want.Diagnostics) == 0; handled != valid || valid != (name == "valid grants") {
				t.Errorf("fast path handled=%v; the framework's diagnostics: %s", handled, describeDiags(want.Diagnostics))
			}
		})
	}
}

// configValue is the configuration of grants, as Terraform sends it: the
// computed attributes null. An app given as a JSON string is kept as is.
func configValue(t *testing.T, f *GrantsFastPath, grants map[string]json.RawMessage) *tfprotov6.DynamicValue {
	t.Helper()
	objType, ok := f.typ.(tftypes.Object)
	if !ok {
		t.Fatalf("the type of qtail_grants is %T", f.typ)
	}
	grantsType, ok := objType.AttributeTypes["grants"].(tftypes.Map)
	if !ok {
		t.Fatalf("grants is a %T", objType.AttributeTypes["grants"])
	}
	grantType, ok := grantsType.ElementType.(tftypes.Object)
	if !ok {
		t.Fatalf("a grant is a %T", grantsType.ElementType)
	}
	elems := map[string]tftypes.Value{}
	for name, raw := range grants {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			t.Fatal(err)
		}
		attrs := map[string]tftypes.Value{}
		for _, a := range fragment.Grant.Content() {
			member := members[a.Member]
			switch {
			case member == nil:
				attrs[a.Name] = tftypes.NewValue(grantType.AttributeTypes[a.Name], nil)
			case a.Type == fragment.JSON:
				var s string
				if json.Unmarshal(member, &s) != nil {
					s = string(member)
				}
				attrs[a.Name] = tftypes.NewValue(tftypes.String, s)
			default:
				var list []string
				if err := json.Unmarshal(member, &list); err != nil {
					t.Fatal(err)
				}
				vals := []tftypes.Value{}
				for _, s := range list {
					vals = append(vals, tftypes.NewValue(tftypes.String, s))
				}
				attrs[a.Name] = tftypes.NewValue(grantType.AttributeTypes[a.Name], vals)
			}
		}
		elems[name] = tftypes.NewValue(grantType, attrs)
	}
	attrs := map[string]tftypes.Value{"grants": tftypes.NewValue(objType.AttributeTypes["grants"], elems)}
	for _, computed := range []string{"id", "owners", "unmarked"} {
		attrs[computed] = tftypes.NewValue(objType.AttributeTypes[computed], nil)
	}
	dv, err := tfprotov6.NewDynamicValue(f.typ, tftypes.NewValue(f.typ, attrs))
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// frameworkApply applies req through the framework, with clients.
func frameworkApply(t *testing.T, clients *conn.Clients, req *tfprotov6.ApplyResourceChangeRequest) *tfprotov6.ApplyResourceChangeResponse {
	t.Helper()
	resp, err := frameworkServer(t, clients).ApplyResourceChange(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// drawnOwners replaces, in a policy file or a state, the owners that an
// apply draws at random (any but fastPathOwner).
var drawnOwners = regexp.MustCompile(`[a-z0-9]{10}`)

func normalizeOwners(s string) string {
	return drawnOwners.ReplaceAllStringFunc(s, func(o string) string {
		if o == fastPathOwner {
			return o
		}
		return "DRAWN"
	})
}

// The fast path applies every change it plans as the framework does: the
// same new state (but for the owners drawn at random), the same
// diagnostics and the same policy file.
func TestGrantsFastPath_appliesChangesAsTheFrameworkDoes(t *testing.T) {
	ctx := context.Background()
	f := NewGrantsFastPath(ctx)
	base := grantsPolicyHead + "\n\"grants\": [\n"
	var ownedPolicy strings.Builder
	ownedPolicy.WriteString(base)
	for _, name := range slices.Sorted(maps.Keys(fastPathGrants)) {
		ownedPolicy.WriteString("// qtail:grant:" + name + "#" + fastPathOwner + "\n" + string(fastPathGrants[name]) + ",\n")
	}
	ownedPolicy.WriteString("]}\n")
	empty := base + "]}\n"
	state := grantsStateValue(t, fastPathGrants, []string{})
	onePort := map[string]json.RawMessage{
		"ops-to-phone": json.RawMessage(`{"dst":["100.64.0.3"],"ip":["tcp:8443"],"src":["group:platform-ops"]}`),
		"ops-app":      fastPathGrants["ops-app"],
	}
	added := maps.Clone(fastPathGrants)
	added["ops-ssh"] = json.RawMessage(`{"dst":["tag:k8s"],"ip":["tcp:22"],"src":["group:platform-ops"]}`)
	cases := []struct {
		name   string
		policy string
		prior  *tfprotov6.DynamicValue
		config map[string]json.RawMessage
		// refuse makes the policy file refuse the write: a group that the
		// plan knew is gone by the apply.
		refuse bool
	}{
		{name: "create", policy: empty, config: fastPathGrants},
		{name: "one port changed", policy: ownedPolicy.String(), prior: state, config: onePort},
		{name: "a grant added", policy: ownedPolicy.String(), prior: state, config: added},
		{name: "a grant removed", policy: ownedPolicy.String(), prior: state, config: map[string]json.RawMessage{"ops-app": fastPathGrants["ops-app"]}},
		{name: "a write Tailscale refuses", policy: empty, config: fastPathGrants, refuse: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := func(fast bool) (*tfprotov6.ApplyResourceChangeResponse, string) {
				clients, world := sandboxData(t, []byte(tc.policy))
				prior := tc.prior
				if prior == nil {
					null, err := tfprotov6.NewDynamicValue(f.typ, tftypes.NewValue(f.typ, nil))
					if err != nil {
						t.Fatal(err)
					}
					prior = &null
				}
				proposed := proposedValue(t, f, tc.config, tc.prior)
				aresp := planThenApply(t, f, clients, fast, prior, proposed, func() {
					if tc.refuse {
						if err := world.Tailnet.SetPolicyDirect([]byte(strings.ReplaceAll(tc.policy, `group:platform-ops`, `group:other`))); err != nil {
							t.Fatal(err)
						}
					}
				})
				body, _ := world.Tailnet.Policy()
				return aresp, normalizeOwners(string(body))
			}
			want, wantPolicy := run(false)
			got, gotPolicy := run(true)
			if tc.refuse != (len(want.Diagnostics) > 0) {
				t.Fatalf("the framework's diagnostics: %s", describeDiags(want.Diagnostics))
			}
			if g, w := normalizeOwners(describeDiags(got.Diagnostics)), normalizeOwners(describeDiags(want.Diagnostics)); g != w {
				t.Errorf("diagnostics:\nfast path %s\nframework %s", g, w)
			}
			gv, err := got.NewState.Unmarshal(f.typ)
			if err != nil {
				t.Fatal(err)
			}
			wv, err := want.NewState.Unmarshal(f.typ)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := normalizeOwners(gv.String()), normalizeOwners(wv.String()); g != w {
				t.Errorf("new state:\nfast path %s\nframework %s", g, w)
			}
			if string(got.Private) != string(want.Private) {
				t.Errorf("private: fast path %q, framework %q", got.Private, want.Private)
			}
			if gotPolicy != wantPolicy {
				t.Errorf("policy file:\nfast path %s\nframework %s", gotPolicy, wantPolicy)
			}
		})
	}
}

// planThenApply plans the change from prior to proposed, through the fast
// path or the framework, fails the test on any diagnostic of the plan,
// runs between, then applies the plan the same way.
func planThenApply(t *testing.T, f *GrantsFastPath, clients *conn.Clients, fast bool, prior, proposed *tfprotov6.DynamicValue, between func()) *tfprotov6.ApplyResourceChangeResponse {
	t.Helper()
	ctx := context.Background()
	plan := &tfprotov6.PlanResourceChangeRequest{TypeName: "qtail_grants", PriorState: prior, ProposedNewState: proposed, Config: proposed}
	var presp *tfprotov6.PlanResourceChangeResponse
	if fast {
		var ok bool
		if presp, ok = f.PlanResourceChange(ctx, clients, plan); !ok {
			t.Fatal("the fast path declined the plan")
		}
	} else {
		presp = frameworkPlan(t, clients, plan)
	}
	if len(presp.Diagnostics) > 0 {
		t.Fatalf("plan: %s", describeDiags(presp.Diagnostics))
	}
	between()
	apply := &tfprotov6.ApplyResourceChangeRequest{TypeName: "qtail_grants", PriorState: prior, PlannedState: presp.PlannedState, Config: proposed, PlannedPrivate: presp.PlannedPrivate}
	if fast {
		aresp, ok := f.ApplyResourceChange(ctx, clients, apply)
		if !ok {
			t.Fatal("the fast path declined the apply")
		}
		return aresp
	}
	return frameworkApply(t, clients, apply)
}
