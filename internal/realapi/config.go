package realapi

import (
	"fmt"
	"strings"
)

// Config names the real accounts the suite runs against, from the
// environment.
type Config struct {
	QoveryToken    string
	OrganizationID string
	// EnvironmentID is an environment on a cluster where no Tailscale
	// operator runs yet: the suite installs one there.
	EnvironmentID string
	// ApplicationID and ContainerID are services of that environment
	// with at least one port each.
	ApplicationID, ContainerID string
	Tailnet                    string
	// TailscaleAPIKey, or the OAuth client's ID and secret.
	TailscaleAPIKey, OAuthClientID, OAuthClientSecret string
}

// Variables are the environment variables the suite reads.
var Variables = []string{
	"QOVERY_API_TOKEN",
	"QTAIL_REAL_ORGANIZATION_ID",
	"QTAIL_REAL_ENVIRONMENT_ID",
	"QTAIL_REAL_APPLICATION_ID",
	"QTAIL_REAL_CONTAINER_ID",
	"TAILSCALE_TAILNET",
}

// LoadConfig reads the settings with getenv. It refuses to start without
// them and names every one that is missing: the Qovery token and IDs, the
// tailnet, and a Tailscale credential (TAILSCALE_API_KEY, or
// TAILSCALE_OAUTH_CLIENT_ID with TAILSCALE_OAUTH_CLIENT_SECRET).
func LoadConfig(getenv func(string) string) (*Config, error) {
	var missing []string
	get := func(name string) string {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			missing = append(missing, name)
		}
		return v
	}
	c := &Config{
		QoveryToken:    get(Variables[0]),
		OrganizationID: get(Variables[1]),
		EnvironmentID:  get(Variables[2]),
		ApplicationID:  get(Variables[3]),
		ContainerID:    get(Variables[4]),
		Tailnet:        get(Variables[5]),
	}
	c.TailscaleAPIKey = strings.TrimSpace(getenv("TAILSCALE_API_KEY"))
	c.OAuthClientID = strings.TrimSpace(getenv("TAILSCALE_OAUTH_CLIENT_ID"))
	c.OAuthClientSecret = strings.TrimSpace(getenv("TAILSCALE_OAUTH_CLIENT_SECRET"))
	switch {
	case c.TailscaleAPIKey != "":
	case c.OAuthClientID != "" && c.OAuthClientSecret == "":
		missing = append(missing, "TAILSCALE_OAUTH_CLIENT_SECRET")
	case c.OAuthClientID == "" && c.OAuthClientSecret != "":
		missing = append(missing, "TAILSCALE_OAUTH_CLIENT_ID")
	case c.OAuthClientID == "":
		missing = append(missing, "TAILSCALE_API_KEY (or TAILSCALE_OAUTH_CLIENT_ID and TAILSCALE_OAUTH_CLIENT_SECRET)")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the real-API acceptance suite needs a real Qovery organization and a real tailnet; set %s "+
			"(see README.md, \"Acceptance tests against real accounts\")", strings.Join(missing, ", "))
	}
	return c, nil
}
