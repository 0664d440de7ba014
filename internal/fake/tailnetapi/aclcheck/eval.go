package aclcheck

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// A principal is one identity traffic is tested from or to: a user (by
// login), a tagged device or tag, or bare addresses. Rules match it by
// identity (users, groups, tags, autogroups) or by address (hosts, IPs,
// CIDRs).
type principal struct {
	user   string // lowercased login; "" when not a known user
	member bool   // an untagged, user-owned identity
	tags   []string
	addrs  []netip.Prefix
}

func (pr principal) isUser() bool {
	return pr.member && len(pr.tags) == 0
}

// world indexes a topology for access checks.
type world struct {
	users []User
	nodes []Node
}

func newWorld(topo Topology) *world {
	w := &world{users: topo.Users}
	for _, name := range sortedKeys(topo.Nodes) {
		w.nodes = append(w.nodes, topo.Nodes[name])
	}
	return w
}

func userLogin(u User) string {
	if u.Email != "" {
		return strings.ToLower(u.Email)
	}
	return strings.ToLower(u.Name)
}

// findUser finds a topology user by login or name.
func (w *world) findUser(s string) (User, bool) {
	for _, u := range w.users {
		if strings.EqualFold(u.Email, s) || strings.EqualFold(u.Name, s) {
			return u, true
		}
	}
	return User{}, false
}

// login maps a user reference to its canonical login.
func (w *world) login(s string) string {
	if u, ok := w.findUser(s); ok {
		return userLogin(u)
	}
	return strings.ToLower(s)
}

func nodeAddrs(n Node) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{n.IPv4, n.IPv6} {
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return out
}

func lowerAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strings.ToLower(s)
	}
	return out
}

// userPrincipal is a user with the addresses of its untagged devices.
func (w *world) userPrincipal(login string) principal {
	pr := principal{user: login, member: true}
	for _, n := range w.nodes {
		if len(n.Tags) == 0 && n.User != "" && w.login(n.User) == login {
			pr.addrs = append(pr.addrs, nodeAddrs(n)...)
		}
	}
	return pr
}

// tagPrincipal is a tag with the addresses of the devices carrying it.
func (w *world) tagPrincipal(tag string) principal {
	pr := principal{tags: []string{tag}}
	for _, n := range w.nodes {
		if slices.Contains(lowerAll(n.Tags), tag) {
			pr.addrs = append(pr.addrs, nodeAddrs(n)...)
		}
	}
	return pr
}

func (w *world) nodePrincipal(n Node) principal {
	if len(n.Tags) > 0 {
		return principal{tags: lowerAll(n.Tags), addrs: nodeAddrs(n)}
	}
	pr := principal{member: true, addrs: nodeAddrs(n)}
	if n.User != "" {
		pr.user = w.login(n.User)
	}
	return pr
}

// addrPrincipal is an address, with the identity of the device that has
// it when there is one.
func (w *world) addrPrincipal(pfx netip.Prefix) principal {
	if pfx.IsSingleIP() {
		for _, n := range w.nodes {
			if slices.Contains(nodeAddrs(n), pfx) {
				pr := w.nodePrincipal(n)
				pr.addrs = []netip.Prefix{pfx}
				return pr
			}
		}
	}
	return principal{addrs: []netip.Prefix{pfx}}
}

// coveredBy reports whether any of the principal's addresses lies within
// pfx.
func (pr principal) coveredBy(pfx netip.Prefix) bool {
	for _, a := range pr.addrs {
		if a.Addr().BitLen() == pfx.Addr().BitLen() && pfx.Bits() <= a.Bits() && pfx.Contains(a.Addr()) {
			return true
		}
	}
	return false
}

// matches reports whether a src or dst entry of a rule covers the
// principal. self is the source principal, for autogroup:self.
func (p *Policy) matches(w *world, a alias, pr, self principal) bool {
	switch a.kind {
	case aliasAll:
		return true
	case aliasUser:
		return pr.isUser() && pr.user != "" && w.login(a.name) == pr.user
	case aliasUserDomain:
		return pr.isUser() && strings.HasSuffix(pr.user, "@"+a.name)
	case aliasGroup:
		if !pr.isUser() || pr.user == "" {
			return false
		}
		for _, m := range p.groups[a.name] {
			if w.login(m) == pr.user {
				return true
			}
		}
		return false
	case aliasTag:
		return slices.Contains(pr.tags, a.name)
	case aliasPrefix:
		return pr.coveredBy(a.prefix)
	case aliasAutogroup:
		switch a.name {
		case agMember, agMembers:
			return pr.isUser()
		case agTagged:
			return len(pr.tags) > 0
		case agDangerAll:
			return true
		case agSelf:
			return self.isUser() && pr.isUser() && self.user != "" && pr.user == self.user
		case agInternet:
			return slices.ContainsFunc(pr.addrs, func(x netip.Prefix) bool { return isInternet(x.Addr()) })
		}
	}
	return false
}

// privateRanges are the address ranges autogroup:internet leaves out.
var privateRanges = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("::1/128"),
}

func isInternet(a netip.Addr) bool {
	for _, r := range privateRanges {
		if r.Contains(a) {
			return false
		}
	}
	return a.IsGlobalUnicast()
}

// allowed reports whether the network rules let src reach dst on port
// with any of protos.
func (p *Policy) allowed(w *world, src, dst principal, port uint16, protos []int) bool {
	if p.noNetRules {
		return true
	}
	for _, r := range p.rules {
		if !slices.ContainsFunc(r.src, func(a alias) bool { return p.matches(w, a, src, src) }) {
			continue
		}
		for _, d := range r.dst {
			if d.ports.contains(port) && protoMatches(d.proto, protos) && p.matches(w, d.alias, dst, src) {
				return true
			}
		}
	}
	return false
}

// testProtos are the protocols a test without proto checks.
var testProtos = []int{protoTCP, protoUDP}

// parseTestProto parses a test's proto: one with ports.
func parseTestProto(s string) ([]int, error) {
	if s == "" {
		return testProtos, nil
	}
	n, err := parseProto(s)
	if err != nil {
		return nil, err
	}
	if n != protoTCP && n != protoUDP && n != protoSCTP {
		return nil, errors.New("tests can only use tcp, udp or sctp")
	}
	return []int{n}, nil
}

// knownUser resolves a user reference in a test: a topology user (by
// login or name) or a user the policy names.
func (p *Policy) knownUser(w *world, s string) (string, bool) {
	if u, ok := w.findUser(s); ok {
		return userLogin(u), true
	}
	if strings.Contains(s, "@") && p.users[strings.ToLower(s)] {
		return strings.ToLower(s), true
	}
	return "", false
}

// testSources resolves a test's src to the principals it stands for.
func (p *Policy) testSources(w *world, src string) ([]principal, error) {
	src = strings.TrimSpace(src)
	lower := strings.ToLower(src)
	switch {
	case src == "*":
		return nil, errors.New(`"*" is not allowed in tests`)
	case strings.HasPrefix(lower, "tag:"):
		if _, ok := p.tagOwners[lower]; !ok {
			return nil, fmt.Errorf("tag not found: %q", src)
		}
		return []principal{w.tagPrincipal(lower)}, nil
	case strings.HasPrefix(lower, "group:"):
		return p.groupPrincipals(w, src)
	case strings.HasPrefix(lower, "autogroup:"):
		return p.autogroupPrincipals(w, src)
	case strings.Contains(src, "@"):
		login, ok := p.knownUser(w, src)
		if !ok {
			return nil, errors.New("user not found")
		}
		return []principal{w.userPrincipal(login)}, nil
	}
	if pfx, ok := p.hosts[lower]; ok {
		return []principal{w.addrPrincipal(pfx)}, nil
	}
	if pfx, ok := parseAddr(lower); ok {
		return []principal{w.addrPrincipal(pfx)}, nil
	}
	if login, ok := p.knownUser(w, src); ok {
		return []principal{w.userPrincipal(login)}, nil
	}
	return nil, errors.New("invalid address")
}

func (p *Policy) groupPrincipals(w *world, group string) ([]principal, error) {
	members, ok := p.groups[strings.ToLower(group)]
	if !ok {
		return nil, fmt.Errorf("group not found: %q", group)
	}
	if len(members) == 0 {
		return nil, errors.New("group has no members")
	}
	out := make([]principal, 0, len(members))
	for _, m := range members {
		out = append(out, w.userPrincipal(w.login(m)))
	}
	return out, nil
}

// autogroupPrincipals expands autogroup:member to every user and
// autogroup:tagged to every tagged device (or, with none, every declared
// tag).
func (p *Policy) autogroupPrincipals(w *world, ag string) ([]principal, error) {
	name := strings.TrimPrefix(strings.ToLower(ag), "autogroup:")
	var out []principal
	switch name {
	case agMember, agMembers:
		for _, u := range w.users {
			out = append(out, w.userPrincipal(userLogin(u)))
		}
		if len(out) == 0 {
			out = append(out, principal{member: true})
		}
	case agTagged:
		for _, n := range w.nodes {
			if len(n.Tags) > 0 {
				out = append(out, w.nodePrincipal(n))
			}
		}
		if len(out) == 0 {
			for _, t := range sortedKeys(p.tagOwners) {
				out = append(out, w.tagPrincipal(t))
			}
		}
		if len(out) == 0 {
			return nil, errors.New("no tagged devices or tags")
		}
	default:
		if !knownAutogroup(name) {
			return nil, fmt.Errorf("autogroup not found: %q", ag)
		}
		return nil, fmt.Errorf("%q is not allowed in tests", ag)
	}
	return out, nil
}

// errSelfInTests answers autogroup:self tested from something other than
// a user.
var errSelfInTests = errors.New("autogroup:self can only be tested from users")

// testTarget is a parsed test destination. When self is set the
// destination is the source user's own devices.
type testTarget struct {
	port  uint16
	self  bool
	peers []principal
}

// testDestination parses a test's "host:port" destination.
func (p *Policy) testDestination(w *world, dst string) (testTarget, error) {
	host, ports, err := splitHostPorts(strings.TrimSpace(dst))
	if err != nil {
		return testTarget{}, err
	}
	if len(ports) != 1 || ports[0].first != ports[0].last {
		return testTarget{}, errors.New("tests need a single port, not a list, a range or \"*\"")
	}
	t := testTarget{port: ports[0].first}
	switch {
	case host == "*":
		return t, errors.New(`"*" is not allowed in tests`)
	case strings.HasPrefix(host, "tag:"):
		if _, ok := p.tagOwners[host]; !ok {
			return t, fmt.Errorf("tag not found: %q", host)
		}
		t.peers = []principal{w.tagPrincipal(host)}
	case strings.HasPrefix(host, "group:"):
		t.peers, err = p.groupPrincipals(w, host)
	case host == "autogroup:self":
		t.self = true
	case strings.HasPrefix(host, "autogroup:"):
		t.peers, err = p.autogroupPrincipals(w, host)
	case strings.Contains(host, "@"):
		login, ok := p.knownUser(w, host)
		if !ok {
			return t, errors.New("user not found")
		}
		t.peers = []principal{w.userPrincipal(login)}
	default:
		t.peers, err = p.addrDestination(w, host)
	}
	return t, err
}

func (p *Policy) addrDestination(w *world, host string) ([]principal, error) {
	pfx, ok := p.hosts[host]
	if !ok {
		pfx, ok = parseAddr(host)
		if ok && strings.Contains(host, "/") {
			return nil, errors.New("tests need a single address, not a CIDR")
		}
	}
	if ok {
		if !pfx.IsSingleIP() {
			return nil, errors.New("tests need a single address, not a CIDR")
		}
		return []principal{w.addrPrincipal(pfx)}, nil
	}
	if login, ok := p.knownUser(w, host); ok {
		return []principal{w.userPrincipal(login)}, nil
	}
	return nil, fmt.Errorf("%q: invalid address", host)
}

// verdict is the outcome of one test destination.
type verdict int

const (
	verdictDrop verdict = iota
	verdictAccept
	verdictMixed
)

// decide evaluates every source against every destination of t.
func (p *Policy) decide(w *world, srcs []principal, t testTarget, protos []int) (verdict, error) {
	accepted, dropped := false, false
	for _, s := range srcs {
		peers := t.peers
		if t.self {
			if !s.isUser() || s.user == "" {
				return verdictDrop, errSelfInTests
			}
			peers = []principal{w.userPrincipal(s.user)}
		}
		for _, d := range peers {
			if p.allowed(w, s, d, t.port, protos) {
				accepted = true
			} else {
				dropped = true
			}
		}
	}
	switch {
	case accepted && dropped:
		return verdictMixed, nil
	case accepted:
		return verdictAccept, nil
	}
	return verdictDrop, nil
}

// runTest runs one tests entry and returns its errors.
func (p *Policy) runTest(w *world, t policyTest) []string {
	if t.Src == "" {
		return []string{"src must be specified"}
	}
	var errs []string
	if len(t.Accept) == 0 && len(t.Deny) == 0 {
		errs = append(errs, "accept or deny must be specified")
	}
	protos, err := parseTestProto(t.Proto)
	if err != nil {
		errs = append(errs, fmt.Sprintf("proto %q: %v", t.Proto, err))
	}
	srcs, err := p.testSources(w, t.Src)
	if err != nil {
		errs = append(errs, fmt.Sprintf("src %q: %v", t.Src, err))
	}
	if len(errs) > 0 {
		return errs
	}
	check := func(dst string, want verdict) {
		target, err := p.testDestination(w, dst)
		var got verdict
		if err == nil {
			got, err = p.decide(w, srcs, target, protos)
		}
		switch {
		case err != nil:
			errs = append(errs, fmt.Sprintf("address %q: %v", dst, err))
		case want == verdictAccept && got != verdictAccept:
			errs = append(errs, fmt.Sprintf("address %q: want: Accept, got: Drop", dst))
		case want == verdictDrop && got != verdictDrop:
			errs = append(errs, fmt.Sprintf("address %q: want: Drop, got: Accept", dst))
		}
	}
	for _, d := range t.Accept {
		check(d, verdictAccept)
	}
	for _, d := range t.Deny {
		check(d, verdictDrop)
	}
	return errs
}

// runTests runs the policy's tests against topo and returns the failed
// ones.
func (p *Policy) runTests(topo Topology) []TestResult {
	if len(p.file.Tests) == 0 {
		return nil
	}
	w := newWorld(topo)
	var failed []TestResult
	for _, t := range p.file.Tests {
		if errs := p.runTest(w, t); len(errs) > 0 {
			failed = append(failed, TestResult{User: t.Src, Errors: errs})
		}
	}
	return failed
}
