package policyfile

import (
	"net/netip"
	"slices"
	"testing"
)

const routesPolicy = `// A home lab.
{
	"groups": {"group:ops": ["carol@example.com"]},
	"hosts": {
		"lan":     "192.168.0.0/24",
		"gateway": "10.20.0.10",
	},
	"tagOwners": {"tag:k8s": ["tag:k8s-operator"], "tag:k8s-operator": []},
	"autoApprovers": {
		"routes": {
			"10.0.0.0/8": ["tag:k8s"],
			"10.20.0.0/16": ["group:ops"],
			"192.168.0.0/16": ["autogroup:tagged"],
		},
		"exitNode": ["tag:k8s"],
	},
	"grants": [
		{"src": ["group:ops"], "dst": ["tag:k8s"], "ip": ["tcp:443"]},
		// qtail:grant:ops-to-lan
		{"src": ["group:ops"], "dst": ["lan"], "ip": ["*"]},
		{"src": ["group:ops"], "dst": ["gateway"], "ip": ["tcp:443"]},
		{"src": ["group:ops"], "dst": ["10.244.0.0/16"], "app": {"example.com/cap": [{}]}},
		// qtail:grant:internet
		{"src": ["autogroup:member"], "dst": ["autogroup:internet"], "ip": ["*"]},
	],
}
`

func mustRoutePolicy(t *testing.T, s string) *RoutePolicy {
	t.Helper()
	p, err := ParseRoutePolicy([]byte(s))
	if err != nil {
		t.Fatalf("ParseRoutePolicy: %v", err)
	}
	return p
}

func TestGrantedBy(t *testing.T) {
	p := mustRoutePolicy(t, routesPolicy)
	for _, tc := range []struct {
		route string
		want  []string
	}{
		// Through a hosts alias, marked by qtail.
		{"192.168.0.0/24", []string{`grants[1] (grant "ops-to-lan")`}},
		// A route larger than the alias overlaps it.
		{"192.168.0.0/16", []string{`grants[1] (grant "ops-to-lan")`}},
		// A single IP inside the route, through an alias.
		{"10.20.0.0/16", []string{"grants[2]"}},
		// An application capability grant gives no network access.
		{"10.244.0.0/16", nil},
		{"10.10.0.0/16", nil},
		// Exit routes: autogroup:internet, never a CIDR.
		{"0.0.0.0/0", []string{`grants[4] (grant "internet")`}},
		{"::/0", []string{`grants[4] (grant "internet")`}},
		{"fd00::/64", nil},
	} {
		got := p.GrantedBy(netip.MustParsePrefix(tc.route))
		if !slices.Equal(got, tc.want) {
			t.Errorf("GrantedBy(%s) = %q, want %q", tc.route, got, tc.want)
		}
	}
}

func TestGrantedByACLsAndCasing(t *testing.T) {
	// Legacy casing of the top-level keys and of the ACL members, the
	// legacy "users"/"ports" names, IPv6 with and without brackets.
	p := mustRoutePolicy(t, `{
		"Hosts": {"nas": "10.50.0.7"},
		"ACLs": [
			{"Action": "accept", "Users": ["group:ops"], "Ports": ["tag:k8s:443"]},
			{"action": "accept", "src": ["group:ops"], "dst": ["10.101.0.0/16:*", "nas:445"]},
			{"action": "accept", "src": ["group:ops"], "dst": ["[fd00:1::5]:22"]},
			{"action": "accept", "src": ["group:ops"], "dst": ["fd00:2::/64:*"]},
			{"action": "accept", "src": ["*"], "dst": ["autogroup:internet:*"]},
		],
	}`)
	for _, tc := range []struct {
		route string
		want  []string
	}{
		{"10.101.0.0/16", []string{"acls[1]"}},
		{"10.50.0.0/24", []string{"acls[1]"}},
		{"10.10.0.0/16", nil},
		{"fd00:1::/64", []string{"acls[2]"}},
		{"fd00:2::/64", []string{"acls[3]"}},
		{"0.0.0.0/0", []string{"acls[4]"}},
	} {
		got := p.GrantedBy(netip.MustParsePrefix(tc.route))
		if !slices.Equal(got, tc.want) {
			t.Errorf("GrantedBy(%s) = %q, want %q", tc.route, got, tc.want)
		}
	}
}

func TestGrantedByAllowAll(t *testing.T) {
	p := mustRoutePolicy(t, `{
		"grants": [{"src": ["*"], "dst": ["*"], "ip": ["*"]}],
		"acls": [{"action": "accept", "src": ["*"], "dst": ["*:*"]}],
	}`)
	for _, r := range []string{"10.0.0.0/8", "0.0.0.0/0", "::/0"} {
		if got := p.GrantedBy(netip.MustParsePrefix(r)); !slices.Equal(got, []string{"grants[0]", "acls[0]"}) {
			t.Errorf("GrantedBy(%s) = %q, want both allow-all rules", r, got)
		}
	}
}

func TestAutoApprovedBy(t *testing.T) {
	p := mustRoutePolicy(t, routesPolicy)
	k8s := RouteDevice{Tags: []string{"tag:k8s"}}
	other := RouteDevice{Tags: []string{"tag:other"}}
	carol := RouteDevice{User: "Carol@example.com"}
	dave := RouteDevice{User: "dave@example.com"}
	for _, tc := range []struct {
		name  string
		route string
		dev   RouteDevice
		want  string
	}{
		{"tag, most specific entry", "10.20.0.0/16", k8s, `autoApprovers.routes["10.0.0.0/8"]`},
		{"tag, contained route", "10.244.0.0/16", k8s, `autoApprovers.routes["10.0.0.0/8"]`},
		{"group member on an untagged device", "10.20.0.0/16", carol, `autoApprovers.routes["10.20.0.0/16"]`},
		{"not in the group", "10.20.0.0/16", dave, ""},
		{"other tag", "10.20.0.0/16", other, ""},
		{"autogroup:tagged", "192.168.0.0/24", other, `autoApprovers.routes["192.168.0.0/16"]`},
		{"autogroup:tagged is not a user", "192.168.0.0/24", carol, ""},
		{"route larger than the entry", "10.0.0.0/7", k8s, ""},
		{"exit node", "0.0.0.0/0", k8s, "autoApprovers.exitNode"},
		{"exit node v6", "::/0", k8s, "autoApprovers.exitNode"},
		{"exit node, other tag", "0.0.0.0/0", other, ""},
		{"v6 route not in a v4 entry", "fd00::/64", k8s, ""},
	} {
		got, ok := p.AutoApprovedBy(netip.MustParsePrefix(tc.route), tc.dev)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: AutoApprovedBy(%s) = %q, %t; want %q", tc.name, tc.route, got, ok, tc.want)
		}
	}
}

func TestAutoApprovedByRoutesEntryForExitNodeAndMembers(t *testing.T) {
	p := mustRoutePolicy(t, `{
		"AutoApprovers": {"Routes": {"0.0.0.0/0": ["autogroup:member"], "::/0": ["alice@example.com"]}},
	}`)
	alice := RouteDevice{User: "alice@example.com"}
	if by, ok := p.AutoApprovedBy(netip.MustParsePrefix("0.0.0.0/0"), alice); !ok || by != `autoApprovers.routes["0.0.0.0/0"]` {
		t.Errorf("0.0.0.0/0 = %q, %t", by, ok)
	}
	// 0.0.0.0/0 contains every IPv4 route.
	if by, ok := p.AutoApprovedBy(netip.MustParsePrefix("10.1.0.0/16"), alice); !ok || by != `autoApprovers.routes["0.0.0.0/0"]` {
		t.Errorf("10.1.0.0/16 = %q, %t", by, ok)
	}
	if by, ok := p.AutoApprovedBy(netip.MustParsePrefix("::/0"), alice); !ok || by != `autoApprovers.routes["::/0"]` {
		t.Errorf("::/0 = %q, %t", by, ok)
	}
	if _, ok := p.AutoApprovedBy(netip.MustParsePrefix("0.0.0.0/0"), RouteDevice{Tags: []string{"tag:k8s"}}); ok {
		t.Error("autogroup:member approved a tagged device")
	}
}

func TestParseRoutePolicyErrors(t *testing.T) {
	for _, bad := range []string{`[]`, `{"grants": [`, `{"groups": {"group:a": "x"}}`} {
		if _, err := ParseRoutePolicy([]byte(bad)); err == nil {
			t.Errorf("ParseRoutePolicy(%s) succeeded", bad)
		}
	}
	// An empty file section by section.
	p := mustRoutePolicy(t, `{}`)
	if got := p.GrantedBy(netip.MustParsePrefix("10.0.0.0/8")); got != nil {
		t.Errorf("GrantedBy on an empty policy = %q", got)
	}
}

func TestIsExitRoute(t *testing.T) {
	for r, want := range map[string]bool{"0.0.0.0/0": true, "::/0": true, "10.0.0.0/8": false, "::/1": false} {
		if got := IsExitRoute(netip.MustParsePrefix(r)); got != want {
			t.Errorf("IsExitRoute(%s) = %t", r, got)
		}
	}
}
