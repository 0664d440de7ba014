package cluster

import (
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/planned"
)

// The operator's chart series is the one a qtail_operator of the plan
// pins, else the one of the operator's Helm service.
func TestOperatorSeries(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.manifests(w.env, "proxies", "manifests: []\n")
	if s := w.lookup().OperatorSeries(w.ctx); s.Version != "" || s.Known {
		t.Errorf("OperatorSeries without an operator = %+v, want none", s)
	}
	w.operator(w.other, "")
	s := w.lookup().OperatorSeries(w.ctx)
	if s.Version != "1.102.4" || !s.Known || s.Series.Series != "1.102" {
		t.Errorf("OperatorSeries of the operator's Helm service = %+v, want 1.102.4 of the series 1.102", s)
	}
	for version, known := range map[string]bool{"1.100.0": true, "2.0.0": false, "": false} {
		plan := planned.New()
		plan.PlanOperator(w.cluster, planned.Operator{ChartVersion: version})
		s := w.lookup().UsePlan(plan).OperatorSeries(w.ctx)
		if s.Version != version || s.Known != known || known && s.Series.Series != "1.100" {
			t.Errorf("OperatorSeries with the plan's version %q = %+v, want it, known %v", version, s, known)
		}
	}
	plan := planned.New()
	plan.PlanOperator(w.otherCluster, planned.Operator{ChartVersion: "1.100.0"})
	if s := w.lookup().UsePlan(plan).OperatorSeries(w.ctx); s.Version != "1.102.4" {
		t.Errorf("OperatorSeries with an operator planned on another cluster = %+v, want the Helm service's", s)
	}
}
