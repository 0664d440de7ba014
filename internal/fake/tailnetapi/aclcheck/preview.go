package aclcheck

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// Preview types: what previewFor names.
const (
	// PreviewUser previews the rules whose sources include a user,
	// previewFor being the user's login.
	PreviewUser = "user"
	// PreviewIPPort previews the rules whose destinations include an
	// address and port, previewFor being "IP:PORT" ("[IPv6]:PORT").
	PreviewIPPort = "ipport"
)

// PreviewMatch is one rule of a policy that applies to what is previewed,
// in the shape of the matches of POST /acl/preview.
//
// Users are the rule's sources as the policy writes them. Ports are its
// destinations: an ACL's dst entries as written ("tag:web:443"), and for a
// grant each dst followed by each of its ip entries ("tag:web:tcp:443",
// "tag:web:*"). LineNumber is the line of the rule's opening brace in the
// policy as sent (1-based). Via and Postures are a grant's via and the
// rule's srcPosture; Postures is null when the rule has none, as SaaS
// answers.
type PreviewMatch struct {
	Users      []string `json:"users"`
	Ports      []string `json:"ports"`
	LineNumber int      `json:"lineNumber"`
	Via        []string `json:"via,omitempty"`
	Postures   []string `json:"postures"`
}

// portProtocols are the protocols an "IP:PORT" preview can be about: those
// that carry ports.
var portProtocols = []int{protoTCP, protoUDP, protoSCTP}

// Preview returns the network rules of the policy (acls, then grants, in
// the order of the file) that apply to previewFor, evaluated against topo:
// for PreviewUser the rules whose sources include the user (by login or
// name, through groups, autogroups and domains too), for PreviewIPPort the
// rules whose destinations cover the address and port (through the tags
// and owner of the device that has the address, hosts, CIDRs and
// autogroups). src is the policy as sent, for the line numbers. A grant
// that only gives application capabilities (no ip) is not a network rule
// and never matches. A policy without acls and grants, which allows all
// traffic, has no rule to show. The errors carry the message of a 400.
func (p *Policy) Preview(topo Topology, src []byte, typ, previewFor string) ([]PreviewMatch, *Error) {
	w := newWorld(topo)
	var applies func(r netRule) bool
	switch typ {
	case PreviewUser:
		login, ok := p.knownUser(w, strings.TrimSpace(previewFor))
		if !ok || !strings.Contains(login, "@") {
			return nil, &Error{Message: fmt.Sprintf("previewFor %q: user not found; give the login name (email) of a user of the tailnet", previewFor)}
		}
		user := w.userPrincipal(login)
		applies = func(r netRule) bool {
			return len(r.dst) > 0 && slices.ContainsFunc(r.src, func(a alias) bool { return p.matches(w, a, user, user) })
		}
	case PreviewIPPort:
		ap, err := netip.ParseAddrPort(strings.TrimSpace(previewFor))
		if err != nil || ap.Port() == 0 {
			return nil, &Error{Message: fmt.Sprintf("previewFor %q: want an IP address and a port between 1 and 65535, like 100.64.0.1:443 or [fd7a:115c:a1e0::1]:443", previewFor)}
		}
		addr := ap.Addr().Unmap()
		dst := w.addrPrincipal(netip.PrefixFrom(addr, addr.BitLen()))
		port := ap.Port()
		applies = func(r netRule) bool {
			return slices.ContainsFunc(r.dst, func(d dstPorts) bool {
				return d.ports.contains(port) && protoMatches(d.proto, portProtocols) && p.matches(w, d.alias, dst, dst)
			})
		}
	default:
		return nil, &Error{Message: fmt.Sprintf("type %q: want %q or %q", typ, PreviewUser, PreviewIPPort)}
	}
	if p.noNetRules {
		return []PreviewMatch{}, nil
	}
	aclLines := ruleLines(src, "acls")
	grantLines := ruleLines(src, "grants")
	out := []PreviewMatch{}
	for i, r := range p.rules {
		if !applies(r) {
			continue
		}
		var m PreviewMatch
		if i < len(p.file.ACLs) {
			a := p.file.ACLs[i]
			m = PreviewMatch{Users: slices.Clone(a.Src), Ports: slices.Clone(a.Dst), LineNumber: lineAt(aclLines, i), Postures: nilIfEmpty(a.SrcPosture)}
		} else {
			j := i - len(p.file.ACLs)
			g := p.file.Grants[j]
			m = PreviewMatch{Users: slices.Clone(g.Src), LineNumber: lineAt(grantLines, j), Via: nilIfEmpty(g.Via), Postures: nilIfEmpty(g.SrcPosture)}
			for _, d := range g.Dst {
				for _, ip := range g.IP {
					m.Ports = append(m.Ports, d+":"+ip)
				}
			}
		}
		out = append(out, m)
	}
	return out, nil
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

func lineAt(lines []int, i int) int {
	if i < len(lines) {
		return lines[i]
	}
	return 0
}

// ruleLines returns the 1-based line of each element of the top-level
// array section (matched case-insensitively, the last one when the file
// names it twice, as decoding keeps the last) in src.
func ruleLines(src []byte, section string) []int {
	v, err := hujson.Parse(bytes.Clone(src))
	if err != nil {
		return nil
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil
	}
	var arr *hujson.Array
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && strings.EqualFold(lit.String(), section) {
			if a, ok := obj.Members[i].Value.Value.(*hujson.Array); ok {
				arr = a
			}
		}
	}
	if arr == nil {
		return nil
	}
	lines := make([]int, len(arr.Elements))
	for i := range arr.Elements {
		off := min(arr.Elements[i].StartOffset, len(src))
		lines[i] = 1 + bytes.Count(src[:off], []byte("\n"))
	}
	return lines
}
