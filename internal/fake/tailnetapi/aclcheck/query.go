package aclcheck

import (
	"net/netip"
	"slices"
	"strings"
)

// TagOwners returns a copy of the tagOwners section, keyed by tag as
// written in the policy.
func (p *Policy) TagOwners() map[string][]string {
	out := make(map[string][]string, len(p.file.TagOwners))
	for tag, owners := range p.file.TagOwners {
		out[tag] = slices.Clone(owners)
	}
	return out
}

// CanOwnTag reports whether tagOwners[tag] lists owner (for example the
// tag "tag:k8s-operator") directly. Tags and owners compare
// case-insensitively.
func (p *Policy) CanOwnTag(owner, tag string) bool {
	owners, ok := p.tagOwners[strings.ToLower(tag)]
	if !ok {
		return false
	}
	return slices.ContainsFunc(owners, func(o string) bool { return strings.EqualFold(o, owner) })
}

// exitRoutes are the routes that make a device an exit node.
var exitRoutes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/0"),
	netip.MustParsePrefix("::/0"),
}

// RouteApproved reports whether autoApprovers approve route (a CIDR) for a
// device with the given tags or, for an untagged device, owned by
// deviceUser (a login). An autoApprovers.routes entry approves the routes
// its CIDR contains when it lists one of the device's tags, its user, a
// group with the user, autogroup:member (untagged devices) or
// autogroup:tagged (tagged devices). The exit routes 0.0.0.0/0 and ::/0
// are also approved by autoApprovers.exitNode.
func (p *Policy) RouteApproved(deviceTags []string, deviceUser string, route string) bool {
	r, err := netip.ParsePrefix(route)
	if err != nil {
		return false
	}
	r = r.Masked()
	for _, ra := range p.routes {
		if ra.prefix.Addr().BitLen() == r.Addr().BitLen() && ra.prefix.Bits() <= r.Bits() &&
			ra.prefix.Contains(r.Addr()) && p.approves(ra.approvers, deviceTags, deviceUser) {
			return true
		}
	}
	return slices.Contains(exitRoutes, r) && p.approves(p.exitNode, deviceTags, deviceUser)
}

// approves reports whether a list of approvers covers a device.
func (p *Policy) approves(approvers, deviceTags []string, deviceUser string) bool {
	tagged := len(deviceTags) > 0
	for _, a := range approvers {
		lower := strings.ToLower(a)
		switch {
		case strings.HasPrefix(lower, "tag:"):
			if slices.ContainsFunc(deviceTags, func(t string) bool { return strings.EqualFold(t, a) }) {
				return true
			}
		case tagged:
			if lower == "autogroup:tagged" {
				return true
			}
		case deviceUser == "":
		case strings.HasPrefix(lower, "group:"):
			if slices.Contains(p.groups[lower], strings.ToLower(deviceUser)) {
				return true
			}
		case lower == "autogroup:member", lower == "autogroup:members":
			return true
		case strings.EqualFold(a, deviceUser):
			return true
		}
	}
	return false
}

// Allows reports whether the policy lets src reach dst over proto, as a
// tests entry {"src": src, "proto": proto, "accept": [dst]} would pass
// against topo. src is one user (login or name), group, tag, host, IP or
// autogroup:member/tagged; dst is "host:port" with a single port; proto
// is empty (TCP or UDP), a protocol name or a number. A src or dst that
// does not resolve is not allowed.
func (p *Policy) Allows(topo Topology, src string, dst string, proto string) bool {
	errs := p.runTest(newWorld(topo), policyTest{Src: src, Proto: proto, Accept: []string{dst}})
	return len(errs) == 0
}

// HasAllowAll reports whether the policy allows all traffic: it has the
// default allow-all grant (src ["*"], dst ["*"], ip ["*"]) or ACL
// (src ["*"], dst ["*:*"]), or neither an acls nor a grants section, which
// SaaS treats as allow-all.
func (p *Policy) HasAllowAll() bool {
	if p.noNetRules {
		return true
	}
	for _, g := range p.file.Grants {
		if slices.Contains(g.Src, "*") && slices.Contains(g.Dst, "*") && slices.Contains(g.IP, "*") &&
			len(g.Via) == 0 && len(g.SrcPosture) == 0 {
			return true
		}
	}
	for _, a := range p.file.ACLs {
		if slices.Contains(a.Src, "*") && slices.Contains(a.Dst, "*:*") && a.Proto == "" && len(a.SrcPosture) == 0 {
			return true
		}
	}
	return false
}
