package tailnetapi

import (
	"errors"
	"strings"
)

// ErrNoHTTPS is what a node is told when it asks for a TLS certificate
// while the tailnet has HTTPS certificates off, in tailscaled's words.
var ErrNoHTTPS = errors.New("your Tailscale account does not support getting TLS certs")

// Certificate is a TLS certificate that a device obtained for its MagicDNS
// name (tailscale cert, or a proxy serving HTTPS).
type Certificate struct {
	// DeviceID is the device's, or Service the Tailscale Service's whose
	// hosts share the certificate.
	DeviceID string
	Service  string
	// Domain is the MagicDNS name, HOST.TAILNET.ts.net.
	Domain string
}

// IssueCertificate gives the device id a certificate for its MagicDNS
// name, as the control plane does when the tailnet has HTTPS certificates
// on (SetHTTPSEnabled, Options.HTTPSEnabled); otherwise it fails with
// ErrNoHTTPS. A new tailnet has them off.
func (s *Server) IssueCertificate(id string) (Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.settings.HTTPSEnabled {
		return Certificate{}, ErrNoHTTPS
	}
	i := s.deviceIndexLocked(id)
	if i < 0 {
		return Certificate{}, errors.New("no device " + id)
	}
	c := Certificate{DeviceID: id, Domain: strings.TrimSuffix(s.devices[i].Name, ".")}
	s.certs = append(s.certs, c)
	return c, nil
}

// Certificates lists the certificates issued, in order.
func (s *Server) Certificates() []Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Certificate(nil), s.certs...)
}

// IssueServiceCertificate gives the hosts of the Tailscale Service name
// (svc:HOST) a certificate for its MagicDNS name HOST.TAILNET.ts.net, with
// HTTPS certificates on; otherwise it fails with ErrNoHTTPS.
func (s *Server) IssueServiceCertificate(name string) (Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.settings.HTTPSEnabled {
		return Certificate{}, ErrNoHTTPS
	}
	c := Certificate{Service: name, Domain: strings.TrimPrefix(name, "svc:") + "." + s.opts.MagicDNSSuffix}
	s.certs = append(s.certs, c)
	return c, nil
}
