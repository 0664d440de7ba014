package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/planned"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// The objects that need a running operator: the operator puts its
// finalizer on every Service it exposes, every Connector, ProxyGroup and
// egress Service, and only a running operator removes their devices and
// then the finalizer. Uninstalling the operator first leaves them
// Terminating, their devices on the tailnet, and its CRDs wedged.

// Dependent is an object on a cluster that needs the cluster's operator.
type Dependent struct {
	// ID is the Qovery object that holds it: the annotations group of an
	// exposure, the Helm service of a connector, ProxyGroup or egress
	// Service.
	ID string
	// What names it as a Terraform configuration knows it: "the exposure
	// of application billing-api (ID) at the hostname billing-api".
	What string
}

// Dependents lists the objects that need the operator of the cluster of
// env, in every environment of the organization on that cluster: the
// exposures (an attached annotations group that sets
// tailscale.com/expose), and the connectors, ProxyGroups and egress
// Services (a Helm service with qtail's manifests values file).
func Dependents(ctx context.Context, q *qovery.Client, env *qovery.Environment) ([]Dependent, error) {
	projects, err := q.ListProjects(ctx, env.Organization.ID)
	if err != nil {
		return nil, err
	}
	var out []Dependent
	for _, p := range projects {
		envs, err := q.ListEnvironments(ctx, p.ID)
		if err != nil {
			return nil, err
		}
		for _, e := range envs {
			if e.ClusterID != env.ClusterID {
				continue
			}
			deps, err := environmentDependents(ctx, q, e.ID)
			if err != nil {
				return nil, err
			}
			out = append(out, deps...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].What < out[j].What })
	return out, nil
}

func environmentDependents(ctx context.Context, q *qovery.Client, envID string) ([]Dependent, error) {
	var out []Dependent
	exposures := func(kind string, w *qovery.Workload) {
		for _, g := range w.AnnotationsGroups {
			hostname, exposed := "", false
			for _, a := range g.Annotations {
				switch a.Key {
				case manifest.AnnotationExpose:
					exposed = a.Value == "true"
				case manifest.AnnotationHostname:
					hostname = a.Value
				}
			}
			if exposed {
				out = append(out, Dependent{ID: g.ID,
					What: fmt.Sprintf("the exposure of %s %s (%s) at the hostname %q (annotations group %s)", kind, w.Name, w.ID, hostname, g.ID)})
			}
		}
	}
	apps, err := q.ListApplications(ctx, envID)
	if err != nil {
		return nil, err
	}
	for i := range apps {
		exposures("application", &apps[i].Workload)
	}
	containers, err := q.ListContainers(ctx, envID)
	if err != nil {
		return nil, err
	}
	for i := range containers {
		exposures("container", &containers[i].Workload)
	}
	helms, err := q.ListHelms(ctx, envID)
	if err != nil {
		return nil, err
	}
	for i := range helms {
		h := &helms[i]
		file, ok := ManifestsFile(h)
		if !ok || isOperator(h) {
			continue
		}
		var objs []string
		for _, kind := range []string{manifest.KindConnector, manifest.KindProxyGroup, manifest.KindService} {
			for _, n := range manifest.Names(file, kind) {
				objs = append(objs, kind+" "+n)
			}
		}
		if len(objs) > 0 {
			out = append(out, Dependent{ID: h.ID, What: fmt.Sprintf("the %s of the Helm service %s (%s)", strings.Join(objs, ", "), h.Name, h.ID)})
		}
	}
	return out, nil
}

// DependentsGrace is how long, at least, an operator's Delete waits for the
// objects that need the operator to go before it refuses them: Terraform
// may not have started the Deletes that run in parallel with it yet (its
// parallelism holds them back).
const DependentsGrace = 3 * time.Second

// AwaitDependents waits, before the operator of the cluster of env is
// uninstalled, for the objects that need it to go. Terraform destroys
// first what names the operator (operator_id), and in parallel what does
// not: an object whose Delete is in progress in this provider instance
// (w) is waited for, as long as ctx allows; the others are given grace
// after the last change, then returned: the operator's Delete refuses
// them. poll is the wait between two listings.
func AwaitDependents(ctx context.Context, q *qovery.Client, env *qovery.Environment, w *planned.World, poll, grace time.Duration) ([]Dependent, error) {
	var last []Dependent
	changed := time.Now()
	for {
		deps, err := Dependents(ctx, q, env)
		if err != nil {
			return nil, err
		}
		if len(deps) == 0 {
			return nil, nil
		}
		if !slices.Equal(deps, last) {
			last, changed = deps, time.Now()
		}
		inProgress := slices.ContainsFunc(deps, func(d Dependent) bool { return w.Deleting(d.ID) })
		if !inProgress && time.Since(changed) >= grace {
			return deps, nil
		}
		select {
		case <-ctx.Done():
			return deps, nil
		case <-time.After(poll):
		}
	}
}

// ErrNoOperator is returned by AwaitOperator when no operator came.
var ErrNoOperator = errors.New("no Tailscale operator on the cluster")

// AwaitOperator waits, at apply time, for an operator to run on the
// cluster of env, for an object that needs one and does not name it
// (operator_id unset). Terraform orders nothing between them, so the
// operator of the same configuration may be created in parallel: while a
// qtail_operator of this provider instance (w) is planned on the cluster,
// the wait lasts until its Helm service is deployed or ctx ends;
// otherwise an operator has grace to appear before ErrNoOperator.
func AwaitOperator(ctx context.Context, q *qovery.Client, env *qovery.Environment, w *planned.World, poll, grace time.Duration) (Operator, error) {
	start := time.Now()
	for {
		op, err := FindOperator(ctx, q, env)
		if err != nil {
			return op, err
		}
		planned := w.OperatorPlannedOn(env.ClusterID)
		if op.HelmID != "" && !planned {
			return op, nil
		}
		if op.HelmID != "" {
			st, err := q.GetHelmStatus(ctx, op.HelmID)
			if err == nil && st.State == qovery.StateDeployed {
				return op, nil
			}
			if err == nil && st.State == qovery.StateDeploymentError {
				return op, fmt.Errorf("the deployment of the operator's Helm service %s (%s) failed", op.Name, op.HelmID)
			}
		} else if !planned && time.Since(start) >= grace {
			return op, ErrNoOperator
		}
		select {
		case <-ctx.Done():
			if op.HelmID == "" {
				return op, ErrNoOperator
			}
			return op, fmt.Errorf("the operator's Helm service %s (%s) was not deployed in time: %w", op.Name, op.HelmID, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// OperatorNamed checks that the Helm service id is the Tailscale operator
// of the cluster of env, among the cluster's Helm services helms. It
// returns what is wrong, or "".
func OperatorNamed(helms []qovery.Helm, env *qovery.Environment, id string) string {
	for i := range helms {
		h := &helms[i]
		if h.ID != id {
			continue
		}
		if !isOperator(h) {
			return fmt.Sprintf("the Helm service %s (%s) does not install the %s chart", h.Name, h.ID, OperatorChart)
		}
		return ""
	}
	return fmt.Sprintf("no Helm service %s runs on cluster %s, where environment %s runs", id, env.ClusterID, env.ID)
}
