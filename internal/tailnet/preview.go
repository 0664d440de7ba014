package tailnet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// PreviewType says what a policy preview is for.
type PreviewType string

// The preview types of POST /acl/preview.
const (
	// PreviewUser previews the rules that apply to a user, named by login
	// (email).
	PreviewUser PreviewType = "user"
	// PreviewIPPort previews the rules that let someone reach an address
	// and port, written "100.64.0.1:443" or "[fd7a:115c:a1e0::1]:443".
	PreviewIPPort PreviewType = "ipport"
)

// RuleMatch is one rule of a previewed policy that applies.
type RuleMatch struct {
	// Users are the rule's sources, as the policy writes them
	// ("group:ops", "*", "alice@example.com").
	Users []string `json:"users"`
	// Ports are the rule's destinations with their ports.
	Ports []string `json:"ports"`
	// LineNumber is the rule's line in the policy file sent.
	LineNumber int `json:"lineNumber"`
	// Via lists the tags the access is routed through, if any.
	Via []string `json:"via,omitempty"`
	// Postures are the rule's device posture conditions, if any.
	Postures []string `json:"postures,omitempty"`
}

// Preview is Tailscale's answer to a policy preview.
type Preview struct {
	Matches    []RuleMatch `json:"matches"`
	Type       PreviewType `json:"type"`
	PreviewFor string      `json:"previewFor"`
}

// PreviewPolicy asks Tailscale which rules of the policy file body (HuJSON
// or JSON, not stored) apply to previewFor: POST /acl/preview. A policy
// the server refuses, or a previewFor it cannot resolve, is an *APIError
// (HTTP 400) with the server's message.
func (c *Client) PreviewPolicy(ctx context.Context, body []byte, typ PreviewType, previewFor string) (*Preview, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, fmt.Errorf("tailscale policy preview for %s: the policy file is empty", previewFor)
	}
	u := c.tailnetURL("acl", "preview")
	u.RawQuery = url.Values{"type": {string(typ)}, "previewFor": {previewFor}}.Encode()
	h := http.Header{
		"Content-Type": {"application/hujson"},
		"Accept":       {"application/json"},
	}
	// A preview changes nothing, so it is safe to repeat.
	_, b, err := c.send(retry.Idempotent(ctx), http.MethodPost, u, body, h)
	if err != nil {
		return nil, err
	}
	var p Preview
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("tailscale API POST %s: unexpected answer: %s", u.Path, snippet(b))
	}
	if p.Matches == nil {
		p.Matches = []RuleMatch{}
	}
	return &p, nil
}
