package tailnetapi

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

// checkRoutes checks routes as POST /device/{id}/routes does: each one a
// CIDR prefix without host bits.
func checkRoutes(routes []string) error {
	for _, rt := range routes {
		pfx, err := netip.ParsePrefix(rt)
		if err != nil {
			return fmt.Errorf("invalid route %q: not a CIDR prefix", rt)
		}
		if pfx.Masked() != pfx {
			return fmt.Errorf("invalid route %q: host bits are set (did you mean %s?)", rt, pfx.Masked())
		}
	}
	return nil
}

// canonicalRoutes returns checked routes in the form Tailscale stores and
// reports them (fd00::/64, not FD00:0::/64).
func canonicalRoutes(routes []string) []string {
	out := make([]string, len(routes))
	for i, rt := range routes {
		out[i] = netip.MustParsePrefix(rt).String()
	}
	return out
}

// sortRoutes sorts enabled routes as the real API reports them: by
// address, IPv4 before IPv6, then by prefix length ("1.2.0.0/16",
// "2.0.0.0/24", "10.0.1.0/24", "fd00::/64"), whatever the order they were
// sent or approved in. Routes that do not parse (only possible through
// SetTopology) go last, in their order.
func sortRoutes(routes []string) {
	slices.SortStableFunc(routes, func(a, b string) int {
		pa, errA := netip.ParsePrefix(a)
		pb, errB := netip.ParsePrefix(b)
		switch {
		case errA != nil || errB != nil:
			return boolCompare(errA != nil, errB != nil)
		case pa.Addr() != pb.Addr():
			return pa.Addr().Compare(pb.Addr())
		default:
			return pa.Bits() - pb.Bits()
		}
	})
}

// boolCompare orders false before true.
func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	default:
		return -1
	}
}

// setEnabledLocked stores a device's enabled routes, sorted as the real
// API reports them unless Options.Compat.EnabledRoutesAsSent keeps the
// order they were sent in.
func (s *Server) setEnabledLocked(d *Device, routes []string) {
	d.EnabledRoutes = slices.Clone(routes)
	if !s.opts.Compat.EnabledRoutesAsSent {
		sortRoutes(d.EnabledRoutes)
	}
}

// containsRoute reports whether list holds route, comparing prefixes
// rather than spellings (fd00::/64 and FD00::/64 are one route).
func containsRoute(list []string, route string) bool {
	want, err := netip.ParsePrefix(route)
	if err != nil {
		return slices.Contains(list, route)
	}
	return slices.ContainsFunc(list, func(r string) bool {
		p, err := netip.ParsePrefix(r)
		return err == nil && p == want || r == route
	})
}

// Device returns a copy of the device with this id or node id.
func (s *Server) Device(id string) (Device, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.deviceIndexLocked(id)
	if i < 0 {
		return Device{}, false
	}
	return s.devices[i].clone(), true
}

// SetAdvertisedRoutes replaces the routes a device advertises, as its
// client does when it starts with new --advertise-routes, and returns the
// device. As on the control plane, autoApprovers are applied at that
// moment: each route the device did not advertise before is enabled when
// the current policy's autoApprovers approve it for the device's tags (or,
// for an untagged device, its user). Enabled routes are never disabled
// here: a route enabled by hand or approved earlier stays enabled, even
// when the device stops advertising it.
func (s *Server) SetAdvertisedRoutes(id string, routes []string) (Device, error) {
	if err := checkRoutes(routes); err != nil {
		return Device{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.deviceIndexLocked(id)
	if i < 0 {
		return Device{}, fmt.Errorf("device %s: %s", id, errNoDevice)
	}
	d := s.devices[i]
	routes = canonicalRoutes(routes)
	pol, _ := aclcheck.Parse(s.policy)
	for _, rt := range routes {
		if containsRoute(d.AdvertisedRoutes, rt) || containsRoute(d.EnabledRoutes, rt) {
			continue
		}
		if pol != nil && pol.RouteApproved(d.Tags, d.User, rt) {
			s.setEnabledLocked(d, append(d.EnabledRoutes, rt))
		}
	}
	d.AdvertisedRoutes = slices.Clone(routes)
	return d.clone(), nil
}

// SetEnabledRoutes replaces the enabled (approved) routes of a device, as
// a person does in the admin console or POST /device/{id}/routes does, and
// returns the device. Routes need not be advertised to be enabled; they
// read back sorted by address.
func (s *Server) SetEnabledRoutes(id string, routes []string) (Device, error) {
	if err := checkRoutes(routes); err != nil {
		return Device{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.deviceIndexLocked(id)
	if i < 0 {
		return Device{}, fmt.Errorf("device %s: %s", id, errNoDevice)
	}
	d := s.devices[i]
	s.setEnabledLocked(d, canonicalRoutes(routes))
	return d.clone(), nil
}
