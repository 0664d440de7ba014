package manifestservice

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// egressServiceReplacing are the attributes whose change replaces an
// egress Service.
var egressServiceReplacing = tfx.Replacing{"environment_id", "name", "tags"}

func (r *egressServiceResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := manifestAttributes(ctx, egressKind, "wait for the deployment to end")
	attrs["name"] = schema.StringAttribute{
		Required: true,
		MarkdownDescription: "Name of the Kubernetes `Service`, such as `db`: 1 to 63 lower-case letters, digits and `-`, starting " +
			"with a letter and ending with a letter or a digit (an RFC 1035 label). Workloads reach the tailnet machine at " +
			"`NAME.NAMESPACE." + clusterDomain + "`. The Helm service is named `" + egressKind.servicePrefix + "NAME`. Changing it " +
			"replaces the egress Service.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a Service name", Check: manifest.CheckServiceName}},
	}
	attrs["tailnet_fqdn"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "MagicDNS name of the tailnet machine to reach, such as `db.tail1234.ts.net`: the annotation `" +
			manifest.AnnotationTailnetFQDN + "`. A DNS name with at least one dot; a trailing dot is allowed and kept as written. " +
			"The operator only accepts the form `MACHINE.TAILNET.ts.net`. Exactly one of `tailnet_fqdn` and `tailnet_ip`; " +
			"switching between them updates the Service in place.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a DNS name", Check: checkTailnetFQDN}},
	}
	attrs["tailnet_ip"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Tailscale IP address (IPv4 or IPv6) of the tailnet machine to reach, such as `100.101.102.103`: the " +
			"annotation `" + manifest.AnnotationTailnetIP + "`. Exactly one of `tailnet_fqdn` and `tailnet_ip`.",
		Validators: []validator.String{tfx.StringCheck{Rule: "an IP address", Check: checkTailnetIP}},
	}
	attrs["ports"] = schema.ListAttribute{
		ElementType: types.StringType,
		Optional:    true,
		MarkdownDescription: "Ports of the Service, each `PROTOCOL:PORT` with the protocol `tcp` or `udp` and a port from 1 to " +
			"65535, such as `[\"tcp:5432\"]`; no duplicates. Each becomes a Service port named like `tcp-5432`. Required with " +
			"`proxy_group`, as the operator requires; without a ProxyGroup the egress proxy forwards every port and `ports` " +
			"only documents them.",
		Validators: []validator.List{
			listvalidator.SizeAtLeast(1),
			listvalidator.ValueStringsAre(tfx.StringCheck{Rule: "a port such as tcp:5432", Check: checkServicePort}),
		},
	}
	attrs["proxy_group"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Name of a `ProxyGroup` of type `egress` on the cluster: the Service then goes through the " +
			"ProxyGroup's replicas instead of a proxy of its own (the annotation `" + manifest.AnnotationProxyGroup + "`). " +
			"Requires `ports`.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a Kubernetes name", Check: manifest.CheckKubernetesName}},
	}
	attrs["hostname"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Hostname of the Service's egress proxy device on the tailnet (the annotation `" + manifest.AnnotationHostname +
			"`). Without it the operator names the device `NAMESPACE-NAME`. A DNS label: 1 to 63 lower-case letters, digits and " +
			"dashes. A change renames the same device. Conflicts with `proxy_group`, whose devices carry the traffic instead.",
		Validators: []validator.String{tfx.DeviceHostname(), stringvalidator.ConflictsWith(path.MatchRoot("proxy_group"))},
	}
	attrs["tags"] = schema.ListAttribute{
		ElementType: types.StringType,
		Optional:    true,
		MarkdownDescription: "Tags of the egress proxy device (the annotation `" + manifest.AnnotationTags + "`). Without them the " +
			"device gets the operator's proxy tags (`proxy_default_tags` of the `qtail_operator`). The operator mints the proxy's auth " +
			"key with its OAuth client, which must own each tag (the plan checks it). The tags are set when the device is created, so " +
			"changing them replaces the egress Service. Conflicts with `proxy_group`.",
		Validators: []validator.List{
			listvalidator.SizeAtLeast(1),
			listvalidator.UniqueValues(),
			listvalidator.ValueStringsAre(tfx.StringCheck{Rule: "a tag", Check: manifest.CheckTag}),
			listvalidator.ConflictsWith(path.MatchRoot("proxy_group")),
		},
	}
	attrs["proxy_class"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Name of a `ProxyClass` for the egress proxy's pod (the annotation `" + manifest.AnnotationProxyClass +
			"`); without it, the operator's default (`proxyConfig.defaultProxyClass`). The operator brings up no proxy until the " +
			"ProxyClass is Ready: the plan refuses one that no Helm service of the cluster renders.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a Kubernetes name", Check: manifest.CheckKubernetesName}},
	}
	attrs["wait_for_device"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(true),
		MarkdownDescription: "Wait, after each deployment, until the egress proxy device is on the tailnet with its tags (without " +
			"`proxy_group`). A device gone from the tailnet then shows as a change, and qtail redeploys. Default `true`.",
	}
	attrs["proxy_hostname"] = schema.StringAttribute{
		Computed:            true,
		MarkdownDescription: "Hostname of the egress proxy device: `hostname`, or `NAMESPACE-NAME`. Null with `proxy_group`.",
	}
	attrs["proxy_tags"] = schema.ListAttribute{
		ElementType: types.StringType,
		Computed:    true,
		MarkdownDescription: "Tags of the egress proxy device: `tags`, or the operator's proxy tags when the Service was created. " +
			"The tailnet policy must let them reach the target. Null with `proxy_group` (the ProxyGroup's tags apply).",
	}
	attrs["devices"] = schema.ListNestedAttribute{
		Computed: true,
		MarkdownDescription: "The egress proxy device on the tailnet: one element without `proxy_group` (empty until it joins, or " +
			"with `wait_for_device = false`), none with it.",
		NestedObject: schema.NestedAttributeObject{Attributes: deviceAttributes("Routes the device advertises (none for an egress proxy).")},
	}
	attrs["namespace"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "Kubernetes namespace of the Service: the namespace Qovery deploys the environment's services to. " +
			"Qovery's API has no namespace field on environments, so qtail reads the built-in variable `" + namespaceVariable +
			"` that every service of the environment sees: from the environment's variables when it plans a creation, from " +
			"the Helm service's variables on refresh.",
	}
	attrs["cluster_dns_name"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "The name cluster workloads call to reach the tailnet machine: `NAME.NAMESPACE." + clusterDomain +
			"`, such as `db.z1a2b3c4d-production." + clusterDomain + "`. Known at plan time whenever `namespace` is.",
	}
	egressServiceReplacing.AddTo(attrs)
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Tailscale egress `Service`: cluster workloads reach one tailnet machine at " +
			"`NAME.NAMESPACE." + clusterDomain + "`, through an egress proxy that the Tailscale operator runs. Deployed as a " +
			"Qovery Helm service on the cluster of a `qtail_operator`.\n\n" +
			"qtail renders a Kubernetes `Service` of type `ExternalName`, annotated `" + manifest.AnnotationTailnetFQDN + "` " +
			"(or `" + manifest.AnnotationTailnetIP + "`, and `" + manifest.AnnotationProxyGroup + "` with `proxy_group`), into " +
			"the raw values file of a Helm service whose chart applies the list `manifests` (such as `examples/charts/" +
			cluster.ManifestsChart + "`). Its `externalName` is a placeholder that the operator rewrites to point at the egress " +
			"proxy. A Service is namespaced, so the Helm service gets no cluster-wide resources. qtail deploys the service and " +
			"waits for the deployment; the proxy is then the operator's work.\n\n" +
			"Without `proxy_group`, the operator runs a proxy of its own for the Service: a tailnet device named `hostname` (default " +
			"`NAMESPACE-NAME`) and tagged `tags` (default the operator's proxy tags, `tag:k8s` unless the operator says otherwise), " +
			"whose auth key the operator mints with its OAuth client; it then points `externalName` at the proxy. The plan checks " +
			"that the hostname is free and that the client can apply the tags, and qtail waits for the device (`devices`). With " +
			"`proxy_group`, the ProxyGroup's devices carry the traffic with their tags. The tailnet policy must let those tags " +
			"reach the target machine on the Service's ports: add a `qtail_grant` from the proxy's tags to the machine, and check " +
			"the whole path with the `qtail_egress_status` data source.\n\n" +
			"The Service lives in the environment's namespace. Qovery's API has no namespace field on environments; every " +
			"service sees the namespace in the built-in variable `" + namespaceVariable + "`, and qtail reads it there to fill " +
			"`namespace` and `cluster_dns_name`, already in the plan of a creation.",
		Attributes: attrs,
	}
}

// magicDNSNameRE is the operator's check of the tailnet-fqdn annotation.
var magicDNSNameRE = regexp.MustCompile(`^[a-zA-Z0-9-]+\.[a-zA-Z0-9-]+\.ts\.net\.?$`)

// dnsLabelRE is a DNS label, either case.
var dnsLabelRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

// checkTailnetFQDN accepts a DNS name with at least one dot, with or
// without the final dot.
func checkTailnetFQDN(s string) error {
	name := strings.TrimSuffix(s, ".")
	if !strings.Contains(name, ".") {
		return fmt.Errorf("give the machine's full MagicDNS name, MACHINE.TAILNET.ts.net, such as db.tail1234.ts.net, not its short name")
	}
	if len(name) > 253 {
		return fmt.Errorf("a DNS name has at most 253 characters")
	}
	for _, label := range strings.Split(name, ".") {
		if !dnsLabelRE.MatchString(label) {
			return fmt.Errorf("not a DNS name: %q is not a label of 1 to 63 letters, digits and '-' that starts and ends with a letter "+
				"or a digit. Give a MagicDNS name such as db.tail1234.ts.net, without scheme or port", label)
		}
	}
	return nil
}

// checkTailnetIP accepts an IPv4 or IPv6 address without zone.
func checkTailnetIP(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil {
		if _, perr := netip.ParsePrefix(s); perr == nil {
			return fmt.Errorf("give one address, without prefix length, such as 100.101.102.103")
		}
		return fmt.Errorf("not an IPv4 or IPv6 address, such as 100.101.102.103 or fd7a:115c:a1e0::1")
	}
	if a.Zone() != "" {
		return fmt.Errorf("give the address without zone (%s)", a.WithZone(""))
	}
	return nil
}

func checkServicePort(s string) error {
	_, err := parseServicePort(s)
	return err
}
