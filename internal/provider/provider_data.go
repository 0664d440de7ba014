package provider

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

const defaultPollInterval = 5 * time.Second

// providerData is what Configure hands to every resource and data source:
// the two API clients, built once, and the policy store shared by every
// policy fragment of this provider instance.
type providerData struct {
	version      string
	pollInterval time.Duration
	retryPolicy  retry.Policy

	qovery    *qovery.Client
	qoveryErr string // why there is no Qovery client
	// qoveryUnknown is set when a Qovery setting is not known yet (it comes
	// from another resource): API checks at plan time are skipped.
	qoveryUnknown bool

	tailnet        *tailnet.Client
	tailnetErr     string
	tailnetUnknown bool

	storeOnce sync.Once
	store     *policy.Store
	// checks holds and validates the fragment changes planned by this
	// provider instance.
	checks *policyCoordinator

	// exposures and operators remember what the plan of this
	// provider instance claims and gives up, proxyGroups the ProxyGroups
	// it declares (see their types).
	exposures *exposureRegistry
	operators *operatorRegistry

	// manifestDevices maps the Helm services of manifest services that
	// Read refreshed to the devices it found (see observeManifestDevices).
	manifestsMu     sync.Mutex
	manifestDevices map[string][]string
	proxyGroups     *proxyGroupRegistry
}

func newProviderData(version string, opts Options) *providerData {
	d := &providerData{
		version:      version,
		pollInterval: opts.PollInterval,
		retryPolicy:  opts.Retry,
		exposures:    newExposureRegistry(),
		operators:    newOperatorRegistry(),
		proxyGroups:  newProxyGroupRegistry(),
	}
	if d.pollInterval <= 0 {
		d.pollInterval = defaultPollInterval
	}
	if d.retryPolicy.MaxAttempts == 0 {
		d.retryPolicy = retry.Default()
	}
	return d
}

func (d *providerData) userAgent() string {
	return fmt.Sprintf("terraform-provider-qtail/%s", d.version)
}

// httpClient returns an HTTP client with qtail's retry policy, logging each
// call (method, path, status: never headers or bodies) at trace level.
func (d *providerData) httpClient() *http.Client {
	p := d.retryPolicy
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

func (d *providerData) configureQovery(token, apiURL setting) {
	if token.unknown || apiURL.unknown {
		d.qoveryUnknown = true
		d.qoveryErr = "the Qovery settings of the provider are not known yet (they depend on a value computed during apply): " +
			"set them from values known at plan time, or apply the resources they depend on first with -target"
		return
	}
	if token.value == "" {
		d.qoveryErr = fmt.Sprintf("no Qovery API token: set the %q provider attribute or the %s environment variable", token.attr, token.env)
		return
	}
	c, err := qovery.New(qovery.Config{BaseURL: apiURL.value, Token: token.value, UserAgent: d.userAgent(), HTTPClient: d.httpClient()})
	if err != nil {
		d.qoveryErr = err.Error()
		return
	}
	d.qovery = c
}

func (d *providerData) configureTailnet(key, id, secret, tailnetName, baseURL setting) {
	for _, s := range []setting{key, id, secret, tailnetName, baseURL} {
		if s.unknown {
			d.tailnetUnknown = true
			d.tailnetErr = "the Tailscale settings of the provider are not known yet (they depend on a value computed during apply): " +
				"set them from values known at plan time, or apply the resources they depend on first with -target"
			return
		}
	}
	if key.value == "" && id.value == "" {
		d.tailnetErr = fmt.Sprintf("no Tailscale credential: set the %q provider attribute (%s environment variable), "+
			"or %q and %q (%s, %s)", key.attr, key.env, id.attr, secret.attr, id.env, secret.env)
		return
	}
	c, err := tailnet.New(tailnet.Config{
		BaseURL:           baseURL.value,
		APIKey:            key.value,
		OAuthClientID:     id.value,
		OAuthClientSecret: secret.value,
		Tailnet:           tailnetName.value,
		UserAgent:         d.userAgent(),
		HTTPClient:        d.httpClient(),
	})
	if err != nil {
		d.tailnetErr = err.Error()
		return
	}
	d.tailnet = c
}

// Qovery returns the Qovery client, or an error diagnostic that says which
// setting is missing.
func (d *providerData) Qovery() (*qovery.Client, diag.Diagnostics) {
	var diags diag.Diagnostics
	if d == nil {
		return nil, notConfigured()
	}
	if d.qovery == nil {
		diags.AddError("Qovery API Not Configured", "This resource needs the Qovery API, but "+d.qoveryErr+".")
	}
	return d.qovery, diags
}

// Tailnet returns the Tailscale client, or an error diagnostic that says
// which setting is missing.
func (d *providerData) Tailnet() (*tailnet.Client, diag.Diagnostics) {
	var diags diag.Diagnostics
	if d == nil {
		return nil, notConfigured()
	}
	if d.tailnet == nil {
		diags.AddError("Tailscale API Not Configured", "This resource needs the Tailscale API, but "+d.tailnetErr+".")
	}
	return d.tailnet, diags
}

// notConfigured is the error of a resource or data source used before
// Terraform configured the provider, which Terraform never does.
func notConfigured() diag.Diagnostics {
	var diags diag.Diagnostics
	diags.AddError("Provider Not Configured", "Terraform used a qtail resource or data source before it configured the qtail provider. "+
		"Please report this issue to the qtail developers.")
	return diags
}

// Policy returns the policy store of this provider instance.
func (d *providerData) Policy() (*policy.Store, diag.Diagnostics) {
	c, diags := d.Tailnet()
	if diags.HasError() {
		return nil, diags
	}
	d.storeOnce.Do(func() {
		d.store = policy.NewStore(c.PolicyBackend(), policy.StoreOptions{Retry: d.retryPolicy})
		d.checks = newPolicyCoordinator(d.store, c.ValidatePolicy)
	})
	return d.store, diags
}

// policyChecks returns the plan-time coordinator of the policy store.
func (d *providerData) policyChecks() *policyCoordinator {
	if _, diags := d.Policy(); diags.HasError() {
		return nil
	}
	return d.checks
}

// plannedPolicy returns the policy file as it will be once the fragment
// changes planned so far are applied.
func (d *providerData) plannedPolicy(ctx context.Context) ([]byte, diag.Diagnostics) {
	store, diags := d.Policy()
	if diags.HasError() {
		return nil, diags
	}
	body, err := store.Preview(ctx, d.checks.plannedChanges()...)
	if err != nil {
		apiError(&diags, "read the tailnet policy file", err)
		return nil, diags
	}
	return body, diags
}
