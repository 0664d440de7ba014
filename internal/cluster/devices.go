package cluster

import (
	"context"
	"slices"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// DeviceID is the ID qtail keeps for a device: its node ID, which the API
// prefers, or the legacy numeric ID when the API sent no node ID.
func DeviceID(d *tailnet.Device) string {
	if d.NodeID != "" {
		return d.NodeID
	}
	return d.ID
}

// DeviceFQDN is the MagicDNS name of a device, without a trailing dot.
func DeviceFQDN(d *tailnet.Device) string {
	return strings.TrimSuffix(d.Name, ".")
}

// HasTags reports whether have holds every tag of want.
func HasTags(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// RemoveDevice makes sure a device has left the tailnet: an uninstalled
// operator, or an object deleted while the operator does not run, leaves
// its device behind (offline), so qtail removes it.
func RemoveDevice(ctx context.Context, tn *tailnet.Client, id string) error {
	if _, err := tn.GetDevice(ctx, id); err != nil {
		if tailnet.IsNotFound(err) {
			return nil
		}
		return err
	}
	if err := tn.DeleteDevice(ctx, id); err != nil && !tailnet.IsNotFound(err) {
		return err
	}
	return nil
}
