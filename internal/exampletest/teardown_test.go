package exampletest

import (
	"slices"
	"testing"
)

// deviceIDs lists the IDs of the tailnet's devices, sorted.
func deviceIDs(w *world) []string {
	var ids []string
	for _, d := range w.Tailnet.Devices() {
		ids = append(ids, d.ID+" "+d.Hostname)
	}
	slices.Sort(ids)
	return ids
}

// checkTornDown fails the test unless the destroy left the tailnet with
// the devices it had before (before) and the cluster without an object
// stuck Terminating or a proxy that no operator cleaned up.
func checkTornDown(t *testing.T, w *world, before []string) {
	t.Helper()
	if after := deviceIDs(w); !slices.Equal(after, before) {
		t.Errorf("after destroy the tailnet has the devices %q, before apply it had %q", after, before)
	}
	if stuck := w.Cluster.Stuck(); len(stuck) != 0 {
		t.Errorf("after destroy these objects are stuck on the cluster: %q", stuck)
	}
	if left := w.Cluster.Leftovers(); len(left) != 0 {
		t.Errorf("after destroy the cluster still runs %q", left)
	}
}

// The quickstart and the home lab apply, plan empty and destroy, leaving
// no device and no stuck object: each names its operator (operator_id),
// so Terraform destroys the operator last.
func TestExamples_destroyLeavesNothing(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"quickstart", "homelab"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "")
			ws := newWorkspace(t, w)
			seed := w.Seed()
			region := seed.Regions["us-east-1"]
			vars := []string{
				"TF_VAR_organization_id=" + seed.OrganizationID,
				"TF_VAR_environment_id=" + region.EnvironmentID,
			}
			if dir == "quickstart" {
				vars = append(vars, "TF_VAR_application_id="+region.Applications["billing-api"], "TF_VAR_web_application_id="+region.Applications["web"])
			}
			r := ws.root(dir, vars...)
			before := deviceIDs(w)
			r.apply()
			if after := deviceIDs(w); len(after) <= len(before) {
				t.Fatalf("the apply brought up no device: %q", after)
			}
			r.emptyPlan()
			r.destroy()
			checkTornDown(t, w, before)
		})
	}
}
