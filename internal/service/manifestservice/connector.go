package manifestservice

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
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
	_ resource.Resource                   = &connectorResource{}
	_ resource.ResourceWithConfigure      = &connectorResource{}
	_ resource.ResourceWithImportState    = &connectorResource{}
	_ resource.ResourceWithValidateConfig = &connectorResource{}
	_ resource.ResourceWithModifyPlan     = &connectorResource{}
)

// NewConnectorResource returns the qtail_connector resource.
func NewConnectorResource() resource.Resource {
	r := &connectorResource{}
	r.kind = connectorKind
	r.hooks = r.lifecycleHooks()
	return r
}

type connectorResource struct {
	manifestResource[connectorModel, *connectorModel]
}

type connectorModel struct {
	manifestServiceModel
	proxyReplicas
	Hostname       types.String `tfsdk:"hostname"`
	SubnetRoutes   types.List   `tfsdk:"subnet_routes"`
	ExitNode       types.Bool   `tfsdk:"exit_node"`
	ApproveRoutes  types.Bool   `tfsdk:"approve_routes"`
	RoutesApproved types.Bool   `tfsdk:"routes_approved"`
}

func (r *connectorResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_connector"
}

func (r *connectorResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := manifestAttributes(ctx, connectorKind, "wait for the connector's devices (and approve their routes)")
	attrs["name"] = schema.StringAttribute{
		Required: true,
		MarkdownDescription: "Name of the `Connector` object (cluster-scoped, so unique per cluster), such as `homelab` or " +
			"`vpc-us-east-1`. The Helm service is named `" + connectorKind.servicePrefix + "NAME`. Changing it replaces the connector.",
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		Validators:    []validator.String{tfx.StringCheck{Rule: "a Kubernetes name", Check: manifest.CheckKubernetesName}},
	}
	attrs["hostname"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Hostname of the connector's device on the tailnet, for one replica. Without it and without " +
			"`hostname_prefix`, the operator names the device `NAME-connector`. 2 to 63 lower-case letters, digits and dashes. " +
			"Conflicts with `hostname_prefix`, and with `replicas` above 1.",
		Validators: []validator.String{
			tfx.StringCheck{Rule: "a Connector hostname", Check: manifest.CheckConnectorHostname},
			stringvalidator.ConflictsWith(path.MatchRoot("hostname_prefix")),
		},
	}
	attrs["hostname_prefix"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Prefix of the devices' hostnames, required when the connector runs several replicas: replica N " +
			"is `PREFIX-N`, from 0. 1 to 62 lower-case letters, digits and dashes. Conflicts with `hostname`.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a hostname prefix", Check: manifest.CheckHostnamePrefix}},
	}
	attrs["replicas"] = schema.Int64Attribute{
		Optional: true,
		Computed: true,
		Default:  int64default.StaticInt64(1),
		MarkdownDescription: "Number of replicas, each a device advertising the same routes, for high availability. " +
			"From 0 (no device) to 10. `hostname` only with 1; above 1, set `hostname_prefix`. Default `1`.",
		Validators: []validator.Int64{int64validator.Between(0, 10)},
	}
	attrs["subnet_routes"] = schema.ListAttribute{
		ElementType: types.StringType,
		Optional:    true,
		MarkdownDescription: "Routes the connector advertises as a subnet router, such as the VPC or pod CIDR: every address in " +
			"them becomes reachable from the tailnet, subject to grants. Each a CIDR without host bits; no duplicates, no overlaps, " +
			"no default route (`0.0.0.0/0` or `::/0`: set `exit_node` instead). At least one of `subnet_routes` and `exit_node`.",
		Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(tfx.NonBlank())},
	}
	attrs["exit_node"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(false),
		MarkdownDescription: "Whether the connector is also an exit node: its devices advertise `0.0.0.0/0` and `::/0`. " +
			"Default `false`.",
	}
	attrs["approve_routes"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(false),
		MarkdownDescription: "Approve the advertised routes through the Tailscale API once the devices appear, keeping the routes " +
			"already approved. Use it on tailnets without a matching `autoApprovers` entry (see `qtail_auto_approver`). A route " +
			"revoked by hand then shows as a change and is approved again. The provider's Tailscale credential needs the " +
			"`devices:routes` scope. Requires `wait_for_devices`. Default `false`.",
	}
	attrs["wait_for_devices"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(true),
		MarkdownDescription: "Wait, after each deployment, until every replica's device is on the tailnet with the tags and " +
			"advertises the routes. A device gone from the tailnet then shows as a change, and qtail redeploys. Default `true`.",
	}
	attrs["routes_approved"] = schema.BoolAttribute{
		Computed: true,
		MarkdownDescription: "Whether every device has every route of the connector approved. With `approve_routes` it is " +
			"always planned `true`, so a route revoked by hand shows as a change. Use `qtail_route_status` for the full picture " +
			"(approval, grants).",
	}
	addReplicaAttributes(attrs, connectorKind, "Routes the device advertises.")
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Tailscale `Connector`: a subnet router, an exit node, or both, with one device per replica, " +
			"deployed as a Qovery Helm service on the cluster of a `qtail_operator`.\n\n" +
			"qtail renders the `Connector` into the raw values file of a Helm service whose chart applies the list `manifests` " +
			"(such as `examples/charts/" + cluster.ManifestsChart + "`), with cluster-wide resources allowed (a Connector is " +
			"cluster-scoped). It deploys the service, waits for the devices to join the tailnet with their tags and routes, and " +
			"with `approve_routes` approves the routes.\n\n" +
			"A route works only when four things hold: the connector advertises it, it is approved (by `approve_routes`, an " +
			"`autoApprovers` entry such as `qtail_auto_approver`, or by hand), a grant lets someone reach it (`qtail_grant`), and " +
			"the client accepts routes (`tailscale up --accept-routes` on Linux, outside any API). The data source " +
			"`qtail_route_status` checks the first three.\n\n" +
			"A subnet router makes every address of its routes reachable; when people need one service, `qtail_exposed_service` " +
			"is the narrower choice.",
		Attributes: attrs,
	}
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

func (r *connectorResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m connectorModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !m.Hostname.IsNull() && !m.Hostname.IsUnknown() && !m.Replicas.IsNull() && !m.Replicas.IsUnknown() && m.Replicas.ValueInt64() > 1 {
		resp.Diagnostics.AddAttributeError(path.Root("replicas"), "Hostname With Several Replicas",
			fmt.Sprintf("hostname names one device, but replicas = %d. Set hostname_prefix instead of hostname: replica N is then PREFIX-N.",
				m.Replicas.ValueInt64()))
	}
	if m.Hostname.IsNull() && m.HostnamePrefix.IsNull() && !m.Replicas.IsNull() && !m.Replicas.IsUnknown() && m.Replicas.ValueInt64() > 1 {
		resp.Diagnostics.AddAttributeError(path.Root("hostname_prefix"), "Several Replicas Need a Hostname Prefix",
			fmt.Sprintf("Without hostname_prefix the operator gives all %d replicas the same hostname, NAME-connector, and the tailnet "+
				"tells their devices apart only by a number added to their MagicDNS names. Set hostname_prefix: replica N is then PREFIX-N.",
				m.Replicas.ValueInt64()))
	}
	if m.Hostname.IsNull() && m.HostnamePrefix.IsNull() && !m.Name.IsNull() && !m.Name.IsUnknown() {
		if h := m.Name.ValueString() + "-connector"; len(h) > 63 {
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Default Hostname Too Long",
				fmt.Sprintf("Without hostname, the operator names the connector's device %q, longer than the 63 characters of a DNS "+
					"label. Set hostname, or shorten name.", h))
		}
	}
	routesSet := !m.SubnetRoutes.IsNull()
	if !routesSet && !m.SubnetRoutes.IsUnknown() && !m.ExitNode.IsUnknown() && !m.ExitNode.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("subnet_routes"), "Connector Without a Role",
			"A connector must be a subnet router, an exit node, or both: set subnet_routes, exit_node = true, or both.")
	}
	if routesSet && !m.SubnetRoutes.IsUnknown() {
		var routes []types.String
		resp.Diagnostics.Append(m.SubnetRoutes.ElementsAs(ctx, &routes, false)...)
		known := make([]string, 0, len(routes))
		for _, r := range routes {
			if r.IsUnknown() {
				known = nil
				break
			}
			known = append(known, r.ValueString())
		}
		if known != nil {
			for _, err := range manifest.CheckSubnetRoutes(known) {
				resp.Diagnostics.AddAttributeError(path.Root("subnet_routes"), "Invalid Subnet Route", err.Error()+".")
			}
		}
	}
	if !m.ApproveRoutes.IsUnknown() && m.ApproveRoutes.ValueBool() && !m.WaitForDevices.IsNull() && !m.WaitForDevices.IsUnknown() && !m.WaitForDevices.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("approve_routes"), "Routes Approved Without Waiting",
			"approve_routes approves the routes once the devices appear, so it needs wait_for_devices = true.")
	}
	checkReplicaHostnames(m.HostnamePrefix, m.Replicas, 1, path.Root("hostname_prefix"), &resp.Diagnostics)
}

func (r *connectorResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !r.Configured() {
		return
	}
	var plan, state connectorModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	creating := req.State.Raw.IsNull()
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if !creating && (!plan.Name.Equal(state.Name) || !plan.Tags.Equal(state.Tags) || !plan.EnvironmentID.Equal(state.EnvironmentID)) {
		// Replaced: the replacement, planned as a creation, may take the
		// Helm service name and the hostnames.
		r.release(ctx, &state.manifestServiceModel, state.Devices)
	}
	values := ""
	var spec manifest.Connector
	if plan.specKnown() {
		var diags diag.Diagnostics
		spec, values, diags = plan.render(ctx)
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
	}
	plan.planShared(connectorKind, plan.Name, values)
	changed := creating || values == "" || !plan.Values.Equal(state.Values)
	plan.Devices = planDevices(ctx, changed, plan.WaitForDevices.ValueBool(), state.Devices, spec.DeviceHostnames())
	if !plan.Devices.IsUnknown() && plan.ApproveRoutes.ValueBool() && !state.RoutesApproved.ValueBool() {
		// Routes revoked by hand: the plan shows them approved again.
		devices, ok := withRoutesApproved(ctx, plan.Devices, spec.AdvertisedRoutes())
		if !ok {
			devices = types.ListUnknown(manifestDeviceType)
		}
		plan.Devices = devices
	}
	switch {
	case plan.ApproveRoutes.ValueBool():
		plan.RoutesApproved = types.BoolValue(true)
	case changed || plan.Devices.IsUnknown():
		plan.RoutesApproved = types.BoolUnknown()
	default:
		plan.RoutesApproved = state.RoutesApproved
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if resp.Diagnostics.HasError() || values == "" {
		return
	}
	if !creating && plan.Values.Equal(state.Values) {
		return
	}
	ops := r.planChecks(ctx, connectorKind, &plan.manifestServiceModel, plan.Name, &resp.Diagnostics)
	at := path.Root("hostname")
	if spec.HostnamePrefix != "" {
		at = path.Root("hostname_prefix")
	}
	r.checkDevices(ctx, devicesCheck{kind: connectorKind, name: spec.Name, ops: ops, want: connectorWant(spec),
		state: state.Devices, creating: creating, at: at}, &resp.Diagnostics)
}

// lifecycleHooks are what a connector adds to the shared lifecycle: its
// devices on the tailnet and the approval of their routes.
func (r *connectorResource) lifecycleHooks() manifestHooks[connectorModel] {
	return replicaHooks(manifestHooks[connectorModel]{
		deployed: r.waitAndApprove,
		repair:   r.approveOnly,
		observe:  r.observe,
		imported: func(m *connectorModel) {
			if m.ApproveRoutes.IsNull() {
				m.ApproveRoutes = types.BoolValue(false)
			}
		},
	})
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

// waitAndApprove waits for the connector's devices after a deployment and
// approves their routes.
func (r *connectorResource) waitAndApprove(ctx context.Context, m *connectorModel, tn *tailnet.Client, d cluster.Deployment, diags *diag.Diagnostics) {
	m.RoutesApproved = types.BoolValue(false)
	devices, want, ok := r.awaitDevices(ctx, connectorKind, m, m.EnvironmentID.ValueString(), tn, d, diags)
	if ok {
		r.approve(ctx, m, tn, devices, want, diags)
	}
}

// observe reads the connector's devices on the tailnet.
func (r *connectorResource) observe(ctx context.Context, m *connectorModel, diags *diag.Diagnostics) {
	r.resolveTags(ctx, &m.proxyReplicas, m.EnvironmentID.ValueString(), m.ID.ValueString(), diags)
	if r.Clients.TailnetOrNil() == nil {
		return
	}
	devices, want, complete, ok := observeDevices(ctx, connectorKind, m, r.Clients.TailnetOrNil(), m.Deployed.ValueBool(), diags)
	if !ok {
		return
	}
	m.RoutesApproved = types.BoolValue(complete && routesApprovedOn(devices, want.routes))
	if m.ApproveRoutes.ValueBool() && complete && !m.RoutesApproved.ValueBool() {
		diags.AddWarning("Connector Routes Not Approved",
			fmt.Sprintf("Some routes of the connector %s are not approved on its devices (revoked by hand?). qtail plans to approve them again.",
				m.Name.ValueString()))
	}
}

// approveOnly approves the routes again on the running devices, when no
// deployment is needed.
func (r *connectorResource) approveOnly(ctx context.Context, m *connectorModel, tn *tailnet.Client, diags *diag.Diagnostics) {
	if tn == nil {
		return
	}
	devices, want, _, ok := observeDevices(ctx, connectorKind, m, tn, false, diags)
	if ok {
		r.approve(ctx, m, tn, devices, want, diags)
	}
}

// approve approves, with approve_routes, the routes of the connector on its
// devices, and records the devices and whether every route is approved. A
// failed approval leaves the devices as they are: the state says so, and
// the next plan approves the routes again.
func (r *connectorResource) approve(ctx context.Context, m *connectorModel, tn *tailnet.Client, devices []tailnet.Device, want deviceWant, diags *diag.Diagnostics) {
	if m.ApproveRoutes.ValueBool() {
		approved, err := approveRoutes(ctx, tn, devices, want.routes)
		if err != nil {
			tfx.APIError(diags, "approve the connector's routes", err)
		} else {
			devices = approved
		}
	}
	setDevices(m, devices, diags)
	m.RoutesApproved = types.BoolValue(len(devices) == len(want.hostnames) && routesApprovedOn(devices, want.routes))
}
