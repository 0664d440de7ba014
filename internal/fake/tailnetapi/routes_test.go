package tailnetapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

const approverPolicy = `{
	"tagOwners": {"tag:k8s": [], "tag:other": []},
	"autoApprovers": {
		"routes":   {"10.0.0.0/8": ["tag:k8s"]},
		"exitNode": ["tag:k8s"],
	},
}`

func TestSetAdvertisedRoutesApprovesWhenAdvertised(t *testing.T) {
	s := New(Options{InitialPolicy: []byte(approverPolicy)})
	router := s.AddDevice(DeviceSpec{Hostname: "router", Tags: []string{"tag:k8s"}})
	other := s.AddDevice(DeviceSpec{Hostname: "other", Tags: []string{"tag:other"}})

	d, err := s.SetAdvertisedRoutes(router.ID, []string{"10.1.0.0/16", "192.168.0.0/24", "0.0.0.0/0", "::/0"})
	if err != nil {
		t.Fatal(err)
	}
	// Enabled routes read back sorted by address, as on the real API.
	if want := []string{"0.0.0.0/0", "10.1.0.0/16", "::/0"}; !slices.Equal(d.EnabledRoutes, want) {
		t.Fatalf("enabled %v, want %v", d.EnabledRoutes, want)
	}
	if len(d.AdvertisedRoutes) != 4 {
		t.Fatalf("advertised %v", d.AdvertisedRoutes)
	}
	if d, _ := s.SetAdvertisedRoutes(other.ID, []string{"10.2.0.0/16"}); len(d.EnabledRoutes) != 0 {
		t.Fatalf("a device of another tag got %v approved", d.EnabledRoutes)
	}

	// A policy that approves more later does not approve what is already
	// advertised; a newly advertised route is approved.
	if err := s.SetPolicyDirect([]byte(`{"tagOwners": {"tag:k8s": [], "tag:other": []}, "autoApprovers": {"routes": {"0.0.0.0/0": ["tag:k8s", "tag:other"]}}}`)); err != nil {
		t.Fatal(err)
	}
	d, _ = s.SetAdvertisedRoutes(router.ID, []string{"10.1.0.0/16", "192.168.0.0/24", "0.0.0.0/0", "::/0"})
	if slices.Contains(d.EnabledRoutes, "192.168.0.0/24") {
		t.Fatal("a route advertised before the policy change was approved on re-advertising")
	}
	d, _ = s.SetAdvertisedRoutes(router.ID, []string{"10.1.0.0/16", "192.168.0.0/24", "172.16.0.0/12"})
	if !slices.Contains(d.EnabledRoutes, "172.16.0.0/12") {
		t.Fatalf("a newly advertised route was not approved: %v", d.EnabledRoutes)
	}
	// Enabled routes stay enabled when no longer advertised.
	if !slices.Contains(d.EnabledRoutes, "0.0.0.0/0") || slices.Contains(d.AdvertisedRoutes, "0.0.0.0/0") {
		t.Fatalf("advertised %v, enabled %v", d.AdvertisedRoutes, d.EnabledRoutes)
	}

	// By hand: approve one, revoke the rest.
	d, err = s.SetEnabledRoutes(router.ID, []string{"192.168.0.0/24"})
	if err != nil || !slices.Equal(d.EnabledRoutes, []string{"192.168.0.0/24"}) {
		t.Fatalf("SetEnabledRoutes: %v, %v", d.EnabledRoutes, err)
	}
	if got, ok := s.Device(router.NodeID); !ok || !slices.Equal(got.EnabledRoutes, []string{"192.168.0.0/24"}) {
		t.Fatalf("Device(node id) = %+v, %v", got, ok)
	}
}

func TestRouteSettersRefuse(t *testing.T) {
	s := New(Options{})
	d := s.AddDevice(DeviceSpec{Hostname: "router"})
	for _, tc := range []struct {
		name, id string
		routes   []string
		want     string
	}{
		{"not a prefix", d.ID, []string{"10.0.0.0"}, `invalid route "10.0.0.0": not a CIDR prefix`},
		{"host bits", d.ID, []string{"10.0.0.1/16"}, `host bits are set (did you mean 10.0.0.0/16?)`},
		{"no device", "12345", []string{"10.0.0.0/16"}, errNoDevice},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, set := range map[string]func(string, []string) (Device, error){"advertised": s.SetAdvertisedRoutes, "enabled": s.SetEnabledRoutes} {
				if _, err := set(tc.id, tc.routes); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: error %v, want %q", name, err, tc.want)
				}
			}
		})
	}
	if _, ok := s.Device("12345"); ok {
		t.Fatal("Device found a device that does not exist")
	}
}

func TestRoutesAreStoredInCanonicalForm(t *testing.T) {
	s := New(Options{})
	d := s.AddDevice(DeviceSpec{Hostname: "router", Tags: []string{"tag:k8s"}})
	got, err := s.SetAdvertisedRoutes(d.ID, []string{"FD00:0::/64", "10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"fd00::/64", "10.0.0.0/8"}; !slices.Equal(got.AdvertisedRoutes, want) {
		t.Errorf("advertised %v, want %v", got.AdvertisedRoutes, want)
	}
	got, err = s.SetEnabledRoutes(d.ID, []string{"FD00::/64"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"fd00::/64"}; !slices.Equal(got.EnabledRoutes, want) {
		t.Errorf("enabled %v, want %v", got.EnabledRoutes, want)
	}
}

// sortedRoutesPolicy approves every route the tests below advertise.
const sortedRoutesPolicy = `{
	"tagOwners": {"tag:k8s": []},
	"autoApprovers": {"routes": {"0.0.0.0/0": ["tag:k8s"], "::/0": ["tag:k8s"]}},
}`

// The real API reports a device's enabled routes sorted by address (IPv4
// first, then by prefix length), whatever the order they were sent or
// approved in: the official provider's acceptance tests compare them with
// reflect.DeepEqual.
func TestEnabledRoutesAreSortedByAddress(t *testing.T) {
	h := newHarness(t, Options{InitialPolicy: []byte(sortedRoutesPolicy)})
	d := h.srv.AddDevice(DeviceSpec{Hostname: "router", Tags: []string{"tag:k8s"}})
	sent := `{"routes":["10.0.1.0/24","fd00::/64","2.0.0.0/24","::/0","10.0.0.0/16","1.2.0.0/16","0.0.0.0/0","10.0.0.0/8"]}`
	want := []string{"0.0.0.0/0", "1.2.0.0/16", "2.0.0.0/24", "10.0.0.0/8", "10.0.0.0/16", "10.0.1.0/24", "::/0", "fd00::/64"}
	routes := func(r reply) []string {
		t.Helper()
		var body struct {
			EnabledRoutes []string `json:"enabledRoutes"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		return body.EnabledRoutes
	}
	if got := routes(h.do("POST", "/api/v2/device/"+d.NodeID+"/routes", sent, nil).want(t, 200)); !slices.Equal(got, want) {
		t.Errorf("POST answer: enabled %v, want %v", got, want)
	}
	if got := routes(h.do("GET", "/api/v2/device/"+d.ID+"/routes", "", nil).want(t, 200)); !slices.Equal(got, want) {
		t.Errorf("GET routes: enabled %v, want %v", got, want)
	}
	if got := routes(h.do("GET", "/api/v2/device/"+d.ID+"?fields=all", "", nil).want(t, 200)); !slices.Equal(got, want) {
		t.Errorf("GET device: enabled %v, want %v", got, want)
	}

	// Routes approved as they are advertised join the sorted list.
	if _, err := h.srv.SetEnabledRoutes(d.ID, []string{"10.0.1.0/24"}); err != nil {
		t.Fatal(err)
	}
	got, err := h.srv.SetAdvertisedRoutes(d.ID, []string{"fd00::/64", "192.168.0.0/24", "1.2.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1.2.0.0/16", "10.0.1.0/24", "192.168.0.0/24", "fd00::/64"}; !slices.Equal(got.EnabledRoutes, want) {
		t.Errorf("after advertising: enabled %v, want %v", got.EnabledRoutes, want)
	}
	// So do the routes of a topology.
	h.srv.SetTopology(aclcheck.Topology{Nodes: map[string]aclcheck.Node{"r": {Tags: []string{"tag:k8s"}, ApprovedRoutes: []string{"::/0", "10.0.0.0/8", "0.0.0.0/0"}}}})
	if ds := h.srv.Devices(); len(ds) != 1 || !slices.Equal(ds[0].EnabledRoutes, []string{"0.0.0.0/0", "10.0.0.0/8", "::/0"}) {
		t.Errorf("topology: %+v", ds)
	}
}

// Compat.EnabledRoutesAsSent keeps the order the routes were sent or
// approved in.
func TestCompatEnabledRoutesAsSent(t *testing.T) {
	h := newHarness(t, Options{InitialPolicy: []byte(sortedRoutesPolicy), Compat: Compat{EnabledRoutesAsSent: true}})
	d := h.srv.AddDevice(DeviceSpec{Hostname: "router", Tags: []string{"tag:k8s"}})
	r := h.do("POST", "/api/v2/device/"+d.ID+"/routes", `{"routes":["10.0.1.0/24","2.0.0.0/24"]}`, nil).want(t, 200)
	if !strings.Contains(string(r.body), `"enabledRoutes":["10.0.1.0/24","2.0.0.0/24"]`) {
		t.Errorf("answer %s", r.body)
	}
	got, err := h.srv.SetAdvertisedRoutes(d.ID, []string{"10.1.0.0/16", "0.0.0.0/0", "::/0"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"10.0.1.0/24", "2.0.0.0/24", "10.1.0.0/16", "0.0.0.0/0", "::/0"}; !slices.Equal(got.EnabledRoutes, want) {
		t.Errorf("enabled %v, want %v", got.EnabledRoutes, want)
	}
}
