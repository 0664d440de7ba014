package manifestservice

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

type proxyGroupModel struct {
	manifestServiceModel
	proxyReplicas
	Type          types.String `tfsdk:"type"`
	KubeAPIServer types.Object `tfsdk:"kube_apiserver"`
}

// kubeAPIServerAttrTypes are the attributes of kube_apiserver.
var kubeAPIServerAttrTypes = map[string]attr.Type{"mode": types.StringType}

// kubeAPIServerMode returns kube_apiserver.mode: "" when kube_apiserver is
// null; known is false while it is unknown.
func (m *proxyGroupModel) kubeAPIServerMode() (mode string, known bool) {
	switch {
	case m.KubeAPIServer.IsUnknown():
		return "", false
	case m.KubeAPIServer.IsNull():
		return "", true
	}
	v, ok := m.KubeAPIServer.Attributes()["mode"].(types.String)
	if !ok || v.IsUnknown() {
		return "", false
	}
	return v.ValueString(), true
}

// kubeAPIServerValue is kube_apiserver for mode: null when mode is empty.
func kubeAPIServerValue(mode string) types.Object {
	if mode == "" {
		return types.ObjectNull(kubeAPIServerAttrTypes)
	}
	return types.ObjectValueMust(kubeAPIServerAttrTypes, map[string]attr.Value{"mode": types.StringValue(mode)})
}

// spec returns the ProxyGroup of m; its attributes must be known.
func (m *proxyGroupModel) spec(ctx context.Context) (manifest.ProxyGroup, diag.Diagnostics) {
	var diags diag.Diagnostics
	p := manifest.ProxyGroup{
		Name:           m.Name.ValueString(),
		Type:           m.Type.ValueString(),
		HostnamePrefix: m.HostnamePrefix.ValueString(),
		ProxyClass:     m.ProxyClass.ValueString(),
	}
	p.KubeAPIServerMode, _ = m.kubeAPIServerMode()
	if !m.Replicas.IsNull() {
		n := m.Replicas.ValueInt64()
		p.Replicas = &n
	}
	if !m.Tags.IsNull() {
		diags.Append(m.Tags.ElementsAs(ctx, &p.Tags, false)...)
	}
	return p, diags
}

// specKnown reports whether every input of the ProxyGroup is known.
func (m *proxyGroupModel) specKnown() bool {
	_, modeKnown := m.kubeAPIServerMode()
	return modeKnown && tfx.AllKnown(m.Name, m.Type, m.Replicas, m.HostnamePrefix, m.Tags, m.ProxyClass)
}

// proxyGroupWant is what the ProxyGroup's devices must look like.
func proxyGroupWant(p manifest.ProxyGroup) deviceWant {
	return deviceWant{hostnames: p.DeviceHostnames(), tags: p.DeviceTags(nil), proxyClass: p.ProxyClass}
}

// render renders the values file of m.
func (m *proxyGroupModel) render(ctx context.Context) (manifest.ProxyGroup, string, diag.Diagnostics) {
	p, diags := m.spec(ctx)
	if diags.HasError() {
		return p, "", diags
	}
	values, err := manifest.RenderProxyGroup(p)
	if err != nil {
		diags.AddError("Unable to Render the ProxyGroup", err.Error()+". Please report this issue to the qtail developers.")
	}
	return p, values, diags
}

// fillFromSpec sets the ProxyGroup's attributes from the ProxyGroup read
// back from Qovery. The type stays as the state has it: the CRD makes it
// immutable, so another type in the values is an edit that the cluster
// refuses, and writing the values again undoes it.
func (m *proxyGroupModel) fillFromSpec(p manifest.ProxyGroup, helmID string, diags *diag.Diagnostics) {
	m.Name = types.StringValue(p.Name)
	switch {
	case m.Type.IsNull() || m.Type.IsUnknown():
		m.Type = tfx.NullIfEmpty(p.Type)
	case p.Type != m.Type.ValueString():
		diags.AddWarning("ProxyGroup Type Edited",
			fmt.Sprintf("The values of the Helm service %s give the ProxyGroup %s the type %q, but it was deployed as %q and the "+
				"CRD makes the type immutable, so a deployment of these values fails. qtail plans to write the values back. To "+
				"change the type, change type in the configuration: the ProxyGroup is then replaced.", helmID, p.Name, p.Type, m.Type.ValueString()))
	}
	m.HostnamePrefix = tfx.NullIfEmpty(p.HostnamePrefix)
	replicas := int64(manifest.ProxyGroupDefaultReplicas)
	if p.Replicas != nil {
		replicas = *p.Replicas
	}
	m.Replicas = types.Int64Value(replicas)
	m.ProxyClass = tfx.NullIfEmpty(p.ProxyClass)
	m.KubeAPIServer = kubeAPIServerValue(p.KubeAPIServerMode)
}

func (m *proxyGroupModel) wantedDevices(ctx context.Context) (deviceWant, diag.Diagnostics) {
	spec, diags := m.spec(ctx)
	return proxyGroupWant(spec), diags
}

func (m *proxyGroupModel) renderValues(ctx context.Context) (string, string, diag.Diagnostics) {
	spec, values, diags := m.render(ctx)
	return spec.Name, values, diags
}

func (m *proxyGroupModel) readValues(file, helmID string, diags *diag.Diagnostics) error {
	spec, err := manifest.ReadProxyGroup(file)
	if err != nil {
		return err
	}
	name, tags := m.Name, m.Tags
	m.fillFromSpec(spec, helmID, diags)
	m.Name = keepReplacing(diags, helmID, "name", name, m.Name)
	m.readTags(spec.Tags, tags, helmID, diags)
	return nil
}

func (m *proxyGroupModel) settle() {
	m.nullUnknowns()
	if m.Devices.IsUnknown() {
		m.Devices = types.ListNull(manifestDeviceType)
	}
}
