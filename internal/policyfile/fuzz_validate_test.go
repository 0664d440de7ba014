package policyfile

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
)

// decimalOracle reads s as a decimal number the simple way: ASCII digits
// only, at least one. Values above 1<<20 are all 1<<20.
func decimalOracle(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = min(n*10+int(c-'0'), 1<<20)
	}
	return n, true
}

// portRangeOracle says what a port range is: "A" or "A-B" with
// 1 <= A <= B <= 65535.
func portRangeOracle(s string) bool {
	a, b, isRange := strings.Cut(s, "-")
	if !isRange {
		b = a
	}
	first, okA := decimalOracle(a)
	last, okB := decimalOracle(b)
	return okA && okB && 1 <= first && first <= last && last <= 65535
}

// ipPortOracle says what an entry of a grant's ip list is: "*", or
// PORTS or PROTO:PORTS, where PROTO is "*", a protocol name or a number
// 0-255 and PORTS is "*" or a port range.
func ipPortOracle(s string) bool {
	if s == "*" {
		return true
	}
	proto, ports := "*", s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		proto, ports = s[:i], s[i+1:]
	}
	n, isNumber := decimalOracle(proto)
	protoOK := proto == "*" || ipProtocols[strings.ToLower(proto)] || isNumber && n <= 255
	return protoOK && (ports == "*" || portRangeOracle(ports))
}

// FuzzIPPort compares ValidIPPort, and checkPortRange under it, with the
// oracles above.
func FuzzIPPort(f *testing.F) {
	for _, s := range []string{
		"*", "22", "80-443", "443-80", "0", "0-1", "65535", "65536", "1-65536", "tcp:443", "TCP:443", "udp:53", "icmp:*",
		"47:*", "256:*", "255:1", ":22", "tcp:", "tcp:1-2-3", "tcp:1,2", "-1", "+1", "1_000", "0080", "tcp:*:22",
		"ip-in-ip:1", `"tcp:1"`, "[1]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := checkPortRange(s) == nil, portRangeOracle(s); got != want {
			t.Fatalf("checkPortRange(%q) accepts: %v, want %v", s, got, want)
		}
		err := ValidIPPort(s)
		if got, want := err == nil, ipPortOracle(s); got != want {
			t.Fatalf("ValidIPPort(%q) = %v, want accepted: %v", s, err, want)
		}
	})
}

var selectorUses = []SelectorUse{GrantSrc, GrantDst, TestSrc, TestDst}

// FuzzValidSelector checks ValidSelector at every place a selector
// stands: it never panics; what it accepts is one value (no blank, comma
// or quote) that reads back the same once written in a grant or a test
// of the policy file, and validates again there; and the places agree
// with each other and with simple readings of IPs and tags:
//
//   - an IP without zone is a source, a destination and a test source;
//   - a valid tag is a source, a destination and a test source;
//   - a test source, followed by ":22", is a test destination, except
//     autogroup:internet, which tests may not reach;
//   - a test destination ends with one port from 1 to 65535;
//   - a grant source is a grant destination, except autogroup:danger-all
//     and the CIDRs of length 0.
func FuzzValidSelector(f *testing.F) {
	for _, s := range []string{
		"*", "alice@example.com", "user:*@example.com", "group:ops", "tag:k8s", "autogroup:member", "autogroup:self",
		"autogroup:internet", "autogroup:danger-all", "ipset:office", "svc:billing", "web-01", "100.64.0.1",
		"fd7a:115c:a1e0::1", "fe80::1%eth0", "10.0.0.0/8", "0.0.0.0/0", "::/0", "10.0.0.1-10.0.0.9", "10.0.0.9-10.0.0.1",
		"tag:k8s:22", "[fd7a:115c:a1e0::1]:22", "100.64.0.1:0", "host:65535", "a,b", "a b", `"tag:a"`, `["tag:a"]`,
		"group:", "user:*@", "svc:caf\u00e9",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ok := map[SelectorUse]bool{}
		for _, use := range selectorUses {
			err := ValidSelector(s, use)
			ok[use] = err == nil
			if err != nil {
				if err.Error() == "" {
					t.Fatalf("ValidSelector(%q, %d) fails without a message", s, use)
				}
				continue
			}
			if s == "" || strings.ContainsAny(s, " \t\r\n,\"'") {
				t.Fatalf("ValidSelector(%q, %d) accepts it", s, use)
			}
			reread := rewritten(t, s, use)
			if reread != s {
				t.Fatalf("%q, accepted at %d, reads back from the policy file as %q", s, use, reread)
			}
			if err := ValidSelector(reread, use); err != nil {
				t.Fatalf("%q, accepted at %d, is refused once written: %v", s, use, err)
			}
		}
		if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" && (!ok[GrantSrc] || !ok[GrantDst] || !ok[TestSrc]) {
			t.Fatalf("the IP %q is refused somewhere: %v", s, ok)
		}
		if ValidTag(s) == nil && (!ok[GrantSrc] || !ok[GrantDst] || !ok[TestSrc]) {
			t.Fatalf("the tag %q is refused somewhere: %v", s, ok)
		}
		if ok[TestSrc] && s != "autogroup:internet" {
			if err := ValidSelector(s+":22", TestDst); err != nil {
				t.Fatalf("the test source %q is not a test destination with a port: %v", s, err)
			}
		}
		if ok[TestDst] {
			i := strings.LastIndexByte(s, ':')
			if n, isNumber := decimalOracle(s[i+1:]); i < 0 || !isNumber || n < 1 || n > 65535 {
				t.Fatalf("the test destination %q has no port", s)
			}
		}
		if ok[GrantSrc] && !ok[GrantDst] {
			if p, err := netip.ParsePrefix(s); s != "autogroup:danger-all" && (err != nil || p.Bits() != 0) {
				t.Fatalf("the source %q is not a destination", s)
			}
		}
	})
}

// rewritten writes s in a grant (for a grant's src or dst) or a test
// (for a test's src or accept) of a policy file and reads it back.
func rewritten(t *testing.T, s string, use SelectorUse) string {
	t.Helper()
	key, value := Key{Kind: KindGrant, Name: "fz"}, map[string]any{"src": []string{"*"}, "dst": []string{"*"}, "ip": []string{"*"}}
	member := "src"
	switch use {
	case GrantSrc:
		value["src"] = []string{s}
	case GrantDst:
		value["dst"], member = []string{s}, "dst"
	case TestSrc:
		key, value = Key{Kind: KindPolicyTest, Name: "fz"}, map[string]any{"src": s, "accept": []string{"tag:a:1"}}
	case TestDst:
		key, value, member = Key{Kind: KindPolicyTest, Name: "fz"}, map[string]any{"src": "tag:a", "accept": []string{s}}, "accept"
	}
	b, err := json.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Parse([]byte(basePolicy))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Put(key, b); err != nil {
		t.Fatalf("put of %s: %v", b, err)
	}
	again, err := Parse(doc.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var read map[string]json.RawMessage
	if err := json.Unmarshal(again.Get(key).Value, &read); err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(read[member], &got); err != nil {
		t.Fatal(err)
	}
	switch g := got.(type) {
	case string:
		return g
	case []any:
		if len(g) == 1 {
			if s, ok := g[0].(string); ok {
				return s
			}
		}
	}
	t.Fatalf("%s reads back as %s", member, read[member])
	return ""
}
