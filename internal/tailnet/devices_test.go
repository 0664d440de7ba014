package tailnet

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	tailscale "tailscale.com/client/tailscale/v2"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

func TestDevices(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{MagicDNSSuffix: "tail1234.ts.net"})
	old := e.srv.AddDevice(tailnetapi.DeviceSpec{Hostname: "billing", Tags: []string{"tag:k8s"}, Offline: true})
	cur := e.srv.AddDevice(tailnetapi.DeviceSpec{Hostname: "billing", Tags: []string{"tag:k8s", "tag:k8s-billing"}})
	router := e.srv.AddDevice(tailnetapi.DeviceSpec{Hostname: "vpc-router", Tags: []string{"tag:router"}, AdvertisedRoutes: []string{"10.0.0.0/16"}})
	c := e.client(Config{})
	ctx := t.Context()

	list, err := c.ListDevices(ctx, ListDevicesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[2].AdvertisedRoutes != nil {
		t.Fatalf("default list %+v", list)
	}
	list, err = c.ListDevices(ctx, ListDevicesOptions{AllFields: true, Filters: map[string][]string{"tags": {"tag:k8s", "tag:k8s-billing"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].NodeID != cur.NodeID {
		t.Fatalf("filtered list %+v", list)
	}
	if q := e.rec.last(t, "GET", "/devices").URL.Query(); q.Get("fields") != "all" || len(q["tags"]) != 2 {
		t.Errorf("query %v", q)
	}

	d, err := c.FindDeviceByHostname(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if d == nil || d.NodeID != cur.NodeID || d.Name != "billing-1.tail1234.ts.net" || !d.ConnectedToControl {
		t.Errorf("found %+v, want the connected one", d)
	}
	if q := e.rec.last(t, "GET", "/devices").URL.Query(); q.Get("hostname") != "billing" {
		t.Errorf("hostname not filtered server-side: %v", q)
	}
	if d, err := c.FindDeviceByHostname(ctx, "ghost"); d != nil || err != nil {
		t.Errorf("ghost: %+v %v", d, err)
	}

	got, err := c.GetDevice(ctx, old.NodeID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "billing.tail1234.ts.net" || got.ConnectedToControl || got.LastSeen.IsZero() || !slices.Equal(got.Addresses, old.Addresses) {
		t.Errorf("offline device %+v", got)
	}
	got, err = c.GetDevice(ctx, router.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.AdvertisedRoutes, []string{"10.0.0.0/16"}) || len(got.EnabledRoutes) != 0 || !got.Authorized || got.User != "tagged-devices" {
		t.Errorf("router %+v", got)
	}

	if err := c.SetDeviceRoutes(ctx, router.NodeID, []string{"10.0.0.0/16"}); err != nil {
		t.Fatal(err)
	}
	adv, en, err := c.DeviceRoutes(ctx, router.NodeID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(adv, []string{"10.0.0.0/16"}) || !slices.Equal(en, []string{"10.0.0.0/16"}) {
		t.Errorf("routes %v %v", adv, en)
	}
	if n := e.srv.Topology().Nodes["vpc-router"]; !slices.Equal(n.ApprovedRoutes, []string{"10.0.0.0/16"}) {
		t.Errorf("fake did not record the approval: %+v", n)
	}
	if err := c.SetDeviceRoutes(ctx, router.NodeID, nil); err != nil {
		t.Fatal(err)
	}
	if _, en, _ := c.DeviceRoutes(ctx, router.NodeID); len(en) != 0 {
		t.Errorf("routes not cleared: %v", en)
	}

	if err := c.DeleteDevice(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	err = c.DeleteDevice(ctx, old.ID)
	if !IsNotFound(err) {
		t.Fatalf("second delete: %v", err)
	}
	ae, _ := AsAPIError(err)
	if ae.Method != "DELETE" || ae.Path != "/tailscale/api/v2/device/"+old.ID || ae.Message != "no manageable device matching this ID found" {
		t.Errorf("error %+v", ae)
	}
	if _, err := c.GetDevice(ctx, old.NodeID); !IsNotFound(err) {
		t.Errorf("get deleted: %v", err)
	}
	if _, _, err := c.DeviceRoutes(ctx, "nope"); !IsNotFound(err) {
		t.Errorf("routes of nothing: %v", err)
	}
}

func TestErrorTyping(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	c := e.client(Config{})
	ctx := t.Context()

	// A rejected policy with failing tests: the message, every test and
	// the status are in Error(); data entries that are plain strings are
	// kept.
	e.srv.Faults().Add(faults.Rule{
		Route:  "POST /tailscale/api/v2/tailnet/{tailnet}/acl",
		Status: 400,
		Body: json.RawMessage(`{"message":"test(s) failed","data":[` +
			`{"user":"alice@example.com","errors":["address \"2.2.2.2:22\": want: Drop, got: Accept"]},` +
			`{"user":"group:eng","warnings":["SCIM group has no members"]},` +
			`"bare string"]}`),
	})
	_, err := c.SetPolicy(ctx, []byte(operatorPolicy), "")
	ae, ok := AsAPIError(err)
	if !ok || ae.Status != 400 || len(ae.Data) != 3 || ae.Data[2].Errors[0] != "bare string" {
		t.Fatalf("error %#v", err)
	}
	want := `tailscale API POST /tailscale/api/v2/tailnet/-/acl: test(s) failed: ` +
		`alice@example.com: address "2.2.2.2:22": want: Drop, got: Accept; ` +
		`group:eng (warning): SCIM group has no members; (no source): bare string (HTTP 400)`
	if err.Error() != want {
		t.Errorf("Error()\n got %q\nwant %q", err.Error(), want)
	}
	if ae.HTTPStatus() != 400 {
		t.Error("HTTPStatus")
	}

	// A body that is not JSON still gives the status and what it said,
	// where client v2 alone would return a *json.SyntaxError.
	e.srv.Faults().Add(faults.Rule{Route: "GET /tailscale/api/v2/tailnet/{tailnet}/devices", Status: 500, Body: json.RawMessage("upstream exploded"), Count: 100})
	_, err = c.ListDevices(ctx, ListDevicesOptions{})
	if ae, ok := AsAPIError(err); !ok || ae.Status != 500 || ae.Message != "upstream exploded" || ae.Path != "/tailscale/api/v2/tailnet/-/devices" {
		t.Errorf("non-JSON error: %#v", err)
	}

	// Errors of calls made directly through API() convert as well.
	_, err = c.API().Devices().Get(ctx, "nope")
	var v2 tailscale.APIError
	if !errors.As(err, &v2) || !IsNotFound(err) {
		t.Errorf("client v2 error: %v", err)
	}
	if ae, ok := AsAPIError(err); !ok || ae.Status != 404 || ae.Message != "no manageable device matching this ID found" {
		t.Errorf("converted %+v", ae)
	}

	if IsNotFound(errors.New("404")) || IsNotFound(nil) {
		t.Error("plain errors are not API errors")
	}
	if s := (&APIError{Status: 503, Attempts: 4}).Error(); s != "tailscale API Service Unavailable (HTTP 503, after 4 attempts)" {
		t.Errorf("bare error %q", s)
	}
}

func TestKeys(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	c := e.client(Config{})
	ctx := t.Context()
	scopes := []string{"devices:core", "auth_keys", "services"}

	_, _, err := c.CreateOAuthClient(ctx, scopes, []string{"tag:k8s-operator"}, "eu-west-3-operator")
	if ae, ok := AsAPIError(err); !ok || ae.Status != 400 || !strings.Contains(ae.Message, "tag:k8s-operator") {
		t.Fatalf("undeclared tag: %v", err)
	}
	e.setPolicy(operatorPolicy)
	id, secret, err := c.CreateOAuthClient(ctx, scopes, []string{"tag:k8s-operator"}, "eu-west-3-operator")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "tskey-client-") {
		t.Errorf("secret %q", secret)
	}
	if tags, _, ok := e.srv.CheckOAuthClient(id, secret); !ok || tags[0] != "tag:k8s-operator" {
		t.Error("the fake does not know the new client")
	}

	k, err := c.GetKey(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if k.ID != id || k.KeyType != "client" || !slices.Equal(k.Scopes, scopes) || !slices.Equal(k.Tags, []string{"tag:k8s-operator"}) ||
		k.Invalid || !k.Revoked.IsZero() || k.Description != "eu-west-3-operator" || k.Created.IsZero() {
		t.Errorf("key %+v", k)
	}
	if q := e.rec.last(t, "GET", "/keys/"+id); q.URL.Path != "/tailscale/api/v2/tailnet/-/keys/"+id {
		t.Errorf("GET path %q", q.URL.Path)
	}
	// The secret was shown once, at creation: reads never carry it.
	if raw, err := c.API().Keys().Get(ctx, id); err != nil || raw.Key != "" {
		t.Errorf("key read back with its secret: %q %v", raw.Key, err)
	}

	// The new client works as the operator would use it.
	oc := e.client(Config{OAuthClientID: id, OAuthClientSecret: secret})
	if _, err := oc.ListDevices(ctx, ListDevicesOptions{}); err != nil {
		t.Fatal(err)
	}
	authID, authKey, err := oc.CreateAuthKey(ctx, AuthKeyOptions{Preauthorized: true, Tags: []string{"tag:k8s"}, Expiry: 24 * time.Hour, Description: "proxy"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(authKey, "tskey-auth-") {
		t.Errorf("auth key %q", authKey)
	}
	ak, err := c.GetKey(ctx, authID)
	if err != nil {
		t.Fatal(err)
	}
	if ak.KeyType != "auth" || ak.Expiry != 24*time.Hour || !ak.Preauthorized || ak.Reusable || !slices.Equal(ak.Tags, []string{"tag:k8s"}) {
		t.Errorf("auth key metadata %+v", ak)
	}
	if d := time.Until(ak.Expires); d < 23*time.Hour || d > 25*time.Hour {
		t.Errorf("expires %v", ak.Expires)
	}

	// Deleting the client revokes it; its cached token stops working.
	if err := c.DeleteKey(ctx, id); err != nil {
		t.Fatal(err)
	}
	k, err = c.GetKey(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !k.Invalid || k.Revoked.IsZero() {
		t.Errorf("after delete %+v", k)
	}
	if err := c.DeleteKey(ctx, id); !IsNotFound(err) {
		t.Errorf("second delete: %v", err)
	}
	if _, err := oc.ListDevices(ctx, ListDevicesOptions{}); err == nil {
		t.Error("a deleted client's token still works")
	} else if ae, ok := AsAPIError(err); !ok || ae.Status != 401 {
		t.Errorf("deleted client: %v", err)
	}
}
