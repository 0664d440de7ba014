package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/planned"
)

// Presence is what the plan knows of the operator of a cluster, for an
// object that needs one.
type Presence int

const (
	// OperatorKnown: an operator runs on the cluster, or a qtail_operator
	// of this plan is planned there (or named by operator_id).
	OperatorKnown Presence = iota
	// OperatorDeferred: none is known yet, and the object names none; the
	// operator of the configuration may be planned after it, so the check
	// waits for the apply.
	OperatorDeferred
	// OperatorRefused: operator_id names no operator of the cluster.
	OperatorRefused
)

// OperatorRef is the plan-time check of an object that needs the operator
// of the cluster of Lookup.Env.
type OperatorRef struct {
	// ID is the operator_id attribute.
	ID types.String
	// World is what the plan of this provider instance has planned.
	World *planned.World
	// Poll and Grace: when no operator is known, the check waits up to
	// Grace, reading the World every Poll, for a qtail_operator that
	// Terraform plans in parallel (nothing orders them).
	Poll, Grace time.Duration
}

// Grace is how long a check waits for an operator that Terraform plans or
// creates in parallel with an object that needs it, for a poll interval
// poll: at least DependentsGrace, at most a minute.
func Grace(poll time.Duration) time.Duration {
	return min(max(DependentsGrace, 10*poll), time.Minute)
}

// Check says whether the operator of the cluster is known. A known
// operator_id must be the Helm service of the cluster's operator; an
// unknown one is a qtail_operator that the plan creates, and Terraform has
// planned it first. Without operator_id, an operator found on the cluster
// or planned there by this plan is known; otherwise the check gives the
// operator of a configuration that Terraform plans in parallel Grace to
// show in the World.
func (l *Lookup) Check(ctx context.Context, ref OperatorRef, diags *diag.Diagnostics) Presence {
	env := l.Env
	switch {
	case ref.ID.IsUnknown():
		return OperatorKnown
	case !ref.ID.IsNull():
		helms, err := l.Helms(ctx)
		if err != nil {
			diags.AddAttributeWarning(path.Root("operator_id"), "Operator Not Checked",
				fmt.Sprintf("qtail could not list the Helm services of cluster %s: %v. The apply reports any problem.", env.ClusterID, err))
			return OperatorKnown
		}
		if problem := OperatorNamed(helms, env, ref.ID.ValueString()); problem != "" {
			diags.AddAttributeError(path.Root("operator_id"), "Not the Operator of the Cluster",
				fmt.Sprintf("operator_id must be the ID of the qtail_operator on cluster %s, where environment %s runs: %s. Set "+
					"operator_id = qtail_operator.NAME.id with the operator of that cluster.", env.ClusterID, env.ID, problem))
			return OperatorRefused
		}
		return OperatorKnown
	}
	start := time.Now()
	for {
		op, err := l.Operator(ctx)
		if err != nil || op.HelmID != "" || ref.World.OperatorPlannedOn(env.ClusterID) {
			return OperatorKnown
		}
		if time.Since(start) >= ref.Grace {
			return OperatorDeferred
		}
		select {
		case <-ctx.Done():
			return OperatorDeferred
		case <-time.After(ref.Poll):
		}
	}
}
