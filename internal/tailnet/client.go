// Package tailnet is qtail's Tailscale API layer: client v2
// (tailscale.com/client/tailscale/v2) for the typed calls, raw HTTP for the
// policy file (which the typed ACL struct would strip of comments and
// unknown keys), and one authenticated HTTP client under both.
//
// Authentication is done by this package's transport, not by client v2: an
// API access token as the HTTP Basic user, or an OAuth client whose token
// requests go through the same HTTP client (retries, proxies and TLS
// settings included) rather than http.DefaultClient, with the context of
// the call that needs the token and the client's User-Agent. When the server
// answers with an error status, the error is an *APIError that carries the
// server's message, the failing tests and the number of attempts the retry
// transport made; a policy that /acl/validate rejects is a
// *ValidationError.
package tailnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
	tailscale "tailscale.com/client/tailscale/v2"

	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// DefaultBaseURL is the Tailscale API.
const DefaultBaseURL = "https://api.tailscale.com"

// DefaultUserAgent is sent when Config.UserAgent is empty.
const DefaultUserAgent = "terraform-provider-qtail"

// tokenPath is the OAuth token endpoint, relative to the base URL.
const tokenPath = "api/v2/oauth/token"

// Config configures a Client.
type Config struct {
	// BaseURL is the API's base URL; default DefaultBaseURL. A path
	// (e.g. "http://127.0.0.1:8787/tailscale") is kept. Plain http is
	// refused unless the host is a loopback address.
	BaseURL string
	// APIKey is an API access token. Set it, or OAuthClientID with
	// OAuthClientSecret or with an identity token, not both.
	APIKey string
	// OAuthClientID and OAuthClientSecret are an OAuth client's
	// credentials, exchanged at BASE/api/v2/oauth/token for access tokens
	// that are reused until they expire.
	OAuthClientID     string
	OAuthClientSecret string
	// IdentityToken is an OIDC identity token (a JWT) of a workload, such
	// as a CI job, that OAuthClientID (the client ID of a federated
	// identity) trusts; it replaces the client secret: it is exchanged at
	// BASE/api/v2/oauth/token-exchange for access tokens. IdentityTokenFunc
	// is the same as a function, called whenever a token is needed, for
	// identity tokens that expire before the work is done (see
	// GitHubActionsIDToken). Set at most one of them.
	IdentityToken     string
	IdentityTokenFunc func(ctx context.Context) (string, error)
	// Scopes optionally narrows the scopes of the OAuth access tokens.
	Scopes []string
	// Tailnet is the tailnet name; default "-", the credential's own.
	Tailnet string
	// UserAgent is sent with every API request; default DefaultUserAgent.
	UserAgent string
	// HTTPClient carries the retry transport; nil means one with
	// retry.Default(). It is used as is for OAuth token requests and,
	// wrapped with authentication, for API requests.
	HTTPClient *http.Client
}

// Client calls the Tailscale API for one tailnet.
type Client struct {
	api  *tailscale.Client
	http *http.Client
	// tokenHTTP is the HTTP client of token requests: retries, without
	// the client's own credentials.
	tokenHTTP *http.Client
	base      *url.URL
	tailnet   string
	userAgent string
}

// New checks cfg and returns a client. It makes no request.
func New(cfg Config) (*Client, error) {
	raw := cfg.BaseURL
	if raw == "" {
		raw = DefaultBaseURL
	}
	base, err := parseBaseURL(raw)
	if err != nil {
		return nil, err
	}
	hasKey := cfg.APIKey != ""
	hasOAuth := cfg.OAuthClientID != "" || cfg.OAuthClientSecret != ""
	hasIdentity := cfg.IdentityToken != "" || cfg.IdentityTokenFunc != nil
	if err := checkIdentityConfig(cfg, hasKey, hasIdentity); err != nil {
		return nil, err
	}
	if hasKey && hasOAuth {
		return nil, errors.New("tailscale credentials: set either an API key or an OAuth client ID and secret, not both")
	}
	if !hasKey && !hasOAuth {
		return nil, errors.New("tailscale credentials: missing; set an API key or an OAuth client ID and secret")
	}
	if hasOAuth && !hasIdentity && (cfg.OAuthClientID == "" || cfg.OAuthClientSecret == "") {
		return nil, errors.New("tailscale credentials: an OAuth client needs both its ID and its secret")
	}

	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: retry.Default().Transport(nil)}
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	ua := cfg.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	tn := cfg.Tailnet
	if tn == "" {
		tn = "-"
	}

	at := &authTransport{next: next, scheme: base.Scheme, host: base.Host, apiKey: cfg.APIKey}
	tokenHTTP := &http.Client{
		Transport:     userAgentTransport{next: next, userAgent: ua},
		CheckRedirect: hc.CheckRedirect, Jar: hc.Jar, Timeout: hc.Timeout,
	}
	switch {
	case hasIdentity:
		at.tokens = newExchangeSource(cfg, base, tokenHTTP)
		at.tokenPath = base.JoinPath(exchangePath).Path
	case hasOAuth:
		tokenURL := base.JoinPath(tokenPath)
		conf := &clientcredentials.Config{
			ClientID:     cfg.OAuthClientID,
			ClientSecret: cfg.OAuthClientSecret,
			TokenURL:     tokenURL.String(),
			Scopes:       cfg.Scopes,
			// The credentials go in the form body, the way Tailscale
			// documents the token request; this also spares the
			// header-then-body probing of the auto-detect mode.
			AuthStyle: oauth2.AuthStyleInParams,
		}
		at.tokens = &tokenCache{conf: conf, http: tokenHTTP}
		at.tokenPath = tokenURL.Path
		at.secret = cfg.OAuthClientSecret
	}
	authed := &http.Client{Transport: at, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar, Timeout: hc.Timeout}

	return &Client{
		api: &tailscale.Client{
			BaseURL:   base,
			UserAgent: ua,
			Tailnet:   tn,
			HTTP:      authed,
		},
		http:      authed,
		tokenHTTP: tokenHTTP,
		base:      base,
		tailnet:   tn,
		userAgent: ua,
	}, nil
}

// parseBaseURL checks the API base URL: http or https with a host, plain
// http only to a loopback host (credentials must not cross a network in
// clear text).
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("tailscale base URL %q: %w", raw, err)
	}
	if u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("tailscale base URL %q: want an absolute http(s) URL such as %s", raw, DefaultBaseURL)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("tailscale base URL %q: must not carry user info, a query or a fragment", raw)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("tailscale base URL %q: plain http is only allowed to a loopback address; use https", raw)
	}
	// The API's paths are joined to this one: without a leading slash
	// (no path at all, as in DefaultBaseURL) they would be relative, and
	// error messages and checks on them would miss it.
	u.Path = "/" + strings.Trim(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// API returns the client v2 client for typed calls. It shares this
// client's base URL, tailnet, authentication and retries; convert its
// errors with AsAPIError.
func (c *Client) API() *tailscale.Client { return c.api }

// Tailnet returns the tailnet path segment requests use ("-" by default).
func (c *Client) Tailnet() string { return c.tailnet }

// authTransport adds credentials to requests for the API's origin and
// records the final response of each call for error reporting.
type authTransport struct {
	next      http.RoundTripper
	scheme    string
	host      string
	apiKey    string
	tokens    tokenSource
	tokenPath string
	// secret is the OAuth client secret, kept out of error messages.
	secret string
}

// tokenSource gives the access token of an API call.
type tokenSource interface {
	token(ctx context.Context) (*oauth2.Token, error)
}

// tokenCache fetches OAuth access tokens with the context of the API call
// that needs one, so that a cancelled call stops its token request too,
// and reuses a token until shortly before it expires.
type tokenCache struct {
	conf *clientcredentials.Config
	http *http.Client

	mu  sync.Mutex
	tok *oauth2.Token
}

func (c *tokenCache) token(ctx context.Context) (*oauth2.Token, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tok.Valid() {
		return c.tok, nil
	}
	// A token request changes nothing that a second one would change
	// again, so the retry transport may repeat it like a GET.
	ctx = context.WithValue(retry.Idempotent(ctx), oauth2.HTTPClient, c.http)
	tok, err := c.conf.Token(ctx)
	if err != nil {
		return nil, err
	}
	c.tok = tok
	return tok, nil
}

// userAgentTransport sets the User-Agent of requests that have none.
type userAgentTransport struct {
	next      http.RoundTripper
	userAgent string
}

func (t userAgentTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("User-Agent") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("User-Agent", t.userAgent)
	}
	return t.next.RoundTrip(req)
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// Credentials only go to the API's own origin, never to a host a
	// redirect points at.
	if strings.EqualFold(req.URL.Scheme, t.scheme) && strings.EqualFold(req.URL.Host, t.host) {
		r := req.Clone(req.Context())
		if t.tokens != nil {
			tok, err := t.tokens.token(req.Context())
			if err != nil {
				if req.Body != nil {
					_ = req.Body.Close()
				}
				return nil, t.tokenError(err)
			}
			tok.SetAuthHeader(r)
		} else {
			r.SetBasicAuth(t.apiKey, "")
		}
		req = r
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if ex, ok := req.Context().Value(exchangeKey{}).(*exchange); ok {
		ex.record(req, resp)
	}
	return resp, nil
}

// tokenError turns a failed token request into an *APIError with a
// message that says what to check.
func (t *authTransport) tokenError(err error) error {
	if e, ok := AsAPIError(err); ok {
		return e
	}
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return fmt.Errorf("tailscale API POST %s: requesting an OAuth access token: %w", t.tokenPath, err)
	}
	e := &APIError{Method: http.MethodPost, Path: t.tokenPath}
	if re.Response != nil {
		e.Status = re.Response.StatusCode
		e.Attempts = attemptsOf(re.Response.Header)
	}
	switch re.ErrorCode {
	case "invalid_client":
		e.Message = "OAuth client credentials rejected (invalid_client): check the OAuth client ID and secret, and that the client was not deleted"
	case "":
		e.Message = "OAuth access token request failed"
		if s := snippet(re.Body); s != "" {
			e.Message += ": " + s
		}
	default:
		e.Message = "OAuth access token request failed (" + re.ErrorCode + ")"
	}
	if re.ErrorDescription != "" {
		e.Message += ": " + re.ErrorDescription
	}
	// The server's words are quoted; the secret must not be, should it
	// echo the request back.
	if t.secret != "" {
		e.Message = strings.ReplaceAll(e.Message, t.secret, "[secret hidden]")
	}
	return e
}

// exchange records the final response of one call: the request that
// produced it, its status, and for an error its body.
type exchange struct {
	method, path string
	status       int
	header       http.Header
	body         []byte
}

type exchangeKey struct{}

// withExchange returns ctx that makes the transport record into a new
// exchange.
func withExchange(ctx context.Context) (context.Context, *exchange) {
	ex := &exchange{}
	return context.WithValue(ctx, exchangeKey{}, ex), ex
}

// maxErrorBody bounds how much of an error body is kept.
const maxErrorBody = 1 << 20

func (ex *exchange) record(req *http.Request, resp *http.Response) {
	ex.method, ex.path, ex.status, ex.header, ex.body = req.Method, req.URL.Path, resp.StatusCode, resp.Header, nil
	if ok2xx(resp.StatusCode) {
		return
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	if err != nil {
		b = nil
	}
	ex.body = b
	resp.Body = io.NopCloser(bytes.NewReader(b))
}

// attemptsOf reads the retry transport's attempt count; 1 when absent.
func attemptsOf(h http.Header) int {
	if n, err := strconv.Atoi(h.Get(retry.AttemptsHeader)); err == nil && n > 0 {
		return n
	}
	return 1
}

// snippet returns the start of a non-JSON body for an error message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// ok2xx reports whether status is a success.
func ok2xx(status int) bool { return status/100 == 2 }

// call runs a client v2 call and converts its error.
func (c *Client) call(ctx context.Context, method, path string, fn func(ctx context.Context) error) error {
	ctx, ex := withExchange(ctx)
	return convertError(fn(ctx), ex, method, path)
}
