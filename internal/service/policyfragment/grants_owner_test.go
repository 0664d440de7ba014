package policyfragment

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Terraform plans a resource again in the process that applies it. The
// grants that qtail_grants creates there get their owners when that plan
// is checked, so the apply writes exactly the policy file that the check
// validated: the same markers, and the document the check made.
func TestGrants_applyWritesThePolicyThePlanValidated(t *testing.T) {
	ctx := context.Background()
	f := NewGrantsFastPath(ctx)
	policy := grantsPolicyHead + "\n\"grants\": [\n]}\n"
	for _, fast := range []bool{false, true} {
		t.Run(map[bool]string{false: "framework", true: "fast path"}[fast], func(t *testing.T) {
			clients, world := sandboxData(t, []byte(policy))
			null, err := tfprotov6.NewDynamicValue(f.typ, tftypes.NewValue(f.typ, nil))
			if err != nil {
				t.Fatal(err)
			}
			var planned []byte
			aresp := planThenApply(t, f, clients, fast, &null, proposedValue(t, f, fastPathGrants, nil), func() {
				if planned, err = plannerOf(clients).PlannedPolicy(ctx); err != nil {
					t.Fatal(err)
				}
			})
			if len(aresp.Diagnostics) > 0 {
				t.Fatalf("apply: %s", describeDiags(aresp.Diagnostics))
			}
			written, _ := world.Tailnet.Policy()
			if string(written) != string(planned) {
				t.Fatalf("the apply wrote\n%s\nthe plan validated\n%s", written, planned)
			}
			// The state names the owners that the file's markers carry.
			st, err := aresp.NewState.Unmarshal(f.typ)
			if err != nil {
				t.Fatal(err)
			}
			owners := stateOwners(t, st)
			if len(owners) != len(fastPathGrants) {
				t.Fatalf("owners %v, want one per grant of %v", owners, slices.Sorted(maps.Keys(fastPathGrants)))
			}
			for grant, owner := range owners {
				if !strings.Contains(string(written), "// qtail:grant:"+grant+"#"+owner+"\n") {
					t.Errorf("the file has no marker of %s owned by %s", grant, owner)
				}
			}
		})
	}
}

// stateOwners returns the owners of a qtail_grants state, by grant.
func stateOwners(t *testing.T, st tftypes.Value) map[string]string {
	t.Helper()
	var attrs map[string]tftypes.Value
	if err := st.As(&attrs); err != nil {
		t.Fatal(err)
	}
	var raw map[string]tftypes.Value
	if err := attrs["owners"].As(&raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range raw {
		var s string
		if err := v.As(&s); err != nil {
			t.Fatal(err)
		}
		out[k] = s
	}
	return out
}
