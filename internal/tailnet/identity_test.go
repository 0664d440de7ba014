package tailnet

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

const exchangeRoute = "POST /tailscale/api/v2/oauth/token-exchange"

// ciIssuer is the test stand-in for GitHub Actions' token issuer.
const ciIssuer = "https://token.actions.githubusercontent.com"

const ciSubject = "repo:acme/platform:pull_request"

// federatedEnv is a fake tailnet with a federated identity that trusts
// ciIssuer for subjects repo:acme/platform:*.
func federatedEnv(t *testing.T, opts tailnetapi.Options, scopes ...string) (*env, *tailnetapi.Issuer, string, string) {
	t.Helper()
	e := newEnv(t, opts)
	iss := tailnetapi.NewIssuer(ciIssuer)
	id, aud := e.srv.SeedFederatedIdentity(tailnetapi.FederatedIdentity{
		Issuer: iss, Subject: "repo:acme/platform:*", Scopes: scopes,
		CustomClaimRules: map[string]string{"repository_owner": "acme"},
	})
	return e, iss, id, aud
}

func TestIdentityTokenExchange(t *testing.T) {
	e, iss, id, aud := federatedEnv(t, tailnetapi.Options{}, "policy_file:read")
	c := e.client(Config{OAuthClientID: id, IdentityToken: iss.Token(ciSubject, aud, map[string]any{"repository_owner": "acme"})})
	for range 2 {
		if _, _, err := c.GetPolicy(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.srv.Faults().Count(exchangeRoute); n != 1 {
		t.Errorf("%d exchanges for two calls, want 1 (the access token is reused)", n)
	}
	req := e.rec.last(t, "POST", "/oauth/token-exchange")
	if got := req.Header.Get("Content-Type"); got != "application/x-www-form-urlencoded" {
		t.Errorf("Content-Type %q", got)
	}
	// The identity's scopes apply: it may read the policy, not write it.
	if _, err := c.SetPolicy(t.Context(), []byte(operatorPolicy), ""); err == nil {
		t.Error("a read-only federated identity wrote the policy")
	} else if ae, ok := AsAPIError(err); !ok || ae.Status != 403 {
		t.Errorf("write: %v", err)
	}
}

// TestIdentityTokenFuncFetchesAgain: with a function, each new access
// token gets a fresh identity token.
func TestIdentityTokenFuncFetchesAgain(t *testing.T) {
	e, iss, id, aud := federatedEnv(t, tailnetapi.Options{TokenTTL: time.Second}, "all")
	var calls atomic.Int32
	c := e.client(Config{OAuthClientID: id, IdentityTokenFunc: func(ctx context.Context) (string, error) {
		calls.Add(1)
		return iss.Token(ciSubject, aud, map[string]any{"repository_owner": "acme"}), ctx.Err()
	}})
	for range 2 {
		if _, _, err := c.GetPolicy(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	// Access tokens of one second are too short to reuse.
	if n := calls.Load(); n != 2 {
		t.Errorf("identity token fetched %d times, want 2", n)
	}
}

func TestIdentityTokenRefused(t *testing.T) {
	e, iss, id, aud := federatedEnv(t, tailnetapi.Options{}, "all")
	other := tailnetapi.NewIssuer(ciIssuer)
	for _, tc := range []struct {
		name, token, want string
	}{
		{"audience", iss.Token(ciSubject, "api.tailscale.com/other", map[string]any{"repository_owner": "acme"}), "audience"},
		{"subject", iss.Token("repo:acme/other:pull_request", aud, map[string]any{"repository_owner": "acme"}), "subject"},
		{"claim", iss.Token(ciSubject, aud, map[string]any{"repository_owner": "mallory"}), `claim "repository_owner"`},
		{"signature", other.Token(ciSubject, aud, map[string]any{"repository_owner": "acme"}), "signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e.client(Config{OAuthClientID: id, IdentityToken: tc.token})
			_, _, err := c.GetPolicy(t.Context())
			ae, ok := AsAPIError(err)
			if !ok || ae.Status != 400 || !strings.Contains(ae.Message, "invalid_grant") || !strings.Contains(ae.Message, tc.want) {
				t.Fatalf("err %v", err)
			}
			if strings.Contains(err.Error(), tc.token) {
				t.Error("the error quotes the identity token")
			}
		})
	}
	c := e.client(Config{OAuthClientID: "kNOSUCHCNTRL", IdentityToken: iss.Token(ciSubject, aud, nil)})
	if _, _, err := c.GetPolicy(t.Context()); err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Errorf("unknown client: %v", err)
	}
}

// TestIdentityTokenCheckedLocally: an expired or malformed token is not
// sent.
func TestIdentityTokenCheckedLocally(t *testing.T) {
	e, iss, id, aud := federatedEnv(t, tailnetapi.Options{}, "all")
	iss.TTL = -time.Minute
	for token, want := range map[string]string{
		iss.Token(ciSubject, aud, nil): "expired",
		"not-a-jwt":                    "not a JWT",
	} {
		c := e.client(Config{OAuthClientID: id, IdentityToken: token})
		if _, _, err := c.GetPolicy(t.Context()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v, want %q", err, want)
		}
	}
	if n := e.srv.Faults().Count(exchangeRoute); n != 0 {
		t.Errorf("%d exchanges of bad tokens", n)
	}
}

func TestIdentityTokenConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{APIKey: "k", OAuthClientID: "id", IdentityToken: "t"}, "not both"},
		{Config{OAuthClientID: "id", OAuthClientSecret: "s", IdentityToken: "t"}, "replaces the OAuth client secret"},
		{Config{IdentityToken: "t"}, "needs the client ID"},
		{Config{OAuthClientID: "id", IdentityToken: "t", IdentityTokenFunc: func(context.Context) (string, error) { return "", nil }}, "not both"},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := New(Config{OAuthClientID: "id", IdentityToken: "t"}); err != nil {
		t.Errorf("client ID and identity token: %v", err)
	}
}

// githubOIDC is a stand-in for GitHub Actions' token endpoint: it answers
// the job's request token with a token of the issuer for the audience
// asked.
func githubOIDC(t *testing.T, iss *tailnetapi.Issuer, requestToken string) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "bearer "+requestToken || r.URL.Query().Get("api-version") != "2.0" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"message":"bad request token ` + r.Header.Get("Authorization") + `"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{
			"value": iss.Token(ciSubject, r.URL.Query().Get("audience"), map[string]any{"repository_owner": "acme"}),
		})
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestConfigFromEnvGitHubActions: with TAILSCALE_AUDIENCE, the client
// fetches the job's identity token from GitHub Actions and exchanges it.
func TestConfigFromEnvGitHubActions(t *testing.T) {
	e, iss, id, aud := federatedEnv(t, tailnetapi.Options{}, "policy_file:read")
	gh := githubOIDC(t, iss, "gh-request-token")
	vars := map[string]string{
		EnvBaseURL:                   e.base,
		EnvOAuthClientID:             id,
		EnvAudience:                  aud,
		EnvGitHubIDTokenURL:          gh.URL + "/token?api-version=2.0",
		EnvGitHubIDTokenRequestToken: "gh-request-token",
	}
	cfg := ConfigFromEnv(func(k string) string { return vars[k] }, nil)
	cfg.HTTPClient = e.httpClient()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.GetPolicy(t.Context()); err != nil {
		t.Fatal(err)
	}

	// Outside GitHub Actions (or without id-token: write) the error says
	// so; a refused request token is not quoted back.
	delete(vars, EnvGitHubIDTokenRequestToken)
	if _, err := GitHubActionsIDToken(t.Context(), nil, func(k string) string { return vars[k] }, aud); err == nil || !strings.Contains(err.Error(), "id-token: write") {
		t.Errorf("err %v", err)
	}
	vars[EnvGitHubIDTokenRequestToken] = "wrong-request-token"
	if _, err := GitHubActionsIDToken(t.Context(), nil, func(k string) string { return vars[k] }, aud); err == nil || strings.Contains(err.Error(), "wrong-request-token") {
		t.Errorf("err %v", err)
	}
	vars[EnvGitHubIDTokenURL] = "http://token.example.com/token"
	if _, err := GitHubActionsIDToken(t.Context(), nil, func(k string) string { return vars[k] }, aud); err == nil || !strings.Contains(err.Error(), "https") {
		t.Errorf("plain http to a remote host: %v", err)
	}
}

// TestConfigFromEnv reads the provider's variables.
func TestConfigFromEnv(t *testing.T) {
	vars := map[string]string{EnvAPIKey: "tskey-api-x", EnvTailnet: "example.com", EnvBaseURL: "https://api.example.com"}
	cfg := ConfigFromEnv(func(k string) string { return vars[k] }, nil)
	if cfg.APIKey != "tskey-api-x" || cfg.Tailnet != "example.com" || cfg.BaseURL != "https://api.example.com" || cfg.IdentityTokenFunc != nil {
		t.Errorf("%+v", cfg)
	}
	vars = map[string]string{EnvOAuthClientID: "id", EnvIdentityToken: "jwt", EnvAudience: "aud"}
	if cfg := ConfigFromEnv(func(k string) string { return vars[k] }, nil); cfg.IdentityToken != "jwt" || cfg.IdentityTokenFunc != nil {
		t.Errorf("an explicit identity token wins over the audience: %+v", cfg)
	}
}

// TestGetKeyFederatedIdentity: a federated identity reads back with its
// type, scopes, tags and trust settings.
func TestGetKeyFederatedIdentity(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	iss := tailnetapi.NewIssuer("https://oidc.cluster.example.com")
	id, _ := e.srv.SeedFederatedIdentity(tailnetapi.FederatedIdentity{
		Issuer: iss, Subject: "system:serviceaccount:*:operator", Audience: "https://operator.example.com",
		CustomClaimRules: map[string]string{"kubernetes.io/namespace": "tailscale"},
		Scopes:           []string{"devices:core", "auth_keys"}, Tags: []string{"tag:k8s-operator"},
	})
	k, err := e.client(Config{}).GetKey(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if k.KeyType != "federated" || k.Audience != "https://operator.example.com" || k.Issuer != iss.URL ||
		k.Subject != "system:serviceaccount:*:operator" || k.CustomClaimRules["kubernetes.io/namespace"] != "tailscale" ||
		!slices.Equal(k.Tags, []string{"tag:k8s-operator"}) || len(k.Scopes) != 2 {
		t.Errorf("key %+v", k)
	}
}
