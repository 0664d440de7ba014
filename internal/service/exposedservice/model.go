package exposedservice

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

type exposedServiceModel struct {
	ID                   types.String   `tfsdk:"id"`
	ApplicationID        types.String   `tfsdk:"application_id"`
	ContainerID          types.String   `tfsdk:"container_id"`
	Hostname             types.String   `tfsdk:"hostname"`
	Tags                 types.Set      `tfsdk:"tags"`
	ProxyGroup           types.String   `tfsdk:"proxy_group"`
	ProxyClass           types.String   `tfsdk:"proxy_class"`
	OperatorID           types.String   `tfsdk:"operator_id"`
	AnnotationsGroupName types.String   `tfsdk:"annotations_group_name"`
	Attach               types.Bool     `tfsdk:"attach"`
	Redeploy             types.Bool     `tfsdk:"redeploy"`
	WaitForDevice        types.Bool     `tfsdk:"wait_for_device"`
	Timeouts             timeouts.Value `tfsdk:"timeouts"`

	OrganizationID     types.String `tfsdk:"organization_id"`
	EnvironmentID      types.String `tfsdk:"environment_id"`
	AnnotationsGroupID types.String `tfsdk:"annotations_group_id"`
	Annotations        types.Map    `tfsdk:"annotations"`
	Attached           types.Bool   `tfsdk:"attached"`
	TailnetFQDN        types.String `tfsdk:"tailnet_fqdn"`
	DeviceID           types.String `tfsdk:"device_id"`
	TailnetIPs         types.List   `tfsdk:"tailnet_ips"`
	Ports              types.List   `tfsdk:"ports"`
}

// exposedPortModel is one declared port of the application.
type exposedPortModel struct {
	Name               types.String `tfsdk:"name"`
	InternalPort       types.Int64  `tfsdk:"internal_port"`
	Protocol           types.String `tfsdk:"protocol"`
	PubliclyAccessible types.Bool   `tfsdk:"publicly_accessible"`
}

var exposedPortType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"name":                types.StringType,
	"internal_port":       types.Int64Type,
	"protocol":            types.StringType,
	"publicly_accessible": types.BoolType,
}}

// planTags returns the tags of a model, sorted, or nil when unset. ok is
// false while they are unknown.
func (m *exposedServiceModel) planTags(ctx context.Context) (tags []string, ok bool, diags diag.Diagnostics) {
	if m.Tags.IsUnknown() {
		return nil, false, nil
	}
	if m.Tags.IsNull() {
		return nil, true, nil
	}
	var elems []types.String
	diags = m.Tags.ElementsAs(ctx, &elems, false)
	for _, e := range elems {
		if e.IsUnknown() {
			return nil, false, diags
		}
		tags = append(tags, e.ValueString())
	}
	sort.Strings(tags)
	return tags, true, diags
}

// desiredAnnotations returns the annotations the group must hold. ok is
// false while an input is unknown.
func (m *exposedServiceModel) desiredAnnotations(ctx context.Context) (map[string]string, bool, diag.Diagnostics) {
	tags, known, diags := m.planTags(ctx)
	if !known || m.Hostname.IsUnknown() || m.ProxyGroup.IsUnknown() || m.ProxyClass.IsUnknown() {
		return nil, false, diags
	}
	ann := map[string]string{
		manifest.AnnotationExpose:   "true",
		manifest.AnnotationHostname: m.Hostname.ValueString(),
	}
	if len(tags) > 0 {
		ann[manifest.AnnotationTags] = strings.Join(tags, ",")
	}
	if v := m.ProxyGroup.ValueString(); v != "" {
		ann[manifest.AnnotationProxyGroup] = v
	}
	if v := m.ProxyClass.ValueString(); v != "" {
		ann[manifest.AnnotationProxyClass] = v
	}
	return ann, true, diags
}

// groupRequest is the annotations group that m describes.
func (m *exposedServiceModel) groupRequest(ctx context.Context) (*qovery.AnnotationsGroupRequest, diag.Diagnostics) {
	ann, known, diags := m.desiredAnnotations(ctx)
	if !known || m.AnnotationsGroupName.IsUnknown() {
		diags.AddError("Unknown Values at Apply Time", "The hostname, tags, proxy group, proxy class or annotations group name of "+
			"the exposure was still unknown when it was applied, which Terraform does not allow. Please report this issue to the qtail developers.")
		return nil, diags
	}
	keys := make([]string, 0, len(ann))
	for k := range ann {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	req := &qovery.AnnotationsGroupRequest{Name: m.AnnotationsGroupName.ValueString(), Scopes: []string{qovery.AnnotationsGroupScopeServices}}
	for _, k := range keys {
		req.Annotations = append(req.Annotations, qovery.Annotation{Key: k, Value: ann[k]})
	}
	return req, diags
}

// expectDevice reports whether a proxy device of its own is expected: qtail
// redeploys and waits for it.
func (m *exposedServiceModel) expectDevice() bool {
	return m.WaitForDevice.ValueBool() && m.Redeploy.ValueBool() && m.ProxyGroup.ValueString() == "" &&
		(m.attaches() || m.Attached.ValueBool())
}

// attaches reports whether qtail attaches the annotations group itself
// (attach, true unless set to false). With false another tool (the Qovery
// provider's annotations_group_ids) attaches it, and qtail expects a
// device only once the group is attached.
func (m *exposedServiceModel) attaches() bool {
	return m.Attach.IsNull() || m.Attach.IsUnknown() || m.Attach.ValueBool()
}

// attachHint is the HCL that attaches the group with the Qovery provider.
func attachHint(w workload) string {
	res := "qovery_application"
	if w.kind == "container" {
		res = "qovery_container"
	}
	return fmt.Sprintf("In the %s resource of %s, list the group:\n\n  annotations_group_ids = [qtail_exposed_service.NAME.annotations_group_id]\n\n"+
		"Its next apply attaches the group and deploys the %s; the operator then creates the proxy device, and the next refresh "+
		"records it.", res, w, w.kind)
}

// fillGroup sets the attributes that an annotations group holds, as Read
// sees them: an annotation edited in the console shows in the plan.
func (m *exposedServiceModel) fillGroup(g *qovery.AnnotationsGroup) diag.Diagnostics {
	var diags diag.Diagnostics
	ann := map[string]string{}
	for _, a := range g.Annotations {
		ann[a.Key] = a.Value
	}
	m.AnnotationsGroupID = types.StringValue(g.ID)
	m.AnnotationsGroupName = types.StringValue(g.Name)
	m.Hostname = types.StringValue(ann[manifest.AnnotationHostname])
	if v, ok := ann[manifest.AnnotationTags]; ok {
		var tags []attr.Value
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				tags = append(tags, types.StringValue(t))
			}
		}
		set, d := types.SetValue(types.StringType, tags)
		diags.Append(d...)
		m.Tags = set
	} else {
		m.Tags = types.SetNull(types.StringType)
	}
	m.ProxyGroup = optionalString(ann, manifest.AnnotationProxyGroup)
	m.ProxyClass = optionalString(ann, manifest.AnnotationProxyClass)
	values := make(map[string]attr.Value, len(ann))
	for k, v := range ann {
		values[k] = types.StringValue(v)
	}
	mv, d := types.MapValue(types.StringType, values)
	diags.Append(d...)
	m.Annotations = mv
	if !slices.Contains(g.Scopes, qovery.AnnotationsGroupScopeServices) {
		// Without the SERVICES scope the operator sees nothing: show it
		// as an annotation to restore.
		m.Annotations = types.MapValueMust(types.StringType, map[string]attr.Value{})
	}
	return diags
}

func optionalString(m map[string]string, key string) types.String {
	if v, ok := m[key]; ok {
		return types.StringValue(v)
	}
	return types.StringNull()
}

// exposedPorts converts the application's ports.
func exposedPorts(ctx context.Context, ports []qovery.ServicePort) (types.List, diag.Diagnostics) {
	elems := make([]exposedPortModel, 0, len(ports))
	for _, p := range ports {
		elems = append(elems, exposedPortModel{
			Name:               types.StringValue(p.Name),
			InternalPort:       types.Int64Value(int64(p.InternalPort)),
			Protocol:           types.StringValue(p.Protocol),
			PubliclyAccessible: types.BoolValue(p.PubliclyAccessible),
		})
	}
	return types.ListValueFrom(ctx, exposedPortType, elems)
}

// fillDevice sets the device attributes; a nil device clears them.
func (m *exposedServiceModel) fillDevice(ctx context.Context, d *tailnet.Device) diag.Diagnostics {
	if d == nil {
		m.DeviceID = types.StringNull()
		m.TailnetFQDN = types.StringNull()
		m.TailnetIPs = types.ListNull(types.StringType)
		return nil
	}
	m.DeviceID = types.StringValue(cluster.DeviceID(d))
	m.TailnetFQDN = types.StringValue(cluster.DeviceFQDN(d))
	ips, diags := types.ListValueFrom(ctx, types.StringType, d.Addresses)
	m.TailnetIPs = ips
	return diags
}

// settle replaces the unknown values of m by nulls, for a state saved after
// a failure.
func (m *exposedServiceModel) settle() {
	strs := []*types.String{&m.ID, &m.OrganizationID, &m.EnvironmentID, &m.AnnotationsGroupID, &m.AnnotationsGroupName, &m.TailnetFQDN, &m.DeviceID}
	for _, s := range strs {
		if s.IsUnknown() {
			*s = types.StringNull()
		}
	}
	if m.Annotations.IsUnknown() {
		m.Annotations = types.MapNull(types.StringType)
	}
	if m.Attached.IsUnknown() {
		m.Attached = types.BoolValue(false)
	}
	if m.TailnetIPs.IsUnknown() {
		m.TailnetIPs = types.ListNull(types.StringType)
	}
	if m.Ports.IsUnknown() {
		m.Ports = types.ListNull(exposedPortType)
	}
}

// tagsMatch reports whether a device carries exactly the wanted
// tags; with no tags wanted (the operator's default), any tagged device
// matches.
func tagsMatch(have, want []string) bool {
	if len(want) == 0 {
		return len(have) > 0
	}
	if len(have) != len(want) {
		return false
	}
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, w) }) {
			return false
		}
	}
	return true
}
