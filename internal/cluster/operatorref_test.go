package cluster

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/planned"
)

func TestGrace(t *testing.T) {
	t.Parallel()
	for poll, want := range map[time.Duration]time.Duration{
		0:                      DependentsGrace,
		100 * time.Millisecond: DependentsGrace,
		time.Second:            10 * time.Second,
		5 * time.Second:        50 * time.Second,
		7 * time.Second:        time.Minute,
	} {
		if got := Grace(poll); got != want {
			t.Errorf("Grace(%s) = %s, want %s", poll, got, want)
		}
	}
}

// checkRef runs Lookup.Check on the first cluster, and returns its answer,
// its diagnostics and how long it took.
func (w *world) checkRef(ctx context.Context, ref OperatorRef) (Presence, diag.Diagnostics, time.Duration) {
	var diags diag.Diagnostics
	start := time.Now()
	p := w.lookup().Check(ctx, ref, &diags)
	return p, diags, time.Since(start)
}

// An operator_id is checked against the Helm services of the cluster.
func TestCheckOperatorID(t *testing.T) {
	t.Parallel()
	at := path.Root("operator_id")
	t.Run("unknown", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		// A qtail_operator that the plan creates: Terraform planned it
		// first, nothing is read.
		w.Qovery.Faults().Add(faults.Rule{Route: "GET /organization/{organizationId}/project", Status: http.StatusInternalServerError})
		if p, d, _ := w.checkRef(w.ctx, OperatorRef{ID: types.StringUnknown(), World: planned.New()}); p != OperatorKnown || len(d) != 0 {
			t.Errorf("Check = %v, %v; want OperatorKnown and nothing said", p, d)
		}
	})
	t.Run("the operator", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		id := w.operator(w.other, "")
		if p, d, _ := w.checkRef(w.ctx, OperatorRef{ID: types.StringValue(id), World: planned.New()}); p != OperatorKnown || len(d) != 0 {
			t.Errorf("Check = %v, %v; want OperatorKnown and nothing said", p, d)
		}
	})
	t.Run("not the operator", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operator(w.env, "")
		id := w.manifests(w.env, "proxies", "manifests: []\n")
		p, d, _ := w.checkRef(w.ctx, OperatorRef{ID: types.StringValue(id), World: planned.New()})
		if p != OperatorRefused || len(d) != 1 || !d.HasError() || d[0].Summary() != "Not the Operator of the Cluster" || !isOn(d[0], at) {
			t.Fatalf("Check = %v, %v; want OperatorRefused with an error on operator_id", p, d)
		}
		want := "operator_id must be the ID of the qtail_operator on cluster " + w.cluster + ", where environment " + w.env +
			" runs: the Helm service proxies (" + id + ") does not install the tailscale-operator chart. Set " +
			"operator_id = qtail_operator.NAME.id with the operator of that cluster."
		if d[0].Detail() != want {
			t.Errorf("detail %q, want %q", d[0].Detail(), want)
		}
	})
	t.Run("another cluster's operator", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		id := w.operator(w.otherEnv, "")
		p, d, _ := w.checkRef(w.ctx, OperatorRef{ID: types.StringValue(id), World: planned.New()})
		if p != OperatorRefused || len(d) != 1 || !strings.Contains(d[0].Detail(), "no Helm service "+id+" runs on cluster "+w.cluster) {
			t.Errorf("Check = %v, %v; want OperatorRefused: the operator is not on this cluster", p, d)
		}
	})
	t.Run("list fails", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		id := w.operator(w.env, "")
		w.Qovery.Faults().Add(faults.Rule{Route: "GET /organization/{organizationId}/project", Status: http.StatusInternalServerError})
		p, d, _ := w.checkRef(w.ctx, OperatorRef{ID: types.StringValue(id), World: planned.New()})
		if p != OperatorKnown || len(d) != 1 || d.HasError() || d[0].Summary() != "Operator Not Checked" || !isOn(d[0], at) ||
			!strings.HasPrefix(d[0].Detail(), "qtail could not list the Helm services of cluster "+w.cluster+": ") ||
			!strings.HasSuffix(d[0].Detail(), ". The apply reports any problem.") {
			t.Errorf("Check = %v, %v; want OperatorKnown with a warning on operator_id", p, d)
		}
	})
}

// Without operator_id, an operator on the cluster or planned there is
// known; otherwise the check waits Grace for one that Terraform plans in
// parallel.
func TestCheckOperatorPresence(t *testing.T) {
	t.Parallel()
	ref := func(w *planned.World) OperatorRef {
		return OperatorRef{ID: types.StringNull(), World: w, Poll: awaitPoll, Grace: awaitGrace}
	}
	t.Run("running", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			w.operator(w.other, "")
			if p, d, took := w.checkRef(w.ctx, ref(planned.New())); p != OperatorKnown || len(d) != 0 || took != 0 {
				t.Errorf("Check = %v, %v after %s; want OperatorKnown at once", p, d, took)
			}
		})
	})
	t.Run("planned", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			plan := planned.New()
			plan.PlanOperator(w.cluster, planned.Operator{})
			if p, d, took := w.checkRef(w.ctx, ref(plan)); p != OperatorKnown || len(d) != 0 || took != 0 {
				t.Errorf("Check = %v, %v after %s; want OperatorKnown at once", p, d, took)
			}
		})
	})
	t.Run("planned on another cluster", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			plan := planned.New()
			plan.PlanOperator(w.otherCluster, planned.Operator{})
			if p, d, took := w.checkRef(w.ctx, ref(plan)); p != OperatorDeferred || len(d) != 0 || took != awaitGrace {
				t.Errorf("Check = %v, %v after %s; want OperatorDeferred after the grace", p, d, took)
			}
		})
	})
	t.Run("planned in parallel", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			plan := planned.New()
			go func() {
				time.Sleep(awaitGrace - awaitPoll/2)
				plan.PlanOperator(w.cluster, planned.Operator{})
			}()
			if p, d, took := w.checkRef(w.ctx, ref(plan)); p != OperatorKnown || len(d) != 0 || took != awaitGrace {
				t.Errorf("Check = %v, %v after %s; want OperatorKnown at the poll after the plan", p, d, took)
			}
		})
	})
	t.Run("deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			ctx, cancel := context.WithTimeout(w.ctx, awaitPoll/2)
			defer cancel()
			if p, d, took := w.checkRef(ctx, ref(planned.New())); p != OperatorDeferred || len(d) != 0 || took != awaitPoll/2 {
				t.Errorf("Check = %v, %v after %s; want OperatorDeferred at the deadline", p, d, took)
			}
		})
	})
	t.Run("list fails", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			env := w.environment(w.env)
			w.Qovery.Faults().Add(faults.Rule{Route: "GET /organization/{organizationId}/project", Status: http.StatusInternalServerError})
			var d diag.Diagnostics
			start := time.Now()
			if p := NewLookup(w.q, env).Check(w.ctx, ref(planned.New()), &d); p != OperatorKnown || len(d) != 0 || time.Since(start) != 0 {
				t.Errorf("Check = %v, %v; want OperatorKnown at once: the apply looks again", p, d)
			}
		})
	})
}
