package exposedservice_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// exposureRecipeConfig is the end state of the recipe in one region: the operator
// and its tag owners, one application exposed with its own tag, a grant
// from group:platform-ops to that tag on the application's declared ports,
// and policy tests that Tailscale then enforces on every later change.
func exposureRecipeConfig(orgID, envID, appID string, denyTest bool) string {
	config := fmt.Sprintf(`
resource "qtail_helm_repository" "tailscale" {
  organization_id = %q
  name            = "tailscale"
}

resource "qtail_tag_owner" "k8s_operator" {
  tag    = "tag:k8s-operator"
  owners = []
}

resource "qtail_tag_owner" "k8s" {
  tag    = "tag:k8s"
  owners = [qtail_tag_owner.k8s_operator.tag]
}

resource "qtail_tag_owner" "k8s_billing" {
  tag    = "tag:k8s-billing"
  owners = [qtail_tag_owner.k8s_operator.tag]
}

resource "qtail_operator" "us_east_1" {
  environment_id      = %q
  helm_repository_id  = qtail_helm_repository.tailscale.id
  chart_version       = "1.102.4"
  hostname            = "tailscale-operator-us-east-1"
  create_oauth_client = true
  depends_on          = [qtail_tag_owner.k8s_operator, qtail_tag_owner.k8s]
}

resource "qtail_exposed_service" "billing" {
  application_id = %q
  hostname       = "billing-api-us-east-1"
  tags           = [qtail_tag_owner.k8s_billing.tag]
  depends_on     = [qtail_operator.us_east_1]
}

resource "qtail_grant" "ops_billing" {
  name = "platform-ops-to-billing"
  src  = ["group:platform-ops"]
  dst  = [qtail_tag_owner.k8s_billing.tag]
  ip   = [for p in qtail_exposed_service.billing.ports : "tcp:${p.internal_port}"]
}

resource "qtail_policy_test" "ops_reach_billing" {
  name       = "platform-ops-reach-billing"
  src        = "group:platform-ops"
  accept     = ["tag:k8s-billing:443", "tag:k8s-billing:8080"]
  depends_on = [qtail_grant.ops_billing]
}
`, orgID, envID, appID)
	if denyTest {
		config += `
resource "qtail_policy_test" "others_denied_billing" {
  name       = "others-denied-billing"
  src        = "carol@example.com"
  deny       = ["tag:k8s-billing:443", "tag:k8s-billing:8080"]
  depends_on = [qtail_exposed_service.billing]
}
`
	}
	return config
}

// exposureAllowAllRule is the default rule of the sandbox tailnet, as its policy
// file writes it.
const exposureAllowAllRule = "\t\t{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"*\"]},\n"

func TestExposedService_recipeEndState(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	seed := env.Seed()
	region := seed.Regions[acctest.Region]
	appID := region.Applications["billing-api"]
	hostname := "billing-api-us-east-1"
	ctx := acctest.Background(t)
	ts, err := tailnet.New(tailnet.Config{BaseURL: env.URL + "/tailscale", APIKey: sandbox.TailscaleAPIKey, Tailnet: sandbox.TailnetName})
	if err != nil {
		t.Fatal(err)
	}

	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: exposureRecipeConfig(seed.OrganizationID, region.EnvironmentID, appID, false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// The plan shows what becomes reachable, and the grant
					// that lets the group in, before anything exists.
					plancheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("ports"), exposureBillingPorts),
					plancheck.ExpectKnownValue("qtail_grant.ops_billing", tfjsonpath.New("ip"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringExact("tcp:443"), knownvalue.StringExact("tcp:8080"),
					})),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("tailnet_fqdn"), knownvalue.StringExact(hostname+"."+sandbox.MagicDNSSuffix)),
					statecheck.ExpectKnownValue(acctest.ExposedServiceAddr, tfjsonpath.New("tags"), knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("tag:k8s-billing")})),
				},
				Check: resource.ComposeTestCheckFunc(
					exposureCheckDevice(env, hostname, "tag:k8s-billing"),
					func(*terraform.State) error {
						if devs := env.DevicesNamed("tailscale-operator-us-east-1"); len(devs) != 1 || !slices.Equal(devs[0].Tags, []string{"tag:k8s-operator"}) {
							return fmt.Errorf("want the operator device tagged tag:k8s-operator, got %+v", devs)
						}
						body, _ := env.Tailnet.Policy()
						for _, marker := range []string{"// qtail:tag_owner:tag:k8s-billing", "// qtail:grant:platform-ops-to-billing", "// qtail:policy_test:platform-ops-reach-billing"} {
							if !strings.Contains(string(body), marker) {
								return fmt.Errorf("the policy has no %s:\n%s", marker, body)
							}
						}
						return nil
					},
				),
			},
			{
				// The platform team removes the allow-all rule by hand (qtail
				// never edits entries it does not own); then the policy can
				// prove that nobody else reaches the service.
				PreConfig: func() {
					body, _ := env.Tailnet.Policy()
					if !strings.Contains(string(body), exposureAllowAllRule) {
						t.Fatalf("no allow-all rule in the policy:\n%s", body)
					}
					if err := env.Tailnet.SetPolicyDirect([]byte(strings.Replace(string(body), exposureAllowAllRule, "", 1))); err != nil {
						t.Fatalf("removing the allow-all rule: %v", err)
					}
				},
				Config: exposureRecipeConfig(seed.OrganizationID, region.EnvironmentID, appID, true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("qtail_policy_test.others_denied_billing", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction(acctest.ExposedServiceAddr, plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("qtail_grant.ops_billing", plancheck.ResourceActionNoop),
				}},
				Check: func(*terraform.State) error {
					body, _ := env.Tailnet.Policy()
					if !strings.Contains(string(body), "// qtail:policy_test:others-denied-billing") {
						return fmt.Errorf("the deny test is not in the policy:\n%s", body)
					}
					return nil
				},
			},
			{
				// A later hand edit that would widen access to the service
				// breaks a test: Tailscale refuses it, in the admin console
				// and through the API alike.
				PreConfig: func() {
					body, etag := env.Tailnet.Policy()
					widened := strings.Replace(string(body), `"grants": [`,
						`"grants": [`+"\n\t\t"+`{"src": ["autogroup:member"], "dst": ["tag:k8s-billing"], "ip": ["*"]},`, 1)
					if widened == string(body) {
						t.Fatalf("no grants section to widen:\n%s", body)
					}
					err := env.Tailnet.SetPolicyDirect([]byte(widened))
					if err == nil || !strings.Contains(err.Error(), "test(s) failed") {
						t.Fatalf("the tailnet accepted a policy that lets carol reach the billing proxy (error %v)", err)
					}
					_, err = ts.SetPolicy(ctx, []byte(widened), etag)
					ae, ok := tailnet.AsAPIError(err)
					if !ok || ae.Status != 400 || !strings.Contains(ae.Error(), "carol@example.com") {
						t.Fatalf("want the API to refuse the widened policy with 400 and carol's failing test, got %v", err)
					}
					if after, _ := env.Tailnet.Policy(); string(after) != string(body) {
						t.Fatalf("the refused edit changed the policy")
					}
				},
				Config: exposureRecipeConfig(seed.OrganizationID, region.EnvironmentID, appID, true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: exposureCheckDevice(env, hostname, "tag:k8s-billing"),
			},
		},
	})
}
