package cluster

import (
	"context"
	"fmt"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// OperatorChart is the chart of the Tailscale Kubernetes operator.
const OperatorChart = "tailscale-operator"

// The Tailscale Helm chart channels.
const (
	StableChartsURL   = "https://pkgs.tailscale.com/helmcharts"
	UnstableChartsURL = "https://pkgs.tailscale.com/unstable/helmcharts"
)

// Defaults of the operator chart, which the operator uses when the values
// file does not set the key.
const (
	DefaultHostname       = "tailscale-operator"
	DefaultOperatorTag    = "tag:k8s-operator"
	DefaultProxyTag       = "tag:k8s"
	DefaultAPIServerProxy = "false"
)

// Operator is the Tailscale operator of a cluster as qtail finds it.
type Operator struct {
	// HelmID and Name are empty when no operator was found.
	HelmID, Name string
	// Tags are the tags of the operator's own device.
	Tags []string
	// ProxyTags are the tags of the proxies it creates by default.
	ProxyTags []string
}

// Describe names the operator in a sentence, on the cluster of env.
func (o Operator) Describe(env *qovery.Environment) string {
	if o.HelmID == "" {
		return fmt.Sprintf("no operator Helm service found on cluster %s yet, so the default tag is assumed", env.ClusterID)
	}
	return fmt.Sprintf("the operator Helm service %s (%s) on cluster %s", o.Name, o.HelmID, env.ClusterID)
}

// Lookup lists the Helm services of an environment's cluster once, when a
// check first needs them, and finds the cluster's operator among them.
type Lookup struct {
	// Env is the environment whose cluster is looked at.
	Env  *qovery.Environment
	q    *qovery.Client
	done bool
	all  []qovery.Helm
	err  error
}

// NewLookup returns a lookup of the cluster of env.
func NewLookup(q *qovery.Client, env *qovery.Environment) *Lookup {
	return &Lookup{q: q, Env: env}
}

// Operator returns the operator of the cluster, or the chart's defaults
// when there is none (yet: it may be created by the same apply).
func (l *Lookup) Operator(ctx context.Context) (Operator, error) {
	helms, err := l.Helms(ctx)
	return operatorAmong(helms), err
}

// Helms lists the Helm services of every environment of the organization
// that runs on the cluster, once.
func (l *Lookup) Helms(ctx context.Context) ([]qovery.Helm, error) {
	if !l.done {
		l.all, l.err = clusterHelms(ctx, l.q, l.Env)
		l.done = true
	}
	return l.all, l.err
}

// FindOperator finds the Tailscale operator that runs on the cluster of
// env: the Helm service of the tailscale-operator chart in one of the
// organization's environments on that cluster, and its tags as its values
// file sets them. When there is none (yet: it may be created by the same
// apply), the chart's defaults are returned.
func FindOperator(ctx context.Context, q *qovery.Client, env *qovery.Environment) (Operator, error) {
	return NewLookup(q, env).Operator(ctx)
}

// operatorAmong returns the Tailscale operator among the Helm services of a
// cluster, or the chart's defaults when there is none.
func operatorAmong(helms []qovery.Helm) Operator {
	op := Operator{Tags: []string{DefaultOperatorTag}, ProxyTags: []string{DefaultProxyTag}}
	for _, h := range helms {
		if h.Source.Repository == nil || h.Source.Repository.ChartName != OperatorChart {
			continue
		}
		op.HelmID, op.Name = h.ID, h.Name
		if vals, ok := operatorValues(&h); ok {
			if len(vals.DefaultTags) > 0 {
				op.Tags = vals.DefaultTags
			}
			if len(vals.ProxyDefaultTags) > 0 {
				op.ProxyTags = vals.ProxyDefaultTags
			}
		}
		return op
	}
	return op
}

// clusterHelms lists the Helm services of every environment of the
// organization that runs on the cluster of env.
func clusterHelms(ctx context.Context, q *qovery.Client, env *qovery.Environment) ([]qovery.Helm, error) {
	projects, err := q.ListProjects(ctx, env.Organization.ID)
	if err != nil {
		return nil, err
	}
	var out []qovery.Helm
	for _, p := range projects {
		envs, err := q.ListEnvironments(ctx, p.ID)
		if err != nil {
			return out, err
		}
		for _, e := range envs {
			if e.ClusterID != env.ClusterID {
				continue
			}
			helms, err := q.ListHelms(ctx, e.ID)
			if err != nil {
				return out, err
			}
			out = append(out, helms...)
		}
	}
	return out, nil
}

// operatorValues reads qtail's values back from an operator Helm service's
// raw values file.
func operatorValues(h *qovery.Helm) (manifest.OperatorValues, bool) {
	f := h.ValuesOverride.File
	if f == nil || f.Raw == nil {
		return manifest.OperatorValues{}, false
	}
	for _, v := range f.Raw.Values {
		if vals, _, err := manifest.ReadOperatorValues(v.Content); err == nil {
			return vals, true
		}
	}
	return manifest.OperatorValues{}, false
}
