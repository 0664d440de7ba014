package policyfragment

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/internal/fragment"
	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// sandboxData returns the clients of a provider instance configured
// against a fresh sandbox world whose tailnet starts with startPolicy (nil:
// the sandbox default).
func sandboxData(t *testing.T, startPolicy []byte) (*conn.Clients, *sandbox.World) {
	t.Helper()
	w, err := sandbox.New(sandbox.Options{InitialPolicy: startPolicy})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w.Handler())
	t.Cleanup(srv.Close)
	return configuredClients(t, w.Env(srv.URL)), w
}

// configuredClients are clients configured for the tailnet of a sandbox
// whose environment is env.
func configuredClients(t *testing.T, env map[string]string) *conn.Clients {
	t.Helper()
	c := conn.New("test", conn.Options{})
	val := func(attr, name string) conn.Setting { return conn.Setting{Attr: attr, Env: name, Value: env[name]} }
	c.ConfigureTailnet(conn.TailnetSettings{
		APIKey:            val("tailscale_api_key", "TAILSCALE_API_KEY"),
		OAuthClientID:     val("tailscale_oauth_client_id", "TAILSCALE_OAUTH_CLIENT_ID"),
		OAuthClientSecret: val("tailscale_oauth_client_secret", "TAILSCALE_OAUTH_CLIENT_SECRET"),
		Tailnet:           val("tailscale_tailnet", "TAILSCALE_TAILNET"),
		BaseURL:           val("tailscale_base_url", "TAILSCALE_BASE_URL"),
	})
	if _, diags := c.Tailnet(); diags.HasError() {
		t.Fatalf("tailnet not configured: %v", diags)
	}
	return c
}

// planGrant runs the ModifyPlan of qtail_grant for the creation of m.
func planGrant(t *testing.T, d *conn.Clients, m *model) (*model, diag.Diagnostics) {
	t.Helper()
	ctx := context.Background()
	r, ok := NewGrantResource().(*grantResource)
	if !ok {
		t.Fatal("NewGrantResource is not a *grantResource")
	}
	r.Clients = d
	var sch resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sch)
	typ := sch.Schema.Type().TerraformType(ctx)
	plan := tfsdk.Plan{Schema: sch.Schema, Raw: tftypes.NewValue(typ, nil)}
	if diags := m.save(ctx, &plan); diags.HasError() {
		t.Fatal(diags)
	}
	req := resource.ModifyPlanRequest{
		Plan:  plan,
		State: tfsdk.State{Schema: sch.Schema, Raw: tftypes.NewValue(typ, nil)},
	}
	resp := resource.ModifyPlanResponse{Plan: plan}
	r.ModifyPlan(ctx, req, &resp)
	out, diags := readModel(ctx, fragment.Grant, resp.Plan)
	if diags.HasError() {
		t.Fatal(diags)
	}
	return out, resp.Diagnostics
}

func newGrantModel(name string, src, dst, ip []string) *model {
	m := newModel(fragment.Grant)
	for attr, v := range map[string]any{"id": fragment.Unknown, "name": name, "src": src, "dst": dst, "ip": ip, "marker": fragment.Unknown} {
		m.set(attr, v)
	}
	return m
}

func warnings(diags diag.Diagnostics) []string {
	var out []string
	for _, d := range diags.Warnings() {
		out = append(out, d.Summary()+": "+d.Detail())
	}
	return out
}

func TestFragmentModifyPlan_plansIDAndMarkerAndWarnsWhileAllowAllExists(t *testing.T) {
	t.Parallel()
	d, _ := sandboxData(t, nil)
	out, diags := planGrant(t, d, newGrantModel("ops-to-phone", []string{"group:platform-ops"}, []string{"100.64.0.3"}, []string{"tcp:443"}))
	if diags.HasError() {
		t.Fatalf("unexpected errors: %v", diags)
	}
	if out.str("id") != "ops-to-phone" || out.str("marker") != "qtail:grant:ops-to-phone" {
		t.Errorf("planned id %s, marker %s", out.attrs["id"], out.attrs["marker"])
	}
	w := warnings(diags)
	if len(w) != 1 || !strings.Contains(w[0], "lets every device reach every other device, including every proxy") ||
		!strings.Contains(w[0], "findings.allow_all_present") {
		t.Errorf("want one allow-all warning that explains the rule and its removal, got %q", w)
	}
}

// One plan warns about the allow-all rule once, not once per fragment, and
// not at all once it plans the rule's removal.
func TestFragmentModifyPlan_warnsAboutAllowAllOncePerPlan(t *testing.T) {
	t.Parallel()
	d, _ := sandboxData(t, nil)
	_, first := planGrant(t, d, newGrantModel("ops-to-phone", []string{"group:platform-ops"}, []string{"100.64.0.3"}, []string{"tcp:443"}))
	_, second := planGrant(t, d, newGrantModel("ops-to-alice", []string{"group:platform-ops"}, []string{"100.64.0.1"}, []string{"tcp:22"}))
	if first.HasError() || second.HasError() {
		t.Fatalf("unexpected errors: %v %v", first, second)
	}
	if len(first.Warnings()) != 1 || len(second.Warnings()) != 0 {
		t.Errorf("want one allow-all warning for the plan, got %q then %q", warnings(first), warnings(second))
	}
	if w := warnings(first); len(w) == 1 && !strings.Contains(w[0], "qtail_allow_all_removal") {
		t.Errorf("the warning does not name the resource that removes the rule: %q", w[0])
	}

	d, _ = sandboxData(t, nil)
	d.Planner().Record(policyfile.Mutation{Key: policyfile.AllowAllKey(), Delete: true})
	if _, diags := planGrant(t, d, newGrantModel("ops-to-phone", []string{"group:platform-ops"}, []string{"100.64.0.3"}, []string{"tcp:443"})); len(diags.Warnings()) != 0 {
		t.Errorf("the plan removes the rule, yet warns: %q", warnings(diags))
	}
}

func TestFragmentModifyPlan_noWarningOnceAllowAllIsGone(t *testing.T) {
	t.Parallel()
	start := strings.Replace(sandbox.DefaultPolicy, `{"src": ["*"], "dst": ["*"], "ip": ["*"]},`,
		`{"src": ["group:platform-ops"], "dst": ["*"], "ip": ["*"]},`, 1)
	d, _ := sandboxData(t, []byte(start))
	_, diags := planGrant(t, d, newGrantModel("ops-to-phone", []string{"group:platform-ops"}, []string{"100.64.0.3"}, []string{"tcp:443"}))
	if diags.HasError() || len(diags.Warnings()) != 0 {
		t.Errorf("want no diagnostics, got %v", diags)
	}
}

func TestFragmentModifyPlan_rejectionCarriesTheServerMessage(t *testing.T) {
	t.Parallel()
	d, w := sandboxData(t, nil)
	_, diags := planGrant(t, d, newGrantModel("g", []string{"tag:nope"}, []string{"100.64.0.3"}, []string{"tcp:443"}))
	if !diags.HasError() {
		t.Fatal("want an error")
	}
	e := diags.Errors()[0]
	if e.Summary() != "Tailscale Rejects the Policy Change" || !strings.Contains(e.Detail(), `src=tag not found: "tag:nope"`) {
		t.Errorf("got %s: %s", e.Summary(), e.Detail())
	}
	if n := w.Faults.Count("POST /tailscale/api/v2/tailnet/{tailnet}/acl"); n != 0 {
		t.Errorf("plan wrote the policy %d times", n)
	}
}

// The plan names whose the entry is that a new fragment would take over.
func TestOwnedElsewhereMessage(t *testing.T) {
	t.Parallel()
	key := policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:db"}
	msg := ownedElsewhereMessage(&policy.OwnershipConflict{Key: key, Existing: json.RawMessage(`["tag:a"]`)})
	for _, want := range []string{"marked // qtail:tag_owner:tag:db", `["tag:a"]`, "terraform import qtail_tag_owner.NAME tag:db"} {
		if !strings.Contains(msg, want) {
			t.Errorf("a conflict with another configuration: %q lacks %q", msg, want)
		}
	}
}

func TestGrantAppJSONSemanticEquality(t *testing.T) {
	t.Parallel()
	a := jsonValue{StringValue: types.StringValue(`{"example.com/cap/x": [ {"b": 1, "a": [true]} ]}`)}
	b := jsonValue{StringValue: types.StringValue(`{"example.com/cap/x":[{"a":[true],"b":1}]}`)}
	c := jsonValue{StringValue: types.StringValue(`{"example.com/cap/x":[{"a":[false],"b":1}]}`)}
	if eq, diags := a.StringSemanticEquals(context.Background(), b); !eq || diags.HasError() {
		t.Errorf("formatting and member order made a difference: %v %v", eq, diags)
	}
	if eq, _ := a.StringSemanticEquals(context.Background(), c); eq {
		t.Error("different values compared equal")
	}
}
