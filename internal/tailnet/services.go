package tailnet

import (
	"context"
	"net/http"
	"slices"

	tailscale "tailscale.com/client/tailscale/v2"
)

// ServicePrefix starts the name of every Tailscale Service.
const ServicePrefix = "svc:"

// Service is a Tailscale Service: a name (svc:LABEL) with a virtual
// address pair that devices, such as the replicas of an ingress
// ProxyGroup, host.
type Service struct {
	// Name is the full name, e.g. svc:web.
	Name        string
	DisplayName string
	Comment     string
	// Addrs are the Service's IPv4 and IPv6 addresses, assigned by
	// Tailscale when it is created.
	Addrs       []string
	Ports       []string
	Tags        []string
	Annotations map[string]string
}

// ServiceName returns the Tailscale Service name of a hostname:
// svc:HOSTNAME, the name the operator gives the Service of an exposure
// through an ingress ProxyGroup.
func ServiceName(hostname string) string { return ServicePrefix + hostname }

func fromV2Service(s tailscale.Service) Service {
	return Service{Name: s.Name, DisplayName: s.DisplayName, Comment: s.Comment, Addrs: slices.Clone(s.Addrs),
		Ports: slices.Clone(s.Ports), Tags: slices.Clone(s.Tags), Annotations: s.Annotations}
}

// ListServices lists the tailnet's Tailscale Services. It needs the
// services:read scope.
func (c *Client) ListServices(ctx context.Context) ([]Service, error) {
	var list []tailscale.Service
	err := c.call(ctx, http.MethodGet, c.tailnetURL("vip-services").Path, func(ctx context.Context) error {
		var err error
		list, err = c.api.Services().List(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Service, 0, len(list))
	for _, s := range list {
		out = append(out, fromV2Service(s))
	}
	return out, nil
}

// GetService reads one Tailscale Service by its full name (svc:LABEL). A
// missing Service is an error for which IsNotFound is true. It needs the
// services:read scope.
func (c *Client) GetService(ctx context.Context, name string) (*Service, error) {
	var s *tailscale.Service
	err := c.call(ctx, http.MethodGet, c.tailnetURL("vip-services", name).Path, func(ctx context.Context) error {
		var err error
		s, err = c.api.Services().Get(ctx, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := fromV2Service(*s)
	return &out, nil
}

// FindService returns the Tailscale Service with this full name, or nil
// and no error when the tailnet has none: what a wait for a Service to
// appear polls.
func (c *Client) FindService(ctx context.Context, name string) (*Service, error) {
	s, err := c.GetService(ctx, name)
	if IsNotFound(err) {
		return nil, nil
	}
	return s, err
}
