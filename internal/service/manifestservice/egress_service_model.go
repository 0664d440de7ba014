package manifestservice

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

type egressServiceModel struct {
	manifestServiceModel
	Name           types.String `tfsdk:"name"`
	TailnetFQDN    types.String `tfsdk:"tailnet_fqdn"`
	TailnetIP      types.String `tfsdk:"tailnet_ip"`
	Ports          types.List   `tfsdk:"ports"`
	ProxyGroup     types.String `tfsdk:"proxy_group"`
	Hostname       types.String `tfsdk:"hostname"`
	Tags           types.List   `tfsdk:"tags"`
	ProxyClass     types.String `tfsdk:"proxy_class"`
	WaitForDevice  types.Bool   `tfsdk:"wait_for_device"`
	Namespace      types.String `tfsdk:"namespace"`
	ClusterDNSName types.String `tfsdk:"cluster_dns_name"`
	ProxyHostname  types.String `tfsdk:"proxy_hostname"`
	ProxyTags      types.List   `tfsdk:"proxy_tags"`
	Devices        types.List   `tfsdk:"devices"`
}

// The namespace of an egress Service is the namespace Qovery deploys the
// environment's services to. Qovery's API has no namespace field on
// environments, but every service sees it in a built-in variable (the
// Qovery console reads it there too).
const namespaceVariable = "QOVERY_KUBERNETES_NAMESPACE_NAME"

// clusterDomain is the DNS domain of the clusters Qovery runs.
const clusterDomain = "svc.cluster.local"

// parseServicePort reads a port written as "tcp:5432" (the inverse of
// manifest.ServicePort.String).
func parseServicePort(s string) (manifest.ServicePort, error) {
	proto, num, ok := strings.Cut(s, ":")
	if !ok {
		return manifest.ServicePort{}, fmt.Errorf("give the protocol and the port, such as tcp:%s", s)
	}
	switch proto {
	case "tcp", "udp":
	case "TCP", "UDP":
		return manifest.ServicePort{}, fmt.Errorf("write the protocol in lower case: %s:%s", strings.ToLower(proto), num)
	default:
		return manifest.ServicePort{}, fmt.Errorf("the protocol %q is not tcp or udp, the protocols an egress proxy forwards", proto)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 1 || n > 65535 {
		return manifest.ServicePort{}, fmt.Errorf("the port %q is not a number from 1 to 65535", num)
	}
	if strconv.FormatInt(n, 10) != num {
		return manifest.ServicePort{}, fmt.Errorf("write the port without sign or leading zeros: %s:%d", proto, n)
	}
	return manifest.ServicePort{Port: n, Protocol: strings.ToUpper(proto)}, nil
}

// specKnown reports whether every input of the Service is known.
func (m *egressServiceModel) specKnown() bool {
	return tfx.AllKnown(m.Name, m.TailnetFQDN, m.TailnetIP, m.Ports, m.ProxyGroup, m.Hostname, m.Tags, m.ProxyClass)
}

// ownProxy reports whether the operator runs a proxy of the Service's own:
// it goes through no ProxyGroup.
func (m *egressServiceModel) ownProxy() bool { return m.ProxyGroup.IsNull() }

// render renders the values file of m, whose attributes must be known.
func (m *egressServiceModel) render(ctx context.Context) (manifest.EgressService, string, diag.Diagnostics) {
	var diags diag.Diagnostics
	e := manifest.EgressService{
		Name:        m.Name.ValueString(),
		TailnetFQDN: m.TailnetFQDN.ValueString(),
		TailnetIP:   m.TailnetIP.ValueString(),
		ProxyGroup:  m.ProxyGroup.ValueString(),
		Hostname:    m.Hostname.ValueString(),
		ProxyClass:  m.ProxyClass.ValueString(),
	}
	if !m.Tags.IsNull() {
		diags.Append(m.Tags.ElementsAs(ctx, &e.Tags, false)...)
	}
	var ports []string
	if !m.Ports.IsNull() {
		diags.Append(m.Ports.ElementsAs(ctx, &ports, false)...)
	}
	for _, s := range ports {
		p, err := parseServicePort(s)
		if err != nil {
			diags.AddAttributeError(path.Root("ports"), "Invalid Port", fmt.Sprintf("%q: %v.", s, err))
			continue
		}
		e.Ports = append(e.Ports, p)
	}
	if diags.HasError() {
		return e, "", diags
	}
	values, err := manifest.RenderEgressService(e)
	if err != nil {
		diags.AddError("Unable to Render the Egress Service", err.Error()+". Please report this issue to the qtail developers.")
	}
	return e, values, diags
}

// fillFromSpec sets the attributes from the Service read back from Qovery.
func (m *egressServiceModel) fillFromSpec(e manifest.EgressService) {
	m.Name = types.StringValue(e.Name)
	m.TailnetFQDN = tfx.NullIfEmpty(e.TailnetFQDN)
	m.TailnetIP = tfx.NullIfEmpty(e.TailnetIP)
	m.ProxyGroup = tfx.NullIfEmpty(e.ProxyGroup)
	m.Hostname = tfx.NullIfEmpty(e.Hostname)
	m.ProxyClass = tfx.NullIfEmpty(e.ProxyClass)
	m.Tags = types.ListNull(types.StringType)
	if len(e.Tags) > 0 {
		m.Tags = tfx.StringList(e.Tags)
	}
	if len(e.Ports) == 0 {
		m.Ports = types.ListNull(types.StringType)
		return
	}
	ports := make([]string, len(e.Ports))
	for i, p := range e.Ports {
		ports[i] = p.String()
	}
	m.Ports = tfx.StringList(ports)
}

// setNamespace sets the namespace and the DNS name that follows from it.
func (m *egressServiceModel) setNamespace(ns types.String) {
	m.Namespace = ns
	switch {
	case m.Name.IsUnknown() || ns.IsUnknown():
		m.ClusterDNSName = types.StringUnknown()
	case m.Name.IsNull() || ns.IsNull():
		m.ClusterDNSName = types.StringNull()
	default:
		m.ClusterDNSName = types.StringValue(m.Name.ValueString() + "." + ns.ValueString() + "." + clusterDomain)
	}
	m.setProxyHostname()
}

// setProxyHostname sets proxy_hostname from hostname, or from the
// namespace and the name (NAMESPACE-NAME, as the operator names the
// proxy); null with a ProxyGroup.
func (m *egressServiceModel) setProxyHostname() {
	switch {
	case m.ProxyGroup.IsUnknown():
		m.ProxyHostname = types.StringUnknown()
	case !m.ownProxy():
		m.ProxyHostname = types.StringNull()
	case !m.Hostname.IsNull():
		m.ProxyHostname = m.Hostname
	case m.Name.IsUnknown() || m.Namespace.IsUnknown():
		m.ProxyHostname = types.StringUnknown()
	case m.Name.IsNull() || m.Namespace.IsNull():
		m.ProxyHostname = types.StringNull()
	default:
		m.ProxyHostname = types.StringValue(manifest.EgressService{Name: m.Name.ValueString()}.ProxyHostname(m.Namespace.ValueString()))
	}
}

// nullUnknowns replaces the unknown computed values by null, so that a
// partial state can be saved.
func (m *egressServiceModel) nullUnknowns() {
	m.manifestServiceModel.nullUnknowns()
	if m.Namespace.IsUnknown() {
		m.setNamespace(types.StringNull())
	}
	if m.ClusterDNSName.IsUnknown() {
		m.ClusterDNSName = types.StringNull()
	}
	if m.ProxyHostname.IsUnknown() {
		m.ProxyHostname = types.StringNull()
	}
	if m.ProxyTags.IsUnknown() {
		m.ProxyTags = types.ListNull(types.StringType)
	}
	if m.Devices.IsUnknown() {
		m.Devices = types.ListNull(manifestDeviceType)
	}
}

// namespaceFrom finds the environment's namespace among the variables a
// service or an environment sees.
func namespaceFrom(vars []qovery.Variable) (string, bool) {
	for _, v := range vars {
		// Qovery names both the scope and the type of a built-in
		// variable BUILT_IN.
		if v.Key == namespaceVariable && (v.Scope == qovery.VariableScopeBuiltIn || v.VariableType == qovery.VariableScopeBuiltIn) &&
			v.Value != nil && *v.Value != "" {
			return *v.Value, true
		}
	}
	return "", false
}

func (m *egressServiceModel) waitsForDevices() bool {
	return m.WaitForDevice.ValueBool() && m.ownProxy() && !m.ProxyHostname.IsNull()
}

func (m *egressServiceModel) devicesAttr() *types.List { return &m.Devices }

// wantedDevices is the egress proxy device: named proxy_hostname (when
// known), tagged proxy_tags (any tags while unknown).
func (m *egressServiceModel) wantedDevices(ctx context.Context) (deviceWant, diag.Diagnostics) {
	w := deviceWant{proxyClass: m.ProxyClass.ValueString()}
	var diags diag.Diagnostics
	if !m.ownProxy() {
		return w, diags
	}
	if !m.ProxyHostname.IsUnknown() && !m.ProxyHostname.IsNull() {
		w.hostnames = []string{m.ProxyHostname.ValueString()}
	}
	if !m.ProxyTags.IsUnknown() && !m.ProxyTags.IsNull() {
		diags.Append(m.ProxyTags.ElementsAs(ctx, &w.tags, false)...)
	}
	return w, diags
}

func (m *egressServiceModel) renderValues(ctx context.Context) (string, string, diag.Diagnostics) {
	spec, values, diags := m.render(ctx)
	return spec.Name, values, diags
}

func (m *egressServiceModel) readValues(file, helmID string, diags *diag.Diagnostics) error {
	spec, err := manifest.ReadEgressService(file)
	if err != nil {
		return err
	}
	name, tags := m.Name, m.Tags
	m.fillFromSpec(spec)
	m.Name = keepReplacing(diags, helmID, "name", name, m.Name)
	if !name.IsNull() {
		m.Tags = keepReplacing(diags, helmID, "tags", tags, m.Tags)
	}
	return nil
}

func (m *egressServiceModel) settle() { m.nullUnknowns() }
