package manifestservice_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
)

// A connector and two ProxyGroups of one environment, applied in one wave,
// deploy their Helm services in one action of the environment: one
// deploy-services request and no deployment of a Helm service of its own.
func TestManifestResources_oneDeployActionPerEnvironment(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, func(o *sandbox.Options) { o.QueuePerEnvironment = true })
	op := env.InstallOperator(t, acctest.Region)
	before := len(env.Qovery.Actions())
	helmDeploys := env.Calls("POST /qovery/helm/{helmId}/deploy")
	config := fmt.Sprintf(`
resource "qtail_connector" "homelab" {
  environment_id = %[1]q
  operator_id    = %[2]q
  name           = "homelab"
  hostname       = "homelab"
  subnet_routes  = ["10.10.0.0/16"]
  %[3]s
}

resource "qtail_proxy_group" "ingress" {
  environment_id  = %[1]q
  operator_id     = %[2]q
  name            = "ingress"
  type            = "ingress"
  hostname_prefix = "ingress-us-east-1"
  %[3]s
}

resource "qtail_proxy_group" "egress" {
  environment_id  = %[1]q
  operator_id     = %[2]q
  name            = "egress"
  type            = "egress"
  hostname_prefix = "egress-us-east-1"
  %[3]s
}
`, op.EnvironmentID, op.HelmID, connectorChartGit)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(*terraform.State) error {
				var deploys []string
				for _, a := range env.Qovery.Actions()[before:] {
					if a.Kind == "DEPLOY" {
						deploys = append(deploys, fmt.Sprint(a.Services))
					}
				}
				if len(deploys) != 1 {
					return fmt.Errorf("deploy actions %v, want one of the three Helm services", deploys)
				}
				if n := env.Calls("POST /qovery/environment/{environmentId}/service/deploy"); n != 1 {
					return fmt.Errorf("%d deploy-services requests, want 1", n)
				}
				if n := env.Calls("POST /qovery/helm/{helmId}/deploy") - helmDeploys; n != 0 {
					return fmt.Errorf("%d deployments of one Helm service, want none", n)
				}
				for _, host := range []string{"homelab", "ingress-us-east-1-0", "egress-us-east-1-0"} {
					if _, err := deviceOf(env, host); err != nil {
						return err
					}
				}
				return nil
			},
		}},
	})
}
