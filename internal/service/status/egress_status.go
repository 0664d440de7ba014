package status

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ datasource.DataSource              = &egressStatusDataSource{}
	_ datasource.DataSourceWithConfigure = &egressStatusDataSource{}
)

// NewEgressStatusDataSource returns the qtail_egress_status data source.
func NewEgressStatusDataSource() datasource.DataSource {
	return &egressStatusDataSource{}
}

type egressStatusDataSource struct {
	conn.DataSourceBase
}

func (d *egressStatusDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_egress_status"
}

func (d *egressStatusDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m egressStatusModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	q, diags := d.Clients.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	t, diags := d.Clients.Tailnet()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	id := m.EgressServiceID.ValueString()
	h, err := q.GetHelm(ctx, id)
	if qovery.IsNotFound(err) {
		resp.Diagnostics.AddAttributeError(path.Root("egress_service_id"), "Egress Service Not Found",
			fmt.Sprintf("Qovery has no Helm service with the ID %s. Check egress_service_id: it is the id of a qtail_egress_service.", id))
		return
	}
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "read the Helm service "+id, err)
		return
	}
	es, ok := readEgressService(h, &resp.Diagnostics)
	if !ok {
		return
	}

	var tags []string
	if m.SourceTags.IsNull() || m.SourceTags.IsUnknown() {
		if tags, err = egressProxyTags(ctx, q, h, es); err != nil {
			tfx.APIError(&resp.Diagnostics, "list the Helm services of the environment "+h.Environment.ID, err)
			return
		}
	} else {
		resp.Diagnostics.Append(m.SourceTags.ElementsAs(ctx, &tags, false)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}

	st, err := checkEgress(ctx, t, es, tags)
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "check the egress service "+es.Name+" against the tailnet", err)
		return
	}

	m.SourceTags = tfx.StringList(tags)
	m.Target = types.StringValue(st.target)
	m.TargetDeviceID = types.StringNull()
	addrs := []string{}
	if st.device != nil {
		m.TargetDeviceID = types.StringValue(cluster.DeviceID(st.device))
		addrs = st.device.Addresses
	}
	m.TargetAddresses = tfx.StringList(addrs)
	objType := types.ObjectType{AttrTypes: egressStatusPortAttrTypes}
	elems := make([]attr.Value, 0, len(st.ports))
	for _, p := range st.ports {
		obj, diags := types.ObjectValue(egressStatusPortAttrTypes, map[string]attr.Value{
			"port":    types.StringValue(p.port.String()),
			"allowed": types.BoolValue(p.allowed),
		})
		resp.Diagnostics.Append(diags...)
		elems = append(elems, obj)
	}
	ports, diags := types.ListValue(objType, elems)
	resp.Diagnostics.Append(diags...)
	m.Ports = ports
	m.Allowed = types.BoolValue(len(st.missing) == 0)
	m.Missing = tfx.StringList(st.missing)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// readEgressService reads the egress Service from the values of its Helm
// service, or adds an error that says why it cannot.
func readEgressService(h *qovery.Helm, diags *diag.Diagnostics) (manifest.EgressService, bool) {
	values, ok := cluster.ManifestsFile(h)
	var es manifest.EgressService
	var err error
	if ok {
		es, err = manifest.ReadEgressService(values)
	}
	var why string
	switch {
	case !ok:
		why = fmt.Sprintf("it has no raw values file %s", manifest.ManifestsFileName)
	case err != nil:
		why = fmt.Sprintf("its values file %s holds no readable Service: %v", manifest.ManifestsFileName, err)
	case es.TailnetFQDN == "" && es.TailnetIP == "":
		why = fmt.Sprintf("its Service %s has neither the %s nor the %s annotation", es.Name, manifest.AnnotationTailnetFQDN, manifest.AnnotationTailnetIP)
	default:
		return es, true
	}
	diags.AddAttributeError(path.Root("egress_service_id"), "Not an Egress Service",
		fmt.Sprintf("The Helm service %q (%s) is not a qtail_egress_service: %s. Set egress_service_id to the id of a qtail_egress_service.",
			h.Name, h.ID, why))
	return es, false
}

// egressProxyTags returns the tags of the egress proxy of es: those of the
// ProxyGroup it names when a Helm service of its environment renders that
// ProxyGroup, otherwise the tags of its own proxy (its tags annotation);
// either falls back to the default proxy tags of the operator of its
// cluster (proxy_default_tags of a qtail_operator; tag:k8s when no
// operator is found), as the operator does.
func egressProxyTags(ctx context.Context, q *qovery.Client, h *qovery.Helm, es manifest.EgressService) ([]string, error) {
	own := es.Tags
	if es.ProxyGroup != "" {
		own = nil
		helms, err := q.ListHelms(ctx, h.Environment.ID)
		if err != nil {
			return nil, err
		}
		for i := range helms {
			values, ok := cluster.ManifestsFile(&helms[i])
			if !ok {
				continue
			}
			if pg, err := manifest.ReadProxyGroup(values); err == nil && pg.Name == es.ProxyGroup {
				own = pg.Tags
				break
			}
		}
	}
	if len(own) > 0 {
		return own, nil
	}
	return cluster.EnvironmentProxyTags(ctx, q, h.Environment.ID)
}

// egressPort is the verdict on one port of an egress Service.
type egressPort struct {
	port    manifest.ServicePort
	allowed bool
}

// egressCheck is the state of an egress Service on the tailnet.
type egressCheck struct {
	target  string
	device  *tailnet.Device
	ports   []egressPort
	missing []string
}

// parseAddr parses an IP address.
func parseAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	return a, err == nil
}

// checkEgress finds the target of es on the tailnet and asks Tailscale,
// with policy tests, whether each source tag may reach it on each port.
func checkEgress(ctx context.Context, t *tailnet.Client, es manifest.EgressService, tags []string) (*egressCheck, error) {
	st := &egressCheck{target: es.TailnetFQDN}
	var ip netip.Addr
	if st.target == "" {
		st.target = es.TailnetIP
		a, ok := parseAddr(es.TailnetIP)
		if !ok {
			// Reported as what is missing, not as a failure of the read.
			st.missing = append(st.missing, fmt.Sprintf("%s is not an IP address: set tailnet_ip of the egress service to a Tailscale "+
				"address (100.x.y.z or fd7a:115c:a1e0::...), or use tailnet_fqdn", es.TailnetIP))
			st.ports = deniedPorts(es.Ports)
			return st, nil
		}
		ip = a.Unmap()
	}
	// The route lists are only needed to find an IP behind a subnet router.
	devices, err := t.ListDevices(ctx, tailnet.ListDevicesOptions{AllFields: ip.IsValid()})
	if err != nil {
		return nil, err
	}
	var dest netip.Addr
	routed := ""
	if ip.IsValid() {
		for i := range devices {
			if slices.ContainsFunc(devices[i].Addresses, func(a string) bool {
				pa, err := netip.ParseAddr(a)
				return err == nil && pa.Unmap() == ip
			}) {
				st.device = &devices[i]
				break
			}
		}
		if st.device == nil {
			routed = subnetRouterOf(devices, ip)
		}
		if st.device != nil || routed != "" {
			dest = ip
		}
	} else {
		want := strings.TrimSuffix(strings.ToLower(es.TailnetFQDN), ".")
		for i := range devices {
			if strings.EqualFold(strings.TrimSuffix(devices[i].Name, "."), want) {
				st.device = &devices[i]
				break
			}
		}
		if st.device != nil {
			dest = preferredAddress(st.device.Addresses)
		}
	}
	if !dest.IsValid() {
		if ip.IsValid() {
			st.missing = append(st.missing, fmt.Sprintf("%s is not on the tailnet: no device has this address and no approved subnet "+
				"route contains it; check tailnet_ip of the egress service, or bring the machine onto the tailnet", st.target))
		} else {
			st.missing = append(st.missing, fmt.Sprintf("%s is not on the tailnet: no device has this MagicDNS name; check "+
				"tailnet_fqdn of the egress service (the full name, such as db.tail4f2a.ts.net), or bring the machine onto the tailnet", st.target))
		}
		st.ports = deniedPorts(es.Ports)
		return st, nil
	}

	verdicts, err := runEgressTests(ctx, t, dest, es.Ports, tags)
	if err != nil {
		var ve *tailnet.ValidationError
		if !errors.As(err, &ve) {
			return nil, err
		}
		st.missing = append(st.missing, fmt.Sprintf("Tailscale could not run the policy tests for %s: %s; check source_tags "+
			"(each tag must be declared in tagOwners)", st.target, ve.Message))
		st.ports = deniedPorts(es.Ports)
		return st, nil
	}
	where := strings.TrimSuffix(st.target, ".")
	if where != dest.String() {
		where = fmt.Sprintf("%s (%s)", where, dest)
	}
	for i, p := range es.Ports {
		ok := true
		for _, tag := range tags {
			reason, denied := verdicts[egressTestKey{tag: tag, port: i}]
			if !denied {
				continue
			}
			ok = false
			head := fmt.Sprintf("%s may not reach %s on %s", tag, where, p)
			if reason != "" {
				head += fmt.Sprintf(" (Tailscale: %s)", reason)
			}
			st.missing = append(st.missing, fmt.Sprintf("%s: add a qtail_grant with src = [\"%s\"], dst = [\"%s\"] and ip = [\"%s\"]",
				head, tag, dest, p))
		}
		st.ports = append(st.ports, egressPort{port: p, allowed: ok})
	}
	return st, nil
}

// deniedPorts lists the ports as not allowed.
func deniedPorts(ports []manifest.ServicePort) []egressPort {
	out := make([]egressPort, 0, len(ports))
	for _, p := range ports {
		out = append(out, egressPort{port: p})
	}
	return out
}

// preferredAddress is the address policy tests use for a device: its first
// IPv4 address, else its first address.
func preferredAddress(addrs []string) netip.Addr {
	var first netip.Addr
	for _, s := range addrs {
		a, err := netip.ParseAddr(s)
		if err != nil {
			continue
		}
		if a.Unmap().Is4() {
			return a.Unmap()
		}
		if !first.IsValid() {
			first = a
		}
	}
	return first
}

// subnetRouterOf returns the hostname of a device with an approved route
// (other than an exit route) that contains ip, or "".
func subnetRouterOf(devices []tailnet.Device, ip netip.Addr) string {
	for _, d := range devices {
		for _, r := range d.EnabledRoutes {
			p, err := netip.ParsePrefix(r)
			if err == nil && p.Bits() > 0 && p.Contains(ip) && slices.ContainsFunc(d.AdvertisedRoutes, func(a string) bool { return a == r }) {
				return d.Hostname
			}
		}
	}
	return ""
}

// egressTestKey names one test: a source tag and a port (its index).
type egressTestKey struct {
	tag  string
	port int
}

// testAddressRE finds the destination a test error is about, as in
// `address "100.64.0.9:5432": want: Accept, got: Drop`.
var testAddressRE = regexp.MustCompile(`address "([^"]+)"`)

// standardDrop is the end of the error of an accept test whose
// destination the policy drops; such an error needs no quoting.
const standardDrop = "want: Accept, got: Drop"

// runEgressTests runs, per protocol, one call with one test per source tag
// whose accept list holds every port of that protocol, and returns the
// tests that failed with Tailscale's reason ("" for a plain drop).
func runEgressTests(ctx context.Context, t *tailnet.Client, dest netip.Addr, ports []manifest.ServicePort, tags []string) (map[egressTestKey]string, error) {
	failed := map[egressTestKey]string{}
	var protos []string
	for _, p := range ports {
		if proto := strings.ToLower(p.Protocol); !slices.Contains(protos, proto) {
			protos = append(protos, proto)
		}
	}
	for _, proto := range protos {
		// The destinations of this call, by their "ip:port" spelling.
		byAddr := map[string][]int{}
		var accept []string
		for i, p := range ports {
			if strings.ToLower(p.Protocol) != proto {
				continue
			}
			a := netip.AddrPortFrom(dest, uint16(p.Port)).String()
			if _, seen := byAddr[a]; !seen {
				accept = append(accept, a)
			}
			byAddr[a] = append(byAddr[a], i)
		}
		tests := make([]tailnet.PolicyTest, 0, len(tags))
		for _, tag := range tags {
			tests = append(tests, tailnet.PolicyTest{Src: tag, Proto: proto, Accept: accept})
		}
		results, err := t.RunPolicyTests(ctx, tests)
		if err != nil {
			return nil, err
		}
		all := func(tag, reason string) {
			for _, idx := range byAddr {
				for _, i := range idx {
					failed[egressTestKey{tag: tag, port: i}] = reason
				}
			}
		}
		for _, r := range results {
			i := slices.IndexFunc(tags, func(tag string) bool { return strings.EqualFold(tag, r.User) })
			if i < 0 {
				// A failure that names no source of this call: count every
				// test of the call as failed rather than guess.
				for _, tag := range tags {
					all(tag, strings.Join(r.Errors, "; "))
				}
				continue
			}
			tag := tags[i]
			for _, e := range r.Errors {
				reason := e
				if strings.HasSuffix(e, standardDrop) {
					reason = ""
				}
				m := testAddressRE.FindStringSubmatch(e)
				if m == nil || byAddr[m[1]] == nil {
					all(tag, reason)
					continue
				}
				for _, idx := range byAddr[m[1]] {
					failed[egressTestKey{tag: tag, port: idx}] = reason
				}
			}
		}
	}
	return failed, nil
}
