package review

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// noAllowAll is worldPolicy without the default allow-all rule.
var noAllowAll = strings.Replace(worldPolicy, `{"src": ["*"], "dst": ["*"], "ip": ["*"]},`, "", 1)

// webService is the change of the exposed service whose device is web,
// with its address and port 443, or without its address when ip is
// empty.
func webService(actions []string, ip string) map[string]any {
	v := map[string]any{"hostname": "web", "tags": []any{"tag:web"}, "ports": []any{map[string]any{"internal_port": 443.0, "protocol": "HTTP"}}}
	if ip != "" {
		v["tailnet_ips"] = []any{ip}
	}
	var before, after map[string]any
	if !slices.Equal(actions, []string{"create"}) {
		before = v
	}
	if !slices.Equal(actions, []string{"delete"}) {
		after = v
	}
	return change("qtail_exposed_service.web", "qtail_exposed_service", actions, before, after, nil)
}

func createGrant(name string, src, dst, ip []any) map[string]any {
	return change("qtail_grant."+strings.ReplaceAll(name, "-", "_"), "qtail_grant", []string{"create"}, nil, grantAttrs(name, src, dst, ip), nil)
}

func access(r *Report, name string) *TargetAccess {
	for i := range r.Access {
		if r.Access[i].Name == name {
			return &r.Access[i]
		}
	}
	return nil
}

func TestPortsOf(t *testing.T) {
	for _, tc := range []struct {
		ip   string
		want []uint16
	}{
		{"tcp:443", []uint16{443}},
		{"443", []uint16{443}},
		{"udp:53", []uint16{53}},
		{"tcp:80-90", []uint16{80, 90}},
		{"tcp:0-1023", []uint16{1023}},
		{"*", nil},
		{"tcp:*", nil},
		{"tcp:70000", nil},
	} {
		if got := portsOf(tc.ip); !slices.Equal(got, tc.want) {
			t.Errorf("portsOf(%q) = %v, want %v", tc.ip, got, tc.want)
		}
	}
}

// TestPortAccessChanges: a port whose sources stay the same is unchanged
// and the exit code says no access changes; a port that only loses
// sources, or whose sources are replaced by as many others, is a change.
func TestPortAccessChanges(t *testing.T) {
	policy := strings.Replace(noAllowAll, `"grants": [`, `"grants": [
		// qtail:grant:alice-web
		{"src": ["alice@example.com"], "dst": ["tag:web"], "ip": ["tcp:8080"]},`, 1)
	w := newWorld(t, policy)

	rep := w.review(t, webService([]string{"no-op"}, "100.64.0.10"))
	if pa := portOf(rep, "web", 443); pa == nil || pa.changed() || !slices.Equal(pa.After, []string{"group:ops"}) || rep.AccessChanged || rep.ExitCode() != ExitNoAccessChange {
		t.Errorf("nothing changes: web:443 %+v, access changed %t", pa, rep.AccessChanged)
	}
	if md := rep.Markdown(); !strings.Contains(md, "| `web` (service, `tag:web`) | 443 | `group:ops` | `group:ops` | unchanged |") {
		t.Errorf("the report:\n%s", md)
	}

	// The exposure removed: its port loses its only source.
	rep = w.review(t, webService([]string{"delete"}, "100.64.0.10"))
	if pa := portOf(rep, "web", 443); pa == nil || !slices.Equal(pa.Lost, []string{"group:ops"}) || len(pa.After) != 0 || !rep.AccessChanged || rep.ExitCode() != ExitAccessChange {
		t.Errorf("exposure removed: web:443 %+v, access changed %t", pa, rep.AccessChanged)
	}
	if md := rep.Markdown(); !strings.Contains(md, "| `web` (service, removed, `tag:web`) | 443 | `group:ops` | no one | **lost** `group:ops` |") {
		t.Errorf("the report:\n%s", md)
	}

	// bob in alice's place: 8080 keeps one source, another one.
	bob := grantAttrs("alice-web", []any{"bob@example.com"}, []any{"tag:web"}, []any{"tcp:8080"})
	rep = w.review(t, change("qtail_grant.alice_web", "qtail_grant", []string{"update"},
		grantAttrs("alice-web", []any{"alice@example.com"}, []any{"tag:web"}, []any{"tcp:8080"}), bob, nil))
	if pa := portOf(rep, "web", 8080); pa == nil || pa.Declared || !slices.Equal(pa.Gained, []string{"bob@example.com"}) || !slices.Equal(pa.Lost, []string{"alice@example.com"}) {
		t.Errorf("alice replaced by bob: web:8080 %+v", pa)
	}
	if md := rep.Markdown(); !strings.Contains(md, "| `web` (device, `tag:web`) | 8080 | `alice@example.com` | `bob@example.com` | **gained** `bob@example.com`; **lost** `alice@example.com` |") {
		t.Errorf("the report:\n%s", md)
	}
}

// TestUserAccessChanges: a user who gains or loses access to a tag that
// no device carries yet is an access change; a grant that gives a user
// what they already reach is not.
func TestUserAccessChanges(t *testing.T) {
	policy := strings.Replace(noAllowAll, `"grants": [`, `"grants": [
		// qtail:grant:alice-api
		{"src": ["alice@example.com"], "dst": ["tag:api"], "ip": ["tcp:443"]},`, 1)
	policy = strings.Replace(policy, `"tag:db": []`, `"tag:db": [], "tag:api": []`, 1)
	w := newWorld(t, policy)
	for _, tc := range []struct {
		name   string
		change map[string]any
		user   UserAccess
		code   int
	}{
		{"gains", createGrant("alice-api-8443", []any{"alice@example.com"}, []any{"tag:api"}, []any{"tcp:8443"}),
			UserAccess{User: "alice@example.com", Before: []string{"tag:api:tcp:443", "tag:web:tcp:443"}, After: []string{"tag:api:tcp:443", "tag:api:tcp:8443", "tag:web:tcp:443"}, Gained: []string{"tag:api:tcp:8443"}}, ExitAccessChange},
		{"loses", change("qtail_grant.alice_api", "qtail_grant", []string{"delete"}, grantAttrs("alice-api", []any{"alice@example.com"}, []any{"tag:api"}, []any{"tcp:443"}), nil, nil),
			UserAccess{User: "alice@example.com", Before: []string{"tag:api:tcp:443", "tag:web:tcp:443"}, After: []string{"tag:web:tcp:443"}, Lost: []string{"tag:api:tcp:443"}}, ExitAccessChange},
		{"keeps", createGrant("alice-api-again", []any{"alice@example.com"}, []any{"tag:api"}, []any{"tcp:443"}),
			UserAccess{User: "alice@example.com", Before: []string{"tag:api:tcp:443", "tag:web:tcp:443"}, After: []string{"tag:api:tcp:443", "tag:web:tcp:443"}}, ExitNoAccessChange},
	} {
		rep := w.review(t, tc.change)
		if len(rep.Access) != 0 || len(rep.Users) != 1 || fmt.Sprint(rep.Users[0]) != fmt.Sprint(tc.user) || rep.ExitCode() != tc.code {
			t.Errorf("%s: access %+v, users %+v, exit code %d; want %+v, %d", tc.name, rep.Access, rep.Users, rep.ExitCode(), tc.user, tc.code)
		}
	}
}

// TestDevicesListed: the review lists the tailnet's devices only when a
// changed grant names a tag or a service has no address in the plan, and
// gives such a service its device's address.
func TestDevicesListed(t *testing.T) {
	w := newWorld(t, noAllowAll)
	run := func(changes ...map[string]any) (*Report, error) {
		return Run(t.Context(), w.api, []Plan{plan(t, "root.json", changes...)})
	}
	toRoute := createGrant("ops-lan", []any{"group:ops"}, []any{"10.30.0.0/16"}, []any{"tcp:22"})
	toDB := createGrant("ops-db", []any{"group:ops"}, []any{"tag:db"}, []any{"tcp:5432"})

	const devices = "GET /api/v2/tailnet/{tailnet}/devices"
	w.faults.Add(faults.Rule{Route: devices, Status: 403, Count: 10, Body: []byte(`{"message": "calling actor does not have enough permissions to perform this function"}`)})
	if rep, err := run(toRoute, webService([]string{"no-op"}, "100.64.0.10")); err != nil || access(rep, "10.30.0.0/16") == nil {
		t.Errorf("a review without tags nor services to find: %v, %+v", err, rep)
	}
	for _, changes := range [][]map[string]any{{toDB}, {toRoute, webService([]string{"no-op"}, "")}} {
		if _, err := run(changes...); err == nil || !strings.Contains(err.Error(), "listing the tailnet's devices: ") || !strings.Contains(err.Error(), "does not have enough permissions") {
			t.Errorf("%d changes: error %v, want the devices' listing refused", len(changes), err)
		}
	}
	w.faults.Reset()

	rep := w.review(t, toDB)
	if db := access(rep, "db"); db == nil || db.Kind != "device" || db.IP != "100.64.0.11" || !slices.Equal(db.Tags, []string{"tag:db"}) {
		t.Errorf("db: %+v", db)
	}
	if pa := portOf(rep, "db", 5432); pa == nil || !slices.Equal(pa.Gained, []string{"group:ops"}) {
		t.Errorf("db:5432 %+v", pa)
	}

	rep = w.review(t, toRoute, webService([]string{"no-op"}, ""))
	if web := access(rep, "web"); web == nil || web.IP != "100.64.0.10" || web.Note != "" || portOf(rep, "web", 443) == nil {
		t.Errorf("web: %+v", web)
	}
	// A service created has no device yet.
	rep = w.review(t, webService([]string{"create"}, ""))
	if web := access(rep, "web"); web == nil || web.Status != "added" || web.IP != "" || !strings.Contains(web.Note, "known only once its device exists") {
		t.Errorf("web: %+v", web)
	}
}

// TestAddressTargets: a changed grant to an address previews that
// address, once, and not again when a service already stands there.
func TestAddressTargets(t *testing.T) {
	w := newWorld(t, noAllowAll)
	rep := w.review(t,
		webService([]string{"no-op"}, "100.64.0.10"),
		createGrant("bob-web", []any{"bob@example.com"}, []any{"100.64.0.10"}, []any{"tcp:443"}),
		createGrant("bob-lan", []any{"bob@example.com"}, []any{"10.30.0.0/16", "10.30.0.0/16"}, []any{"tcp:22"}),
	)
	var names []string
	for _, ta := range rep.Access {
		names = append(names, ta.Kind+" "+ta.Name)
	}
	if want := []string{"service web", "route 10.30.0.0/16"}; !slices.Equal(names, want) {
		t.Errorf("targets %q, want %q", names, want)
	}
	if pa := portOf(rep, "web", 443); pa == nil || !slices.Equal(pa.Gained, []string{"bob@example.com"}) {
		t.Errorf("web:443 %+v", pa)
	}
}

// TestManyUsers: the review previews at most 20 users, and says so when
// the changed grants name more.
func TestManyUsers(t *testing.T) {
	for _, n := range []int{20, 21} {
		var members []string
		for i := range n {
			members = append(members, fmt.Sprintf("%q", fmt.Sprintf("user%02d@example.com", i)))
		}
		w := newWorld(t, strings.Replace(noAllowAll, `"groups": {`, `"groups": {"group:many": [`+strings.Join(members, ", ")+`], `, 1))
		rep := w.review(t, createGrant("many-web", []any{"group:many"}, []any{"tag:web"}, []any{"tcp:443"}))
		var notes []string
		for _, note := range rep.Notes {
			if strings.HasPrefix(note, "The changed grants name") {
				notes = append(notes, note)
			}
		}
		var want []string
		if n > 20 {
			want = []string{fmt.Sprintf("The changed grants name %d users (directly or through groups); the review previews the first 20.", n)}
		}
		if len(rep.Users) != 20 || rep.Users[19].User != "user19@example.com" || !slices.Equal(notes, want) {
			t.Errorf("%d users: %d previewed, notes %q", n, len(rep.Users), rep.Notes)
		}
	}
}

// TestQualifiedSources: a rule that routes through a tag, or asks for a
// device posture, says so after its source.
func TestQualifiedSources(t *testing.T) {
	policy := strings.Replace(noAllowAll, `"grants": [`, `"postures": {"posture:latest": ["node:tsReleaseTrack == 'stable'"]},
	"grants": [
		{"src": ["bob@example.com"], "dst": ["tag:web"], "ip": ["tcp:8443"], "via": ["tag:db"]},
		{"src": ["bob@example.com"], "dst": ["tag:web"], "ip": ["tcp:8443"], "srcPosture": ["posture:latest"]},
		{"src": ["alice@example.com"], "dst": ["tag:web"], "ip": ["tcp:8443"], "via": ["tag:db"], "srcPosture": ["posture:latest"]},`, 1)
	w := newWorld(t, policy)
	rep := w.review(t, createGrant("ops-web-8443", []any{"group:ops"}, []any{"tag:web"}, []any{"tcp:8443"}))
	want := []string{"alice@example.com via tag:db if posture:latest", "bob@example.com if posture:latest", "bob@example.com via tag:db"}
	if pa := portOf(rep, "web", 8443); pa == nil || !slices.Equal(pa.Before, want) || !slices.Equal(pa.Gained, []string{"group:ops"}) {
		t.Errorf("web:8443 %+v, want before %q", pa, want)
	}
	if u := rep.Users; len(u) != 1 || !slices.Equal(u[0].Before, []string{"tag:web:tcp:443", "tag:web:tcp:8443 via tag:db if posture:latest"}) || !slices.Equal(u[0].Gained, []string{"tag:web:tcp:8443"}) {
		t.Errorf("users %+v", u)
	}
}

// TestPreviewFails: a preview that Tailscale does not answer, with the
// current or the planned policy file, fails the review.
func TestPreviewFails(t *testing.T) {
	w := newWorld(t, noAllowAll)
	changes := []Plan{plan(t, "root.json", webService([]string{"update"}, "100.64.0.10"),
		createGrant("bob-web", []any{"bob@example.com"}, []any{"tag:web"}, []any{"tcp:443"}))}
	w.faults.Add(faults.Rule{Route: "POST /api/v2/tailnet/{tailnet}/acl/preview", Status: 403})
	_, err := Run(t.Context(), w.api, changes)
	if want := "asking Tailscale who reaches 100.64.0.10:443 with the current policy file: "; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the current policy's preview refused: %v, want %q", err, want)
	}
	current, _ := w.srv.Policy()
	_, err = Run(t.Context(), plannedPreviewFails{w.api, current}, changes)
	if want := "asking Tailscale who reaches 100.64.0.10:443 with the planned policy file: "; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the planned policy's preview refused: %v, want %q", err, want)
	}
}

// plannedPreviewFails is the tailnet's API, whose previews of any policy
// but the current one fail.
type plannedPreviewFails struct {
	API
	current []byte
}

func (a plannedPreviewFails) PreviewPolicy(ctx context.Context, body []byte, typ tailnet.PreviewType, previewFor string) (*tailnet.Preview, error) {
	if !bytes.Equal(body, a.current) {
		return nil, &tailnet.APIError{Status: 403, Message: "calling actor does not have enough permissions to perform this function"}
	}
	return a.API.PreviewPolicy(ctx, body, typ, previewFor)
}
