package status

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ datasource.DataSource                   = &routeStatusDataSource{}
	_ datasource.DataSourceWithConfigure      = &routeStatusDataSource{}
	_ datasource.DataSourceWithValidateConfig = &routeStatusDataSource{}
)

// NewRouteStatusDataSource returns the qtail_route_status data source.
func NewRouteStatusDataSource() datasource.DataSource {
	return &routeStatusDataSource{}
}

type routeStatusDataSource struct {
	conn.DataSourceBase
}

type routeStatusModel struct {
	ConnectorID types.String `tfsdk:"connector_id"`
	DeviceID    types.String `tfsdk:"device_id"`
	Hostname    types.String `tfsdk:"hostname"`
	CheckRoutes types.List   `tfsdk:"check_routes"`
	Routes      types.List   `tfsdk:"routes"`
	Missing     types.List   `tfsdk:"missing"`
	OK          types.Bool   `tfsdk:"ok"`
	Devices     types.List   `tfsdk:"devices"`
}

var (
	routeStatusRouteAttrTypes = map[string]attr.Type{
		"route":         types.StringType,
		"exit_node":     types.BoolType,
		"advertised":    types.BoolType,
		"advertised_by": types.ListType{ElemType: types.StringType},
		"approved":      types.BoolType,
		"approval":      types.StringType,
		"granted":       types.BoolType,
		"granted_by":    types.ListType{ElemType: types.StringType},
	}
	routeStatusDeviceAttrTypes = map[string]attr.Type{
		"hostname":          types.StringType,
		"id":                types.StringType,
		"advertised_routes": types.ListType{ElemType: types.StringType},
		"approved_routes":   types.ListType{ElemType: types.StringType},
	}
)

// The values of the approval attribute.
const (
	approvalAuto   = "auto_approver"
	approvalManual = "manual"
)

// routeStatusInputs are the attributes of which exactly one names what to
// check.
var routeStatusInputs = []string{"connector_id", "device_id", "hostname"}

func (d *routeStatusDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_route_status"
}

func (d *routeStatusDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Whether the routes of a connector (or of any device) work, and what to do about those that do not.\n\n" +
			"A route works only when four things hold:\n\n" +
			"1. the device advertises it (the `Connector`'s `advertiseRoutes`, or `exitNode` for `0.0.0.0/0` and `::/0`);\n" +
			"2. it is approved on the device: by an `autoApprovers` entry for the device's tag (`qtail_auto_approver`), by " +
			"`approve_routes` of `qtail_connector`, or by hand in the admin console;\n" +
			"3. a grant or an ACL of the policy file lets someone reach it (`qtail_grant`): approving a route and allowing " +
			"access to it are separate layers;\n" +
			"4. the client accepts routes: `tailscale up --accept-routes` (or `tailscale set --accept-routes`) on Linux, the " +
			"default on the other platforms.\n\n" +
			"This data source checks the first three through the Tailscale API. **The fourth is a setting of each client that no " +
			"API shows: check it on the machines that use the routes.** Each unmet condition is a sentence in `missing` that says " +
			"what to do; `ok` is true when there is none.\n\n" +
			"Reading costs one call per API object: the connector's Helm service (with `connector_id`; for a connector without " +
			"tags, the lookup of its cluster's operator too), the devices (one list), " +
			"and the policy file, read once per provider run and shared with every other qtail policy read.",
		Attributes: map[string]schema.Attribute{
			"connector_id": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "ID of a `qtail_connector` (its Qovery Helm service). The routes checked are the connector's " +
					"subnet routes, then `0.0.0.0/0` and `::/0` when it is an exit node, on each of its devices. Exactly one of " +
					"`connector_id`, `device_id` and `hostname`.",
				Validators: []validator.String{tfx.QoveryID()},
			},
			"device_id": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Node ID (or legacy ID) of a device. The routes checked are those it advertises, then those " +
					"approved without being advertised. Exactly one of `connector_id`, `device_id` and `hostname`.",
				Validators: []validator.String{tfx.NonBlank()},
			},
			"hostname": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Hostname of a device (the machine name, not the MagicDNS name); the routes checked are " +
					"chosen as with `device_id`. Exactly one of `connector_id`, `device_id` and `hostname`.",
				Validators: []validator.String{tfx.NonBlank()},
			},
			"check_routes": schema.ListAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: "Routes to check instead of the default ones, in this order, such as `[\"10.20.0.0/16\"]`. " +
					"Each a CIDR in canonical form.",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(tfx.StringCheck{Rule: "must be a CIDR in canonical form", Check: policyfile.ValidCanonicalCIDR}),
				},
			},
			"routes": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "One entry per route checked, in the order of `check_routes`, of the connector's configuration, or of the device's routes.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"route": schema.StringAttribute{
						Computed:            true,
						MarkdownDescription: "The route, a CIDR.",
					},
					"exit_node": schema.BoolAttribute{
						Computed:            true,
						MarkdownDescription: "Whether the route is an exit node route, `0.0.0.0/0` or `::/0`.",
					},
					"advertised": schema.BoolAttribute{
						Computed:            true,
						MarkdownDescription: "Whether every device that should carry the route advertises it (false when none is on the tailnet).",
					},
					"advertised_by": schema.ListAttribute{
						ElementType:         types.StringType,
						Computed:            true,
						MarkdownDescription: "Hostnames of the devices that advertise the route.",
					},
					"approved": schema.BoolAttribute{
						Computed:            true,
						MarkdownDescription: "Whether the route is approved (enabled) on every device that should carry it (false when none is on the tailnet).",
					},
					"approval": schema.StringAttribute{
						Computed: true,
						MarkdownDescription: "How the route is approved: `auto_approver` when the policy file's `autoApprovers` approve it " +
							"for every device (`routes` with a CIDR that contains it, or `exitNode` for exit node routes, listing the " +
							"device's tag, `autogroup:tagged`, or for a device of a user the user, a group or `autogroup:member`), " +
							"`manual` when it is approved on every device but some device has no such approver, and an empty " +
							"string when it is not approved.",
					},
					"granted": schema.BoolAttribute{
						Computed: true,
						MarkdownDescription: "Whether a grant or an ACL lets someone reach the route: one with `*` in `dst`, an IP " +
							"or a CIDR that overlaps the route (written as such or through `hosts`), or for an exit node route " +
							"`autogroup:internet`.",
					},
					"granted_by": schema.ListAttribute{
						ElementType: types.StringType,
						Computed:    true,
						MarkdownDescription: "The grants and ACLs that let someone reach the route, such as `grants[3]`, `acls[0]`, " +
							"or `grants[4] (grant \"ops-to-lan\")` for a `qtail_grant`.",
					},
				}},
			},
			"missing": schema.ListAttribute{
				ElementType: types.StringType,
				Computed:    true,
				MarkdownDescription: "One sentence per unmet condition (a device of the connector not on the tailnet, a route not " +
					"advertised, not approved or not granted), each saying what to do. Empty when the routes work as far as the " +
					"API can tell.",
			},
			"ok": schema.BoolAttribute{
				Computed:            true,
				MarkdownDescription: "Whether `missing` is empty. Whether clients accept routes is not part of it.",
			},
			"devices": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The devices checked that are on the tailnet: the connector's, in replica order, or the one device.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"hostname": schema.StringAttribute{Computed: true, MarkdownDescription: "Hostname of the device."},
					"id":       schema.StringAttribute{Computed: true, MarkdownDescription: "Node ID of the device."},
					"advertised_routes": schema.ListAttribute{
						ElementType: types.StringType, Computed: true,
						MarkdownDescription: "Routes the device advertises.",
					},
					"approved_routes": schema.ListAttribute{
						ElementType: types.StringType, Computed: true,
						MarkdownDescription: "Routes approved (enabled) on the device.",
					},
				}},
			},
		},
	}
}

func (d *routeStatusDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var m routeStatusModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	values := []types.String{m.ConnectorID, m.DeviceID, m.Hostname}
	var set []string
	for i, v := range values {
		if v.IsUnknown() {
			return // known at apply time only
		}
		if !v.IsNull() {
			set = append(set, routeStatusInputs[i])
		}
	}
	switch {
	case len(set) == 0:
		resp.Diagnostics.AddAttributeError(path.Root("connector_id"), "Missing Route Source",
			"Set one of connector_id (the id of a qtail_connector), device_id or hostname (a device of the tailnet): "+
				"it says whose routes to check.")
	case len(set) > 1:
		for _, name := range set[1:] {
			resp.Diagnostics.AddAttributeError(path.Root(name), "Conflicting Route Sources",
				fmt.Sprintf("%s cannot be set with %s: set only one of connector_id, device_id and hostname.", name, set[0]))
		}
	}
}

// routeSubject is what the routes are checked on.
type routeSubject struct {
	// connector is set when connector_id names the subject; connectorTags
	// are the tags of its devices.
	connector     *manifest.Connector
	connectorTags []string
	// hostnames are the devices that should carry the routes, in order;
	// devices holds those found, by hostname.
	hostnames []string
	devices   map[string]*tailnet.Device
	routes    []string
}

func (d *routeStatusDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m routeStatusModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	t, diags := d.Clients.Tailnet()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	var subject *routeSubject
	switch {
	case !m.ConnectorID.IsNull():
		q, diags := d.Clients.Qovery()
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
		subject = readConnectorSubject(ctx, q, t, m.ConnectorID.ValueString(), &resp.Diagnostics)
	case !m.DeviceID.IsNull():
		id := m.DeviceID.ValueString()
		dev, err := t.GetDevice(ctx, id)
		if tailnet.IsNotFound(err) {
			resp.Diagnostics.AddAttributeError(path.Root("device_id"), "Device Not Found",
				fmt.Sprintf("The tailnet has no device with the ID %q. Check device_id (a node ID such as nABC123CNTRL, "+
					"or the legacy numeric ID), or use hostname instead.", id))
			return
		}
		if err != nil {
			tfx.APIError(&resp.Diagnostics, "read the device "+id, err)
			return
		}
		subject = deviceSubject(dev)
	default:
		hostname := m.Hostname.ValueString()
		dev, err := t.FindDeviceByHostname(ctx, hostname)
		if err != nil {
			tfx.APIError(&resp.Diagnostics, "look up the device "+hostname, err)
			return
		}
		if dev == nil {
			resp.Diagnostics.AddAttributeError(path.Root("hostname"), "Device Not Found",
				fmt.Sprintf("The tailnet has no device with the hostname %q. Check the hostname (the machine name, not the MagicDNS name), "+
					"or make this data source depend on the resource that brings the device up.", hostname))
			return
		}
		subject = deviceSubject(dev)
	}
	if resp.Diagnostics.HasError() || subject == nil {
		return
	}
	if !m.CheckRoutes.IsNull() && !m.CheckRoutes.IsUnknown() {
		var routes []string
		resp.Diagnostics.Append(m.CheckRoutes.ElementsAs(ctx, &routes, false)...)
		subject.routes = routes
	}

	store, diags := d.Clients.Policy()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	snap, err := store.Snapshot(ctx)
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "read the policy file", err)
		return
	}
	rp, err := policyfile.ParseRoutePolicy(snap.HuJSON)
	if err != nil {
		resp.Diagnostics.AddError("Unreadable Policy File", fmt.Sprintf("qtail could not parse the tailnet policy file: %v. "+
			"Correct the policy file in the Tailscale admin console.", err))
		return
	}

	results, missing := evaluateRouteStatus(subject, rp)
	m.Routes = routeResultsValue(results, &resp.Diagnostics)
	m.Devices = routeDevicesValue(subject, &resp.Diagnostics)
	m.Missing = tfx.StringList(missing)
	m.OK = types.BoolValue(len(missing) == 0)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// readConnectorSubject reads the connector of a Helm service and finds its
// devices with one call.
func readConnectorSubject(ctx context.Context, q *qovery.Client, t *tailnet.Client, id string, diags *diag.Diagnostics) *routeSubject {
	h, err := q.GetHelm(ctx, id)
	if qovery.IsNotFound(err) {
		diags.AddAttributeError(path.Root("connector_id"), "Connector Not Found",
			fmt.Sprintf("Qovery has no Helm service with the ID %s. Check connector_id: it is the id of a qtail_connector.", id))
		return nil
	}
	if err != nil {
		tfx.APIError(diags, "read the Helm service "+id, err)
		return nil
	}
	values, ok := cluster.ManifestsFile(h)
	var c manifest.Connector
	if ok {
		c, err = manifest.ReadConnector(values)
	}
	if !ok || err != nil {
		why := fmt.Sprintf("it has no raw values file %s", manifest.ManifestsFileName)
		if ok {
			why = fmt.Sprintf("its values file %s holds no readable Connector: %v", manifest.ManifestsFileName, err)
		}
		diags.AddAttributeError(path.Root("connector_id"), "Not a Connector",
			fmt.Sprintf("The Helm service %q (%s) is not a qtail_connector: %s. Set connector_id to the id of a qtail_connector, "+
				"or use device_id or hostname to check the routes of any device.", h.Name, id, why))
		return nil
	}
	s := &routeSubject{connector: &c, connectorTags: c.Tags, hostnames: c.DeviceHostnames(), routes: c.AdvertisedRoutes(),
		devices: map[string]*tailnet.Device{}}
	if len(c.Tags) == 0 {
		// The Connector names no tags: the operator gives its devices
		// its default proxy tags.
		if s.connectorTags, err = cluster.EnvironmentProxyTags(ctx, q, h.Environment.ID); err != nil {
			tfx.APIError(diags, "find the operator of the connector's cluster (its default proxy tags)", err)
			return nil
		}
	}
	switch len(s.hostnames) {
	case 0:
	case 1:
		dev, err := t.FindDeviceByHostname(ctx, s.hostnames[0])
		if err != nil {
			tfx.APIError(diags, "look up the device "+s.hostnames[0], err)
			return nil
		}
		if dev != nil {
			s.devices[dev.Hostname] = dev
		}
	default:
		list, err := t.ListDevices(ctx, tailnet.ListDevicesOptions{AllFields: true})
		if err != nil {
			tfx.APIError(diags, "list the devices of the tailnet", err)
			return nil
		}
		for i := range list {
			dev := &list[i]
			if !slices.Contains(s.hostnames, dev.Hostname) {
				continue
			}
			// Several devices with one hostname: a proxy that came back
			// before its old device was removed. The connected one, then
			// the one seen last, is the replica.
			if prev, ok := s.devices[dev.Hostname]; !ok || preferReplicaDevice(dev, prev) {
				s.devices[dev.Hostname] = dev
			}
		}
	}
	return s
}

// preferReplicaDevice reports whether a is a better match than b among
// devices with the same hostname, as FindDeviceByHostname chooses.
func preferReplicaDevice(a, b *tailnet.Device) bool {
	if a.ConnectedToControl != b.ConnectedToControl {
		return a.ConnectedToControl
	}
	return a.LastSeen.After(b.LastSeen)
}

// deviceSubject checks the routes of one device: those it advertises, then
// those approved without being advertised.
func deviceSubject(dev *tailnet.Device) *routeSubject {
	routes := slices.Clone(dev.AdvertisedRoutes)
	for _, r := range dev.EnabledRoutes {
		if !routeListHas(routes, r) {
			routes = append(routes, r)
		}
	}
	return &routeSubject{hostnames: []string{dev.Hostname}, devices: map[string]*tailnet.Device{dev.Hostname: dev}, routes: routes}
}

// routeListHas reports whether list holds route, comparing prefixes
// rather than spellings.
func routeListHas(list []string, route string) bool {
	want, err := netip.ParsePrefix(route)
	if err != nil {
		return slices.Contains(list, route)
	}
	want = want.Masked()
	return slices.ContainsFunc(list, func(r string) bool {
		p, err := netip.ParsePrefix(r)
		return r == route || err == nil && p.Masked() == want
	})
}

// routeResult is the status of one route.
type routeResult struct {
	route        string
	exitNode     bool
	advertised   bool
	advertisedBy []string
	approved     bool
	approval     string
	grantedBy    []string
}

// evaluateRouteStatus evaluates the three conditions the API shows for
// each route of s, and says what to do about each unmet one.
func evaluateRouteStatus(s *routeSubject, rp *policyfile.RoutePolicy) ([]routeResult, []string) {
	var missing []string
	if len(s.hostnames) == 0 && s.connector != nil {
		missing = append(missing, fmt.Sprintf("the connector %s has 0 replicas, so no device carries its routes: set replicas "+
			"to 1 or more", s.connector.Name))
	}
	var found []*tailnet.Device
	for _, h := range s.hostnames {
		dev, ok := s.devices[h]
		if !ok {
			missing = append(missing, missingDeviceSentence(s, h))
			continue
		}
		found = append(found, dev)
	}
	results := make([]routeResult, 0, len(s.routes))
	for _, route := range s.routes {
		pfx, perr := netip.ParsePrefix(route)
		valid := perr == nil
		r := routeResult{route: route, exitNode: valid && policyfile.IsExitRoute(pfx), advertisedBy: []string{}, grantedBy: []string{}}
		r.advertised, r.approved = len(found) > 0, len(found) > 0
		auto := true
		for _, dev := range found {
			advertised := routeListHas(dev.AdvertisedRoutes, route)
			enabled := routeListHas(dev.EnabledRoutes, route)
			by := ""
			hasApprover := false
			if valid {
				by, hasApprover = rp.AutoApprovedBy(pfx, policyfile.RouteDevice{Tags: dev.Tags, User: dev.User})
			}
			if advertised {
				r.advertisedBy = append(r.advertisedBy, dev.Hostname)
			} else {
				r.advertised = false
				missing = append(missing, notAdvertisedSentence(s, dev, route, r.exitNode))
			}
			if !enabled {
				r.approved = false
				// Not advertised yet but covered by autoApprovers: Tailscale
				// approves it when the device advertises it.
				if !hasApprover || advertised {
					missing = append(missing, notApprovedSentence(s, dev, route, r.exitNode, by))
				}
			}
			auto = auto && hasApprover
		}
		if r.approved {
			r.approval = approvalManual
			if auto {
				r.approval = approvalAuto
			}
		}
		if valid {
			if by := rp.GrantedBy(pfx); by != nil {
				r.grantedBy = by
			}
		}
		if len(r.grantedBy) == 0 {
			missing = append(missing, notGrantedSentence(route, r.exitNode))
		}
		results = append(results, r)
	}
	return results, missing
}

// routeDeviceLabel names a device in a sentence: "homelab (nABC123CNTRL)".
func routeDeviceLabel(dev *tailnet.Device) string {
	return fmt.Sprintf("%s (%s)", dev.Hostname, cluster.DeviceID(dev))
}

func missingDeviceSentence(s *routeSubject, hostname string) string {
	name := s.connector.Name
	return fmt.Sprintf("device %s of the connector %s is not on the tailnet: deploy the connector's Helm service, then check "+
		"the Connector's status in the cluster (kubectl describe connector %s) and the operator's logs", hostname, name, name)
}

func notAdvertisedSentence(s *routeSubject, dev *tailnet.Device, route string, exit bool) string {
	head := fmt.Sprintf("%s is not advertised by %s: ", route, routeDeviceLabel(dev))
	switch {
	case s.connector != nil && routeListHas(s.connector.AdvertisedRoutes(), route):
		return head + fmt.Sprintf("the connector lists it, so deploy the connector's Helm service again and check the Connector's "+
			"status in the cluster (kubectl describe connector %s)", s.connector.Name)
	case s.connector != nil && exit:
		return head + "set exit_node = true on the connector"
	case s.connector != nil:
		return head + "add it to subnet_routes of the connector"
	case exit:
		return head + "make the device an exit node (tailscale set --advertise-exit-node, or exitNode: true in its Connector)"
	}
	return head + fmt.Sprintf("advertise it from the device (tailscale set --advertise-routes=%s, with the routes it already "+
		"advertises), or add it to advertiseRoutes of its Connector", route)
}

func notApprovedSentence(s *routeSubject, dev *tailnet.Device, route string, exit bool, approvedBy string) string {
	head := fmt.Sprintf("%s is not approved on %s", route, routeDeviceLabel(dev))
	if approvedBy != "" {
		// autoApprovers cover it, yet it is advertised and not approved:
		// it was advertised before the approver existed.
		fix := "restart the device so that it advertises the route again (for a connector, its proxy pod)"
		if s.connector != nil {
			fix = "set approve_routes = true on the connector, restart its proxy pod so that the device advertises the route again"
		}
		return head + fmt.Sprintf(" although %s covers it (Tailscale applies autoApprovers when a device advertises a route): %s, "+
			"or approve it in the admin console", approvedBy, fix)
	}
	key := "route:" + route
	if exit {
		key = policyfile.ExitNodeName
	}
	if s.connector != nil {
		return head + fmt.Sprintf(": set approve_routes = true on the connector, add a qtail_auto_approver for %s with the "+
			"connector's tag (%s), or approve it in the admin console", key, strings.Join(s.connectorTags, ", "))
	}
	who := fmt.Sprintf("the device's tag (%s)", strings.Join(dev.Tags, ", "))
	if len(dev.Tags) == 0 {
		who = fmt.Sprintf("the device's owner (%s)", dev.User)
	}
	return head + fmt.Sprintf(": add a qtail_auto_approver for %s with %s, or approve it in the admin console", key, who)
}

func notGrantedSentence(route string, exit bool) string {
	if exit {
		return fmt.Sprintf("%s is not granted: no grant or ACL has autogroup:internet (or *) in dst, so nobody may use the exit node; "+
			"add a qtail_grant with dst = [\"autogroup:internet\"] for those who need it", route)
	}
	return fmt.Sprintf("%s is not granted: no grant or ACL has it (or an address, CIDR or hosts alias within it) in dst; "+
		"add a qtail_grant with dst = [\"%s\"] for those who need it", route, route)
}

func routeResultsValue(results []routeResult, diags *diag.Diagnostics) types.List {
	objType := types.ObjectType{AttrTypes: routeStatusRouteAttrTypes}
	elems := make([]attr.Value, 0, len(results))
	for _, r := range results {
		obj, d := types.ObjectValue(routeStatusRouteAttrTypes, map[string]attr.Value{
			"route":         types.StringValue(r.route),
			"exit_node":     types.BoolValue(r.exitNode),
			"advertised":    types.BoolValue(r.advertised),
			"advertised_by": tfx.StringList(r.advertisedBy),
			"approved":      types.BoolValue(r.approved),
			"approval":      types.StringValue(r.approval),
			"granted":       types.BoolValue(len(r.grantedBy) > 0),
			"granted_by":    tfx.StringList(r.grantedBy),
		})
		diags.Append(d...)
		elems = append(elems, obj)
	}
	v, d := types.ListValue(objType, elems)
	diags.Append(d...)
	return v
}

func routeDevicesValue(s *routeSubject, diags *diag.Diagnostics) types.List {
	objType := types.ObjectType{AttrTypes: routeStatusDeviceAttrTypes}
	var elems []attr.Value
	for _, h := range s.hostnames {
		dev, ok := s.devices[h]
		if !ok {
			continue
		}
		obj, d := types.ObjectValue(routeStatusDeviceAttrTypes, map[string]attr.Value{
			"hostname":          types.StringValue(dev.Hostname),
			"id":                types.StringValue(cluster.DeviceID(dev)),
			"advertised_routes": tfx.StringList(dev.AdvertisedRoutes),
			"approved_routes":   tfx.StringList(dev.EnabledRoutes),
		})
		diags.Append(d...)
		elems = append(elems, obj)
	}
	v, d := types.ListValue(objType, elems)
	diags.Append(d...)
	return v
}
