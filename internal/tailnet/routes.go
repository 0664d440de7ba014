package tailnet

import (
	"net/netip"
	"slices"
)

// SortRoutes sorts routes in place in the order the API reports a
// device's enabled routes in, and returns them: by address, IPv4 before
// IPv6, then by prefix length ("1.2.0.0/16", "2.0.0.0/24", "10.0.1.0/24",
// "::/0"). Strings that are not prefixes go last, in their order.
//
// The API does not keep the order routes are sent in, so a list qtail
// keeps after enabling routes is sorted this way to read back equal, and
// route comparisons must not depend on the order.
func SortRoutes(routes []string) []string {
	slices.SortStableFunc(routes, compareRoutes)
	return routes
}

func compareRoutes(a, b string) int {
	pa, errA := netip.ParsePrefix(a)
	pb, errB := netip.ParsePrefix(b)
	if errA != nil && errB != nil {
		return 0
	}
	if errA != nil {
		return 1
	}
	if errB != nil {
		return -1
	}
	if pa.Addr() != pb.Addr() {
		return pa.Addr().Compare(pb.Addr())
	}
	return pa.Bits() - pb.Bits()
}
