package tailnet

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

const (
	keysRoute   = "/api/v2/tailnet/{tailnet}/keys"
	keyRoute    = "/api/v2/tailnet/{tailnet}/keys/{id}"
	operatorKey = "qtail operator prod-us"
)

var (
	operatorScopes = []string{"devices:core", "auth_keys", "services"}
	operatorTags   = []string{"tag:k8s-operator"}
)

// clock is a movable clock for the fake.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) set(offset time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = offset
}

func newKeysEnv(t *testing.T) (*env, *Client, *clock) {
	t.Helper()
	clk := &clock{}
	e := newEnv(t, tailnetapi.Options{InitialPolicy: []byte(operatorPolicy), Now: clk.now})
	return e, e.client(Config{}), clk
}

// clients returns the fake's keys with this description, revoked ones
// included, read with the API key.
func (e *env) keysDescribed(t *testing.T, c *Client, description string) (live, revoked []string) {
	t.Helper()
	keys, err := c.ListKeys(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Description == description {
			live = append(live, k.ID)
		}
	}
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	for _, r := range e.rec.reqs {
		if r.Method == "DELETE" && strings.Contains(r.URL.Path, "/keys/") {
			revoked = append(revoked, r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:])
		}
	}
	return live, revoked
}

func TestCreateOAuthClientAfterLostAnswer(t *testing.T) {
	for how, rule := range map[string]faults.Rule{
		"502":                {Status: 502, AfterHandler: true},
		"504":                {Status: 504, AfterHandler: true},
		"connection dropped": {Drop: true, AfterHandler: true},
	} {
		t.Run(how, func(t *testing.T) {
			e, c, _ := newKeysEnv(t)
			rule.Route = "POST /tailscale" + keysRoute
			e.srv.Faults().Add(rule)
			id, secret, err := c.CreateOAuthClient(t.Context(), operatorScopes, operatorTags, operatorKey)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, ok := e.srv.CheckOAuthClient(id, secret); !ok {
				t.Fatalf("the returned credentials do not work: %s", id)
			}
			// The client made by the lost answer was deleted: its
			// secret is unknown.
			live, revoked := e.keysDescribed(t, c, operatorKey)
			if len(live) != 1 || live[0] != id || len(revoked) != 1 || revoked[0] == id {
				t.Fatalf("live %v revoked %v, want only %s live and the orphan revoked", live, revoked, id)
			}
			orphan, err := c.GetKey(t.Context(), revoked[0])
			if err != nil || !orphan.Invalid || orphan.Description != operatorKey {
				t.Errorf("orphan %+v %v", orphan, err)
			}
			if n := e.count("POST", keysRoute); n != 2 {
				t.Errorf("%d creates, want 2", n)
			}
		})
	}
}

func TestCreateAuthKeyAfterLostAnswer(t *testing.T) {
	e, c, _ := newKeysEnv(t)
	e.srv.Faults().Add(faults.Rule{Route: "POST /tailscale" + keysRoute, Drop: true, AfterHandler: true})
	opts := AuthKeyOptions{Preauthorized: true, Tags: []string{"tag:k8s"}, Expiry: time.Hour, Description: "qtail connector"}
	id, secret, err := c.CreateAuthKey(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "tskey-auth-"+id) {
		t.Errorf("secret %q for %s", secret, id)
	}
	live, revoked := e.keysDescribed(t, c, "qtail connector")
	if len(live) != 1 || live[0] != id || len(revoked) != 1 {
		t.Fatalf("live %v revoked %v", live, revoked)
	}
	// A key with other settings is not taken for the orphan.
	e.srv.Faults().Add(faults.Rule{Route: "POST /tailscale" + keysRoute, Status: 502})
	opts.Reusable = true
	if _, _, err := c.CreateAuthKey(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if live, revoked := e.keysDescribed(t, c, "qtail connector"); len(live) != 2 || len(revoked) != 1 {
		t.Fatalf("live %v revoked %v, want the first key kept", live, revoked)
	}
}

func TestCreateKeyNotAppliedIsSentOnceMore(t *testing.T) {
	e, c, _ := newKeysEnv(t)
	e.srv.Faults().Add(faults.Rule{Route: "POST /tailscale" + keysRoute, Status: 504})
	id, secret, err := c.CreateOAuthClient(t.Context(), operatorScopes, operatorTags, operatorKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := e.srv.CheckOAuthClient(id, secret); !ok {
		t.Fatal("credentials do not work")
	}
	if n := e.count("POST", keysRoute); n != 2 {
		t.Errorf("%d creates, want 2", n)
	}
	if n := e.count("DELETE", keyRoute); n != 0 {
		t.Errorf("%d deletes, want none", n)
	}
}

// TestCreateKeyLeavesOlderKeysAlone: a key with the same description made
// before the request (by the server's clock) is someone else's.
func TestCreateKeyLeavesOlderKeysAlone(t *testing.T) {
	e, c, clk := newKeysEnv(t)
	clk.set(-time.Hour)
	oldID, oldSecret, err := c.CreateOAuthClient(t.Context(), operatorScopes, operatorTags, operatorKey)
	if err != nil {
		t.Fatal(err)
	}
	clk.set(0)
	e.srv.Faults().Add(faults.Rule{Route: "POST /tailscale" + keysRoute, Status: 502})
	id, _, err := c.CreateOAuthClient(t.Context(), operatorScopes, operatorTags, operatorKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := e.srv.CheckOAuthClient(oldID, oldSecret); !ok || id == oldID {
		t.Fatal("the older client was deleted or returned")
	}
	if n := e.count("DELETE", keyRoute); n != 0 {
		t.Errorf("%d deletes, want none", n)
	}
}

// TestCreateKeyServerClockBehind: the server's clock runs an hour behind
// ours, so the new key looks older than the request by our clock. The
// look-up goes by the server's clock, which its Date header tells.
func TestCreateKeyServerClockBehind(t *testing.T) {
	e, c, clk := newKeysEnv(t)
	clk.set(-time.Hour)
	// Go's server stamps Date with the machine's time: make it say what
	// the fake's clock says.
	e.rec.next = dateTransport{next: e.rec.next, now: clk.now}
	e.srv.Faults().Add(faults.Rule{Route: "POST /tailscale" + keysRoute, Status: 502, AfterHandler: true})
	id, _, err := c.CreateOAuthClient(t.Context(), operatorScopes, operatorTags, operatorKey)
	if err != nil {
		t.Fatal(err)
	}
	if live, revoked := e.keysDescribed(t, c, operatorKey); len(live) != 1 || live[0] != id || len(revoked) != 1 {
		t.Fatalf("live %v revoked %v, want the orphan found and deleted", live, revoked)
	}
}

func TestCreateKeyWithSeveralCandidatesDeletesNothing(t *testing.T) {
	e, c, _ := newKeysEnv(t)
	first, _, err := c.CreateOAuthClient(t.Context(), operatorScopes, operatorTags, operatorKey)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Faults().Add(faults.Rule{Route: "POST /tailscale" + keysRoute, Status: 502, AfterHandler: true})
	_, _, err = c.CreateOAuthClient(t.Context(), operatorScopes, operatorTags, operatorKey)
	if err == nil || !strings.Contains(err.Error(), "2 keys that match it") || !strings.Contains(err.Error(), first) || !strings.Contains(err.Error(), "deleted none") {
		t.Fatalf("err %v", err)
	}
	if !IsAmbiguous(err) {
		t.Errorf("not ambiguous: %v", err)
	}
	if e.count("DELETE", keyRoute) != 0 || e.count("POST", keysRoute) != 2 {
		t.Errorf("calls %v", e.srv.Faults().Calls())
	}
}

func TestCreateKeyFailingTwiceIsReported(t *testing.T) {
	e, c, _ := newKeysEnv(t)
	e.srv.Faults().Add(faults.Rule{Route: "POST /tailscale" + keysRoute, Drop: true, Count: 3})
	_, secret, err := c.CreateOAuthClient(t.Context(), operatorScopes, operatorTags, operatorKey)
	if err == nil || secret != "" {
		t.Fatalf("created through two dropped connections: %v", err)
	}
	var amb *retry.AmbiguousError
	if !errors.As(err, &amb) {
		t.Errorf("not an ambiguous error: %v", err)
	}
	for _, want := range []string{"POST /tailscale/api/v2/tailnet/-/keys", `the OAuth client "qtail operator prod-us"`, "sent once more", "revoke any such key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
	if n := e.count("POST", keysRoute); n != 2 {
		t.Errorf("%d creates, want exactly 2", n)
	}
}

func TestCreateKeyListFailure(t *testing.T) {
	e, c, _ := newKeysEnv(t)
	e.srv.Faults().Add(
		faults.Rule{Route: "POST /tailscale" + keysRoute, Status: 502, AfterHandler: true},
		// A 500 that lasts beyond the retries of the list.
		faults.Rule{Route: "GET /tailscale" + keysRoute, Status: 500, Count: 100},
	)
	_, _, err := c.CreateOAuthClient(t.Context(), operatorScopes, operatorTags, operatorKey)
	if err == nil || !strings.Contains(err.Error(), "listing the keys to find it failed") || !IsAmbiguous(err) {
		t.Fatalf("err %v", err)
	}
	if e.count("POST", keysRoute) != 1 {
		t.Errorf("calls %v", e.srv.Faults().Calls())
	}

	// A credential that may not list every key lists its own.
	e.srv.Faults().Reset()
	e.srv.Faults().Add(
		faults.Rule{Route: "POST /tailscale" + keysRoute, Status: 502, AfterHandler: true},
		faults.Rule{Route: "GET /tailscale" + keysRoute, Status: 403},
	)
	if _, _, err := c.CreateAuthKey(t.Context(), AuthKeyOptions{Description: "fallback", Tags: []string{"tag:k8s"}}); err != nil {
		t.Fatal(err)
	}
	if live, revoked := e.keysDescribed(t, c, "fallback"); len(live) != 1 || len(revoked) != 1 {
		t.Errorf("live %v revoked %v", live, revoked)
	}
	if q := e.rec.last(t, "GET", "/keys").URL.RawQuery; q != "all=true" {
		t.Errorf("last list query %q", q)
	}
}

func TestCreateKeyAnswerWithoutSecret(t *testing.T) {
	e, c, _ := newKeysEnv(t)
	e.srv.Faults().Add(faults.Rule{Route: "POST /tailscale" + keysRoute, Status: 200, Body: json.RawMessage(`{"id":"kX1CNTRL","keyType":"client"}`)})
	_, _, err := c.CreateOAuthClient(t.Context(), operatorScopes, operatorTags, operatorKey)
	if err == nil || !strings.Contains(err.Error(), "does not hold the new key's id and secret") {
		t.Fatalf("err %v", err)
	}
}

func TestListKeys(t *testing.T) {
	e, c, _ := newKeysEnv(t)
	id, _, err := c.CreateOAuthClient(t.Context(), operatorScopes, operatorTags, operatorKey)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := c.ListKeys(t.Context(), false)
	if err != nil || len(keys) != 1 || keys[0].ID != id || keys[0].KeyType != "client" || keys[0].UserID == "" || keys[0].Created.IsZero() {
		t.Fatalf("keys %+v %v", keys, err)
	}
	if q := e.rec.last(t, "GET", "/keys").URL.RawQuery; q != "" {
		t.Errorf("query %q", q)
	}
	// An answer with ids only, as older versions of the API give, is
	// completed key by key; a key gone in between is skipped.
	e.srv.Faults().Add(faults.Rule{Route: "GET /tailscale" + keysRoute, Status: 200, Body: json.RawMessage(`{"keys":[{"id":"` + id + `"},{"id":"kGONE1CNTRL"}]}`)})
	keys, err = c.ListKeys(t.Context(), true)
	if err != nil || len(keys) != 1 || keys[0].ID != id || !sameSet(keys[0].Scopes, operatorScopes) || keys[0].Description != operatorKey {
		t.Fatalf("completed keys %+v %v", keys, err)
	}
	if q := e.rec.last(t, "GET", "/keys").URL.RawQuery; q != "all=true" {
		t.Errorf("query %q", q)
	}
}

// dateTransport rewrites the Date header of answers to a clock's time.
type dateTransport struct {
	next http.RoundTripper
	now  func() time.Time
}

func (d dateTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := d.next.RoundTrip(req)
	if err == nil {
		resp.Header.Set("Date", d.now().UTC().Format(http.TimeFormat))
	}
	return resp, err
}

// An auth key's tags are read from capabilities.devices.create.tags, the
// only place the API sends them (no top-level "tags", no "updated"); an
// OAuth client's from its top-level "tags".
func TestKeyTagsByType(t *testing.T) {
	e, c, _ := newKeysEnv(t)
	authID, _, err := c.CreateAuthKey(t.Context(), AuthKeyOptions{Reusable: true, Tags: []string{"tag:k8s"}, Description: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	clientID, _, err := c.CreateOAuthClient(t.Context(), operatorScopes, operatorTags, operatorKey)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, k *Key, wantTags []string) {
		t.Helper()
		if k == nil || !slices.Equal(k.Tags, wantTags) {
			t.Errorf("%s: key %+v, want tags %v", name, k, wantTags)
		}
	}
	k, err := c.GetKey(t.Context(), authID)
	if err != nil {
		t.Fatal(err)
	}
	check("GetKey auth", k, []string{"tag:k8s"})
	if !k.Reusable {
		t.Errorf("GetKey auth: not reusable: %+v", k)
	}
	k, err = c.GetKey(t.Context(), clientID)
	if err != nil {
		t.Fatal(err)
	}
	check("GetKey client", k, operatorTags)
	keys, err := c.ListKeys(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	for i := range keys {
		switch keys[i].ID {
		case authID:
			check("ListKeys auth", &keys[i], []string{"tag:k8s"})
		case clientID:
			check("ListKeys client", &keys[i], operatorTags)
		}
	}

	// The tags under capabilities win over a top-level "tags".
	e.srv.Faults().Add(faults.Rule{Route: "GET /tailscale" + keysRoute + "/{id}", Status: 200, Body: json.RawMessage(
		`{"id":"` + authID + `","keyType":"auth","tags":["tag:stale"],"capabilities":{"devices":{"create":{"tags":["tag:k8s"]}}}}`)})
	k, err = c.GetKey(t.Context(), authID)
	if err != nil {
		t.Fatal(err)
	}
	check("GetKey with both", k, []string{"tag:k8s"})
}
