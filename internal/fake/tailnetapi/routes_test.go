package tailnetapi

import (
	"slices"
	"strings"
	"testing"
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
	if want := []string{"10.1.0.0/16", "0.0.0.0/0", "::/0"}; !slices.Equal(d.EnabledRoutes, want) {
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
