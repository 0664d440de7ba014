//go:build realapi

package realapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/qtail/terraform-provider-qtail/internal/provider"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// TestReal_quickstart applies the quickstart (a Helm repository, tag
// owners, an operator with its own OAuth client, the exposure of an
// application and of a container, a grant and a policy test) to the real
// accounts, checks the proxy devices and the policy on the tailnet, and
// destroys it all. Tags and hostnames carry a random suffix, so that runs
// do not meet each other or what the tailnet already holds.
func TestReal_quickstart(t *testing.T) {
	cfg, err := LoadConfig(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	run := "qtail-acc-" + hex.EncodeToString(b)
	// TAILSCALE_BASE_URL, as the provider reads it, also lets the suite run
	// against the sandbox (make sandbox) as a rehearsal.
	tn, err := tailnet.New(tailnet.Config{BaseURL: os.Getenv("TAILSCALE_BASE_URL"), APIKey: cfg.TailscaleAPIKey, OAuthClientID: cfg.OAuthClientID,
		OAuthClientSecret: cfg.OAuthClientSecret, Tailnet: cfg.Tailnet})
	if err != nil {
		t.Fatal(err)
	}
	factories := map[string]func() (tfprotov6.ProviderServer, error){
		"qtail": provider.Server(provider.New("acc")),
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(*terraform.State) error {
			for _, host := range []string{run + "-app", run + "-ctr"} {
				if d, err := tn.FindDeviceByHostname(context.Background(), host); err != nil || d != nil {
					return fmt.Errorf("the proxy device %s is still on the tailnet after destroy (%v)", host, err)
				}
			}
			body, _, err := tn.GetPolicy(context.Background())
			if err != nil {
				return err
			}
			if strings.Contains(string(body), run) {
				return fmt.Errorf("the policy file still holds fragments of %s after destroy", run)
			}
			return nil
		},
		Steps: []resource.TestStep{{
			// The operator first: the exposures' plan checks that the
			// operator's tag (the run's own) owns the proxies' tag, which
			// it reads from the running operator.
			Config: operatorConfig(cfg, run),
		}, {
			Config: operatorConfig(cfg, run) + exposuresConfig(cfg, run),
			Check: resource.ComposeTestCheckFunc(
				resource.TestCheckResourceAttrSet("qtail_exposed_service.app", "device_id"),
				resource.TestCheckResourceAttrSet("qtail_exposed_service.ctr", "device_id"),
				func(*terraform.State) error {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					for _, host := range []string{run + "-app", run + "-ctr"} {
						d, err := tn.FindDeviceByHostname(ctx, host)
						if err != nil || d == nil {
							return fmt.Errorf("no device %s on the tailnet (%v)", host, err)
						}
						if len(d.Tags) != 1 || d.Tags[0] != "tag:"+run {
							return fmt.Errorf("device %s has tags %v, want [tag:%s]", host, d.Tags, run)
						}
					}
					body, _, err := tn.GetPolicy(ctx)
					if err != nil {
						return err
					}
					for _, want := range []string{"qtail:grant:" + run, "qtail:policy_test:" + run, `"tag:` + run + `"`,
						"qtail:grant:" + run + "-set-https", "qtail:grant:" + run + "-set-http"} {
						if !strings.Contains(string(body), want) {
							return fmt.Errorf("the policy file has no %s", want)
						}
					}
					return nil
				},
			),
		}, {
			// The grants of a qtail_grants, imported by their names.
			ResourceName:      "qtail_grants.proxies",
			ImportState:       true,
			ImportStateId:     run + "-set-http," + run + "-set-https",
			ImportStateVerify: true,
		}},
	})
}

// operatorConfig is the quickstart's operator, with names of their own for
// one run.
func operatorConfig(c *Config, run string) string {
	return fmt.Sprintf(`
resource "qtail_helm_repository" "tailscale" {
  organization_id = %[1]q
  name            = %[3]q
}

resource "qtail_tag_owner" "operator" {
  tag    = "tag:%[3]s-operator"
  owners = []
}

resource "qtail_tag_owner" "proxy" {
  tag    = "tag:%[3]s"
  owners = [qtail_tag_owner.operator.tag]
}

resource "qtail_operator" "this" {
  environment_id      = %[2]q
  helm_repository_id  = qtail_helm_repository.tailscale.id
  chart_version       = "1.102.4"
  hostname            = "%[3]s-operator"
  default_tags        = [qtail_tag_owner.operator.tag]
  proxy_default_tags  = [qtail_tag_owner.proxy.tag]
  create_oauth_client = true
}
`, c.OrganizationID, c.EnvironmentID, run)
}

// exposuresConfig exposes the application and the container, grants the
// run's proxies access to the application's ports, and tests it (a policy
// test names a user, a group, a tag or a host: the run's tag, here).
func exposuresConfig(c *Config, run string) string {
	return fmt.Sprintf(`
resource "qtail_exposed_service" "app" {
  application_id = %[1]q
  hostname       = "%[3]s-app"
  tags           = [qtail_tag_owner.proxy.tag]
  depends_on     = [qtail_operator.this]
}

resource "qtail_exposed_service" "ctr" {
  container_id = %[2]q
  hostname     = "%[3]s-ctr"
  tags         = [qtail_tag_owner.proxy.tag]
  depends_on   = [qtail_operator.this]
}

resource "qtail_grant" "proxies" {
  name = %[3]q
  src  = [qtail_tag_owner.proxy.tag]
  dst  = [qtail_tag_owner.proxy.tag]
  ip   = [for p in qtail_exposed_service.app.ports : "tcp:${p.internal_port}"]
}

resource "qtail_grants" "proxies" {
  grants = {
    "%[3]s-set-https" = { src = [qtail_tag_owner.proxy.tag], dst = [qtail_tag_owner.proxy.tag], ip = ["tcp:443"] }
    "%[3]s-set-http"  = { src = [qtail_tag_owner.proxy.tag], dst = [qtail_tag_owner.proxy.tag], ip = ["tcp:80"] }
  }
}

resource "qtail_policy_test" "proxies" {
  name       = %[3]q
  src        = qtail_tag_owner.proxy.tag
  accept     = [for p in qtail_exposed_service.app.ports : "${qtail_tag_owner.proxy.tag}:${p.internal_port}"]
  depends_on = [qtail_grant.proxies]
}
`, c.ApplicationID, c.ContainerID, run)
}
