package tailnetapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

const (
	keyTypeAuth      = "auth"
	keyTypeClient    = "client"
	keyTypeFederated = "federated"
)

// key is an auth key or an OAuth client. For an OAuth client the id is the
// client ID and Secret the client secret.
type key struct {
	ID          string
	KeyType     string
	Secret      string
	Description string
	Created     time.Time
	Updated     time.Time // the last PUT of an OAuth client; zero if none
	Expires     time.Time // zero for OAuth clients
	Revoked     time.Time // set by DELETE
	// UserID is the owner: the user of the API access token that created
	// the key, or "" for a key of the tailnet itself (created with an
	// OAuth access token).
	UserID     string
	Scopes     []string // OAuth clients
	Tags       []string // OAuth client tags, or the tags of devices an auth key creates
	Reusable   bool
	Ephemeral  bool
	Preauth    bool
	ExpirySecs int64
	// Audience, Issuer, Subject and CustomClaimRules are the trust
	// settings of a federated identity.
	Audience         string
	Issuer           string
	Subject          string
	CustomClaimRules map[string]string
}

// keyJSON is the wire shape of a key. Times are RFC 3339 or omitted, never
// "" (client v2 decodes them into time.Time).
type keyJSON struct {
	ID            string           `json:"id"`
	Key           string           `json:"key,omitempty"`
	KeyType       string           `json:"keyType"`
	Description   string           `json:"description"`
	Created       time.Time        `json:"created"`
	Updated       time.Time        `json:"updated,omitzero"`
	Expires       time.Time        `json:"expires,omitzero"`
	Revoked       time.Time        `json:"revoked,omitzero"`
	Invalid       bool             `json:"invalid"`
	Capabilities  *capabilitiesDTO `json:"capabilities,omitempty"`
	Scopes        []string         `json:"scopes,omitempty"`
	Tags          []string         `json:"tags,omitempty"`
	UserID        string           `json:"userId"`
	ExpirySeconds int64            `json:"expirySeconds,omitempty"`
	// A federated identity's trust settings.
	Audience         string            `json:"audience,omitempty"`
	Issuer           string            `json:"issuer,omitempty"`
	Subject          string            `json:"subject,omitempty"`
	CustomClaimRules map[string]string `json:"customClaimRules,omitempty"`
}

type capabilitiesDTO struct {
	Devices *devicesCapDTO `json:"devices"`
}

type devicesCapDTO struct {
	Create createCapDTO `json:"create"`
}

type createCapDTO struct {
	Reusable      bool     `json:"reusable"`
	Ephemeral     bool     `json:"ephemeral"`
	Preauthorized bool     `json:"preauthorized"`
	Tags          []string `json:"tags"`
}

// createKeyRequest is the body of POST /keys for every key type.
type createKeyRequest struct {
	KeyType       string           `json:"keyType"`
	Description   string           `json:"description"`
	ExpirySeconds int64            `json:"expirySeconds"`
	Capabilities  *capabilitiesDTO `json:"capabilities"`
	Scopes        []string         `json:"scopes"`
	Tags          []string         `json:"tags"`
}

// invalid reports whether the key is revoked or expired.
func (k *key) invalid(now time.Time) bool {
	return !k.Revoked.IsZero() || (!k.Expires.IsZero() && !now.Before(k.Expires))
}

// wire is the key as the API sends it. An auth key carries its tags only
// under capabilities.devices.create.tags and has no "updated", as on the
// real API; OAuth clients and federated identities have top-level "tags"
// and "updated". Options.Compat.KeyTagsEverywhere gives every key type
// the top-level "tags" and "updated".
func (k *key) wire(withSecret bool, now time.Time, compat Compat) keyJSON {
	out := keyJSON{
		ID:          k.ID,
		KeyType:     k.KeyType,
		Description: k.Description,
		Created:     k.Created,
		Expires:     k.Expires,
		Revoked:     k.Revoked,
		Invalid:     k.invalid(now),
		UserID:      k.UserID,
	}
	if k.KeyType != keyTypeAuth || compat.KeyTagsEverywhere {
		out.Tags = slices.Clone(k.Tags)
		out.Updated = k.Created
		if !k.Updated.IsZero() {
			out.Updated = k.Updated
		}
		if !k.Revoked.IsZero() {
			out.Updated = k.Revoked
		}
	}
	if withSecret {
		out.Key = k.Secret
	}
	switch k.KeyType {
	case keyTypeFederated:
		out.Scopes = slices.Clone(k.Scopes)
		out.Audience, out.Issuer, out.Subject = k.Audience, k.Issuer, k.Subject
		out.CustomClaimRules = maps.Clone(k.CustomClaimRules)
	case keyTypeClient:
		out.Scopes = slices.Clone(k.Scopes)
	default:
		create := createCapDTO{Reusable: k.Reusable, Ephemeral: k.Ephemeral, Preauthorized: k.Preauth, Tags: slices.Clone(k.Tags)}
		if create.Tags == nil {
			create.Tags = []string{}
		}
		out.Capabilities = &capabilitiesDTO{Devices: &devicesCapDTO{Create: create}}
		out.ExpirySeconds = k.ExpirySecs
	}
	return out
}

// knownScopes are the OAuth scopes the service documents.
var knownScopes = map[string]bool{}

func init() {
	for _, s := range []string{
		"all", "devices:core", "devices:routes", "devices:posture_attributes", "policy_file",
		"auth_keys", "oauth_keys", "federated_keys", "services", "users", "dns",
		"feature_settings", "log_streaming", "account_settings", "webhooks", "tailnet_settings",
	} {
		knownScopes[s] = true
		knownScopes[s+":read"] = true
	}
	knownScopes["logs:configuration:read"] = true
	knownScopes["logs:network:read"] = true
}

var descriptionRE = regexp.MustCompile(`^[A-Za-z0-9 _-]*$`)

// checkTag validates a tag's syntax the way the service does.
func checkTag(tag string) error {
	name, ok := strings.CutPrefix(tag, "tag:")
	if !ok {
		return fmt.Errorf("tag %q: tags must start with 'tag:'", tag)
	}
	if name == "" || !isASCIILetter(name[0]) {
		return fmt.Errorf("tag %q: tag names must start with a letter, after 'tag:'", tag)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isASCIILetter(c) && (c < '0' || c > '9') && c != '-' {
			return fmt.Errorf("tag %q: tag names can only contain numbers, letters, or dashes", tag)
		}
	}
	return nil
}

func isASCIILetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// checkDeclaredTagsLocked checks that every tag is well formed and declared
// in tagOwners of the current policy.
func (s *Server) checkDeclaredTagsLocked(tags []string) error {
	owners := tagOwners(s.policy)
	var missing []string
	for _, t := range tags {
		if err := checkTag(t); err != nil {
			return err
		}
		if _, ok := owners[t]; !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("requested tags [%s] are invalid or not permitted: not declared in tagOwners of the tailnet policy file", strings.Join(missing, ", "))
	}
	return nil
}

func checkDescription(d string) error {
	if len(d) > 50 {
		return fmt.Errorf("description is %d characters long; at most 50 are allowed", len(d))
	}
	if !descriptionRE.MatchString(d) {
		return fmt.Errorf("description %q may contain only letters, numbers, hyphens, spaces and underscores", d)
	}
	return nil
}

// handleCreateKey is POST /tailnet/{tailnet}/keys: auth keys (keyType
// "auth", the default) and OAuth clients (keyType "client").
func (s *Server) handleCreateKey(w http.ResponseWriter, r *http.Request, p principal) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var req createKeyRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid request body: "+err.Error())
		return
	}
	if req.KeyType == "" {
		req.KeyType = keyTypeAuth
	}
	switch req.KeyType {
	case keyTypeAuth:
		if !p.allows("auth_keys") {
			permissionDenied(w)
			return
		}
	case keyTypeClient:
		if !p.allows("oauth_keys") {
			permissionDenied(w)
			return
		}
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("keyType %q is not supported: use \"auth\" or \"client\"", req.KeyType))
		return
	}
	if err := checkDescription(req.Description); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now().UTC().Truncate(time.Second)
	k := &key{ID: newKeyID(), KeyType: req.KeyType, Description: req.Description, Created: now}
	if p.apiKey {
		k.UserID = apiKeyUserID
	}
	if req.KeyType == keyTypeClient {
		if msg := s.validateOAuthClientLocked(req); msg != "" {
			writeError(w, http.StatusBadRequest, msg)
			return
		}
		k.Scopes = slices.Clone(req.Scopes)
		k.Tags = slices.Clone(req.Tags)
		k.Secret = "tskey-client-" + k.ID + "-" + randomString(32)
	} else {
		if req.Capabilities == nil || req.Capabilities.Devices == nil {
			writeError(w, http.StatusBadRequest, "capabilities.devices is required for an auth key")
			return
		}
		c := req.Capabilities.Devices.Create
		if msg := s.validateAuthKeyLocked(c.Tags, p); msg != "" {
			writeError(w, http.StatusBadRequest, msg)
			return
		}
		if req.ExpirySeconds < 0 {
			writeError(w, http.StatusBadRequest, "expirySeconds must not be negative")
			return
		}
		if req.ExpirySeconds == 0 {
			req.ExpirySeconds = int64((90 * 24 * time.Hour) / time.Second)
		}
		k.Reusable, k.Ephemeral, k.Preauth = c.Reusable, c.Ephemeral, c.Preauthorized
		k.Tags = slices.Clone(c.Tags)
		k.ExpirySecs = req.ExpirySeconds
		k.Expires = now.Add(time.Duration(req.ExpirySeconds) * time.Second)
		k.Secret = "tskey-auth-" + k.ID + "-" + randomString(32)
	}
	s.keys[k.ID] = k
	s.keyOrder = append(s.keyOrder, k.ID)
	writeJSON(w, http.StatusOK, k.wire(true, now, s.opts.Compat))
}

// validateOAuthClientLocked checks an OAuth client creation request.
func (s *Server) validateOAuthClientLocked(req createKeyRequest) string {
	if len(req.Scopes) == 0 {
		return "at least one scope is required for an OAuth client"
	}
	needTags := false
	for _, sc := range req.Scopes {
		if !knownScopes[sc] {
			return fmt.Sprintf("invalid scope %q", sc)
		}
		if sc == "all" || sc == "devices:core" || sc == "auth_keys" {
			needTags = true
		}
	}
	if needTags && len(req.Tags) == 0 {
		return "tags are required for an OAuth client with the devices:core or auth_keys scope"
	}
	if err := s.checkDeclaredTagsLocked(req.Tags); err != nil {
		return err.Error()
	}
	return ""
}

// validateAuthKeyLocked checks the tags of an auth key. A key created with
// an OAuth access token must be tagged, with the client's tags or tags they
// own.
func (s *Server) validateAuthKeyLocked(tags []string, p principal) string {
	if err := s.checkDeclaredTagsLocked(tags); err != nil {
		return err.Error()
	}
	if p.apiKey {
		return ""
	}
	if len(tags) == 0 {
		return "auth keys created with an OAuth access token must be tagged"
	}
	if denied := s.notOwnedByClientLocked(p, tags); len(denied) > 0 {
		return fmt.Sprintf("requested tags [%s] are invalid or not permitted: the OAuth client's tags [%s] neither are nor own them", strings.Join(denied, ", "), strings.Join(p.tags, ", "))
	}
	return ""
}

// notOwnedByClientLocked returns the tags that the OAuth client of p may
// not apply: those that are neither among its tags nor owned by one of
// them in tagOwners. An API access token (an admin's) may apply any.
func (s *Server) notOwnedByClientLocked(p principal, tags []string) []string {
	if p.apiKey {
		return nil
	}
	owners := tagOwners(s.policy)
	var denied []string
	for _, t := range tags {
		ok := slices.Contains(p.tags, t)
		for _, o := range owners[t] {
			ok = ok || slices.Contains(p.tags, o)
		}
		if !ok {
			denied = append(denied, t)
		}
	}
	return denied
}

// canAccessKey reports whether p may read keys of keyType, or with write
// create and delete them.
func canAccessKey(p principal, keyType string, write bool) bool {
	scope := "auth_keys"
	if keyType == keyTypeClient {
		scope = "oauth_keys"
	}
	if !write {
		scope += ":read"
	}
	return p.allows(scope)
}

// apiKeyUserID is the user who owns the API access token of
// Options.APIKey, and so the keys created with it.
const apiKeyUserID = "uAPIKEYOWNERCNTRL"

// handleListKeys is GET /tailnet/{tailnet}/keys[?all=true]: metadata of
// the keys that are not revoked, among those the caller's scopes cover.
// Without all=true the list depends on the caller, as on the real API: an
// API access token sees the keys its user owns, an OAuth access token the
// keys the tailnet owns (those created with OAuth access tokens). With
// all=true every key of the tailnet is listed.
// OAuthClient is an OAuth client of the tailnet, as the admin console
// lists it.
type OAuthClient struct {
	ID, Description string
	Tags, Scopes    []string
}

// OAuthClients lists the OAuth clients that are not deleted, by ID.
func (s *Server) OAuthClients() []OAuthClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []OAuthClient
	for _, k := range s.keys {
		if k.KeyType == keyTypeClient && k.Revoked.IsZero() {
			out = append(out, OAuthClient{ID: k.ID, Description: k.Description, Tags: slices.Clone(k.Tags), Scopes: slices.Clone(k.Scopes)})
		}
	}
	slices.SortFunc(out, func(a, b OAuthClient) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func (s *Server) handleListKeys(w http.ResponseWriter, r *http.Request, p principal) {
	all := false
	if v := r.URL.Query().Get("all"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid value %q for all: use true or false", v))
			return
		}
		all = b
	}
	if !canAccessKey(p, keyTypeAuth, false) && !canAccessKey(p, keyTypeClient, false) {
		permissionDenied(w)
		return
	}
	owner := ""
	if p.apiKey {
		owner = apiKeyUserID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	out := []keyJSON{}
	for _, id := range s.keyOrder {
		k := s.keys[id]
		if k == nil || !k.Revoked.IsZero() || !canAccessKey(p, k.KeyType, false) || (!all && k.UserID != owner) {
			continue
		}
		out = append(out, k.wire(false, now, s.opts.Compat))
	}
	writeJSON(w, http.StatusOK, map[string][]keyJSON{"keys": out})
}

// handleGetKey is GET /tailnet/{tailnet}/keys/{id}: metadata only, never
// the secret. A deleted key reads back revoked and invalid.
func (s *Server) handleGetKey(w http.ResponseWriter, r *http.Request, p principal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys[r.PathValue("id")]
	if k == nil {
		if !canAccessKey(p, keyTypeAuth, false) && !canAccessKey(p, keyTypeClient, false) {
			permissionDenied(w)
			return
		}
		writeError(w, http.StatusNotFound, "key not found")
		return
	}
	if !canAccessKey(p, k.KeyType, false) {
		permissionDenied(w)
		return
	}
	writeJSON(w, http.StatusOK, k.wire(false, s.now(), s.opts.Compat))
}

// handleSetKey is PUT /tailnet/{tailnet}/keys/{id}: the description,
// scopes and tags of an OAuth client are replaced in place, checked as on
// creation, and the client reads back with a new "updated" time; its id
// and secret stay. The body names the key type ("client"). Other key
// types are refused: auth keys cannot be changed, and federated identities
// are only seeded in this fake.
func (s *Server) handleSetKey(w http.ResponseWriter, r *http.Request, p principal) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var req createKeyRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid request body: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys[r.PathValue("id")]
	if k == nil || !k.Revoked.IsZero() {
		if !canAccessKey(p, keyTypeClient, true) {
			permissionDenied(w)
			return
		}
		writeError(w, http.StatusNotFound, "key not found")
		return
	}
	if !canAccessKey(p, k.KeyType, true) {
		permissionDenied(w)
		return
	}
	if k.KeyType != keyTypeClient {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("a key of type %q cannot be updated", k.KeyType))
		return
	}
	if req.KeyType != "" && req.KeyType != k.KeyType {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("keyType %q does not match the key's type %q", req.KeyType, k.KeyType))
		return
	}
	if err := checkDescription(req.Description); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if msg := s.validateOAuthClientLocked(req); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	now := s.now().UTC().Truncate(time.Second)
	k.Description = req.Description
	k.Scopes = slices.Clone(req.Scopes)
	k.Tags = slices.Clone(req.Tags)
	k.Updated = now
	writeJSON(w, http.StatusOK, k.wire(false, now, s.opts.Compat))
}

// handleDeleteKey is DELETE /tailnet/{tailnet}/keys/{id}. The key is
// revoked: it reads back with "invalid": true and a "revoked" time, its
// OAuth access tokens stop working, and a second DELETE answers 404.
func (s *Server) handleDeleteKey(w http.ResponseWriter, r *http.Request, p principal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys[r.PathValue("id")]
	if k == nil || !k.Revoked.IsZero() {
		if !canAccessKey(p, keyTypeAuth, true) && !canAccessKey(p, keyTypeClient, true) {
			permissionDenied(w)
			return
		}
		writeError(w, http.StatusNotFound, "key not found")
		return
	}
	if !canAccessKey(p, k.KeyType, true) {
		permissionDenied(w)
		return
	}
	k.Revoked = s.now().UTC().Truncate(time.Second)
	for tok, t := range s.tokens {
		if t.clientID == k.ID {
			delete(s.tokens, tok)
		}
	}
	w.WriteHeader(http.StatusOK)
}
