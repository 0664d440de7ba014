package cluster

import (
	"context"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/planned"
)

// OperatorSeries is the chart series of the operator of a cluster, as far
// as qtail can tell it at plan time.
type OperatorSeries struct {
	// Version is the operator chart's version: the one a qtail_operator
	// of this plan pins, else the one of the operator's Helm service. It
	// is empty when no operator is known, or its version is not known yet.
	Version string
	// Series is Version's entry of the version table; Known is false when
	// the version is empty or outside the table.
	Series manifest.OperatorChartSeries
	Known  bool
}

// OperatorSeries returns the chart series of the cluster's operator.
func (l *Lookup) OperatorSeries(ctx context.Context) OperatorSeries {
	var out OperatorSeries
	inPlan := false
	if l.plan != nil {
		var p planned.Operator
		p, inPlan = l.plan.PlannedOperator(l.Env.ClusterID)
		out.Version = p.ChartVersion
	}
	if !inPlan {
		helms, _ := l.Helms(ctx)
		for i := range helms {
			if h := &helms[i]; isOperator(h) {
				out.Version = h.Source.Repository.ChartVersion
				break
			}
		}
	}
	if out.Version != "" {
		out.Series, out.Known = manifest.LookupOperatorChart(out.Version)
	}
	return out
}
