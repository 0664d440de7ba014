package aclcheck

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// portRange is an inclusive range of ports.
type portRange struct {
	first, last uint16
}

// anyPort is the range that "*" stands for.
var anyPort = portRange{first: 0, last: 65535}

func (r portRange) contains(port uint16) bool {
	return r.first <= port && port <= r.last
}

// splitHostPorts splits "HOST:PORTS" at its last colon, the way SaaS reads
// ACL destinations: the text is lowercased first, HOST is everything before
// the last colon (tags, groups and IPv6 addresses contain colons) and PORTS
// is "*" or a comma-separated list of PORT or FIRST-LAST.
func splitHostPorts(hostport string) (string, []portRange, error) {
	hostport = strings.ToLower(hostport)
	colon := strings.LastIndexByte(hostport, ':')
	if colon < 0 {
		return "", nil, errors.New(`hostport must contain a colon (":")`)
	}
	host, list := hostport[:colon], hostport[colon+1:]
	if strings.Contains(host, ",") {
		return "", nil, errors.New(`host cannot contain a comma (",")`)
	}
	if list == "*" {
		return host, []portRange{anyPort}, nil
	}
	var ports []portRange
	for _, item := range strings.Split(list, ",") {
		if item == "" {
			return "", nil, fmt.Errorf("invalid port list: %q", list)
		}
		r, err := parsePortItem(item)
		if err != nil {
			return "", nil, err
		}
		ports = append(ports, r)
	}
	return host, ports, nil
}

// parsePortItem parses one "PORT" or "FIRST-LAST" element of a port list.
func parsePortItem(item string) (portRange, error) {
	if strings.Count(item, "-") > 1 {
		return portRange{}, fmt.Errorf("port range %q: too many dashes(-)", item)
	}
	firstText, lastText, isRange := strings.Cut(item, "-")
	first, err := strconv.ParseUint(firstText, 10, 16)
	if err != nil {
		return portRange{}, fmt.Errorf("port range %q: invalid first integer", item)
	}
	last := first
	if isRange {
		last, err = strconv.ParseUint(lastText, 10, 16)
		if err != nil {
			return portRange{}, fmt.Errorf("port range %q: invalid last integer", item)
		}
	}
	if first == 0 {
		return portRange{}, fmt.Errorf("port range %q: first port must be >0, or use '*' for wildcard", item)
	}
	if first > last {
		return portRange{}, fmt.Errorf("port range %q: first port must be >= last port", item)
	}
	return portRange{first: uint16(first), last: uint16(last)}, nil
}

// IANA protocol numbers qtail needs by name.
const (
	protoICMP   = 1
	protoTCP    = 6
	protoUDP    = 17
	protoICMPv6 = 58
	protoSCTP   = 132
	protoTSMP   = 99
)

// protoByName maps the protocol keywords SaaS accepts to their numbers.
// Every protocol is also accepted by its decimal number.
var protoByName = map[string]int{
	"ah":        51,
	"egp":       8,
	"esp":       50,
	"gre":       47,
	"icmp":      protoICMP,
	"igmp":      2,
	"igp":       9,
	"ip-in-ip":  4,
	"ipv4":      4,
	"ipv6-icmp": protoICMPv6,
	"sctp":      protoSCTP,
	"tcp":       protoTCP,
	"udp":       protoUDP,
}

// defaultProtos are the protocols a rule without a protocol allows.
var defaultProtos = []int{protoTCP, protoUDP, protoICMP, protoICMPv6}

// parseProto parses a protocol name or number.
func parseProto(s string) (int, error) {
	if n, err := strconv.ParseUint(s, 10, 8); err == nil {
		if n == protoTSMP {
			return 0, errors.New("IP protocol 99 is reserved for use by Tailscale")
		}
		if s[0] == '0' {
			return 0, fmt.Errorf("leading 0 not permitted in protocol number %q", s)
		}
		return int(n), nil
	}
	if n, ok := protoByName[strings.ToLower(s)]; ok {
		return n, nil
	}
	return 0, fmt.Errorf("proto name %q not known; use protocol number 0-255 or protocol name (icmp, tcp, udp, etc.)", s)
}

// protoPorts is one parsed entry of a grant's ip list. proto 0 stands for
// the default protocols (TCP, UDP and ICMP).
type protoPorts struct {
	proto int
	ports portRange
}

// parseGrantIP parses one grant ip entry: "*", "PORTS" or "PROTO:PORTS",
// with a single port or range.
func parseGrantIP(s string) (protoPorts, error) {
	if s == "" {
		return protoPorts{}, errors.New("empty string")
	}
	if s == "*" {
		return protoPorts{ports: anyPort}, nil
	}
	if !strings.Contains(s, ":") {
		s = "*:" + s
	}
	protoText, ports, err := splitHostPorts(s)
	if err != nil {
		return protoPorts{}, err
	}
	switch {
	case protoText == "":
		return protoPorts{}, errors.New("empty protocol")
	case len(ports) > 1:
		return protoPorts{}, errors.New("only one port range allowed")
	}
	pp := protoPorts{ports: ports[0]}
	if protoText == "*" {
		return pp, nil
	}
	pp.proto, err = parseProto(protoText)
	return pp, err
}

// protoMatches reports whether a rule protocol (0 for the default set)
// allows any of the wanted protocols.
func protoMatches(rule int, want []int) bool {
	for _, w := range want {
		if rule == w || (rule == 0 && slices.Contains(defaultProtos, w)) {
			return true
		}
	}
	return false
}
