package tailnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// maxResponseBody bounds a response body; policy files are far smaller.
const maxResponseBody = 10 << 20

// ErrEmptyPolicy is returned by SetPolicy for an empty body, which the API
// would take as "reset the policy file to the default", allow-all rule
// included.
var ErrEmptyPolicy = errors.New("refusing to write an empty policy file: Tailscale would reset the tailnet to its default allow-all policy")

// tailnetURL returns BASE/api/v2/tailnet/{tailnet}/elem....
func (c *Client) tailnetURL(elem ...string) *url.URL {
	parts := []string{"api", "v2", "tailnet", url.PathEscape(c.tailnet)}
	for _, e := range elem {
		parts = append(parts, url.PathEscape(e))
	}
	return c.base.JoinPath(parts...)
}

// send makes a raw request with the authenticated client and returns the
// response header and body of a 2xx answer; any other answer is an
// *APIError.
func (c *Client) send(ctx context.Context, method string, u *url.URL, body []byte, header http.Header) (http.Header, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		var e *APIError
		if errors.As(err, &e) {
			return nil, nil, e
		}
		return nil, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody+1))
	if err != nil {
		return nil, nil, fmt.Errorf("tailscale API %s %s: reading the response: %w", method, u.Path, err)
	}
	if len(b) > maxResponseBody {
		return nil, nil, fmt.Errorf("tailscale API %s %s: response larger than %d bytes", method, u.Path, maxResponseBody)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, nil, newAPIError(method, u.Path, resp.StatusCode, resp.Header, b)
	}
	return resp.Header, b, nil
}

// GetPolicy reads the policy file as HuJSON, byte for byte, with its ETag
// exactly as the server sent it (quoted).
func (c *Client) GetPolicy(ctx context.Context) (body []byte, etag string, err error) {
	h, b, err := c.send(ctx, http.MethodGet, c.tailnetURL("acl"), nil, http.Header{"Accept": {"application/hujson"}})
	if err != nil {
		return nil, "", err
	}
	return b, h.Get("ETag"), nil
}

// SetPolicy replaces the policy file with body (HuJSON). With a non-empty
// etag the write is conditional (If-Match) and, being safe to repeat, is
// retried like an idempotent request; a changed policy gives an *APIError
// with status 412 (policy.IsPreconditionFailed). Without etag the write is
// unconditional and only retried where a POST may be. It returns the new
// ETag from the response header, quoted; empty if the server sent none.
func (c *Client) SetPolicy(ctx context.Context, body []byte, etag string) (newETag string, err error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return "", ErrEmptyPolicy
	}
	h := http.Header{
		"Content-Type": {"application/hujson"},
		"Accept":       {"application/hujson"},
	}
	if etag != "" {
		h.Set("If-Match", quoteETag(etag))
		ctx = retry.Idempotent(ctx)
	}
	rh, _, err := c.send(ctx, http.MethodPost, c.tailnetURL("acl"), body, h)
	if err != nil {
		return "", err
	}
	return rh.Get("ETag"), nil
}

// quoteETag returns etag as one quoted value, whether it came quoted or
// not.
func quoteETag(etag string) string {
	return `"` + strings.Trim(strings.TrimSpace(etag), `"`) + `"`
}

// ValidatePolicy asks the server whether body would be accepted, tests
// included, without changing anything. The endpoint answers 200 either
// way: a rejection is a *ValidationError with the server's message and
// failing tests; a malformed request is an *APIError.
func (c *Client) ValidatePolicy(ctx context.Context, body []byte) error {
	u := c.tailnetURL("acl", "validate")
	h := http.Header{
		"Content-Type": {"application/hujson"},
		"Accept":       {"application/json"},
	}
	// Validation changes nothing, so it is safe to repeat.
	_, b, err := c.send(retry.Idempotent(ctx), http.MethodPost, u, body, h)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	msg, data, ok := decodeErrorBody(b)
	if !ok {
		return fmt.Errorf("tailscale API POST %s: unexpected answer: %s", u.Path, snippet(b))
	}
	if msg == "" && len(data) == 0 {
		return nil
	}
	if msg == "" {
		msg = "validation failed"
	}
	return &ValidationError{Method: http.MethodPost, Path: u.Path, Message: msg, Data: data}
}

// PolicyBackend returns the client as the policy engine's Backend.
func (c *Client) PolicyBackend() policy.Backend { return policyBackend{c} }

type policyBackend struct{ c *Client }

func (b policyBackend) Get(ctx context.Context) (policy.Snapshot, error) {
	body, etag, err := b.c.GetPolicy(ctx)
	if err != nil {
		return policy.Snapshot{}, err
	}
	return policy.Snapshot{HuJSON: body, ETag: etag}, nil
}

func (b policyBackend) Set(ctx context.Context, hujson []byte, etag string) (string, error) {
	return b.c.SetPolicy(ctx, hujson, etag)
}

func (b policyBackend) Validate(ctx context.Context, hujson []byte) error {
	return b.c.ValidatePolicy(ctx, hujson)
}
