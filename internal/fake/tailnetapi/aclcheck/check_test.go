package aclcheck

import (
	"reflect"
	"strings"
	"testing"
)

// testTopology is a small tailnet: two users with a laptop each, a server,
// a subnet router and an exit node.
func testTopology() Topology {
	return Topology{
		Users: []User{
			{ID: 1, Name: "amy", Email: "amy@example.com"},
			{ID: 2, Name: "bob", Email: "bob@example.com"},
		},
		Nodes: map[string]Node{
			"amy-laptop": {Hostname: "amy-laptop", IPv4: "100.64.0.1", IPv6: "fd7a:115c:a1e0::1", User: "amy"},
			"bob-laptop": {Hostname: "bob-laptop", IPv4: "100.64.0.2", IPv6: "fd7a:115c:a1e0::2", User: "bob"},
			"db":         {Hostname: "db", IPv4: "100.64.0.10", IPv6: "fd7a:115c:a1e0::a", Tags: []string{"tag:server"}},
			"router": {
				Hostname: "router", IPv4: "100.64.0.20", IPv6: "fd7a:115c:a1e0::14", Tags: []string{"tag:router"},
				RoutableIPs: []string{"10.1.0.0/16"}, ApprovedRoutes: []string{"10.1.0.0/16"},
			},
			"exit": {
				Hostname: "exit", IPv4: "100.64.0.30", IPv6: "fd7a:115c:a1e0::1e", Tags: []string{"tag:exit"},
				RoutableIPs: []string{"0.0.0.0/0", "::/0"},
			},
		},
	}
}

// withBase wraps sections (the inside of a JSON object, no braces) in a
// policy that declares the test topology's tags, a group and two hosts.
func withBase(sections string) string {
	base := `"tagOwners": {"tag:server": ["amy@example.com"], "tag:router": ["group:admins"], "tag:exit": ["amy@example.com"]},
	"groups": {"group:admins": ["amy@example.com"], "group:devs": ["amy@example.com", "bob@example.com"]},
	"hosts": {"db-host": "100.64.0.10", "lan": "10.1.0.0/16"}`
	if sections == "" {
		return "{" + base + "}"
	}
	return "{" + base + ",\n" + sections + "}"
}

// grantsDefaultPolicy is the policy file of a new tailnet.
const grantsDefaultPolicy = `// Example/default ACLs for unrestricted connections.
{
	// Declare static groups of users. Use autogroups for all users or users with a specific role.
	// "groups": {
	//  	"group:example": ["alice@example.com", "bob@example.com"],
	// },

	// Define the tags which can be applied to devices and by which users.
	// "tagOwners": {
	//  	"tag:example": ["autogroup:admin"],
	// },

	// Define grants that govern access for users, groups, autogroups, tags,
	// Tailscale IP addresses, and subnet ranges.
	"grants": [
		// Allow all connections.
		// Comment this section out if you want to define specific restrictions.
		{"src": ["*"], "dst": ["*"], "ip": ["*"]},
	],

	// Define users and devices that can use Tailscale SSH.
	"ssh": [
		// Allow all users to SSH into their own devices in check mode.
		// Comment this section out if you want to define specific restrictions.
		{
			"action": "check",
			"src":    ["autogroup:member"],
			"dst":    ["autogroup:self"],
			"users":  ["autogroup:nonroot", "root"],
		},
	],

	// Test access rules every time they're saved.
	// "tests": [
	//  	{
	//  		"src": "alice@example.com",
	//  		"accept": ["tag:example"],
	//  		"deny": ["100.101.102.103:443"],
	//  	},
	// ],
}
`

// aclsDefaultPolicy is the policy file new tailnets had before grants.
const aclsDefaultPolicy = `{
	"acls": [
		// Allow all connections.
		{"action": "accept", "src": ["*"], "dst": ["*:*"]},
	],
	"ssh": [
		{
			"action": "check",
			"src":    ["autogroup:member"],
			"dst":    ["autogroup:self"],
			"users":  ["autogroup:nonroot", "root"],
		},
	],
	"nodeAttrs": [
		{
			// Funnel policy, which lets tailnet members control Funnel
			// for their own devices.
			"target": ["autogroup:member"],
			"attr":   ["funnel"],
		},
	],
}
`

func TestCheckValidation(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		want   string // "" when SaaS accepts the policy
	}{
		// Decoding.
		{"empty object", `{}`, ""},
		{"default policy", grantsDefaultPolicy, ""},
		{"default policy with acls", aclsDefaultPolicy, ""},
		{"hujson comments and trailing commas", `{
			// qtail:grant:web
			"grants": [
				/* all to all */
				{"src": ["*"], "dst": ["*"], "ip": ["*"],},
			],
		}`, ""},
		{"keys match case-insensitively", `{"ACLs": [{"Action": "accept", "Src": ["tag:server"], "DST": ["*:*"]}],
			"TagOwners": {"tag:server": []}}`, ""},
		{"legacy users and ports", `{"acls": [{"action": "accept", "users": ["*"], "ports": ["*:22"]}]}`, ""},
		{"unknown top-level field", `{"rules": []}`, `json: unknown field "rules"`},
		{"unknown acl field", `{"acls": [{"action": "accept", "src": ["*"], "dst": ["*:*"], "BAD": 1}]}`, `json: unknown field "BAD"`},
		{"unknown grant field", `{"grants": [{"src": ["*"], "dst": ["*"], "ip": ["*"], "action": "accept"}]}`, `json: unknown field "action"`},
		{"unknown test field", `{"tests": [{"src": "amy@example.com", "dst": ["db-host:22"]}]}`, `json: unknown field "dst"`},
		{"tests not an array", `{"tests": {"src": "amy@example.com"}}`, `json: cannot unmarshal object into field "tests" of type []aclcheck.policyTest`},
		{"test src not a string", `{"tests": [{"src": ["amy@example.com"], "accept": ["1.2.3.4:22"]}]}`, `json: cannot unmarshal array into field "tests.src" of type string`},
		{"syntax error", `{"acls": [}`, `hujson: line 1, column 11: invalid character '}' at start of value`},
		{"not an object", `[]`, `json: cannot unmarshal array into the policy object`},
		{"trailing data", `{} {}`, `hujson: line 1, column 4: invalid character '{' after top-level value`},

		// Tags.
		{"tag starting with a digit", `{"tagOwners": {"tag:1web": []}}`, `tagOwners["tag:1web"]: tag names must start with a letter, after 'tag:'`},
		{"tag with underscore", `{"tagOwners": {"tag:web_1": []}}`, `tagOwners["tag:web_1"]: tag names can only contain numbers, letters, or dashes`},
		{"tag in cyrillic", `{"tagOwners": {"tag:сервер": []}}`, `tagOwners["tag:сервер"]: tag names must start with a letter, after 'tag:'`},
		{"tagOwners key without tag:", `{"tagOwners": {"web": []}}`, `tagOwners["web"]: tags must start with 'tag:'`},
		{"tags owning tags", `{"tagOwners": {"tag:k8s-operator": [], "tag:k8s": ["tag:k8s-operator"]}}`, ""},
		{"undeclared owner tag", `{"tagOwners": {"tag:k8s": ["tag:k8s-operator"]}}`, `tag not found: "tag:k8s-operator"`},
		{"undeclared owner group", `{"tagOwners": {"tag:k8s": ["group:ops"]}}`, `group not found: "group:ops"`},
		{"grant src undeclared tag", withBase(`"grants": [{"src": ["tag:nope"], "dst": ["*"], "ip": ["*"]}]`), `src=tag not found: "tag:nope"`},
		{"grant dst undeclared tag", withBase(`"grants": [{"src": ["*"], "dst": ["tag:nope"], "ip": ["*"]}]`), `dst "tag:nope": tag not found: "tag:nope"`},
		{"acl src undeclared tag", withBase(`"acls": [{"action": "accept", "src": ["tag:nope"], "dst": ["*:*"]}]`), `src=tag not found: "tag:nope"`},
		{"acl dst undeclared tag", withBase(`"acls": [{"action": "accept", "src": ["*"], "dst": ["tag:nope:22"]}]`), `dst="tag:nope": tag not found: "tag:nope"`},
		{"via undeclared tag", withBase(`"grants": [{"src": ["*"], "dst": ["lan"], "ip": ["*"], "via": ["tag:nope"]}]`), `tag "tag:nope" not found`},
		{"via not a tag", withBase(`"grants": [{"src": ["*"], "dst": ["lan"], "ip": ["*"], "via": ["autogroup:tagged"]}]`), `via can only be a tag`},
		{"via declared tag", withBase(`"grants": [{"src": ["*"], "dst": ["lan"], "ip": ["*"], "via": ["tag:router"]}]`), ""},
		{"autoApprovers route undeclared tag", withBase(`"autoApprovers": {"routes": {"10.1.0.0/16": ["tag:nope"]}}`), `tag not found: "tag:nope"`},
		{"autoApprovers exitNode undeclared tag", withBase(`"autoApprovers": {"exitNode": ["tag:nope"]}`), `tag not found: "tag:nope"`},
		{"autoApprovers bad route", withBase(`"autoApprovers": {"routes": {"10.1.0.0": ["tag:router"]}}`), `autoApprovers.routes["10.1.0.0"]: invalid prefix`},
		{"nodeAttrs undeclared tag", withBase(`"nodeAttrs": [{"target": ["tag:nope"], "attr": ["funnel"]}]`), `tag not found: "tag:nope"`},
		{"nodeAttrs bad target", withBase(`"nodeAttrs": [{"target": ["%bogus%"], "attr": ["funnel"]}]`), `"%bogus%": invalid address`},
		{"nodeAttrs reserved pool", withBase(`"nodeAttrs": [{"target": ["*"], "ipPool": ["100.100.100.0/24"]}]`), `IPPool(100.100.100.0/24): network within reserved range`},

		// Grants: ip and app.
		{"grant without ip or app", withBase(`"grants": [{"src": ["*"], "dst": ["*"]}]`), `ip and app can not both be empty`},
		{"grant with empty ip and app", withBase(`"grants": [{"src": ["*"], "dst": ["*"], "ip": [], "app": {}}]`), `ip and app can not both be empty`},
		{"grant ip forms", withBase(`"grants": [{"src": ["*"], "dst": ["tag:server"], "ip": ["*", "22", "80-443", "tcp:443", "udp:53", "icmp:*", "47", "sctp:9", "6:22"]}]`), ""},
		{"grant ip protocol alone", withBase(`"grants": [{"src": ["*"], "dst": ["*"], "ip": ["icmp"]}]`), `port range "icmp": invalid first integer`},
		{"grant ip port zero", withBase(`"grants": [{"src": ["*"], "dst": ["*"], "ip": ["tcp:0"]}]`), `port range "0": first port must be >0, or use '*' for wildcard`},
		{"grant ip reversed range", withBase(`"grants": [{"src": ["*"], "dst": ["*"], "ip": ["tcp:90-80"]}]`), `port range "90-80": first port must be >= last port`},
		{"grant ip bad last port", withBase(`"grants": [{"src": ["*"], "dst": ["*"], "ip": ["tcp:80-x"]}]`), `port range "80-x": invalid last integer`},
		{"grant ip too many dashes", withBase(`"grants": [{"src": ["*"], "dst": ["*"], "ip": ["1-2-3"]}]`), `port range "1-2-3": too many dashes(-)`},
		{"grant ip port list", withBase(`"grants": [{"src": ["*"], "dst": ["*"], "ip": ["tcp:80,443"]}]`), `only one port range allowed`},
		{"grant ip unknown protocol", withBase(`"grants": [{"src": ["*"], "dst": ["*"], "ip": ["foo:22"]}]`), `proto name "foo" not known; use protocol number 0-255 or protocol name (icmp, tcp, udp, etc.)`},
		{"grant ip reserved protocol", withBase(`"grants": [{"src": ["*"], "dst": ["*"], "ip": ["99:*"]}]`), `IP protocol 99 is reserved for use by Tailscale`},
		{"grant ip empty entry", withBase(`"grants": [{"src": ["*"], "dst": ["*"], "ip": [""]}]`), `empty string`},
		{"app capability", withBase(`"grants": [{"src": ["*"], "dst": ["*"], "app": {"example.com/cap/x": [{}], "tailscale.com/cap/drive": [{}]}}]`), ""},
		{"app capability with a scheme", withBase(`"grants": [{"src": ["*"], "dst": ["*"], "app": {"https://example.com/cap/x": [{}]}}]`), `capability name must have the form {domain}/{path}`},
		{"app capability without a path", withBase(`"grants": [{"src": ["*"], "dst": ["*"], "app": {"example.com": [{}]}}]`), `capability name must have the form {domain}/{path}`},
		{"app capability in tailscale.com", withBase(`"grants": [{"src": ["*"], "dst": ["*"], "app": {"tailscale.com/cap/relay-target": [{}]}}]`), `capability name must not be in the tailscale.com domain`},
		{"app with autogroup:internet", withBase(`"grants": [{"src": ["*"], "dst": ["autogroup:internet"], "app": {"example.com/cap/x": [{}]}}]`), `cannot use app grants with autogroup:internet`},

		// Destinations, hosts and CIDRs.
		{"acl dst without port", withBase(`"acls": [{"action": "accept", "src": ["*"], "dst": ["tag:server"]}]`), `dst="tag:server": port range "server": invalid first integer`},
		{"acl dst named port", withBase(`"acls": [{"action": "accept", "src": ["*"], "dst": ["tag:server:ssh"]}]`), `dst="tag:server:ssh": port range "ssh": invalid first integer`},
		{"acl dst autogroup without port", withBase(`"acls": [{"action": "accept", "src": ["*"], "dst": ["autogroup:self"]}]`), `dst="autogroup:self": port range "self": invalid first integer`},
		{"acl dst port zero", withBase(`"acls": [{"action": "accept", "src": ["*"], "dst": ["db-host:0"]}]`), `dst="db-host:0": port range "0": first port must be >0, or use '*' for wildcard`},
		{"acl dst port too large", withBase(`"acls": [{"action": "accept", "src": ["*"], "dst": ["db-host:70000"]}]`), `dst="db-host:70000": port range "70000": invalid first integer`},
		{"acl dst empty port list", withBase(`"acls": [{"action": "accept", "src": ["*"], "dst": ["db-host:"]}]`), `dst="db-host:": invalid port list: ""`},
		{"acl dst no colon", withBase(`"acls": [{"action": "accept", "src": ["*"], "dst": ["db-host"]}]`), `dst="db-host": hostport must contain a colon (":")`},
		{"acl dst forms", withBase(`"acls": [{"action": "accept", "src": ["*"], "dst": ["tag:server:22,80-443", "db-host:*", "lan:22", "100.64.0.10:22", "fd7a:115c:a1e0::a:22", "10.2.0.0/16:*", "amy@example.com:22", "group:devs:22", "autogroup:member:22", "autogroup:internet:*"]}]`), ""},
		{"acl dst bad CIDR", withBase(`"acls": [{"action": "accept", "src": ["*"], "dst": ["10.0.0.0/33:22"]}]`), `dst="10.0.0.0/33": "10.0.0.0/33": invalid address`},
		{"acl dst unknown host", withBase(`"acls": [{"action": "accept", "src": ["*"], "dst": ["nowhere:22"]}]`), `dst="nowhere": "nowhere": invalid address`},
		{"acl src bad CIDR", withBase(`"acls": [{"action": "accept", "src": ["10.0.0.0/33"], "dst": ["*:*"]}]`), `src="10.0.0.0/33": invalid address`},
		{"acl src undefined group", withBase(`"acls": [{"action": "accept", "src": ["group:nope"], "dst": ["*:*"]}]`), `src=group not found: "group:nope"`},
		{"acl dst all IPv4", withBase(`"acls": [{"action": "accept", "src": ["*"], "dst": ["0.0.0.0/0:*"]}]`), `dst="0.0.0.0/0": to allow all IP addresses, use "*" or "autogroup:internet"`},
		{"acl proto", withBase(`"acls": [{"action": "accept", "src": ["*"], "proto": "udp", "dst": ["*:53"]}]`), ""},
		{"acl wildcard proto", withBase(`"acls": [{"action": "accept", "src": ["*"], "proto": "*", "dst": ["*:*"]}]`), `proto name "*" not known; use protocol number 0-255 or protocol name (icmp, tcp, udp, etc.)`},
		{"acl proto with leading 0", withBase(`"acls": [{"action": "accept", "src": ["*"], "proto": "06", "dst": ["*:*"]}]`), `leading 0 not permitted in protocol number "06"`},
		{"acl bad proto", withBase(`"acls": [{"action": "accept", "src": ["*"], "proto": "bogus", "dst": ["*:53"]}]`), `proto name "bogus" not known; use protocol number 0-255 or protocol name (icmp, tcp, udp, etc.)`},
		{"acl deny", withBase(`"acls": [{"action": "deny", "src": ["*"], "dst": ["*:*"]}]`), `action="deny" is not supported`},
		{"grant dst all IPv4", withBase(`"grants": [{"src": ["*"], "dst": ["0.0.0.0/0"], "ip": ["*"]}]`), `dst "0.0.0.0/0": to allow all IP addresses, use "*" or "autogroup:internet"`},
		{"grant dst all IPv6", withBase(`"grants": [{"src": ["*"], "dst": ["::/0"], "ip": ["*"]}]`), `dst "::/0": to allow all IP addresses, use "*" or "autogroup:internet"`},
		{"grant dst unknown host", withBase(`"grants": [{"src": ["*"], "dst": ["nowhere"], "ip": ["*"]}]`), `dst "nowhere": "nowhere": invalid address`},
		{"grant user domain", withBase(`"grants": [{"src": ["user:*@example.com"], "dst": ["user:*@example.com"], "ip": ["22"]}]`), ""},
		{"ipset", `{"ipsets": {"ipset:lan": ["10.0.0.0/8"]}, "grants": [{"src": ["ipset:lan"], "dst": ["*"], "ip": ["*"]}]}`, ""},
		{"ipset name without ipset:", `{"ipsets": {"lan": ["10.0.0.0/8"]}}`, `ipsets["lan"]: ipset names must start with 'ipset:'`},
		{"undefined ipset", `{"grants": [{"src": ["ipset:lan"], "dst": ["*"], "ip": ["*"]}]}`, `src=ipset not found: "ipset:lan"`},
		{"bad host value", `{"hosts": {"web": "1.2.3"}}`, `hosts["web"]: "1.2.3": invalid address`},

		// Autogroups.
		{"autogroup:self as src (acl)", withBase(`"acls": [{"action": "accept", "src": ["autogroup:self"], "dst": ["*:*"]}]`), `"autogroup:self" not valid on the src side of a rule`},
		{"autogroup:self as src (grant)", withBase(`"grants": [{"src": ["autogroup:self"], "dst": ["*"], "ip": ["*"]}]`), `"autogroup:self" not valid on the src side of a rule`},
		{"autogroup:self with tag src", withBase(`"acls": [{"action": "accept", "src": ["tag:server"], "dst": ["autogroup:self:*"]}]`), `autogroup:self can only be used with users, groups, or supported autogroups`},
		{"autogroup:self with tagged src", withBase(`"grants": [{"src": ["autogroup:tagged"], "dst": ["autogroup:self"], "ip": ["*"]}]`), `autogroup:self can only be used with users, groups, or supported autogroups`},
		{"autogroup:self with * in an acl", withBase(`"acls": [{"action": "accept", "src": ["*"], "dst": ["autogroup:self:*"]}]`), ""},
		{"autogroup:self with * in a grant", withBase(`"grants": [{"src": ["*"], "dst": ["autogroup:self"], "ip": ["*"]}]`), `autogroup:self can only be used with users, groups, or supported autogroups`},
		{"autogroup:self with members", withBase(`"grants": [{"src": ["autogroup:member", "group:devs", "bob@example.com"], "dst": ["autogroup:self"], "ip": ["*"]}]`), ""},
		{"autogroup:danger-all as dst", withBase(`"grants": [{"src": ["*"], "dst": ["autogroup:danger-all"], "ip": ["*"]}]`), `cannot use autogroup:danger-all as a dst`},
		{"autogroup:danger-all as src", withBase(`"grants": [{"src": ["autogroup:danger-all"], "dst": ["*"], "ip": ["*"]}]`), ""},
		{"unknown autogroup", withBase(`"grants": [{"src": ["autogroup:bogus"], "dst": ["*"], "ip": ["*"]}]`), `src=autogroup not found: "autogroup:bogus"`},

		// Groups.
		{"nested group", `{"groups": {"group:outer": ["group:inner"], "group:inner": ["amy@example.com"]}}`, `groups["group:outer"]: "group:inner": group members cannot be recursive`},
		{"group cycle", `{"groups": {"group:a": ["group:b"], "group:b": ["group:a"]}}`, `groups["group:b"]: "group:a": group members cannot be recursive`},
		{"group name without group:", `{"groups": {"devs": ["amy@example.com"]}}`, `groups["devs"]: group names must start with 'group:'`},

		// SSH.
		{"ssh rule", withBase(`"ssh": [{"action": "check", "src": ["autogroup:member"], "dst": ["autogroup:self"], "users": ["autogroup:nonroot", "root"], "checkPeriod": "12h"}]`), ""},
		{"ssh action missing", withBase(`"ssh": [{"src": ["autogroup:member"], "dst": ["tag:server"], "users": ["root"]}]`), `action must be specified`},
		{"ssh users missing", withBase(`"ssh": [{"action": "accept", "src": ["autogroup:member"], "dst": ["tag:server"]}]`), `users must be specified`},
		{"ssh check period too long", withBase(`"ssh": [{"action": "check", "src": ["autogroup:member"], "dst": ["tag:server"], "users": ["root"], "checkPeriod": "200h"}]`), `checkPeriod 200h0m0s is above the max (168h)`},
		{"ssh host alias dst", withBase(`"ssh": [{"action": "accept", "src": ["autogroup:member"], "dst": ["db-host"], "users": ["root"]}]`), `invalid dst "db-host"`},
		{"sshTests dst with port", withBase(`"sshTests": [{"src": "amy@example.com", "dst": ["tag:server:22"], "accept": ["root"]}]`), `SSH tests dst contains unknown tag "tag:server:22"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Check([]byte(tt.policy), testTopology())
			switch {
			case tt.want == "" && got != nil:
				t.Fatalf("rejected with %q; want accepted", got.Message)
			case tt.want != "" && got == nil:
				t.Fatalf("accepted; want %q", tt.want)
			case tt.want != "" && got.Message != tt.want:
				t.Fatalf("message\n got %q\nwant %q", got.Message, tt.want)
			}
			if got != nil && got.Data != nil {
				t.Fatalf("validation error with data %+v", got.Data)
			}
		})
	}
}

// qtailPolicy is a policy as qtail writes it: grants marked with qtail
// comments, the Kubernetes operator's tags and a route approval.
const qtailPolicy = `{
	"groups": {
		"group:platform-ops": ["amy@example.com"],
	},
	"tagOwners": {
		"tag:k8s-operator": [],
		"tag:k8s": ["tag:k8s-operator"],
		"tag:k8s-billing": ["tag:k8s-operator"],
	},
	"autoApprovers": {
		"routes": {"10.0.0.0/16": ["tag:k8s"]},
	},
	"grants": [
		// qtail:grant:billing-ops
		{"src": ["group:platform-ops"], "dst": ["tag:k8s-billing"], "ip": ["tcp:443"]},
		// qtail:grant:operator
		{"src": ["tag:k8s-operator"], "dst": ["tag:k8s"], "ip": ["*"]},
	],
	"tests": [
		{"src": "group:platform-ops", "accept": ["tag:k8s-billing:443"]},
		{"src": "bob@example.com", "deny": ["tag:k8s-billing:443"]},
	],
}`

func qtailTopology() Topology {
	topo := testTopology()
	topo.Nodes["billing"] = Node{Hostname: "billing", IPv4: "100.64.1.1", IPv6: "fd7a:115c:a1e0::101", Tags: []string{"tag:k8s-billing"}}
	return topo
}

func TestCheckQtailPolicy(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		topo   Topology
		want   *Error
	}{
		{name: "accepted", policy: qtailPolicy, topo: qtailTopology()},
		{name: "accepted without devices", policy: qtailPolicy, topo: Topology{Users: testTopology().Users}},
		{
			name:   "billing grant missing",
			policy: strings.Replace(qtailPolicy, `{"src": ["group:platform-ops"], "dst": ["tag:k8s-billing"], "ip": ["tcp:443"]},`, "", 1),
			topo:   qtailTopology(),
			want: &Error{Message: "test(s) failed", Data: []TestResult{
				{User: "group:platform-ops", Errors: []string{`address "tag:k8s-billing:443": want: Accept, got: Drop`}},
			}},
		},
		{
			name:   "grant on the wrong port",
			policy: strings.Replace(qtailPolicy, `"ip": ["tcp:443"]`, `"ip": ["tcp:8443"]`, 1),
			topo:   qtailTopology(),
			want: &Error{Message: "test(s) failed", Data: []TestResult{
				{User: "group:platform-ops", Errors: []string{`address "tag:k8s-billing:443": want: Accept, got: Drop`}},
			}},
		},
		{
			name:   "denied user joins the group",
			policy: strings.Replace(qtailPolicy, `["amy@example.com"]`, `["amy@example.com", "bob@example.com"]`, 1),
			topo:   qtailTopology(),
			want: &Error{Message: "test(s) failed", Data: []TestResult{
				{User: "bob@example.com", Errors: []string{`address "tag:k8s-billing:443": want: Drop, got: Accept`}},
			}},
		},
		{
			name:   "undeclared operator tag",
			policy: strings.Replace(qtailPolicy, `"tag:k8s-operator": [],`, "", 1),
			topo:   qtailTopology(),
			want:   &Error{Message: `tag not found: "tag:k8s-operator"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Check([]byte(tt.policy), tt.topo)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestCheckTests(t *testing.T) {
	policy := func(rules, tests string) string {
		return withBase(rules + `, "tests": ` + tests)
	}
	const sshToDB = `"acls": [{"action": "accept", "src": ["group:devs"], "dst": ["tag:server:22"]}]`
	tests := []struct {
		name   string
		policy string
		want   []TestResult // nil when the tests pass
	}{
		{"user to tag", policy(sshToDB, `[{"src": "bob@example.com", "accept": ["tag:server:22"], "deny": ["tag:server:80"]}]`), nil},
		{"user by name", policy(sshToDB, `[{"src": "bob", "accept": ["tag:server:22"]}]`), nil},
		{"legacy user and allow", policy(sshToDB, `[{"user": "bob@example.com", "allow": ["tag:server:22"]}]`), nil},
		{"group to host and IP", policy(sshToDB, `[{"src": "group:devs", "accept": ["db-host:22", "100.64.0.10:22", "[fd7a:115c:a1e0::a]:22"]}]`), nil},
		{"device IP as src", policy(sshToDB, `[{"src": "100.64.0.2", "accept": ["tag:server:22"]}]`), nil},
		{"tag src", policy(sshToDB, `[{"src": "tag:router", "deny": ["tag:server:22"]}]`), nil},
		{"accept fails", policy(sshToDB, `[{"src": "tag:router", "accept": ["tag:server:22"]}]`), []TestResult{
			{User: "tag:router", Errors: []string{`address "tag:server:22": want: Accept, got: Drop`}},
		}},
		{"deny fails", policy(sshToDB, `[{"src": "amy@example.com", "deny": ["tag:server:22", "tag:server:23"]}]`), []TestResult{
			{User: "amy@example.com", Errors: []string{`address "tag:server:22": want: Drop, got: Accept`}},
		}},
		{"proto", policy(`"acls": [{"action": "accept", "src": ["*"], "proto": "udp", "dst": ["tag:server:53"]}]`,
			`[{"src": "bob@example.com", "proto": "udp", "accept": ["tag:server:53"]}, {"src": "bob@example.com", "proto": "tcp", "deny": ["tag:server:53"]}]`), nil},
		{"numeric proto", policy(`"acls": [{"action": "accept", "src": ["*"], "proto": "6", "dst": ["tag:server:443"]}]`,
			`[{"src": "bob@example.com", "proto": "6", "accept": ["tag:server:443"]}, {"src": "bob@example.com", "proto": "17", "deny": ["tag:server:443"]}]`), nil},
		{"icmp proto", policy(sshToDB, `[{"src": "bob@example.com", "proto": "icmp", "deny": ["tag:server:22"]}]`), []TestResult{
			{User: "bob@example.com", Errors: []string{`proto "icmp": tests can only use tcp, udp or sctp`}},
		}},
		{"grant without proto", policy(`"grants": [{"src": ["tag:router"], "dst": ["lan"], "ip": ["tcp:22"]}]`, `[{"src": "tag:router", "accept": ["10.1.2.3:22"]}]`), nil},
		{"port wildcard rule", policy(`"acls": [{"action": "accept", "src": ["bob@example.com"], "dst": ["db-host:*"]}]`, `[{"src": "bob@example.com", "accept": ["db-host:8080"]}]`), nil},
		{"autogroup:self", policy(`"acls": [{"action": "accept", "src": ["*"], "dst": ["autogroup:self:22"]}]`, `[{"src": "bob@example.com", "accept": ["autogroup:self:22"], "deny": ["amy@example.com:22"]}]`), nil},
		{"autogroup:self from a tag", policy(`"acls": [{"action": "accept", "src": ["*"], "dst": ["autogroup:self:22"]}]`, `[{"src": "tag:server", "accept": ["autogroup:self:22"]}]`), []TestResult{
			{User: "tag:server", Errors: []string{`address "autogroup:self:22": autogroup:self can only be tested from users`}},
		}},
		{"autogroup:member and tagged", policy(`"grants": [{"src": ["autogroup:member"], "dst": ["autogroup:tagged"], "ip": ["22"]}]`,
			`[{"src": "autogroup:member", "accept": ["tag:server:22", "tag:exit:22"], "deny": ["amy@example.com:22"]}, {"src": "autogroup:tagged", "deny": ["tag:server:22"]}]`), nil},
		{"internet addresses", policy(`"acls": [{"action": "accept", "src": ["bob@example.com"], "dst": ["autogroup:internet:*"]}]`,
			`[{"src": "bob@example.com", "accept": ["8.8.8.8:53", "[2001:4860:4860::8888]:443"], "deny": ["10.1.2.3:53", "100.64.0.10:53"]}]`), nil},
		{"allow all when no rules", withBase(`"tests": [{"src": "tag:exit", "accept": ["bob@example.com:22"]}]`), nil},
		{"deny all with empty acls", policy(`"acls": []`, `[{"src": "tag:exit", "accept": ["bob@example.com:22"]}]`), []TestResult{
			{User: "tag:exit", Errors: []string{`address "bob@example.com:22": want: Accept, got: Drop`}},
		}},
		{"prefix /32 as dst", policy(sshToDB, `[{"src": "bob@example.com", "accept": ["100.64.0.10/32:22"]}]`), []TestResult{
			{User: "bob@example.com", Errors: []string{`address "100.64.0.10/32:22": tests need a single address, not a CIDR`}},
		}},
		{"port range as dst", policy(sshToDB, `[{"src": "bob@example.com", "accept": ["tag:server:20-22"]}]`), []TestResult{
			{User: "bob@example.com", Errors: []string{`address "tag:server:20-22": tests need a single port, not a list, a range or "*"`}},
		}},
		{"bad port as dst", policy(sshToDB, `[{"src": "bob@example.com", "accept": ["tag:server:ssh"]}]`), []TestResult{
			{User: "bob@example.com", Errors: []string{`address "tag:server:ssh": port range "ssh": invalid first integer`}},
		}},
		{"unknown group src", policy(sshToDB, `[{"src": "group:nope", "accept": ["tag:server:22"]}]`), []TestResult{
			{User: "group:nope", Errors: []string{`src "group:nope": group not found: "group:nope"`}},
		}},
		{"unknown tag src", policy(sshToDB, `[{"src": "tag:nope", "accept": ["tag:server:22"]}]`), []TestResult{
			{User: "tag:nope", Errors: []string{`src "tag:nope": tag not found: "tag:nope"`}},
		}},
		{"wildcard src", policy(sshToDB, `[{"src": "*", "accept": ["tag:server:22"]}]`), []TestResult{
			{User: "*", Errors: []string{`src "*": "*" is not allowed in tests`}},
		}},
		{"internet dst", policy(sshToDB, `[{"src": "bob@example.com", "deny": ["autogroup:internet:443"]}]`), []TestResult{
			{User: "bob@example.com", Errors: []string{`address "autogroup:internet:443": "autogroup:internet" is not allowed in tests`}},
		}},
		{"no accept or deny", policy(sshToDB, `[{"src": "bob@example.com"}]`), []TestResult{
			{User: "bob@example.com", Errors: []string{"accept or deny must be specified"}},
		}},
		{"two failures, one passing test", policy(sshToDB, `[
			{"src": "bob@example.com", "accept": ["tag:server:22", "tag:server:80"]},
			{"src": "bob@example.com", "accept": ["tag:server:22"]},
			{"src": "tag:exit", "accept": ["db-host:22"], "deny": ["db-host:80"]}]`), []TestResult{
			{User: "bob@example.com", Errors: []string{`address "tag:server:80": want: Accept, got: Drop`}},
			{User: "tag:exit", Errors: []string{`address "db-host:22": want: Accept, got: Drop`}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Check([]byte(tt.policy), testTopology())
			if tt.want == nil {
				if got != nil {
					t.Fatalf("rejected: %q %+v", got.Message, got.Data)
				}
				return
			}
			want := &Error{Message: "test(s) failed", Data: tt.want}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
		})
	}
}
