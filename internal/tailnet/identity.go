package tailnet

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// exchangePath is the endpoint that exchanges an identity token for an
// access token (workload identity federation), relative to the base URL.
const exchangePath = "api/v2/oauth/token-exchange"

// checkIdentityConfig checks the identity token settings of cfg.
func checkIdentityConfig(cfg Config, hasKey, hasIdentity bool) error {
	// Plain ifs rather than a switch, here and in the rest of the
	// package: coverage counts the conditions of an if, not those of a
	// case, and mutation testing goes by coverage.
	if !hasIdentity {
		return nil
	}
	if cfg.IdentityToken != "" && cfg.IdentityTokenFunc != nil {
		return errors.New("tailscale credentials: set an identity token or a function that fetches one, not both")
	}
	if hasKey {
		return errors.New("tailscale credentials: set either an API key or an OAuth client ID with an identity token, not both")
	}
	if cfg.OAuthClientSecret != "" {
		return errors.New("tailscale credentials: an identity token replaces the OAuth client secret; set one of them, not both")
	}
	if cfg.OAuthClientID == "" {
		return errors.New("tailscale credentials: an identity token needs the client ID of the federated identity that trusts it (the OAuth client ID)")
	}
	return nil
}

// exchangeSource exchanges identity tokens for access tokens at
// BASE/api/v2/oauth/token-exchange (form client_id and jwt, answer
// {"access_token", "token_type", "expires_in", "scope"}), as client v2's
// IdentityFederation does, through qtail's HTTP client and with the context
// of the call that needs the token. An access token is reused until
// shortly before it expires.
type exchangeSource struct {
	http     *http.Client
	url      string
	clientID string
	idToken  func(ctx context.Context) (string, error)

	mu  sync.Mutex
	tok *oauth2.Token
}

func newExchangeSource(cfg Config, base *url.URL, hc *http.Client) *exchangeSource {
	src := cfg.IdentityTokenFunc
	if src == nil {
		static := cfg.IdentityToken
		src = func(context.Context) (string, error) { return static, nil }
	}
	return &exchangeSource{http: hc, url: base.JoinPath(exchangePath).String(), clientID: cfg.OAuthClientID, idToken: src}
}

// exchangeAnswer is the answer of the token exchange.
type exchangeAnswer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	// OAuth error answers.
	Error       string `json:"error"`
	Description string `json:"error_description"`
	Message     string `json:"message"`
}

func (s *exchangeSource) token(ctx context.Context) (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok.Valid() {
		return s.tok, nil
	}
	jwt, err := s.idToken(ctx)
	if err != nil {
		return nil, fmt.Errorf("tailscale identity token: %w", err)
	}
	if err := checkJWT(strings.TrimSpace(jwt), time.Now()); err != nil {
		return nil, fmt.Errorf("tailscale identity token: %w", err)
	}
	jwt = strings.TrimSpace(jwt)
	form := url.Values{"client_id": {s.clientID}, "jwt": {jwt}}.Encode()
	// An exchange creates nothing that a second one would create again,
	// so the retry transport may repeat it like a read.
	req, err := http.NewRequestWithContext(retry.Idempotent(ctx), http.MethodPost, s.url, strings.NewReader(form))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("tailscale API POST %s: exchanging the identity token: %w", req.URL.Path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("tailscale API POST %s: reading the token exchange answer: %w", req.URL.Path, err)
	}
	var a exchangeAnswer
	decodeErr := json.Unmarshal(body, &a)
	// Only a 2xx grants a token: a 3xx that client code sees (one without
	// a Location) is no answer to the exchange.
	if !ok2xx(resp.StatusCode) {
		e := &APIError{Method: http.MethodPost, Path: req.URL.Path, Status: resp.StatusCode, Attempts: attemptsOf(resp.Header)}
		e.Message = "identity token exchange refused"
		if decodeErr != nil {
			if s := snippet(body); s != "" {
				e.Message += ": " + s
			}
		} else if a.Error != "" {
			e.Message += " (" + a.Error + ")"
			if a.Description != "" {
				e.Message += ": " + a.Description
			}
		} else if a.Message != "" {
			e.Message += ": " + a.Message
		}
		e.Message += "; check that the OAuth client ID is the one of a federated identity whose issuer, subject and audience match the identity token"
		// The token is a credential while it is valid: never quote it.
		e.Message = strings.ReplaceAll(e.Message, jwt, "[token hidden]")
		return nil, e
	}
	if decodeErr != nil || a.AccessToken == "" {
		return nil, fmt.Errorf("tailscale API POST %s: unexpected token exchange answer (HTTP %d)", req.URL.Path, resp.StatusCode)
	}
	tok := &oauth2.Token{AccessToken: a.AccessToken, TokenType: a.TokenType}
	if a.ExpiresIn > 0 {
		tok.Expiry = time.Now().Add(time.Duration(a.ExpiresIn) * time.Second)
	}
	s.tok = tok
	return tok, nil
}

// checkJWT checks what can be checked of an identity token without its
// issuer's keys: three base64url parts and an expiry in the future.
func checkJWT(jwt string, now time.Time) error {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return fmt.Errorf("not a JWT (want three dot-separated parts, got %d)", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return errors.New("not a JWT: its payload is not base64url")
	}
	var claims struct {
		Exp json.Number `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return errors.New("not a JWT: its payload is not a JSON object")
	}
	exp, err := claims.Exp.Int64()
	if err != nil || exp == 0 {
		return errors.New("the JWT has no exp (expiry) claim")
	}
	if at := time.Unix(exp, 0); !now.Before(at) {
		return fmt.Errorf("the JWT expired at %s; fetch a new one", at.UTC().Format(time.RFC3339))
	}
	return nil
}

// GitHubActionsIDToken fetches the OIDC identity token of the running
// GitHub Actions job for audience, the way actions/core's getIDToken does:
// GET $ACTIONS_ID_TOKEN_REQUEST_URL with audience added to its query, with
// $ACTIONS_ID_TOKEN_REQUEST_TOKEN as a bearer token. GitHub sets both
// variables only for jobs with the permission `id-token: write`. getenv
// reads the environment (os.Getenv); hc nil means a client with a
// 30-second timeout.
func GitHubActionsIDToken(ctx context.Context, hc *http.Client, getenv func(string) string, audience string) (string, error) {
	rawURL, bearer := getenv(EnvGitHubIDTokenURL), getenv(EnvGitHubIDTokenRequestToken)
	if rawURL == "" || bearer == "" {
		return "", fmt.Errorf("%s and %s are not set: this is not a GitHub Actions job, or the job lacks `permissions: id-token: write`",
			EnvGitHubIDTokenURL, EnvGitHubIDTokenRequestToken)
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%s is not a URL", EnvGitHubIDTokenURL)
	}
	if u.Scheme != "https" && (u.Scheme != "http" || !isLoopback(u.Hostname())) {
		return "", fmt.Errorf("%s must be an https URL (plain http only to a loopback address)", EnvGitHubIDTokenURL)
	}
	if audience != "" {
		q := u.Query()
		q.Set("audience", audience)
		u.RawQuery = q.Encode()
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "bearer "+bearer)
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("fetching the GitHub Actions identity token: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("fetching the GitHub Actions identity token: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("fetching the GitHub Actions identity token: HTTP %d: %s", resp.StatusCode, strings.ReplaceAll(snippet(body), bearer, "[token hidden]"))
	}
	var out struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Value == "" {
		return "", errors.New("fetching the GitHub Actions identity token: the answer has no token (want {\"value\": \"<jwt>\"})")
	}
	return out.Value, nil
}
