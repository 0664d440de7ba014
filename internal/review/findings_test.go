package review

import (
	"slices"
	"strings"
	"testing"
)

func TestBroad(t *testing.T) {
	for _, tc := range []struct {
		src, dst []string
		want     bool
	}{
		{[]string{"*"}, []string{"tag:web"}, true},
		{[]string{"group:ops", "autogroup:member"}, []string{"tag:web"}, true},
		{[]string{"AutoGroup:Members"}, []string{"100.64.0.0/10", "Tag:Web"}, true},
		{[]string{"group:ops"}, []string{"tag:web"}, false},
		{[]string{"autogroup:admin"}, []string{"tag:web"}, false},
		{[]string{"*"}, []string{"*"}, false},
		{[]string{"*"}, []string{"100.64.0.0/10"}, false},
	} {
		if got := broad(grantFile{Src: tc.src, Dst: tc.dst}); got != tc.want {
			t.Errorf("broad(%q to %q) = %t, want %t", tc.src, tc.dst, got, tc.want)
		}
	}
}

// TestServiceWithoutGrant: an exposed service that no rule reaches is
// reported, as new when the plans take its last grant away or add it,
// and as already the case otherwise; not when it is removed.
func TestServiceWithoutGrant(t *testing.T) {
	w := newWorld(t, strings.Replace(noAllowAll, `// qtail:grant:ops-web
		{"src": ["group:ops"], "dst": ["tag:web"], "ip": ["tcp:443"]},`, "", 1))
	service := func(actions []string, host string, before, after bool) map[string]any {
		v := map[string]any{"hostname": host, "tags": []any{"tag:web"}, "tailnet_ips": []any{"100.64.0.10"}, "ports": []any{map[string]any{"internal_port": 443.0}}}
		var b, a map[string]any
		if before {
			b = v
		}
		if after {
			a = v
		}
		return change("qtail_exposed_service.web", "qtail_exposed_service", actions, b, a, nil)
	}
	const message = "No rule lets anyone reach `web` (qtail_exposed_service.web) on its ports: it is on the tailnet but unreachable. Add a qtail_grant to its tags, or remove the exposure."
	for _, tc := range []struct {
		name   string
		change map[string]any
		want   []string
	}{
		{"kept", service([]string{"no-op"}, "web", true, true), []string{"false " + message}},
		{"added", service([]string{"create"}, "web", false, true), []string{"true " + message}},
		{"removed", service([]string{"delete"}, "web", true, false), nil},
	} {
		rep := w.review(t, tc.change)
		if got := agedFindings(rep, FindingServiceWithoutGrant); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}

	// The plans take the last grant away.
	w = newWorld(t, noAllowAll)
	rep := w.review(t, service([]string{"no-op"}, "web", true, true),
		change("qtail_grant.ops_web", "qtail_grant", []string{"delete"}, grantAttrs("ops-web", []any{"group:ops"}, []any{"tag:web"}, []any{"tcp:443"}), nil, nil))
	if got := findingKinds(rep); len(got) != 1 || !got[FindingServiceWithoutGrant] {
		t.Errorf("findings %+v", rep.Findings)
	}
}

// TestTagsOfTests: a tag that a policy test names, as its source or in
// a destination, needs an owner like any other.
func TestTagsOfTests(t *testing.T) {
	w := newWorld(t, worldPolicy)
	test := map[string]any{"id": "ci", "name": "ci", "src": "tag:ci", "accept": []any{"tag:web:443"}, "deny": []any{"tag:vault:8200", "100.64.0.1:22"}, "proto": nil, "marker": "qtail:policy_test:ci"}
	rep := w.review(t, change("qtail_policy_test.ci", "qtail_policy_test", []string{"create"}, nil, test, nil))
	got := findingsOf(rep, FindingTagWithoutOwner)
	want := []string{
		"`tag:ci` is used by a test but tagOwners does not declare it: Tailscale refuses a policy that uses it, and the operator cannot tag a device with it. Add a qtail_tag_owner.",
		"`tag:vault` is used by a test but tagOwners does not declare it: Tailscale refuses a policy that uses it, and the operator cannot tag a device with it. Add a qtail_tag_owner.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("tags without owner:\n got %q\nwant %q", got, want)
	}
}
