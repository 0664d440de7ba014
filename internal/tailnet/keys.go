package tailnet

import (
	"context"
	"net/http"
	"time"

	tailscale "tailscale.com/client/tailscale/v2"
)

// Key is the metadata of an auth key or an OAuth client. The secret is
// only ever returned by the call that creates it.
type Key struct {
	// ID is the key id; for an OAuth client it is the client ID.
	ID string
	// KeyType is "auth" or "client".
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
	// Reusable, Ephemeral and Preauthorized describe an auth key.
	Reusable, Ephemeral, Preauthorized bool
	// Expiry is an auth key's lifetime as requested.
	Expiry time.Duration
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
	}
	create := k.Capabilities.Devices.Create
	if k.KeyType != "client" {
		out.Reusable, out.Ephemeral, out.Preauthorized = create.Reusable, create.Ephemeral, create.Preauthorized
		if len(out.Tags) == 0 {
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
func (c *Client) CreateOAuthClient(ctx context.Context, scopes, tags []string, description string) (id, secret string, err error) {
	var k *tailscale.Key
	err = c.call(ctx, http.MethodPost, c.tailnetURL("keys").Path, func(ctx context.Context) error {
		var err error
		k, err = c.api.Keys().CreateOAuthClient(ctx, tailscale.CreateOAuthClientRequest{
			Scopes:      scopes,
			Tags:        tags,
			Description: description,
		})
		return err
	})
	if err != nil {
		return "", "", err
	}
	return k.ID, k.Key, nil
}

// CreateAuthKey creates an auth key. The secret is only available now.
func (c *Client) CreateAuthKey(ctx context.Context, opts AuthKeyOptions) (id, secret string, err error) {
	req := tailscale.CreateKeyRequest{
		ExpirySeconds: int64(opts.Expiry / time.Second),
		Description:   opts.Description,
	}
	req.Capabilities.Devices.Create.Reusable = opts.Reusable
	req.Capabilities.Devices.Create.Ephemeral = opts.Ephemeral
	req.Capabilities.Devices.Create.Preauthorized = opts.Preauthorized
	req.Capabilities.Devices.Create.Tags = opts.Tags
	var k *tailscale.Key
	err = c.call(ctx, http.MethodPost, c.tailnetURL("keys").Path, func(ctx context.Context) error {
		var err error
		k, err = c.api.Keys().CreateAuthKey(ctx, req)
		return err
	})
	if err != nil {
		return "", "", err
	}
	return k.ID, k.Key, nil
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
