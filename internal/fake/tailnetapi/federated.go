package tailnetapi

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
)

// Issuer is an OIDC identity token issuer for tests, standing for GitHub
// Actions, GitLab CI or a cloud: it signs JWTs (EdDSA) with a key of its
// own, and a federated identity of the fake tailnet may trust it. The
// real service fetches an issuer's keys from its discovery document; the
// fake is handed the issuer itself.
type Issuer struct {
	// URL is the iss claim of the tokens.
	URL string
	// Now is the issuer's clock (default time.Now) and TTL the lifetime
	// of its tokens.
	Now func() time.Time
	TTL time.Duration
	key ed25519.PrivateKey
	pub ed25519.PublicKey
	kid string
}

// NewIssuer returns an issuer with a new key. Its tokens live ten minutes
// unless TTL is changed.
func NewIssuer(url string) *Issuer {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return &Issuer{URL: url, key: priv, pub: pub, kid: "k" + randomString(8), TTL: 10 * time.Minute}
}

func (i *Issuer) now() time.Time {
	if i.Now != nil {
		return i.Now()
	}
	return time.Now()
}

// Token signs a token for subject and audience, with the extra claims
// (which may override iss, sub, aud, iat, nbf and exp).
func (i *Issuer) Token(subject, audience string, extra map[string]any) string {
	now := i.now()
	claims := map[string]any{
		"iss": i.URL, "sub": subject, "aud": audience,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(i.TTL).Unix(),
		"jti": randomString(16),
	}
	for k, v := range extra {
		claims[k] = v
	}
	return i.sign(claims)
}

func (i *Issuer) sign(claims map[string]any) string {
	header, _ := json.Marshal(map[string]string{"alg": "EdDSA", "typ": "JWT", "kid": i.kid})
	payload, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding
	signed := enc.EncodeToString(header) + "." + enc.EncodeToString(payload)
	return signed + "." + enc.EncodeToString(ed25519.Sign(i.key, []byte(signed)))
}

// FederatedIdentity is a trust credential of the tailnet: it lets
// workloads whose identity tokens come from Issuer, for Audience, with a
// subject matching Subject (where "*" stands for any run of characters)
// and the claims of CustomClaimRules, act with Scopes and Tags, without a
// secret.
type FederatedIdentity struct {
	Issuer           *Issuer
	Subject          string
	Audience         string
	CustomClaimRules map[string]string
	Scopes           []string
	Tags             []string
}

// SeedFederatedIdentity adds a federated identity (as the admin console
// does) and returns its client ID and the audience its tokens must carry:
// f.Audience, or by default "api.tailscale.com/<client ID>". It survives
// Reset, as seeded OAuth clients do.
func (s *Server) SeedFederatedIdentity(f FederatedIdentity) (clientID, audience string) {
	id := newKeyID()
	if f.Audience == "" {
		f.Audience = "api.tailscale.com/" + id
	}
	k := &key{
		ID: id, KeyType: keyTypeFederated, Description: "seeded",
		Created: s.now().UTC().Truncate(time.Second), UserID: apiKeyUserID,
		Scopes: slices.Clone(f.Scopes), Tags: slices.Clone(f.Tags),
		Audience: f.Audience, Subject: f.Subject, CustomClaimRules: maps.Clone(f.CustomClaimRules),
	}
	if f.Issuer != nil {
		k.Issuer = f.Issuer.URL
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.federated == nil {
		s.federated = map[string]*FederatedIdentity{}
	}
	s.federated[id] = &f
	s.seeded = append(s.seeded, k)
	s.keyOrder = append(s.keyOrder, id)
	c := *k
	s.keys[id] = &c
	return id, f.Audience
}

// handleTokenExchange is POST /api/v2/oauth/token-exchange: a form with
// client_id (a federated identity) and jwt (an identity token it trusts),
// answered like the token endpoint with an access token that carries the
// identity's scopes. A malformed request is a 400 invalid_request, an
// unknown client a 401 invalid_client, a token that is not trusted a 400
// invalid_grant, each with a description of what did not match.
func (s *Server) handleTokenExchange(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "malformed form body: "+err.Error())
		return
	}
	id, jwt := r.PostForm.Get("client_id"), r.PostForm.Get("jwt")
	if id == "" || jwt == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "send client_id and jwt")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, status, code, msg := s.federatedLocked(id, jwt)
	if k == nil {
		oauthError(w, status, code, msg)
		return
	}
	tok := "tskey-oauth-" + randomString(40)
	secs := int64((s.opts.TokenTTL + time.Second - 1) / time.Second)
	s.tokens[tok] = &accessToken{clientID: id, scopes: slices.Clone(k.Scopes), expires: s.now().Add(time.Duration(secs) * time.Second)}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok,
		"token_type":   "Bearer",
		"expires_in":   secs,
		"scope":        strings.Join(k.Scopes, " "),
	})
}

// federatedLocked returns the live federated identity id when it trusts
// the identity token jwt, or the status, OAuth error code and description
// the token endpoint answers instead.
func (s *Server) federatedLocked(id, jwt string) (k *key, status int, code, msg string) {
	f := s.federated[id]
	k, ok := s.keys[id]
	if f == nil || !ok || k.KeyType != keyTypeFederated || !k.Revoked.IsZero() {
		return nil, http.StatusUnauthorized, "invalid_client", "unknown client ID, or not a federated identity, or deleted"
	}
	if msg := f.verify(jwt, s.now()); msg != "" {
		return nil, http.StatusBadRequest, "invalid_grant", msg
	}
	return k, 0, "", ""
}

// ExchangeCaller exchanges an identity token for an access token of the
// federated identity id, as a workload using workload identity does before
// its first call; a refused exchange is the error the workload reports for
// it.
func (s *Server) ExchangeCaller(id, jwt string) (*Caller, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, status, code, msg := s.federatedLocked(id, jwt)
	if k == nil {
		return nil, fmt.Errorf("token exchange failed with status %d: %s: %s", status, code, msg)
	}
	return &Caller{s: s, p: principal{clientID: k.ID, scopes: slices.Clone(k.Scopes), tags: slices.Clone(k.Tags)}}, nil
}

// verify checks an identity token against the identity's trust settings
// and returns what does not match, or "".
func (f *FederatedIdentity) verify(jwt string, now time.Time) string {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return "the token is not a JWT"
	}
	enc := base64.RawURLEncoding
	sig, err := enc.DecodeString(parts[2])
	if err != nil || f.Issuer == nil || !ed25519.Verify(f.Issuer.pub, []byte(parts[0]+"."+parts[1]), sig) {
		return "the token's signature is not one of the trusted issuer's keys"
	}
	payload, err := enc.DecodeString(parts[1])
	if err != nil {
		return "the token's payload is not base64url"
	}
	var c map[string]any
	if err := json.Unmarshal(payload, &c); err != nil {
		return "the token's payload is not a JSON object"
	}
	str := func(name string) string { s, _ := c[name].(string); return s }
	unix := func(name string) (time.Time, bool) {
		n, ok := c[name].(float64)
		return time.Unix(int64(n), 0), ok
	}
	if str("iss") != f.Issuer.URL {
		return fmt.Sprintf("issuer %q is not the trusted issuer", str("iss"))
	}
	if exp, ok := unix("exp"); !ok || !now.Before(exp) {
		return "the token has expired"
	}
	if nbf, ok := unix("nbf"); ok && now.Before(nbf.Add(-time.Minute)) {
		return "the token is not valid yet"
	}
	var auds []string
	switch a := c["aud"].(type) {
	case string:
		auds = []string{a}
	case []any:
		for _, x := range a {
			if s, ok := x.(string); ok {
				auds = append(auds, s)
			}
		}
	}
	if !slices.Contains(auds, f.Audience) {
		return fmt.Sprintf("audience %q does not include %q", auds, f.Audience)
	}
	if ok, _ := path.Match(strings.ReplaceAll(f.Subject, "/", "\x00"), strings.ReplaceAll(str("sub"), "/", "\x00")); !ok {
		return fmt.Sprintf("subject %q does not match %q", str("sub"), f.Subject)
	}
	for name, want := range f.CustomClaimRules {
		if got := fmt.Sprint(c[name]); got != want {
			return fmt.Sprintf("claim %q is %q, want %q", name, got, want)
		}
	}
	return ""
}
