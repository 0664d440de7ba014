package status

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ datasource.DataSource              = &serviceStatusDataSource{}
	_ datasource.DataSourceWithConfigure = &serviceStatusDataSource{}
)

// NewServiceStatusDataSource returns the qtail_service_status data source.
func NewServiceStatusDataSource() datasource.DataSource {
	return &serviceStatusDataSource{}
}

type serviceStatusDataSource struct {
	conn.DataSourceBase
}

func (d *serviceStatusDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_service_status"
}

func (d *serviceStatusDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m serviceStatusModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	t, diags := d.Clients.Tailnet()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	name := m.Name.ValueString()
	hostname := strings.TrimPrefix(name, tailnet.ServicePrefix)
	m.Exists, m.Approved = types.BoolValue(false), types.BoolValue(false)
	m.Tags, m.Addresses = tfx.StringList(nil), tfx.StringList(nil)
	m.Hosts = types.ListValueMust(types.ObjectType{AttrTypes: serviceHostAttrTypes}, nil)
	svc, err := t.FindService(ctx, name)
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "read the Tailscale Service "+name, err)
		return
	}
	if svc == nil {
		m.Missing = tfx.StringList([]string{fmt.Sprintf("The tailnet has no Tailscale Service %s. The operator creates it for an "+
			"exposure through an ingress ProxyGroup at the hostname %s (qtail_exposed_service with proxy_group); check the "+
			"exposure, and that the operator's OAuth client has the services scope.", name, hostname)})
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
		return
	}
	m.Exists = types.BoolValue(true)
	m.Tags, m.Addresses = tfx.StringList(svc.Tags), tfx.StringList(svc.Addrs)
	hosts, err := t.ServiceHosts(ctx, name)
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "read the hosts of the Tailscale Service "+name, err)
		return
	}
	values := make([]attr.Value, 0, len(hosts))
	for _, h := range hosts {
		values = append(values, types.ObjectValueMust(serviceHostAttrTypes, map[string]attr.Value{
			"node_id":  types.StringValue(h.NodeID),
			"hostname": types.StringValue(h.Hostname),
			"approval": types.StringValue(h.Approval),
			"approved": types.BoolValue(h.Approved()),
		}))
	}
	m.Hosts = types.ListValueMust(types.ObjectType{AttrTypes: serviceHostAttrTypes}, values)
	m.Approved = types.BoolValue(slices.ContainsFunc(hosts, tailnet.ServiceHost.Approved))
	m.Missing = tfx.StringList(serviceProblems(ctx, t, svc, hosts))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// serviceProblems says what keeps hosts of the Service svc from carrying
// its traffic, and what to do.
func serviceProblems(ctx context.Context, t *tailnet.Client, svc *tailnet.Service, hosts []tailnet.ServiceHost) []string {
	hostname := strings.TrimPrefix(svc.Name, tailnet.ServicePrefix)
	if len(hosts) == 0 {
		return []string{fmt.Sprintf("No device advertises the Tailscale Service %s: the devices of the ingress ProxyGroup that "+
			"serves it advertise it once they are online. Check the ProxyGroup's replicas and the operator's logs.", svc.Name)}
	}
	unapproved := tailnet.UnapprovedHosts(hosts)
	if len(unapproved) == 0 {
		return nil
	}
	var names, tags []string
	for _, h := range unapproved {
		names = append(names, h.Hostname+" ("+h.NodeID+")")
		if d, err := t.GetDevice(ctx, h.NodeID); err == nil {
			for _, tag := range d.Tags {
				if !slices.Contains(tags, tag) {
					tags = append(tags, tag)
				}
			}
		}
	}
	if len(tags) == 0 {
		tags = []string{cluster.DefaultProxyTag}
	}
	return []string{fmt.Sprintf("The hosts %s advertise the Tailscale Service %s, but are not approved, so they carry none of "+
		"its traffic. Approve the devices tagged %s with an autoApprovers.services entry:\n\n%s\n\nor approve them as hosts of "+
		"%s in the Services page of the admin console.", strings.Join(names, ", "), svc.Name, strings.Join(tags, ", "),
		cluster.ServiceApproverHCL(hostname, tags), svc.Name)}
}
