package manifestservice

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// proxyGroupTypeCheck accepts the ProxyGroup types qtail offers.
func proxyGroupTypeCheck(s string) error {
	switch s {
	case manifest.ProxyGroupIngress, manifest.ProxyGroupEgress, manifest.ProxyGroupKubeAPIServer:
		return nil
	}
	return fmt.Errorf("the type must be %q, %q or %q", manifest.ProxyGroupIngress, manifest.ProxyGroupEgress, manifest.ProxyGroupKubeAPIServer)
}

// kubeAPIServerModeCheck accepts the modes of spec.kubeAPIServer.mode.
func kubeAPIServerModeCheck(s string) error {
	if s == manifest.KubeAPIServerAuth || s == manifest.KubeAPIServerNoAuth {
		return nil
	}
	return fmt.Errorf("the mode must be %q or %q", manifest.KubeAPIServerAuth, manifest.KubeAPIServerNoAuth)
}

// proxyGroupReplacing are the attributes whose change replaces a
// ProxyGroup.
var proxyGroupReplacing = tfx.Replacing{"environment_id", "name", "type", "tags"}

func (r *proxyGroupResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := manifestAttributes(ctx, proxyGroupKind, "wait for the ProxyGroup's devices")
	attrs["name"] = schema.StringAttribute{
		Required: true,
		MarkdownDescription: "Name of the `ProxyGroup` object (cluster-scoped, so unique per cluster), such as `ingress` or " +
			"`egress`: the value that `proxy_group` of `qtail_exposed_service` and `qtail_egress_service` takes. The Helm " +
			"service is named `" + proxyGroupKind.servicePrefix + "NAME`, and without `hostname_prefix` the devices are named " +
			"`NAME-0`, `NAME-1`, ... Changing it replaces the ProxyGroup.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a Kubernetes name", Check: manifest.CheckKubernetesName}},
	}
	attrs["type"] = schema.StringAttribute{
		Required: true,
		MarkdownDescription: "`ingress`: the replicas serve Services exposed with `qtail_exposed_service` and `proxy_group` as " +
			"Tailscale Services. `egress`: the replicas carry the traffic of egress Services (`qtail_egress_service` with " +
			"`proxy_group`) to tailnet machines. `kube-apiserver`: the replicas proxy the cluster's Kubernetes API on the " +
			"tailnet, as the Tailscale Service `svc:NAME` (`https://NAME.TAILNET.ts.net`), a highly available alternative to " +
			"`api_server_proxy` of `qtail_operator`; it needs `kube_apiserver` and an operator chart from 1.86. The CRD makes " +
			"the type immutable, so changing it replaces the ProxyGroup: new devices, with new tailnet addresses.",
		Validators: []validator.String{tfx.StringCheck{Rule: "ingress, egress or kube-apiserver", Check: proxyGroupTypeCheck}},
	}
	attrs["kube_apiserver"] = schema.SingleNestedAttribute{
		Optional: true,
		MarkdownDescription: "How a `kube-apiserver` ProxyGroup proxies the Kubernetes API (`spec.kubeAPIServer`); required " +
			"with that type and refused with the others. The replicas serve HTTPS with the tailnet's certificate for " +
			"`NAME.TAILNET.ts.net`, so the plan refuses it while HTTPS certificates are off on the tailnet.",
		Attributes: map[string]schema.Attribute{
			"mode": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "`auth`: each request is impersonated as the caller's tailnet identity and the groups that " +
					"grants of the `tailscale.com/cap/kubernetes` capability to the ProxyGroup's tags give; the plan refuses it " +
					"while the policy file (with the grants planned in the same run) has no such grant. `noauth`: requests reach " +
					"the API server as they came, without credentials of the proxy's: callers authenticate to Kubernetes " +
					"themselves (a token in their kubeconfig), and the tailnet policy only decides who may connect. Changing it " +
					"redeploys the ProxyGroup in place.",
				Validators: []validator.String{tfx.StringCheck{Rule: "auth or noauth", Check: kubeAPIServerModeCheck}},
			},
		},
	}
	attrs["replicas"] = schema.Int64Attribute{
		Optional: true,
		Computed: true,
		Default:  int64default.StaticInt64(manifest.ProxyGroupDefaultReplicas),
		MarkdownDescription: "Number of replicas, each a device on the tailnet: replica N is `PREFIX-N`, from 0. Scaling " +
			"keeps the existing devices. `0` to `10`. Default `2`.",
		Validators: []validator.Int64{int64validator.Between(0, 10)},
	}
	attrs["hostname_prefix"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Prefix of the devices' hostnames: replica N is `PREFIX-N`. Without it the prefix is `name`. " +
			"Hostnames name devices on the whole tailnet, so with one ProxyGroup of the same name per cluster give each cluster " +
			"its own prefix, such as `ingress-us-east-1`. The last replica's hostname must fit in 63 characters.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a hostname prefix", Check: manifest.CheckHostnamePrefix}},
	}
	attrs["wait_for_devices"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(true),
		MarkdownDescription: "Wait, after each deployment, until every replica's device is on the tailnet with the tags. " +
			"A device gone from the tailnet then shows as a change, and qtail redeploys. Default `true`.",
	}
	addReplicaAttributes(attrs, proxyGroupKind, "Routes the device advertises: usually none for a ProxyGroup.")
	proxyGroupReplacing.AddTo(attrs)
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Tailscale `ProxyGroup`: several replicas of an ingress, an egress or a Kubernetes API server proxy, one device each, " +
			"shared by many Services, deployed as a Qovery Helm service on the cluster of a `qtail_operator`. Tailscale " +
			"recommends it over one proxy pod per Service for production traffic.\n\n" +
			"- **Ingress**: expose applications with `qtail_exposed_service` and `proxy_group = qtail_proxy_group.NAME.name` " +
			"(and `wait_for_device = false`). Each is then a Tailscale Service `svc:HOSTNAME` served by every replica, instead " +
			"of a device of its own. The operator creates the Tailscale Services through the API, so its OAuth client needs the " +
			"`services` scope, which the client that `qtail_operator` creates (`create_oauth_client`) has; approving them " +
			"automatically needs an `autoApprovers.services` entry.\n" +
			"- **Egress**: point `qtail_egress_service` resources at it with `proxy_group`: cluster workloads reach tailnet " +
			"machines through the replicas.\n" +
			"- **kube-apiserver**: the replicas serve the cluster's Kubernetes API as the Tailscale Service `svc:NAME`: " +
			"`kubectl --server=https://NAME.TAILNET.ts.net`. The plan checks what the operator's own API server proxy needs: " +
			"HTTPS certificates on the tailnet and, in `auth` mode, a grant of `tailscale.com/cap/kubernetes` to the " +
			"ProxyGroup's tags.\n\n" +
			"qtail renders the `ProxyGroup` into the raw values file of a Helm service whose chart applies the list `manifests` " +
			"(such as `examples/charts/" + cluster.ManifestsChart + "`), with cluster-wide resources allowed (a ProxyGroup is " +
			"cluster-scoped). It deploys the service and waits for the replicas' devices, `PREFIX-0` to `PREFIX-N-1`, to join " +
			"the tailnet with their tags. The plan refuses hostnames that other devices use and tags that the operator's tag " +
			"does not own.",
		Attributes: attrs,
	}
}
