package cluster

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
)

// AdminDNSURL is the DNS page of the Tailscale admin console, where HTTPS
// certificates are turned on.
const AdminDNSURL = "https://login.tailscale.com/admin/dns"

// HTTPSNeed says, for CheckHTTPS, what needs the tailnet's HTTPS
// certificates and what happens without them, in the words of the resource
// that needs them.
type HTTPSNeed struct {
	// At is the attribute the diagnostics are on.
	At path.Path
	// Needs ends "...it has not checked that HTTPS certificates are
	// enabled, which ...": who needs them and why.
	Needs string
	// Serves opens the error: what serves TLS with the certificate.
	Serves string
	// Without is what happens with HTTPS certificates off.
	Without string
	// Fix ends the error's advice (", then plan again"), or is empty.
	Fix string
}

// CheckHTTPS checks, from the tailnet settings (httpsEnabled), that HTTPS
// certificates are enabled, which the operator's API server proxy, a
// kube-apiserver ProxyGroup and a Tailscale Ingress need to serve TLS with
// the tailnet's certificate. Settings it cannot read give a warning on
// need.At; certificates off give an error there, and CheckHTTPS reports
// false. The settings are read once per provider instance
// (conn.Clients.ReadTailnetSettings).
func CheckHTTPS(ctx context.Context, clients *conn.Clients, diags *diag.Diagnostics, need HTTPSNeed) bool {
	st, err := clients.ReadTailnetSettings(ctx)
	if err != nil {
		diags.AddAttributeWarning(need.At, "HTTPS Certificates Not Checked",
			fmt.Sprintf("qtail could not read the tailnet settings (%v), so it has not checked that HTTPS certificates are enabled, "+
				"which %s. Give the provider's Tailscale credential the feature_settings:read scope to have it checked, or check it "+
				"on the DNS page of the admin console (%s).", err, need.Needs, AdminDNSURL))
	} else if !st.HTTPSEnabled {
		diags.AddAttributeError(need.At, "HTTPS Certificates Disabled on the Tailnet",
			fmt.Sprintf("%s, but the tailnet settings say HTTPS certificates are off (httpsEnabled is false): %s. Enable HTTPS "+
				"Certificates on the DNS page of the admin console (%s; MagicDNS must be on)%s.", need.Serves, need.Without, AdminDNSURL, need.Fix))
		return false
	}
	return true
}
