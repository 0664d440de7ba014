package manifestservice

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// dnsConfigReplacing are the attributes whose change replaces a
// DNSConfig. The operator sets the nameserver Service's cluster IP only
// when it creates the Service, which it does with the DNSConfig.
var dnsConfigReplacing = tfx.Replacing{"environment_id", "name", "cluster_ip"}

func (r *dnsConfigResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := manifestAttributes(ctx, dnsConfigKind, "wait until Qovery reports the deployment's outcome")
	attrs["name"] = schema.StringAttribute{
		Optional: true,
		Computed: true,
		Default:  stringdefault.StaticString(dnsConfigDefaultName),
		MarkdownDescription: "Name of the `DNSConfig` object (cluster-scoped). The Helm service is named `" + dnsConfigKind.servicePrefix +
			"NAME`. Default `" + dnsConfigDefaultName + "`. Changing it replaces the DNSConfig, and with it the nameserver's Service " +
			"and its IP.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a Kubernetes name", Check: manifest.CheckKubernetesName}},
	}
	attrs["image_repo"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Repository of the nameserver's image, without tag or digest (`spec.nameserver.image.repo`), such as " +
			"a mirror `ghcr.io/acme/k8s-nameserver`. Without it the operator runs `" + manifest.DNSConfigDefaultImageRepo + "`.",
		Validators: []validator.String{tfx.StringCheck{Rule: "an image repository", Check: manifest.CheckImageRepo}},
	}
	attrs["image_tag"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Tag of the nameserver's image (`spec.nameserver.image.tag`). Without it the operator runs `unstable` " +
			"(charts up to 1.90) or `stable` (1.92 and later); pin a release tag, such as `v1.102.3`, to upgrade the nameserver " +
			"as a reviewed change.",
		Validators: []validator.String{tfx.StringCheck{Rule: "an image tag", Check: manifest.CheckImageTag}},
	}
	attrs["replicas"] = schema.Int64Attribute{
		Optional: true,
		MarkdownDescription: "Number of nameserver pods (`spec.nameserver.replicas`), from `0`; without it the operator runs one. " +
			"The DNSConfig CRD has the field from operator chart " + manifest.DNSConfigReplicasSince + " on: the plan refuses it " +
			"when the cluster's operator runs an older chart, whose API server would drop it.",
		Validators: []validator.Int64{int64validator.AtLeast(0)},
	}
	attrs["cluster_ip"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Static cluster IP of the nameserver's Service (`spec.nameserver.service.clusterIP`): a free address of " +
			"the cluster's Service range, such as `10.96.0.53` (`kubectl cluster-info dump | grep service-cluster-ip-range` tells " +
			"the range). With it the nameserver's address is known before the apply, stays the same when the DNSConfig is " +
			"replaced, and `nameserver_ip` can feed the CoreDNS configuration. The DNSConfig CRD has the field from operator chart " +
			manifest.DNSConfigClusterIPSince + " on: the plan refuses it on an older chart. The operator sets the IP only when it " +
			"creates the Service, so changing it replaces the DNSConfig.",
		Validators: []validator.String{tfx.StringCheck{Rule: "an IP address", Check: manifest.CheckClusterIP}},
	}
	attrs["nameserver_ip"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "In-cluster IP of the nameserver's Service, to which CoreDNS (or kube-dns) forwards `ts.net`: " +
			"`cluster_ip` when set. qtail reads Qovery and Tailscale, not Kubernetes objects, so without `cluster_ip` the " +
			"address the cluster assigns is null here; read it from the DNSConfig's status with " +
			"`kubectl get dnsconfig NAME -o jsonpath='{.status.nameserver.ip}'`. It changes when the DNSConfig is replaced, " +
			"unless `cluster_ip` pins it.",
	}
	dnsConfigReplacing.AddTo(attrs)
	resp.Schema = schema.Schema{
		MarkdownDescription: "The Tailscale operator's `DNSConfig`: a nameserver in the operator's namespace that answers, for cluster " +
			"workloads, the `*.ts.net` MagicDNS names of the cluster's egress targets (`qtail_egress_service`) and ingress proxies, " +
			"so that a workload can call a tailnet machine by the name its TLS certificate carries. Workloads resolve those names " +
			"once the cluster's DNS (CoreDNS or kube-dns) forwards `ts.net` to the nameserver's IP, `nameserver_ip`; the guide " +
			"*Egress* shows the CoreDNS stanza.\n\n" +
			"qtail renders the `DNSConfig` into the raw values file of a Helm service whose chart applies the list `manifests` " +
			"(such as `examples/charts/" + cluster.ManifestsChart + "`), with cluster-wide resources allowed (a DNSConfig is " +
			"cluster-scoped), deploys it and waits for the deployment. The operator supports **one DNSConfig per cluster**: a " +
			"second one makes it log an error and record a `MultipleDNSConfigsPresent` event, and both then share one nameserver " +
			"that follows whichever it reconciled last. The plan refuses a second `qtail_dns_config` on a cluster, and one on a " +
			"cluster where another Helm service already deploys a DNSConfig; a DNSConfig applied with `kubectl` is outside what " +
			"qtail sees. The plan also refuses the fields that the CRD of the cluster's operator chart lacks.",
		Attributes: attrs,
	}
}
