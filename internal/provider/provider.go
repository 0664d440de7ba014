// Package provider is the qtail provider itself: its schema, Configure,
// which builds the conn.Clients that every resource and data source
// receives, and the lists of resources and data sources, each implemented
// in its family package under internal/service.
package provider

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
	"github.com/qtail/terraform-provider-qtail/internal/service/exposedservice"
	"github.com/qtail/terraform-provider-qtail/internal/service/helmrepository"
	"github.com/qtail/terraform-provider-qtail/internal/service/manifestservice"
	"github.com/qtail/terraform-provider-qtail/internal/service/operator"
	"github.com/qtail/terraform-provider-qtail/internal/service/policyfragment"
	"github.com/qtail/terraform-provider-qtail/internal/service/status"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// Defaults of the provider configuration.
const (
	DefaultQoveryAPIURL     = "https://api.qovery.com"
	DefaultTailscaleBaseURL = "https://api.tailscale.com"
	DefaultTailnet          = "-"
)

// Environment variables read by the provider configuration.
const (
	EnvQoveryAPIToken             = "QOVERY_API_TOKEN"
	EnvQoveryAPIURL               = "QOVERY_API_URL"
	EnvTailscaleAPIKey            = "TAILSCALE_API_KEY"
	EnvTailscaleOAuthClientID     = "TAILSCALE_OAUTH_CLIENT_ID"
	EnvTailscaleOAuthClientSecret = "TAILSCALE_OAUTH_CLIENT_SECRET"
	EnvTailscaleTailnet           = "TAILSCALE_TAILNET"
	EnvTailscaleBaseURL           = "TAILSCALE_BASE_URL"
	EnvTailscaleIdentityToken     = tailnet.EnvIdentityToken
	EnvTailscaleAudience          = tailnet.EnvAudience
)

// Options tune a provider instance. The zero value is what Terraform gets;
// tests shorten the waits and read their settings from a map instead of the
// process environment, so that they can run in parallel.
type Options struct {
	// Getenv replaces os.Getenv.
	Getenv func(string) string
	// PollInterval is the wait between two status reads while qtail waits
	// for a deployment or a device. Zero means the production default.
	PollInterval time.Duration
	// Retry is the retry policy of both API clients. Zero means
	// retry.Default().
	Retry retry.Policy
	// DeployQuiet is how long a Qovery deployment waits for the other
	// deployments of its environment, to make one action with them
	// (qovery.Config.DeployQuiet): zero means the production default,
	// negative deploys each service on its own.
	DeployQuiet time.Duration
}

// New returns a constructor of the qtail provider for the given version.
func New(version string) func() provider.Provider {
	return NewWithOptions(version, Options{})
}

// NewWithOptions is New with test settings.
func NewWithOptions(version string, opts Options) func() provider.Provider {
	return func() provider.Provider {
		return &qtailProvider{version: version, opts: opts}
	}
}

var _ provider.Provider = &qtailProvider{}

type qtailProvider struct {
	version string
	opts    Options
	// clients are the clients of the last Configure, for the requests the
	// Server answers without the framework.
	clients atomic.Pointer[conn.Clients]
}

// configuredClients returns the clients of the last Configure, or nil.
func (p *qtailProvider) configuredClients() *conn.Clients { return p.clients.Load() }

type providerModel struct {
	QoveryAPIToken             types.String `tfsdk:"qovery_api_token"`
	QoveryAPIURL               types.String `tfsdk:"qovery_api_url"`
	TailscaleAPIKey            types.String `tfsdk:"tailscale_api_key"`
	TailscaleOAuthClientID     types.String `tfsdk:"tailscale_oauth_client_id"`
	TailscaleOAuthClientSecret types.String `tfsdk:"tailscale_oauth_client_secret"`
	TailscaleTailnet           types.String `tfsdk:"tailscale_tailnet"`
	TailscaleBaseURL           types.String `tfsdk:"tailscale_base_url"`
	TailscaleIdentityToken     types.String `tfsdk:"tailscale_identity_token"`
	TailscaleAudience          types.String `tfsdk:"tailscale_audience"`
}

func (p *qtailProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "qtail"
	resp.Version = p.version
}

func (p *qtailProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "qtail puts services that Qovery deploys on a Tailscale tailnet through the Tailscale Kubernetes operator, " +
			"and controls who can reach them. It talks to two APIs: Qovery (Helm repositories, Helm services, variables, " +
			"annotations groups, applications) and Tailscale (the policy file, devices, keys). A credential is needed only " +
			"by the resources that use its API.",
		Attributes: map[string]schema.Attribute{
			"qovery_api_token": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				MarkdownDescription: "Qovery organization API token, sent as `Authorization: Token ...`. " +
					"Defaults to the `" + EnvQoveryAPIToken + "` environment variable.",
			},
			"qovery_api_url": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Base URL of the Qovery API. Defaults to the `" + EnvQoveryAPIURL + "` environment variable, then `" +
					DefaultQoveryAPIURL + "`. Must use `https://` unless the host is a loopback address.",
			},
			"tailscale_api_key": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				MarkdownDescription: "Tailscale API access token. Conflicts with the OAuth client credentials. " +
					"Defaults to the `" + EnvTailscaleAPIKey + "` environment variable.",
			},
			"tailscale_oauth_client_id": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "ID of a Tailscale OAuth client, used with `tailscale_oauth_client_secret` instead of an API key; " +
					"or ID of a federated identity, used with `tailscale_identity_token` or `tailscale_audience` (workload identity). " +
					"Defaults to the `" + EnvTailscaleOAuthClientID + "` environment variable.",
			},
			"tailscale_oauth_client_secret": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				MarkdownDescription: "Secret of the Tailscale OAuth client named by `tailscale_oauth_client_id`. " +
					"Defaults to the `" + EnvTailscaleOAuthClientSecret + "` environment variable.",
			},
			"tailscale_identity_token": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				MarkdownDescription: "OIDC identity token (a JWT) of the workload that runs Terraform, such as a CI job, which the federated " +
					"identity `tailscale_oauth_client_id` trusts: qtail exchanges it for short-lived Tailscale access tokens, so no " +
					"long-lived key is needed. Conflicts with `tailscale_api_key` and `tailscale_oauth_client_secret`. " +
					"Defaults to the `" + EnvTailscaleIdentityToken + "` environment variable.",
			},
			"tailscale_audience": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Audience of the identity token that qtail requests from GitHub Actions itself (the job needs " +
					"`permissions: id-token: write`), instead of a `tailscale_identity_token` given to it; the audience the federated " +
					"identity `tailscale_oauth_client_id` expects. Conflicts with `tailscale_identity_token`. " +
					"Defaults to the `" + EnvTailscaleAudience + "` environment variable.",
			},
			"tailscale_tailnet": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Tailnet to manage. Defaults to the `" + EnvTailscaleTailnet + "` environment variable, then `" +
					DefaultTailnet + "`, the tailnet of the credential.",
			},
			"tailscale_base_url": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Base URL of the Tailscale API. Defaults to the `" + EnvTailscaleBaseURL + "` environment variable, then `" +
					DefaultTailscaleBaseURL + "`. Must use `https://` unless the host is a loopback address.",
			},
		},
	}
}

func (p *qtailProvider) getenv(name string) string {
	if p.opts.Getenv != nil {
		return p.opts.Getenv(name)
	}
	return os.Getenv(name)
}

// resolve picks the configured value, then the environment variable, then
// the default.
func (p *qtailProvider) resolve(v types.String, attr, env, def string) conn.Setting {
	s := conn.Setting{Attr: attr, Env: env}
	switch {
	case v.IsUnknown():
		s.Unknown = true
	case !v.IsNull():
		s.Value = v.ValueString()
	case p.getenv(env) != "":
		s.Value = p.getenv(env)
	default:
		s.Value = def
	}
	return s
}

func (p *qtailProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}

	qToken := p.resolve(cfg.QoveryAPIToken, "qovery_api_token", EnvQoveryAPIToken, "")
	qURL := p.resolve(cfg.QoveryAPIURL, "qovery_api_url", EnvQoveryAPIURL, DefaultQoveryAPIURL)
	tKey := p.resolve(cfg.TailscaleAPIKey, "tailscale_api_key", EnvTailscaleAPIKey, "")
	tID := p.resolve(cfg.TailscaleOAuthClientID, "tailscale_oauth_client_id", EnvTailscaleOAuthClientID, "")
	tSecret := p.resolve(cfg.TailscaleOAuthClientSecret, "tailscale_oauth_client_secret", EnvTailscaleOAuthClientSecret, "")
	tTailnet := p.resolve(cfg.TailscaleTailnet, "tailscale_tailnet", EnvTailscaleTailnet, DefaultTailnet)
	tURL := p.resolve(cfg.TailscaleBaseURL, "tailscale_base_url", EnvTailscaleBaseURL, DefaultTailscaleBaseURL)
	tToken := p.resolve(cfg.TailscaleIdentityToken, "tailscale_identity_token", EnvTailscaleIdentityToken, "")
	tAudience := p.resolve(cfg.TailscaleAudience, "tailscale_audience", EnvTailscaleAudience, "")

	for _, s := range []conn.Setting{qURL, tURL} {
		if s.Unknown {
			continue
		}
		if err := checkBaseURL(s.Value); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root(s.Attr), "Invalid API URL",
				fmt.Sprintf("%s (from the %q attribute or the %s environment variable): %v", s.Value, s.Attr, s.Env, err))
		}
	}
	if !tTailnet.Unknown {
		if err := checkTailnet(tTailnet.Value); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root(tTailnet.Attr), "Invalid Tailnet",
				fmt.Sprintf("%q (from the %q attribute or the %s environment variable): %v", tTailnet.Value, tTailnet.Attr, tTailnet.Env, err))
		}
	}
	checkTailscaleCredentials(&resp.Diagnostics, tKey, tID, tSecret, tToken, tAudience)
	if resp.Diagnostics.HasError() {
		return
	}

	clients := conn.New(p.version, conn.Options{PollInterval: p.opts.PollInterval, Retry: p.opts.Retry, TerraformVersion: req.TerraformVersion,
		DeployQuiet: p.opts.DeployQuiet})
	clients.ConfigureQovery(qToken, qURL)
	clients.ConfigureTailnet(conn.TailnetSettings{
		APIKey: tKey, OAuthClientID: tID, OAuthClientSecret: tSecret, IdentityToken: tToken, Audience: tAudience,
		Tailnet: tTailnet, BaseURL: tURL, Getenv: p.getenv,
	})
	tflog.Debug(ctx, "qtail provider configured", map[string]any{
		"qovery_api_url":     qURL.Value,
		"tailscale_base_url": tURL.Value,
		"tailscale_tailnet":  tTailnet.Value,
	})

	p.clients.Store(clients)
	resp.DataSourceData = clients
	resp.ResourceData = clients
	resp.EphemeralResourceData = clients
}

// checkTailnet refuses a tailnet that is not a name: qtail puts it in the
// path of every API call (/api/v2/tailnet/TAILNET/...), so a URL or a path
// would call another endpoint.
func checkTailnet(t string) error {
	switch {
	case t == "":
		return fmt.Errorf("the tailnet is empty; use %q for the tailnet of the credential, or its name such as example.com", DefaultTailnet)
	case strings.Contains(t, "://"):
		return fmt.Errorf("a URL is not a tailnet; set the API's URL in tailscale_base_url and the tailnet's name (such as example.com) here")
	case strings.ContainsAny(t, "/?#%\\"):
		return fmt.Errorf("a tailnet name has no /, ?, #, %% or \\; give its name as the admin console's Settings page shows it (such as example.com), its ID, or %q", DefaultTailnet)
	case strings.ContainsFunc(t, unicode.IsSpace):
		return fmt.Errorf("a tailnet name has no spaces")
	}
	return nil
}

// checkTailscaleCredentials refuses Tailscale credentials that do not make
// one way to authenticate: an API key; an OAuth client ID with its secret;
// or the ID of a federated identity with an identity token, given or
// fetched from GitHub Actions for an audience.
func checkTailscaleCredentials(diags *diag.Diagnostics, key, id, secret, token, audience conn.Setting) {
	for _, s := range []conn.Setting{key, id, secret, token, audience} {
		if s.Unknown {
			return
		}
	}
	conflict := func(a, b conn.Setting, why string) {
		diags.AddAttributeError(path.Root(b.Attr), "Conflicting Tailscale Credentials",
			fmt.Sprintf("Set either %s (%s) or %s (%s), not both: %s", a.Attr, a.Env, b.Attr, b.Env, why))
	}
	identity := token.Value != "" || audience.Value != ""
	switch {
	case key.Value != "" && (id.Value != "" || secret.Value != ""):
		diags.AddAttributeError(path.Root(key.Attr), "Conflicting Tailscale Credentials",
			"Set either tailscale_api_key (TAILSCALE_API_KEY) or the OAuth client credentials tailscale_oauth_client_id "+
				"and tailscale_oauth_client_secret (TAILSCALE_OAUTH_CLIENT_ID, TAILSCALE_OAUTH_CLIENT_SECRET), not both.")
	case key.Value != "" && identity:
		other := token
		if token.Value == "" {
			other = audience
		}
		conflict(key, other, "an API key and workload identity are two ways to authenticate.")
	case token.Value != "" && audience.Value != "":
		conflict(token, audience, "the audience asks qtail to fetch an identity token from GitHub Actions, which a given token makes pointless.")
	case identity && secret.Value != "":
		conflict(secret, token, "an identity token replaces the OAuth client secret.")
	case identity && id.Value == "":
		diags.AddAttributeError(path.Root(id.Attr), "Missing Federated Identity",
			fmt.Sprintf("An identity token is exchanged with the federated identity that trusts it: set %q or the %s environment variable "+
				"to the client ID of that federated identity (Tailscale admin console, Trust credentials).", id.Attr, id.Env))
	case !identity && (id.Value == "") != (secret.Value == ""):
		missing := secret
		if id.Value == "" {
			missing = id
		}
		diags.AddAttributeError(path.Root(missing.Attr), "Incomplete Tailscale OAuth Client Credentials",
			fmt.Sprintf("An OAuth client needs both its ID and its secret: set %q or the %s environment variable "+
				"(or, for workload identity, set tailscale_identity_token or tailscale_audience with the federated identity's ID).",
				missing.Attr, missing.Env))
	}
}

// checkBaseURL refuses anything but https, except plain http to a loopback
// host (the sandbox and tests).
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	if u.Host == "" {
		return fmt.Errorf("the URL has no host")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("plain http:// is refused for a host that is not a loopback address: credentials would travel in clear text; use https://")
	default:
		return fmt.Errorf("unsupported scheme %q: use https://", u.Scheme)
	}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (p *qtailProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		helmrepository.NewHelmRepositoryResource,
		policyfragment.NewGrantResource,
		policyfragment.NewGrantsResource,
		policyfragment.NewTagOwnerResource,
		policyfragment.NewAutoApproverResource,
		policyfragment.NewPolicyTestResource,
		policyfragment.NewAllowAllRemovalResource,
		operator.NewOperatorResource,
		exposedservice.NewExposedServiceResource,
		manifestservice.NewConnectorResource,
		manifestservice.NewProxyGroupResource,
		manifestservice.NewEgressServiceResource,
		manifestservice.NewDNSConfigResource,
		manifestservice.NewIngressResource,
	}
}

func (p *qtailProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		policyfragment.NewPolicyDataSource,
		status.NewDeviceDataSource,
		status.NewRouteStatusDataSource,
		status.NewEgressStatusDataSource,
		status.NewServiceStatusDataSource,
	}
}
