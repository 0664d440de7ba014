package tailnetapi

import (
	"net/http"
	"slices"
	"time"
)

// MintAuthKey creates an auth key with the caller's access token, as the
// operator does at its first login (POST /keys): one-off, preauthorized,
// tagged tags, owned by the tailnet, with the default expiry. It fails as
// POST /keys would: 403 without the auth_keys scope, 400 for tags that are
// undeclared or neither the client's nor owned by them. It returns the
// key's ID; the secret goes to the node that logs in with it.
func (c *Caller) MintAuthKey(tags []string) (string, error) {
	if !c.p.allows("auth_keys") {
		return "", &CallError{Status: http.StatusForbidden, Message: errPermissionDenied}
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if msg := s.validateAuthKeyLocked(tags, c.p); msg != "" {
		return "", &CallError{Status: http.StatusBadRequest, Message: msg}
	}
	now := s.now().UTC().Truncate(time.Second)
	expiry := int64((90 * 24 * time.Hour) / time.Second)
	k := &key{ID: newKeyID(), KeyType: keyTypeAuth, Created: now, Tags: slices.Clone(tags), Preauth: true,
		ExpirySecs: expiry, Expires: now.Add(time.Duration(expiry) * time.Second)}
	k.Secret = "tskey-auth-" + k.ID + "-" + randomString(32)
	s.keys[k.ID] = k
	s.keyOrder = append(s.keyOrder, k.ID)
	return k.ID, nil
}
