package policyfragment

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/qtail/terraform-provider-qtail/internal/fragment"
	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// legacyGrantPolicy has a grant marked as qtail marked grants before
// markers named their owner.
const legacyGrantPolicy = `{
	"groups": {"group:platform-ops": ["alice@example.com"]},
	"grants": [
		// qtail:grant:ops-to-phone
		{"src": ["group:platform-ops"], "dst": ["100.64.0.3"], "ip": ["tcp:443"]}, // kept
	],
}
`

// A state written before grants had an owner, whole but without one:
// Read draws the owner, keeps it in the state and writes it in the
// marker, in place; the marker attribute stays as it was, and ModifyPlan
// then plans nothing to change.
func TestFragmentRead_stateFromBeforeOwners(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, w := sandboxData(t, []byte(legacyGrantPolicy))
	r, ok := NewGrantResource().(*grantResource)
	if !ok {
		t.Fatal("NewGrantResource is not a *grantResource")
	}
	r.Clients = d
	var sch resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sch)
	typ := sch.Schema.Type().TerraformType(ctx)

	old := newGrantModel("ops-to-phone", []string{"group:platform-ops"}, []string{"100.64.0.3"}, []string{"tcp:443"})
	old.set(fragment.IDAttr, "ops-to-phone")
	old.set(fragment.MarkerAttr, "qtail:grant:ops-to-phone")
	old.set(fragment.OwnerAttr, nil)
	state := tfsdk.State{Schema: sch.Schema, Raw: tftypes.NewValue(typ, nil)}
	if diags := old.save(ctx, &state); diags.HasError() {
		t.Fatal(diags)
	}
	resp := resource.ReadResponse{State: state}
	r.Read(ctx, resource.ReadRequest{State: state}, &resp)
	if resp.Diagnostics.HasError() || len(resp.Diagnostics.Warnings()) > 0 {
		t.Fatalf("Read: %v", resp.Diagnostics)
	}
	got, diags := readModel(ctx, fragment.Grant, resp.State)
	if diags.HasError() {
		t.Fatal(diags)
	}
	owner := got.str(fragment.OwnerAttr)
	if len(owner) != 10 || got.str(fragment.MarkerAttr) != "qtail:grant:ops-to-phone" || got.str(fragment.IDAttr) != "ops-to-phone" {
		t.Fatalf("after Read: owner %q, marker %q, id %q", owner, got.str(fragment.MarkerAttr), got.str(fragment.IDAttr))
	}
	body, _ := w.Tailnet.Policy()
	if want := strings.Replace(legacyGrantPolicy, "// qtail:grant:ops-to-phone\n", "// qtail:grant:ops-to-phone#"+owner+"\n", 1); string(body) != want {
		t.Fatalf("the owner is not written in place:\n%s\nwant:\n%s", body, want)
	}

	// The plan of the same configuration, the owner kept from the state
	// as the framework plans it: nothing to change.
	plan := tfsdk.Plan{Schema: sch.Schema, Raw: resp.State.Raw}
	mresp := resource.ModifyPlanResponse{Plan: plan}
	r.ModifyPlan(ctx, resource.ModifyPlanRequest{Plan: plan, State: resp.State}, &mresp)
	if mresp.Diagnostics.HasError() {
		t.Fatalf("ModifyPlan: %v", mresp.Diagnostics)
	}
	if !mresp.Plan.Raw.Equal(resp.State.Raw) {
		t.Errorf("the plan changes the state:\n%v\nstate:\n%v", mresp.Plan.Raw, resp.State.Raw)
	}
	if after, _ := w.Tailnet.Policy(); string(after) != string(body) {
		t.Errorf("the second refresh and plan wrote the policy file again:\n%s", after)
	}
}

// The refusal of an entry marked for another owner names the owner, with
// the marker as it stands in the file, and gives the import block.
func TestOwnedElsewhereMessage_namesTheOwner(t *testing.T) {
	t.Parallel()
	key := policyfile.Key{Kind: policyfile.KindGrant, Name: "web"}
	msg := ownedElsewhereMessage(&policy.OwnershipConflict{Key: key, Existing: json.RawMessage(`{"src":["*"]}`), Owner: "p7mv2rt4ha"})
	for _, want := range []string{"marked // qtail:grant:web#p7mv2rt4ha", `owner attribute is "p7mv2rt4ha"`, "to = qtail_grant.NAME", `id = "web"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("a conflict with another owner: %q lacks %q", msg, want)
		}
	}
	msg = ownedElsewhereMessage(&policy.OwnershipConflict{Key: key, Existing: json.RawMessage(`{"src":["*"]}`)})
	if !strings.Contains(msg, "marked // qtail:grant:web,") || !strings.Contains(msg, "names no owner") {
		t.Errorf("a conflict with a marker without owner: %q", msg)
	}
}
