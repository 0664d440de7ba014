package exposedservice_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
)

// What an exposure needs from the operator, as the real one behaves: an
// OAuth client that can apply the proxy's tags (not the operator device's
// tags), a ProxyClass the cluster has, and through an ingress ProxyGroup a
// Tailscale Service that the operator creates with the services scope.

// ingressExposureConfig is an ingress ProxyGroup of the environment envID
// and an exposure of appID through it, with the auto approver of its
// Tailscale Service; extra adds attributes to the exposure.
func ingressExposureConfig(envID, appID, extra string) string {
	return fmt.Sprintf(`
resource "qtail_proxy_group" "ingress" {
  environment_id  = %q
  name            = "ingress"
  type            = "ingress"
  hostname_prefix = "ingress-us"
  chart = {
    git_repository = {
      url       = "https://github.com/qtail/terraform-provider-qtail.git"
      root_path = "/examples/charts/tailnet-manifests"
    }
  }
}
`, envID) + acctest.ServiceApproverConfig("billing-api-us-east-1", "tag:k8s") + acctest.ExposedServiceConfig(appID, "billing-api-us-east-1", `proxy_group     = qtail_proxy_group.ingress.name
  wait_for_device = false
  `+acctest.DependsOnServiceApprover+`
  `+extra)
}

// The operator's OAuth client lacks the services scope: qtail cannot read
// the client of an operator installed by hand (its ID is a secret), so the
// plan passes with a warning, and the apply stops on the Tailscale Service
// that never comes, saying what to check.
func TestExposedService_throughAnIngressGroupWithoutTheServicesScopeFails(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	op := env.InstallOperatorWith(t, acctest.Region, acctest.OperatorOptions{Scopes: []string{"devices:core", "auth_keys"}})
	appID := env.ApplicationID(t, acctest.Region, "billing-api")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      ingressExposureConfig(op.EnvironmentID, appID, `timeouts = { create = "3s" }`),
			ExpectError: acctest.ErrorRE("timed out waiting for the operator to create the Tailscale Service svc:billing-api-us-east-1"),
		}},
	})
}

// ingressProxyGroupValues renders the ingress ProxyGroup "ingress", as a
// Helm service installed by hand does.
const ingressProxyGroupValues = `manifests:
  - apiVersion: tailscale.com/v1alpha1
    kind: ProxyGroup
    metadata:
      name: ingress
    spec:
      type: ingress
`

// With a client qtail can read, the plan refuses the exposure up front.
func TestExposedService_throughAnIngressGroupNeedsTheServicesScope(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	op := env.InstallOperatorWith(t, acctest.Region, acctest.OperatorOptions{Scopes: []string{"devices:core", "auth_keys"}, PlainClientID: true})
	env.CreateManifestService(t, "tailscale-proxygroup-ingress", ingressProxyGroupValues)
	appID := env.ApplicationID(t, acctest.Region, "billing-api")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      acctest.ExposedServiceConfig(appID, "billing-api-us-east-1", "proxy_group = \"ingress\"\n  wait_for_device = false"),
			ExpectError: acctest.ErrorRE("uses the OAuth client " + op.OAuthClientID + `, whose scopes are ["devices:core", "auth_keys"]`),
		}},
	})
}

// The proxy's auth key is minted with the operator's OAuth client: tags
// that its client's tags own are fine even when the operator device's
// tags do not own them, and the reverse is refused.
func TestExposedService_tagsAreCheckedAgainstTheOAuthClient(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	op := env.InstallOperatorWith(t, acctest.Region, acctest.OperatorOptions{PlainClientID: true})
	appID := env.ApplicationID(t, acctest.Region, "billing-api")
	env.DeclareTagOwners(t, map[string][]string{
		"tag:k8s-client":  {},
		"tag:k8s-billing": {"tag:k8s-client"},
		"tag:k8s-ops":     {"tag:k8s-operator"},
	})
	// The same client (and secret), now tagged otherwise than the
	// operator's device.
	env.Tailnet.SeedOAuthClient(op.OAuthClientID, env.OperatorSecret(op.HelmID), acctest.OperatorScopes, []string{"tag:k8s-client"})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config:      acctest.ExposedServiceConfig(appID, "billing-api-us-east-1", `tags = ["tag:k8s-ops"]`),
				ExpectError: acctest.ErrorRE(`tag:k8s-ops is owned by [tag:k8s-operator] in tagOwners, not by the OAuth client's tag tag:k8s-client`),
			},
			{
				Config: acctest.ExposedServiceConfig(appID, "billing-api-us-east-1", `tags = ["tag:k8s-billing"]`),
				Check: func(*terraform.State) error {
					d, ok := env.DeviceByHostname("billing-api-us-east-1")
					if !ok || len(d.Tags) != 1 || d.Tags[0] != "tag:k8s-billing" {
						return fmt.Errorf("proxy device %+v (present %v), want one tagged tag:k8s-billing", d, ok)
					}
					return nil
				},
			},
		},
	})
}

// An exposure whose ProxyClass the cluster does not have gets no proxy:
// refused at plan.
func TestExposedService_proxyClassMustBeOnTheCluster(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      acctest.ExposedServiceConfig(appID, "billing-api-us-east-1", `proxy_class = "small"`),
			ExpectError: acctest.ErrorRE("renders the ProxyClass small (named in proxy_class)"),
		}},
	})
}
