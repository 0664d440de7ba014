package policyfragment

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// fastPathGrants are grants of every shape the fast path reads: null,
// empty and full lists, and an app.
var fastPathGrants = map[string]json.RawMessage{
	"ops-to-phone": json.RawMessage(`{"dst":["100.64.0.3"],"ip":["tcp:443"],"src":["group:platform-ops"]}`),
	"ops-app": json.RawMessage(`{"app":{"example.com/cap/billing":[{"role":"reader"}]},"dst":["100.64.0.1"],"ip":[],` +
		`"src":["group:platform-ops"],"srcPosture":["posture:latest"],"via":["tag:k8s"]}`),
}

// fastPathOwner is the owner of the grants of the fast path's states.
const fastPathOwner = "p7mv2rt4ha"

// grantsStateValue is the state the framework writes for the grants, as a
// protocol value.
func grantsStateValue(t *testing.T, grants map[string]json.RawMessage, unmarked []string) *tfprotov6.DynamicValue {
	t.Helper()
	ctx := context.Background()
	var sch resource.SchemaResponse
	(&grantsResource{}).Schema(ctx, resource.SchemaRequest{}, &sch)
	m, diags := grantMap(grants)
	if diags.HasError() {
		t.Fatal(diags)
	}
	state := tfsdk.State{Schema: sch.Schema, Raw: tftypes.NewValue(sch.Schema.Type().TerraformType(ctx), nil)}
	owners := map[string]string{}
	for name := range grants {
		owners[name] = fastPathOwner
	}
	names := slices.Collect(maps.Keys(grants))
	model := grantsModel{ID: types.StringValue(grantsID(names)), Grants: m, Owners: ownersMap(names, owners, types.StringNull()), Unmarked: tfx.StringList(unmarked)}
	if diags := state.Set(ctx, &model); diags.HasError() {
		t.Fatal(diags)
	}
	dv, err := tfprotov6.NewDynamicValue(sch.Schema.Type().TerraformType(ctx), state.Raw)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// The fast path reads a state into the entries the framework path makes.
func TestGrantsFastPath_decodesAsTheFrameworkDoes(t *testing.T) {
	f := NewGrantsFastPath(context.Background())
	got, ok := f.decode(grantsStateValue(t, fastPathGrants, []string{}))
	if !ok || !got.settled() {
		t.Fatalf("decode: ok=%v settled=%v", ok, got.settled())
	}
	m, _ := grantMap(fastPathGrants)
	want, _ := grantEntries(m)
	for name, entry := range want {
		if string(got.grants[name]) != string(entry) {
			t.Errorf("%s: fast path %s, framework %s", name, got.grants[name], entry)
		}
	}
	if len(got.grants) != len(want) {
		t.Errorf("%d grants, want %d", len(got.grants), len(want))
	}
	if unsettled, _ := f.decode(grantsStateValue(t, fastPathGrants, []string{"ops-app"})); unsettled.settled() {
		t.Error("a state with an unmarked grant is taken as settled")
	}
}

func TestGrantsFastPath_answersOnlyNoOps(t *testing.T) {
	ctx := context.Background()
	var body strings.Builder
	body.WriteString(grantsPolicyHead +
		"\n\"grants\": [\n")
	for _, name := range slices.Sorted(maps.Keys(fastPathGrants)) {
		body.WriteString("// qtail:grant:" + name + "#" + fastPathOwner + "\n" + string(fastPathGrants[name]) + ",\n")
	}
	body.WriteString("]}\n")
	clients, world := sandboxData(t, []byte(body.String()))
	f := NewGrantsFastPath(ctx)
	state := grantsStateValue(t, fastPathGrants, []string{})

	// Read: the grants are as the state says.
	read := &tfprotov6.ReadResourceRequest{TypeName: "qtail_grants", CurrentState: state, Private: []byte("private")}
	resp, ok := f.ReadResource(ctx, clients, read)
	if !ok || resp.NewState != state || string(resp.Private) != "private" {
		t.Fatalf("read of grants as in the state: handled=%v", ok)
	}
	// Another type, or a state with an unmarked grant, goes to the framework.
	if _, ok := f.ReadResource(ctx, clients, &tfprotov6.ReadResourceRequest{TypeName: "qtail_grant", CurrentState: state}); ok {
		t.Error("the fast path read a qtail_grant")
	}
	unmarked := grantsStateValue(t, fastPathGrants, []string{"ops-app"})
	if _, ok := f.ReadResource(ctx, clients, &tfprotov6.ReadResourceRequest{TypeName: "qtail_grants", CurrentState: unmarked}); ok {
		t.Error("the fast path read a state with an unmarked grant")
	}
	// Nor does a grant whose marker names another owner.
	store, _ := clients.Policy()
	if err := world.Tailnet.SetPolicyDirect([]byte(strings.Replace(body.String(), "#"+fastPathOwner, "#k3x9q2mfa7", 1))); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.ReadResource(ctx, clients, read); ok {
		t.Error("the fast path read a grant marked for another owner")
	}
	if err := world.Tailnet.SetPolicyDirect([]byte(body.String())); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Refresh(ctx); err != nil {
		t.Fatal(err)
	}

	// Plan: the configuration equals the state; the grants are claimed.
	plan := &tfprotov6.PlanResourceChangeRequest{TypeName: "qtail_grants", PriorState: state, ProposedNewState: state, PriorPrivate: []byte("p")}
	presp, ok := f.PlanResourceChange(ctx, clients, plan)
	if !ok || presp.PlannedState != state || len(presp.Diagnostics) != 0 || string(presp.PlannedPrivate) != "p" {
		t.Fatalf("plan of no change: handled=%v diags=%v", ok, presp)
	}
	if _, taken := clients.Planner().Claim(policyfile.Key{Kind: policyfile.KindGrant, Name: "ops-app"}, policy.Claim{Who: "another"}); !taken {
		t.Error("the fast path did not claim the grants of the plan")
	}
	// A second resource with the same grants: the duplicate is reported on
	// the grant.
	presp, ok = f.PlanResourceChange(ctx, clients, plan)
	if !ok || len(presp.Diagnostics) != 2 || presp.Diagnostics[0].Summary != "Two Resources Claim One Policy Entry" {
		t.Errorf("plan of a duplicate: handled=%v diags=%v", ok, presp.Diagnostics)
	}
	// A change is planned too (see
	// TestGrantsFastPath_plansChangesAsTheFrameworkDoes), but not one of
	// another type.
	if _, ok := f.PlanResourceChange(ctx, clients, &tfprotov6.PlanResourceChangeRequest{TypeName: "qtail_grant", PriorState: state, ProposedNewState: state}); ok {
		t.Error("the fast path planned a qtail_grant")
	}

	// Read after a hand edit goes to the framework, which reports it.
	if err := world.Tailnet.SetPolicyDirect([]byte(strings.Replace(body.String(), `"ip":["tcp:443"]`, `"ip":["tcp:8443"]`, 1))); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.ReadResource(ctx, clients, read); ok {
		t.Error("the fast path read grants that a person changed")
	}

	// Upgrade of a current state: the same value.
	up, ok := f.UpgradeResourceState(ctx, nil, &tfprotov6.UpgradeResourceStateRequest{TypeName: "qtail_grants", Version: 0,
		RawState: &tfprotov6.RawState{JSON: []byte(`{"id":"a","grants":{"a":{"src":["*"],"dst":["*"],"ip":["*"],"app":null,"via":null,"src_posture":null}},"unmarked":[],"gone":1}`)}})
	if !ok {
		t.Fatal("upgrade of a current state not handled")
	}
	got, ok := f.decode(up.UpgradedState)
	if !ok || got.id != "a" || string(got.grants["a"]) != `{"dst":["*"],"ip":["*"],"src":["*"]}` {
		t.Errorf("upgraded state: %+v", got)
	}
}
