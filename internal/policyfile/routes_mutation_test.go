package policyfile

import (
	"net/netip"
	"strings"
	"testing"
)

func TestRouteApproverChoice(t *testing.T) {
	src := `{
	"groups": {"Group:Ops": ["Alice@example.com"]},
	"autoApprovers": {
		"routes": {
			"10.0.0.0/8": ["tag:a"],
			"10.0.0.1/8": ["tag:a"],
			"10.0.0.0/16": ["tag:a"],
			"10.1.0.0/16": ["tag:b"],
			"fd00::/8": ["tag:a"],
			"bad": ["tag:a"],
			"192.168.0.0/16": ["group:ops", "autogroup:tagged"],
			"172.16.0.0/12": ["autogroup:member"],
			"172.31.0.0/16": ["bob@example.com"],
		},
		"exitNode": ["tag:exit"],
	},
}`
	p, err := ParseRoutePolicy([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	a := RouteDevice{Tags: []string{"TAG:A"}}
	for _, tc := range []struct {
		route string
		dev   RouteDevice
		want  string
	}{
		{"10.0.0.0/16", a, `autoApprovers.routes["10.0.0.0/16"]`},
		{"10.0.0.0/24", a, `autoApprovers.routes["10.0.0.0/16"]`},
		{"10.2.0.0/16", a, `autoApprovers.routes["10.0.0.0/8"]`},
		{"10.0.0.0/8", a, `autoApprovers.routes["10.0.0.0/8"]`},
		{"10.0.0.0/4", a, ""},
		{"10.1.0.0/24", a, `autoApprovers.routes["10.0.0.0/8"]`},
		{"10.1.0.0/24", RouteDevice{Tags: []string{"tag:b"}}, `autoApprovers.routes["10.1.0.0/16"]`},
		{"fd00::/16", a, `autoApprovers.routes["fd00::/8"]`},
		{"::ffff:10.0.0.0/104", a, ""},
		{"192.168.1.0/24", RouteDevice{User: "alice@example.com"}, `autoApprovers.routes["192.168.0.0/16"]`},
		{"192.168.1.0/24", RouteDevice{User: "bob@example.com"}, ""},
		{"192.168.1.0/24", RouteDevice{Tags: []string{"tag:z"}}, `autoApprovers.routes["192.168.0.0/16"]`},
		{"192.168.1.0/24", RouteDevice{Tags: []string{"tag:z"}, User: "alice@example.com"}, `autoApprovers.routes["192.168.0.0/16"]`},
		{"172.16.1.0/24", RouteDevice{User: "x@example.com"}, `autoApprovers.routes["172.16.0.0/12"]`},
		{"172.16.1.0/24", RouteDevice{}, ""},
		{"172.16.1.0/24", RouteDevice{Tags: []string{"tag:z"}}, ""},
		{"172.31.1.0/24", RouteDevice{User: "Bob@Example.com"}, `autoApprovers.routes["172.31.0.0/16"]`},
		{"172.31.1.0/24", RouteDevice{Tags: []string{"tag:z"}, User: "bob@example.com"}, ""},
		{"0.0.0.0/0", RouteDevice{Tags: []string{"tag:exit"}}, "autoApprovers.exitNode"},
		{"::/0", RouteDevice{Tags: []string{"tag:exit"}}, "autoApprovers.exitNode"},
		{"10.0.0.0/8", RouteDevice{Tags: []string{"tag:exit"}}, ""},
		{"0.0.0.0/0", a, ""},
	} {
		got, ok := p.AutoApprovedBy(netip.MustParsePrefix(tc.route), tc.dev)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("AutoApprovedBy(%s, %+v) = %q, %v; want %q", tc.route, tc.dev, got, ok, tc.want)
		}
	}
	// One approver only: it is found at index 0.
	one, err := ParseRoutePolicy([]byte(`{"autoApprovers": {"routes": {"10.0.0.0/8": ["tag:a"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := one.AutoApprovedBy(netip.MustParsePrefix("10.1.0.0/16"), a); !ok || got != `autoApprovers.routes["10.0.0.0/8"]` {
		t.Errorf("the only approver: %q, %v", got, ok)
	}
}

func TestRouteGrantedBy(t *testing.T) {
	src := `{
	"hosts": {"lan": "10.0.0.0/16", "box": "10.9.9.9", "v6": "fd00::/16"},
	"grants": [
		{"src": ["*"], "dst": ["lan"], "ip": ["*"]},
		// qtail:grant:web
		{"src": ["*"], "dst": ["10.5.0.0/16", "tag:x"], "ip": ["443"]},
		{"src": [], "dst": ["*"], "ip": ["*"]},
		{"src": ["*"], "dst": ["*"], "ip": []},
		{"src": ["*"], "dst": ["autogroup:internet"], "ip": ["*"]},
		{"src": ["*"], "dst": ["box", "10.5.0.0/16"], "ip": ["*"]},
		"not a grant",
	],
	"acls": [
		{"action": "accept", "users": ["*"], "ports": ["10.5.1.0/24:22", "[fd00::1]:443"]},
		{"action": "drop", "src": ["*"], "dst": ["*:*"]},
		{"action": "Accept", "src": [], "dst": ["*:*"]},
		{"action": "accept", "src": ["*"], "dst": ["v6:*", "tag:y"]},
	],
}`
	p, err := ParseRoutePolicy([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ route, want string }{
		{"10.0.0.0/24", "grants[0]"},
		{"10.5.0.0/24", `grants[1] (grant "web"), grants[5]`},
		{"10.5.1.0/24", `grants[1] (grant "web"), grants[5], acls[0]`},
		{"10.9.9.9/32", "grants[5]"},
		{"10.9.0.0/16", "grants[5]"},
		{"fd00::/64", "acls[0], acls[3]"},
		{"0.0.0.0/0", "grants[4]"},
		{"::/0", "grants[4]"},
		{"192.168.0.0/16", ""},
	} {
		if got := strings.Join(p.GrantedBy(netip.MustParsePrefix(tc.route)), ", "); got != tc.want {
			t.Errorf("GrantedBy(%s) = %q, want %q", tc.route, got, tc.want)
		}
	}
	for dst, host := range map[string]string{"[fd00::1]:443": "fd00::1", "10.0.0.1:22": "10.0.0.1", "host": "host", "[bad": "[bad"} {
		if got := aclHost(dst); got != host {
			t.Errorf("aclHost(%q) = %q, want %q", dst, got, host)
		}
	}
	for _, s := range []string{"10.0.0.0/33", "nope", ""} {
		if _, ok := parseIPOrPrefix(s); ok {
			t.Errorf("parseIPOrPrefix(%q) ok", s)
		}
	}
	if pfx, ok := parseIPOrPrefix("::ffff:10.0.0.1"); !ok || pfx != netip.MustParsePrefix("10.0.0.1/32") {
		t.Errorf("a mapped address: %v", pfx)
	}
	if !IsExitRoute(netip.MustParsePrefix("0.0.0.0/0")) || !IsExitRoute(netip.MustParsePrefix("::/0")) || IsExitRoute(netip.MustParsePrefix("0.0.0.0/1")) {
		t.Error("IsExitRoute")
	}
}

func TestRouteApproverChoiceWhateverTheOrder(t *testing.T) {
	// The approvers come from a JSON object, in no set order: parse again
	// and again so that every order is met.
	src := `{"autoApprovers": {"routes": {"10.0.0.1/8": ["tag:a"], "10.0.0.0/16": ["tag:a"], "10.0.0.0/8": ["tag:a"], "10.0.0.0/12": ["tag:b"]}}}`
	a := RouteDevice{Tags: []string{"tag:a"}}
	for range 40 {
		p, err := ParseRoutePolicy([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := p.AutoApprovedBy(netip.MustParsePrefix("10.0.1.0/24"), a); got != `autoApprovers.routes["10.0.0.0/16"]` {
			t.Fatalf("the most specific approver: %q", got)
		}
		if got, _ := p.AutoApprovedBy(netip.MustParsePrefix("10.200.0.0/16"), a); got != `autoApprovers.routes["10.0.0.0/8"]` {
			t.Fatalf("of two equally specific approvers, the first key: %q", got)
		}
	}
	if got := aclHost(":22"); got != "" {
		t.Errorf("aclHost(\":22\") = %q", got)
	}
}
