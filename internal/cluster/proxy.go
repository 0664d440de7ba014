package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// ScopeGranted reports whether OAuth scopes grant write access to want
// ("all" grants everything).
func ScopeGranted(scopes []string, want string) bool {
	for _, s := range scopes {
		if s == want || s == "all" {
			return true
		}
	}
	return false
}

// servicesScope is the OAuth scope with which the operator creates the
// Tailscale Service of an exposure through an ingress ProxyGroup.
const servicesScope = "services"

// CheckIngressScope refuses an ingress ProxyGroup, or an exposure through
// one, on a cluster whose operator's OAuth client lacks the services
// scope: the operator then cannot create the Tailscale Service svc:HOSTNAME
// of any exposure through the ProxyGroup, and none is reachable. A client
// qtail creates has the scope; one qtail cannot read is only warned about.
// what names the planned object: "the ingress ProxyGroup web".
func CheckIngressScope(ctx context.Context, c *conn.Clients, ops *Lookup, at path.Path, what string, diags *diag.Diagnostics) {
	if c.TailnetOrNil() == nil {
		return
	}
	client := ops.UsePlan(c.Planned()).OAuthClient(ctx, c.TailnetOrNil())
	switch {
	case !client.Known:
		diags.AddAttributeWarning(at, "OAuth Client Scopes Not Checked",
			fmt.Sprintf("qtail could not read the OAuth client of the operator of cluster %s (its client ID is in a secret variable, "+
				"or the provider's credential may not read keys). The operator creates the Tailscale Service of each exposure through %s "+
				"with it: make sure it has the %s scope with write access.", ops.Env.ClusterID, what, servicesScope))
	case !ScopeGranted(client.Scopes, servicesScope):
		diags.AddAttributeError(at, "Operator's OAuth Client Lacks the Services Scope",
			fmt.Sprintf("The operator of cluster %s uses the OAuth client %s, whose scopes are %s. An exposure through %s is served as a "+
				"Tailscale Service (svc:HOSTNAME) that the operator creates through the API, which needs the %s scope with write "+
				"access: without it no exposure through the ProxyGroup is reachable. Give the qtail_operator an OAuth client with "+
				"the scopes %s (or create_oauth_client = true), then apply this.",
				ops.Env.ClusterID, client.ID, tfx.HCLList(client.Scopes), what, servicesScope, tfx.HCLList(OperatorOAuthScopes)))
	}
}

// environmentLookup reads an environment and returns the lookup of its
// cluster.
func environmentLookup(ctx context.Context, c *conn.Clients, envID string) (*Lookup, error) {
	q := c.QoveryOrNil()
	if q == nil {
		return nil, errors.New("no Qovery client")
	}
	env, err := q.GetEnvironment(ctx, envID)
	if err != nil {
		return nil, err
	}
	return NewLookup(q, env).UsePlan(c.Planned()), nil
}

// ProxyCannotAppear returns why the operator of the cluster of the
// environment envID will bring up no proxy device tagged tags with the
// ProxyClass proxyClass (empty: the operator's default), as the tailnet
// policy and the cluster's Helm services stand now, or "" when nothing
// shows it. A wait for the device then stops at once instead of running
// into its timeout: the operator starts whatever its proxies' tags, and
// each proxy whose auth key its OAuth client cannot mint fails on its own.
func ProxyCannotAppear(ctx context.Context, c *conn.Clients, envID string, tags []string, proxyClass string, operatorDefault bool) string {
	ops, err := environmentLookup(ctx, c, envID)
	if err != nil {
		return ""
	}
	return ops.proxyCannotAppear(ctx, c.TailnetOrNil(), tags, proxyClass, operatorDefault)
}

// ApplicationProxyCannotAppear is ProxyCannotAppear for the proxy of the
// exposed application appID: tagged tags (none: the operator's proxy
// tags), with the ProxyClass proxyClass.
func ApplicationProxyCannotAppear(ctx context.Context, c *conn.Clients, appID string, tags []string, proxyClass string) string {
	ops, err := applicationLookup(ctx, c, appID)
	if err != nil {
		return ""
	}
	if len(tags) == 0 {
		op, _ := ops.Operator(ctx)
		tags = op.ProxyTags
	}
	return ops.proxyCannotAppear(ctx, c.TailnetOrNil(), tags, proxyClass, true)
}

func (l *Lookup) proxyCannotAppear(ctx context.Context, tn *tailnet.Client, tags []string, proxyClass string, operatorDefault bool) string {
	if why := ProxyClassProblem(ctx, l, proxyClass, operatorDefault); why != "" {
		return why
	}
	if tn == nil || len(tags) == 0 {
		return ""
	}
	client := l.OAuthClient(ctx, tn)
	if !client.Known {
		return ""
	}
	body, _, err := tn.GetPolicy(ctx)
	if err != nil {
		return ""
	}
	doc, err := policyfile.Parse(body)
	if err != nil {
		return ""
	}
	if unowned := unownedTags(doc, tags, client.Tags); len(unowned) > 0 {
		return fmt.Sprintf("the operator mints the proxy's auth key with %s, and the tailnet policy does not let those tags own %s, "+
			"so the operator's request is refused (requested tags are invalid or not permitted); let one of the client's tags own "+
			"them in tagOwners (a qtail_tag_owner)", client.describe(), tfx.HCLList(unowned))
	}
	return ""
}

// applicationLookup returns the lookup of the cluster of an application.
func applicationLookup(ctx context.Context, c *conn.Clients, appID string) (*Lookup, error) {
	q := c.QoveryOrNil()
	if q == nil {
		return nil, errors.New("no Qovery client")
	}
	app, err := q.GetApplication(ctx, appID)
	if err != nil {
		return nil, err
	}
	return environmentLookup(ctx, c, app.Environment.ID)
}

// AwaitExposureService waits, after an exposure of the application appID
// through the ingress ProxyGroup proxyGroup, until the operator has
// created the Tailscale Service svc:HOSTNAME that the ProxyGroup's
// replicas serve. It stops at once when the operator's OAuth client lacks
// the services scope, and as soon as the cluster's Helm services show that
// the ProxyGroup is missing or not of type ingress.
func AwaitExposureService(ctx context.Context, c *conn.Clients, tn *tailnet.Client, appID, proxyGroup, hostname string) (*tailnet.Service, error) {
	name := tailnet.ServiceName(hostname)
	blocked := Blocked(func(ctx context.Context) string {
		ops, err := applicationLookup(ctx, c, appID)
		if err != nil {
			return ""
		}
		return ProxyGroupProblem(ctx, ops, proxyGroup, manifest.ProxyGroupIngress)
	})
	if ops, err := applicationLookup(ctx, c, appID); err == nil {
		if client := ops.OAuthClient(ctx, tn); client.Known && !ScopeGranted(client.Scopes, servicesScope) {
			return nil, fmt.Errorf("the operator creates the Tailscale Service %s with its OAuth client %s, which lacks the %s scope "+
				"(it has %s): give the qtail_operator an OAuth client with the scopes %s", name, client.ID, servicesScope,
				tfx.HCLList(client.Scopes), tfx.HCLList(OperatorOAuthScopes))
		}
	}
	wait := tfx.StartWait(ctx, "the Tailscale Service "+name)
	for {
		s, err := tn.FindService(ctx, name)
		if err != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("looking for the Tailscale Service %s: %w", name, err)
		}
		if s != nil {
			return s, nil
		}
		if why := blocked(ctx); why != "" {
			return nil, fmt.Errorf("the operator cannot create the Tailscale Service %s: %s. Declare the ProxyGroup with a "+
				"qtail_proxy_group of type %q and refer to it in proxy_group", name, why, manifest.ProxyGroupIngress)
		}
		if wait.Sleep(ctx, c.PollInterval(), "no Tailscale Service "+name+" yet") != nil {
			return nil, fmt.Errorf("%w waiting for the operator to create the Tailscale Service %s: check that the ProxyGroup is of "+
				"type ingress and has a replica online, that no other exposure through a ProxyGroup uses the hostname %s, and the "+
				"Service's events and the operator's logs in the cluster", ErrTimedOut, name, hostname)
		}
	}
}

// CheckExposure checks, at the plan of an exposure on the cluster of ops,
// what the operator needs to serve it: through the ingress ProxyGroup
// proxyGroup, an OAuth client with the services scope (CheckIngressScope);
// otherwise a ProxyClass (proxyClass, or the operator's default) that the
// cluster renders and can make Ready (CheckProxyClass).
func CheckExposure(ctx context.Context, c *conn.Clients, ops *Lookup, proxyGroup, proxyClass string, diags *diag.Diagnostics) {
	if proxyGroup != "" {
		CheckIngressScope(ctx, c, ops, path.Root("proxy_group"), "the ingress ProxyGroup "+proxyGroup, diags)
		return
	}
	CheckProxyClass(ctx, c, ops, ProxyClassCheck{Name: proxyClass, OperatorDefault: true, At: path.Root("proxy_class"),
		Object: "the exposed Service"}, diags)
}

// pollEvery is how often a wait for devices looks again for a reason
// why they cannot appear: every so many polls.
const pollEvery = 20

// Blocked returns a function that a wait for devices calls at each poll:
// it asks why (ProxyCannotAppear) at the first poll and every pollEvery
// polls after, and returns the last answer.
func Blocked(why func(ctx context.Context) string) func(ctx context.Context) string {
	n := 0
	last := ""
	return func(ctx context.Context) string {
		if n%pollEvery == 0 {
			last = why(ctx)
		}
		n++
		return last
	}
}
