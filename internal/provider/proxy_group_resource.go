package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

var (
	_ resource.Resource                   = &proxyGroupResource{}
	_ resource.ResourceWithConfigure      = &proxyGroupResource{}
	_ resource.ResourceWithImportState    = &proxyGroupResource{}
	_ resource.ResourceWithValidateConfig = &proxyGroupResource{}
	_ resource.ResourceWithModifyPlan     = &proxyGroupResource{}
)

// NewProxyGroupResource returns the qtail_proxy_group resource.
func NewProxyGroupResource() resource.Resource {
	return &proxyGroupResource{}
}

type proxyGroupResource struct {
	resourceBase
}

type proxyGroupModel struct {
	manifestServiceModel
	Name           types.String `tfsdk:"name"`
	Type           types.String `tfsdk:"type"`
	Replicas       types.Int64  `tfsdk:"replicas"`
	HostnamePrefix types.String `tfsdk:"hostname_prefix"`
	Tags           types.List   `tfsdk:"tags"`
	ProxyClass     types.String `tfsdk:"proxy_class"`
	WaitForDevices types.Bool   `tfsdk:"wait_for_devices"`
	Devices        types.List   `tfsdk:"devices"`
}

func (r *proxyGroupResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_proxy_group"
}

// proxyGroupTypeCheck accepts the ProxyGroup types qtail offers.
func proxyGroupTypeCheck(s string) error {
	switch s {
	case manifest.ProxyGroupIngress, manifest.ProxyGroupEgress:
		return nil
	case "kube-apiserver":
		return fmt.Errorf("qtail does not offer kube-apiserver ProxyGroups; set api_server_proxy on the qtail_operator to reach the Kubernetes API from the tailnet, or use %q or %q",
			manifest.ProxyGroupIngress, manifest.ProxyGroupEgress)
	}
	return fmt.Errorf("the type must be %q or %q", manifest.ProxyGroupIngress, manifest.ProxyGroupEgress)
}

func (r *proxyGroupResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := manifestAttributes(ctx, proxyGroupKind, "wait for the ProxyGroup's devices")
	attrs["name"] = schema.StringAttribute{
		Required: true,
		MarkdownDescription: "Name of the `ProxyGroup` object (cluster-scoped, so unique per cluster), such as `ingress` or " +
			"`egress`: the value that `proxy_group` of `qtail_exposed_service` and `qtail_egress_service` takes. The Helm " +
			"service is named `" + proxyGroupKind.servicePrefix + "NAME`, and without `hostname_prefix` the devices are named " +
			"`NAME-0`, `NAME-1`, ... Changing it replaces the ProxyGroup.",
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		Validators:    []validator.String{stringCheck{description: "a Kubernetes name", check: manifest.CheckKubernetesName}},
	}
	attrs["type"] = schema.StringAttribute{
		Required: true,
		MarkdownDescription: "`ingress`: the replicas serve Services exposed with `qtail_exposed_service` and `proxy_group` as " +
			"Tailscale Services. `egress`: the replicas carry the traffic of egress Services (`qtail_egress_service` with " +
			"`proxy_group`) to tailnet machines. The CRD makes the type immutable, so changing it replaces the ProxyGroup: " +
			"new devices, with new tailnet addresses.",
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		Validators:    []validator.String{stringCheck{description: "ingress or egress", check: proxyGroupTypeCheck}},
	}
	attrs["replicas"] = schema.Int64Attribute{
		Optional: true,
		Computed: true,
		Default:  int64default.StaticInt64(manifest.ProxyGroupDefaultReplicas),
		MarkdownDescription: "Number of replicas, each a device on the tailnet: replica N is `PREFIX-N`, from 0. Scaling " +
			"keeps the existing devices. `0` to `10`. Default `2`.",
		Validators: []validator.Int64{int64validator.Between(0, 10)},
	}
	attrs["hostname_prefix"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Prefix of the devices' hostnames: replica N is `PREFIX-N`. Without it the prefix is `name`. " +
			"Hostnames name devices on the whole tailnet, so with one ProxyGroup of the same name per cluster give each cluster " +
			"its own prefix, such as `ingress-us-east-1`. The last replica's hostname must fit in 63 characters.",
		Validators: []validator.String{stringCheck{description: "a hostname prefix", check: manifest.CheckHostnamePrefix}},
	}
	attrs["tags"] = schema.ListAttribute{
		ElementType: types.StringType,
		Optional:    true,
		Computed:    true,
		Default:     listdefault.StaticValue(stringList([]string{chartDefaultProxyTag})),
		MarkdownDescription: "Tags of the ProxyGroup's devices. The operator's tag must own each of them in `tagOwners` (the " +
			"plan checks it). The tags are set when the devices are created, so changing them replaces the ProxyGroup. " +
			"Default `[\"" + chartDefaultProxyTag + "\"]`.",
		PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
		Validators: []validator.List{
			listvalidator.SizeAtLeast(1),
			listvalidator.UniqueValues(),
			listvalidator.ValueStringsAre(stringCheck{description: "a tag", check: manifest.CheckTag}),
		},
	}
	attrs["proxy_class"] = schema.StringAttribute{
		Optional:            true,
		MarkdownDescription: "Name of a `ProxyClass` that configures the ProxyGroup's pods.",
		Validators:          []validator.String{stringCheck{description: "a Kubernetes name", check: manifest.CheckKubernetesName}},
	}
	attrs["wait_for_devices"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(true),
		MarkdownDescription: "Wait, after each deployment, until every replica's device is on the tailnet with the tags. " +
			"A device gone from the tailnet then shows as a change, and qtail redeploys. Default `true`.",
	}
	attrs["devices"] = schema.ListNestedAttribute{
		Computed:            true,
		MarkdownDescription: "The ProxyGroup's devices on the tailnet, one per replica.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"hostname":          schema.StringAttribute{Computed: true, MarkdownDescription: "Hostname of the device."},
			"id":                schema.StringAttribute{Computed: true, MarkdownDescription: "Node ID of the device."},
			"tailnet_fqdn":      schema.StringAttribute{Computed: true, MarkdownDescription: "MagicDNS name of the device."},
			"tailnet_ips":       schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Tailscale addresses of the device."},
			"advertised_routes": schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Routes the device advertises: usually none for a ProxyGroup."},
			"approved_routes":   schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Routes approved (enabled) on the device."},
		}},
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Tailscale `ProxyGroup`: several replicas of an ingress or an egress proxy, one device each, " +
			"shared by many Services, deployed as a Qovery Helm service on the cluster of a `qtail_operator`. Tailscale " +
			"recommends it over one proxy pod per Service for production traffic.\n\n" +
			"- **Ingress**: expose applications with `qtail_exposed_service` and `proxy_group = qtail_proxy_group.NAME.name` " +
			"(and `wait_for_device = false`). Each is then a Tailscale Service `svc:HOSTNAME` served by every replica, instead " +
			"of a device of its own. The operator creates the Tailscale Services through the API, so its OAuth client needs the " +
			"`services` scope, which the client that `qtail_operator` creates (`create_oauth_client`) has; approving them " +
			"automatically needs an `autoApprovers.services` entry.\n" +
			"- **Egress**: point `qtail_egress_service` resources at it with `proxy_group`: cluster workloads reach tailnet " +
			"machines through the replicas.\n\n" +
			"qtail renders the `ProxyGroup` into the raw values file of a Helm service whose chart applies the list `manifests` " +
			"(such as `examples/charts/" + manifestChartName + "`), with cluster-wide resources allowed (a ProxyGroup is " +
			"cluster-scoped). It deploys the service and waits for the replicas' devices, `PREFIX-0` to `PREFIX-N-1`, to join " +
			"the tailnet with their tags. The plan refuses hostnames that other devices use and tags that the operator's tag " +
			"does not own.",
		Attributes: attrs,
	}
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
	return allKnown(m.Name, m.Type, m.Replicas, m.HostnamePrefix, m.Tags, m.ProxyClass)
}

// proxyGroupWant is what the ProxyGroup's devices must look like.
func proxyGroupWant(p manifest.ProxyGroup) deviceWant {
	tags := p.Tags
	if len(tags) == 0 {
		tags = []string{chartDefaultProxyTag}
	}
	return deviceWant{hostnames: p.DeviceHostnames(), tags: tags}
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
		m.Type = optionalString(p.Type)
	case p.Type != m.Type.ValueString():
		diags.AddWarning("ProxyGroup Type Edited",
			fmt.Sprintf("The values of the Helm service %s give the ProxyGroup %s the type %q, but it was deployed as %q and the "+
				"CRD makes the type immutable, so a deployment of these values fails. qtail plans to write the values back. To "+
				"change the type, change type in the configuration: the ProxyGroup is then replaced.", helmID, p.Name, p.Type, m.Type.ValueString()))
	}
	m.HostnamePrefix = optionalString(p.HostnamePrefix)
	replicas := int64(manifest.ProxyGroupDefaultReplicas)
	if p.Replicas != nil {
		replicas = *p.Replicas
	}
	m.Replicas = types.Int64Value(replicas)
	tags := p.Tags
	if len(tags) == 0 {
		tags = []string{chartDefaultProxyTag}
	}
	m.Tags = stringList(tags)
	m.ProxyClass = optionalString(p.ProxyClass)
}

// replacedBy reports whether plan replaces the ProxyGroup of m: an
// attribute that requires replacement changes.
func (m *proxyGroupModel) replacedBy(plan *proxyGroupModel) bool {
	return !plan.Name.Equal(m.Name) || !plan.Type.Equal(m.Type) || !plan.Tags.Equal(m.Tags) || !plan.EnvironmentID.Equal(m.EnvironmentID)
}

func (r *proxyGroupResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m proxyGroupModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	prefix, at := m.HostnamePrefix, path.Root("hostname_prefix")
	if prefix.IsNull() {
		prefix, at = m.Name, path.Root("name")
	}
	fix := "Shorten hostname_prefix."
	if at.Equal(path.Root("name")) {
		fix = "Shorten name, or set a shorter hostname_prefix."
	}
	checkReplicaHostnames(prefix, m.Replicas, manifest.ProxyGroupDefaultReplicas, at, fix, &resp.Diagnostics)
}

func (r *proxyGroupResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !r.configured() {
		return
	}
	var plan, state proxyGroupModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	creating := req.State.Raw.IsNull()
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if !creating && state.replacedBy(&plan) {
		// Terraform plans the replacement again as a creation: it may
		// take the Helm service name and the hostnames of this one.
		r.data.releaseManifestService(ctx, &state.manifestServiceModel, state.Devices)
		if !plan.Type.Equal(state.Type) && !plan.Type.IsUnknown() {
			resp.Diagnostics.AddAttributeWarning(path.Root("type"), "Changing the Type Replaces the ProxyGroup",
				fmt.Sprintf("The ProxyGroup CRD makes the type immutable, so qtail deletes the ProxyGroup %s (its devices leave the "+
					"tailnet) and creates it again as type %q: new devices, with new tailnet addresses. The Services it served "+
					"stop working until the new devices are up, and only a ProxyGroup of type %q serves exposed Services.",
					state.Name.ValueString(), plan.Type.ValueString(), manifest.ProxyGroupIngress))
		}
	}
	values := ""
	var spec manifest.ProxyGroup
	if plan.specKnown() {
		var diags diag.Diagnostics
		spec, values, diags = plan.render(ctx)
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
	}
	plan.planShared(proxyGroupKind, plan.Name, values)
	changed := creating || values == "" || !plan.Values.Equal(state.Values)
	plan.Devices = planDevices(ctx, changed, plan.WaitForDevices.ValueBool(), state.Devices, spec.DeviceHostnames())
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var ops *exposureOperatorLookup
	if values != "" && (creating || !plan.Values.Equal(state.Values)) {
		ops = r.data.manifestPlanChecks(ctx, proxyGroupKind, &plan.manifestServiceModel, plan.Name, &resp.Diagnostics)
		at := path.Root("name")
		if spec.HostnamePrefix != "" {
			at = path.Root("hostname_prefix")
		}
		r.data.checkManifestDevices(ctx, proxyGroupKind, spec.Name, ops, proxyGroupWant(spec), state.Devices, creating, at,
			"give each ProxyGroup its own hostname_prefix", &resp.Diagnostics)
	}
	if !plan.Name.IsUnknown() && !plan.Type.IsUnknown() && !plan.EnvironmentID.IsUnknown() {
		clusterID := ""
		if ops != nil {
			clusterID = ops.env.ClusterID
		}
		r.data.proxyGroups.declare(plan.EnvironmentID.ValueString(), clusterID, plan.Name.ValueString(), plan.Type.ValueString())
	}
}

// hooks are what a ProxyGroup adds to the shared lifecycle: its devices.
func (r *proxyGroupResource) hooks() manifestHooks[proxyGroupModel] {
	return manifestHooks[proxyGroupModel]{
		kind:        proxyGroupKind,
		usesTailnet: func(m *proxyGroupModel) bool { return m.WaitForDevices.ValueBool() },
		deployed: func(ctx context.Context, m *proxyGroupModel, tn *tailnet.Client, op string, timeout time.Duration, diags *diag.Diagnostics) {
			r.data.awaitDevices(ctx, proxyGroupKind, m, m.ID.ValueString(), tn, op, timeout, diags)
		},
		redeploy: devicesGone[proxyGroupModel],
		observe: func(ctx context.Context, m *proxyGroupModel, diags *diag.Diagnostics) {
			if r.data.tailnet != nil {
				r.data.observeDevices(ctx, proxyGroupKind, m, r.data.tailnet, m.Deployed.ValueBool(), diags)
			}
		},
		imported: func(m *proxyGroupModel) {
			if m.WaitForDevices.IsNull() {
				m.WaitForDevices = types.BoolValue(true)
			}
		},
		leftovers: leftoverDevices[proxyGroupModel],
	}
}

func (m *proxyGroupModel) waitsForDevices() bool    { return m.WaitForDevices.ValueBool() }
func (m *proxyGroupModel) devicesAttr() *types.List { return &m.Devices }
func (m *proxyGroupModel) wantedDevices(ctx context.Context) (deviceWant, diag.Diagnostics) {
	spec, diags := m.spec(ctx)
	return proxyGroupWant(spec), diags
}

func (m *proxyGroupModel) shared() *manifestServiceModel { return &m.manifestServiceModel }

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
	m.Tags = keepReplacing(diags, helmID, "tags", tags, m.Tags)
	return nil
}

func (m *proxyGroupModel) settle() {
	m.nullUnknowns()
	if m.Devices.IsUnknown() {
		m.Devices = types.ListNull(manifestDeviceType)
	}
}

func (r *proxyGroupResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	manifestCreate(ctx, r.data, r.hooks(), req, resp)
}

func (r *proxyGroupResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	manifestRead(ctx, r.data, r.hooks(), req, resp)
}

func (r *proxyGroupResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	manifestUpdate(ctx, r.data, r.hooks(), req, resp)
}

func (r *proxyGroupResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	manifestDelete(ctx, r.data, r.hooks(), req, resp)
}

func (r *proxyGroupResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	manifestImport(ctx, proxyGroupKind, req, resp)
}
