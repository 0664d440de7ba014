package manifestservice

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// dnsConfigKind is the DNSConfig: cluster-scoped, one per cluster.
var dnsConfigKind = manifestKind{noun: "DNSConfig", resourceType: "qtail_dns_config", object: manifest.KindDNSConfig, clusterScoped: true,
	servicePrefix: "tailscale-dnsconfig-", renameHint: "the DNSConfig has no device"}

// dnsConfigDefaultName is the name of a DNSConfig that names none, as in
// the operator's example.
const dnsConfigDefaultName = "ts-dns"

type dnsConfigModel struct {
	manifestServiceModel
	Name         types.String `tfsdk:"name"`
	ImageRepo    types.String `tfsdk:"image_repo"`
	ImageTag     types.String `tfsdk:"image_tag"`
	Replicas     types.Int64  `tfsdk:"replicas"`
	ClusterIP    types.String `tfsdk:"cluster_ip"`
	NameserverIP types.String `tfsdk:"nameserver_ip"`
}

// spec returns the DNSConfig of m; its attributes must be known.
func (m *dnsConfigModel) spec() manifest.DNSConfig {
	d := manifest.DNSConfig{
		Name:      m.Name.ValueString(),
		ImageRepo: m.ImageRepo.ValueString(),
		ImageTag:  m.ImageTag.ValueString(),
		ClusterIP: m.ClusterIP.ValueString(),
	}
	if !m.Replicas.IsNull() {
		n := m.Replicas.ValueInt64()
		d.Replicas = &n
	}
	return d
}

// specKnown reports whether every input of the DNSConfig is known.
func (m *dnsConfigModel) specKnown() bool {
	return tfx.AllKnown(m.Name, m.ImageRepo, m.ImageTag, m.Replicas, m.ClusterIP)
}

// render renders the values file of m.
func (m *dnsConfigModel) render() (manifest.DNSConfig, string, diag.Diagnostics) {
	var diags diag.Diagnostics
	d := m.spec()
	values, err := manifest.RenderDNSConfig(d)
	if err != nil {
		diags.AddError("Unable to Render the DNSConfig", err.Error()+". Please report this issue to the qtail developers.")
	}
	return d, values, diags
}

// planNameserverIP plans nameserver_ip: the static cluster IP, the only
// address qtail can know (it reads no Kubernetes object), else null.
func (m *dnsConfigModel) planNameserverIP() {
	switch {
	case m.ClusterIP.IsUnknown():
		m.NameserverIP = types.StringUnknown()
	default:
		m.NameserverIP = m.ClusterIP
	}
}

func (m *dnsConfigModel) renderValues(context.Context) (string, string, diag.Diagnostics) {
	d, values, diags := m.render()
	return d.Name, values, diags
}

func (m *dnsConfigModel) readValues(file, helmID string, diags *diag.Diagnostics) error {
	d, err := manifest.ReadDNSConfig(file)
	if err != nil {
		return err
	}
	name, clusterIP := m.Name, m.ClusterIP
	m.Name = keepReplacing(diags, helmID, "name", name, types.StringValue(d.Name))
	m.ImageRepo = tfx.NullIfEmpty(d.ImageRepo)
	m.ImageTag = tfx.NullIfEmpty(d.ImageTag)
	m.Replicas = types.Int64PointerValue(d.Replicas)
	read := tfx.NullIfEmpty(d.ClusterIP)
	switch {
	case !name.IsNull() && clusterIP.IsNull() && !read.IsNull():
		// keepReplacing takes a null prior for an import.
		diags.AddWarning("Values Edited Outside qtail",
			fmt.Sprintf("The values file of the Helm service %s sets cluster_ip to %s, which the configuration leaves unset. The "+
				"nameserver's Service keeps the IP it was created with, so qtail plans to write the values file back instead.", helmID, read))
		m.ClusterIP = clusterIP
	default:
		m.ClusterIP = keepReplacing(diags, helmID, "cluster_ip", clusterIP, read)
	}
	m.NameserverIP = m.ClusterIP
	return nil
}

func (m *dnsConfigModel) settle() {
	m.nullUnknowns()
	if m.NameserverIP.IsUnknown() {
		m.NameserverIP = m.ClusterIP
		if m.NameserverIP.IsUnknown() {
			m.NameserverIP = types.StringNull()
		}
	}
}
