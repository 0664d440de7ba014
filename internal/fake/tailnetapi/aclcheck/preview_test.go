package aclcheck

import (
	"reflect"
	"strings"
	"testing"
)

// previewTopology is part of the topology of the SaaS captures (users and
// devices of capture grant-a1).
var previewTopology = Topology{
	Users: []User{
		{ID: 1, Name: "odin", Email: "odin@example.com"},
		{ID: 2, Name: "thor", Email: "thor@example.org"},
		{ID: 3, Name: "freya", Email: "freya@example.com"},
	},
	Nodes: map[string]Node{
		"beedrill":  {Hostname: "beedrill", IPv4: "100.110.61.78", IPv6: "fd7a:115c:a1e0::7937:3d4e", Tags: []string{"tag:server"}},
		"blastoise": {Hostname: "blastoise", IPv4: "100.67.150.67", IPv6: "fd7a:115c:a1e0::437:9643", Tags: []string{"tag:exit", "tag:router"}},
		"bulbasaur": {Hostname: "bulbasaur", IPv4: "100.65.167.67", IPv6: "fd7a:115c:a1e0::e637:a743", User: "odin"},
		"ivysaur":   {Hostname: "ivysaur", IPv4: "100.100.126.4", IPv6: "fd7a:115c:a1e0::a437:7e04", User: "thor"},
		"kakuna":    {Hostname: "kakuna", IPv4: "100.111.168.87", IPv6: "fd7a:115c:a1e0::fc37:a857", Tags: []string{"tag:prod"}},
		"venusaur":  {Hostname: "venusaur", IPv4: "100.106.158.115", IPv6: "fd7a:115c:a1e0::a837:9e73", User: "freya"},
	},
}

const previewPolicy = `// Preview fixture.
{
	"groups": {
		"group:admins":     ["odin@example.com"],
		"group:developers": ["thor@example.org", "odin@example.com"],
	},
	"hosts": {"prodbox": "100.111.168.87", "internal": "10.0.0.0/8"},
	"tagOwners": {
		"tag:server": ["odin@example.com"],
		"tag:prod":   ["odin@example.com"],
		"tag:router": ["odin@example.com"],
	},
	"ACLs": [
		{"action": "accept", "src": ["group:admins"], "dst": ["tag:server:22"]}, // acl-ssh
	],
	"grants": [
		{"src": ["group:developers"], "dst": ["tag:server"], "ip": ["tcp:443", "8080-8090"]}, // dev-web
		{"src": ["freya@example.com"], "dst": ["prodbox"], "ip": ["tcp:5432"], "srcPosture": ["posture:latest"]}, // freya-db
		{
			// member-internal
			"src": ["autogroup:member"],
			"dst": ["internal"],
			"ip":  ["*"],
			"via": ["tag:router"],
		},
		{"src": ["*"], "dst": ["tag:server"], "app": {"example.com/cap/x": [{}]}}, // app-only
		{"src": ["group:admins"], "dst": ["tag:prod"], "ip": ["icmp:*"]}, // admins-ping
	],
	"postures": {"posture:latest": ["node:tsVersion >= '1.60'"]},
}
`

// lineOf returns the line of the opening brace of the rule whose line (or,
// for a rule on several lines, whose comment) contains marker.
func lineOf(t *testing.T, marker string) int {
	t.Helper()
	lines := strings.Split(previewPolicy, "\n")
	for i, l := range lines {
		if strings.Contains(l, "// "+marker) {
			if strings.Contains(l, "{\"src\"") || strings.Contains(l, "{\"action\"") {
				return i + 1
			}
			return i // the comment is the first line inside the braces
		}
	}
	t.Fatalf("no rule %s", marker)
	return 0
}

func TestPreview(t *testing.T) {
	p, e := Parse([]byte(previewPolicy))
	if e != nil {
		t.Fatal(e)
	}
	aclSSH := PreviewMatch{Users: []string{"group:admins"}, Ports: []string{"tag:server:22"}, LineNumber: lineOf(t, "acl-ssh")}
	devWeb := PreviewMatch{Users: []string{"group:developers"}, Ports: []string{"tag:server:tcp:443", "tag:server:8080-8090"}, LineNumber: lineOf(t, "dev-web")}
	freyaDB := PreviewMatch{Users: []string{"freya@example.com"}, Ports: []string{"prodbox:tcp:5432"}, LineNumber: lineOf(t, "freya-db"), Postures: []string{"posture:latest"}}
	memberInternal := PreviewMatch{Users: []string{"autogroup:member"}, Ports: []string{"internal:*"}, LineNumber: lineOf(t, "member-internal"), Via: []string{"tag:router"}}
	adminsPing := PreviewMatch{Users: []string{"group:admins"}, Ports: []string{"tag:prod:icmp:*"}, LineNumber: lineOf(t, "admins-ping")}

	for _, tc := range []struct {
		typ, previewFor string
		want            []PreviewMatch
	}{
		// beedrill is tagged tag:server: the developers' grant covers 443
		// and 8080-8090, the admins' ACL port 22, nothing else; the
		// app-only grant gives no network access.
		{PreviewIPPort, "100.110.61.78:443", []PreviewMatch{devWeb}},
		{PreviewIPPort, "100.110.61.78:8085", []PreviewMatch{devWeb}},
		{PreviewIPPort, "[fd7a:115c:a1e0::7937:3d4e]:22", []PreviewMatch{aclSSH}},
		{PreviewIPPort, "100.110.61.78:9999", []PreviewMatch{}},
		// kakuna is the host prodbox and tagged tag:prod; the ICMP grant
		// has no port.
		{PreviewIPPort, "100.111.168.87:5432", []PreviewMatch{freyaDB}},
		{PreviewIPPort, "100.111.168.87:443", []PreviewMatch{}},
		// An address behind a route, in the host "internal".
		{PreviewIPPort, "10.1.2.3:80", []PreviewMatch{memberInternal}},
		// odin is an admin and a developer; thor a developer; freya
		// neither; all are members.
		{PreviewUser, "odin@example.com", []PreviewMatch{aclSSH, devWeb, memberInternal, adminsPing}},
		{PreviewUser, "thor@example.org", []PreviewMatch{devWeb, memberInternal}},
		{PreviewUser, "freya", []PreviewMatch{freyaDB, memberInternal}},
	} {
		got, e := p.Preview(previewTopology, []byte(previewPolicy), tc.typ, tc.previewFor)
		if e != nil {
			t.Errorf("%s %s: %v", tc.typ, tc.previewFor, e)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s:\n got %+v\nwant %+v", tc.typ, tc.previewFor, got, tc.want)
		}
	}
}

func TestPreviewErrors(t *testing.T) {
	p, e := Parse([]byte(previewPolicy))
	if e != nil {
		t.Fatal(e)
	}
	for _, tc := range []struct{ typ, previewFor, want string }{
		{"users", "odin@example.com", `type "users": want "user" or "ipport"`},
		{"", "odin@example.com", `type "": want "user" or "ipport"`},
		{PreviewUser, "loki@example.com", `previewFor "loki@example.com": user not found`},
		{PreviewUser, "", `previewFor "": user not found`},
		{PreviewIPPort, "beedrill:443", `previewFor "beedrill:443": want an IP address and a port`},
		{PreviewIPPort, "100.110.61.78", `previewFor "100.110.61.78": want an IP address and a port`},
		{PreviewIPPort, "100.110.61.78:0", `previewFor "100.110.61.78:0": want an IP address and a port`},
	} {
		_, e := p.Preview(previewTopology, []byte(previewPolicy), tc.typ, tc.previewFor)
		if e == nil || !strings.HasPrefix(e.Message, tc.want) {
			t.Errorf("%s %q: got %v, want %q", tc.typ, tc.previewFor, e, tc.want)
		}
	}
}

// TestPreviewWithoutRules: a policy with neither acls nor grants allows
// everything and has no rule to show.
func TestPreviewWithoutRules(t *testing.T) {
	p, e := Parse([]byte(`{"groups": {"group:a": ["odin@example.com"]}}`))
	if e != nil {
		t.Fatal(e)
	}
	got, e := p.Preview(previewTopology, nil, PreviewIPPort, "100.110.61.78:443")
	if e != nil || got == nil || len(got) != 0 {
		t.Fatalf("got %#v, %v; want an empty list", got, e)
	}
}
