package tailnetapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

// listDevices returns the raw device objects of a list answer.
func listDevices(t *testing.T, r reply) []map[string]any {
	t.Helper()
	var out struct {
		Devices []map[string]any `json:"devices"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	return out.Devices
}

func TestDeviceListFieldsAndFilters(t *testing.T) {
	h := newHarness(t, Options{MagicDNSSuffix: "tail1234.ts.net"})
	web := h.srv.AddDevice(DeviceSpec{Hostname: "web", Tags: []string{"tag:k8s", "tag:prod"}, AdvertisedRoutes: []string{"10.0.0.0/16"}})
	web2 := h.srv.AddDevice(DeviceSpec{Hostname: "web", Tags: []string{"tag:k8s"}, Offline: true})
	laptop := h.srv.AddDevice(DeviceSpec{Hostname: "Odin's Laptop", User: "odin@example.com", OS: "macOS"})

	if web.Name != "web.tail1234.ts.net" || web2.Name != "web-1.tail1234.ts.net" || laptop.Name != "odin-s-laptop.tail1234.ts.net" {
		t.Errorf("MagicDNS names %q %q %q", web.Name, web2.Name, laptop.Name)
	}
	if !strings.HasPrefix(web.NodeID, "n") || !strings.HasSuffix(web.NodeID, "CNTRL") || web.ID == "" || web.ID == web2.ID {
		t.Errorf("ids %q %q %q", web.ID, web.NodeID, web2.ID)
	}
	if len(web.Addresses) != 2 || !strings.HasPrefix(web.Addresses[0], "100.") || !strings.HasPrefix(web.Addresses[1], "fd7a:115c:a1e0::") {
		t.Errorf("addresses %v", web.Addresses)
	}

	all := listDevices(t, h.do("GET", "/api/v2/tailnet/-/devices", "", nil).want(t, 200))
	if len(all) != 3 {
		t.Fatalf("%d devices", len(all))
	}
	for _, d := range all {
		for _, k := range []string{"advertisedRoutes", "enabledRoutes", "clientConnectivity"} {
			if _, ok := d[k]; ok {
				t.Errorf("default fields include %q", k)
			}
		}
	}
	if _, ok := all[0]["lastSeen"]; ok {
		t.Error("lastSeen sent for a connected device")
	}
	ls, _ := all[1]["lastSeen"].(string)
	if _, err := time.Parse(time.RFC3339, ls); err != nil {
		t.Errorf("offline device lastSeen %q: %v", ls, err)
	}
	if all[2]["user"] != "odin@example.com" || all[2]["os"] != "macOS" {
		t.Errorf("user device %v", all[2])
	}

	full := listDevices(t, h.do("GET", "/api/v2/tailnet/example.com/devices?fields=all", "", nil).want(t, 200))
	adv, _ := full[0]["advertisedRoutes"].([]any)
	if len(adv) != 1 || adv[0] != "10.0.0.0/16" || full[0]["clientConnectivity"] == nil {
		t.Errorf("fields=all device %v", full[0])
	}
	if en, ok := full[0]["enabledRoutes"].([]any); !ok || len(en) != 0 {
		t.Errorf("enabledRoutes %v", full[0]["enabledRoutes"])
	}

	for q, want := range map[string][]string{
		"hostname=web":                    {web.NodeID, web2.NodeID},
		"hostname=web&tags=tag:prod":      {web.NodeID},
		"tags=tag:k8s&tags=tag:prod":      {web.NodeID},
		"tags=tag:k8s":                    {web.NodeID, web2.NodeID},
		"name=web-1.tail1234.ts.net":      {web2.NodeID},
		"connectedToControl=false":        {web2.NodeID},
		"hostname=Odin%27s+Laptop":        {laptop.NodeID},
		"hostname=WEB":                    nil,
		"user=odin@example.com&os=macOS":  {laptop.NodeID},
		"fields=default&nodeId=" + web.ID: nil,
	} {
		got := listDevices(t, h.do("GET", "/api/v2/tailnet/-/devices?"+q, "", nil).want(t, 200))
		var ids []string
		for _, d := range got {
			id, _ := d["nodeId"].(string)
			ids = append(ids, id)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("?%s: %v, want %v", q, ids, want)
		}
	}

	r := h.do("GET", "/api/v2/tailnet/-/devices?colour=blue", "", nil).want(t, 400)
	if !strings.Contains(r.message(t), "colour") {
		t.Errorf("unknown filter message %q", r.message(t))
	}
	h.do("GET", "/api/v2/tailnet/-/devices?fields=some", "", nil).want(t, 400)
}

func TestDeviceGetDeleteRoutesTags(t *testing.T) {
	h := newHarness(t, Options{})
	if err := h.srv.SetPolicyDirect([]byte(operatorPolicy)); err != nil {
		t.Fatal(err)
	}
	d := h.srv.AddDevice(DeviceSpec{Hostname: "router", Tags: []string{"tag:k8s"}, AdvertisedRoutes: []string{"10.1.0.0/16", "10.2.0.0/16"}})

	for _, id := range []string{d.ID, d.NodeID} {
		r := h.do("GET", "/api/v2/device/"+id, "", nil).want(t, 200)
		if m := r.json(t); m["nodeId"] != d.NodeID || m["advertisedRoutes"] != nil {
			t.Errorf("GET by %s: %v", id, m)
		}
	}
	if m := h.do("GET", "/api/v2/device/"+d.NodeID+"?fields=all", "", nil).want(t, 200).json(t); m["advertisedRoutes"] == nil {
		t.Errorf("fields=all omitted routes: %v", m)
	}
	// An id with an escaped slash stays one path segment.
	if msg := h.do("GET", "/api/v2/device/a%2Fb", "", nil).want(t, 404).message(t); msg != "no manageable device matching this ID found" {
		t.Errorf("message %q", msg)
	}

	r := h.do("GET", "/api/v2/device/"+d.NodeID+"/routes", "", nil).want(t, 200)
	if string(r.body) != `{"advertisedRoutes":["10.1.0.0/16","10.2.0.0/16"],"enabledRoutes":[]}` {
		t.Errorf("routes %s", r.body)
	}
	r = h.do("POST", "/api/v2/device/"+d.ID+"/routes", `{"routes":["10.1.0.0/16","192.168.0.0/24"]}`, nil).want(t, 200)
	if string(r.body) != `{"advertisedRoutes":["10.1.0.0/16","10.2.0.0/16"],"enabledRoutes":["10.1.0.0/16","192.168.0.0/24"]}` {
		t.Errorf("set routes %s", r.body)
	}
	h.do("POST", "/api/v2/device/"+d.ID+"/routes", `{"routes":["10.1.0.1/16"]}`, nil).want(t, 400)
	h.do("POST", "/api/v2/device/"+d.ID+"/routes", `{"routes":["ten"]}`, nil).want(t, 400)
	node := h.srv.Topology().Nodes["router"]
	if !slices.Equal(node.ApprovedRoutes, []string{"10.1.0.0/16", "192.168.0.0/24"}) || len(node.RoutableIPs) != 2 {
		t.Errorf("topology node %+v", node)
	}

	// The documented answer to tags the policy does not declare.
	if msg := h.do("POST", "/api/v2/device/"+d.ID+"/tags", `{"tags":["tag:k8s","tag:nope","tag:madeup"]}`, nil).want(t, 400).message(t); msg != "requested tags [tag:nope tag:madeup] are invalid or not permitted" {
		t.Errorf("undeclared tag message %q", msg)
	}
	if r := h.do("POST", "/api/v2/device/"+d.ID+"/tags", `{"tags":["tag:k8s","tag:other"]}`, nil).want(t, 200); string(r.body) != "{}" {
		t.Errorf("set tags answered %s, want an empty JSON object", r.body)
	}
	if got := h.srv.Devices()[0].Tags; !slices.Equal(got, []string{"tag:k8s", "tag:other"}) {
		t.Errorf("tags %v", got)
	}

	h.do("DELETE", "/api/v2/device/"+d.NodeID, "", nil).want(t, 200)
	h.do("DELETE", "/api/v2/device/"+d.NodeID, "", nil).want(t, 404)
	if len(h.srv.Devices()) != 0 {
		t.Error("device not deleted")
	}
}

func TestTopologyRoundTrip(t *testing.T) {
	topo := aclcheck.Topology{
		Users: []aclcheck.User{{ID: 1, Name: "odin", Email: "odin@example.com"}},
		Nodes: map[string]aclcheck.Node{
			"bulbasaur": {Hostname: "bulbasaur", IPv4: "100.65.167.67", IPv6: "fd7a:115c:a1e0::e637:a743", User: "odin", Tags: []string{}, RoutableIPs: []string{}, ApprovedRoutes: []string{}},
			"blastoise": {Hostname: "blastoise", IPv4: "100.67.150.67", IPv6: "fd7a:115c:a1e0::437:9643", Tags: []string{"tag:router"}, RoutableIPs: []string{"10.33.0.0/16"}, ApprovedRoutes: []string{"10.33.0.0/16"}},
		},
	}
	h := newHarness(t, Options{Topology: topo})
	devs := h.srv.Devices()
	if len(devs) != 2 || devs[1].Hostname != "bulbasaur" || devs[1].User != "odin@example.com" || devs[1].Addresses[0] != "100.65.167.67" {
		t.Fatalf("devices %+v", devs)
	}
	got := h.srv.Topology()
	if len(got.Users) != 1 || got.Nodes["bulbasaur"].User != "odin" || got.Nodes["blastoise"].ApprovedRoutes[0] != "10.33.0.0/16" || got.Nodes["blastoise"].IPv6 != "fd7a:115c:a1e0::437:9643" {
		t.Errorf("topology %+v", got)
	}

	h.srv.SetTopology(aclcheck.Topology{})
	h.srv.AddDevice(DeviceSpec{Hostname: "op"})
	h.srv.AddDevice(DeviceSpec{Hostname: "op"})
	if n := h.srv.RemoveDevicesByHostname("op"); n != 2 || len(h.srv.Devices()) != 0 {
		t.Errorf("removed %d", n)
	}
	h.srv.Reset()
	if len(h.srv.Devices()) != 2 {
		t.Error("Reset did not restore the initial topology")
	}
	if !h.srv.RemoveDevice(h.srv.Devices()[0].NodeID) || h.srv.RemoveDevice("nope") {
		t.Error("RemoveDevice")
	}
}

func TestDeviceTagsWithAnOAuthClient(t *testing.T) {
	h := newHarness(t, Options{InitialPolicy: []byte(operatorPolicy)})
	d := h.srv.AddDevice(DeviceSpec{Hostname: "operator", Tags: []string{"tag:k8s-operator"}})
	path := "/api/v2/device/" + d.NodeID + "/tags"

	// Reading devices is not enough.
	reader := bearer(t, h, []string{"devices:core:read"}, nil)
	h.do("POST", path, `{"tags":["tag:k8s"]}`, reader).want(t, 403)

	// A client tagged tag:k8s-operator applies its own tag and tag:k8s,
	// which it owns, but not tag:other, which only admins own.
	writer := bearer(t, h, []string{"devices:core"}, []string{"tag:k8s-operator"})
	if msg := h.do("POST", path, `{"tags":["tag:k8s","tag:other"]}`, writer).want(t, 400).message(t); msg != "requested tags [tag:other] are invalid or not permitted" {
		t.Errorf("message %q", msg)
	}
	h.do("POST", path, `{"tags":["tag:k8s-operator","tag:k8s"]}`, writer).want(t, 200)
	if got, _ := h.srv.Device(d.ID); !slices.Equal(got.Tags, []string{"tag:k8s-operator", "tag:k8s"}) || got.NodeID != d.NodeID {
		t.Errorf("device after retagging: %+v", got)
	}
}

func TestRenameAndDisconnectKeepTheDevice(t *testing.T) {
	h := newHarness(t, Options{MagicDNSSuffix: "tail1.ts.net"})
	d := h.srv.AddDevice(DeviceSpec{Hostname: "operator", Tags: []string{"tag:k8s-operator"}})
	h.srv.AddDevice(DeviceSpec{Hostname: "taken"})

	r, ok := h.srv.RenameDevice(d.NodeID, "taken")
	if !ok || r.ID != d.ID || r.Hostname != "taken" || r.Name != "taken-1.tail1.ts.net" || !slices.Equal(r.Addresses, d.Addresses) || !slices.Equal(r.Tags, d.Tags) {
		t.Fatalf("renamed device %+v (was %+v)", r, d)
	}
	// Renaming to its own name again keeps its MagicDNS name.
	if again, _ := h.srv.RenameDevice(d.ID, "taken"); again.Name != r.Name {
		t.Errorf("MagicDNS name moved from %s to %s", r.Name, again.Name)
	}
	if _, ok := h.srv.RenameDevice("nope", "x"); ok {
		t.Error("renamed a device that does not exist")
	}

	if !h.srv.SetConnected(d.ID, false) {
		t.Fatal("SetConnected lost the device")
	}
	m := h.do("GET", "/api/v2/device/"+d.NodeID, "", nil).want(t, 200).json(t)
	if m["connectedToControl"] != false || m["lastSeen"] == nil {
		t.Errorf("offline device reads %v", m)
	}
	h.srv.SetConnected(d.ID, true)
	if got, _ := h.srv.Device(d.ID); !got.ConnectedToControl {
		t.Error("device still offline")
	}
}
