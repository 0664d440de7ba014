package manifestservice_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
)

// A connector whose creation timed out is tainted; the next apply replaces
// it, although its Helm service and its device, which the failed creation
// left, use the name and the hostname that the replacement plans.
func TestConnector_failedCreationIsReplacedByTheNextApply(t *testing.T) {
	t.Parallel()
	env := acctest.New(t, acctest.WithDeployTime(1500*time.Millisecond))
	op := env.InstallOperator(t, acctest.Region)
	config := func(timeout string) string {
		return connectorConfig(op.EnvironmentID, homeLabBody(fmt.Sprintf("timeouts = { create = %q }", timeout)))
	}
	var first string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      config("1s"),
			ExpectError: acctest.ErrorRE("Timed Out"),
		}, {
			Config: config("1m"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(connectorAddr, plancheck.ResourceActionReplace),
			}},
			Check: resource.ComposeTestCheckFunc(
				acctest.Capture(connectorAddr, "id", &first),
				checkDeviceRoutes(env, "homelab", acctest.AllHomeLabRoutes, nil),
			),
		}, {
			Config:   config("1m"),
			PlanOnly: true,
		}},
	})
}

// terraform taint on each manifest resource: the replacement plans without
// taking the old Helm service and devices for someone else's.
func TestManifestResources_taintedAreReplaced(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	config := connectorConfig(envID, homeLabBody("")) + proxyGroupConfig(envID, `type = "egress"`) +
		egressConfig(envID, `tailnet_fqdn = "db.tail4f2a.ts.net"
  ports = ["tcp:5432"]`)
	addrs := []string{connectorAddr, proxyGroupAddr, egressAddr}
	ids := map[string]*string{}
	var checks []resource.TestCheckFunc
	for _, a := range addrs {
		ids[a] = new(string)
		checks = append(checks, acctest.Capture(a, "id", ids[a]))
	}
	replaced := make([]plancheck.PlanCheck, 0, len(addrs))
	for _, a := range addrs {
		replaced = append(replaced, plancheck.ExpectResourceAction(a, plancheck.ResourceActionReplace))
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: config,
			Check:  resource.ComposeTestCheckFunc(checks...),
		}, {
			Taint:            addrs,
			Config:           config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: replaced},
			Check: func(*terraform.State) error {
				for _, a := range addrs {
					if _, ok := env.Qovery.Helm(*ids[a]); ok {
						return fmt.Errorf("%s: the tainted Helm service %s is still there", a, *ids[a])
					}
				}
				return nil
			},
		}, {
			Config:   config,
			PlanOnly: true,
		}},
	})
}

// What a person can change on the Helm service of any manifest resource in
// the Qovery console, and the plan that undoes it: an update in place.
func TestManifestResources_helmServiceDrift(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	config := connectorConfig(envID, homeLabBody("")) + proxyGroupConfig(envID, `type = "egress"`) +
		egressConfig(envID, `tailnet_fqdn = "db.tail4f2a.ts.net"
  ports = ["tcp:5432"]`)
	addrs := []string{connectorAddr, proxyGroupAddr, egressAddr}
	ids := map[string]*string{}
	var capture []resource.TestCheckFunc
	for _, a := range addrs {
		ids[a] = new(string)
		capture = append(capture, acctest.Capture(a, "id", ids[a]))
	}
	edit := func(fn func(h *qoveryapi.Helm)) func() {
		return func() {
			for _, a := range addrs {
				if err := env.Qovery.UpdateHelm(*ids[a], fn); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	updates := func(extra ...plancheck.PlanCheck) resource.ConfigPlanChecks {
		checks := slices.Clone(extra)
		for _, a := range addrs {
			checks = append(checks, plancheck.ExpectResourceAction(a, plancheck.ResourceActionUpdate))
		}
		return resource.ConfigPlanChecks{PreApply: checks}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: config, Check: resource.ComposeTestCheckFunc(capture...)},
			{
				// The chart's folder changed.
				PreConfig: edit(func(h *qoveryapi.Helm) { h.Source.Git.RootPath = "/charts/other" }),
				Config:    config,
				ConfigPlanChecks: updates(plancheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("chart").AtMapKey("git_repository").AtMapKey("root_path"),
					knownvalue.StringExact("/examples/charts/tailnet-manifests"))),
				Check: func(*terraform.State) error {
					for _, a := range addrs {
						if h, _ := env.Qovery.Helm(*ids[a]); h.Source.Git.RootPath != "/examples/charts/tailnet-manifests" {
							return fmt.Errorf("%s: root path %q", a, h.Source.Git.RootPath)
						}
					}
					return nil
				},
			},
			{
				// A --set added next to qtail's values file.
				PreConfig: edit(func(h *qoveryapi.Helm) {
					h.ValuesOverride.Set = append(h.ValuesOverride.Set, [2]string{"manifests[0].spec.replicas", "5"})
				}),
				Config:           config,
				ConfigPlanChecks: updates(),
				Check: func(*terraform.State) error {
					for _, a := range addrs {
						h, _ := env.Qovery.Helm(*ids[a])
						if len(h.ValuesOverride.Set) != 0 {
							return fmt.Errorf("%s: --set %v is still there", a, h.ValuesOverride.Set)
						}
					}
					return nil
				},
			},
			{Config: config, PlanOnly: true},
		},
	})
}
