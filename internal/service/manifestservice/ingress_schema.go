package manifestservice

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// ingressReplacing are the attributes whose change replaces an HTTPS
// exposure: the application and its environment (the Ingress lives in the
// application's namespace), the hostname (the Ingress's name), and the
// tags (fixed when the proxy's auth key is made).
var ingressReplacing = tfx.Replacing{"environment_id", "application_id", "hostname", "tags", "proxy_group"}

func (r *ingressResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := manifestAttributes(ctx, ingressKind, "wait for the proxy device")
	attrs["environment_id"] = schema.StringAttribute{
		Required: true,
		MarkdownDescription: "ID of the Qovery environment of the application: the operator proxies an Ingress only to a " +
			"Service of its own namespace, so the Helm service that renders it runs next to the application (the plan checks " +
			"it), on a cluster where a Tailscale operator runs. Changing it replaces the Ingress.",
		Validators: []validator.String{tfx.QoveryID()},
	}
	attrs["application_id"] = schema.StringAttribute{
		Required: true,
		MarkdownDescription: "ID of the Qovery application to serve over HTTPS: the Ingress's backend is its Kubernetes Service " +
			"(`app-z` and the first 8 hexadecimal digits of its ID, as Qovery names it). Changing it replaces the Ingress.",
		Validators: []validator.String{tfx.QoveryID()},
	}
	attrs["hostname"] = schema.StringAttribute{
		Required: true,
		MarkdownDescription: "Name of the proxy on the tailnet (`spec.tls[0].hosts[0]` of the Ingress, and its name): the " +
			"application answers at `https://HOSTNAME.TAILNET.ts.net/`. A DNS label of 1 to 63 lower-case letters, digits and " +
			"dashes that no other device or Tailscale Service of the tailnet uses (the plan checks it). The Helm service is " +
			"named `" + ingressKind.servicePrefix + "HOSTNAME`. Changing it replaces the Ingress.",
		Validators: []validator.String{tfx.DeviceHostname()},
	}
	attrs["backend_port"] = schema.Int64Attribute{
		Required: true,
		MarkdownDescription: "Port of the application that the proxy sends requests to, from 1 to 65535, one the application " +
			"declares in Qovery (the plan checks it). The proxy serves port 443 only, with the tailnet's certificate, and " +
			"speaks plain HTTP to the backend, or HTTPS without verifying its certificate when the port is 443.",
		Validators: []validator.Int64{int64validator.Between(1, 65535)},
	}
	attrs["tags"] = schema.ListAttribute{
		ElementType: types.StringType,
		Optional:    true,
		MarkdownDescription: "Tags of the proxy device (`tailscale.com/tags`), instead of the operator's proxy tags. Each must " +
			"be owned by the operator's tag in `tagOwners` (the plan checks it). The tags are set when the device is created, " +
			"so changing them replaces the Ingress.",
		Validators: []validator.List{
			listvalidator.SizeAtLeast(1),
			listvalidator.UniqueValues(),
			listvalidator.ValueStringsAre(tfx.StringCheck{Rule: "a tag", Check: manifest.CheckTag}),
		},
	}
	attrs["proxy_group"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Name of an ingress `ProxyGroup` to serve the Ingress through (`tailscale.com/proxy-group`), " +
			"instead of a proxy device of its own: the Ingress is then the Tailscale Service `svc:HOSTNAME` on port 443, " +
			"which the ProxyGroup's replicas host once the tailnet approves them. The plan checks that the ProxyGroup is of " +
			"type ingress, that the operator's OAuth client may create Tailscale Services, and that `autoApprovers.services` " +
			"approves the replicas (a `qtail_auto_approver` with `service = \"svc:HOSTNAME\"`); the apply waits for an approved " +
			"host. Changing it replaces the Ingress.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a Kubernetes name", Check: manifest.CheckKubernetesName}},
	}
	attrs["wait_for_device"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(true),
		MarkdownDescription: "Wait, after each deployment, until the proxy device is on the tailnet with its tags (through " +
			"a ProxyGroup: until a host of the Tailscale Service is approved). A device gone from the tailnet then shows as " +
			"a change, and qtail redeploys. Default `true`.",
	}
	attrs["tailnet_fqdn"] = schema.StringAttribute{
		Computed:            true,
		MarkdownDescription: "MagicDNS name of the proxy device, `HOSTNAME.TAILNET.ts.net`: the name its certificate is for.",
	}
	attrs["url"] = schema.StringAttribute{
		Computed:            true,
		MarkdownDescription: "Where the application answers on the tailnet: `https://HOSTNAME.TAILNET.ts.net/`.",
	}
	attrs["devices"] = schema.ListNestedAttribute{
		Computed:            true,
		MarkdownDescription: "The proxy device of the Ingress on the tailnet: one, none through a ProxyGroup.",
		NestedObject:        schema.NestedAttributeObject{Attributes: deviceAttributes("Routes the device advertises: none for an Ingress proxy.")},
	}
	ingressReplacing.AddTo(attrs)
	resp.Schema = schema.Schema{
		MarkdownDescription: "Serves one Qovery application over HTTPS on the tailnet, at `https://HOSTNAME.TAILNET.ts.net/`, " +
			"through a Kubernetes `Ingress` of class `tailscale`: the operator makes one proxy device that terminates TLS on port " +
			"443 with the tailnet's certificate for its MagicDNS name, and passes the requests to one port of the application.\n\n" +
			"qtail renders the `Ingress` into the raw values file of a Helm service whose chart applies the list `manifests` " +
			"(such as `examples/charts/" + cluster.ManifestsChart + "`), in the application's environment (an Ingress reaches " +
			"only Services of its namespace), deploys it and waits for the proxy device. Unlike `qtail_exposed_service`, which " +
			"passes every declared port through as TCP, only the chosen port is reachable, over HTTPS.\n\n" +
			"The plan refuses, before anything is created: a tailnet without HTTPS certificates (the proxy would come up and " +
			"never get a certificate), a port the application does not declare, a hostname that another device or Tailscale " +
			"Service uses, tags the operator's tag does not own, and an environment other than the application's.",
		Attributes: attrs,
	}
}
