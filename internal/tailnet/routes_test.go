package tailnet

import (
	"slices"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

func TestSortRoutes(t *testing.T) {
	got := SortRoutes([]string{"::/0", "10.0.1.0/24", "not a route", "fd00::/64", "2.0.0.0/24", "10.0.0.0/16", "1.2.0.0/16", "0.0.0.0/0", "10.0.0.0/8"})
	want := []string{"0.0.0.0/0", "1.2.0.0/16", "2.0.0.0/24", "10.0.0.0/8", "10.0.0.0/16", "10.0.1.0/24", "::/0", "fd00::/64", "not a route"}
	if !slices.Equal(got, want) {
		t.Errorf("SortRoutes = %v, want %v", got, want)
	}
	if SortRoutes(nil) != nil {
		t.Error("SortRoutes(nil) is not nil")
	}
}

// Enabled routes read back in the API's order, sorted by address, however
// they were sent; qtail sorts them the same way itself, so a list it keeps
// after enabling routes equals the next read, also against a server that
// keeps the order sent.
func TestEnabledRoutesReadSorted(t *testing.T) {
	sent := []string{"10.0.1.0/24", "::/0", "2.0.0.0/24", "0.0.0.0/0", "1.2.0.0/16"}
	want := SortRoutes(slices.Clone(sent))
	for name, compat := range map[string]tailnetapi.Compat{"real": {}, "as sent": {EnabledRoutesAsSent: true}} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, tailnetapi.Options{Compat: compat})
			d := e.srv.AddDevice(tailnetapi.DeviceSpec{Hostname: "router", AdvertisedRoutes: sent})
			c := e.client(Config{})
			if err := c.SetDeviceRoutes(t.Context(), d.NodeID, sent); err != nil {
				t.Fatal(err)
			}
			_, enabled, err := c.DeviceRoutes(t.Context(), d.NodeID)
			if err != nil || !slices.Equal(enabled, want) {
				t.Errorf("DeviceRoutes: enabled %v, %v; want %v", enabled, err, want)
			}
			dev, err := c.GetDevice(t.Context(), d.NodeID)
			if err != nil || !slices.Equal(dev.EnabledRoutes, want) {
				t.Errorf("GetDevice: enabled %v, %v; want %v", dev, err, want)
			}
			if !slices.Equal(dev.AdvertisedRoutes, sent) {
				t.Errorf("GetDevice: advertised %v, want them as advertised %v", dev.AdvertisedRoutes, sent)
			}
		})
	}
}
