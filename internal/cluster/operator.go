package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/planned"
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

// OperatorOAuthScopes are the scopes of the OAuth client qtail creates for
// an operator, all with write access:
//   - devices:core: the operator reads, tags and removes the devices of the
//     proxies it runs;
//   - auth_keys: it mints an auth key for its own device and one for every
//     proxy it creates;
//   - services: for an exposure through an ingress ProxyGroup it creates
//     the Tailscale Service svc:HOSTNAME through the API.
var OperatorOAuthScopes = []string{"devices:core", "auth_keys", "services"}

// Operator is the Tailscale operator of a cluster as qtail finds it.
type Operator struct {
	// HelmID and Name are empty when no operator was found (or, for an
	// operator this plan creates, not created yet).
	HelmID, Name string
	// Hostname is the name of the operator's own device
	// (operatorConfig.hostname), when its values file sets it.
	Hostname string
	// Tags are the tags of the operator's own device.
	Tags []string
	// ProxyTags are the tags of the proxies it creates by default.
	ProxyTags []string
	// DefaultProxyClass is proxyConfig.defaultProxyClass: the ProxyClass
	// of the exposed Services, egress Services and ProxyGroups that name
	// none (not of Connectors).
	DefaultProxyClass string
	// Planned is set when a qtail_operator of this plan says what the
	// operator will run.
	Planned bool
	// ClientID is the OAuth client a qtail_operator of this plan gives by
	// ID; CreatesClient is set when it creates the client. For an operator
	// as Qovery holds it, the client is read from its variables (see
	// Lookup.OAuthClient).
	ClientID      string
	CreatesClient bool
	// ChartVersion is the operator chart's version, as the plan or Qovery
	// has it; empty when unknown (or the chart comes from Git).
	ChartVersion string
}

// Describe names the operator in a sentence, on the cluster of env.
func (o Operator) Describe(env *qovery.Environment) string {
	if o.HelmID == "" && o.Planned {
		return fmt.Sprintf("the operator that this plan installs on cluster %s", env.ClusterID)
	}
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
	// plan is what the plan says about the cluster's operator, when the
	// lookup serves a plan-time check.
	plan *planned.World

	clientDone bool
	client     OAuthClient
}

// NewLookup returns a lookup of the cluster of env.
func NewLookup(q *qovery.Client, env *qovery.Environment) *Lookup {
	return &Lookup{q: q, Env: env}
}

// UsePlan makes the lookup count what a qtail_operator of the plan of w
// says about the cluster's operator over what Qovery holds. It returns l.
func (l *Lookup) UsePlan(w *planned.World) *Lookup {
	l.plan = w
	return l
}

// Operator returns the operator of the cluster, or the chart's defaults
// when there is none (yet: it may be created by the same apply).
func (l *Lookup) Operator(ctx context.Context) (Operator, error) {
	helms, err := l.Helms(ctx)
	op := operatorAmong(helms)
	if l.plan != nil {
		if p, ok := l.plan.PlannedOperator(l.Env.ClusterID); ok {
			op.Planned, op.ClientID, op.CreatesClient = true, p.ClientID, p.CreatesClient
			if p.ChartVersion != "" {
				op.ChartVersion = p.ChartVersion
			}
			if p.Values != "" {
				readOperatorValues(&op, p.Values)
			}
		}
	}
	return op, err
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

// EnvironmentProxyTags returns the default proxy tags (PROXY_TAGS) of the
// operator on the cluster of the environment envID: the tags of every
// proxy, Connector and ProxyGroup device that names none (the chart's
// default when qtail finds no operator).
func EnvironmentProxyTags(ctx context.Context, q *qovery.Client, envID string) ([]string, error) {
	env, err := q.GetEnvironment(ctx, envID)
	if err != nil {
		return nil, err
	}
	op, err := FindOperator(ctx, q, env)
	if err != nil {
		return nil, err
	}
	return manifest.ProxyDeviceTags(nil, op.ProxyTags), nil
}

// operatorAmong returns the Tailscale operator among the Helm services of a
// cluster, or the chart's defaults when there is none.
func operatorAmong(helms []qovery.Helm) Operator {
	op := Operator{Tags: []string{DefaultOperatorTag}, ProxyTags: []string{DefaultProxyTag}}
	for _, h := range helms {
		if !isOperator(&h) {
			continue
		}
		op.HelmID, op.Name = h.ID, h.Name
		if r := h.Source.Repository; r != nil {
			op.ChartVersion = r.ChartVersion
		}
		if f := h.ValuesOverride.File; f != nil && f.Raw != nil {
			for _, v := range f.Raw.Values {
				if readOperatorValues(&op, v.Content) {
					break
				}
			}
		}
		return op
	}
	return op
}

// IsOperatorDevice reports whether a device with this hostname and these
// tags is the operator's own device, or an operator's of another cluster:
// it carries the operator's tags and none of its proxies' tags.
func (o Operator) IsOperatorDevice(hostname string, tags []string) bool {
	if o.Hostname != "" && strings.EqualFold(o.Hostname, hostname) {
		return true
	}
	if len(tags) == 0 {
		return false
	}
	for _, t := range tags {
		if !slices.Contains(o.Tags, t) || slices.Contains(o.ProxyTags, t) {
			return false
		}
	}
	return true
}

// isOperator reports whether a Helm service installs the operator chart.
func isOperator(h *qovery.Helm) bool {
	return h.Source.Repository != nil && h.Source.Repository.ChartName == OperatorChart
}

// readOperatorValues sets the tags and the default ProxyClass that an
// operator values file sets on op, and reports whether it could read it.
func readOperatorValues(op *Operator, file string) bool {
	vals, _, err := manifest.ReadOperatorValues(file)
	if err != nil {
		return false
	}
	op.Hostname = vals.Hostname
	if len(vals.DefaultTags) > 0 {
		op.Tags = vals.DefaultTags
	}
	if len(vals.ProxyDefaultTags) > 0 {
		op.ProxyTags = vals.ProxyDefaultTags
	}
	op.DefaultProxyClass = manifest.OperatorDefaultProxyClass(file)
	return true
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
