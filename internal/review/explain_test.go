package review

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

// TestCovers: when one grant's sources, destinations and ports give all
// the access of another's.
func TestCovers(t *testing.T) {
	groups := map[string][]string{"group:OPS": {"Alice@Example.com"}}
	type coverCase struct {
		h, g string
		want bool
	}
	for _, c := range []struct {
		name   string
		covers func(h, g string) bool
		cases  []coverCase
	}{
		{"srcCovers", func(h, g string) bool { return srcCovers(h, g, groups) }, []coverCase{
			{"*", "alice@example.com", true},
			{"group:ops", "GROUP:OPS", true},
			{"autogroup:member", "alice@example.com", true},
			{"autogroup:members", "group:ops", true},
			{"autogroup:member", "tag:web", false},
			{"autogroup:member", "*", false},
			{"group:ops", "alice@example.com", true},
			{"group:ops", "bob@example.com", false},
			{"group:eng", "alice@example.com", false},
			{"group:ops", "group:eng", false},
			{"alice@example.com", "group:ops", false},
			{"tag:web", "tag:db", false},
		}},
		{"dstCovers", dstCovers, []coverCase{
			{"*", "tag:web", true},
			{"TAG:Web", "tag:web", true},
			{"tag:web", "tag:db", false},
			{"10.0.0.0/8", "10.1.0.0/16", true},
			{"10.1.0.0/16", "10.0.0.0/8", false},
			{"10.0.0.0/16", "10.0.5.0/16", true},
			{"10.0.0.0/8", "10.1.2.3", true},
			{"10.1.2.3", "10.1.2.3/32", true},
			{"10.1.2.3", "10.1.2.4", false},
			{"10.1.2.3/8", "10.200.0.0/16", true},
			{"10.0.0.0/8", "11.0.0.0/16", false},
			{"fd00::/64", "fd00::1", true},
			{"10.0.0.0/8", "tag:web", false},
			{"tag:web", "10.0.0.0/8", false},
		}},
		{"ipCovers", ipCovers, []coverCase{
			{"*", "tcp:443", true},
			{"TCP:443", "tcp:443", true},
			{"tcp:*", "tcp:443", true},
			{"TCP:*", "tcp:0-65535", true},
			{"tcp:*", "udp:53", false},
			{"443", "tcp:443", true},
			{"tcp:443", "443", false},
			{"tcp:400-500", "tcp:443", true},
			{"tcp:80-90", "tcp:80", true},
			{"tcp:80-90", "tcp:90", true},
			{"tcp:80-90", "tcp:79", false},
			{"tcp:80-90", "tcp:91", false},
			{"tcp:80-90", "tcp:85-95", false},
			{"tcp:80-90", "tcp:75-85", false},
			{"tcp:443", "tcp:400-500", false},
			{"tcp:http", "tcp:80", false},
			{"tcp:80-x", "tcp:80", false},
			{"tcp:80", "tcp:x", false},
			{"tcp:70000", "tcp:70000", true},
			{"tcp:1-70000", "tcp:2", false},
		}},
	} {
		for _, tc := range c.cases {
			if got := c.covers(tc.h, tc.g); got != tc.want {
				t.Errorf("%s(%q, %q) = %t, want %t", c.name, tc.h, tc.g, got, tc.want)
			}
		}
	}
	// Every source, destination and port of g must be covered, and g
	// must name some.
	h := grantFile{Src: []string{"group:ops", "bob@example.com"}, Dst: []string{"tag:web"}, IP: []string{"tcp:443", "tcp:8000-9000"}}
	for _, tc := range []struct {
		g    grantFile
		want bool
	}{
		{grantFile{Src: []string{"alice@example.com", "bob@example.com"}, Dst: []string{"tag:web"}, IP: []string{"tcp:8080", "tcp:443"}}, true},
		{grantFile{Src: []string{"alice@example.com", "carol@example.com"}, Dst: []string{"tag:web"}, IP: []string{"tcp:443"}}, false},
		{grantFile{Src: []string{"bob@example.com"}, Dst: []string{"tag:web", "tag:db"}, IP: []string{"tcp:443"}}, false},
		{grantFile{Src: []string{"bob@example.com"}, Dst: []string{"tag:web"}, IP: []string{"tcp:443", "tcp:22"}}, false},
		{grantFile{Src: []string{"bob@example.com"}, Dst: []string{"tag:web"}}, false},
		{grantFile{Dst: []string{"tag:web"}, IP: []string{"tcp:443"}}, false},
	} {
		if got := covers(h, tc.g, groups); got != tc.want {
			t.Errorf("covers(%+v) = %t, want %t", tc.g, got, tc.want)
		}
	}
}

// TestListed: a finding lists five names, and counts the others.
func TestListed(t *testing.T) {
	var list []string
	for i := 1; i <= 7; i++ {
		list = append(list, fmt.Sprintf("`d%d`", i))
	}
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, ""},
		{1, "`d1`"},
		{5, "`d1`, `d2`, `d3`, `d4`, `d5`"},
		{6, "`d1`, `d2`, `d3`, `d4`, `d5` and 1 more"},
		{7, "`d1`, `d2`, `d3`, `d4`, `d5` and 2 more"},
	} {
		if got := listed(list[:tc.n]); got != tc.want {
			t.Errorf("listed(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// TestInstance: a resource's configuration is its plan and its module
// instance.
func TestInstance(t *testing.T) {
	for _, tc := range []struct {
		plan, address, want string
	}{
		{"us.json", "qtail_grant.web", "us.json "},
		{"us.json", "module.region.qtail_grant.web", "us.json module.region"},
		{"us.json", `module.region["us-east-1"].module.app.qtail_grant.web`, `us.json module.region["us-east-1"].module.app`},
		{"us.json", "module.qtail_things.qtail_grant.web", "us.json module.qtail_things"},
	} {
		if got := instance(tc.plan, tc.address); got != tc.want {
			t.Errorf("instance(%q, %q) = %q, want %q", tc.plan, tc.address, got, tc.want)
		}
	}
}

// findingsOf returns the messages of the findings of a kind.
func findingsOf(r *Report, kind FindingKind) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Kind == kind {
			out = append(out, f.Message)
		}
	}
	return out
}

// agedFindings returns the findings of a kind as "NEW MESSAGE", NEW
// being true when the plans bring the finding.
func agedFindings(r *Report, kind FindingKind) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Kind == kind {
			out = append(out, fmt.Sprintf("%t %s", f.New, f.Message))
		}
	}
	return out
}

// TestBeyondInstance: a changed grant to a tag that other configurations'
// resources, or devices no plan manages, carry too; not when only its own
// configuration's resources do, nor when only unmanaged devices do.
func TestBeyondInstance(t *testing.T) {
	w := newWorld(t, noAllowAll)
	w.srv.AddDevice(tailnetapi.DeviceSpec{Hostname: "web2", Tags: []string{"tag:web"}, IPv4: "100.64.0.12"})
	service := func(name, host, tag string) map[string]any {
		return change("qtail_exposed_service."+name, "qtail_exposed_service", []string{"create"}, nil,
			map[string]any{"hostname": host, "tags": []any{tag}, "ports": nil}, map[string]any{"tailnet_ips": true})
	}
	bobTo := func(tag string) map[string]any {
		return createGrant("bob-web", []any{"bob@example.com"}, []any{tag, "tag:db"}, []any{"tcp:8443"})
	}
	operator := change("qtail_operator.eu", "qtail_operator", []string{"create"}, nil, map[string]any{"proxy_default_tags": []any{"tag:web"}, "default_tags": []any{"tag:db"}}, nil)
	const tail = ". The grant reaches those too, not only what its own configuration puts on the tailnet; if the access is meant for this configuration alone, give its devices a tag of their own and grant that."
	for _, tc := range []struct {
		name  string
		plans []Plan
		want  []string
	}{
		{"unmanaged devices beside its own service", []Plan{plan(t, "us.json", service("web", "web", "tag:web"), bobTo("tag:web"))}, []string{
			"`qtail_grant \"bob-web\"` (`qtail_grant.bob_web`, `us.json`) lets `bob@example.com` reach `tag:web`, and devices of the tailnet that no reviewed plan manages carry it: `web2`" + tail}},
		{"unmanaged devices alone", []Plan{plan(t, "us.json", bobTo("tag:web"))}, nil},
		{"its own service alone", []Plan{plan(t, "us.json", service("api", "api", "tag:api"), bobTo("tag:api"))}, nil},
		{"other configurations", []Plan{plan(t, "us.json", service("api", "api", "tag:api"), bobTo("tag:api")), plan(t, "eu.json", service("api", "api-eu", "tag:api"))}, []string{
			"`qtail_grant \"bob-web\"` (`qtail_grant.bob_web`, `us.json`) lets `bob@example.com` reach `tag:api`, and other configurations or module instances put it on their devices too: `qtail_exposed_service.api` (`eu.json`)" + tail}},
		{"other configurations and unmanaged devices", []Plan{plan(t, "us.json", service("web", "web", "tag:web"), bobTo("tag:web")), plan(t, "eu.json", service("web", "web-eu", "tag:web"), operator)}, []string{
			"`qtail_grant \"bob-web\"` (`qtail_grant.bob_web`, `us.json`) lets `bob@example.com` reach `tag:web`, and other configurations or module instances put it on their devices too: " +
				"`qtail_exposed_service.web` (`eu.json`), the proxies of `qtail_operator.eu` (`eu.json`); and devices of the tailnet that no reviewed plan manages carry it: `web2`" + tail}},
	} {
		rep, err := Run(t.Context(), w.api, tc.plans)
		if err != nil {
			t.Fatal(err)
		}
		if got := findingsOf(rep, FindingBeyondInstance); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestSharedDestination: a destination that the changed grants share with
// other configurations' grants, or with grants written by hand (each
// copy of a fragment's grant beyond the fragment is one), is reported
// once, with who reaches it and who carries it.
func TestSharedDestination(t *testing.T) {
	w := newWorld(t, strings.Replace(noAllowAll, `"grants": [`, `"grants": [
		{"src": ["group:ops"], "dst": ["tag:web"], "ip": ["tcp:443"]},
		// qtail:grant:eng-db
		{"src": ["bob@example.com"], "dst": ["tag:db"], "ip": ["tcp:5432"]},`, 1))
	const tail = ". Who reaches it is the sum of all of them: review a change to one with the others in mind, and give each configuration's devices a tag of their own if they should not share access."
	for _, tc := range []struct {
		name string
		plan Plan
		want []string
	}{
		{"a grant of another configuration", plan(t, "us.json", createGrant("alice-db", []any{"alice@example.com"}, []any{"tag:db"}, []any{"tcp:5432"})), []string{
			"`tag:db` is shared by several configurations: the grants `qtail_grant \"eng-db\"` (another configuration, not reviewed), `qtail_grant \"alice-db\"` (`us.json`) reach it" + tail}},
		{"a grant written by hand, twice", plan(t, "us.json", createGrant("bob-web", []any{"bob@example.com"}, []any{"tag:web"}, []any{"tcp:8443"}),
			change("qtail_proxy_group.web", "qtail_proxy_group", []string{"create"}, nil, map[string]any{"tags": []any{"tag:web"}}, nil)), []string{
			"`tag:web` is shared by several configurations: the grants `qtail_grant \"ops-web\"` (another configuration, not reviewed), `qtail_grant \"bob-web\"` (`us.json`), " +
				`a grant written by hand ({"src":["group:ops"],"dst":["tag:web"],"ip":["tcp:443"]}) reach it, and ` + "`qtail_proxy_group.web` (`us.json`) carry it" + tail}},
		{"its own grants alone", plan(t, "us.json", createGrant("bob-lan", []any{"bob@example.com"}, []any{"10.1.0.0/16"}, []any{"tcp:22"})), nil},
	} {
		rep, err := Run(t.Context(), w.api, []Plan{tc.plan})
		if err != nil {
			t.Fatal(err)
		}
		if got := findingsOf(rep, FindingSharedDestination); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
