package tailnet

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	tailscale "tailscale.com/client/tailscale/v2"

	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// Key is the metadata of an auth key or an OAuth client. The secret is
// only ever returned by the call that creates it.
type Key struct {
	// ID is the key id; for an OAuth client it is the client ID.
	ID string
	// KeyType is "auth", "client" or "federated" (a federated identity,
	// whose ID is the client ID workloads exchange their tokens with).
	KeyType     string
	Description string
	Created     time.Time
	// Expires is zero for keys that do not expire (OAuth clients).
	Expires time.Time
	// Revoked is when the key was deleted, zero if it was not.
	Revoked time.Time
	// Invalid is true once the key is revoked or expired.
	Invalid bool
	// Scopes are an OAuth client's scopes.
	Scopes []string
	// Tags are an OAuth client's tags, or the tags of the devices an auth
	// key creates.
	Tags []string
	// UserID is the user who owns the key; empty for a key of the tailnet
	// itself (created with an OAuth access token).
	UserID string
	// Reusable, Ephemeral and Preauthorized describe an auth key.
	Reusable, Ephemeral, Preauthorized bool
	// Expiry is an auth key's lifetime as requested.
	Expiry time.Duration
	// Audience, Issuer, Subject and CustomClaimRules are a federated
	// identity's trust settings: the identity tokens it exchanges must
	// come from Issuer, for Audience, with a subject matching Subject and
	// the claims of CustomClaimRules.
	Audience, Issuer, Subject string
	CustomClaimRules          map[string]string
}

// AuthKeyOptions describes an auth key to create.
type AuthKeyOptions struct {
	Reusable, Ephemeral, Preauthorized bool
	// Tags are applied to the devices the key creates.
	Tags []string
	// Expiry defaults to the server's (90 days).
	Expiry time.Duration
	// Description: at most 50 letters, digits, spaces, hyphens or
	// underscores.
	Description string
}

func fromV2Key(k tailscale.Key) Key {
	out := Key{
		ID:          k.ID,
		KeyType:     k.KeyType,
		Description: k.Description,
		Created:     k.Created,
		Expires:     k.Expires,
		Revoked:     k.Revoked,
		Invalid:     k.Invalid,
		Scopes:      k.Scopes,
		Tags:        k.Tags,
		UserID:      k.UserID,
		Audience:    k.Audience,
		Issuer:      k.Issuer,
		Subject:     k.Subject,

		CustomClaimRules: k.CustomClaimRules,
	}
	create := k.Capabilities.Devices.Create
	if k.KeyType == keyTypeAuth || k.KeyType == "" {
		// The API sends an auth key's tags only under
		// capabilities.devices.create.tags; a top-level "tags" is read
		// only when that is absent.
		out.Reusable, out.Ephemeral, out.Preauthorized = create.Reusable, create.Ephemeral, create.Preauthorized
		if create.Tags != nil {
			out.Tags = create.Tags
		}
	}
	if k.ExpirySeconds != nil {
		// Client v2 decodes the wire's whole seconds into a
		// time.Duration, that is as nanoseconds.
		out.Expiry = time.Duration(int64(*k.ExpirySeconds)) * time.Second
	}
	return out
}

// CreateOAuthClient creates an OAuth client with these scopes and tags.
// The secret is only available now: the API never returns it again.
//
// So an OAuth client found after an ambiguous outcome (IsAmbiguous: the
// connection failed after the request was sent, or a gateway answered 502
// or 504) is of no use: its secret is lost. The request is not sent again
// blindly either. The client's keys are listed instead, and an OAuth
// client with this description, scopes and tags created after the request
// was sent (on the server's clock) is deleted before the create is sent
// once more. Several such clients are an error that names them, and none
// is deleted. See CreateAuthKey for auth keys.
func (c *Client) CreateOAuthClient(ctx context.Context, scopes, tags []string, description string) (id, secret string, err error) {
	create := func(ctx context.Context) (*tailscale.Key, error) {
		return c.api.Keys().CreateOAuthClient(ctx, tailscale.CreateOAuthClientRequest{
			Scopes:      scopes,
			Tags:        tags,
			Description: description,
		})
	}
	same := func(k Key) bool {
		return k.KeyType == keyTypeClient && k.Description == description && sameSet(k.Scopes, scopes) && sameSet(k.Tags, tags)
	}
	k, err := c.createKey(ctx, "the OAuth client "+strconv.Quote(description), create, same)
	if err != nil {
		return "", "", err
	}
	return k.ID, k.Key, nil
}

// CreateAuthKey creates an auth key. The secret is only available now.
//
// After an ambiguous outcome, as for CreateOAuthClient, an auth key with
// this description, tags and settings created after the request was sent
// is deleted (its secret is lost) before the create is sent once more.
func (c *Client) CreateAuthKey(ctx context.Context, opts AuthKeyOptions) (id, secret string, err error) {
	req := tailscale.CreateKeyRequest{
		ExpirySeconds: int64(opts.Expiry / time.Second),
		Description:   opts.Description,
	}
	req.Capabilities.Devices.Create.Reusable = opts.Reusable
	req.Capabilities.Devices.Create.Ephemeral = opts.Ephemeral
	req.Capabilities.Devices.Create.Preauthorized = opts.Preauthorized
	req.Capabilities.Devices.Create.Tags = opts.Tags
	create := func(ctx context.Context) (*tailscale.Key, error) {
		return c.api.Keys().CreateAuthKey(ctx, req)
	}
	same := func(k Key) bool {
		return (k.KeyType == keyTypeAuth || k.KeyType == "") && k.Description == opts.Description && sameSet(k.Tags, opts.Tags) &&
			k.Reusable == opts.Reusable && k.Ephemeral == opts.Ephemeral && k.Preauthorized == opts.Preauthorized
	}
	k, err := c.createKey(ctx, "the auth key "+strconv.Quote(opts.Description), create, same)
	if err != nil {
		return "", "", err
	}
	return k.ID, k.Key, nil
}

// Key types.
const (
	keyTypeAuth   = "auth"
	keyTypeClient = "client"
)

// IsAmbiguous reports whether err leaves the outcome of a create unknown:
// the connection failed after the request was sent (*retry.AmbiguousError),
// or a gateway answered 502 or 504.
func IsAmbiguous(err error) bool {
	if retry.IsAmbiguous(err) {
		return true
	}
	e, ok := AsAPIError(err)
	return ok && retry.AmbiguousStatus(e.Status)
}

// createdSlack widens the window in which a key found after an ambiguous
// create counts as created by it: the server's clock is known to about a
// second, and keys are stamped in whole seconds.
const createdSlack = 5 * time.Second

// createKey sends a key create and settles an ambiguous outcome: since the
// secret of a key created by a lost answer cannot be had, such a key
// (same(k), created after the request was sent) is deleted and the create
// sent once more. object names the key in errors.
func (c *Client) createKey(ctx context.Context, object string, create func(context.Context) (*tailscale.Key, error), same func(Key) bool) (*tailscale.Key, error) {
	path := c.tailnetURL("keys").Path
	send := func(ctx context.Context) (*tailscale.Key, error) {
		var k *tailscale.Key
		err := c.call(ctx, http.MethodPost, path, func(ctx context.Context) error {
			var err error
			k, err = create(ctx)
			return err
		})
		if err != nil {
			return nil, err
		}
		if k == nil || k.ID == "" || k.Key == "" {
			return nil, fmt.Errorf("tailscale API POST %s: the answer does not hold the new key's id and secret", path)
		}
		return k, nil
	}
	start := time.Now()
	k, err := send(ctx)
	if err == nil || !IsAmbiguous(err) || ctx.Err() != nil {
		return k, err
	}
	keys, a, lerr := c.listKeys(ctx, true)
	if e, ok := AsAPIError(lerr); ok && e.Status == http.StatusForbidden {
		// Listing every key of the tailnet may need more rights than
		// listing the credential's own, which holds the new one.
		keys, a, lerr = c.listKeys(ctx, false)
	}
	if lerr != nil {
		return nil, fmt.Errorf("tailscale API POST %s: creating %s: the outcome is unknown (%w), and listing the keys to find it failed (%w); a key created without its secret reaching qtail is of no use: revoke any such key in the admin console", path, object, err, lerr)
	}
	since := retry.ServerTime(start, a.header.Get("Date"), a.received).Add(-createdSlack)
	var orphans []string
	for _, o := range keys {
		if !o.Invalid && !o.Created.Before(since) && same(o) {
			orphans = append(orphans, o.ID)
		}
	}
	switch len(orphans) {
	case 0:
	case 1:
		if derr := c.DeleteKey(ctx, orphans[0]); derr != nil && !IsNotFound(derr) {
			return nil, fmt.Errorf("tailscale API POST %s: creating %s: the outcome was unknown (%v); the key %s it created cannot be used (its secret was lost) and deleting it failed: %w; revoke it in the admin console", path, object, err, orphans[0], derr)
		}
	default:
		return nil, fmt.Errorf("tailscale API POST %s: creating %s: the outcome is unknown (%w), and %d keys that match it were created since (%s): qtail cannot tell which is its own, so it deleted none and created no other; revoke the unused ones in the admin console",
			path, object, err, len(orphans), strings.Join(orphans, ", "))
	}
	k, err2 := send(ctx)
	if err2 == nil {
		return k, nil
	}
	hint := ""
	if IsAmbiguous(err2) {
		hint = "; a key created without its secret reaching qtail is of no use: revoke any such key in the admin console"
	}
	return nil, fmt.Errorf("tailscale API POST %s: creating %s: the outcome of the first attempt was unknown (%v), so it was sent once more: %w%s", path, object, err, err2, hint)
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// ListKeys lists the metadata of the tailnet's active keys and OAuth
// clients. Without all, the API lists those of the credential's owner (an
// API access token's user, or the tailnet for an OAuth client); with all,
// every one the credential may read. An answer that holds only ids, as
// older versions of the API give, is completed with a read of each key.
func (c *Client) ListKeys(ctx context.Context, all bool) ([]Key, error) {
	keys, _, err := c.listKeys(ctx, all)
	return keys, err
}

// keysAnswer is what listKeys keeps of the list's response.
type keysAnswer struct {
	header   http.Header
	received time.Time
}

func (c *Client) listKeys(ctx context.Context, all bool) ([]Key, keysAnswer, error) {
	path := c.tailnetURL("keys").Path
	xctx, ex := withExchange(ctx)
	list, err := c.api.Keys().List(xctx, all)
	got := keysAnswer{header: ex.header, received: time.Now()}
	if err := convertError(err, ex, http.MethodGet, path); err != nil {
		return nil, got, err
	}
	out := make([]Key, 0, len(list))
	for _, k := range list {
		if k.Created.IsZero() && k.KeyType == "" {
			full, err := c.GetKey(ctx, k.ID)
			if IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, got, err
			}
			out = append(out, *full)
			continue
		}
		out = append(out, fromV2Key(k))
	}
	return out, got, nil
}

// GetKey reads a key's metadata. A deleted key reads back with Invalid
// set, or not at all (IsNotFound), depending on how long ago it went.
func (c *Client) GetKey(ctx context.Context, id string) (*Key, error) {
	var k *tailscale.Key
	err := c.call(ctx, http.MethodGet, c.tailnetURL("keys", id).Path, func(ctx context.Context) error {
		var err error
		k, err = c.api.Keys().Get(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := fromV2Key(*k)
	return &out, nil
}

// DeleteKey revokes an auth key or deletes an OAuth client (its access
// tokens stop working). A key that is already gone is an error for which
// IsNotFound is true.
func (c *Client) DeleteKey(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodDelete, c.tailnetURL("keys", id).Path, func(ctx context.Context) error {
		return c.api.Keys().Delete(ctx, id)
	})
}
