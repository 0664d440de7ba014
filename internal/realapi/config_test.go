package realapi

import (
	"strings"
	"testing"
)

func TestLoadConfig(t *testing.T) {
	full := map[string]string{
		"QOVERY_API_TOKEN":           "qov_token",
		"QTAIL_REAL_ORGANIZATION_ID": "org",
		"QTAIL_REAL_ENVIRONMENT_ID":  "env",
		"QTAIL_REAL_APPLICATION_ID":  "app",
		"QTAIL_REAL_CONTAINER_ID":    "ctr",
		"TAILSCALE_TAILNET":          "example.com",
		"TAILSCALE_API_KEY":          "tskey-api-x",
	}
	without := func(drop ...string) func(string) string {
		return func(name string) string {
			for _, d := range drop {
				if d == name {
					return ""
				}
			}
			return full[name]
		}
	}
	for _, tc := range []struct {
		name    string
		getenv  func(string) string
		missing []string
	}{
		{"nothing set", func(string) string { return "" }, append(append([]string{}, Variables...), "TAILSCALE_API_KEY (or")},
		{"no container", without("QTAIL_REAL_CONTAINER_ID"), []string{"QTAIL_REAL_CONTAINER_ID"}},
		{"blank token", func(n string) string {
			if n == "QOVERY_API_TOKEN" {
				return "  "
			}
			return full[n]
		}, []string{"QOVERY_API_TOKEN"}},
		{"no Tailscale credential", without("TAILSCALE_API_KEY"), []string{"TAILSCALE_API_KEY (or TAILSCALE_OAUTH_CLIENT_ID and TAILSCALE_OAUTH_CLIENT_SECRET)"}},
		{"OAuth client without its secret", func(n string) string {
			if n == "TAILSCALE_OAUTH_CLIENT_ID" {
				return "k123"
			}
			return without("TAILSCALE_API_KEY")(n)
		}, []string{"TAILSCALE_OAUTH_CLIENT_SECRET"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(tc.getenv)
			if err == nil {
				t.Fatalf("started without %v: %+v", tc.missing, c)
			}
			for _, m := range tc.missing {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("the refusal does not name %s: %v", m, err)
				}
			}
			for name := range full {
				if tc.getenv(name) != "" && strings.Contains(err.Error(), name+",") {
					t.Errorf("the refusal names %s, which is set: %v", name, err)
				}
			}
		})
	}
	c, err := LoadConfig(func(n string) string { return full[n] })
	if err != nil || c.ContainerID != "ctr" || c.TailscaleAPIKey != "tskey-api-x" || c.Tailnet != "example.com" {
		t.Fatalf("LoadConfig with every variable = %+v, %v", c, err)
	}
	oauth := func(n string) string {
		switch n {
		case "TAILSCALE_OAUTH_CLIENT_ID":
			return "k123"
		case "TAILSCALE_OAUTH_CLIENT_SECRET":
			return "tskey-client-k123-x"
		}
		return without("TAILSCALE_API_KEY")(n)
	}
	if c, err := LoadConfig(oauth); err != nil || c.OAuthClientID != "k123" {
		t.Fatalf("LoadConfig with an OAuth client = %+v, %v", c, err)
	}
}
