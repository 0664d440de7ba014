package manifestservice

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

type ingressModel struct {
	manifestServiceModel
	ApplicationID types.String `tfsdk:"application_id"`
	Hostname      types.String `tfsdk:"hostname"`
	BackendPort   types.Int64  `tfsdk:"backend_port"`
	Tags          types.List   `tfsdk:"tags"`
	ProxyGroup    types.String `tfsdk:"proxy_group"`
	WaitForDevice types.Bool   `tfsdk:"wait_for_device"`
	TailnetFQDN   types.String `tfsdk:"tailnet_fqdn"`
	URL           types.String `tfsdk:"url"`
	Devices       types.List   `tfsdk:"devices"`

	// backendService is the backend Service the values read back name:
	// an import finds the application by it.
	backendService string
}

// specKnown reports whether every input of the Ingress is known.
func (m *ingressModel) specKnown() bool {
	return tfx.AllKnown(m.ApplicationID, m.Hostname, m.BackendPort, m.Tags, m.ProxyGroup)
}

// spec returns the Ingress of m; its attributes must be known.
func (m *ingressModel) spec(ctx context.Context) (manifest.Ingress, diag.Diagnostics) {
	var diags diag.Diagnostics
	g := manifest.Ingress{
		Name:           m.Hostname.ValueString(),
		Hostname:       m.Hostname.ValueString(),
		BackendService: manifest.ApplicationServiceName(m.ApplicationID.ValueString()),
		BackendPort:    m.BackendPort.ValueInt64(),
		ProxyGroup:     m.ProxyGroup.ValueString(),
	}
	if !m.Tags.IsNull() {
		diags.Append(m.Tags.ElementsAs(ctx, &g.Tags, false)...)
	}
	return g, diags
}

func (m *ingressModel) renderValues(ctx context.Context) (string, string, diag.Diagnostics) {
	g, diags := m.spec(ctx)
	if diags.HasError() {
		return g.Name, "", diags
	}
	values, err := manifest.RenderIngress(g)
	if err != nil {
		diags.AddError("Unable to Render the Ingress", err.Error()+". Please report this issue to the qtail developers.")
	}
	return g.Name, values, diags
}

// readValues sets the attributes from the Ingress read back from Qovery.
// The application stays the state's: the values name only its Service.
func (m *ingressModel) readValues(file, helmID string, diags *diag.Diagnostics) error {
	g, err := manifest.ReadIngress(file)
	if err != nil {
		return err
	}
	hostname, tags := m.Hostname, m.Tags
	m.Hostname = keepReplacing(diags, helmID, "hostname", hostname, types.StringValue(g.Hostname))
	read := types.ListNull(types.StringType)
	if len(g.Tags) > 0 {
		read = tfx.StringList(g.Tags)
	}
	if !hostname.IsNull() {
		read = keepReplacing(diags, helmID, "tags", tags, read)
	}
	m.Tags = read
	m.ProxyGroup = keepReplacing(diags, helmID, "proxy_group", m.ProxyGroup, tfx.NullIfEmpty(g.ProxyGroup))
	m.BackendPort = types.Int64Value(g.BackendPort)
	m.backendService = g.BackendService
	return nil
}

func (m *ingressModel) settle() {
	m.nullUnknowns()
	if m.Devices.IsUnknown() {
		m.Devices = types.ListNull(manifestDeviceType)
	}
	if m.TailnetFQDN.IsUnknown() {
		m.TailnetFQDN = types.StringNull()
	}
	if m.URL.IsUnknown() {
		m.URL = types.StringNull()
	}
}

func (m *ingressModel) waitsForDevices() bool    { return m.WaitForDevice.ValueBool() }
func (m *ingressModel) devicesAttr() *types.List { return &m.Devices }

// wantedDevices is the proxy device: named hostname, with the tags when
// set (any tags otherwise: the operator's proxy tags).
func (m *ingressModel) wantedDevices(ctx context.Context) (deviceWant, diag.Diagnostics) {
	var diags diag.Diagnostics
	w := deviceWant{}
	if !m.Hostname.IsUnknown() && !m.Hostname.IsNull() && m.ProxyGroup.IsNull() {
		w.hostnames = []string{m.Hostname.ValueString()}
	}
	if !m.Tags.IsUnknown() && !m.Tags.IsNull() {
		diags.Append(m.Tags.ElementsAs(ctx, &w.tags, false)...)
	}
	return w, diags
}

// throughProxyGroup reports whether an ingress ProxyGroup serves the
// Ingress.
func (m *ingressModel) throughProxyGroup() bool {
	return !m.ProxyGroup.IsNull() && !m.ProxyGroup.IsUnknown()
}

// setAddress sets tailnet_fqdn and url from the proxy device, or to null
// without one.
func (m *ingressModel) setAddress(d *tailnet.Device) {
	if d == nil {
		m.TailnetFQDN, m.URL = types.StringNull(), types.StringNull()
		return
	}
	fqdn := cluster.DeviceFQDN(d)
	m.TailnetFQDN = types.StringValue(fqdn)
	m.URL = types.StringValue(ingressURL(fqdn))
}

// ingressURL is the address of an Ingress whose proxy has the MagicDNS
// name fqdn: HTTPS on the default port.
func ingressURL(fqdn string) string { return fmt.Sprintf("https://%s/", fqdn) }
