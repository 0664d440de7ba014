package review

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

func TestUnifiedDiff(t *testing.T) {
	lines := func(n int, prefix string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(prefix)
			b.WriteString(strings.Repeat("x", i%3))
			b.WriteString(string(rune('a' + i%26)))
			b.WriteString("\n")
		}
		return b.String()
	}
	base := lines(20, "l")
	baseLines := splitLines(base)
	const twelve = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"equal", base, base, ""},
		{"both empty", "", "", ""},
		{"from nothing", "", "a\nb\n", "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", "--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"insert in the middle",
			strings.Join(baseLines[:10], "\n") + "\n" + strings.Join(baseLines[10:], "\n") + "\n",
			strings.Join(baseLines[:10], "\n") + "\nNEW\n" + strings.Join(baseLines[10:], "\n") + "\n",
			"--- a\n+++ b\n@@ -8,6 +8,7 @@\n " + strings.Join(baseLines[7:10], "\n ") + "\n+NEW\n " + strings.Join(baseLines[10:13], "\n ") + "\n"},
		{"two hunks",
			base,
			"FIRST\n" + strings.Join(baseLines[1:19], "\n") + "\nLAST\n",
			"--- a\n+++ b\n@@ -1,4 +1,4 @@\n-" + baseLines[0] + "\n+FIRST\n " + strings.Join(baseLines[1:4], "\n ") + "\n" +
				"@@ -17,4 +17,4 @@\n " + strings.Join(baseLines[16:19], "\n ") + "\n-" + baseLines[19] + "\n+LAST\n"},
		{"removed at the end", "a\nb\nc\n", "a\n", "--- a\n+++ b\n@@ -1,3 +1 @@\n a\n-b\n-c\n"},
		{"changes 6 lines apart, one hunk", twelve, strings.NewReplacer("3\n", "C\n", "10\n", "X\n").Replace(twelve),
			"--- a\n+++ b\n@@ -1,12 +1,12 @@\n 1\n 2\n-3\n+C\n 4\n 5\n 6\n 7\n 8\n 9\n-10\n+X\n 11\n 12\n"},
		{"changes 7 lines apart, two hunks", twelve, strings.NewReplacer("3\n", "C\n", "11\n", "X\n").Replace(twelve),
			"--- a\n+++ b\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+C\n 4\n 5\n 6\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+X\n 12\n"},
		{"to nothing", "a\nb\nc\n", "", "--- a\n+++ b\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n"},
		{"a line repeated", "x\n", "x\nx\n", "--- a\n+++ b\n@@ -1 +1,2 @@\n x\n+x\n"},
		{"repeats removed", "x\nx\nx\n", "x\n", "--- a\n+++ b\n@@ -1,3 +1 @@\n x\n-x\n-x\n"},
	} {
		if got := unifiedDiff(tc.from, tc.to, "a", "b", 3); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	// The script turns one text into the other.
	from, to := splitLines(lines(40, "p")), splitLines(lines(35, "q")+lines(10, "p"))
	var gotFrom, gotTo []string
	for _, op := range lineDiff(from, to) {
		if op.kind != '+' {
			gotFrom = append(gotFrom, op.line)
		}
		if op.kind != '-' {
			gotTo = append(gotTo, op.line)
		}
	}
	if !slices.Equal(gotFrom, from) || !slices.Equal(gotTo, to) {
		t.Error("the edit script does not rebuild both texts")
	}
}

// world is a fake tailnet with a web proxy tagged tag:web and two users.
type world struct {
	srv *tailnetapi.Server
	api *tailnet.Client
	// url is the fake's address, and faults its injected failures.
	url    string
	faults *faults.Set
}

const worldPolicy = `{
	"groups": {"group:ops": ["alice@example.com"]},
	"tagOwners": {"tag:web": [], "tag:db": []},
	"grants": [
		{"src": ["*"], "dst": ["*"], "ip": ["*"]},
		// qtail:grant:ops-web
		{"src": ["group:ops"], "dst": ["tag:web"], "ip": ["tcp:443"]},
	],
}
`

func newWorld(t testing.TB, policy string) *world {
	t.Helper()
	fs := &faults.Set{}
	srv := tailnetapi.New(tailnetapi.Options{
		APIKey: "tskey-api-review",
		Faults: fs,
		Topology: aclcheck.Topology{
			Users: []aclcheck.User{{ID: 1, Name: "alice", Email: "alice@example.com"}, {ID: 2, Name: "bob", Email: "bob@example.com"}},
			Nodes: map[string]aclcheck.Node{
				"alice-laptop": {Hostname: "alice-laptop", IPv4: "100.64.0.1", User: "alice"},
				"bob-laptop":   {Hostname: "bob-laptop", IPv4: "100.64.0.2", User: "bob"},
			},
		},
		InitialPolicy: []byte(policy),
	})
	srv.AddDevice(tailnetapi.DeviceSpec{Hostname: "web", Tags: []string{"tag:web"}, IPv4: "100.64.0.10"})
	srv.AddDevice(tailnetapi.DeviceSpec{Hostname: "db", Tags: []string{"tag:db"}, IPv4: "100.64.0.11"})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	api, err := tailnet.New(tailnet.Config{BaseURL: ts.URL, APIKey: "tskey-api-review"})
	if err != nil {
		t.Fatal(err)
	}
	return &world{srv: srv, api: api, url: ts.URL, faults: fs}
}

// review reviews one plan, root.json, of changes against the tailnet.
func (w *world) review(t *testing.T, changes ...map[string]any) *Report {
	t.Helper()
	rep, err := Run(t.Context(), w.api, []Plan{plan(t, "root.json", changes...)})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// change is a resource change of a plan, in the JSON of terraform show.
func change(address, typ string, actions []string, before, after, unknown map[string]any) map[string]any {
	name := address[strings.IndexByte(address, '.')+1:]
	return map[string]any{
		"address": address, "mode": "managed", "type": typ, "name": name,
		"provider_name": "registry.terraform.io/qtail/qtail",
		"change":        map[string]any{"actions": actions, "before": before, "after": after, "after_unknown": unknown},
	}
}

func plan(t *testing.T, label string, changes ...map[string]any) Plan {
	t.Helper()
	b, err := json.Marshal(map[string]any{"format_version": "1.2", "terraform_version": "1.11.4", "resource_changes": changes})
	if err != nil {
		t.Fatal(err)
	}
	var p tfjson.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return Plan{Label: label, Plan: &p}
}

func grantAttrs(name string, src, dst, ip []any) map[string]any {
	return map[string]any{"id": name, "name": name, "src": src, "dst": dst, "ip": ip, "app": nil, "via": nil, "src_posture": nil, "marker": "qtail:grant:" + name}
}

func findingKinds(r *Report) map[FindingKind]bool {
	out := map[FindingKind]bool{}
	for _, f := range r.Findings {
		out[f.Kind] = f.New
	}
	return out
}

// TestFindings: the allow-all rule kept, a grant from autogroup:member to a
// tag, a service tagged with a tag nobody owns, and (once the allow-all
// rule goes) a service no rule reaches.
func TestFindings(t *testing.T) {
	w := newWorld(t, worldPolicy)
	p := plan(t, "root.json",
		change("qtail_grant.members_db", "qtail_grant", []string{"create"}, nil,
			grantAttrs("members-db", []any{"autogroup:member"}, []any{"tag:db"}, []any{"tcp:5432"}), map[string]any{"id": true, "marker": true}),
		change("qtail_exposed_service.api", "qtail_exposed_service", []string{"create"}, nil,
			map[string]any{"hostname": "api", "tags": []any{"tag:api"}, "ports": nil}, map[string]any{"ports": true, "tailnet_ips": true}),
	)
	rep, err := Run(t.Context(), w.api, []Plan{p})
	if err != nil {
		t.Fatal(err)
	}
	got := findingKinds(rep)
	want := map[FindingKind]bool{FindingAllowAll: false, FindingBroadGrant: true, FindingTagWithoutOwner: true}
	if len(got) != len(want) || !func() bool {
		for k, v := range want {
			if nv, ok := got[k]; !ok || nv != v {
				return false
			}
		}
		return true
	}() {
		t.Errorf("findings %+v, want kinds (new) %v", rep.Findings, want)
	}
	md := rep.Markdown()
	for _, s := range []string{"`qtail_grant \"members-db\"` lets `autogroup:member` reach `tag:db`", "`tag:api` is used by qtail_exposed_service.api"} {
		if !strings.Contains(md, s) {
			t.Errorf("the report lacks %q:\n%s", s, md)
		}
	}
	// The db device is previewed because the new grant names its tag:
	// the members gain it.
	if pa := portOf(rep, "db", 5432); pa == nil || !slices.Contains(pa.Gained, "autogroup:member") {
		t.Errorf("db:5432 %+v", pa)
	}

	// Without the allow-all rule, the web proxy loses its only grant in
	// this plan: nobody reaches it any more.
	if err := w.srv.SetPolicyDirect([]byte(strings.Replace(worldPolicy, `{"src": ["*"], "dst": ["*"], "ip": ["*"]},`, "", 1))); err != nil {
		t.Fatal(err)
	}
	p = plan(t, "root.json",
		change("qtail_grant.ops_web", "qtail_grant", []string{"delete"},
			grantAttrs("ops-web", []any{"group:ops"}, []any{"tag:web"}, []any{"tcp:443"}), nil, nil),
		change("qtail_exposed_service.web", "qtail_exposed_service", []string{"no-op"},
			map[string]any{"hostname": "web", "tags": []any{"tag:web"}, "tailnet_ips": []any{"100.64.0.10"}, "ports": []any{map[string]any{"internal_port": 443, "protocol": "HTTP"}}},
			map[string]any{"hostname": "web", "tags": []any{"tag:web"}, "tailnet_ips": []any{"100.64.0.10"}, "ports": []any{map[string]any{"internal_port": 443, "protocol": "HTTP"}}}, nil),
	)
	rep, err = Run(t.Context(), w.api, []Plan{p})
	if err != nil {
		t.Fatal(err)
	}
	if got := findingKinds(rep); len(got) != 1 || !got[FindingServiceWithoutGrant] {
		t.Errorf("findings %+v", rep.Findings)
	}
	if pa := portOf(rep, "web", 443); pa == nil || !slices.Equal(pa.Lost, []string{"group:ops"}) {
		t.Errorf("web:443 %+v", pa)
	}
	if u := rep.Users; len(u) != 1 || u[0].User != "alice@example.com" || !slices.Equal(u[0].Lost, []string{"tag:web:tcp:443"}) {
		t.Errorf("users %+v", rep.Users)
	}
	if rep.ExitCode() != ExitAccessChange {
		t.Errorf("exit code %d", rep.ExitCode())
	}
}

// TestPlannedPolicyRefused: when Tailscale refuses the planned policy
// file, who reaches a target, and what a user reaches, after the plans is
// unknown: the report says so, and counts no one as gaining or losing
// access.
func TestPlannedPolicyRefused(t *testing.T) {
	w := newWorld(t, strings.Replace(worldPolicy, `{"src": ["*"], "dst": ["*"], "ip": ["*"]},`, "", 1))
	web := map[string]any{"hostname": "web", "tags": []any{"tag:web"}, "tailnet_ips": []any{"100.64.0.10"}, "ports": []any{map[string]any{"internal_port": 443.0, "protocol": "HTTP"}}}
	rep, err := Run(t.Context(), w.api, []Plan{plan(t, "root.json",
		change("qtail_grant.ghosts_web", "qtail_grant", []string{"create"}, nil, grantAttrs("ghosts-web", []any{"group:ghosts"}, []any{"tag:web"}, []any{"tcp:443"}), nil),
		change("qtail_grant.alice_db", "qtail_grant", []string{"create"}, nil, grantAttrs("alice-db", []any{"alice@example.com"}, []any{"tag:db"}, []any{"tcp:5432"}), nil),
		change("qtail_exposed_service.web", "qtail_exposed_service", []string{"no-op"}, web, web, nil),
	)})
	if err != nil {
		t.Fatal(err)
	}
	const unknown = "Tailscale refuses the planned policy file, so who reaches it after the plans is unknown"
	for _, ta := range rep.Access {
		if ta.Name == "web" && (ta.Note != unknown || !reflect.DeepEqual(ta.Ports, []PortAccess{{Port: 443, Declared: true, Before: []string{"group:ops"}}})) {
			t.Errorf("web: %+v", ta)
		}
	}
	if !reflect.DeepEqual(rep.Users, []UserAccess{{User: "alice@example.com", Before: []string{"tag:web:tcp:443"}}}) {
		t.Errorf("users %+v", rep.Users)
	}
	if rep.AccessChanged || rep.Counts != (Counts{}) || len(rep.Principals) != 0 || rep.Graph != "" {
		t.Errorf("access changed %t, counts %+v, principals %+v, graph:\n%s", rep.AccessChanged, rep.Counts, rep.Principals, rep.Graph)
	}
	md := rep.Markdown()
	for _, want := range []string{"**No access change** · policy **refused** by Tailscale",
		"| `web` (service, `tag:web`) | | | | " + unknown + " |",
		"| `alice@example.com` | unknown: Tailscale refuses the planned policy file, so what they reach after the plans is unknown | | |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report does not say %q:\n%s", want, md)
		}
	}
}

func portOf(r *Report, target string, port uint16) *PortAccess {
	for _, ta := range r.Access {
		if ta.Name != target {
			continue
		}
		for i := range ta.Ports {
			if ta.Ports[i].Port == port {
				return &ta.Ports[i]
			}
		}
	}
	return nil
}

// TestRefusedAndUnknown: a planned policy that Tailscale refuses is an
// error exit with its message; an entry known only after apply stays out
// of the planned policy, with a note; two plans writing one fragment
// differently conflict.
func TestRefusedAndUnknown(t *testing.T) {
	w := newWorld(t, worldPolicy)
	p1 := plan(t, "a.json",
		change("qtail_grant.x", "qtail_grant", []string{"create"}, nil,
			grantAttrs("x", []any{"group:ghosts"}, []any{"tag:web"}, []any{"tcp:80"}), nil),
		change("qtail_grant.later", "qtail_grant", []string{"create"}, nil,
			map[string]any{"name": "later", "src": []any{"group:ops"}, "dst": []any{"tag:web"}}, map[string]any{"ip": true}),
	)
	p2 := plan(t, "b.json",
		change("qtail_grant.x", "qtail_grant", []string{"create"}, nil,
			grantAttrs("x", []any{"group:ops"}, []any{"tag:web"}, []any{"tcp:81"}), nil),
	)
	rep, err := Run(t.Context(), w.api, []Plan{p1, p2})
	if err != nil {
		t.Fatal(err)
	}
	if got := findingKinds(rep); !got[FindingConflict] {
		t.Errorf("no conflict among %+v", rep.Findings)
	}
	// The last write wins: group:ops, which exists, so the policy passes.
	if !rep.Validation.Passed {
		t.Errorf("validation %+v", rep.Validation)
	}
	if len(rep.Fragments) != 3 || !rep.Fragments[1].Unknown || strings.Contains(rep.PolicyDiff, "qtail:grant:later") {
		t.Errorf("fragments %+v\n%s", rep.Fragments, rep.PolicyDiff)
	}
	if len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "known only after apply") {
		t.Errorf("notes %v", rep.Notes)
	}

	rep, err = Run(t.Context(), w.api, []Plan{p1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Validation.Passed || !strings.Contains(rep.Validation.Message, `group not found: "group:ghosts"`) || rep.ExitCode() != ExitError {
		t.Errorf("validation %+v, exit code %d", rep.Validation, rep.ExitCode())
	}
	if md := rep.Markdown(); !strings.Contains(md, "**Fail**: Tailscale refuses the planned policy file: src=group not found") &&
		!strings.Contains(md, "group not found") {
		t.Errorf("report:\n%s", md)
	}
}

// TestRoutes: a route a connector starts advertising, and the grant to it,
// are previewed at the route's first address on the grant's port.
func TestRoutes(t *testing.T) {
	w := newWorld(t, strings.Replace(worldPolicy, `{"src": ["*"], "dst": ["*"], "ip": ["*"]},`, "", 1))
	conn := func(routes ...any) map[string]any {
		return map[string]any{"name": "homelab", "subnet_routes": routes, "tags": []any{"tag:web"}}
	}
	p := plan(t, "root.json",
		change("qtail_connector.homelab", "qtail_connector", []string{"update"}, conn("10.10.0.0/16"), conn("10.10.0.0/16", "10.20.0.0/16"), nil),
		change("qtail_grant.ops_db", "qtail_grant", []string{"create"}, nil,
			grantAttrs("ops-db", []any{"group:ops"}, []any{"10.20.0.0/16"}, []any{"tcp:5432"}), nil),
	)
	rep, err := Run(t.Context(), w.api, []Plan{p})
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	for _, ta := range rep.Access {
		if ta.Kind == "route" {
			routes = append(routes, ta.Name+" "+ta.Status+" "+ta.IP)
		}
	}
	if want := []string{"10.10.0.0/16 unchanged 10.10.0.1", "10.20.0.0/16 added 10.20.0.1"}; !slices.Equal(routes, want) {
		t.Errorf("routes %q, want %q", routes, want)
	}
	if pa := portOf(rep, "10.20.0.0/16", 5432); pa == nil || !slices.Equal(pa.Gained, []string{"group:ops"}) || len(pa.Before) != 0 {
		t.Errorf("10.20.0.0/16:5432 %+v", pa)
	}
	if pa := portOf(rep, "10.10.0.0/16", 5432); pa != nil {
		t.Errorf("10.10.0.0/16:5432 %+v: nobody reaches it, before or after", pa)
	}
	if !strings.Contains(rep.Graph, `-->|"gains 5432"|`) {
		t.Errorf("graph:\n%s", rep.Graph)
	}
}

// TestBrokenTest: a grant of the plans breaks a qtail test's deny; the
// report names the test and the grant by their resource addresses.
func TestBrokenTest(t *testing.T) {
	w := newWorld(t, strings.Replace(worldPolicy, `"grants": [`, `"tests": [
		// qtail:policy_test:bob-no-web
		{"src": "bob@example.com", "deny": ["tag:web:443"]},
	],
	"grants": [`, 1))
	testAttrs := map[string]any{"id": "bob-no-web", "name": "bob-no-web", "src": "bob@example.com", "accept": nil, "deny": []any{"tag:web:443"}, "proto": nil, "marker": "qtail:policy_test:bob-no-web"}
	p := plan(t, "root.json",
		change("qtail_policy_test.bob", "qtail_policy_test", []string{"no-op"}, testAttrs, testAttrs, nil),
		change("qtail_grant.bob_web", "qtail_grant", []string{"create"}, nil,
			grantAttrs("bob-web", []any{"bob@example.com"}, []any{"tag:web"}, []any{"tcp:443"}), map[string]any{"id": true, "marker": true}),
	)
	rep, err := Run(t.Context(), w.api, []Plan{p})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Validation.Passed || len(rep.BrokenTests) != 1 {
		t.Fatalf("validation %+v, broken tests %+v", rep.Validation, rep.BrokenTests)
	}
	bt := rep.BrokenTests[0]
	if bt.Test != "qtail_policy_test.bob" || !slices.Equal(bt.Culprits, []string{"qtail_grant.bob_web"}) {
		t.Errorf("broken test %+v, want qtail_policy_test.bob broken by qtail_grant.bob_web", bt)
	}
	if !findingKinds(rep)[FindingBrokenTest] {
		t.Errorf("no broken test among the findings %+v", rep.Findings)
	}
	md := rep.Markdown()
	for _, want := range []string{"The change breaks qtail_policy_test.bob: its deny says that bob@example.com must not reach tag:web:443", "The planned grants that let it: qtail_grant.bob_web."} {
		if !strings.Contains(md, want) {
			t.Errorf("the report does not say %q:\n%s", want, md)
		}
	}
}

// TestExplainingFindings: a grant shadowed by another, a grant to a tag
// that another configuration's service carries too, a destination shared
// by several configurations, a user the tailnet does not know, and the
// headline's counts by principal.
func TestExplainingFindings(t *testing.T) {
	w := newWorld(t, strings.Replace(worldPolicy, `{"src": ["*"], "dst": ["*"], "ip": ["*"]},`, "", 1))
	service := func(host string) map[string]any {
		return map[string]any{"hostname": host, "tags": []any{"tag:web"}, "ports": nil}
	}
	us := plan(t, "us.json",
		change("module.region.qtail_exposed_service.this", "qtail_exposed_service", []string{"no-op"}, service("web"), service("web"), nil),
		change("module.region.qtail_grant.alice_web", "qtail_grant", []string{"create"}, nil,
			grantAttrs("alice-web", []any{"alice@example.com"}, []any{"tag:web"}, []any{"tcp:443"}), nil),
		change("module.region.qtail_grant.bob_web", "qtail_grant", []string{"create"}, nil,
			grantAttrs("bob-web", []any{"bob@example.com", "ghost@example.com"}, []any{"tag:web"}, []any{"tcp:8443"}), nil),
	)
	eu := plan(t, "eu.json",
		change("module.region.qtail_exposed_service.this", "qtail_exposed_service", []string{"create"}, nil, service("web-eu"), map[string]any{"tailnet_ips": true}),
	)
	rep, err := Run(t.Context(), w.api, []Plan{us, eu})
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[FindingKind][]string{}
	for _, f := range rep.Findings {
		byKind[f.Kind] = append(byKind[f.Kind], f.Message)
	}
	expectFinding := func(kind FindingKind, parts ...string) {
		t.Helper()
		for _, m := range byKind[kind] {
			if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(m, p) }) {
				return
			}
		}
		t.Errorf("no %s finding says %q: %q", kind, parts, byKind[kind])
	}
	expectFinding(FindingShadowed, "`qtail_grant \"alice-web\"` (`module.region.qtail_grant.alice_web`) changes no one's access", "`qtail_grant \"ops-web\"` already lets `alice@example.com` reach `tag:web` on `tcp:443`")
	if len(byKind[FindingShadowed]) != 1 {
		t.Errorf("shadowed: %q, want alice-web alone", byKind[FindingShadowed])
	}

	// Two regions add the same grant: one finding names the pair.
	same := func(label, name string) Plan {
		return plan(t, label, change("module.region.qtail_grant.db", "qtail_grant", []string{"create"}, nil,
			grantAttrs(name, []any{"bob@example.com"}, []any{"tag:db"}, []any{"tcp:5432"}), nil))
	}
	pair, err := Run(t.Context(), w.api, []Plan{same("us.json", "us-db"), same("eu.json", "eu-db")})
	if err != nil {
		t.Fatal(err)
	}
	var pairs []string
	for _, f := range pair.Findings {
		if f.Kind == FindingShadowed {
			pairs = append(pairs, f.Message)
		}
	}
	if len(pairs) != 1 || !strings.Contains(pairs[0], "`qtail_grant \"us-db\"` (`module.region.qtail_grant.db`) and `qtail_grant \"eu-db\"`, which the plans also write, give the same access") {
		t.Errorf("shadowed: %q, want the pair once", pairs)
	}
	expectFinding(FindingBeyondInstance, "`qtail_grant \"bob-web\"`", "other configurations or module instances put it on their devices too: `module.region.qtail_exposed_service.this` (`eu.json`)")
	expectFinding(FindingSharedDestination, "`tag:web` is shared by several configurations", "`qtail_grant \"ops-web\"` (another configuration, not reviewed)", "`qtail_grant \"bob-web\"` (`us.json`)", "(`eu.json`) carry it")
	if len(byKind[FindingSharedDestination]) != 1 {
		t.Errorf("shared destinations: %q, want tag:web once", byKind[FindingSharedDestination])
	}

	var ghost *UserAccess
	for i, u := range rep.Users {
		if u.User == "ghost@example.com" {
			ghost = &rep.Users[i]
		}
	}
	if ghost == nil || !ghost.Unknown || !strings.Contains(ghost.Reason, "has not joined the tailnet") {
		t.Errorf("ghost: %+v, want a user unknown to the tailnet, with the reason", ghost)
	}
	// web (a source gained on each port: alice, shadowed, on 443; bob
	// and ghost on 8443) and web-eu, without an address yet, through
	// bob's preview on its tag; bob counts once, as a source and as a
	// user.
	if rep.Counts != (Counts{Targets: 2, Gaining: 3, Losing: 0}) {
		t.Errorf("counts %+v, principals %+v", rep.Counts, rep.Principals)
	}
	md := rep.Markdown()
	for _, want := range []string{"**Access changes**: 2 services touched, 3 principals gaining, 0 losing",
		"#### Who gains or loses what", "| `bob@example.com` | `tag:web:tcp:8443`, `web` port 8443 | - |",
		"| `ghost@example.com` | not known to the tailnet yet: Tailscale does not preview a user who has not joined the tailnet"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report does not say %q:\n%s", want, md)
		}
	}
}

// TestFunnelFinding: nodeAttrs that give funnel to the proxies' tag are
// reported, as already the case (not new).
func TestFunnelFinding(t *testing.T) {
	policy := strings.Replace(worldPolicy, `"tagOwners": {"tag:web": [], "tag:db": []},`,
		`"tagOwners": {"tag:web": [], "tag:db": [], "tag:k8s-operator": [], "tag:k8s": ["tag:k8s-operator"]},
	"nodeAttrs": [{"target": ["tag:k8s"], "attr": ["funnel"]}],`, 1)
	w := newWorld(t, policy)
	p := plan(t, "root.json",
		change("qtail_grant.ops_k8s", "qtail_grant", []string{"create"}, nil,
			grantAttrs("ops-k8s", []any{"group:ops"}, []any{"tag:k8s"}, []any{"tcp:443"}), map[string]any{"id": true, "marker": true}))
	rep, err := Run(t.Context(), w.api, []Plan{p})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Kind == FindingFunnel {
			if f.New || !strings.Contains(f.Message, "gives the funnel node attribute to tag:k8s") {
				t.Errorf("funnel finding %+v", f)
			}
			return
		}
	}
	t.Errorf("no funnel finding in %+v", rep.Findings)
}

// TestValidationAnswers: a planned policy file that Tailscale finds
// malformed (400) is refused, with Tailscale's message, and the review
// goes on; any other failure of the validation fails the review.
func TestValidationAnswers(t *testing.T) {
	w := newWorld(t, worldPolicy)
	p := plan(t, "root.json", change("qtail_grant.bob_web", "qtail_grant", []string{"create"}, nil,
		grantAttrs("bob-web", []any{"bob@example.com"}, []any{"tag:web"}, []any{"tcp:443"}), nil))
	const validate = "POST /api/v2/tailnet/{tailnet}/acl/validate"
	w.faults.Add(faults.Rule{Route: validate, Status: 400, Body: []byte(`{"message": "line 3: unexpected token", "data": [{"user": "bob@example.com", "errors": ["nope"]}]}`)})
	rep, err := Run(t.Context(), w.api, []Plan{p})
	if err != nil {
		t.Fatal(err)
	}
	want := Validation{Message: "line 3: unexpected token", Failures: []tailnet.ErrorData{{User: "bob@example.com", Errors: []string{"nope"}}}, Tests: 0}
	if !reflect.DeepEqual(rep.Validation, want) || rep.ExitCode() != ExitError || len(rep.Access) == 0 {
		t.Errorf("validation %+v, exit code %d, access %+v; want %+v", rep.Validation, rep.ExitCode(), rep.Access, want)
	}
	if md := rep.Markdown(); !strings.Contains(md, "**Fail**: Tailscale refuses the planned policy file: line 3: unexpected token\n- `bob@example.com`: nope\n") {
		t.Errorf("the report:\n%s", md)
	}

	w.faults.Add(faults.Rule{Route: validate, Status: 403})
	if _, err := Run(t.Context(), w.api, []Plan{p}); err == nil || !strings.Contains(err.Error(), "asking Tailscale to validate the planned policy file: ") {
		t.Errorf("validation forbidden: %v", err)
	}
}

// TestTestChanges: the policy tests the plans add, change and remove are
// listed, and Tailscale runs those of the planned policy file.
func TestTestChanges(t *testing.T) {
	w := newWorld(t, strings.Replace(worldPolicy, `"grants": [`, `"tests": [
		// qtail:policy_test:alice-web
		{"src": "alice@example.com", "accept": ["tag:web:443"]},
		// qtail:policy_test:bob-db
		{"src": "bob@example.com", "accept": ["tag:db:5432"]},
		{"src": "bob@example.com", "accept": ["tag:web:443"]},
	],
	"grants": [`, 1))
	test := func(name, src string, accept ...any) map[string]any {
		return map[string]any{"id": name, "name": name, "src": src, "accept": accept, "deny": nil, "proto": nil, "marker": "qtail:policy_test:" + name}
	}
	rep := w.review(t,
		change("qtail_policy_test.alice_web", "qtail_policy_test", []string{"update"}, test("alice-web", "alice@example.com", "tag:web:443"), test("alice-web", "alice@example.com", "tag:web:443", "tag:db:5432"), nil),
		change("qtail_policy_test.bob_db", "qtail_policy_test", []string{"delete"}, test("bob-db", "bob@example.com", "tag:db:5432"), nil, nil),
		change("qtail_policy_test.carol_web", "qtail_policy_test", []string{"create"}, nil, test("carol-web", "bob@example.com", "tag:web:80"), nil),
		change("qtail_policy_test.dave_web", "qtail_policy_test", []string{"create"}, nil, test("dave-web", "alice@example.com", "tag:web:22"), nil),
	)
	if want := (TestChanges{Added: []string{"carol-web", "dave-web"}, Changed: []string{"alice-web"}, Removed: []string{"bob-db"}}); !reflect.DeepEqual(rep.Tests, want) {
		t.Errorf("tests %+v, want %+v", rep.Tests, want)
	}
	if !rep.Validation.Passed || rep.Validation.Tests != 4 {
		t.Errorf("validation %+v, want 4 tests passed", rep.Validation)
	}
	md := rep.Markdown()
	for _, want := range []string{"policy tests **pass** (4)", "**Pass**: Tailscale accepts the planned policy file, and runs its 4 tests: they pass.",
		"Tests added by the plans: `carol-web`, `dave-web`.", "Tests changed by the plans: `alice-web`.", "Tests removed by the plans: `bob-db`."} {
		if !strings.Contains(md, want) {
			t.Errorf("the report does not say %q:\n%s", want, md)
		}
	}
}

func TestCountTests(t *testing.T) {
	for _, tc := range []struct {
		policy string
		want   int
	}{
		{`{"tests": [{}, {}], // two
		}`, 2},
		{`{"grants": []}`, 0},
		{`{"tests": [`, 0},
		{`{"tests": {"src": "alice@example.com"}}`, 0},
	} {
		if got := countTests([]byte(tc.policy)); got != tc.want {
			t.Errorf("countTests(%s) = %d, want %d", tc.policy, got, tc.want)
		}
	}
}

// TestFindingsOrder: errors come first, then warnings, each in the order
// the review finds them; a failed plan's errors join the errors.
func TestFindingsOrder(t *testing.T) {
	w := newWorld(t, worldPolicy)
	rep := w.review(t,
		change("qtail_grant.members_db", "qtail_grant", []string{"create"}, nil,
			grantAttrs("members-db", []any{"autogroup:member"}, []any{"tag:db"}, []any{"tcp:5432"}), nil),
		change("qtail_grant.all_api", "qtail_grant", []string{"create"}, nil,
			grantAttrs("all-api", []any{"*"}, []any{"tag:api", "tag:cache"}, []any{"tcp:443"}), nil),
	)
	kinds := func() []string {
		var out []string
		for _, f := range rep.Findings {
			what, _, _ := strings.Cut(f.Message, " ")
			out = append(out, string(f.Severity)+" "+string(f.Kind)+" "+what)
		}
		return out
	}
	want := []string{
		"error tag_without_owner `tag:api`", "error tag_without_owner `tag:cache`",
		"warning allow_all The", "warning broad_grant `qtail_grant", "warning broad_grant `qtail_grant",
	}
	if got := kinds(); !slices.Equal(got, want) || !strings.Contains(rep.Findings[3].Message, "members-db") || !strings.Contains(rep.Findings[4].Message, "all-api") {
		t.Errorf("findings %q, want %q", got, want)
	}
	_, fp, err := parseInput("a.failed.json", []byte(`{"@level":"error","type":"diagnostic","diagnostic":{"severity":"error","summary":"First"}}
{"@level":"error","type":"diagnostic","diagnostic":{"severity":"error","summary":"Second"}}`))
	if err != nil || fp == nil {
		t.Fatalf("the log of a failed plan: %+v, %v", fp, err)
	}
	rep.AddFailedPlans([]FailedPlan{*fp})
	want = slices.Insert(want, 2, "error plan_failed The", "error plan_failed The")
	if got := kinds(); !slices.Equal(got, want) || !strings.Contains(rep.Findings[2].Message, "First") || !strings.Contains(rep.Findings[3].Message, "Second") {
		t.Errorf("findings %q, want %q", got, want)
	}
}

// TestBrokenTestNames: a broken test that no plan holds is named by its
// fragment and marker; with several plans, the culprits' addresses say
// which plan holds them.
func TestBrokenTestNames(t *testing.T) {
	w := newWorld(t, strings.Replace(worldPolicy, `"grants": [`, `"tests": [
		// qtail:policy_test:bob-no-web
		{"src": "bob@example.com", "deny": ["tag:web:443"]},
	],
	"grants": [`, 1))
	bobWeb := plan(t, "us.json", change("qtail_grant.bob_web", "qtail_grant", []string{"create"}, nil,
		grantAttrs("bob-web", []any{"bob@example.com"}, []any{"tag:web"}, []any{"tcp:443"}), nil))
	other := plan(t, "eu.json", change("qtail_grant.ops_db", "qtail_grant", []string{"no-op"},
		grantAttrs("ops-db", []any{"group:ops"}, []any{"tag:db"}, []any{"tcp:5432"}), grantAttrs("ops-db", []any{"group:ops"}, []any{"tag:db"}, []any{"tcp:5432"}), nil))
	for _, tc := range []struct {
		plans   []Plan
		culprit string
	}{
		{[]Plan{bobWeb}, "qtail_grant.bob_web"},
		{[]Plan{bobWeb, other}, "qtail_grant.bob_web (us.json)"},
	} {
		rep, err := Run(t.Context(), w.api, tc.plans)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.BrokenTests) != 1 {
			t.Fatalf("broken tests %+v, validation %+v", rep.BrokenTests, rep.Validation)
		}
		bt := rep.BrokenTests[0]
		want := "The change breaks qtail_policy_test \"bob-no-web\" (marked // qtail:policy_test:bob-no-web): its deny says that bob@example.com must not reach tag:web:443, and with the change it does. " +
			"The planned grants that let it: " + tc.culprit + "."
		if bt.Test != `qtail_policy_test "bob-no-web"` || !slices.Equal(bt.Culprits, []string{tc.culprit}) || bt.Message != want {
			t.Errorf("%d plans: broken test %+v, want the message %q", len(tc.plans), bt, want)
		}
	}
}

// TestFindingsAlreadyTheCase: a broad grant the current policy file
// already has is reported as already the case, one the plans add as new.
func TestFindingsAlreadyTheCase(t *testing.T) {
	w := newWorld(t, strings.Replace(worldPolicy, `"grants": [`, `"grants": [
		{"src": ["autogroup:member"], "dst": ["tag:db"], "ip": ["tcp:5432"]},`, 1))
	rep := w.review(t, change("qtail_grant.all_web", "qtail_grant", []string{"create"}, nil, grantAttrs("all-web", []any{"*"}, []any{"tag:web"}, []any{"tcp:80"}), nil))
	got := agedFindings(rep, FindingBroadGrant)
	want := []string{
		"false a grant written by hand lets `autogroup:member` reach `tag:db`: every member of the tailnet (or every device) gets in. Name the group that needs the access instead.",
		"true `qtail_grant \"all-web\"` lets `*` reach `tag:web`: every member of the tailnet (or every device) gets in. Name the group that needs the access instead.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("broad grants:\n got %q\nwant %q", got, want)
	}
}
