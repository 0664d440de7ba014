package conn

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

func TestPlanClientsSkipUnknownSettingsAndReportMissingOnes(t *testing.T) {
	t.Parallel()
	c := New("test", Options{})
	c.ConfigureQovery(Setting{Attr: "qovery_api_token", Env: "QOVERY_API_TOKEN", Unknown: true}, Setting{Value: "https://api.qovery.com"})
	c.ConfigureTailnet(TailnetSettings{
		APIKey: Setting{Attr: "tailscale_api_key", Env: "TAILSCALE_API_KEY"}, OAuthClientID: Setting{Attr: "tailscale_oauth_client_id"},
		OAuthClientSecret: Setting{Attr: "tailscale_oauth_client_secret"}, Tailnet: Setting{Value: "-"}, BaseURL: Setting{Value: "https://api.tailscale.com"},
	})

	var diags diag.Diagnostics
	if q := c.PlanQovery(&diags); q != nil || diags.HasError() {
		t.Errorf("Qovery settings unknown at plan time: client %v, diagnostics %v; want neither", q, diags)
	}
	if tn := c.PlanTailnet(&diags); tn != nil || !diags.HasError() {
		t.Fatalf("no Tailscale credential: client %v, diagnostics %v; want an error", tn, diags)
	}
	if e := diags.Errors()[0]; e.Summary() != "Tailscale API Not Configured" || !strings.Contains(e.Detail(), `set the "tailscale_api_key" provider attribute`) {
		t.Errorf("got %s: %s", e.Summary(), e.Detail())
	}
	if c.Planner() != nil {
		t.Error("a policy planner without a Tailscale client")
	}
	if _, d := c.Qovery(); !d.HasError() || !strings.Contains(d.Errors()[0].Detail(), "not known yet") {
		t.Errorf("Qovery() with unknown settings: %v", d)
	}
}

func TestConfiguredClients(t *testing.T) {
	t.Parallel()
	c := New("test", Options{})
	c.ConfigureQovery(Setting{Value: "token"}, Setting{Value: "https://api.qovery.com"})
	c.ConfigureTailnet(TailnetSettings{APIKey: Setting{Value: "tskey-api-x"}, Tailnet: Setting{Value: "-"}, BaseURL: Setting{Value: "https://api.tailscale.com"}})
	var diags diag.Diagnostics
	if c.PlanQovery(&diags) == nil || c.PlanTailnet(&diags) == nil || diags.HasError() {
		t.Fatalf("configured clients missing: %v", diags)
	}
	if c.Planner() == nil || c.Planned() == nil {
		t.Error("no planner or planned world")
	}
	if c.PollInterval() != DefaultPollInterval {
		t.Errorf("poll interval %s, want the default", c.PollInterval())
	}
}

func TestResourceBaseConfigure(t *testing.T) {
	t.Parallel()
	var b ResourceBase
	var resp resource.ConfigureResponse
	b.Configure(context.Background(), resource.ConfigureRequest{}, &resp)
	if b.Configured() || resp.Diagnostics.HasError() {
		t.Fatal("configured before the provider")
	}
	b.Configure(context.Background(), resource.ConfigureRequest{ProviderData: "not clients"}, &resp)
	if b.Configured() || !resp.Diagnostics.HasError() {
		t.Fatal("a foreign provider data accepted")
	}
	c := New("test", Options{})
	resp = resource.ConfigureResponse{}
	b.Configure(context.Background(), resource.ConfigureRequest{ProviderData: c}, &resp)
	if !b.Configured() || b.Clients != c || resp.Diagnostics.HasError() {
		t.Fatal("the provider's clients not received")
	}
}
