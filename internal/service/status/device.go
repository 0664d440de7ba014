package status

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
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

func (d *deviceDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_device"
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
