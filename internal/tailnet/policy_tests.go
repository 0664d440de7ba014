package tailnet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// PolicyTest is one entry of the tests of a policy file: whether Src may
// (Accept) or may not (Deny) reach destinations written "host:port" with
// a single port, such as "100.64.0.9:5432". Src is one user, group, tag,
// host or IP. Proto is empty for TCP and UDP, or a protocol such as "tcp".
type PolicyTest struct {
	Src    string   `json:"src"`
	Proto  string   `json:"proto,omitempty"`
	Accept []string `json:"accept,omitempty"`
	Deny   []string `json:"deny,omitempty"`
}

// RunPolicyTests runs tests against the current policy file without
// changing anything: POST /acl/validate with a JSON array of tests. It
// returns the failing tests as the server reports them, each with its
// source (User) and one error per failing destination, for example
// `address "100.64.0.9:5432": want: Accept, got: Drop`; nil when every
// test passes. Entries that carry only warnings are not failures. An
// answer with a message and no failing test (tests the server could not
// read) is a *ValidationError; a malformed request an *APIError.
func (c *Client) RunPolicyTests(ctx context.Context, tests []PolicyTest) ([]ErrorData, error) {
	if len(tests) == 0 {
		return nil, nil
	}
	body, err := json.Marshal(tests)
	if err != nil {
		return nil, err
	}
	u := c.tailnetURL("acl", "validate")
	h := http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json"},
	}
	// Running tests changes nothing, so it is safe to repeat.
	_, b, err := c.send(retry.Idempotent(ctx), http.MethodPost, u, body, h)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	msg, data, ok := decodeErrorBody(b)
	if !ok {
		return nil, fmt.Errorf("tailscale API POST %s: unexpected answer: %s", u.Path, snippet(b))
	}
	var failed []ErrorData
	warned := false
	for _, d := range data {
		if len(d.Errors) > 0 {
			failed = append(failed, d)
		} else if len(d.Warnings) > 0 {
			warned = true
		}
	}
	if len(failed) > 0 || msg == "" || warned {
		return failed, nil
	}
	return nil, &ValidationError{Method: http.MethodPost, Path: u.Path, Message: msg, Data: data}
}
