package tailnetapi

import "net/http"

// tailnetSettings is the wire shape of the tailnet settings
// (GET /tailnet/{tailnet}/settings), with the values of a new tailnet.
type tailnetSettings struct {
	ACLsExternallyManagedOn                bool   `json:"aclsExternallyManagedOn"`
	ACLsExternalLink                       string `json:"aclsExternalLink"`
	DevicesApprovalOn                      bool   `json:"devicesApprovalOn"`
	DevicesAutoUpdatesOn                   bool   `json:"devicesAutoUpdatesOn"`
	DevicesKeyDurationDays                 int    `json:"devicesKeyDurationDays"`
	UsersApprovalOn                        bool   `json:"usersApprovalOn"`
	UsersRoleAllowedToJoinExternalTailnets string `json:"usersRoleAllowedToJoinExternalTailnets"`
	NetworkFlowLoggingOn                   bool   `json:"networkFlowLoggingOn"`
	RegionalRoutingOn                      bool   `json:"regionalRoutingOn"`
	PostureIdentityCollectionOn            bool   `json:"postureIdentityCollectionOn"`
	// HTTPSEnabled is whether nodes may get TLS certificates for their
	// MagicDNS names (Admin console, DNS, HTTPS Certificates).
	HTTPSEnabled bool `json:"httpsEnabled"`
}

// handleGetSettings is GET /tailnet/{tailnet}/settings, with the scope
// feature_settings:read.
func (s *Server) handleGetSettings(w http.ResponseWriter, _ *http.Request, p principal) {
	if !p.allows("feature_settings:read") {
		permissionDenied(w)
		return
	}
	s.mu.Lock()
	out := s.settings
	s.mu.Unlock()
	if out.DevicesKeyDurationDays == 0 {
		out.DevicesKeyDurationDays = 180
	}
	if out.UsersRoleAllowedToJoinExternalTailnets == "" {
		out.UsersRoleAllowedToJoinExternalTailnets = "none"
	}
	writeJSON(w, http.StatusOK, out)
}

// SetHTTPSEnabled turns HTTPS certificates on or off, as an admin does on
// the DNS page of the admin console. Reset restores Options.HTTPSEnabled.
func (s *Server) SetHTTPSEnabled(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settings.HTTPSEnabled = on
}

// HTTPSEnabled reports whether HTTPS certificates are on: a node can then
// get a certificate for its MagicDNS name (or a Tailscale Service's).
func (s *Server) HTTPSEnabled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings.HTTPSEnabled
}
