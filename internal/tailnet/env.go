package tailnet

import (
	"context"
	"net/http"
)

// Environment variables of the Tailscale credentials, the same as the
// provider's (and, for the identity token and audience, the official
// Tailscale provider's).
const (
	EnvAPIKey            = "TAILSCALE_API_KEY"
	EnvOAuthClientID     = "TAILSCALE_OAUTH_CLIENT_ID"
	EnvOAuthClientSecret = "TAILSCALE_OAUTH_CLIENT_SECRET"
	EnvTailnet           = "TAILSCALE_TAILNET"
	EnvBaseURL           = "TAILSCALE_BASE_URL"
	// EnvIdentityToken is an OIDC identity token that the federated
	// identity named by EnvOAuthClientID trusts.
	EnvIdentityToken = "TAILSCALE_IDENTITY_TOKEN"
	// EnvAudience asks for the identity token of the running GitHub
	// Actions job, with this audience, when EnvIdentityToken is not set.
	EnvAudience = "TAILSCALE_AUDIENCE"

	// EnvGitHubIDTokenURL and EnvGitHubIDTokenRequestToken are what
	// GitHub Actions gives a job with `permissions: id-token: write` to
	// fetch its identity token.
	EnvGitHubIDTokenURL          = "ACTIONS_ID_TOKEN_REQUEST_URL"
	EnvGitHubIDTokenRequestToken = "ACTIONS_ID_TOKEN_REQUEST_TOKEN"
)

// ConfigFromEnv reads the Tailscale settings from the environment, as the
// provider reads them when its attributes are not set: an API key, or an
// OAuth client ID with its secret, or an OAuth client ID (of a federated
// identity) with an identity token. With TAILSCALE_AUDIENCE and no
// TAILSCALE_IDENTITY_TOKEN, the identity token is the running GitHub
// Actions job's, fetched (through hc, nil for a default client) whenever
// an access token is needed. New checks the result.
func ConfigFromEnv(getenv func(string) string, hc *http.Client) Config {
	cfg := Config{
		BaseURL:           getenv(EnvBaseURL),
		APIKey:            getenv(EnvAPIKey),
		OAuthClientID:     getenv(EnvOAuthClientID),
		OAuthClientSecret: getenv(EnvOAuthClientSecret),
		Tailnet:           getenv(EnvTailnet),
		IdentityToken:     getenv(EnvIdentityToken),
	}
	if audience := getenv(EnvAudience); audience != "" && cfg.IdentityToken == "" && cfg.OAuthClientSecret == "" {
		cfg.IdentityTokenFunc = func(ctx context.Context) (string, error) {
			return GitHubActionsIDToken(ctx, hc, getenv, audience)
		}
	}
	return cfg
}
