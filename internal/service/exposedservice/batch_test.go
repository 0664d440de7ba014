package exposedservice_test

import (
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
)

const routeDeployServices = "POST /qovery/environment/{environmentId}/service/deploy"

// batchEnv is a world whose environment runs one deployment request at a
// time, with a running operator, and the ids of three applications of its
// environment with ports.
func batchEnv(t *testing.T) (*acctest.Env, acctest.OperatorFixture, []string) {
	t.Helper()
	env := acctest.New(t, func(o *sandbox.Options) { o.QueuePerEnvironment = true })
	op := env.InstallOperator(t, acctest.Region)
	apps := []string{env.ApplicationID(t, acctest.Region, "billing-api"), env.ApplicationID(t, acctest.Region, "web")}
	id, err := env.Qovery.SeedApplication(op.EnvironmentID, "admin", qoveryapi.Port{Name: "http", InternalPort: 8080, Protocol: "HTTP"})
	if err != nil {
		t.Fatal(err)
	}
	return env, op, append(apps, id)
}

// exposuresConfig exposes each application, naming the operator.
func exposuresConfig(operatorID string, apps []string) string {
	config := ""
	for i, app := range apps {
		config += fmt.Sprintf(`
resource "qtail_exposed_service" "app_%d" {
  application_id = %q
  hostname       = "app-%d-us-east-1"
  operator_id    = %q
}
`, i, app, i, operatorID)
	}
	return config
}

// deployActions are the deploy actions the fake ran in envID since the
// first n.
func deployActions(env *acctest.Env, envID string, n int) []qoveryapi.Action {
	var out []qoveryapi.Action
	for _, a := range env.Qovery.Actions()[n:] {
		if a.Kind == "DEPLOY" && a.EnvironmentID == envID {
			out = append(out, a)
		}
	}
	return out
}

// proxyUp checks that the proxy device of hostname is on the tailnet,
// alone.
func proxyUp(env *acctest.Env, hostname string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if devs := env.DevicesNamed(hostname); len(devs) != 1 {
			return fmt.Errorf("%s: %d devices, want its proxy", hostname, len(devs))
		}
		return nil
	}
}

// Exposures of several applications of one environment, applied in one
// wave, redeploy them in one action of the environment: one
// deploy-services request, no redeployment of its own, every proxy up.
func TestExposedService_oneDeployActionPerEnvironment(t *testing.T) {
	t.Parallel()
	env, op, apps := batchEnv(t)
	before := len(env.Qovery.Actions())
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: exposuresConfig(op.HelmID, apps),
			Check: resource.ComposeTestCheckFunc(
				func(*terraform.State) error {
					actions := deployActions(env, op.EnvironmentID, before)
					if len(actions) != 1 || len(actions[0].Services) != len(apps) {
						return fmt.Errorf("deploy actions %+v, want one of the %d applications", actions, len(apps))
					}
					for _, app := range apps {
						if !slices.Contains(actions[0].Services, app) {
							return fmt.Errorf("application %s is not in the action %v", app, actions[0].Services)
						}
					}
					if n := env.Calls(routeDeployServices); n != 1 {
						return fmt.Errorf("%d deploy-services requests, want 1", n)
					}
					if n := env.Calls(routeRedeployApplication); n != 0 {
						return fmt.Errorf("%d redeployments of one application, want none", n)
					}
					return nil
				},
				proxyUp(env, "app-0-us-east-1"),
				proxyUp(env, "app-1-us-east-1"),
				proxyUp(env, "app-2-us-east-1"),
			),
		}},
	})
}

// In one action, the application whose deployment fails fails its own
// exposure alone: the others are created, their proxies up, and only the
// failed one is tainted and replaced at the next apply.
func TestExposedService_failureInABatchStaysWithItsExposure(t *testing.T) {
	t.Parallel()
	env, op, apps := batchEnv(t)
	env.Cluster.BreakApplication(apps[1], "back-off pulling image web:v2")
	config := exposuresConfig(op.HelmID, apps)
	before := len(env.Qovery.Actions())
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				ExpectError: regexp.MustCompile(`(?s)Unable to Expose the Application.*could\s+not\s+redeploy\s+application\s+` + apps[1] +
					`.*ended\s+in\s+DEPLOYMENT_ERROR`),
			},
			{
				PreConfig: func() {
					actions := deployActions(env, op.EnvironmentID, before)
					if len(actions) != 1 || len(actions[0].Services) != len(apps) {
						t.Fatalf("deploy actions %+v, want one of the %d applications", actions, len(apps))
					}
					for _, host := range []string{"app-0-us-east-1", "app-2-us-east-1"} {
						if devs := env.DevicesNamed(host); len(devs) != 1 {
							t.Errorf("%s: %d devices, want its proxy", host, len(devs))
						}
					}
					env.Cluster.RepairApplication(apps[1])
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_exposed_service.app_1", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("qtail_exposed_service.app_0", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("qtail_exposed_service.app_2", plancheck.ResourceActionNoop),
				}},
				Check: proxyUp(env, "app-1-us-east-1"),
			},
		},
	})
}
