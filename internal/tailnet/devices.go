package tailnet

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	tailscale "tailscale.com/client/tailscale/v2"

	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// Device is a device of the tailnet.
type Device struct {
	// ID is the legacy numeric id; NodeID the preferred one. Either
	// addresses the device.
	ID     string
	NodeID string
	// Name is the MagicDNS name (FQDN, no trailing dot). When several
	// devices share a hostname, all but the first get a numeric suffix
	// ("host-1"), so match on Hostname rather than on Name.
	Name      string
	Hostname  string
	Addresses []string
	Tags      []string
	// User is the owner's login name.
	User       string
	Authorized bool
	// AdvertisedRoutes and EnabledRoutes are only filled by calls that
	// read all fields (GetDevice, FindDeviceByHostname, or ListDevices
	// with AllFields). EnabledRoutes are sorted by SortRoutes, as the API
	// reports them.
	AdvertisedRoutes []string
	EnabledRoutes    []string
	// ConnectedToControl is true while the device is online; LastSeen is
	// then zero.
	ConnectedToControl bool
	LastSeen           time.Time
}

// ListDevicesOptions selects the devices and fields ListDevices returns.
type ListDevicesOptions struct {
	// AllFields also returns the route lists (fields=all).
	AllFields bool
	// Filters are server-side exact-match filters on top-level device
	// fields, e.g. {"hostname": {"web"}} or {"tags": {"tag:k8s"}}; a
	// repeated value of a list field requires all of them.
	Filters map[string][]string
}

func fromV2Device(d tailscale.Device) Device {
	out := Device{
		ID:                 d.ID,
		NodeID:             d.NodeID,
		Name:               strings.TrimSuffix(d.Name, "."),
		Hostname:           d.Hostname,
		Addresses:          d.Addresses,
		Tags:               d.Tags,
		User:               d.User,
		Authorized:         d.Authorized,
		AdvertisedRoutes:   d.AdvertisedRoutes,
		EnabledRoutes:      SortRoutes(d.EnabledRoutes),
		ConnectedToControl: d.ConnectedToControl,
	}
	if d.LastSeen != nil {
		out.LastSeen = d.LastSeen.Time
	}
	return out
}

// devicePath is the path of /device/{id} for error messages.
func (c *Client) devicePath(id string, elem ...string) string {
	parts := append([]string{"api", "v2", "device", url.PathEscape(id)}, elem...)
	return c.base.JoinPath(parts...).Path
}

// ListDevices lists the tailnet's devices.
func (c *Client) ListDevices(ctx context.Context, opts ListDevicesOptions) ([]Device, error) {
	var list []tailscale.Device
	err := c.call(ctx, http.MethodGet, c.tailnetURL("devices").Path, func(ctx context.Context) error {
		var o []tailscale.ListDevicesOptions
		if opts.AllFields {
			o = append(o, tailscale.WithFields(tailscale.IncludeFieldsAll))
		}
		keys := make([]string, 0, len(opts.Filters))
		for k := range opts.Filters {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			o = append(o, tailscale.WithFilter(k, opts.Filters[k]))
		}
		var err error
		list, err = c.api.Devices().List(ctx, o...)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Device, 0, len(list))
	for _, d := range list {
		out = append(out, fromV2Device(d))
	}
	return out, nil
}

// GetDevice reads one device, all fields included, by id or node id.
func (c *Client) GetDevice(ctx context.Context, id string) (*Device, error) {
	var d *tailscale.Device
	err := c.call(ctx, http.MethodGet, c.devicePath(id), func(ctx context.Context) error {
		var err error
		d, err = c.api.Devices().GetWithAllFields(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := fromV2Device(*d)
	return &out, nil
}

// FindDeviceByHostname returns the device with exactly this hostname, all
// fields included, or nil and no error when there is none. When several
// share it (a proxy that came back before its old device was removed), the
// connected one is preferred, then the one seen last.
func (c *Client) FindDeviceByHostname(ctx context.Context, hostname string) (*Device, error) {
	list, err := c.ListDevices(ctx, ListDevicesOptions{AllFields: true, Filters: map[string][]string{"hostname": {hostname}}})
	if err != nil {
		return nil, err
	}
	// The server filters already; checking again costs nothing.
	list = slices.DeleteFunc(list, func(d Device) bool { return d.Hostname != hostname })
	if len(list) == 0 {
		return nil, nil
	}
	best := list[0]
	for _, d := range list[1:] {
		if better(d, best) {
			best = d
		}
	}
	return &best, nil
}

// better reports whether a is a better match than b among devices with the
// same hostname.
func better(a, b Device) bool {
	if a.ConnectedToControl != b.ConnectedToControl {
		return a.ConnectedToControl
	}
	return a.LastSeen.After(b.LastSeen)
}

// DeleteDevice removes a device from the tailnet. A missing device is an
// error for which IsNotFound is true.
func (c *Client) DeleteDevice(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodDelete, c.devicePath(id), func(ctx context.Context) error {
		return c.api.Devices().Delete(ctx, id)
	})
}

// DeviceRoutes returns the routes a device advertises and those enabled
// (approved) for it, the enabled ones sorted by SortRoutes.
func (c *Client) DeviceRoutes(ctx context.Context, id string) (advertised, enabled []string, err error) {
	var r *tailscale.DeviceRoutes
	err = c.call(ctx, http.MethodGet, c.devicePath(id, "routes"), func(ctx context.Context) error {
		var err error
		r, err = c.api.Devices().SubnetRoutes(ctx, id)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return r.Advertised, SortRoutes(r.Enabled), nil
}

// SetDeviceRoutes replaces the routes enabled for a device. Routes may be
// enabled before the device advertises them. They read back sorted by
// address (SortRoutes), not in the order sent. Setting a list is safe to
// repeat, so the request is retried like an idempotent one.
func (c *Client) SetDeviceRoutes(ctx context.Context, id string, routes []string) error {
	if routes == nil {
		routes = []string{}
	}
	return c.call(retry.Idempotent(ctx), http.MethodPost, c.devicePath(id, "routes"), func(ctx context.Context) error {
		return c.api.Devices().SetSubnetRoutes(ctx, id, routes)
	})
}

// SetDeviceTags replaces a device's tags (POST /device/{id}/tags). The
// tags must be declared in tagOwners, and with an OAuth client be among its
// tags or owned by them; otherwise the API answers 400 "requested tags
// [...] are invalid or not permitted". Replacing tags keeps the device (its
// ids and addresses), which is how a running operator's device changes
// tags: the operator itself only tags its device when it first logs in.
// Setting a list is safe to repeat, so the request is retried like an
// idempotent one.
func (c *Client) SetDeviceTags(ctx context.Context, id string, tags []string) error {
	if tags == nil {
		tags = []string{}
	}
	return c.call(retry.Idempotent(ctx), http.MethodPost, c.devicePath(id, "tags"), func(ctx context.Context) error {
		return c.api.Devices().SetTags(ctx, id, tags)
	})
}
