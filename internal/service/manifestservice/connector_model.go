package manifestservice

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

type connectorModel struct {
	manifestServiceModel
	proxyReplicas
	Hostname       types.String `tfsdk:"hostname"`
	SubnetRoutes   types.List   `tfsdk:"subnet_routes"`
	ExitNode       types.Bool   `tfsdk:"exit_node"`
	ApproveRoutes  types.Bool   `tfsdk:"approve_routes"`
	RoutesApproved types.Bool   `tfsdk:"routes_approved"`
}

// spec returns the Connector of m; its attributes must be known.
func (m *connectorModel) spec(ctx context.Context) (manifest.Connector, diag.Diagnostics) {
	var diags diag.Diagnostics
	c := manifest.Connector{
		Name:           m.Name.ValueString(),
		Hostname:       m.Hostname.ValueString(),
		HostnamePrefix: m.HostnamePrefix.ValueString(),
		ExitNode:       m.ExitNode.ValueBool(),
		ProxyClass:     m.ProxyClass.ValueString(),
	}
	if !m.Replicas.IsNull() {
		n := m.Replicas.ValueInt64()
		c.Replicas = &n
	}
	if !m.SubnetRoutes.IsNull() {
		diags.Append(m.SubnetRoutes.ElementsAs(ctx, &c.SubnetRoutes, false)...)
	}
	if !m.Tags.IsNull() {
		diags.Append(m.Tags.ElementsAs(ctx, &c.Tags, false)...)
	}
	return c, diags
}

// specKnown reports whether every input of the Connector is known.
func (m *connectorModel) specKnown() bool {
	return tfx.AllKnown(m.Name, m.Hostname, m.HostnamePrefix, m.Replicas, m.SubnetRoutes, m.ExitNode, m.Tags, m.ProxyClass)
}

// want is what the connector's devices must look like.
func connectorWant(c manifest.Connector) deviceWant {
	return deviceWant{hostnames: c.DeviceHostnames(), tags: c.DeviceTags(nil), routes: c.AdvertisedRoutes(), proxyClass: c.ProxyClass}
}

// render renders the values file of m.
func (m *connectorModel) render(ctx context.Context) (manifest.Connector, string, diag.Diagnostics) {
	c, diags := m.spec(ctx)
	if diags.HasError() {
		return c, "", diags
	}
	values, err := manifest.RenderConnector(c)
	if err != nil {
		diags.AddError("Unable to Render the Connector", err.Error()+". Please report this issue to the qtail developers.")
	}
	return c, values, diags
}

// fillFromSpec sets the connector's attributes from the Connector read back
// from Qovery.
func (m *connectorModel) fillFromSpec(c manifest.Connector) {
	m.Name = types.StringValue(c.Name)
	m.Hostname = tfx.NullIfEmpty(c.Hostname)
	m.HostnamePrefix = tfx.NullIfEmpty(c.HostnamePrefix)
	replicas := int64(1)
	if c.Replicas != nil {
		replicas = *c.Replicas
	}
	m.Replicas = types.Int64Value(replicas)
	if len(c.SubnetRoutes) == 0 {
		m.SubnetRoutes = types.ListNull(types.StringType)
	} else {
		m.SubnetRoutes = tfx.StringList(c.SubnetRoutes)
	}
	m.ExitNode = types.BoolValue(c.ExitNode)
	m.ProxyClass = tfx.NullIfEmpty(c.ProxyClass)
}

func (m *connectorModel) wantedDevices(ctx context.Context) (deviceWant, diag.Diagnostics) {
	spec, diags := m.spec(ctx)
	return connectorWant(spec), diags
}

func (m *connectorModel) renderValues(ctx context.Context) (string, string, diag.Diagnostics) {
	spec, values, diags := m.render(ctx)
	return spec.Name, values, diags
}

func (m *connectorModel) readValues(file, helmID string, diags *diag.Diagnostics) error {
	spec, err := manifest.ReadConnector(file)
	if err != nil {
		return err
	}
	name, tags := m.Name, m.Tags
	m.fillFromSpec(spec)
	m.Name = keepReplacing(diags, helmID, "name", name, m.Name)
	m.readTags(spec.Tags, tags, helmID, diags)
	return nil
}

func (m *connectorModel) settle() {
	m.nullUnknowns()
	if m.Devices.IsUnknown() {
		m.Devices = types.ListNull(manifestDeviceType)
	}
	if m.RoutesApproved.IsUnknown() {
		m.RoutesApproved = types.BoolValue(false)
	}
}
