package status

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

func (d *deviceDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A device of the tailnet, found by its hostname: the operator's device or a proxy, for example, to check " +
			"its tags or to use its MagicDNS name and addresses elsewhere. When several devices share the hostname, the connected " +
			"one is chosen, then the one seen last. Reading fails when no device has the hostname.",
		Attributes: map[string]schema.Attribute{
			"hostname": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Hostname of the device (the machine name, not the MagicDNS name).",
				Validators:          []validator.String{tfx.NonBlank()},
			},
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Node ID of the device.",
			},
			"fqdn": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "MagicDNS name of the device, e.g. `billing-api-us-east-1.tail4f2a.ts.net`.",
			},
			"addresses": schema.ListAttribute{
				ElementType:         types.StringType,
				Computed:            true,
				MarkdownDescription: "Tailnet addresses of the device.",
			},
			"tags": schema.SetAttribute{
				ElementType:         types.StringType,
				Computed:            true,
				MarkdownDescription: "Tags of the device; empty for a device owned by a user.",
			},
			"connected": schema.BoolAttribute{
				Computed:            true,
				MarkdownDescription: "Whether the device is connected to the Tailscale control plane.",
			},
		},
	}
}
