package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/conn"
)

// clients are the provider's clients pointed at env's sandbox.
func clients(t *testing.T, env *acctest.Env) *conn.Clients {
	t.Helper()
	e := env.Environ()
	c := conn.New("test", conn.Options{PollInterval: 10 * time.Millisecond})
	c.ConfigureQovery(conn.Setting{Value: e["QOVERY_API_TOKEN"]}, conn.Setting{Value: e["QOVERY_API_URL"]})
	c.ConfigureTailnet(conn.TailnetSettings{APIKey: conn.Setting{Value: e["TAILSCALE_API_KEY"]},
		Tailnet: conn.Setting{Value: e["TAILSCALE_TAILNET"]}, BaseURL: conn.Setting{Value: e["TAILSCALE_BASE_URL"]}})
	return c
}

// The wait for the Tailscale Service of an exposure through a ProxyGroup
// stops as soon as the cluster's Helm services show that the ProxyGroup
// cannot serve it, long before its deadline, and says why.
func TestAwaitExposureServiceStopsWhenTheProxyGroupCannotServe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, values, want string
	}{
		{"missing", "", "no Helm service of cluster"},
		{"egress", `manifests:
  - apiVersion: tailscale.com/v1alpha1
    kind: ProxyGroup
    metadata:
      name: ingress
    spec:
      type: egress
`, `is of type "egress", not "ingress"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := acctest.New(t)
			env.InstallOperator(t, acctest.Region)
			if tc.values != "" {
				env.CreateManifestService(t, "tailscale-proxygroup-ingress", tc.values)
			}
			c := clients(t, env)
			tn, diags := c.Tailnet()
			if diags.HasError() {
				t.Fatal(diags)
			}
			ctx, cancel := context.WithTimeout(acctest.Background(t), time.Minute)
			defer cancel()
			_, err := cluster.AwaitExposureService(ctx, c, tn, env.ApplicationID(t, acctest.Region, "billing-api"), "ingress", "billing-api-us-east-1")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "cannot create the Tailscale Service svc:billing-api-us-east-1") {
				t.Fatalf("AwaitExposureService = %v, want an error that says %q", err, tc.want)
			}
			if ctx.Err() != nil {
				t.Errorf("the wait ran to its deadline: %v", err)
			}
		})
	}
}
