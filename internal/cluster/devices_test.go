package cluster

import (
	"net/http"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

func TestDeviceIDAndFQDN(t *testing.T) {
	t.Parallel()
	if got := DeviceID(&tailnet.Device{ID: "123", NodeID: "nABCCNTRL"}); got != "nABCCNTRL" {
		t.Errorf("DeviceID with a node ID = %q, want the node ID", got)
	}
	if got := DeviceID(&tailnet.Device{ID: "123"}); got != "123" {
		t.Errorf("DeviceID without a node ID = %q, want the legacy ID", got)
	}
	if got := DeviceFQDN(&tailnet.Device{Name: "web.tail0000.ts.net."}); got != "web.tail0000.ts.net" {
		t.Errorf("DeviceFQDN = %q, want no trailing dot", got)
	}
	if got := DeviceFQDN(&tailnet.Device{Name: "web.tail0000.ts.net"}); got != "web.tail0000.ts.net" {
		t.Errorf("DeviceFQDN of a name without a dot = %q", got)
	}
}

func TestHasTags(t *testing.T) {
	t.Parallel()
	have := []string{"tag:k8s", "tag:web"}
	for _, tc := range []struct {
		want []string
		ok   bool
	}{
		{nil, true},
		{[]string{"tag:web"}, true},
		{[]string{"tag:web", "tag:k8s"}, true},
		{[]string{"tag:web", "tag:db"}, false},
	} {
		if got := HasTags(have, tc.want); got != tc.ok {
			t.Errorf("HasTags(%v, %v) = %v, want %v", have, tc.want, got, tc.ok)
		}
	}
	if HasTags(nil, []string{"tag:k8s"}) {
		t.Error("a device without tags has tag:k8s")
	}
}

// RemoveDevice deletes a device left behind, is content when it is gone
// already, and passes on any other failure.
func TestRemoveDevice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	left := w.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: "tailscale-operator", Tags: []string{"tag:k8s-operator"}, Offline: true})
	kept := w.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: "alice-laptop", User: "alice@example.com"})

	if err := RemoveDevice(w.ctx, w.tn, left.NodeID); err != nil {
		t.Fatalf("RemoveDevice: %v", err)
	}
	if _, ok := w.Tailnet.Device(left.NodeID); ok {
		t.Error("the device is still on the tailnet")
	}
	if _, ok := w.Tailnet.Device(kept.NodeID); !ok {
		t.Error("RemoveDevice removed another device")
	}
	if err := RemoveDevice(w.ctx, w.tn, left.NodeID); err != nil {
		t.Errorf("RemoveDevice of a device already gone: %v", err)
	}

	w.Tailnet.Faults().Add(faults.Rule{Route: "GET /api/v2/device/{id}", Status: http.StatusInternalServerError})
	err := RemoveDevice(w.ctx, w.tn, kept.NodeID)
	if e, ok := tailnet.AsAPIError(err); !ok || e.Status != http.StatusInternalServerError {
		t.Errorf("RemoveDevice when the read fails = %v, want the API's 500", err)
	}
	if _, ok := w.Tailnet.Device(kept.NodeID); !ok {
		t.Error("a device whose read failed was removed")
	}

	w.Tailnet.Faults().Add(faults.Rule{Route: "DELETE /api/v2/device/{id}", Status: http.StatusForbidden})
	err = RemoveDevice(w.ctx, w.tn, kept.NodeID)
	if e, ok := tailnet.AsAPIError(err); !ok || e.Status != http.StatusForbidden {
		t.Errorf("RemoveDevice when the deletion is refused = %v, want the API's 403", err)
	}
	w.Tailnet.Faults().Add(faults.Rule{Route: "DELETE /api/v2/device/{id}", Status: http.StatusNotFound})
	if err := RemoveDevice(w.ctx, w.tn, kept.NodeID); err != nil {
		t.Errorf("RemoveDevice of a device that went between the read and the deletion: %v", err)
	}
}
