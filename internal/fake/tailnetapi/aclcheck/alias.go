package aclcheck

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// aliasKind is what a src, dst or target entry names.
type aliasKind uint8

const (
	aliasAll        aliasKind = iota // "*"
	aliasUser                        // a user's login, e.g. "amy@example.com"
	aliasUserDomain                  // "user:*@example.com"
	aliasGroup                       // "group:x"
	aliasTag                         // "tag:x"
	aliasAutogroup                   // "autogroup:x"
	aliasPrefix                      // an IP, a CIDR or a hosts entry
	aliasService                     // "svc:x"
	aliasIPSet                       // "ipset:x"
)

// alias is a parsed src, dst or target entry. name is lowercased; for
// autogroups it is the part after "autogroup:", for user domains the
// domain.
type alias struct {
	kind   aliasKind
	name   string
	prefix netip.Prefix
}

// Autogroups.
const (
	agMember    = "member"
	agMembers   = "members"
	agTagged    = "tagged"
	agSelf      = "self"
	agInternet  = "internet"
	agDangerAll = "danger-all"
	agNonRoot   = "nonroot"
	agShared    = "shared"
)

// roleAutogroups are the autogroups that stand for users holding an admin
// console role.
var roleAutogroups = map[string]bool{
	"admin": true, "owner": true, "it-admin": true, "network-admin": true,
	"billing-admin": true, "auditor": true,
}

func knownAutogroup(name string) bool {
	switch name {
	case agMember, agMembers, agTagged, agSelf, agInternet, agDangerAll, agNonRoot, agShared:
		return true
	}
	return roleAutogroups[name]
}

// checkTagName applies Tailscale's tag syntax: "tag:", then a letter, then
// letters, digits and dashes.
func checkTagName(tag string) error {
	name, ok := strings.CutPrefix(tag, "tag:")
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

func isLetter(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isDigit(c byte) bool {
	return c >= '0' && c <= '9'
}

// parseAddr parses an IP or CIDR, with optional brackets around an IPv6
// address, into a masked prefix.
func parseAddr(s string) (netip.Prefix, bool) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return netip.Prefix{}, false
		}
		s = s[1:end] + s[end+1:]
	}
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, false
		}
		return p.Masked(), true
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, a.BitLen()), true
}

// parseAlias resolves one entry against the policy's own definitions,
// ignoring surrounding whitespace as SaaS does. The errors are SaaS's bare
// phrasing; callers add the src=/dst= context.
func (p *Policy) parseAlias(s string) (alias, error) {
	s = strings.TrimSpace(s)
	lower := strings.ToLower(s)
	switch {
	case s == "*":
		return alias{kind: aliasAll}, nil
	case strings.HasPrefix(lower, "tag:"):
		if _, ok := p.tagOwners[lower]; !ok {
			return alias{}, fmt.Errorf("tag not found: %q", s)
		}
		return alias{kind: aliasTag, name: lower}, nil
	case strings.HasPrefix(lower, "group:"):
		if _, ok := p.groups[lower]; !ok {
			return alias{}, fmt.Errorf("group not found: %q", s)
		}
		return alias{kind: aliasGroup, name: lower}, nil
	case strings.HasPrefix(lower, "autogroup:"):
		name := strings.TrimPrefix(lower, "autogroup:")
		if !knownAutogroup(name) {
			return alias{}, fmt.Errorf("autogroup not found: %q", s)
		}
		return alias{kind: aliasAutogroup, name: name}, nil
	case strings.HasPrefix(lower, "user:"):
		domain, ok := strings.CutPrefix(lower, "user:*@")
		if !ok || domain == "" || strings.ContainsAny(domain, "*@") {
			return alias{}, fmt.Errorf("%q: invalid address", s)
		}
		return alias{kind: aliasUserDomain, name: domain}, nil
	case strings.HasPrefix(lower, "svc:"):
		return alias{kind: aliasService, name: lower}, nil
	case strings.HasPrefix(lower, "ipset:"):
		if _, ok := p.ipsets[lower]; !ok {
			return alias{}, fmt.Errorf("ipset not found: %q", s)
		}
		return alias{kind: aliasIPSet, name: lower}, nil
	case strings.Contains(s, "@"):
		return alias{kind: aliasUser, name: lower}, nil
	}
	if pfx, ok := p.hosts[lower]; ok {
		return alias{kind: aliasPrefix, name: lower, prefix: pfx}, nil
	}
	if pfx, ok := parseAddr(lower); ok {
		return alias{kind: aliasPrefix, prefix: pfx}, nil
	}
	return alias{}, fmt.Errorf("%q: invalid address", s)
}
