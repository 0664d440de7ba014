package manifestservice

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// A manifest service is a Qovery Helm service whose chart (tailnet-manifests
// or one like it) applies the Kubernetes objects listed under `manifests` in
// its values. qtail_connector, qtail_proxy_group and qtail_egress_service
// are manifest services: each renders one object into the raw values file
// manifest.ManifestsFileName, deploys the service and waits.

// manifestServiceModel holds the attributes every manifest service has.
// Resource models embed it.
type manifestServiceModel struct {
	ID                          types.String   `tfsdk:"id"`
	EnvironmentID               types.String   `tfsdk:"environment_id"`
	OperatorID                  types.String   `tfsdk:"operator_id"`
	Chart                       types.Object   `tfsdk:"chart"`
	HelmServiceName             types.String   `tfsdk:"helm_service_name"`
	Values                      types.String   `tfsdk:"values"`
	ClusterWideResourcesAllowed types.Bool     `tfsdk:"cluster_wide_resources_allowed"`
	Deployed                    types.Bool     `tfsdk:"deployed"`
	Timeouts                    timeouts.Value `tfsdk:"timeouts"`
}

// shared returns the attributes every manifest service has: the models
// embed them.
func (m *manifestServiceModel) shared() *manifestServiceModel { return m }

// proxyReplicas are the attributes of a Connector or a ProxyGroup: an
// object whose proxies the operator runs as replicas, one device each on
// the tailnet.
type proxyReplicas struct {
	Name           types.String `tfsdk:"name"`
	HostnamePrefix types.String `tfsdk:"hostname_prefix"`
	Replicas       types.Int64  `tfsdk:"replicas"`
	Tags           types.List   `tfsdk:"tags"`
	ProxyClass     types.String `tfsdk:"proxy_class"`
	WaitForDevices types.Bool   `tfsdk:"wait_for_devices"`
	Devices        types.List   `tfsdk:"devices"`

	// untagged is set when the object read back from Qovery names no
	// tags: its devices carry the operator's proxy tags, which
	// serviceBase.resolveTags looks up. priorTags are the tags the state
	// had before the read.
	untagged  bool
	priorTags types.List
}

// readTags sets the tags from the object read back from Qovery: its own,
// or, when it names none, the state's until resolveTags looks up the
// operator's proxy tags.
func (m *proxyReplicas) readTags(tags []string, prior types.List, helmID string, diags *diag.Diagnostics) {
	if len(tags) > 0 {
		m.Tags = keepReplacing(diags, helmID, "tags", prior, tfx.StringList(tags))
		return
	}
	m.untagged, m.priorTags, m.Tags = true, prior, prior
}

// replicas returns the attributes of the replicas: the models embed them.
func (m *proxyReplicas) replicas() *proxyReplicas { return m }

// waitsForDevices is wait_for_devices.
func (m *proxyReplicas) waitsForDevices() bool { return m.WaitForDevices.ValueBool() }

// devicesAttr is the `devices` attribute.
func (m *proxyReplicas) devicesAttr() *types.List { return &m.Devices }

// manifestChart is where the chart comes from: exactly one of the two.
type manifestChart struct {
	HelmRepository *manifestHelmChart `tfsdk:"helm_repository"`
	GitRepository  *manifestGitChart  `tfsdk:"git_repository"`
}

type manifestHelmChart struct {
	RepositoryID types.String `tfsdk:"repository_id"`
	ChartName    types.String `tfsdk:"chart_name"`
	ChartVersion types.String `tfsdk:"chart_version"`
}

type manifestGitChart struct {
	URL        types.String `tfsdk:"url"`
	Branch     types.String `tfsdk:"branch"`
	RootPath   types.String `tfsdk:"root_path"`
	GitTokenID types.String `tfsdk:"git_token_id"`
}

var (
	manifestHelmChartType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"repository_id": types.StringType, "chart_name": types.StringType, "chart_version": types.StringType,
	}}
	manifestGitChartType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"url": types.StringType, "branch": types.StringType, "root_path": types.StringType, "git_token_id": types.StringType,
	}}
	manifestChartType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"helm_repository": manifestHelmChartType, "git_repository": manifestGitChartType,
	}}
)

// manifestKind describes one kind of manifest service for schemas and
// messages.
type manifestKind struct {
	// noun names the object in messages: "connector".
	noun string
	// resourceType is the Terraform resource type: "qtail_connector".
	resourceType string
	// object is the Kubernetes kind: "Connector".
	object string
	// clusterScoped objects need cluster-wide resources allowed.
	clusterScoped bool
	// servicePrefix starts the name of the Helm service.
	servicePrefix string
	// renameHint says how to give the devices of another object of the
	// kind other hostnames.
	renameHint string
	// operatorDefaultClass is set when the operator applies its default
	// ProxyClass to an object of the kind that names none (not to
	// Connectors).
	operatorDefaultClass bool
}

var (
	connectorKind = manifestKind{noun: "connector", resourceType: "qtail_connector", object: manifest.KindConnector, clusterScoped: true,
		servicePrefix: "tailscale-connector-", renameHint: "choose another hostname or hostname_prefix"}
	proxyGroupKind = manifestKind{noun: "ProxyGroup", resourceType: "qtail_proxy_group", object: manifest.KindProxyGroup, clusterScoped: true,
		servicePrefix: "tailscale-proxygroup-", renameHint: "give each ProxyGroup its own hostname_prefix", operatorDefaultClass: true}
	egressKind = manifestKind{noun: "egress Service", resourceType: "qtail_egress_service", object: manifest.KindService, clusterScoped: false, servicePrefix: "tailscale-egress-",
		renameHint: "set hostname to another name", operatorDefaultClass: true}
)

// serviceName is the name of the Helm service of the object name.
func (k manifestKind) serviceName(name string) string { return k.servicePrefix + name }

// keepReplacing returns prior, the state's value of an attribute that
// forces a replacement, when the values file read back from Qovery (read)
// says otherwise: that is an edit in the console, which writing the values
// file back undoes, not a new configuration worth a replacement. A null
// prior (an import) takes read.
func keepReplacing[V attr.Value](diags *diag.Diagnostics, helmID, name string, prior, read V) V {
	if prior.IsNull() || prior.IsUnknown() || prior.Equal(read) {
		return read
	}
	diags.AddWarning("Values Edited Outside qtail",
		fmt.Sprintf("The values file of the Helm service %s sets %s to %s, not %s. Changing %s replaces the resource, so qtail "+
			"plans to write the values file back instead. To change it, change %s in the configuration.",
			helmID, name, read, prior, name, name))
	return prior
}

// chart returns the chart source of m, known false when it is not known yet.
func (m *manifestServiceModel) chart(ctx context.Context) (manifestChart, bool, diag.Diagnostics) {
	var c manifestChart
	if m.Chart.IsNull() || m.Chart.IsUnknown() {
		return c, false, nil
	}
	diags := m.Chart.As(ctx, &c, basetypes.ObjectAsOptions{UnhandledUnknownAsEmpty: true})
	if diags.HasError() {
		return c, false, diags
	}
	known := true
	if h := c.HelmRepository; h != nil {
		known = !h.RepositoryID.IsUnknown() && !h.ChartName.IsUnknown() && !h.ChartVersion.IsUnknown()
	}
	if g := c.GitRepository; g != nil {
		// The branch may be unknown until Qovery names the default one.
		known = !g.URL.IsUnknown() && !g.RootPath.IsUnknown() && !g.GitTokenID.IsUnknown()
	}
	return c, known, diags
}

// chartObject turns a chart source into the attribute's value.
func chartObject(ctx context.Context, c manifestChart) (types.Object, diag.Diagnostics) {
	return types.ObjectValueFrom(ctx, manifestChartType.AttrTypes, c)
}

// sourceRequest is the Helm service's source for chart c.
func (c manifestChart) sourceRequest() qovery.HelmSourceRequest {
	if h := c.HelmRepository; h != nil {
		return qovery.HelmSourceRequest{HelmRepository: &qovery.HelmRepositorySourceRequest{
			Repository:   h.RepositoryID.ValueString(),
			ChartName:    h.ChartName.ValueString(),
			ChartVersion: h.ChartVersion.ValueString(),
		}}
	}
	g := c.GitRepository
	src := &qovery.GitRepository{URL: g.URL.ValueString(), RootPath: g.RootPath.ValueString()}
	if !g.Branch.IsNull() && !g.Branch.IsUnknown() {
		src.Branch = g.Branch.ValueString()
	}
	if !g.GitTokenID.IsNull() && !g.GitTokenID.IsUnknown() {
		id := g.GitTokenID.ValueString()
		src.GitTokenID = &id
	}
	return qovery.HelmSourceRequest{GitRepository: src}
}

// chartFromHelm reads the chart source of a Helm service. prior keeps the
// URL as the configuration writes it when Qovery's differs only by a
// trailing ".git".
func chartFromHelm(h *qovery.Helm, prior manifestChart) manifestChart {
	switch {
	case h.Source.Repository != nil:
		r := h.Source.Repository
		return manifestChart{HelmRepository: &manifestHelmChart{
			RepositoryID: types.StringValue(r.Repository.ID),
			ChartName:    types.StringValue(r.ChartName),
			ChartVersion: types.StringValue(r.ChartVersion),
		}}
	case h.Source.Git != nil:
		g := h.Source.Git.GitRepository
		out := &manifestGitChart{URL: types.StringValue(g.URL), Branch: types.StringNull(), RootPath: types.StringValue(g.RootPath),
			GitTokenID: types.StringNull()}
		if g.Branch != "" {
			out.Branch = types.StringValue(g.Branch)
		}
		if out.RootPath.ValueString() == "" {
			out.RootPath = types.StringValue("/")
		}
		if g.GitTokenID != nil {
			out.GitTokenID = types.StringValue(*g.GitTokenID)
		}
		if p := prior.GitRepository; p != nil && strings.TrimSuffix(p.URL.ValueString(), ".git") == strings.TrimSuffix(g.URL, ".git") {
			out.URL = p.URL
		}
		return manifestChart{GitRepository: out}
	}
	return manifestChart{}
}

// recordChart sets the chart attribute from the Helm service Qovery
// returned, which names the default branch when none was given.
func (m *manifestServiceModel) recordChart(ctx context.Context, h *qovery.Helm) {
	prior, _, _ := m.chart(ctx)
	c := chartFromHelm(h, prior)
	if c.GitRepository == nil && c.HelmRepository == nil {
		return
	}
	if obj, d := chartObject(ctx, c); !d.HasError() {
		m.Chart = obj
	}
}

// nullUnknowns replaces the unknown computed values by null, so that a
// partial state can be saved.
func (m *manifestServiceModel) nullUnknowns() {
	for _, s := range []*types.String{&m.ID, &m.Values, &m.HelmServiceName} {
		if s.IsUnknown() {
			*s = types.StringNull()
		}
	}
	if m.ClusterWideResourcesAllowed.IsUnknown() {
		m.ClusterWideResourcesAllowed = types.BoolNull()
	}
	if m.Deployed.IsUnknown() {
		m.Deployed = types.BoolValue(false)
	}
}

// needsDeployment reports whether an update must write the Helm service and
// deploy it: its configuration or its deployment differ from the plan.
func (m *manifestServiceModel) needsDeployment(state *manifestServiceModel) bool {
	return !m.Values.Equal(state.Values) || !m.Chart.Equal(state.Chart) || !m.HelmServiceName.Equal(state.HelmServiceName) ||
		!state.Deployed.ValueBool() || !m.ClusterWideResourcesAllowed.Equal(state.ClusterWideResourcesAllowed)
}

// possessive is "the connector's".
func (k manifestKind) possessive() string { return "the " + k.noun + "'s" }

// article is "a" or "an" before the kind's noun.
func (k manifestKind) article() string {
	if strings.ContainsRune("aeiouAEIOU", rune(k.noun[0])) {
		return "an"
	}
	return "a"
}

var manifestDeviceType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"hostname":          types.StringType,
	"id":                types.StringType,
	"tailnet_fqdn":      types.StringType,
	"tailnet_ips":       types.ListType{ElemType: types.StringType},
	"advertised_routes": types.ListType{ElemType: types.StringType},
	"approved_routes":   types.ListType{ElemType: types.StringType},
}}

// devicesValue is the `devices` attribute for devices.
func devicesValue(devices []tailnet.Device) (types.List, diag.Diagnostics) {
	var diags diag.Diagnostics
	elems := make([]attr.Value, 0, len(devices))
	for i := range devices {
		d := &devices[i]
		obj, dd := types.ObjectValue(manifestDeviceType.AttrTypes, map[string]attr.Value{
			"hostname":          types.StringValue(d.Hostname),
			"id":                types.StringValue(cluster.DeviceID(d)),
			"tailnet_fqdn":      types.StringValue(cluster.DeviceFQDN(d)),
			"tailnet_ips":       tfx.StringList(d.Addresses),
			"advertised_routes": tfx.StringList(d.AdvertisedRoutes),
			"approved_routes":   tfx.StringList(d.EnabledRoutes),
		})
		diags.Append(dd...)
		elems = append(elems, obj)
	}
	l, dd := types.ListValue(manifestDeviceType, elems)
	diags.Append(dd...)
	return l, diags
}

// deviceModel is one element of a `devices` attribute.
type deviceModel struct {
	Hostname         types.String `tfsdk:"hostname"`
	ID               types.String `tfsdk:"id"`
	TailnetFQDN      types.String `tfsdk:"tailnet_fqdn"`
	TailnetIPs       types.List   `tfsdk:"tailnet_ips"`
	AdvertisedRoutes types.List   `tfsdk:"advertised_routes"`
	ApprovedRoutes   types.List   `tfsdk:"approved_routes"`
}

// stateDevices reads the hostnames and IDs of the `devices` attribute.
func stateDevices(ctx context.Context, l types.List) (hostnames, ids []string) {
	if l.IsNull() || l.IsUnknown() {
		return nil, nil
	}
	var devs []deviceModel
	if d := l.ElementsAs(ctx, &devs, false); d.HasError() {
		return nil, nil
	}
	for _, d := range devs {
		hostnames = append(hostnames, d.Hostname.ValueString())
		ids = append(ids, d.ID.ValueString())
	}
	return hostnames, ids
}
