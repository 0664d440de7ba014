// Package conn holds what the provider's Configure hands to every resource
// and data source: the Qovery and Tailscale clients built once from the
// provider settings, the tailnet policy Store with its plan-time Planner,
// and the planned.World of the plan; and the ResourceBase and
// DataSourceBase that receive them.
package conn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/qtail/terraform-provider-qtail/internal/planned"
	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// DefaultPollInterval is the wait between two status reads while qtail
// waits for a deployment or a device.
const DefaultPollInterval = 5 * time.Second

// Options tune the clients; zero values take the production defaults.
type Options struct {
	// PollInterval is the wait between two status reads. Zero means
	// DefaultPollInterval.
	PollInterval time.Duration
	// Retry is the retry policy of both API clients. Zero means
	// retry.Default().
	Retry retry.Policy
	// TerraformVersion is the version of the Terraform CLI that runs the
	// provider, sent in the User-Agent with the provider's.
	TerraformVersion string
	// DeployQuiet is qovery.Config.DeployQuiet: how long a deployment
	// waits for the other deployments of its environment, to make one
	// action with them; negative deploys each service on its own.
	DeployQuiet time.Duration
}

// Setting is one resolved provider setting: the attribute and the
// environment variable it comes from (for messages), its value, or
// unknown when it depends on a value computed during apply.
type Setting struct {
	Attr    string
	Env     string
	Value   string
	Unknown bool
}

// Clients is what Configure hands to every resource and data source of one
// provider instance: the two API clients, built once, the policy store
// shared by every policy fragment with its plan-time Planner, and the
// planned.World that lets one resource's plan see another's.
type Clients struct {
	version      string
	tfVersion    string
	pollInterval time.Duration
	retryPolicy  retry.Policy
	deployQuiet  time.Duration

	qovery    *qovery.Client
	qoveryErr string // why there is no Qovery client
	// qoveryUnknown is set when a Qovery setting is not known yet (it comes
	// from another resource): API checks at plan time are skipped.
	qoveryUnknown bool

	tailnet        *tailnet.Client
	tailnetErr     string
	tailnetUnknown bool

	// settings are the tailnet settings, once read (ReadTailnetSettings).
	settingsMu sync.Mutex
	settings   *tailnet.Settings

	storeOnce sync.Once
	store     *policy.Store
	planner   *policy.Planner

	planned *planned.World
}

// New returns the clients of a provider instance of version, with no API
// configured yet.
func New(version string, opts Options) *Clients {
	c := &Clients{
		version:      version,
		tfVersion:    opts.TerraformVersion,
		pollInterval: opts.PollInterval,
		retryPolicy:  opts.Retry,
		deployQuiet:  opts.DeployQuiet,
		planned:      planned.New(),
	}
	if c.pollInterval <= 0 {
		c.pollInterval = DefaultPollInterval
	}
	if c.retryPolicy.MaxAttempts == 0 {
		c.retryPolicy = retry.Default()
	}
	return c
}

// UserAgent is what both API clients send as User-Agent: the provider's
// version, where it comes from, and the Terraform CLI that runs it, so that
// the API's operators can tell qtail's calls apart.
func (c *Clients) UserAgent() string {
	ua := fmt.Sprintf("terraform-provider-qtail/%s (+https://registry.terraform.io/providers/qtail/qtail)", c.version)
	if c.tfVersion != "" {
		ua += " Terraform/" + c.tfVersion
	}
	return ua
}

// httpClient returns an HTTP client with qtail's retry policy, logging each
// call (method, path, status: never headers or bodies) at trace level.
func (c *Clients) httpClient() *http.Client {
	p := c.retryPolicy
	p.OnRetry = func(ctx context.Context, e retry.Event) {
		fields := map[string]any{"method": e.Method, "url": e.URL, "attempt": e.Attempt, "wait": e.Delay.String()}
		if e.Status != 0 {
			fields["status"] = e.Status
		}
		if e.Err != nil {
			fields["error"] = e.Err.Error()
		}
		tflog.Debug(ctx, "retrying API call", fields)
	}
	return &http.Client{Transport: p.Transport(loggingTransport{next: http.DefaultTransport}), Timeout: 2 * time.Minute}
}

type loggingTransport struct{ next http.RoundTripper }

func (t loggingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	fields := map[string]any{"method": req.Method, "path": req.URL.Path, "duration": time.Since(start).String()}
	if err != nil {
		fields["error"] = err.Error()
	} else {
		fields["status"] = resp.StatusCode
	}
	tflog.Trace(req.Context(), "API call", fields)
	return resp, err
}

// ConfigureQovery builds the Qovery client from its settings, or records
// why there is none.
func (c *Clients) ConfigureQovery(token, apiURL Setting) {
	if token.Unknown || apiURL.Unknown {
		c.qoveryUnknown = true
		c.qoveryErr = "the Qovery settings of the provider are not known yet (they depend on a value computed during apply): " +
			"set them from values known at plan time, or apply the resources they depend on first with -target"
		return
	}
	if token.Value == "" {
		c.qoveryErr = fmt.Sprintf("no Qovery API token: set the %q provider attribute or the %s environment variable", token.Attr, token.Env)
		return
	}
	q, err := qovery.New(qovery.Config{BaseURL: apiURL.Value, Token: token.Value, UserAgent: c.UserAgent(), HTTPClient: c.httpClient(),
		NotFoundDelay: min(c.pollInterval, qovery.DefaultNotFoundDelay), DeployQuiet: c.deployQuiet})
	if err != nil {
		c.qoveryErr = err.Error()
		return
	}
	c.qovery = q
}

// TailnetSettings are the provider's Tailscale settings: a credential (an
// API key; an OAuth client ID with its secret; or the ID of a federated
// identity with an identity token, given or fetched from GitHub Actions for
// Audience), the tailnet and the API's base URL.
type TailnetSettings struct {
	APIKey, OAuthClientID, OAuthClientSecret Setting
	IdentityToken, Audience                  Setting
	Tailnet, BaseURL                         Setting
	// Getenv reads the variables GitHub Actions gives a job to fetch its
	// identity token.
	Getenv func(string) string
}

// ConfigureTailnet builds the Tailscale client from its settings, or
// records why there is none.
func (c *Clients) ConfigureTailnet(s TailnetSettings) {
	for _, v := range []Setting{s.APIKey, s.OAuthClientID, s.OAuthClientSecret, s.IdentityToken, s.Audience, s.Tailnet, s.BaseURL} {
		if v.Unknown {
			c.tailnetUnknown = true
			c.tailnetErr = "the Tailscale settings of the provider are not known yet (they depend on a value computed during apply): " +
				"set them from values known at plan time, or apply the resources they depend on first with -target"
			return
		}
	}
	if s.APIKey.Value == "" && s.OAuthClientID.Value == "" {
		c.tailnetErr = fmt.Sprintf("no Tailscale credential: set the %q provider attribute (%s environment variable), "+
			"or %q and %q (%s, %s), or %q with %q for workload identity", s.APIKey.Attr, s.APIKey.Env,
			s.OAuthClientID.Attr, s.OAuthClientSecret.Attr, s.OAuthClientID.Env, s.OAuthClientSecret.Env,
			s.OAuthClientID.Attr, s.IdentityToken.Attr)
		return
	}
	hc := c.httpClient()
	cfg := tailnet.Config{
		BaseURL:           s.BaseURL.Value,
		APIKey:            s.APIKey.Value,
		OAuthClientID:     s.OAuthClientID.Value,
		OAuthClientSecret: s.OAuthClientSecret.Value,
		IdentityToken:     s.IdentityToken.Value,
		Tailnet:           s.Tailnet.Value,
		UserAgent:         c.UserAgent(),
		HTTPClient:        hc,
	}
	if audience := s.Audience.Value; audience != "" {
		getenv := s.Getenv
		cfg.IdentityTokenFunc = func(ctx context.Context) (string, error) {
			return tailnet.GitHubActionsIDToken(ctx, hc, getenv, audience)
		}
	}
	t, err := tailnet.New(cfg)
	if err != nil {
		c.tailnetErr = err.Error()
		return
	}
	c.tailnet = t
}

// PollInterval is the wait between two status reads while a resource waits
// for a deployment or a device.
func (c *Clients) PollInterval() time.Duration { return c.pollInterval }

// Planned is what the plan of this provider instance has planned so far.
func (c *Clients) Planned() *planned.World { return c.planned }

// Qovery returns the Qovery client, or an error diagnostic that says which
// setting is missing.
func (c *Clients) Qovery() (*qovery.Client, diag.Diagnostics) {
	var diags diag.Diagnostics
	if c == nil {
		return nil, NotConfigured()
	}
	if c.qovery == nil {
		diags.AddError("Qovery API Not Configured", "This resource needs the Qovery API, but "+c.qoveryErr+".")
	}
	return c.qovery, diags
}

// Tailnet returns the Tailscale client, or an error diagnostic that says
// which setting is missing.
func (c *Clients) Tailnet() (*tailnet.Client, diag.Diagnostics) {
	var diags diag.Diagnostics
	if c == nil {
		return nil, NotConfigured()
	}
	if c.tailnet == nil {
		diags.AddError("Tailscale API Not Configured", "This resource needs the Tailscale API, but "+c.tailnetErr+".")
	}
	return c.tailnet, diags
}

// QoveryOrNil returns the Qovery client, or nil when there is none: for
// what is only done when the credential is there.
func (c *Clients) QoveryOrNil() *qovery.Client { return c.qovery }

// TailnetOrNil returns the Tailscale client, or nil when there is none.
func (c *Clients) TailnetOrNil() *tailnet.Client { return c.tailnet }

// ReadTailnetSettings reads the tailnet settings once per provider
// instance, that is once per Terraform command: every resource that needs
// HTTPS certificates checks them at plan, and one read serves them all. A
// failed read is not kept.
func (c *Clients) ReadTailnetSettings(ctx context.Context) (*tailnet.Settings, error) {
	c.settingsMu.Lock()
	defer c.settingsMu.Unlock()
	if c.settings != nil {
		return c.settings, nil
	}
	if c.tailnet == nil {
		return nil, errors.New("the Tailscale API is not configured")
	}
	st, err := c.tailnet.GetSettings(ctx)
	if err != nil {
		return nil, err
	}
	c.settings = st
	return st, nil
}

// TailnetUnknown reports whether the Tailscale settings are not known yet
// at plan time (they come from another resource): the plan-time checks of
// the tailnet are then skipped.
func (c *Clients) TailnetUnknown() bool { return c.tailnetUnknown }

// PlanQovery returns the Qovery client for a plan-time check, or nil when
// there is none. A missing credential is an error of the plan (not of the
// apply), unless the settings are only not known yet.
func (c *Clients) PlanQovery(diags *diag.Diagnostics) *qovery.Client {
	if c.qovery == nil && !c.qoveryUnknown {
		_, dd := c.Qovery()
		diags.Append(dd...)
	}
	return c.qovery
}

// PlanTailnet is PlanQovery for the Tailscale client.
func (c *Clients) PlanTailnet(diags *diag.Diagnostics) *tailnet.Client {
	if c.tailnet == nil && !c.tailnetUnknown {
		_, dd := c.Tailnet()
		diags.Append(dd...)
	}
	return c.tailnet
}

// NotConfigured is the error of a resource or data source used before
// Terraform configured the provider, which Terraform never does.
func NotConfigured() diag.Diagnostics {
	var diags diag.Diagnostics
	diags.AddError("Provider Not Configured", "Terraform used a qtail resource or data source before it configured the qtail provider. "+
		"Please report this issue to the qtail developers.")
	return diags
}

// Policy returns the policy store of this provider instance.
func (c *Clients) Policy() (*policy.Store, diag.Diagnostics) {
	t, diags := c.Tailnet()
	if diags.HasError() {
		return nil, diags
	}
	c.storeOnce.Do(func() {
		c.store = policy.NewStore(t.PolicyBackend(), policy.StoreOptions{Retry: c.retryPolicy, Log: debugLog})
		c.planner = policy.NewPlanner(c.store)
	})
	return c.store, diags
}

// debugLog sends the policy Store's records to Terraform's log, at debug
// level: the size, wait and reason of each batch, each write and retry.
func debugLog(ctx context.Context, msg string, fields map[string]any) { tflog.Debug(ctx, msg, fields) }

// Planner returns the plan-time checker of the policy store, or nil when
// there is no Tailscale client.
func (c *Clients) Planner() *policy.Planner {
	if _, diags := c.Policy(); diags.HasError() {
		return nil
	}
	return c.planner
}

// PlannedPolicy returns the policy file as it will be once the fragment
// changes planned so far are applied.
func (c *Clients) PlannedPolicy(ctx context.Context) ([]byte, diag.Diagnostics) {
	_, diags := c.Policy()
	if diags.HasError() {
		return nil, diags
	}
	body, err := c.planner.PlannedPolicy(ctx)
	if err != nil {
		tfx.APIError(&diags, "read the tailnet policy file", err)
		return nil, diags
	}
	return body, diags
}
