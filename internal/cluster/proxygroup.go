package cluster

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// proxyGroupUse says, for a ProxyGroup type, what goes wrong when a
// Service that needs it names a ProxyGroup of another type, and what to
// do; "" for another type.
func proxyGroupUse(typ string) string {
	switch typ {
	case manifest.ProxyGroupIngress:
		return "The operator serves an exposed Service only through a ProxyGroup of type \"" + manifest.ProxyGroupIngress +
			"\": this application would not be reachable. Name an ingress ProxyGroup in proxy_group, or remove proxy_group to give the " +
			"application a proxy of its own."
	case manifest.ProxyGroupEgress:
		return "The operator sends an egress Service only through a ProxyGroup of type \"" + manifest.ProxyGroupEgress +
			"\": the workloads' calls would go nowhere. Name an egress ProxyGroup in proxy_group, or remove proxy_group to give the " +
			"Service a proxy of its own."
	}
	return ""
}

// CheckProxyGroupType refuses the ProxyGroup name in proxy_group, used
// from the environment envID, when a qtail_proxy_group of this plan
// declares it on the same cluster with another type than want (ingress for
// an exposed Service, egress for an egress Service). A ProxyGroup that no
// resource of the plan declares may be managed elsewhere and is not
// checked.
func CheckProxyGroupType(ctx context.Context, c *conn.Clients, name, envID, want string, diags *diag.Diagnostics) {
	world := c.Planned()
	planned := world.ProxyGroupsNamed(name)
	if len(planned) == 0 {
		checkProxyGroupRendered(ctx, c, name, envID, want, diags)
		return
	}
	read := func(ctx context.Context, envID string) (string, error) {
		env, err := c.QoveryOrNil().GetEnvironment(ctx, envID)
		if err != nil {
			return "", err
		}
		return env.ClusterID, nil
	}
	cluster, err := world.ClusterOf(ctx, envID, read)
	if err != nil {
		diags.AddWarning("ProxyGroup Not Checked", "qtail could not read the environment "+envID+": "+err.Error()+
			". Make sure that the ProxyGroup "+name+" is of type "+want+".")
		return
	}
	for _, pg := range planned {
		if pg.Type == want {
			continue
		}
		if c, err := world.ClusterOf(ctx, pg.EnvironmentID, read); err != nil || c != cluster {
			continue
		}
		diags.AddAttributeError(path.Root("proxy_group"), "ProxyGroup Not of Type "+tfx.TitleCase(want),
			fmt.Sprintf("A qtail_proxy_group of this configuration declares the ProxyGroup %q on cluster %s (environment %s) with "+
				"type %q. %s", name, cluster, pg.EnvironmentID, pg.Type, proxyGroupUse(want)))
		return
	}
}

// clusterProxyGroups returns the type of each ProxyGroup that the Helm
// services of a cluster render, by name, and the Helm services whose
// rendering qtail cannot read.
func clusterProxyGroups(helms []qovery.Helm) (map[string]string, []*qovery.Helm) {
	return clusterRendered(helms, func(_ *qovery.Helm, files []string) map[string]string {
		return manifest.RenderedProxyGroups(files...)
	})
}

// ProxyGroupProblem returns why the ProxyGroup name cannot serve a Service
// that needs its type want, when the cluster's Helm services show it for
// sure: none of them renders it (and qtail can read them all), or it is of
// another type. It returns "" otherwise.
func ProxyGroupProblem(ctx context.Context, ops *Lookup, name, want string) string {
	helms, err := ops.Helms(ctx)
	if err != nil {
		return ""
	}
	found, opaque := clusterProxyGroups(helms)
	typ, ok := found[name]
	if ok && typ != want {
		return fmt.Sprintf("the ProxyGroup %s on cluster %s is of type %q, not %q", name, ops.Env.ClusterID, typ, want)
	}
	if !ok && len(opaque) == 0 {
		return fmt.Sprintf("no Helm service of cluster %s renders the ProxyGroup %s (qtail read the values of all %d of them), "+
			"so the operator has no ProxyGroup to serve it with", ops.Env.ClusterID, name, len(helms))
	}
	return ""
}

// checkProxyGroupRendered refuses, at plan, a ProxyGroup that no resource
// of the plan declares and that the Helm services of the cluster of envID
// show missing or of another type; it warns when qtail cannot tell.
func checkProxyGroupRendered(ctx context.Context, c *conn.Clients, name, envID, want string, diags *diag.Diagnostics) {
	ops, err := environmentLookup(ctx, c, envID)
	if err != nil {
		return
	}
	at := path.Root("proxy_group")
	if why := ProxyGroupProblem(ctx, ops, name, want); why != "" {
		diags.AddAttributeError(at, "ProxyGroup Not on the Cluster",
			fmt.Sprintf("In this plan, %s. Declare it with a qtail_proxy_group of type %q on that cluster and refer to it "+
				"(proxy_group = qtail_proxy_group.NAME.name) so that Terraform plans it first, or name a ProxyGroup that exists. %s",
				why, want, proxyGroupUse(want)))
		return
	}
	helms, err := ops.Helms(ctx)
	if err != nil {
		return
	}
	if found, opaque := clusterProxyGroups(helms); found[name] == "" && len(opaque) > 0 {
		diags.AddAttributeWarning(at, "ProxyGroup Not Checked",
			fmt.Sprintf("No Helm service of cluster %s that qtail can read renders the ProxyGroup %s, and qtail cannot tell what "+
				"%s render. Until a ProxyGroup of that name and of type %q runs on the cluster, the operator does nothing with this Service.",
				ops.Env.ClusterID, name, helmNames(opaque), want))
	}
}
