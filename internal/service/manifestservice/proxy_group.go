package manifestservice

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
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
	r := &proxyGroupResource{}
	r.kind = proxyGroupKind
	r.hooks = r.lifecycleHooks()
	return r
}

type proxyGroupResource struct {
	manifestResource[proxyGroupModel, *proxyGroupModel]
}

type proxyGroupModel struct {
	manifestServiceModel
	proxyReplicas
	Type types.String `tfsdk:"type"`
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
		Validators:    []validator.String{tfx.StringCheck{Rule: "a Kubernetes name", Check: manifest.CheckKubernetesName}},
	}
	attrs["type"] = schema.StringAttribute{
		Required: true,
		MarkdownDescription: "`ingress`: the replicas serve Services exposed with `qtail_exposed_service` and `proxy_group` as " +
			"Tailscale Services. `egress`: the replicas carry the traffic of egress Services (`qtail_egress_service` with " +
			"`proxy_group`) to tailnet machines. The CRD makes the type immutable, so changing it replaces the ProxyGroup: " +
			"new devices, with new tailnet addresses.",
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		Validators:    []validator.String{tfx.StringCheck{Rule: "ingress or egress", Check: proxyGroupTypeCheck}},
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
		Validators: []validator.String{tfx.StringCheck{Rule: "a hostname prefix", Check: manifest.CheckHostnamePrefix}},
	}
	attrs["wait_for_devices"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(true),
		MarkdownDescription: "Wait, after each deployment, until every replica's device is on the tailnet with the tags. " +
			"A device gone from the tailnet then shows as a change, and qtail redeploys. Default `true`.",
	}
	addReplicaAttributes(attrs, proxyGroupKind, "Routes the device advertises: usually none for a ProxyGroup.")
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
			"(such as `examples/charts/" + cluster.ManifestsChart + "`), with cluster-wide resources allowed (a ProxyGroup is " +
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
	return tfx.AllKnown(m.Name, m.Type, m.Replicas, m.HostnamePrefix, m.Tags, m.ProxyClass)
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
	checkReplicaHostnames(prefix, m.Replicas, manifest.ProxyGroupDefaultReplicas, at, &resp.Diagnostics)
}

func (r *proxyGroupResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !r.Configured() {
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
		r.release(ctx, &state.manifestServiceModel, state.Devices)
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
	var ops *cluster.Lookup
	if values != "" && (creating || !plan.Values.Equal(state.Values)) {
		ops = r.planChecks(ctx, proxyGroupKind, &plan.manifestServiceModel, plan.Name, &resp.Diagnostics)
		at := path.Root("name")
		if spec.HostnamePrefix != "" {
			at = path.Root("hostname_prefix")
		}
		r.checkDevices(ctx, devicesCheck{kind: proxyGroupKind, name: spec.Name, ops: ops, want: proxyGroupWant(spec),
			state: state.Devices, creating: creating, at: at}, &resp.Diagnostics)
		if ops != nil && creating && spec.Type == manifest.ProxyGroupIngress {
			cluster.CheckIngressScope(ctx, r.Clients, ops, path.Root("type"), "the ingress ProxyGroup "+spec.Name, &resp.Diagnostics)
		}
	}
	if !plan.Name.IsUnknown() && !plan.Type.IsUnknown() && !plan.EnvironmentID.IsUnknown() {
		clusterID := ""
		if ops != nil {
			clusterID = ops.Env.ClusterID
		}
		r.Clients.Planned().DeclareProxyGroup(plan.EnvironmentID.ValueString(), clusterID, plan.Name.ValueString(), plan.Type.ValueString())
	}
}

// lifecycleHooks are what a ProxyGroup adds to the shared lifecycle: its
// devices.
func (r *proxyGroupResource) lifecycleHooks() manifestHooks[proxyGroupModel] {
	return replicaHooks(manifestHooks[proxyGroupModel]{
		deployed: func(ctx context.Context, m *proxyGroupModel, tn *tailnet.Client, d cluster.Deployment, diags *diag.Diagnostics) {
			r.awaitDevices(ctx, proxyGroupKind, m, m.EnvironmentID.ValueString(), tn, d, diags)
		},
		observe: func(ctx context.Context, m *proxyGroupModel, diags *diag.Diagnostics) {
			r.resolveTags(ctx, &m.proxyReplicas, m.EnvironmentID.ValueString(), m.ID.ValueString(), diags)
			if tn := r.Clients.TailnetOrNil(); tn != nil {
				observeDevices(ctx, proxyGroupKind, m, tn, m.Deployed.ValueBool(), diags)
			}
		},
	})
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
