package manifestservice_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
)

// homeLabRecipeConfig is the recipe's second shape, built by Terraform from
// nothing, as examples/homelab writes it: tag owners, an operator whose API
// server proxy is on, a connector named after the cluster that is a subnet
// router for six routes and an exit node, autoApprovers for its tag, a
// grant for the platform team to every route and the internet, and the
// route status of the connector. Without approvers, the autoApprovers are
// left out and only qtail approves the routes, through the API.
func homeLabRecipeConfig(t *testing.T, approvers bool) string {
	t.Helper()
	b, err := os.ReadFile("../../../examples/homelab/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	config := string(b)
	// The test framework supplies the provider.
	config = regexp.MustCompile(`(?s)\nterraform \{.*?\n\}\n`).ReplaceAllString(config, "\n")
	config = strings.Replace(config, `provider "qtail" {}`, "", 1)
	if !approvers {
		config = regexp.MustCompile(`(?s)\nresource "qtail_auto_approver" "[a-z_]+" \{.*?\n\}\n`).ReplaceAllString(config, "\n")
		config = strings.Replace(config, "depends_on = [qtail_auto_approver.homelab, qtail_auto_approver.exit_node]", "", 1)
	}
	if strings.Contains(config, "required_providers") || strings.Contains(config, "qtail_auto_approver") != approvers {
		t.Fatalf("examples/homelab/main.tf no longer has the expected shape:\n%s", config)
	}
	return config
}

// homeLabVariables are the example's variables in the seeded us-east-1.
func homeLabVariables(env *acctest.Env) config.Variables {
	seed := env.Seed()
	return config.Variables{
		"organization_id": config.StringVariable(seed.OrganizationID),
		"environment_id":  config.StringVariable(seed.Regions[acctest.Region].EnvironmentID),
	}
}

// homeLabStatusChecks expect every route of the home lab advertised,
// approved (how: approval) and granted, and nothing missing.
func homeLabStatusChecks(approval string) []statecheck.StateCheck {
	const addr = "data.qtail_route_status.homelab"
	routes := make([]knownvalue.Check, 0, len(acctest.AllHomeLabRoutes))
	for _, r := range acctest.AllHomeLabRoutes {
		routes = append(routes, knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"route":      knownvalue.StringExact(r),
			"advertised": knownvalue.Bool(true),
			"approved":   knownvalue.Bool(true),
			"approval":   knownvalue.StringExact(approval),
			"granted":    knownvalue.Bool(true),
		}))
	}
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue(addr, tfjsonpath.New("routes"), knownvalue.ListExact(routes)),
		statecheck.ExpectKnownValue(addr, tfjsonpath.New("missing"), knownvalue.ListExact([]knownvalue.Check{})),
		statecheck.ExpectKnownValue(addr, tfjsonpath.New("ok"), knownvalue.Bool(true)),
		statecheck.ExpectKnownValue(connectorAddr, tfjsonpath.New("routes_approved"), knownvalue.Bool(true)),
		statecheck.ExpectKnownValue("qtail_operator.homelab", tfjsonpath.New("api_server_proxy"), knownvalue.StringExact("true")),
	}
}

func TestHomeLabRecipe_autoApproversApproveEveryRoute(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	hcl, vars := homeLabRecipeConfig(t, true), homeLabVariables(env)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:            hcl,
			ConfigVariables:   vars,
			ConfigStateChecks: homeLabStatusChecks("auto_approver"),
			Check: resource.ComposeTestCheckFunc(
				checkDeviceRoutes(env, "homelab", acctest.AllHomeLabRoutes, acctest.AllHomeLabRoutes),
				func(*terraform.State) error {
					if n := env.Calls("POST /tailscale/api/v2/device/{id}/routes"); n != 0 {
						return fmt.Errorf("%d route approvals through the API; autoApprovers should approve them all", n)
					}
					return nil
				},
			),
		}, {
			Config:          hcl,
			ConfigVariables: vars,
			PlanOnly:        true,
		}},
	})
}

func TestHomeLabRecipe_qtailApprovesEveryRoute(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	hcl, vars := homeLabRecipeConfig(t, false), homeLabVariables(env)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:            hcl,
			ConfigVariables:   vars,
			ConfigStateChecks: homeLabStatusChecks("manual"),
			Check: resource.ComposeTestCheckFunc(
				checkDeviceRoutes(env, "homelab", acctest.AllHomeLabRoutes, acctest.AllHomeLabRoutes),
				func(*terraform.State) error {
					if n := env.Calls("POST /tailscale/api/v2/device/{id}/routes"); n != 1 {
						return fmt.Errorf("%d route approvals through the API, want 1", n)
					}
					return nil
				},
			),
		}, {
			Config:          hcl,
			ConfigVariables: vars,
			PlanOnly:        true,
		}},
	})
}
