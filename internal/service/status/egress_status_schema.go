package status

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

func (d *egressStatusDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Whether the workloads of a cluster can reach the tailnet machine of a `qtail_egress_service`, " +
			"port by port, and what to do when they cannot.\n\n" +
			"An egress Service sends traffic through a proxy of the operator: a device with the operator's default proxy tags " +
			"(`tag:k8s` unless `proxy_default_tags` of the `qtail_operator` says otherwise), or the devices of the `ProxyGroup` " +
			"it names. So the target must be on the tailnet, and the policy file must let those tags reach it on " +
			"each port of the Service. qtail asks Tailscale itself: it runs one policy test per source tag against the current " +
			"policy file (`POST /acl/validate` with a list of tests, which changes nothing), one call per protocol.\n\n" +
			"Reading costs the egress service's Helm service; when `source_tags` is not set, the Helm services of its " +
			"environment (for a ProxyGroup) or the lookup of its cluster's operator (the organization's projects, environments " +
			"and Helm services); one list of devices; and the tests.",
		Attributes: map[string]schema.Attribute{
			"egress_service_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "ID of a `qtail_egress_service` (its Qovery Helm service).",
				Validators:          []validator.String{tfx.QoveryID()},
			},
			"source_tags": schema.ListAttribute{
				ElementType: types.StringType,
				Optional:    true,
				Computed:    true,
				MarkdownDescription: "Tags of the egress proxy, from which the target must be reachable. Default: the tags of the " +
					"`ProxyGroup` named by the Service's `tailscale.com/proxy-group` annotation when a Helm service of the same " +
					"environment renders it, otherwise the tags of the Service's own proxy (`tags` of the `qtail_egress_service`); " +
					"either defaults to the default proxy tags of the operator of the Service's cluster (`[\"tag:k8s\"]` when " +
					"qtail finds no operator), as the operator does.",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(tfx.Tag()),
				},
			},
			"target": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The tailnet machine the Service points at: its MagicDNS name (`tailscale.com/tailnet-fqdn`) or IP (`tailscale.com/tailnet-ip`).",
			},
			"target_device_id": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Node ID of the target device: the device whose MagicDNS name is the target (a trailing dot " +
					"ignored), or which holds the target IP. Null when there is none, which includes an IP reached through a subnet router.",
			},
			"target_addresses": schema.ListAttribute{
				ElementType:         types.StringType,
				Computed:            true,
				MarkdownDescription: "Tailnet addresses of the target device; empty when there is none.",
			},
			"ports": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The ports of the Service, in order.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"port": schema.StringAttribute{
						Computed:            true,
						MarkdownDescription: "The port, as `tcp:5432`.",
					},
					"allowed": schema.BoolAttribute{
						Computed:            true,
						MarkdownDescription: "Whether the policy file lets every source tag reach the target on this port (false when the target is not on the tailnet).",
					},
				}},
			},
			"allowed": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether the target is on the tailnet and every port is allowed. For a Service without ports, " +
					"only whether the target is on the tailnet.",
			},
			"missing": schema.ListAttribute{
				ElementType: types.StringType,
				Computed:    true,
				MarkdownDescription: "One sentence per problem (the target not on the tailnet, a source tag that may not reach it " +
					"on a port), each saying what to do. Empty when `allowed` is true.",
			},
		},
	}
}
