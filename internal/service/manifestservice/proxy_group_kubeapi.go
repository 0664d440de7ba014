package manifestservice

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// kubeAPIServerAt is the attribute that the checks of a kube-apiserver
// ProxyGroup report on.
var kubeAPIServerAt = path.Root("kube_apiserver").AtName("mode")

// checkKubeAPIServerConfig requires kube_apiserver with the type
// kube-apiserver, and refuses it with the other types.
func checkKubeAPIServerConfig(m *proxyGroupModel, diags *diag.Diagnostics) {
	if m.Type.IsUnknown() || m.Type.IsNull() || m.KubeAPIServer.IsUnknown() {
		return
	}
	typ := m.Type.ValueString()
	switch {
	case typ == manifest.ProxyGroupKubeAPIServer && m.KubeAPIServer.IsNull():
		diags.AddAttributeError(path.Root("type"), "Missing kube_apiserver",
			"A ProxyGroup of type \"kube-apiserver\" proxies the Kubernetes API, in one of two modes: say which, with\n\n"+
				"  kube_apiserver = {\n    mode = \"auth\" # or \"noauth\"\n  }\n\n"+
				"auth impersonates each caller by their tailnet identity and the groups that grants of "+cluster.KubernetesCapability+
				" give; noauth passes requests on unchanged, and callers authenticate to Kubernetes themselves.")
	case typ != manifest.ProxyGroupKubeAPIServer && !m.KubeAPIServer.IsNull():
		diags.AddAttributeError(path.Root("kube_apiserver"), "kube_apiserver Without the kube-apiserver Type",
			fmt.Sprintf("kube_apiserver configures the API server proxy of a ProxyGroup of type \"kube-apiserver\"; this one is of type "+
				"%q, whose replicas do not proxy the Kubernetes API. Remove kube_apiserver, or set type = \"kube-apiserver\" (which "+
				"replaces the ProxyGroup).", typ))
	}
}

// checkKubeAPIServer checks, at plan, what the replicas of a kube-apiserver
// ProxyGroup need, as for the operator's own API server proxy: an operator
// chart whose ProxyGroup CRD has the type (from 1.86), HTTPS certificates
// on the tailnet (the replicas serve TLS on :443 with the certificate of
// svc:NAME, and advertise the Service only once they have it), and in auth
// mode a grant of tailscale.com/cap/kubernetes to the ProxyGroup's tags.
// changed is set when the ProxyGroup is created or its mode changes: the
// tailnet is read only then.
func (r *proxyGroupResource) checkKubeAPIServer(ctx context.Context, ops *cluster.Lookup, spec manifest.ProxyGroup, changed bool, diags *diag.Diagnostics) {
	op, err := ops.Operator(ctx)
	if err == nil && op.ChartVersion != "" {
		if supported, known := manifest.SupportsKubeAPIServerProxyGroup(op.ChartVersion); known && !supported {
			diags.AddAttributeError(path.Root("type"), "kube-apiserver ProxyGroups Need a Newer Operator Chart",
				fmt.Sprintf("The ProxyGroup CRD of operator chart %s, which %s runs, has no type \"kube-apiserver\" (it came with "+
					"chart series %s): the cluster would refuse the ProxyGroup. Upgrade chart_version of the qtail_operator to %s.x or "+
					"newer, or set api_server_proxy on the qtail_operator instead.", op.ChartVersion, op.Describe(ops.Env),
					manifest.KubeAPIServerProxyGroupSince(), manifest.KubeAPIServerProxyGroupSince()))
			return
		}
	}
	tn := r.Clients.TailnetOrNil()
	if tn == nil || !changed {
		return
	}
	mode := spec.KubeAPIServerMode
	if !cluster.CheckHTTPS(ctx, r.Clients, diags, cluster.HTTPSNeed{
		At: kubeAPIServerAt,
		Needs: fmt.Sprintf("the kube-apiserver ProxyGroup %s needs: its replicas serve TLS with the tailnet's certificate for %s, "+
			"and without it they never serve", spec.Name, spec.ServiceName()),
		Serves: fmt.Sprintf("The replicas of the kube-apiserver ProxyGroup %s serve the Kubernetes API on :443 with TLS, from the "+
			"tailnet's certificate for the Tailscale Service %s", spec.Name, spec.ServiceName()),
		Without: "the replicas would join the tailnet and never serve",
	}) {
		return
	}
	if mode != manifest.KubeAPIServerAuth {
		return
	}
	tags := spec.DeviceTags(op.ProxyTags)
	policy, dd := r.Clients.PlannedPolicy(ctx)
	if dd.HasError() {
		for _, d := range dd.Errors() {
			diags.AddAttributeWarning(kubeAPIServerAt, "Kubernetes Grant Not Checked",
				fmt.Sprintf("qtail could not read the tailnet policy file (%s: %s), so it has not checked that a grant of %s to %s "+
					"lets callers into the cluster through the kube-apiserver ProxyGroup %s. Give the provider's Tailscale credential "+
					"the policy_file scope to have it checked.", d.Summary(), d.Detail(), cluster.KubernetesCapability, tfx.HCLList(tags), spec.Name))
		}
		return
	}
	found, err := cluster.HasKubernetesGrant(policy, tags)
	if err != nil || found {
		return
	}
	diags.AddAttributeError(kubeAPIServerAt, "No Kubernetes Grant for the kube-apiserver ProxyGroup",
		fmt.Sprintf("In auth mode, the replicas of the ProxyGroup %s impersonate each caller as the groups that grants of the %s "+
			"capability to the ProxyGroup's tags name. The tailnet policy file, with the policy changes planned in this run, has "+
			"no such grant to %s, so no group would be impersonated and only callers to whose tailnet user name the cluster binds "+
			"RBAC roles one by one would get in. Add a grant in the same configuration (Terraform plans it first when this "+
			"resource lists it in depends_on):\n\n"+
			"resource \"qtail_grant\" \"kubernetes_read\" {\n  name = \"kubernetes-read\"\n  src  = [\"autogroup:admin\"]\n  dst  = [%q]\n"+
			"  app = jsonencode({\n    %q = [{\n      impersonate = { groups = [\"tailnet-readers\"] }\n    }]\n  })\n}\n\n"+
			"and bind the group in the cluster, for example read-only:\n\n"+
			"kubectl create clusterrolebinding tailnet-readers --clusterrole=view --group=tailnet-readers\n\n"+
			"Or set kube_apiserver.mode = \"noauth\" to have callers authenticate to Kubernetes themselves.",
			spec.Name, cluster.KubernetesCapability, tfx.HCLList(tags), tags[0], cluster.KubernetesCapability))
}
