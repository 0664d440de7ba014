package review

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
)

// TestKnownAfterApply: an attribute is known only after apply when its
// after_unknown is true, or any element or member of it is.
func TestKnownAfterApply(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{nil, false},
		{true, true},
		{false, false},
		{[]any{}, false},
		{[]any{false, false}, false},
		{[]any{false, true}, true},
		{map[string]any{"a": false, "b": false}, false},
		{map[string]any{"a": false, "b": []any{false, map[string]any{"c": true}}}, true},
		{"true", false},
	} {
		if got := containsTrue(tc.v); got != tc.want {
			t.Errorf("containsTrue(%#v) = %t, want %t", tc.v, got, tc.want)
		}
	}

	// A grant with one of its ports known only after apply stays out of
	// the planned policy; one whose after_unknown lists only known
	// elements does not.
	w := newWorld(t, worldPolicy)
	attrs := grantAttrs("ops-web-8080", []any{"group:ops"}, []any{"tag:web"}, []any{"tcp:8080", nil})
	for _, tc := range []struct {
		unknown map[string]any
		want    bool
	}{
		{map[string]any{"ip": []any{false, true}}, true},
		{map[string]any{"ip": []any{false, false}, "id": true}, false},
	} {
		if tc.want {
			attrs["ip"] = []any{"tcp:8080", nil}
		} else {
			attrs["ip"] = []any{"tcp:8080", "tcp:8443"}
		}
		rep := w.review(t, change("qtail_grant.ops_web_8080", "qtail_grant", []string{"create"}, nil, attrs, tc.unknown))
		if len(rep.Fragments) != 1 || rep.Fragments[0].Unknown != tc.want || strings.Contains(rep.PolicyDiff, "tcp:8080") == tc.want {
			t.Errorf("after_unknown %v: fragments %+v, diff:\n%s", tc.unknown, rep.Fragments, rep.PolicyDiff)
		}
	}
}

// TestExposedServicePorts: a service's declared ports are its internal
// ports, each once, in order, whatever number type the plan's JSON was
// decoded into; ports out of range are left out.
func TestExposedServicePorts(t *testing.T) {
	ports := func(ps ...any) []any {
		var out []any
		for _, p := range ps {
			out = append(out, map[string]any{"internal_port": p, "protocol": "TCP"})
		}
		return out
	}
	after := map[string]any{"hostname": "web", "tags": []any{"tag:web"}, "tailnet_ips": []any{"fd7a:115c:a1e0::a", "100.64.0.10"},
		"ports": ports(8443.0, json.Number("443"), json.Number("80.5"), "8080", 443.0, 0.0, 65536.0, 65535.0, "x")}
	before := map[string]any{"hostname": "web-old", "tags": []any{"tag:old"}, "tailnet_ips": []any{"100.64.0.99"}, "ports": append(ports(80.0), "not an object")}
	ss := exposedServices([]resource{{typ: "qtail_exposed_service", address: "qtail_exposed_service.web", actions: tfjson.Actions{tfjson.ActionUpdate}, before: before, after: after}})
	if len(ss) != 1 {
		t.Fatalf("services %+v", ss)
	}
	s := ss[0]
	if s.name != "web" || !slices.Equal(s.tags, []string{"tag:web"}) || s.ip != netip.MustParseAddr("100.64.0.10") || !s.before || !s.after || !s.changed {
		t.Errorf("service %+v", s)
	}
	if want := []uint16{80, 443, 8443, 65535}; !slices.Equal(s.declared, want) {
		t.Errorf("declared ports %v, want %v", s.declared, want)
	}
}

func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		v    any
		n    int64
		isOK bool
	}{
		{443.0, 443, true},
		{json.Number("8080"), 8080, true},
		{json.Number("80.5"), 0, false},
		{"443", 0, false},
		{nil, 0, false},
	} {
		if n, ok := number(tc.v); n != tc.n || ok != tc.isOK {
			t.Errorf("number(%#v) = %d, %t; want %d, %t", tc.v, n, ok, tc.n, tc.isOK)
		}
	}
}

// TestFirstIP: the address previews ask about is a device's first IPv4
// address, or else its first IPv6 address.
func TestFirstIP(t *testing.T) {
	for _, tc := range []struct {
		addrs []string
		want  string
	}{
		{nil, "invalid IP"},
		{[]string{"not an address"}, "invalid IP"},
		{[]string{"fd7a:115c:a1e0::1", "fd7a:115c:a1e0::2"}, "fd7a:115c:a1e0::1"},
		{[]string{"fd7a:115c:a1e0::1", "x", "100.64.0.1", "100.64.0.2"}, "100.64.0.1"},
	} {
		if got := firstIP(tc.addrs).String(); got != tc.want {
			t.Errorf("firstIP(%q) = %s, want %s", tc.addrs, got, tc.want)
		}
	}
}

// TestCanonical: fragment values are compared in canonical JSON; a value
// that does not parse is kept as it is.
func TestCanonical(t *testing.T) {
	if got := string(canonical(json.RawMessage(`{"ip": ["tcp:443"], // port
		"dst": ["tag:web"],}`))); got != `{"dst":["tag:web"],"ip":["tcp:443"]}` {
		t.Errorf("canonical: %s", got)
	}
	if got := string(canonical(json.RawMessage(`{"src": [`))); got != `{"src": [` {
		t.Errorf("canonical of a broken value: %s", got)
	}
}

// TestProbeAddr: a route is previewed at its first host, an address at
// itself.
func TestProbeAddr(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"10.20.0.0/16", "10.20.0.1"},
		{"10.20.3.4/16", "10.20.0.1"},
		{"192.168.1.7/32", "192.168.1.7"},
		{"255.255.255.255/32", "255.255.255.255"},
		{"192.168.1.6/31", "192.168.1.7"},
		{"fd00::/64", "fd00::1"},
		{"100.64.0.10", "100.64.0.10"},
		{"0.0.0.0/0", "0.0.0.1"},
	} {
		if got, ok := probeAddr(tc.in); !ok || got.String() != tc.want {
			t.Errorf("probeAddr(%q) = %s, %t; want %s", tc.in, got, ok, tc.want)
		}
	}
	if _, ok := probeAddr("tag:web"); ok {
		t.Error("probeAddr(tag:web) is an address")
	}
}

// TestAllowAllRemoval: a qtail_allow_all_removal created while the
// policy file has the allow-all rule removes it; once the rule is gone,
// or when the resource is only updated (which writes nothing) or
// destroyed (qtail never writes the rule back), nothing changes.
func TestAllowAllRemoval(t *testing.T) {
	removal := func(actions []string) map[string]any {
		v := map[string]any{"id": "allow-all"}
		var before, after map[string]any
		if actions[0] != "create" {
			before = v
		}
		if actions[0] != "delete" {
			after = v
		}
		return change("qtail_allow_all_removal.this", "qtail_allow_all_removal", actions, before, after, nil)
	}
	const destroyed = "qtail_allow_all_removal.this is destroyed: that changes nothing in the policy file (qtail never writes the allow-all rule back)."
	for _, tc := range []struct {
		name     string
		policy   string
		actions  []string
		removed  bool
		notes    []string
		allowAll bool
	}{
		{"created", worldPolicy, []string{"create"}, true, nil, false},
		{"created without the rule", noAllowAll, []string{"create"}, false, nil, false},
		{"updated", worldPolicy, []string{"update"}, false, nil, true},
		{"destroyed", worldPolicy, []string{"delete"}, false, []string{destroyed}, true},
	} {
		w := newWorld(t, tc.policy)
		rep := w.review(t, removal(tc.actions))
		var want []FragmentChange
		if tc.removed {
			want = []FragmentChange{{Plan: "root.json", Address: "qtail_allow_all_removal.this", Fragment: "the default allow-all rule", Kind: "allow_all", Name: "default", Action: "removed"}}
		}
		removedLine := strings.Contains(rep.PolicyDiff, "\n-\t\t{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"*\"]},\n")
		if !reflect.DeepEqual(rep.Fragments, want) || removedLine != tc.removed || !slices.Equal(rep.Notes, tc.notes) {
			t.Errorf("%s: fragments %+v, notes %q, findings %+v, diff:\n%s", tc.name, rep.Fragments, rep.Notes, rep.Findings, rep.PolicyDiff)
		}
		if _, found := findingKinds(rep)[FindingAllowAll]; found != tc.allowAll {
			t.Errorf("%s: findings %+v, want the allow-all rule's: %t", tc.name, rep.Findings, tc.allowAll)
		}
	}
}

// TestFragmentWrites: a renamed grant leaves its old fragment for the
// new one; an update may take over an entry written by hand, a creation
// may not; an entry known only after apply stays as it is, or out, with
// a note that names it by its fragment or, when even that is unknown,
// by its resource.
func TestFragmentWrites(t *testing.T) {
	w := newWorld(t, noAllowAll)
	opsWeb := grantAttrs("ops-web", []any{"group:ops"}, []any{"tag:web"}, []any{"tcp:443"})

	rep := w.review(t, change("qtail_grant.ops_web", "qtail_grant", []string{"delete", "create"}, opsWeb,
		grantAttrs("ops-https", []any{"group:ops"}, []any{"tag:web"}, []any{"tcp:443"}), nil))
	if want := "-\t\t// qtail:grant:ops-web\n-\t\t{\"src\": [\"group:ops\"], \"dst\": [\"tag:web\"], \"ip\": [\"tcp:443\"]},\n"; !strings.Contains(rep.PolicyDiff, want) ||
		!strings.Contains(rep.PolicyDiff, "+\t\t// qtail:grant:ops-https\n") || len(rep.Fragments) != 1 || rep.Fragments[0].Fragment != `qtail_grant "ops-https"` || rep.Fragments[0].Action != "changed" {
		t.Errorf("renamed: fragments %+v, diff:\n%s", rep.Fragments, rep.PolicyDiff)
	}

	// An update edits the fragment where it is.
	hand := newWorld(t, strings.Replace(noAllowAll, `["tcp:443"]},`, `["tcp:443"]},
		{"src": ["bob@example.com"], "dst": ["tag:db"], "ip": ["tcp:5432"]},`, 1))
	rep, err := Run(t.Context(), hand.api, []Plan{plan(t, "root.json",
		change("qtail_grant.ops_web", "qtail_grant", []string{"update"}, opsWeb, grantAttrs("ops-web", []any{"group:ops"}, []any{"tag:web"}, []any{"tcp:8443"}), nil))})
	if err != nil {
		t.Fatal(err)
	}
	if want := " \t\t// qtail:grant:ops-web\n-\t\t{\"src\": [\"group:ops\"], \"dst\": [\"tag:web\"], \"ip\": [\"tcp:443\"]},\n+\t\t{\n+\t\t\t\"src\": [\"group:ops\"],\n+\t\t\t\"dst\": [\"tag:web\"],\n+\t\t\t\"ip\": [\"tcp:8443\"],\n+\t\t},\n" +
		" \t\t{\"src\": [\"bob@example.com\"], \"dst\": [\"tag:db\"], \"ip\": [\"tcp:5432\"]},\n"; !strings.Contains(rep.PolicyDiff, want) {
		t.Errorf("updated: diff:\n%s\nwant it to hold:\n%s", rep.PolicyDiff, want)
	}

	owner := func(owners ...any) map[string]any {
		return map[string]any{"id": "tag:web", "tag": "tag:web", "owners": owners}
	}
	rep = w.review(t, change("qtail_tag_owner.web", "qtail_tag_owner", []string{"update"}, owner(), owner("group:ops"), nil))
	if got := findingKinds(rep); got[FindingConflict] || !strings.Contains(rep.PolicyDiff, "+\t\t// qtail:tag_owner:tag:web\n+\t\t\"tag:web\": [\"group:ops\"]") {
		t.Errorf("an imported tag owner updated: findings %+v, diff:\n%s", rep.Findings, rep.PolicyDiff)
	}
	rep = w.review(t, change("qtail_tag_owner.web", "qtail_tag_owner", []string{"create"}, nil, owner("group:ops"), nil))
	if got := findingsOf(rep, FindingConflict); len(got) != 1 || !strings.HasPrefix(got[0], `qtail_tag_owner "tag:web" cannot be applied to the policy file: `) || rep.PolicyDiff != "" {
		t.Errorf("a tag owner created over one written by hand: conflicts %q, diff:\n%s", got, rep.PolicyDiff)
	}

	later := grantAttrs("later", []any{"group:ops"}, []any{"tag:db"}, nil)
	rep = w.review(t,
		change("qtail_grant.ops_web", "qtail_grant", []string{"update"}, opsWeb, grantAttrs("ops-web", []any{"group:ops"}, []any{"tag:web"}, nil), map[string]any{"ip": true}),
		change("qtail_grant.later", "qtail_grant", []string{"create"}, nil, later, map[string]any{"ip": true}),
		change("qtail_grant.unnamed", "qtail_grant", []string{"create"}, nil, grantAttrs("", []any{"group:ops"}, []any{"tag:db"}, []any{"tcp:1"}), map[string]any{"name": true}),
	)
	want := []string{
		`qtail_grant "ops-web" (qtail_grant.ops_web): its entry depends on values known only after apply, so the planned policy below keeps its current entry.`,
		`qtail_grant "later" (qtail_grant.later): its entry depends on values known only after apply, so the planned policy below leaves it out.`,
		`qtail_grant.unnamed (qtail_grant.unnamed): its entry depends on values known only after apply, so the planned policy below leaves it out.`,
	}
	if !slices.Equal(rep.Notes, want) || rep.PolicyDiff != "" || len(rep.Fragments) != 3 || rep.Fragments[2].Fragment != "qtail_grant.unnamed" || !rep.Fragments[2].Unknown {
		t.Errorf("known after apply: notes %q, fragments %+v, diff:\n%s", rep.Notes, rep.Fragments, rep.PolicyDiff)
	}
}
