package aclcheck

import (
	"reflect"
	"testing"
)

func mustParse(t *testing.T, policy string) *Policy {
	t.Helper()
	p, err := Parse([]byte(policy))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

func TestParseError(t *testing.T) {
	p, err := Parse([]byte(`{"acls": [{"action": "deny", "src": ["*"], "dst": ["*:*"]}]}`))
	if p != nil || err == nil || err.Error() != `action="deny" is not supported` || err.Data != nil {
		t.Fatalf("Parse = %v, %v", p, err)
	}
}

func TestCheckLeavesInputAlone(t *testing.T) {
	in := []byte(qtailPolicy)
	if err := Check(in, qtailTopology()); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(in); err != nil {
		t.Fatal(err)
	}
	if string(in) != qtailPolicy {
		t.Fatalf("the policy bytes changed:\n%s", in)
	}
}

func TestTagOwners(t *testing.T) {
	p := mustParse(t, qtailPolicy)
	want := map[string][]string{
		"tag:k8s-operator": {},
		"tag:k8s":          {"tag:k8s-operator"},
		"tag:k8s-billing":  {"tag:k8s-operator"},
	}
	got := p.TagOwners()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("TagOwners() = %v, want %v", got, want)
	}
	got["tag:k8s"][0] = "changed"
	if p.TagOwners()["tag:k8s"][0] != "tag:k8s-operator" {
		t.Fatal("TagOwners() shares its slices with the policy")
	}
}

func TestCanOwnTag(t *testing.T) {
	p := mustParse(t, qtailPolicy)
	tests := []struct {
		owner, tag string
		want       bool
	}{
		{"tag:k8s-operator", "tag:k8s", true},
		{"tag:k8s-operator", "tag:K8s", true},
		{"tag:k8s-operator", "tag:k8s-operator", false},
		{"tag:k8s", "tag:k8s-billing", false},
		{"tag:k8s-operator", "tag:undeclared", false},
	}
	for _, tt := range tests {
		if got := p.CanOwnTag(tt.owner, tt.tag); got != tt.want {
			t.Errorf("CanOwnTag(%q, %q) = %v, want %v", tt.owner, tt.tag, got, tt.want)
		}
	}
}

func TestRouteApproved(t *testing.T) {
	p := mustParse(t, `{
		"groups": {"group:net": ["amy@example.com"]},
		"tagOwners": {"tag:k8s": [], "tag:exit": [], "tag:router": []},
		"autoApprovers": {
			"routes": {
				"10.0.0.0/16": ["tag:k8s"],
				"192.168.0.0/16": ["group:net", "bob@example.com"],
				"172.16.0.0/12": ["autogroup:member"],
				"fd00::/8": ["autogroup:tagged"],
				"::/0": ["tag:router"],
			},
			"exitNode": ["tag:exit"],
		},
	}`)
	tests := []struct {
		name  string
		tags  []string
		user  string
		route string
		want  bool
	}{
		{"exact route by tag", []string{"tag:k8s"}, "", "10.0.0.0/16", true},
		{"narrower route", []string{"tag:k8s"}, "", "10.0.5.0/24", true},
		{"wider route", []string{"tag:k8s"}, "", "10.0.0.0/8", false},
		{"other tag", []string{"tag:router"}, "", "10.0.0.0/16", false},
		{"second tag", []string{"tag:router", "tag:k8s"}, "", "10.0.1.0/24", true},
		{"user through group", nil, "amy@example.com", "192.168.1.0/24", true},
		{"user listed", nil, "Bob@example.com", "192.168.1.0/24", true},
		{"user not listed", nil, "eve@example.com", "192.168.1.0/24", false},
		{"tagged device ignores user", []string{"tag:router"}, "amy@example.com", "192.168.1.0/24", false},
		{"autogroup:member", nil, "eve@example.com", "172.16.1.0/24", true},
		{"autogroup:member skips tagged", []string{"tag:k8s"}, "", "172.16.1.0/24", false},
		{"autogroup:tagged", []string{"tag:k8s"}, "", "fd00:1::/64", true},
		{"exit node by exitNode", []string{"tag:exit"}, "", "0.0.0.0/0", true},
		{"exit node by exitNode v6", []string{"tag:exit"}, "", "::/0", true},
		{"exit node by routes", []string{"tag:router"}, "", "::/0", true},
		{"exit node not approved", []string{"tag:k8s"}, "", "0.0.0.0/0", false},
		{"exitNode approves only exit routes", []string{"tag:exit"}, "", "10.0.0.0/16", false},
		{"bad route", []string{"tag:k8s"}, "", "10.0.0.0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.RouteApproved(tt.tags, tt.user, tt.route); got != tt.want {
				t.Fatalf("RouteApproved(%v, %q, %q) = %v, want %v", tt.tags, tt.user, tt.route, got, tt.want)
			}
		})
	}
}

func TestAllows(t *testing.T) {
	p := mustParse(t, qtailPolicy)
	topo := qtailTopology()
	tests := []struct {
		src, dst, proto string
		want            bool
	}{
		{"group:platform-ops", "tag:k8s-billing:443", "", true},
		{"amy@example.com", "tag:k8s-billing:443", "tcp", true},
		{"amy", "tag:k8s-billing:443", "", true},
		{"100.64.0.1", "100.64.1.1:443", "", true},
		{"amy@example.com", "tag:k8s-billing:443", "udp", false},
		{"amy@example.com", "tag:k8s-billing:80", "", false},
		{"bob@example.com", "tag:k8s-billing:443", "", false},
		{"tag:k8s-operator", "tag:k8s:6443", "", true},
		{"tag:k8s", "tag:k8s-operator:6443", "", false},
		{"nobody@example.com", "tag:k8s-billing:443", "", false},
		{"amy@example.com", "tag:k8s-billing:*", "", false},
	}
	for _, tt := range tests {
		if got := p.Allows(topo, tt.src, tt.dst, tt.proto); got != tt.want {
			t.Errorf("Allows(%q, %q, %q) = %v, want %v", tt.src, tt.dst, tt.proto, got, tt.want)
		}
	}
}

func TestHasAllowAll(t *testing.T) {
	tests := []struct {
		name, policy string
		want         bool
	}{
		{"no rules at all", `{}`, true},
		{"default policy", grantsDefaultPolicy, true},
		{"default policy with acls", aclsDefaultPolicy, true},
		{"allow-all grant", `{"grants": [{"src": ["*"], "dst": ["*"], "ip": ["*"]}]}`, true},
		{"allow-all acl", `{"acls": [{"action": "accept", "src": ["*"], "dst": ["*:*"]}]}`, true},
		{"allow-all among others", `{"tagOwners": {"tag:a": []}, "grants": [
			{"src": ["tag:a"], "dst": ["tag:a"], "ip": ["22"]},
			{"src": ["*"], "dst": ["*"], "ip": ["*"]}]}`, true},
		{"empty acls", `{"acls": []}`, false},
		{"port-limited grant", `{"grants": [{"src": ["*"], "dst": ["*"], "ip": ["tcp:443"]}]}`, false},
		{"port-limited acl", `{"acls": [{"action": "accept", "src": ["*"], "dst": ["*:443"]}]}`, false},
		{"protocol-limited acl", `{"acls": [{"action": "accept", "src": ["*"], "proto": "tcp", "dst": ["*:*"]}]}`, false},
		{"via grant", `{"tagOwners": {"tag:r": []}, "grants": [{"src": ["*"], "dst": ["*"], "ip": ["*"], "via": ["tag:r"]}]}`, false},
		{"qtail fragments", qtailPolicy, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustParse(t, tt.policy).HasAllowAll(); got != tt.want {
				t.Fatalf("HasAllowAll() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSaaSTestSemantics replays tests-block scenarios whose SaaS outcome is
// known, on the topology SaaS evaluated them against: beedrill is
// tag:server at 100.64.0.16, bulbasaur is odin's, ivysaur thor's, weedle
// tag:client.
func TestSaaSTestSemantics(t *testing.T) {
	topo := Topology{
		Users: []User{
			{ID: 1, Name: "odin", Email: "odin@example.com"},
			{ID: 2, Name: "thor", Email: "thor@example.org"},
			{ID: 3, Name: "freya", Email: "freya@example.com"},
		},
		Nodes: map[string]Node{
			"beedrill":  {Hostname: "beedrill", IPv4: "100.64.0.16", IPv6: "fd7a:115c:a1e0::10", Tags: []string{"tag:server"}},
			"bulbasaur": {Hostname: "bulbasaur", IPv4: "100.64.0.19", IPv6: "fd7a:115c:a1e0::13", User: "odin"},
			"ivysaur":   {Hostname: "ivysaur", IPv4: "100.64.0.17", IPv6: "fd7a:115c:a1e0::11", User: "thor"},
			"venusaur":  {Hostname: "venusaur", IPv4: "100.64.0.18", IPv6: "fd7a:115c:a1e0::12", User: "freya"},
			"weedle":    {Hostname: "weedle", IPv4: "100.64.0.14", IPv6: "fd7a:115c:a1e0::e", Tags: []string{"tag:client"}},
			"kakuna":    {Hostname: "kakuna", IPv4: "100.64.0.15", IPv6: "fd7a:115c:a1e0::f", Tags: []string{"tag:prod"}},
		},
	}
	const base = `"groups": {"group:developers": ["thor@example.org", "odin@example.com"]},
		"tagOwners": {"tag:client": ["odin@example.com"], "tag:server": ["odin@example.com"], "tag:prod": ["odin@example.com"],
			"tag:group-a": ["odin@example.com"], "tag:group-b": ["odin@example.com"]},
		"hosts": {"internal": "10.0.0.0/8", "prodbox": "100.103.8.15", "webserver": "100.64.0.16"}`
	tests := []struct {
		name   string
		rules  string
		tests  string
		accept bool // whether SaaS accepted the policy
	}{
		{"acls and grants mixed",
			`"acls": [{"action": "accept", "src": ["odin@example.com"], "dst": ["tag:server:22"]}], "grants": [{"src": ["tag:client"], "dst": ["webserver"], "ip": ["tcp:80"]}]`,
			`[{"src": "odin@example.com", "accept": ["tag:server:22"]}, {"src": "tag:client", "accept": ["webserver:80"]}]`, true},
		{"host alias outside the topology",
			`"grants": [{"src": ["tag:client"], "dst": ["prodbox"], "ip": ["tcp:22"]}]`,
			`[{"src": "tag:client", "accept": ["prodbox:22"]}]`, true},
		{"IP literal dst",
			`"grants": [{"src": ["tag:client"], "dst": ["100.64.0.16"], "ip": ["tcp:22"]}]`,
			`[{"src": "tag:client", "accept": ["100.64.0.16:22"]}]`, true},
		{"IPv6 literal dst",
			`"grants": [{"src": ["tag:client"], "dst": ["fd7a:115c:a1e0::10"], "ip": ["tcp:22"]}]`,
			`[{"src": "tag:client", "accept": ["[fd7a:115c:a1e0::10]:22"]}]`, true},
		{"prefix /32 dst",
			`"grants": [{"src": ["tag:client"], "dst": ["100.64.0.16/32"], "ip": ["tcp:22"]}]`,
			`[{"src": "tag:client", "accept": ["100.64.0.16/32:22"]}]`, false},
		{"CIDR dst",
			`"grants": [{"src": ["tag:client"], "dst": ["10.0.0.0/8"], "ip": ["tcp:22"]}]`,
			`[{"src": "tag:client", "accept": ["10.0.0.0/8:22"]}]`, false},
		{"proto numeric",
			`"acls": [{"action": "accept", "src": ["thor@example.org"], "proto": "6", "dst": ["webserver:443"]}]`,
			`[{"src": "thor@example.org", "proto": "6", "accept": ["webserver:443"]}]`, true},
		{"proto numeric mismatch",
			`"acls": [{"action": "accept", "src": ["group:developers"], "proto": "6", "dst": ["webserver:443"]}]`,
			`[{"src": "thor@example.org", "proto": "17", "accept": ["webserver:443"]}]`, false},
		{"proto tcp vs udp",
			`"acls": [{"action": "accept", "src": ["group:developers"], "proto": "tcp", "dst": ["webserver:53"]}]`,
			`[{"src": "thor@example.org", "proto": "udp", "accept": ["webserver:53"]}]`, false},
		{"proto icmp",
			`"acls": [{"action": "accept", "src": ["thor@example.org"], "proto": "icmp", "dst": ["webserver:*"]}]`,
			`[{"src": "thor@example.org", "proto": "icmp", "accept": ["webserver:*"]}]`, false},
		{"port range dst",
			`"acls": [{"action": "accept", "src": ["thor@example.org"], "dst": ["webserver:8000-8100"]}]`,
			`[{"src": "thor@example.org", "accept": ["webserver:8000-8100"]}]`, false},
		{"port wildcard deny",
			`"acls": [{"action": "accept", "src": ["thor@example.org"], "dst": ["webserver:*"]}]`,
			`[{"src": "thor@example.org", "deny": ["webserver:8080"]}]`, false},
		{"IP literal src",
			`"acls": [{"action": "accept", "src": ["tag:client"], "dst": ["webserver:80"]}]`,
			`[{"src": "100.64.0.19", "accept": ["webserver:80"]}]`, false},
		{"autogroup:tagged src",
			`"acls": [{"action": "accept", "src": ["tag:group-a"], "dst": ["tag:group-b:80"]}]`,
			`[{"src": "autogroup:tagged", "accept": ["tag:server:443"]}]`, false},
		{"autogroup:internet dst",
			`"acls": [{"action": "accept", "src": ["tag:client"], "dst": ["autogroup:internet:*"]}]`,
			`[{"src": "tag:client", "accept": ["autogroup:internet:443"]}]`, false},
		{"autogroup:self dst from a tag",
			`"acls": [{"action": "accept", "src": ["tag:client"], "dst": ["webserver:80"]}]`,
			`[{"src": "tag:client", "accept": ["autogroup:self:22"]}]`, false},
		{"empty src",
			`"acls": [{"action": "accept", "src": ["thor@example.org"], "dst": ["webserver:80"]}]`,
			`[{"src": "", "accept": ["webserver:80"]}]`, false},
		{"bad port syntax",
			`"acls": [{"action": "accept", "src": ["thor@example.org"], "dst": ["webserver:80"]}]`,
			`[{"src": "thor@example.org", "accept": ["webserver:notaport"]}]`, false},
		{"unknown group dst",
			`"acls": [{"action": "accept", "src": ["group:developers"], "dst": ["tag:server:22"]}]`,
			`[{"src": "group:developers", "accept": ["group:nonexistent:22"]}]`, false},
		{"unknown host dst",
			`"acls": [{"action": "accept", "src": ["thor@example.org"], "dst": ["webserver:80"]}]`,
			`[{"src": "thor@example.org", "accept": ["phantomhost:80"]}]`, false},
		{"unknown tag src",
			`"acls": [{"action": "accept", "src": ["tag:client"], "dst": ["webserver:80"]}]`,
			`[{"src": "tag:phantom", "accept": ["webserver:80"]}]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policy := "{" + base + ", " + tt.rules + `, "tests": ` + tt.tests + "}"
			got := Check([]byte(policy), topo)
			if tt.accept && got != nil {
				t.Fatalf("rejected with %q %+v; SaaS accepted", got.Message, got.Data)
			}
			if !tt.accept && (got == nil || got.Message != testsFailed || len(got.Data) == 0) {
				t.Fatalf("got %+v; SaaS answered test(s) failed", got)
			}
		})
	}
}
