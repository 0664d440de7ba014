package aclcheck

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Policy is a parsed policy file that passed SaaS's static validation. It
// answers questions about tag ownership, route approval and access. The
// zero value is not usable; use Parse. A Policy is never modified after
// Parse, so its methods are safe for concurrent use.
type Policy struct {
	file *policyFile

	// tagOwners maps each lowercased declared tag to its owners as written.
	tagOwners map[string][]string
	// groups maps each lowercased group to its lowercased members.
	groups map[string][]string
	hosts  map[string]netip.Prefix
	ipsets map[string]bool
	// users are the lowercased user logins the policy names anywhere.
	users map[string]bool

	rules      []netRule
	routes     []routeApproval
	exitNode   []string
	noNetRules bool
}

// netRule is an acls or grants entry reduced to what access checks need.
type netRule struct {
	src []alias
	dst []dstPorts
}

// dstPorts is one destination of a rule with one protocol and port range.
// proto 0 stands for the default protocols.
type dstPorts struct {
	alias alias
	proto int
	ports portRange
}

// routeApproval is one autoApprovers.routes entry.
type routeApproval struct {
	prefix    netip.Prefix
	approvers []string
}

// Parse parses and validates a policy file (HuJSON or JSON) the way SaaS
// does before it runs the policy's tests. The error carries SaaS's message.
func Parse(policy []byte) (*Policy, *Error) {
	f, err := decodeFile(policy)
	if err != nil {
		return nil, &Error{Message: err.Error()}
	}
	p := &Policy{
		file:      f,
		tagOwners: map[string][]string{},
		groups:    map[string][]string{},
		hosts:     map[string]netip.Prefix{},
		ipsets:    map[string]bool{},
		users:     map[string]bool{},
	}
	for _, step := range []func() error{
		p.loadTagOwners,
		p.loadGroups,
		p.loadHosts,
		p.loadIPSets,
		p.checkTagOwners,
		p.loadACLs,
		p.loadGrants,
		p.checkSSH,
		p.checkNodeAttrs,
		p.loadAutoApprovers,
		p.checkSSHTests,
	} {
		if err := step(); err != nil {
			return nil, &Error{Message: err.Error()}
		}
	}
	p.noNetRules = f.ACLs == nil && f.Grants == nil
	return p, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// noteUser records a user login the policy names, so that tests may use
// it as a src or dst even when it has no devices.
func (p *Policy) noteUser(s string) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "@") && !strings.Contains(s, ":") {
		p.users[strings.ToLower(s)] = true
	}
}

func (p *Policy) loadTagOwners() error {
	for _, tag := range sortedKeys(p.file.TagOwners) {
		if err := checkTagName(tag); err != nil {
			return fmt.Errorf("tagOwners[%q]: %w", tag, err)
		}
		lower := strings.ToLower(tag)
		p.tagOwners[lower] = p.file.TagOwners[tag]
	}
	return nil
}

func (p *Policy) loadGroups() error {
	names := sortedKeys(p.file.Groups)
	for _, g := range names {
		if !strings.HasPrefix(strings.ToLower(g), "group:") {
			return fmt.Errorf("groups[%q]: group names must start with 'group:'", g)
		}
	}
	// SaaS names the nesting it finds first walking the groups in
	// reverse order.
	for _, g := range slices.Backward(names) {
		for _, m := range p.file.Groups[g] {
			if strings.HasPrefix(strings.ToLower(m), "group:") {
				return fmt.Errorf("groups[%q]: %q: group members cannot be recursive", g, m)
			}
		}
	}
	for _, g := range names {
		members := make([]string, 0, len(p.file.Groups[g]))
		for _, m := range p.file.Groups[g] {
			p.noteUser(m)
			members = append(members, strings.ToLower(m))
		}
		p.groups[strings.ToLower(g)] = members
	}
	return nil
}

func (p *Policy) loadHosts() error {
	for _, name := range sortedKeys(p.file.Hosts) {
		if name == "" || name == "*" || strings.ContainsAny(name, ":@/ ") {
			return fmt.Errorf("hosts[%q]: invalid host name", name)
		}
		value := p.file.Hosts[name]
		pfx, ok := parseAddr(value)
		if !ok {
			return fmt.Errorf("hosts[%q]: %q: invalid address", name, value)
		}
		p.hosts[strings.ToLower(name)] = pfx
	}
	return nil
}

func (p *Policy) loadIPSets() error {
	for _, name := range sortedKeys(p.file.IPSets) {
		if !strings.HasPrefix(strings.ToLower(name), "ipset:") {
			return fmt.Errorf("ipsets[%q]: ipset names must start with 'ipset:'", name)
		}
		p.ipsets[strings.ToLower(name)] = true
	}
	return nil
}

// checkTagOwners checks that the owners of every tag exist.
func (p *Policy) checkTagOwners() error {
	for _, tag := range sortedKeys(p.file.TagOwners) {
		for _, owner := range p.file.TagOwners[tag] {
			p.noteUser(owner)
			if err := p.checkOwner(owner); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkOwner checks a tag owner or route approver: a user, a group, a
// declared tag or a user autogroup.
func (p *Policy) checkOwner(owner string) error {
	lower := strings.ToLower(owner)
	switch {
	case strings.HasPrefix(lower, "tag:"), strings.HasPrefix(lower, "group:"):
		_, err := p.parseAlias(owner)
		return err
	case strings.HasPrefix(lower, "autogroup:"):
		name := strings.TrimPrefix(lower, "autogroup:")
		if !knownAutogroup(name) {
			return fmt.Errorf("autogroup not found: %q", owner)
		}
		return nil
	case strings.Contains(owner, "@"):
		return nil
	}
	return fmt.Errorf("%q: invalid owner", owner)
}

// checkSrc applies the src-side rules to one entry.
func (p *Policy) checkSrc(entry string) (alias, error) {
	a, err := p.parseAlias(entry)
	if err != nil {
		return alias{}, fmt.Errorf("src=%w", err)
	}
	switch a.kind {
	case aliasAutogroup:
		switch a.name {
		case agSelf, agInternet, agNonRoot:
			return alias{}, fmt.Errorf("%q not valid on the src side of a rule", entry)
		}
	case aliasService:
		return alias{}, fmt.Errorf("%q not valid on the src side of a rule", entry)
	case aliasUser:
		p.noteUser(entry)
	}
	return a, nil
}

// checkDstAutogroup applies the dst-side autogroup rules.
func checkDstAutogroup(a alias) error {
	switch a.name {
	case agDangerAll:
		return errors.New("cannot use autogroup:danger-all as a dst")
	case agNonRoot:
		return fmt.Errorf("%q not valid on the dst side of a rule", "autogroup:"+a.name)
	}
	return nil
}

// errAllIPs is SaaS's answer to a default route used as a destination.
const errAllIPs = `to allow all IP addresses, use "*" or "autogroup:internet"`

// errSelfSources is SaaS's answer to autogroup:self with a source that is
// not a set of users.
var errSelfSources = errors.New("autogroup:self can only be used with users, groups, or supported autogroups")

// checkSelfSources checks the sources of a rule that has autogroup:self
// among its destinations. ACLs accept "*" there (it narrows to each user's
// own devices); grants do not.
func checkSelfSources(srcs []alias, allowAll bool) error {
	for _, a := range srcs {
		switch a.kind {
		case aliasUser, aliasUserDomain, aliasGroup:
			continue
		case aliasAll:
			if allowAll {
				continue
			}
		case aliasAutogroup:
			if a.name == agMember || a.name == agMembers || roleAutogroups[a.name] {
				continue
			}
		}
		return errSelfSources
	}
	return nil
}

func hasSelf(dsts []alias) bool {
	return slices.ContainsFunc(dsts, func(a alias) bool {
		return a.kind == aliasAutogroup && a.name == agSelf
	})
}

func (p *Policy) loadACLs() error {
	for _, acl := range p.file.ACLs {
		if strings.TrimSpace(acl.Action) != "accept" {
			return fmt.Errorf("action=%q is not supported", acl.Action)
		}
		proto := 0
		if acl.Proto != "" {
			n, err := parseProto(acl.Proto)
			if err != nil {
				return err
			}
			proto = n
		}
		var r netRule
		for _, s := range acl.Src {
			a, err := p.checkSrc(s)
			if err != nil {
				return err
			}
			r.src = append(r.src, a)
		}
		var dsts []alias
		for _, d := range acl.Dst {
			host, ports, err := splitHostPorts(strings.TrimSpace(d))
			if err != nil {
				return fmt.Errorf("dst=%q: %w", d, err)
			}
			a, err := p.parseAlias(host)
			if err != nil {
				return fmt.Errorf("dst=%q: %w", host, err)
			}
			switch a.kind {
			case aliasAutogroup:
				if err := checkDstAutogroup(a); err != nil {
					return err
				}
			case aliasPrefix:
				if a.prefix.Bits() == 0 {
					return fmt.Errorf("dst=%q: %s", host, errAllIPs)
				}
			case aliasUser:
				p.noteUser(host)
			}
			dsts = append(dsts, a)
			for _, pr := range ports {
				r.dst = append(r.dst, dstPorts{alias: a, proto: proto, ports: pr})
			}
		}
		if hasSelf(dsts) {
			if err := checkSelfSources(r.src, true); err != nil {
				return err
			}
		}
		p.rules = append(p.rules, r)
	}
	return nil
}

// userGrantableCaps are the tailscale.com capabilities a policy may grant.
var userGrantableCaps = map[string]bool{
	"cap/drive":      true,
	"cap/relay":      true,
	"cap/webui":      true,
	"cap/kubernetes": true,
	"cap/tsidp":      true,
	"cap/secrets":    true,
}

// checkCapName checks an app capability name: {domain}/{path}, outside
// the tailscale.com domain unless it is one of the grantable ones.
func checkCapName(name string) error {
	domain, path, ok := strings.Cut(name, "/")
	if !ok || path == "" || !validDomain(domain) {
		return errors.New("capability name must have the form {domain}/{path}")
	}
	if strings.EqualFold(domain, "tailscale.com") && !userGrantableCaps[strings.ToLower(path)] {
		return errors.New("capability name must not be in the tailscale.com domain")
	}
	return nil
}

func validDomain(d string) bool {
	if d == "" {
		return false
	}
	for label := range strings.SplitSeq(d, ".") {
		if label == "" {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !isLetter(c) && !isDigit(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

func (p *Policy) loadGrants() error {
	for _, g := range p.file.Grants {
		var ips []protoPorts
		for _, s := range g.IP {
			pp, err := parseGrantIP(s)
			if err != nil {
				return err
			}
			ips = append(ips, pp)
		}
		if len(g.IP) == 0 && len(g.App) == 0 {
			return errors.New("ip and app can not both be empty")
		}
		for _, name := range sortedKeys(g.App) {
			if err := checkCapName(name); err != nil {
				return err
			}
		}
		var r netRule
		for _, s := range g.Src {
			a, err := p.checkSrc(s)
			if err != nil {
				return err
			}
			r.src = append(r.src, a)
		}
		var dsts []alias
		for _, d := range g.Dst {
			a, err := p.parseAlias(d)
			if err != nil {
				return fmt.Errorf("dst %q: %w", d, err)
			}
			switch a.kind {
			case aliasAutogroup:
				if err := checkDstAutogroup(a); err != nil {
					return err
				}
				if a.name == agInternet && len(g.App) > 0 {
					return errors.New("cannot use app grants with autogroup:internet")
				}
			case aliasPrefix:
				if a.prefix.Bits() == 0 {
					return fmt.Errorf("dst %q: %s", d, errAllIPs)
				}
			case aliasUser:
				p.noteUser(d)
			}
			dsts = append(dsts, a)
		}
		for _, v := range g.Via {
			if !strings.HasPrefix(strings.ToLower(v), "tag:") {
				return errors.New("via can only be a tag")
			}
			if _, ok := p.tagOwners[strings.ToLower(v)]; !ok {
				return fmt.Errorf("tag %q not found", v)
			}
		}
		if hasSelf(dsts) {
			if err := checkSelfSources(r.src, false); err != nil {
				return err
			}
		}
		for _, a := range dsts {
			for _, pp := range ips {
				r.dst = append(r.dst, dstPorts{alias: a, proto: pp.proto, ports: pp.ports})
			}
		}
		p.rules = append(p.rules, r)
	}
	return nil
}

// maxCheckPeriod is the longest SSH check period SaaS accepts.
const maxCheckPeriod = 168 * time.Hour

func (p *Policy) checkSSH() error {
	for _, s := range p.file.SSH {
		switch strings.TrimSpace(s.Action) {
		case "accept", "check":
		case "":
			return errors.New("action must be specified")
		default:
			return fmt.Errorf("%q is not a valid action", s.Action)
		}
		if len(s.Users) == 0 {
			return errors.New("users must be specified")
		}
		for _, u := range s.Users {
			if u = strings.TrimSpace(u); u == "" || u == "*" {
				return fmt.Errorf("user %q is not valid", u)
			}
		}
		for _, env := range s.AcceptEnv {
			if env == "" {
				return errors.New("acceptEnv values cannot be empty")
			}
		}
		for _, src := range s.Src {
			if _, err := p.checkSrc(src); err != nil {
				return err
			}
		}
		for _, dst := range s.Dst {
			a, err := p.parseAlias(dst)
			if err != nil {
				return err
			}
			if a.kind == aliasPrefix && a.name != "" {
				return fmt.Errorf("invalid dst %q", strings.TrimSpace(dst))
			}
		}
		if s.CheckPeriod != nil && *s.CheckPeriod != "always" {
			d, err := time.ParseDuration(*s.CheckPeriod)
			switch {
			case err != nil:
				return err
			case d < 0:
				return fmt.Errorf("checkPeriod %s must be a positive duration", d)
			case d > maxCheckPeriod:
				return fmt.Errorf("checkPeriod %s is above the max (168h)", d)
			}
		}
	}
	return nil
}

// reservedPools are the CGNAT ranges Tailscale keeps for itself.
var reservedPools = []netip.Prefix{
	netip.MustParsePrefix("100.100.100.0/24"),
	netip.MustParsePrefix("100.115.92.0/23"),
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

func (p *Policy) checkNodeAttrs() error {
	for _, na := range p.file.NodeAttrs {
		for _, t := range na.Target {
			a, err := p.parseAlias(t)
			if err != nil {
				return err
			}
			if a.kind == aliasAutogroup && (a.name == agSelf || a.name == agInternet || a.name == agDangerAll) {
				return fmt.Errorf("%q not valid as a nodeAttrs target", t)
			}
		}
		for _, pool := range na.IPPool {
			pfx, err := netip.ParsePrefix(pool)
			if err != nil {
				return fmt.Errorf("IPPool(%s): invalid prefix", pool)
			}
			pfx = pfx.Masked()
			for _, r := range reservedPools {
				if pfx.Overlaps(r) {
					return fmt.Errorf("IPPool(%s): network within reserved range", pfx)
				}
			}
			if !pfx.Addr().Is4() || pfx.Bits() < cgnat.Bits() || !cgnat.Contains(pfx.Addr()) {
				return fmt.Errorf("IPPool(%s): network not within %s", pfx, cgnat)
			}
		}
	}
	return nil
}

func (p *Policy) loadAutoApprovers() error {
	aa := p.file.AutoApprovers
	if aa == nil {
		return nil
	}
	for _, route := range sortedKeys(aa.Routes) {
		pfx, err := netip.ParsePrefix(route)
		if err != nil {
			return fmt.Errorf("autoApprovers.routes[%q]: invalid prefix", route)
		}
		for _, a := range aa.Routes[route] {
			p.noteUser(a)
			if err := p.checkOwner(a); err != nil {
				return err
			}
		}
		p.routes = append(p.routes, routeApproval{prefix: pfx.Masked(), approvers: aa.Routes[route]})
	}
	for _, a := range aa.ExitNode {
		p.noteUser(a)
		if err := p.checkOwner(a); err != nil {
			return err
		}
	}
	p.exitNode = aa.ExitNode
	for _, svc := range sortedKeys(aa.Services) {
		lower := strings.ToLower(svc)
		switch {
		case strings.HasPrefix(lower, "tag:"):
			if _, err := p.parseAlias(svc); err != nil {
				return err
			}
		case strings.HasPrefix(lower, "svc:"):
		default:
			return fmt.Errorf("autoApprovers.services[%q]: services must start with 'svc:' or 'tag:'", svc)
		}
		for _, a := range aa.Services[svc] {
			if err := p.checkOwner(a); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *Policy) checkSSHTests() error {
	for _, t := range p.file.SSHTests {
		for _, d := range t.Dst {
			lower := strings.ToLower(d)
			if lower == "autogroup:internet" {
				return fmt.Errorf("SSH tests dst contains disallowed element %q", d)
			}
			if _, ok := parseAddr(lower); ok && strings.Contains(d, "/") {
				return fmt.Errorf("SSH tests dst contains disallowed element %q", d)
			}
			if strings.HasPrefix(lower, "tag:") {
				if _, ok := p.tagOwners[lower]; !ok {
					return fmt.Errorf("SSH tests dst contains unknown tag %q", d)
				}
			}
		}
	}
	return nil
}
