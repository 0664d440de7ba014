package cluster

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// proxyGroupUses says, for each ProxyGroup type, what goes wrong when a
// Service names a ProxyGroup of another type, and what to do.
var proxyGroupUses = map[string]string{
	manifest.ProxyGroupIngress: "The operator serves an exposed Service only through a ProxyGroup of type \"" + manifest.ProxyGroupIngress +
		"\": this application would not be reachable. Name an ingress ProxyGroup in proxy_group, or remove proxy_group to give the " +
		"application a proxy of its own.",
	manifest.ProxyGroupEgress: "The operator sends an egress Service only through a ProxyGroup of type \"" + manifest.ProxyGroupEgress +
		"\": the workloads' calls would go nowhere. Name an egress ProxyGroup in proxy_group, or remove proxy_group to give the " +
		"Service a proxy of its own.",
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
				"type %q. %s", name, cluster, pg.EnvironmentID, pg.Type, proxyGroupUses[want]))
		return
	}
}
