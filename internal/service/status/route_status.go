package status

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
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

func (d *routeStatusDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_route_status"
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
