package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
)

// homeLabRecipeConfig is the recipe's second shape, built by Terraform from
// nothing: tag owners, an operator whose API server proxy is on, a connector
// named after the cluster that is a subnet router for six routes and an exit
// node, routes approved by autoApprovers (approveByAPI false) or by qtail
// through the API (true), a grant for the platform team to every route and
// the internet, and the route status of the connector.
func homeLabRecipeConfig(orgID, envID string, approveByAPI bool) string {
	approvers := `
resource "qtail_auto_approver" "homelab" {
  count     = length(local.routes)
  route     = local.routes[count.index]
  approvers = [qtail_tag_owner.k8s.tag]
}

resource "qtail_auto_approver" "exit_node" {
  exit_node = true
  approvers = [qtail_tag_owner.k8s.tag]
}
`
	approve := "depends_on = [qtail_operator.homelab, qtail_auto_approver.homelab, qtail_auto_approver.exit_node]"
	if approveByAPI {
		approvers = ""
		approve = "approve_routes = true\n  depends_on = [qtail_operator.homelab]"
	}
	return fmt.Sprintf(`
locals {
  routes = %s
}

resource "qtail_tag_owner" "k8s_operator" {
  tag    = "tag:k8s-operator"
  owners = []
}

resource "qtail_tag_owner" "k8s" {
  tag    = "tag:k8s"
  owners = [qtail_tag_owner.k8s_operator.tag]
}

resource "qtail_helm_repository" "tailscale" {
  organization_id = %q
  name            = "tailscale"
}

resource "qtail_operator" "homelab" {
  environment_id      = %q
  helm_repository_id  = qtail_helm_repository.tailscale.id
  chart_version       = "1.102.4"
  hostname            = "tailscale-operator"
  api_server_proxy    = "true"
  create_oauth_client = true
  depends_on          = [qtail_tag_owner.k8s_operator, qtail_tag_owner.k8s]
}
%s
resource "qtail_connector" "homelab" {
  environment_id = qtail_operator.homelab.environment_id
  name           = "homelab"
  %s
  hostname      = "homelab"
  subnet_routes = local.routes
  exit_node     = true
  tags          = [qtail_tag_owner.k8s.tag]
  %s
}

resource "qtail_grant" "ops_to_homelab" {
  name = "ops-to-homelab"
  src  = ["group:platform-ops"]
  dst  = concat(qtail_connector.homelab.subnet_routes, ["autogroup:internet"])
  ip   = ["*"]
}

data "qtail_route_status" "homelab" {
  connector_id = qtail_connector.homelab.id
  depends_on   = [qtail_grant.ops_to_homelab]
}
`, hclList(homeLabRoutes), orgID, envID, approvers, connectorChartGit, approve)
}

// homeLabStatusChecks expect every route of the home lab advertised,
// approved (how: approval) and granted, and nothing missing.
func homeLabStatusChecks(approval string) []statecheck.StateCheck {
	const addr = "data.qtail_route_status.homelab"
	routes := make([]knownvalue.Check, 0, len(allHomeLabRoutes))
	for _, r := range allHomeLabRoutes {
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
	env := acctest.New(t)
	seed := env.Seed()
	config := homeLabRecipeConfig(seed.OrganizationID, seed.Regions[exposureRegion].EnvironmentID, false)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:            config,
			ConfigStateChecks: homeLabStatusChecks("auto_approver"),
			Check: resource.ComposeTestCheckFunc(
				checkDeviceRoutes(env, "homelab", allHomeLabRoutes, allHomeLabRoutes),
				func(*terraform.State) error {
					if n := env.Calls("POST /tailscale/api/v2/device/{id}/routes"); n != 0 {
						return fmt.Errorf("%d route approvals through the API; autoApprovers should approve them all", n)
					}
					return nil
				},
			),
		}, {
			Config:   config,
			PlanOnly: true,
		}},
	})
}

func TestHomeLabRecipe_qtailApprovesEveryRoute(t *testing.T) {
	env := acctest.New(t)
	seed := env.Seed()
	config := homeLabRecipeConfig(seed.OrganizationID, seed.Regions[exposureRegion].EnvironmentID, true)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:            config,
			ConfigStateChecks: homeLabStatusChecks("manual"),
			Check:             checkDeviceRoutes(env, "homelab", allHomeLabRoutes, allHomeLabRoutes),
		}, {
			Config:   config,
			PlanOnly: true,
		}},
	})
}
