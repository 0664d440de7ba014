package policyfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The checks below catch at plan time what Tailscale would refuse at apply
// time, for the values qtail writes. Their messages follow the server's.

// ValidTag checks a tag name the way Tailscale does: "tag:", then a
// letter, then letters, digits or dashes.
func ValidTag(s string) error {
	name, ok := strings.CutPrefix(s, "tag:")
	if !ok {
		return errors.New("tags must start with 'tag:'")
	}
	if name == "" {
		return errors.New("tag names must not be empty")
	}
	if !isLetter(name[0]) {
		return errors.New("tag names must start with a letter, after 'tag:'")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isLetter(c) && !isDigit(c) && c != '-' {
			return errors.New("tag names can only contain numbers, letters, or dashes")
		}
	}
	return nil
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// ValidVia checks an entry of a grant's via list: only tags are allowed.
func ValidVia(s string) error {
	if !strings.HasPrefix(s, "tag:") {
		return errors.New("via can only be a tag")
	}
	if err := ValidTag(s); err != nil {
		return fmt.Errorf("via %q: %w", s, err)
	}
	return nil
}

// validCIDR checks a route as written in autoApprovers.routes: an IPv4 or
// IPv6 prefix with no bits set after the prefix length.
func validCIDR(s string) error {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return fmt.Errorf("%q is not a CIDR, like 10.0.0.0/16 or fd7a:115c:a1e0:b1a::/64", s)
	}
	if m := p.Masked(); m != p {
		return fmt.Errorf("%q has address bits set beyond its prefix length; use %q", s, m.String())
	}
	return nil
}

// ValidCanonicalCIDR checks a route written the way qtail and Tailscale
// print it (validCIDR, and IPv6 in lower case), so that the key in the
// policy file is the one in the configuration.
func ValidCanonicalCIDR(s string) error {
	if err := validCIDR(s); err != nil {
		return err
	}
	if c := netip.MustParsePrefix(s).Masked().String(); c != s {
		return fmt.Errorf("write it in canonical form, %q", c)
	}
	return nil
}

// ipProtocols are the protocol names Tailscale accepts before a port range
// in a grant's ip list (any case); IANA numbers 0-255 are accepted too.
var ipProtocols = map[string]bool{
	"ah": true, "dccp": true, "egp": true, "esp": true, "gre": true,
	"icmp": true, "icmpv4": true, "icmpv6": true, "igmp": true, "igp": true,
	"ip-in-ip": true, "ipv4": true, "ipv6-icmp": true, "sctp": true,
	"tcp": true, "tsmp": true, "udp": true,
}

// ValidIPPort checks an entry of a grant's ip list: "*", a port or port
// range ("22", "80-443"), optionally after a protocol name or number
// ("tcp:443", "udp:53", "icmp:*", "47:*").
func ValidIPPort(s string) error {
	if s == "*" {
		return nil
	}
	if s == "" {
		return errors.New("ip entries must not be empty")
	}
	if err := OneListElement(s); err != nil {
		return err
	}
	proto, ports := "*", s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		proto, ports = s[:i], s[i+1:]
	}
	if proto == "" {
		return fmt.Errorf("ip %q: empty protocol", s)
	}
	if proto != "*" && !ipProtocols[strings.ToLower(proto)] {
		if n, err := strconv.ParseUint(proto, 10, 8); err != nil || n > 255 {
			return fmt.Errorf("proto name %q not known; use protocol number 0-255", proto)
		}
	}
	if ports == "*" {
		return nil
	}
	if strings.Contains(ports, ",") {
		return fmt.Errorf("ip %q: only one port range allowed; use one entry per range", s)
	}
	return checkPortRange(ports)
}

// checkPortRange checks "N" or "N-M" with 0 < N <= M <= 65535.
func checkPortRange(pr string) error {
	if strings.Count(pr, "-") > 1 {
		return fmt.Errorf("port range %q: too many dashes(-)", pr)
	}
	firstStr, lastStr, isRange := strings.Cut(pr, "-")
	first, err := strconv.ParseUint(firstStr, 10, 16)
	if err != nil {
		return fmt.Errorf("port range %q: invalid first integer", pr)
	}
	last := first
	if isRange {
		if last, err = strconv.ParseUint(lastStr, 10, 16); err != nil {
			return fmt.Errorf("port range %q: invalid last integer", pr)
		}
	}
	if first == 0 {
		return fmt.Errorf("port range %q: first port must be >0, or use '*' for wildcard", pr)
	}
	if first > last {
		return fmt.Errorf("port range %q: first port must be <= last port", pr)
	}
	return nil
}

// SelectorUse says where a selector stands, which decides what it may be.
type SelectorUse int

// The places of a selector.
const (
	// GrantSrc is an entry of a grant's src.
	GrantSrc SelectorUse = iota
	// GrantDst is an entry of a grant's dst.
	GrantDst
	// TestSrc is the src of a policy test: one user, group, tag, host or
	// IP, no wildcard.
	TestSrc
	// TestDst is an entry of a policy test's accept or deny list: a host,
	// tag, user or IP followed by one ":port".
	TestDst
)

var autogroups = map[string]bool{
	"member": true, "members": true, "tagged": true, "admin": true, "owner": true,
	"it-admin": true, "network-admin": true, "billing-admin": true, "auditor": true,
	"self": true, "internet": true, "nonroot": true, "shared": true, "danger-all": true,
}

// ValidSelector checks a source or destination: "*", a user email or
// "user:*@domain", "group:NAME", "tag:NAME", "autogroup:NAME", "ipset:NAME",
// "svc:NAME" (grant destinations), a host name from hosts, an IP, a CIDR
// or an IP range. Grants take no ports in src or dst (ports go in ip);
// test destinations need exactly one port.
func ValidSelector(s string, use SelectorUse) error {
	if s == "" {
		return errors.New("selectors must not be empty")
	}
	if !utf8.ValidString(s) {
		// The policy file is JSON text: such bytes would be written as
		// U+FFFD, a selector other than the one checked.
		return fmt.Errorf("%q is not valid UTF-8 text", s)
	}
	if err := OneListElement(s); err != nil {
		return err
	}
	switch {
	case strings.Contains(s, ","):
		return fmt.Errorf("%q holds several values separated by commas: give each value as its own list element", s)
	case strings.ContainsAny(s, " \t\r\n"):
		return fmt.Errorf("%q contains spaces: selectors have none; give each value as its own list element", s)
	}
	target := s
	if use == TestDst {
		i := strings.LastIndexByte(s, ':')
		if i < 0 {
			return fmt.Errorf("test destination %q needs one port, like \"tag:server:22\"", s)
		}
		port := s[i+1:]
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return fmt.Errorf("test destination %q needs exactly one port between 1 and 65535, no range and no '*'", s)
		}
		target = s[:i]
		if strings.HasPrefix(target, "[") && strings.HasSuffix(target, "]") {
			target = target[1 : len(target)-1]
		}
	}
	inTest := use == TestSrc || use == TestDst
	if target == "*" {
		if inTest {
			return fmt.Errorf("%q: tests cannot use wildcards; name one user, group, tag, host or IP", s)
		}
		return nil
	}
	prefix, rest, hasPrefix := strings.Cut(target, ":")
	if hasPrefix {
		switch prefix {
		case "tag", "group", "autogroup", "user", "ipset", "svc":
			if strings.Contains(rest, ":") {
				return portError(s, use)
			}
		}
	}
	if hasPrefix {
		switch prefix {
		case "tag":
			if err := ValidTag(target); err != nil {
				return fmt.Errorf("%q: %w", s, err)
			}
			return nil
		case "group":
			if rest == "" || !markerSafe(rest) {
				return fmt.Errorf("%q: group names must not be empty or contain spaces", s)
			}
			return nil
		case "autogroup":
			return checkAutogroup(s, rest, use)
		case "user":
			if !strings.HasPrefix(rest, "*@") || inTest {
				return fmt.Errorf("%q: only \"user:*@DOMAIN\" is allowed, in grants", s)
			}
			if !validEmail(rest) {
				return fmt.Errorf("%q: %q is not a domain", s, rest[2:])
			}
			return nil
		case "ipset", "svc":
			if inTest || (prefix == "svc" && use != GrantDst) {
				return fmt.Errorf("%q: %s: is not allowed here", s, prefix)
			}
			if rest == "" {
				return fmt.Errorf("%q: the name after %s: must not be empty", s, prefix)
			}
			return nil
		}
	}
	if strings.Contains(target, "@") {
		if !validEmail(target) {
			return fmt.Errorf("%q is not a valid user email", s)
		}
		return nil
	}
	if a, err := netip.ParseAddr(target); err == nil && a.Zone() == "" {
		return nil
	}
	if p, err := netip.ParsePrefix(target); err == nil {
		if inTest {
			return fmt.Errorf("%q: tests cannot use CIDR ranges; name one IP", s)
		}
		if use == GrantDst && p.Bits() == 0 {
			return fmt.Errorf("dst %q: to allow all IP addresses, use \"*\" or \"autogroup:internet\"", s)
		}
		return nil
	}
	if from, to, ok := strings.Cut(target, "-"); ok && !inTest {
		a, errA := netip.ParseAddr(from)
		b, errB := netip.ParseAddr(to)
		if errA == nil && errB == nil {
			if a.Is4() != b.Is4() || b.Less(a) {
				return fmt.Errorf("%q: an IP range goes from a lower to a higher address of one family", s)
			}
			return nil
		}
	}
	if validHostName(target) {
		return nil
	}
	if strings.Contains(target, ":") && use != TestDst {
		return portError(s, use)
	}
	return fmt.Errorf("%q is not a valid selector: use \"*\", a user email, group:, tag:, autogroup:, a host name, an IP or a CIDR", s)
}

func portError(s string, use SelectorUse) error {
	if use == TestSrc {
		return fmt.Errorf("%q: a test src takes no port", s)
	}
	return fmt.Errorf("%q: grants take no port in src or dst; put ports in \"ip\", like \"tcp:443\"", s)
}

func checkAutogroup(s, name string, use SelectorUse) error {
	if !autogroups[name] {
		return fmt.Errorf("%q: unknown autogroup", s)
	}
	if name == "self" && (use == GrantSrc || use == TestSrc) {
		return fmt.Errorf("%q not valid on the src side of a rule", s)
	}
	if name == "danger-all" && use == GrantDst {
		return errors.New("cannot use autogroup:danger-all as a dst")
	}
	if name == "internet" && use == TestDst {
		return fmt.Errorf("%q: autogroup:internet is not allowed as a tests destination", s)
	}
	return nil
}

func validEmail(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	return ok && local != "" && domain != "" && !strings.Contains(domain, "@") && markerSafe(s) && !strings.Contains(s, ":")
}

// validHostName reports whether s can be a name from the hosts section:
// letters, digits, dots, dashes and underscores, starting with a letter or
// a digit.
func validHostName(s string) bool {
	if s == "" || !isLetter(s[0]) && !isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !isDigit(c) && c != '-' && c != '.' && c != '_' {
			return false
		}
	}
	return true
}

// OneListElement refuses a list element that holds an encoding of values
// rather than one value: a JSON list or object (jsonencode of the whole
// list), or quotes. Each value of a policy list is one element of the
// attribute.
func OneListElement(s string) error {
	trimmed := strings.TrimSpace(s)
	if strings.HasPrefix(trimmed, "[") || strings.HasPrefix(trimmed, "{") {
		if json.Valid([]byte(trimmed)) {
			return fmt.Errorf("%q is JSON text, not one value: give each value as its own list element, "+
				"as in [\"tag:a\", \"tag:b\"], without jsonencode", s)
		}
	}
	if strings.ContainsAny(s, "\"'") {
		return fmt.Errorf("%q contains quotes: they would be part of the value; write the value without them", s)
	}
	return nil
}
