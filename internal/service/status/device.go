package status

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ datasource.DataSource              = &deviceDataSource{}
	_ datasource.DataSourceWithConfigure = &deviceDataSource{}
)

// NewDeviceDataSource returns the qtail_device data source.
func NewDeviceDataSource() datasource.DataSource {
	return &deviceDataSource{}
}

type deviceDataSource struct {
	conn.DataSourceBase
}

type deviceDataSourceModel struct {
	Hostname  types.String `tfsdk:"hostname"`
	ID        types.String `tfsdk:"id"`
	FQDN      types.String `tfsdk:"fqdn"`
	Addresses types.List   `tfsdk:"addresses"`
	Tags      types.Set    `tfsdk:"tags"`
	Connected types.Bool   `tfsdk:"connected"`
}

func (d *deviceDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_device"
}

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

func (d *deviceDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m deviceDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	t, diags := d.Clients.Tailnet()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	hostname := m.Hostname.ValueString()
	dev, err := t.FindDeviceByHostname(ctx, hostname)
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "look up the device "+hostname, err)
		return
	}
	if dev == nil {
		resp.Diagnostics.AddAttributeError(path.Root("hostname"), "Device Not Found",
			fmt.Sprintf("The tailnet has no device with the hostname %q. Check the hostname (the machine name, not the MagicDNS name), "+
				"or make this data source depend on the resource that brings the device up.", hostname))
		return
	}
	m.ID = types.StringValue(cluster.DeviceID(dev))
	m.FQDN = types.StringValue(cluster.DeviceFQDN(dev))
	addrs, diags := types.ListValueFrom(ctx, types.StringType, dev.Addresses)
	resp.Diagnostics.Append(diags...)
	tags := dev.Tags
	if tags == nil {
		tags = []string{}
	}
	tagSet, diags := types.SetValueFrom(ctx, types.StringType, tags)
	resp.Diagnostics.Append(diags...)
	m.Addresses, m.Tags = addrs, tagSet
	m.Connected = types.BoolValue(dev.ConnectedToControl)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
