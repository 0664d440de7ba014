package manifestservice

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// The devices that a Connector or a ProxyGroup brings up, one per replica,
// as the `devices` attribute reports them.

// deviceWant is what one replica's device must look like.
type deviceWant struct {
	hostnames []string
	tags      []string
	routes    []string
	// proxyClass is the ProxyClass the object names.
	proxyClass string
}

// proxyBlocked returns what a wait for devices tagged tags, of an object
// of the environment envID naming proxyClass, asks at its polls: why the
// operator cannot bring them up (cluster.ProxyCannotAppear).
func (b *serviceBase) proxyBlocked(envID string, tags []string, proxyClass string, operatorDefault bool) func(context.Context) string {
	return cluster.Blocked(func(ctx context.Context) string {
		return cluster.ProxyCannotAppear(ctx, b.Clients, envID, tags, proxyClass, operatorDefault)
	})
}

// matches reports whether d is the device of hostname as wanted: every
// wanted tag, every wanted route advertised.
func (w deviceWant) matches(d *tailnet.Device) bool {
	if !cluster.HasTags(d.Tags, w.tags) {
		return false
	}
	for _, r := range w.routes {
		if !slices.Contains(d.AdvertisedRoutes, r) {
			return false
		}
	}
	return true
}

// findDevices looks the wanted devices up in one list of the tailnet's
// devices (all fields, for the routes). found holds one device per hostname
// that has one (the matching one when several share the hostname), in the
// order of w.hostnames; missing describes each hostname without a matching
// device.
func findDevices(ctx context.Context, tn *tailnet.Client, w deviceWant) (found []tailnet.Device, missing []string, err error) {
	list, err := tn.ListDevices(ctx, tailnet.ListDevicesOptions{AllFields: true})
	if err != nil {
		return nil, nil, err
	}
	byHost := map[string][]tailnet.Device{}
	for _, d := range list {
		byHost[d.Hostname] = append(byHost[d.Hostname], d)
	}
	for _, h := range w.hostnames {
		cands := byHost[h]
		if len(cands) == 0 {
			missing = append(missing, "no device named "+h)
			continue
		}
		// The matching device first, then the online one, then the newest.
		sort.SliceStable(cands, func(i, j int) bool {
			mi, mj := w.matches(&cands[i]), w.matches(&cands[j])
			if mi != mj {
				return mi
			}
			return cands[i].ConnectedToControl && !cands[j].ConnectedToControl
		})
		d := cands[0]
		found = append(found, d)
		if !w.matches(&d) {
			missing = append(missing, describeMismatch(&d, w))
		}
	}
	return found, missing, nil
}

func describeMismatch(d *tailnet.Device, w deviceWant) string {
	if !cluster.HasTags(d.Tags, w.tags) {
		return fmt.Sprintf("device %s (%s) is tagged %s, not %s", d.Hostname, cluster.DeviceID(d), tfx.HCLList(d.Tags), tfx.HCLList(w.tags))
	}
	var lacking []string
	for _, r := range w.routes {
		if !slices.Contains(d.AdvertisedRoutes, r) {
			lacking = append(lacking, r)
		}
	}
	return fmt.Sprintf("device %s (%s) does not advertise %s", d.Hostname, cluster.DeviceID(d), strings.Join(lacking, ", "))
}

// waitForDevices waits until every wanted device is on the tailnet. While
// some are missing, blocked (nil: never) says why they cannot come, which
// stops the wait with a *cluster.NoProxyError.
func waitForDevices(ctx context.Context, tn *tailnet.Client, w deviceWant, poll time.Duration, blocked func(context.Context) string) ([]tailnet.Device, error) {
	last := "nothing yet"
	wait := tfx.StartWait(ctx, "the devices "+strings.Join(w.hostnames, ", ")+" to join the tailnet")
	for {
		found, missing, err := findDevices(ctx, tn, w)
		if err != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("listing the tailnet's devices: %w", err)
		}
		if err == nil && len(missing) == 0 {
			return found, nil
		}
		if err == nil {
			last = strings.Join(missing, "; ")
			if blocked != nil {
				if why := blocked(ctx); why != "" {
					return nil, &cluster.NoProxyError{Reason: why}
				}
			}
		}
		if wait.Sleep(ctx, poll, last) != nil {
			return nil, fmt.Errorf("%w waiting for the devices %s to join the tailnet (last seen: %s)",
				cluster.ErrTimedOut, strings.Join(w.hostnames, ", "), last)
		}
	}
}

// approveRoutes enables routes on every device that advertises them and has
// not enabled them yet, keeping the routes already enabled. It returns the
// devices as they are afterwards.
func approveRoutes(ctx context.Context, tn *tailnet.Client, devices []tailnet.Device, routes []string) ([]tailnet.Device, error) {
	out := slices.Clone(devices)
	for i := range out {
		d := &out[i]
		enabled := slices.Clone(d.EnabledRoutes)
		changed := false
		for _, r := range routes {
			if slices.Contains(d.AdvertisedRoutes, r) && !slices.Contains(enabled, r) {
				enabled = append(enabled, r)
				changed = true
			}
		}
		if !changed {
			continue
		}
		if err := tn.SetDeviceRoutes(ctx, cluster.DeviceID(d), enabled); err != nil {
			return nil, fmt.Errorf("approving the routes of device %s (%s): %w", d.Hostname, cluster.DeviceID(d), err)
		}
		// The API reports enabled routes sorted by address, whatever the
		// order sent: keep them so, as the next read has them.
		d.EnabledRoutes = tailnet.SortRoutes(enabled)
	}
	return out, nil
}

// routesApprovedOn reports whether every device enables every route.
func routesApprovedOn(devices []tailnet.Device, routes []string) bool {
	for _, d := range devices {
		for _, r := range routes {
			if !slices.Contains(d.EnabledRoutes, r) {
				return false
			}
		}
	}
	return true
}

// devicesComplete reports whether the `devices` attribute holds a device
// for each wanted hostname.
func devicesComplete(ctx context.Context, l types.List, want []string) bool {
	have, _ := stateDevices(ctx, l)
	for _, h := range want {
		if !slices.Contains(have, h) {
			return false
		}
	}
	return true
}

// removeLeftoverDevices removes the devices that are still on the tailnet
// after their Helm service is gone: a Kubernetes object deleted while the
// operator does not run leaves its devices behind, offline.
func removeLeftoverDevices(ctx context.Context, tn *tailnet.Client, ids []string) error {
	for _, id := range ids {
		if err := cluster.RemoveDevice(ctx, tn, id); err != nil {
			return fmt.Errorf("removing device %s: %w", id, err)
		}
	}
	return nil
}

// withDevices is a manifest model whose object brings up devices on the
// tailnet, one per replica: a Connector or a ProxyGroup.
type withDevices interface {
	// waitsForDevices is wait_for_devices.
	waitsForDevices() bool
	// devicesAttr is the `devices` attribute.
	devicesAttr() *types.List
	// wantedDevices is what the devices must look like; the attributes
	// must be known.
	wantedDevices(ctx context.Context) (deviceWant, diag.Diagnostics)
}

// setDevices records devices in the `devices` attribute of m.
func setDevices(m withDevices, devices []tailnet.Device, diags *diag.Diagnostics) {
	l, d := devicesValue(devices)
	diags.Append(d...)
	*m.devicesAttr() = l
}

// awaitDevices waits, after the deployment d of a manifest service of kind
// k in the environment envID, until the devices of m are on the tailnet,
// and records them. ok is false when there is nothing more to do: tn is nil
// (wait_for_devices is off) or the wait failed (the error is in diags). It
// stops at once when the operator cannot bring them up (proxyBlocked).
func (b *serviceBase) awaitDevices(ctx context.Context, k manifestKind, m withDevices, envID string, tn *tailnet.Client, d cluster.Deployment,
	diags *diag.Diagnostics) (devices []tailnet.Device, want deviceWant, ok bool) {
	if tn == nil {
		*m.devicesAttr() = types.ListNull(manifestDeviceType)
		return nil, want, false
	}
	want, dd := m.wantedDevices(ctx)
	diags.Append(dd...)
	devices, err := waitForDevices(ctx, tn, want, d.Poll, b.proxyBlocked(envID, want.tags, want.proxyClass, k.operatorDefaultClass))
	if err != nil {
		d.Failed(diags, "waiting for "+k.possessive()+" devices", err)
		return nil, want, false
	}
	setDevices(m, devices, diags)
	return devices, want, true
}

// observeDevices looks the devices of m up on the tailnet and records those
// that are as wanted. complete is true when every replica has one; warn
// adds a warning when some are missing while m waits for them. ok is false
// when the lookup failed (the error is in diags).
func observeDevices(ctx context.Context, k manifestKind, m withDevices, tn *tailnet.Client, warn bool,
	diags *diag.Diagnostics) (devices []tailnet.Device, want deviceWant, complete, ok bool) {
	want, dd := m.wantedDevices(ctx)
	diags.Append(dd...)
	found, missing, err := findDevices(ctx, tn, want)
	if err != nil {
		tfx.APIError(diags, "look for "+k.possessive()+" devices on the tailnet", err)
		return nil, want, false, false
	}
	if len(missing) > 0 && warn && m.waitsForDevices() {
		diags.AddWarning(tfx.TitleCase(k.noun)+" Devices Missing",
			fmt.Sprintf("The %s lacks devices on the tailnet: %s. qtail plans to redeploy it so that they join again.",
				k.noun, strings.Join(missing, "; ")))
	}
	devices = matchingDevices(found, want)
	setDevices(m, devices, diags)
	return devices, want, len(missing) == 0, true
}

// matchingDevices keeps the devices that are as wanted.
func matchingDevices(found []tailnet.Device, w deviceWant) []tailnet.Device {
	out := make([]tailnet.Device, 0, len(found))
	for i := range found {
		if w.matches(&found[i]) {
			out = append(out, found[i])
		}
	}
	return out
}
