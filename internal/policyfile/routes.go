package policyfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// exitRoutes are the routes that make a device an exit node.
var exitRoutes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/0"),
	netip.MustParsePrefix("::/0"),
}

// IsExitRoute reports whether route is 0.0.0.0/0 or ::/0.
func IsExitRoute(route netip.Prefix) bool {
	route = route.Masked()
	return route == exitRoutes[0] || route == exitRoutes[1]
}

// RouteDevice is what decides whether autoApprovers cover a device: its
// tags or, for an untagged device, its owner's login name.
type RouteDevice struct {
	Tags []string
	User string
}

// RoutePolicy is what a policy file says about subnet routes and exit
// nodes: which grants and ACLs let someone reach them, and which
// autoApprovers approve them. Build it with ParseRoutePolicy.
type RoutePolicy struct {
	rules     []routeRule
	hosts     map[string]string
	groups    map[string][]string
	approvers []routeApprover
	exitNode  []string
}

// routeRule is one grant or ACL that gives network access: a short
// description and the hosts of its destinations (ports removed).
type routeRule struct {
	desc string
	dst  []string
}

// routeApprover is one autoApprovers.routes entry.
type routeApprover struct {
	key       string
	prefix    netip.Prefix
	approvers []string
}

// routeFile is the part of a policy file that RoutePolicy reads, from the
// standardized JSON. encoding/json matches member names
// case-insensitively, as Tailscale does ("ACLs", "Grants",
// "AutoApprovers", "ExitNode"...).
type routeFile struct {
	Grants        []json.RawMessage   `json:"grants"`
	ACLs          []json.RawMessage   `json:"acls"`
	Hosts         map[string]string   `json:"hosts"`
	Groups        map[string][]string `json:"groups"`
	AutoApprovers struct {
		Routes   map[string][]string `json:"routes"`
		ExitNode []string            `json:"exitNode"`
	} `json:"autoApprovers"`
}

type routeGrant struct {
	Src []string          `json:"src"`
	Dst []string          `json:"dst"`
	IP  []json.RawMessage `json:"ip"`
}

type routeACL struct {
	Action string   `json:"action"`
	Src    []string `json:"src"`
	Users  []string `json:"users"` // legacy name of src
	Dst    []string `json:"dst"`
	Ports  []string `json:"ports"` // legacy name of dst
}

// ParseRoutePolicy reads a policy file (HuJSON or JSON). Entries of grants
// and acls that do not have the documented shape are skipped: Tailscale
// refuses such files, so they only come from a file that was never
// accepted.
func ParseRoutePolicy(b []byte) (*RoutePolicy, error) {
	doc, err := Parse(b)
	if err != nil {
		return nil, err
	}
	std, err := hujson.Standardize(bytes.Clone(b))
	if err != nil {
		return nil, fmt.Errorf("policy: the policy file is not valid HuJSON: %w", err)
	}
	var f routeFile
	if err := json.Unmarshal(std, &f); err != nil {
		return nil, fmt.Errorf("policy: reading the policy file: %w", err)
	}
	p := &RoutePolicy{hosts: f.Hosts, groups: map[string][]string{}, exitNode: f.AutoApprovers.ExitNode}
	for name, members := range f.Groups {
		p.groups[strings.ToLower(name)] = members
	}

	// The qtail markers of the grants, by index.
	markers := map[int]string{}
	if c, ok, err := doc.section(Key{Kind: KindGrant}, false); ok && err == nil && c.arr != nil {
		for i := 0; i < c.len(); i++ {
			if k, ok := lastMarkerOfKind(*c.lead(i), KindGrant); ok {
				markers[i] = k.Name
			}
		}
	}
	for i, raw := range f.Grants {
		var g routeGrant
		if err := json.Unmarshal(raw, &g); err != nil || len(g.Src) == 0 || len(g.IP) == 0 {
			// A grant without ip only gives application capabilities,
			// no network access.
			continue
		}
		desc := fmt.Sprintf("grants[%d]", i)
		if name, ok := markers[i]; ok {
			desc += fmt.Sprintf(" (%s %q)", KindGrant, name)
		}
		p.rules = append(p.rules, routeRule{desc: desc, dst: g.Dst})
	}
	for i, raw := range f.ACLs {
		var a routeACL
		if err := json.Unmarshal(raw, &a); err != nil || !strings.EqualFold(a.Action, "accept") {
			continue
		}
		src, dst := a.Src, a.Dst
		if len(src) == 0 {
			src = a.Users
		}
		if len(dst) == 0 {
			dst = a.Ports
		}
		if len(src) == 0 {
			continue
		}
		hosts := make([]string, 0, len(dst))
		for _, d := range dst {
			hosts = append(hosts, aclHost(d))
		}
		p.rules = append(p.rules, routeRule{desc: fmt.Sprintf("acls[%d]", i), dst: hosts})
	}
	for key, approvers := range f.AutoApprovers.Routes {
		pfx, err := netip.ParsePrefix(key)
		if err != nil {
			continue
		}
		p.approvers = append(p.approvers, routeApprover{key: key, prefix: pfx.Masked(), approvers: approvers})
	}
	return p, nil
}

// aclHost returns the host part of an ACL destination "HOST:PORTS":
// "10.0.0.0/8:*" gives "10.0.0.0/8", "[fd00::1]:22" gives "fd00::1",
// "autogroup:internet:*" gives "autogroup:internet".
func aclHost(dst string) string {
	if rest, ok := strings.CutPrefix(dst, "["); ok {
		if host, _, ok := strings.Cut(rest, "]"); ok {
			return host
		}
	}
	i := strings.LastIndexByte(dst, ':')
	if i < 0 {
		return dst
	}
	return dst[:i]
}

// GrantedBy describes the grants and ACLs that let someone reach route, in
// policy order (grants, then acls), for example `grants[3]`,
// `grants[4] (grant "ops-to-lan")` for a fragment qtail owns, or `acls[0]`.
// A destination covers a subnet route when it is "*" or an IP or a CIDR
// (written as such or through a hosts alias) that overlaps the route. It
// covers an exit route (0.0.0.0/0, ::/0) when it is "*" or
// autogroup:internet. A grant that gives only application capabilities
// (no ip) gives no access.
func (p *RoutePolicy) GrantedBy(route netip.Prefix) []string {
	route = route.Masked()
	var out []string
	for _, r := range p.rules {
		for _, d := range r.dst {
			if p.covers(d, route) {
				out = append(out, r.desc)
				break
			}
		}
	}
	return out
}

// covers reports whether one destination host covers route.
func (p *RoutePolicy) covers(dst string, route netip.Prefix) bool {
	if dst == "*" {
		return true
	}
	if IsExitRoute(route) {
		return strings.EqualFold(dst, "autogroup:internet")
	}
	target, ok := p.hosts[dst]
	if !ok {
		target = dst
	}
	pfx, ok := parseIPOrPrefix(target)
	return ok && pfx.Addr().BitLen() == route.Addr().BitLen() && pfx.Overlaps(route)
}

// parseIPOrPrefix reads "10.0.0.0/8" or "10.1.2.3".
func parseIPOrPrefix(s string) (netip.Prefix, bool) {
	if strings.Contains(s, "/") {
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, false
		}
		return pfx.Masked(), true
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), true
}

// AutoApprovedBy returns the autoApprovers entry that approves route for
// dev, such as `autoApprovers.routes["10.0.0.0/8"]` or
// `autoApprovers.exitNode`, and whether there is one. An entry of
// autoApprovers.routes approves the routes its CIDR contains when it lists
// one of the device's tags or autogroup:tagged (tagged devices), or the
// device's user, a group with the user or autogroup:member (untagged
// devices). autoApprovers.exitNode approves 0.0.0.0/0 and ::/0 the same
// way.
func (p *RoutePolicy) AutoApprovedBy(route netip.Prefix, dev RouteDevice) (string, bool) {
	route = route.Masked()
	best := -1
	for i, a := range p.approvers {
		if a.prefix.Addr().BitLen() != route.Addr().BitLen() || a.prefix.Bits() > route.Bits() || !a.prefix.Contains(route.Addr()) {
			continue
		}
		if !p.approves(a.approvers, dev) {
			continue
		}
		// The most specific entry names the approval; ties go to the
		// smaller key, so that the answer does not depend on map order.
		if best < 0 || a.prefix.Bits() > p.approvers[best].prefix.Bits() ||
			(a.prefix.Bits() == p.approvers[best].prefix.Bits() && a.key < p.approvers[best].key) {
			best = i
		}
	}
	if best >= 0 {
		return fmt.Sprintf("autoApprovers.routes[%q]", p.approvers[best].key), true
	}
	if IsExitRoute(route) && p.approves(p.exitNode, dev) {
		return "autoApprovers.exitNode", true
	}
	return "", false
}

// approves reports whether a list of approvers covers dev.
func (p *RoutePolicy) approves(approvers []string, dev RouteDevice) bool {
	tagged := len(dev.Tags) > 0
	for _, a := range approvers {
		lower := strings.ToLower(a)
		switch {
		case strings.HasPrefix(lower, "tag:"):
			for _, t := range dev.Tags {
				if strings.EqualFold(t, a) {
					return true
				}
			}
		case tagged:
			if lower == "autogroup:tagged" {
				return true
			}
		default:
			if p.approvesUser(a, lower, dev.User) {
				return true
			}
		}
	}
	return false
}

// approvesUser reports whether the approver a (lower in lower case), not a
// tag, covers the user of an untagged device.
func (p *RoutePolicy) approvesUser(a, lower, user string) bool {
	if user == "" {
		return false
	}
	if lower == "autogroup:member" || lower == "autogroup:members" {
		return true
	}
	if strings.HasPrefix(lower, "group:") {
		return slices.ContainsFunc(p.groups[lower], func(m string) bool { return strings.EqualFold(m, user) })
	}
	return strings.EqualFold(a, user)
}
