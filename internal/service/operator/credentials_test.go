package operator_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
)

// forbidden answers a route the way the API does for a credential without
// the scope.
func forbidden(route string) faults.Rule {
	return faults.Rule{Route: route, Status: 403, Count: 1000,
		Body: json.RawMessage(`{"message":"calling actor does not have enough permissions to perform this function"}`)}
}

// The operator's pod cannot log in with credentials the Tailscale API
// refuses, without the scopes it needs, or with tags it cannot own: its
// deployment would succeed in Qovery all the same (the chart has no
// probe) while the pod crash-loops. The plan refuses them, on the
// attribute, before anything is created.
func TestOperator_credentialsTheOperatorCannotUseAreRefusedAtPlan(t *testing.T) {
	t.Parallel()
	e := newOperatorEnv(t)
	twoScopes, twoSecret := e.Tailnet.SeedOAuthClient("", "", []string{"devices:core", "auth_keys"}, []string{"tag:k8s-operator"})
	ci, ciSecret := e.Tailnet.SeedOAuthClient("", "", []string{"devices:core", "auth_keys", "services"}, []string{"tag:ci"})
	cases := []struct {
		name   string
		config string
		fault  *faults.Rule
		attr   string
		want   string
	}{
		{"wrong secret", e.config(explicitCreds(e.clientID, "tskey-client-wrong", 1), ""), nil, "oauth_client_secret_wo",
			"The Tailscale API refuses the OAuth client " + e.clientID + " with the secret in oauth_client_secret_wo"},
		{"no services scope", e.config(explicitCreds(twoScopes, twoSecret, 1), ""), nil, "oauth_client_id",
			`has the scopes ["devices:core", "auth_keys"]; the operator needs ["services"] with write access to create the Tailscale Services`},
		{"no services scope, client unreadable", e.config(explicitCreds(twoScopes, twoSecret, 1), ""), ptr(forbidden(routeGetKey)), "oauth_client_id",
			`The OAuth client ` + twoScopes + ` has the scopes ["devices:core", "auth_keys"]; the operator needs ["services"]`},
		{"tags it cannot own", e.config(explicitCreds(ci, ciSecret, 1), ""), nil, "oauth_client_id",
			`is tagged ["tag:ci"]: it can create devices tagged tag:k8s-operator only if one of its tags is tag:k8s-operator or owns it`},
		{"unknown client", e.config(explicitCreds("kNoSuchClientCNTRL", "tskey-client-x", 1), ""), nil, "oauth_client_id",
			"The tailnet has no OAuth client kNoSuchClientCNTRL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: e.Factories(),
				Steps: []resource.TestStep{{
					PreConfig: func() {
						e.Faults.Reset()
						if tc.fault != nil {
							e.Faults.Add(*tc.fault)
						}
					},
					Config:      tc.config,
					ExpectError: acctest.ErrorOn(tc.attr, tc.want),
				}},
			})
			if n := e.Faults.Count(routeCreateHelm); n != 0 {
				t.Errorf("the refused configuration sent %d POST %s", n, routeCreateHelm)
			}
		})
	}
	if hs := e.Qovery.Helms(); len(hs) != 0 {
		t.Errorf("refused configurations left Helm services: %+v", hs)
	}
}

func ptr[T any](v T) *T { return &v }

// A client that the provider's credential may not read is not checked at
// plan (a warning says so). The operator then crash-loops after a
// deployment that Qovery reports DEPLOYED, and the wait for its device
// says so, with the likely cause and the console pages to open, instead
// of a bare timeout.
func TestOperator_crashLoopingOperatorIsDiagnosedByTheWait(t *testing.T) {
	t.Parallel()
	e := newOperatorEnv(t)
	ci, ciSecret := e.Tailnet.SeedOAuthClient("", "", []string{"devices:core", "auth_keys", "services"}, []string{"tag:ci"})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.Factories(),
		Steps: []resource.TestStep{{
			PreConfig: func() { e.Faults.Add(forbidden(routeGetKey)) },
			Config:    e.config(explicitCreds(ci, ciSecret, 1), `timeouts = { create = "1s" }`),
			ExpectError: regexp.MustCompile(`(?s)Timed Out Waiting for the Operator Device.*` +
				`Qovery\s+reports\s+the\s+Helm\s+service\s+DEPLOYED,\s+deployment\s+status\s+UP_TO_DATE:\s+the\s+chart\s+declares\s+no\s+readiness\s+probe.*` +
				`The\s+OAuth\s+client\s+` + ci + `\s+logs\s+in:\s+look\s+for\s+tags\s+it\s+may\s+not\s+apply\s+\(its\s+tags\s+must\s+be\s+or\s+own\s+\["tag:k8s-operator"\]\).*` +
				`No\s+auth\s+key\s+tagged\s+\["tag:k8s-operator"\]\s+was\s+minted\s+since\s+the\s+deployment\s+started.*` +
				`https://console\.qovery\.com/organization/.*/service/[0-9a-f-]+/deployments.*` +
				`https://login\.tailscale\.com/admin/machines`),
		}, {
			PreConfig: func() {
				e.Faults.Reset()
				loops := e.Cluster.CrashLoops()
				if len(loops) != 1 || !strings.Contains(loops[0].Reason, "do not own tag:k8s-operator") {
					t.Fatalf("want the operator crash-looping on its tags, got %+v", loops)
				}
			},
			// The fixed client replaces the tainted operator.
			Config: e.explicit(""),
			Check:  e.checkDevice(),
		}},
	})
}

// The API server proxy serves TLS with the tailnet's certificates: with
// HTTPS certificates off on the tailnet, the plan refuses it; on, auth mode
// without a kubernetes grant to the operator's tag is installed with a
// warning.
func TestOperator_apiServerProxyNeedsHTTPSCertificates(t *testing.T) {
	t.Parallel()
	e := newOperatorEnv(t)
	for _, mode := range []string{"true", "noauth"} {
		t.Run(mode, func(t *testing.T) {
			e.Tailnet.SetHTTPSEnabled(false)
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: e.Factories(),
				Steps: []resource.TestStep{{
					Config: e.explicit(`api_server_proxy = "` + mode + `"`),
					ExpectError: acctest.ErrorOn("api_server_proxy", `api_server_proxy = "`+mode+`" makes the operator serve the Kubernetes API on :443 with TLS, `+
						`from the tailnet's certificate for its MagicDNS name, but the tailnet settings say HTTPS certificates are off (httpsEnabled is false)`),
				}},
			})
		})
	}
	if hs := e.Qovery.Helms(); len(hs) != 0 {
		t.Fatalf("refused configurations left Helm services: %+v", hs)
	}
	e.Tailnet.SetHTTPSEnabled(true)
	before := e.Faults.Count(routeSettings)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.Factories(),
		Steps: []resource.TestStep{{
			Config: e.explicit(`api_server_proxy = "true"`),
			Check:  e.checkDevice(),
		}},
	})
	if e.Faults.Count(routeSettings) == before {
		t.Fatal("the plan did not read the tailnet settings")
	}
}
