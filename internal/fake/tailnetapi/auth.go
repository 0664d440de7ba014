package tailnetapi

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// principal is the authenticated caller of one request.
type principal struct {
	// apiKey is true for the API access token, which may do everything.
	apiKey bool
	// clientID is the OAuth client an access token was issued to.
	clientID string
	// scopes are the access token's scopes.
	scopes []string
	// tags are the OAuth client's tags.
	tags []string
}

// allows reports whether the caller holds scope.
func (p principal) allows(scope string) bool {
	if p.apiKey {
		return true
	}
	for _, have := range p.scopes {
		if scopeCovers(have, scope) {
			return true
		}
	}
	return false
}

// scopeCovers reports whether the granted scope have includes want: equal,
// "all", or for a read scope "all:read" or the matching write scope.
func scopeCovers(have, want string) bool {
	if have == want || have == "all" {
		return true
	}
	base, read := strings.CutSuffix(want, ":read")
	return read && (have == "all:read" || have == base)
}

// errPermissionDenied is the API's message for a token without the needed
// scope.
const errPermissionDenied = "calling actor does not have enough permissions to perform this function"

// permissionDenied answers 403 the way the API does for a token without the
// needed scope.
func permissionDenied(w http.ResponseWriter) {
	writeError(w, http.StatusForbidden, errPermissionDenied)
}

// apiHandler is an endpoint behind authentication.
type apiHandler func(w http.ResponseWriter, r *http.Request, p principal)

// api authenticates the request and resolves the {tailnet} path segment
// before calling h.
func (s *Server) api(h apiHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, msg := s.authenticate(r)
		if msg != "" {
			w.Header().Set("WWW-Authenticate", `Basic realm="tailscale API"`)
			writeError(w, http.StatusUnauthorized, msg)
			return
		}
		if t := r.PathValue("tailnet"); t != "" && t != "-" && !strings.EqualFold(t, s.opts.Tailnet) {
			writeError(w, http.StatusNotFound, "tailnet not found")
			return
		}
		h(w, r, p)
	}
}

// authenticate reads the API key (Basic user or Bearer) or an OAuth access
// token (Bearer, or Basic user). It returns a message when the request is
// not authenticated.
func (s *Server) authenticate(r *http.Request) (principal, string) {
	var cred string
	if user, _, ok := r.BasicAuth(); ok {
		cred = user
	} else if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		cred = strings.TrimSpace(tok)
	}
	if cred == "" {
		return principal{}, "API token required: send an API access token as the HTTP Basic user or an OAuth access token as a Bearer token"
	}
	if s.opts.APIKey != "" && subtle.ConstantTimeCompare([]byte(cred), []byte(s.opts.APIKey)) == 1 {
		return principal{apiKey: true}, ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[cred]
	if !ok {
		return principal{}, "API token invalid"
	}
	if !s.now().Before(t.expires) {
		delete(s.tokens, cred)
		return principal{}, "API token expired"
	}
	c, ok := s.keys[t.clientID]
	if !ok || !c.Revoked.IsZero() {
		delete(s.tokens, cred)
		return principal{}, "API token invalid: its OAuth client was deleted"
	}
	return principal{clientID: c.ID, scopes: t.scopes, tags: append([]string(nil), c.Tags...)}, ""
}

// accessToken is an OAuth access token issued by the token endpoint.
type accessToken struct {
	clientID string
	scopes   []string
	expires  time.Time
}

// oauthError answers the way an OAuth 2.0 token endpoint does (RFC 6749
// section 5.2).
func oauthError(w http.ResponseWriter, status int, code, description string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="tailscale oauth"`)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, map[string]string{"error": code, "error_description": description})
}

// handleToken is POST /api/v2/oauth/token: the client credentials grant,
// with the client authenticated by HTTP Basic or by form parameters.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "malformed form body: "+err.Error())
		return
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		// RFC 6749 section 2.3.1: both are form-urlencoded before Basic.
		if v, err := url.QueryUnescape(id); err == nil {
			id = v
		}
		if v, err := url.QueryUnescape(secret); err == nil {
			secret = v
		}
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id == "" || secret == "" {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication required: send client_id and client_secret")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.oauthClientLocked(id, secret)
	if c == nil {
		oauthError(w, http.StatusUnauthorized, "invalid_client", errInvalidClient)
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "client_credentials" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", `grant_type must be "client_credentials"`)
		return
	}
	scopes := append([]string(nil), c.Scopes...)
	if req := strings.Fields(r.PostForm.Get("scope")); len(req) > 0 {
		for _, want := range req {
			granted := false
			for _, have := range c.Scopes {
				granted = granted || scopeCovers(have, want)
			}
			if !granted {
				oauthError(w, http.StatusBadRequest, "invalid_scope", "scope "+want+" is not granted to this OAuth client")
				return
			}
		}
		scopes = req
	}
	tok := "tskey-oauth-" + randomString(40)
	secs := int64((s.opts.TokenTTL + time.Second - 1) / time.Second)
	s.tokens[tok] = &accessToken{clientID: c.ID, scopes: scopes, expires: s.now().Add(time.Duration(secs) * time.Second)}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok,
		"token_type":   "Bearer",
		"expires_in":   secs,
		"scope":        strings.Join(scopes, " "),
	})
}

// oauthClientLocked returns the live OAuth client with these credentials.
func (s *Server) oauthClientLocked(id, secret string) *key {
	c, ok := s.keys[id]
	if !ok || c.KeyType != keyTypeClient || !c.Revoked.IsZero() {
		return nil
	}
	if subtle.ConstantTimeCompare([]byte(secret), []byte(c.Secret)) != 1 {
		return nil
	}
	return c
}

// CheckOAuthClient reports whether id and secret are the credentials of a
// live OAuth client of the tailnet, and returns its tags and scopes.
func (s *Server) CheckOAuthClient(id, secret string) (tags, scopes []string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.oauthClientLocked(id, secret)
	if c == nil {
		return nil, nil, false
	}
	return append([]string(nil), c.Tags...), append([]string(nil), c.Scopes...), true
}

// errInvalidClient is the token endpoint's description of credentials it
// refuses.
const errInvalidClient = "client authentication failed: unknown client ID, wrong secret, or deleted client"

// CallError is an error answer of the API to a Caller, formatted as client
// v2 formats API errors: "<message> (<status>)".
type CallError struct {
	Status  int
	Message string
}

func (e *CallError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Status) }

// IsNotFound reports whether err is a 404 answer to a Caller.
func IsNotFound(err error) bool {
	var ce *CallError
	return errors.As(err, &ce) && ce.Status == http.StatusNotFound
}

// Caller calls the API from inside the simulation with an OAuth client's
// access token, as the operator does: the same checks as over HTTP, without
// the round trip.
type Caller struct {
	s *Server
	p principal
}

// Caller exchanges an OAuth client's credentials for an access token, as
// client v2 does before its first call; a refused exchange is the error
// client v2 reports for it.
func (s *Server) Caller(id, secret string) (*Caller, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.oauthClientLocked(id, secret)
	if c == nil {
		return nil, fmt.Errorf("oauth2: %q %q", "invalid_client", errInvalidClient)
	}
	return &Caller{s: s, p: principal{clientID: c.ID, scopes: slices.Clone(c.Scopes), tags: slices.Clone(c.Tags)}}, nil
}

// Scopes returns the scopes of the caller's access token.
func (c *Caller) Scopes() []string { return slices.Clone(c.p.scopes) }

// Tags returns the tags of the OAuth client or federated identity behind
// the caller's access token.
func (c *Caller) Tags() []string { return slices.Clone(c.p.tags) }

// CheckAuthKey reports whether POST /keys would mint an auth key with these
// tags for the caller: nil, 403 without the auth_keys scope, or 400 for
// tags that are undeclared or neither the client's nor owned by them. No
// key is created.
func (c *Caller) CheckAuthKey(tags []string) error {
	if !c.p.allows("auth_keys") {
		return &CallError{Status: http.StatusForbidden, Message: errPermissionDenied}
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if msg := c.s.validateAuthKeyLocked(tags, c.p); msg != "" {
		return &CallError{Status: http.StatusBadRequest, Message: msg}
	}
	return nil
}

// SeedOAuthClient adds an OAuth client without the keys API's checks (its
// tags need not be declared) and returns its credentials. Empty id or
// secret are generated. Seeded clients survive Reset. Seeding an existing
// id replaces that client.
func (s *Server) SeedOAuthClient(id, secret string, scopes, tags []string) (string, string) {
	if id == "" {
		id = newKeyID()
	}
	if secret == "" {
		secret = "tskey-client-" + id + "-" + randomString(32)
	}
	now := s.now().UTC().Truncate(time.Second)
	k := &key{
		ID:          id,
		KeyType:     keyTypeClient,
		Secret:      secret,
		Description: "seeded",
		Created:     now,
		// Made by a person in the admin console.
		UserID: apiKeyUserID,
		Scopes: append([]string(nil), scopes...),
		Tags:   append([]string(nil), tags...),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, old := range s.seeded {
		if old.ID == id {
			s.seeded = append(s.seeded[:i], s.seeded[i+1:]...)
			break
		}
	}
	s.seeded = append(s.seeded, k)
	if _, ok := s.keys[id]; !ok {
		s.keyOrder = append(s.keyOrder, id)
	}
	c := *k
	s.keys[id] = &c
	return id, secret
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomString returns n random alphanumeric characters.
func randomString(n int) string {
	b := make([]byte, n)
	// crypto/rand.Read never returns an error (Go 1.24 and later).
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	return string(b)
}

// newKeyID returns an id in the shape of the service's key and OAuth
// client ids, e.g. "kQ7mXz2Ud11CNTRL".
func newKeyID() string {
	return "k" + randomString(10) + "CNTRL"
}
