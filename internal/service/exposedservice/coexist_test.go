package exposedservice_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
)

// qtail next to the Qovery provider: the application is a
// qovery_application whose annotations_group_ids lists qtail's group. qtail
// creates the group and does not attach it (attach = false); the Qovery
// provider's apply sends the application back with its own list of groups
// (a PUT) and deploys it. Every later plan of both is empty.
func TestExposedService_nextToTheQoveryProvider(t *testing.T) {
	t.Parallel()
	env, appID := acctest.NewExposureEnv(t)
	const hostname = "billing-api-us-east-1"
	config := acctest.ExposedServiceConfig(appID, hostname, `tags   = ["tag:k8s-billing"]
  attach = false`)
	var groupID string
	// qoveryProviderApply is what an apply of qovery_application does: a
	// PUT of the application with annotations_group_ids from its own
	// configuration, then a deployment, waited for.
	qoveryProviderApply := func() {
		ctx := acctest.Background(t)
		q := env.QoveryClient(t)
		if _, err := q.SetApplicationAnnotationsGroups(ctx, appID, []string{groupID}); err != nil {
			t.Fatal(err)
		}
		if _, err := q.RedeployApplication(ctx, appID); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for len(env.DevicesNamed(hostname)) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("no proxy device %s after the Qovery provider's deployment (cluster events: %q)", hostname, env.Cluster.Events())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			// qtail's apply: the group exists, unattached, and nothing is
			// waited for.
			Config: config,
			Check: resource.ComposeTestCheckFunc(
				acctest.Capture(acctest.ExposedServiceAddr, "annotations_group_id", &groupID),
				resource.TestCheckResourceAttr(acctest.ExposedServiceAddr, "attached", "false"),
				func(*terraform.State) error {
					app, _ := env.Qovery.Application(appID)
					if len(app.AnnotationsGroupIDs) != 0 {
						return fmt.Errorf("qtail attached %v although attach is false", app.AnnotationsGroupIDs)
					}
					return nil
				},
			),
		}, {
			// The Qovery provider's apply attaches the group; qtail's next
			// plan is empty and its refresh records the device.
			PreConfig: qoveryProviderApply,
			Config:    config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectEmptyPlan(),
			}},
			Check: resource.ComposeTestCheckFunc(
				resource.TestCheckResourceAttr(acctest.ExposedServiceAddr, "attached", "true"),
				resource.TestCheckResourceAttrSet(acctest.ExposedServiceAddr, "device_id"),
				resource.TestCheckResourceAttr(acctest.ExposedServiceAddr, "tailnet_fqdn", hostname+".tail4f2a.ts.net"),
			),
		}, {
			// The Qovery provider applies again with the same list: nothing
			// to do on either side.
			PreConfig: qoveryProviderApply,
			Config:    config,
			PlanOnly:  true,
		}, {
			// Import adopts the group with attach at its default; setting
			// attach = false in the configuration is then an update in
			// place that changes nothing in Qovery.
			ResourceName:            acctest.ExposedServiceAddr,
			ImportState:             true,
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: []string{"attach", "timeouts"},
		}},
	})
}
