package tailnet

import (
	"context"
	"net/http"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// OAuthGrant is what the token endpoint grants an OAuth client: the scopes
// of its access tokens.
type OAuthGrant struct {
	// Scopes are the scopes the access token carries, as the answer's
	// scope field lists them; nil when the answer lists none.
	Scopes []string
}

// ProveOAuthClient exchanges the credentials of another OAuth client (id
// and secret) for an access token at BASE/api/v2/oauth/token, as a
// workload that uses them does (the Tailscale operator), and returns what
// the server granted. The token itself is dropped: it expires on its own.
// Credentials the server refuses are an *APIError with the token
// endpoint's status (IsCredentialsRefused); the secret never appears in
// an error.
func (c *Client) ProveOAuthClient(ctx context.Context, id, secret string) (*OAuthGrant, error) {
	tokenURL := c.base.JoinPath(tokenPath)
	conf := &clientcredentials.Config{ClientID: id, ClientSecret: secret, TokenURL: tokenURL.String(), AuthStyle: oauth2.AuthStyleInParams}
	tctx := context.WithValue(retry.Idempotent(ctx), oauth2.HTTPClient, c.tokenHTTP)
	tok, err := conf.Token(tctx)
	if err != nil {
		t := &authTransport{tokenPath: tokenURL.Path, secret: secret}
		return nil, t.tokenError(err)
	}
	g := &OAuthGrant{}
	if s, ok := tok.Extra("scope").(string); ok {
		g.Scopes = strings.Fields(s)
	}
	return g, nil
}

// IsCredentialsRefused reports whether err is the token endpoint's refusal
// of an OAuth client's credentials: an unknown or deleted client, or a
// wrong secret (HTTP 400 or 401 from the token endpoint).
func IsCredentialsRefused(err error) bool {
	e, ok := AsAPIError(err)
	return ok && strings.HasSuffix(e.Path, "/"+tokenPath) && (e.Status == http.StatusUnauthorized || e.Status == http.StatusBadRequest)
}

// Settings are the tailnet settings qtail reads.
type Settings struct {
	// HTTPSEnabled is whether HTTPS certificates are enabled on the
	// tailnet (httpsEnabled): a node can then get a certificate for its
	// MagicDNS name, as the operator's API server proxy needs.
	HTTPSEnabled bool
}

// GetSettings reads the tailnet settings (GET /tailnet/{tailnet}/settings,
// scope feature_settings:read).
func (c *Client) GetSettings(ctx context.Context) (*Settings, error) {
	var out Settings
	err := c.call(ctx, http.MethodGet, c.tailnetURL("settings").Path, func(ctx context.Context) error {
		s, err := c.api.TailnetSettings().Get(ctx)
		if err == nil {
			out.HTTPSEnabled = s.HTTPSEnabled
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}
