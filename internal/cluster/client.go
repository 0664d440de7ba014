package cluster

import (
	"context"
	"fmt"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// OAuthClient is the OAuth client with which the operator of a cluster
// calls the Tailscale API and mints the auth keys of its proxies, as far
// as qtail can read it: the tags it may apply (its own, and those they
// own in tagOwners) and its scopes.
type OAuthClient struct {
	// ID is empty when qtail cannot tell which client the operator uses.
	ID string
	// Known is set when Tags and Scopes are the client's: qtail creates it
	// (create_oauth_client, tagged default_tags, with
	// OperatorOAuthScopes), or read it through the keys API. Otherwise
	// Tags are the operator's own tags, which the recipe gives its client,
	// and Scopes are nil.
	Known  bool
	Tags   []string
	Scopes []string
}

// describe names the client and its tags for a diagnostic.
func (c OAuthClient) describe() string {
	if c.Known && c.ID != "" {
		return fmt.Sprintf("its OAuth client %s, tagged %s", c.ID, tfx.HCLList(c.Tags))
	}
	if c.Known {
		return fmt.Sprintf("the OAuth client qtail creates for it, tagged %s", tfx.HCLList(c.Tags))
	}
	return fmt.Sprintf("its OAuth client, which qtail could not read and takes to be tagged like the operator, %s", tfx.HCLList(c.Tags))
}

// OAuthClient returns the OAuth client of the cluster's operator: the one
// a qtail_operator of the plan creates or names (with UsePlan), otherwise
// the one the plain variable TS_OAUTH_CLIENT_ID of the operator's Helm
// service names, read through the keys API with tn (nil: not read). It is
// looked up once.
func (l *Lookup) OAuthClient(ctx context.Context, tn *tailnet.Client) OAuthClient {
	if l.clientDone {
		return l.client
	}
	l.clientDone = true
	op, _ := l.Operator(ctx)
	c := OAuthClient{Tags: op.Tags}
	if op.Planned && op.CreatesClient {
		l.client = OAuthClient{Known: true, Tags: op.Tags, Scopes: OperatorOAuthScopes}
		return l.client
	}
	if op.Planned {
		c.ID = op.ClientID
	} else if op.HelmID != "" {
		c.ID = operatorClientID(ctx, l.q, op.HelmID)
	}
	if c.ID != "" && tn != nil {
		if k, err := tn.GetKey(ctx, c.ID); err == nil {
			c.Known, c.Tags, c.Scopes = true, k.Tags, k.Scopes
		}
	}
	l.client = c
	return c
}

// operatorClientID reads the OAuth client ID of an operator's Helm service
// from its plain variable TS_OAUTH_CLIENT_ID (qtail keeps it plain: a
// client ID is not a secret); "" when it is a secret or missing.
func operatorClientID(ctx context.Context, q *qovery.Client, helmID string) string {
	vars, err := q.ListVariables(ctx, helmID, qovery.VariableScopeHelm)
	if err != nil {
		return ""
	}
	for _, v := range vars {
		if v.Key == manifest.OAuthClientIDVariable && v.Scope == qovery.VariableScopeHelm && !v.IsSecret && v.Value != nil {
			return *v.Value
		}
	}
	return ""
}
