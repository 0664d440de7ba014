package provider

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// The Service annotations the Tailscale operator reads, and its defaults.
const (
	exposeAnnotation           = "tailscale.com/expose"
	exposeHostnameAnnotation   = "tailscale.com/hostname"
	exposeTagsAnnotation       = "tailscale.com/tags"
	exposeProxyGroupAnnotation = "tailscale.com/proxy-group"
	exposeProxyClassAnnotation = "tailscale.com/proxy-class"
)

var (
	_ resource.Resource                   = &exposedServiceResource{}
	_ resource.ResourceWithConfigure      = &exposedServiceResource{}
	_ resource.ResourceWithImportState    = &exposedServiceResource{}
	_ resource.ResourceWithValidateConfig = &exposedServiceResource{}
	_ resource.ResourceWithModifyPlan     = &exposedServiceResource{}
)

// NewExposedServiceResource returns the qtail_exposed_service resource.
func NewExposedServiceResource() resource.Resource {
	return &exposedServiceResource{}
}

type exposedServiceResource struct {
	resourceBase
}

type exposedServiceModel struct {
	ID                   types.String   `tfsdk:"id"`
	ApplicationID        types.String   `tfsdk:"application_id"`
	Hostname             types.String   `tfsdk:"hostname"`
	Tags                 types.Set      `tfsdk:"tags"`
	ProxyGroup           types.String   `tfsdk:"proxy_group"`
	ProxyClass           types.String   `tfsdk:"proxy_class"`
	AnnotationsGroupName types.String   `tfsdk:"annotations_group_name"`
	Redeploy             types.Bool     `tfsdk:"redeploy"`
	WaitForDevice        types.Bool     `tfsdk:"wait_for_device"`
	Timeouts             timeouts.Value `tfsdk:"timeouts"`

	OrganizationID     types.String `tfsdk:"organization_id"`
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

func (r *exposedServiceResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_exposed_service"
}

// exposureKubernetesNameRE is a Kubernetes object name (an RFC 1123
// subdomain).
var exposureKubernetesNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

func exposureKubernetesNameValidator(kind string) validator.String {
	return stringCheck{
		description: "must be the name of a Kubernetes " + kind,
		check: func(s string) error {
			if len(s) <= 253 && exposureKubernetesNameRE.MatchString(s) {
				return nil
			}
			return fmt.Errorf("must be the name of a Kubernetes %s: at most 253 lower-case letters, digits, dashes and dots, "+
				"starting and ending with a letter or digit", kind)
		},
	}
}

func (r *exposedServiceResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Puts one Qovery application on the tailnet at `HOSTNAME.TAILNET.ts.net` through the Tailscale Kubernetes operator. " +
			"qtail creates a Qovery annotations group (scope `SERVICES`) that annotates the application's Kubernetes Service with " +
			"`tailscale.com/expose = \"true\"` and `tailscale.com/hostname`, attaches it to the application, redeploys the application, " +
			"and waits for the proxy device to join the tailnet with its tags.\n\n" +
			"Every port the application declares becomes reachable from the tailnet (`ports` lists them in the plan); nothing else in the " +
			"cluster does. Who may reach the proxy is decided by the tailnet policy: give the exposure its own tag (`tags`), declare that " +
			"tag in `tagOwners` with `qtail_tag_owner`, and grant a group access to it on the declared ports with `qtail_grant`.\n\n" +
			"The plan refuses, before anything is created, an application without a port, a hostname already used on the tailnet or by " +
			"another exposure, and a tag that the operator's tag does not own.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`APPLICATION_ID/ANNOTATIONS_GROUP_ID`.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"application_id": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "ID of the Qovery application to expose. It must declare at least one port: without one Qovery creates " +
					"no Kubernetes Service and the operator has nothing to expose. Changing it replaces the exposure.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{uuidValidator()},
			},
			"hostname": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Name of the proxy on the tailnet (`tailscale.com/hostname`): the application answers at " +
					"`HOSTNAME.TAILNET.ts.net`. A DNS label of 1 to 63 lower-case letters, digits and dashes, unique on the tailnet. " +
					"Include the region when the same application runs in several clusters, e.g. `billing-api-us-east-1`.",
				Validators: []validator.String{deviceHostnameValidator()},
			},
			"tags": schema.SetAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: "Tags of the proxy device (`tailscale.com/tags`). They replace the operator's default proxy tag " +
					"(`tag:k8s`), so that the policy can grant access to this service alone. Each must be owned by the operator's tag " +
					"(`tag:k8s-operator`) in `tagOwners`, or the operator could not create the proxy's auth key: declare it with a " +
					"`qtail_tag_owner` and reference that resource here. The tags are fixed when the proxy's auth key is created, " +
					"so changing them replaces the exposure (a new device).",
				Validators: []validator.Set{
					setvalidator.SizeAtLeast(1),
					setvalidator.ValueStringsAre(tagValidator()),
				},
				// Tailscale fixes a device's tags when its auth key is
				// created: new tags need a new proxy.
				PlanModifiers: []planmodifier.Set{setplanmodifier.RequiresReplace()},
			},
			"proxy_group": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Name of an existing ingress `ProxyGroup` to serve the application through " +
					"(`tailscale.com/proxy-group`), instead of one proxy pod for this service. The service is then a Tailscale Service " +
					"served by the ProxyGroup's devices and has no device of its own, so `wait_for_device` must be `false`.",
				Validators: []validator.String{exposureKubernetesNameValidator("ProxyGroup")},
			},
			"proxy_class": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Name of a `ProxyClass` that configures the proxy pod (`tailscale.com/proxy-class`).",
				Validators:          []validator.String{exposureKubernetesNameValidator("ProxyClass")},
			},
			"annotations_group_name": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: "Name of the Qovery annotations group. Defaults to `tailscale-HOSTNAME`.",
				Validators:          []validator.String{nonBlankValidator()},
			},
			"redeploy": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
				MarkdownDescription: "Redeploy the application after each change, and wait for the deployment: Qovery applies annotations " +
					"only at the next deployment. With `false` the change reaches the cluster at the application's next deployment, " +
					"and `wait_for_device` must be `false`. Default `true`.",
			},
			"wait_for_device": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
				MarkdownDescription: "Wait until the proxy device has joined the tailnet with the expected tags, and until it has left " +
					"when the exposure is destroyed. Default `true`.",
			},
			"timeouts": timeoutsAttribute(ctx,
				"Time to create the annotations group, attach it, redeploy the application and wait for the proxy device.",
				"Time to update the annotations group, redeploy the application and wait for the proxy device.",
				"Time to detach the group, redeploy the application, delete the group and wait for the proxy device to leave."),

			"organization_id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "ID of the Qovery organization that owns the annotations group (the application's).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"annotations_group_id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "ID of the Qovery annotations group.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"annotations": schema.MapAttribute{
				ElementType: types.StringType,
				Computed:    true,
				MarkdownDescription: "The annotations of the group, as qtail writes them. An annotation edited in the Qovery console " +
					"shows here as a change to undo.",
			},
			"attached": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether the annotations group is attached to the application. A group detached in the Qovery " +
					"console shows as a change to `true`: qtail attaches it again and redeploys.",
			},
			"tailnet_fqdn": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "MagicDNS name of the proxy device, e.g. `billing-api-us-east-1.tail4f2a.ts.net`.",
			},
			"device_id": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Node ID of the proxy device. Null while the device is missing: the next apply redeploys the " +
					"application so that the operator creates it again.",
			},
			"tailnet_ips": schema.ListAttribute{
				ElementType:         types.StringType,
				Computed:            true,
				MarkdownDescription: "Tailnet addresses of the proxy device (IPv4 `100.x` and IPv6 `fd7a:115c:a1e0::/48`).",
			},
			"ports": schema.ListNestedAttribute{
				Computed: true,
				MarkdownDescription: "The ports the application declares: **every one of them is reachable from the tailnet** through " +
					"the proxy, as far as the policy allows. Read from Qovery at plan time, so that the plan shows what becomes " +
					"reachable; a port added or removed in the console shows as a change, and the apply redeploys the application.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":                schema.StringAttribute{Computed: true, MarkdownDescription: "Name of the port."},
					"internal_port":       schema.Int64Attribute{Computed: true, MarkdownDescription: "Port number the Service listens on."},
					"protocol":            schema.StringAttribute{Computed: true, MarkdownDescription: "`HTTP`, `GRPC`, `TCP` or `UDP`."},
					"publicly_accessible": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether Qovery also exposes the port on the public internet."},
				}},
			},
		},
	}
}

// exposureID is the id attribute: APPLICATION_ID/ANNOTATIONS_GROUP_ID.
func exposureID(appID, groupID string) string { return appID + "/" + groupID }

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
		exposeAnnotation:         "true",
		exposeHostnameAnnotation: m.Hostname.ValueString(),
	}
	if len(tags) > 0 {
		ann[exposeTagsAnnotation] = strings.Join(tags, ",")
	}
	if v := m.ProxyGroup.ValueString(); v != "" {
		ann[exposeProxyGroupAnnotation] = v
	}
	if v := m.ProxyClass.ValueString(); v != "" {
		ann[exposeProxyClassAnnotation] = v
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
	return m.WaitForDevice.ValueBool() && m.Redeploy.ValueBool() && m.ProxyGroup.ValueString() == ""
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
	m.Hostname = types.StringValue(ann[exposeHostnameAnnotation])
	if v, ok := ann[exposeTagsAnnotation]; ok {
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
	m.ProxyGroup = exposureOptionalString(ann, exposeProxyGroupAnnotation)
	m.ProxyClass = exposureOptionalString(ann, exposeProxyClassAnnotation)
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

func exposureOptionalString(m map[string]string, key string) types.String {
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
	m.DeviceID = types.StringValue(deviceID(d))
	m.TailnetFQDN = types.StringValue(deviceFQDN(d))
	ips, diags := types.ListValueFrom(ctx, types.StringType, d.Addresses)
	m.TailnetIPs = ips
	return diags
}

// settle replaces the unknown values of m by nulls, for a state saved after
// a failure.
func (m *exposedServiceModel) settle() {
	strs := []*types.String{&m.ID, &m.OrganizationID, &m.AnnotationsGroupID, &m.AnnotationsGroupName, &m.TailnetFQDN, &m.DeviceID}
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

// exposureApplicationContext reads an application and the organization it belongs
// to (annotations groups are organization objects).
func exposureApplicationContext(ctx context.Context, q *qovery.Client, appID string) (*qovery.Application, *qovery.Environment, error) {
	app, err := q.GetApplication(ctx, appID)
	if err != nil {
		return nil, nil, err
	}
	env, err := q.GetEnvironment(ctx, app.Environment.ID)
	if err != nil {
		return app, nil, err
	}
	return app, env, nil
}

func (r *exposedServiceResource) clients(diags *diag.Diagnostics) (*qovery.Client, *tailnet.Client) {
	q, d := r.data.Qovery()
	diags.Append(d...)
	t, d := r.data.Tailnet()
	diags.Append(d...)
	return q, t
}

func (r *exposedServiceResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan exposedServiceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, timeout := withTimeout(ctx, plan.Timeouts.Create, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	q, t := r.clients(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	groupReq, diags := plan.groupRequest(ctx)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	appID := plan.ApplicationID.ValueString()
	app, env, err := exposureApplicationContext(ctx, q, appID)
	if err != nil {
		apiError(&resp.Diagnostics, "read application "+appID, err)
		return
	}
	if len(app.Ports) == 0 {
		resp.Diagnostics.AddAttributeError(path.Root("application_id"), "Application Declares No Port", exposureNoPortDetail(app))
		return
	}
	orgID := env.Organization.ID
	group, err := q.CreateAnnotationsGroup(ctx, orgID, groupReq)
	if err != nil {
		apiError(&resp.Diagnostics, "create the annotations group "+groupReq.Name, err)
		return
	}

	// From here on the group exists: a failure saves what was done, and
	// Terraform marks the exposure tainted so that the next apply
	// replaces it.
	plan.ID = types.StringValue(exposureID(appID, group.ID))
	plan.OrganizationID = types.StringValue(orgID)
	plan.AnnotationsGroupID = types.StringValue(group.ID)
	plan.Attached = types.BoolValue(false)
	if plan.Ports.IsUnknown() {
		ports, d := exposedPorts(ctx, app.Ports)
		resp.Diagnostics.Append(d...)
		plan.Ports = ports
	}
	fail := func(step string, err error) {
		plan.settle()
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		resp.Diagnostics.AddError("Unable to Expose the Application",
			fmt.Sprintf("qtail created the annotations group %s (%s) but could not %s. The exposure is saved as tainted: "+
				"the next apply removes it and tries again.\n\n%s", group.Name, group.ID, step, err))
	}

	if _, err := q.SetApplicationAnnotationsGroups(ctx, appID, append(app.AnnotationsGroupIDs(), group.ID)); err != nil {
		fail("attach it to application "+appID, err)
		return
	}
	plan.Attached = types.BoolValue(true)
	if plan.Redeploy.ValueBool() {
		if err := r.redeploy(ctx, q, appID, timeout, "create"); err != nil {
			fail("redeploy application "+appID+" so that the annotations reach its Kubernetes Service", err)
			return
		}
	}
	dev, err := r.settleDevice(ctx, t, &plan, plan.expectDevice(), timeout, "create", &resp.Diagnostics)
	if err != nil {
		fail("see the proxy device join the tailnet", err)
		return
	}
	resp.Diagnostics.Append(plan.fillDevice(ctx, dev)...)
	if dev == nil && plan.TailnetFQDN.IsNull() {
		plan.TailnetFQDN = r.guessFQDN(ctx, t, plan.Hostname.ValueString())
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// settleDevice waits for the proxy device when one is expected. Otherwise
// it looks the device up once: a device that is not there yet is no
// failure (it shows up at the application's next deployment and a refresh
// records it), and a failed look-up is only worth a warning.
func (r *exposedServiceResource) settleDevice(ctx context.Context, t *tailnet.Client, m *exposedServiceModel, wait bool, timeout time.Duration,
	op string, diags *diag.Diagnostics) (*tailnet.Device, error) {
	tags, _, _ := m.planTags(ctx)
	hostname := m.Hostname.ValueString()
	if wait {
		return r.waitForDevice(ctx, t, hostname, tags, timeout, op)
	}
	if m.ProxyGroup.ValueString() != "" {
		return nil, nil
	}
	d, err := t.FindDeviceByHostname(ctx, hostname)
	if err != nil {
		diags.AddWarning("Proxy Device Not Looked Up", fmt.Sprintf("qtail could not look up the device %s; the next "+
			"refresh records it.\n\n%s", hostname, err))
		return nil, nil
	}
	if d == nil || !exposureTagsMatch(d.Tags, tags) {
		return nil, nil
	}
	return d, nil
}

// guessFQDN returns HOSTNAME.SUFFIX with the MagicDNS suffix of the tailnet
// as another device shows it, or null when no device shows it.
func (r *exposedServiceResource) guessFQDN(ctx context.Context, t *tailnet.Client, hostname string) types.String {
	devs, err := t.ListDevices(ctx, tailnet.ListDevicesOptions{})
	if err != nil {
		return types.StringNull()
	}
	for _, d := range devs {
		if _, suffix, ok := strings.Cut(strings.TrimSuffix(d.Name, "."), "."); ok && suffix != "" {
			return types.StringValue(hostname + "." + suffix)
		}
	}
	return types.StringNull()
}

func (r *exposedServiceResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state exposedServiceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	q, diags := r.data.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	appID, groupID := state.ApplicationID.ValueString(), state.AnnotationsGroupID.ValueString()
	app, err := q.GetApplication(ctx, appID)
	if qovery.IsNotFound(err) {
		resp.Diagnostics.AddWarning("Exposed Application Deleted",
			fmt.Sprintf("Qovery has no application %s any more: the exposure is removed from the state. Remove the resource from "+
				"the configuration, or set application_id to the application that replaces it.", appID))
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		apiError(&resp.Diagnostics, "read application "+appID, err)
		return
	}
	if state.OrganizationID.ValueString() == "" {
		env, err := q.GetEnvironment(ctx, app.Environment.ID)
		if err != nil {
			apiError(&resp.Diagnostics, "read the environment of application "+appID, err)
			return
		}
		state.OrganizationID = types.StringValue(env.Organization.ID)
	}
	group, err := q.GetAnnotationsGroup(ctx, state.OrganizationID.ValueString(), groupID)
	if qovery.IsNotFound(err) {
		resp.Diagnostics.AddWarning("Annotations Group Deleted",
			fmt.Sprintf("The annotations group %s of the exposure of application %s was deleted outside Terraform: "+
				"the exposure is planned for creation again.", groupID, appID))
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		apiError(&resp.Diagnostics, "read annotations group "+groupID, err)
		return
	}
	resp.Diagnostics.Append(state.fillGroup(group)...)
	state.ID = types.StringValue(exposureID(appID, groupID))
	attached := slices.Contains(app.AnnotationsGroupIDs(), groupID)
	state.Attached = types.BoolValue(attached)
	if !attached {
		resp.Diagnostics.AddWarning("Annotations Group Detached",
			fmt.Sprintf("The annotations group %s (%s) is no longer attached to application %s (%s): the Service is not exposed "+
				"after the application's next deployment. The next apply attaches it again and redeploys the application.",
				group.Name, groupID, app.Name, appID))
	}
	if state.Redeploy.IsNull() {
		state.Redeploy = types.BoolValue(true)
	}
	if state.WaitForDevice.IsNull() {
		state.WaitForDevice = types.BoolValue(true)
	}
	if state.Ports.IsNull() {
		// An import: the ports as they are. Otherwise the state keeps the
		// ports made reachable by the last apply, and the plan compares
		// them with the application's current ones.
		ports, d := exposedPorts(ctx, app.Ports)
		resp.Diagnostics.Append(d...)
		state.Ports = ports
	}
	if state.Annotations.IsNull() {
		state.Annotations = types.MapValueMust(types.StringType, map[string]attr.Value{})
	}

	if t := r.data.tailnet; t != nil {
		dev, err := r.findProxy(ctx, t, &state)
		if err != nil {
			apiError(&resp.Diagnostics, "look up the proxy device "+state.Hostname.ValueString(), err)
			return
		}
		fqdn := state.TailnetFQDN
		resp.Diagnostics.Append(state.fillDevice(ctx, dev)...)
		if dev == nil {
			if state.expectDevice() && attached {
				resp.Diagnostics.AddWarning("Proxy Device Missing",
					fmt.Sprintf("The tailnet has no device %q tagged as the exposure of application %s expects: it was removed, "+
						"or the proxy lost its registration. The next apply redeploys the application so that the operator creates it again.",
						state.Hostname.ValueString(), appID))
			} else if !state.expectDevice() {
				state.TailnetFQDN = fqdn
			}
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// findProxy finds the proxy device of an exposure: by the id in the state,
// else by hostname with the expected tags.
func (r *exposedServiceResource) findProxy(ctx context.Context, t *tailnet.Client, m *exposedServiceModel) (*tailnet.Device, error) {
	if m.ProxyGroup.ValueString() != "" {
		return nil, nil
	}
	hostname := m.Hostname.ValueString()
	if id := m.DeviceID.ValueString(); id != "" {
		d, err := t.GetDevice(ctx, id)
		switch {
		case err == nil && strings.EqualFold(d.Hostname, hostname):
			return d, nil
		case err != nil && !tailnet.IsNotFound(err):
			return nil, err
		}
	}
	if hostname == "" {
		return nil, nil
	}
	d, err := t.FindDeviceByHostname(ctx, hostname)
	if err != nil || d == nil {
		return nil, err
	}
	tags, _, _ := m.planTags(ctx)
	if !exposureTagsMatch(d.Tags, tags) {
		return nil, nil
	}
	return d, nil
}

// exposureTagsMatch reports whether a device carries exactly the wanted
// tags; with no tags wanted (the operator's default), any tagged device
// matches.
func exposureTagsMatch(have, want []string) bool {
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

func (r *exposedServiceResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state exposedServiceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if onlyTimeoutsChange(req) {
		// New waits for the next operations: nothing to redeploy.
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	ctx, cancel, timeout := withTimeout(ctx, plan.Timeouts.Update, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	q, t := r.clients(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	groupReq, diags := plan.groupRequest(ctx)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	appID, groupID, orgID := state.ApplicationID.ValueString(), state.AnnotationsGroupID.ValueString(), state.OrganizationID.ValueString()

	annotationsChanged := !plan.Annotations.Equal(state.Annotations)
	if annotationsChanged || !plan.AnnotationsGroupName.Equal(state.AnnotationsGroupName) {
		if _, err := q.EditAnnotationsGroup(ctx, orgID, groupID, groupReq); err != nil {
			apiError(&resp.Diagnostics, "update annotations group "+groupID, err)
			return
		}
	}
	app, err := q.GetApplication(ctx, appID)
	if err != nil {
		apiError(&resp.Diagnostics, "read application "+appID, err)
		return
	}
	reattached := false
	if !slices.Contains(app.AnnotationsGroupIDs(), groupID) {
		if _, err := q.SetApplicationAnnotationsGroups(ctx, appID, append(app.AnnotationsGroupIDs(), groupID)); err != nil {
			apiError(&resp.Diagnostics, "attach annotations group "+groupID+" to application "+appID, err)
			return
		}
		reattached = true
	}
	plan.Attached = types.BoolValue(true)
	if plan.Ports.IsUnknown() {
		ports, d := exposedPorts(ctx, app.Ports)
		resp.Diagnostics.Append(d...)
		plan.Ports = ports
	}
	deviceUnknown := plan.DeviceID.IsUnknown()
	portsChanged := !plan.Ports.Equal(state.Ports)
	redeployed := false
	if plan.Redeploy.ValueBool() && (annotationsChanged || reattached || portsChanged || deviceUnknown) {
		if err := r.redeploy(ctx, q, appID, timeout, "update"); err != nil {
			resp.Diagnostics.AddError("Unable to Update the Exposure",
				fmt.Sprintf("qtail updated the annotations group %s but the redeployment of application %s failed: the change "+
					"reaches the Service at the next successful deployment. Fix the deployment (see its logs in the Qovery console), "+
					"then apply again.\n\n%s", groupID, appID, err))
			return
		}
		redeployed = true
	}
	if deviceUnknown || plan.TailnetFQDN.IsUnknown() || plan.TailnetIPs.IsUnknown() {
		dev, err := r.settleDevice(ctx, t, &plan, plan.expectDevice() && redeployed, timeout, "update", &resp.Diagnostics)
		if err != nil {
			resp.Diagnostics.AddError("Unable to Update the Exposure", fmt.Sprintf("qtail redeployed application %s but %s.", appID, err))
			return
		}
		resp.Diagnostics.Append(plan.fillDevice(ctx, dev)...)
		if dev == nil && plan.ProxyGroup.ValueString() == "" {
			plan.TailnetFQDN = r.guessFQDN(ctx, t, plan.Hostname.ValueString())
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *exposedServiceResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state exposedServiceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, timeout := withTimeout(ctx, state.Timeouts.Delete, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	q, t := r.clients(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	appID, groupID, orgID := state.ApplicationID.ValueString(), state.AnnotationsGroupID.ValueString(), state.OrganizationID.ValueString()
	redeploy := state.Redeploy.IsNull() || state.Redeploy.ValueBool()

	app, err := q.GetApplication(ctx, appID)
	switch {
	case qovery.IsNotFound(err):
		// The application is gone, and its Service and proxy with it.
		redeploy = false
	case err != nil:
		apiError(&resp.Diagnostics, "read application "+appID, err)
		return
	default:
		if ids := app.AnnotationsGroupIDs(); slices.Contains(ids, groupID) {
			rest := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == groupID })
			if _, err := q.SetApplicationAnnotationsGroups(ctx, appID, rest); err != nil {
				apiError(&resp.Diagnostics, "detach annotations group "+groupID+" from application "+appID, err)
				return
			}
		}
		if redeploy {
			if err := r.redeploy(ctx, q, appID, timeout, "delete"); err != nil {
				resp.Diagnostics.AddError("Unable to Remove the Exposure",
					fmt.Sprintf("qtail detached the annotations group %s from application %s, but the redeployment that removes "+
						"the proxy failed. Fix the deployment (see its logs in the Qovery console), then run the destroy again.\n\n%s", groupID, appID, err))
				return
			}
		}
	}
	if err := q.DeleteAnnotationsGroup(ctx, orgID, groupID); err != nil && !qovery.IsNotFound(err) {
		apiError(&resp.Diagnostics, "delete annotations group "+groupID, err)
		return
	}
	if !redeploy {
		if app != nil && state.DeviceID.ValueString() != "" {
			resp.Diagnostics.AddWarning("Proxy Device Left in Place",
				fmt.Sprintf("redeploy is false, so application %s was not redeployed: its proxy device %s stays on the tailnet "+
					"until the application's next deployment.", appID, state.Hostname.ValueString()))
		}
		return
	}
	if state.WaitForDevice.IsNull() || state.WaitForDevice.ValueBool() {
		if err := r.waitForDeviceGone(ctx, t, &state, timeout); err != nil {
			resp.Diagnostics.AddError("Proxy Device Still on the Tailnet", err.Error())
		}
	}
}

func (r *exposedServiceResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	parts, diags := splitImportID(req.ID, 2, "APPLICATION_ID/ANNOTATIONS_GROUP_ID")
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("application_id"), parts[0])...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("annotations_group_id"), parts[1])...)
}

// exposureNoPortDetail explains why an application without a port cannot
// be exposed.
func exposureNoPortDetail(app *qovery.Application) string {
	return fmt.Sprintf("Application %s (%s) declares no port. Qovery creates a Kubernetes Service only for an application with at "+
		"least one port, so the Tailscale operator would have nothing to expose. Declare the port the application listens on "+
		"in Qovery (every declared port becomes reachable from the tailnet), or use an egress or a subnet router instead.", app.Name, app.ID)
}
