package exposedservice_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
)

// An operator, a connector and an exposure in one configuration: with
// operator_id references Terraform orders them; without, it plans,
// creates and destroys them in parallel, and qtail still gets every order
// right. Either way the destroy leaves no device on the tailnet and no
// object stuck Terminating on the cluster.

// orderConfig is the configuration; refs adds operator_id to the connector
// and the exposure. Nothing else orders them after the operator: the
// connector's environment is given as a literal, and no depends_on is
// written.
func orderConfig(orgID, envID, appID string, refs bool) string {
	ref := ""
	if refs {
		ref = "operator_id = qtail_operator.this.id"
	}
	return fmt.Sprintf(`
resource "qtail_helm_repository" "tailscale" {
  organization_id = %[1]q
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

resource "qtail_operator" "this" {
  environment_id      = %[2]q
  helm_repository_id  = qtail_helm_repository.tailscale.id
  chart_version       = "1.102.4"
  hostname            = "tailscale-operator-us-east-1"
  default_tags        = [qtail_tag_owner.k8s_operator.tag]
  proxy_default_tags  = [qtail_tag_owner.k8s.tag]
  create_oauth_client = true
}

resource "qtail_connector" "lab" {
  environment_id = %[2]q
  name           = "lab"
  chart = {
    git_repository = {
      url       = "https://github.com/qtail/terraform-provider-qtail.git"
      root_path = "/examples/charts/tailnet-manifests"
    }
  }
  hostname      = "lab-us-east-1"
  subnet_routes = ["10.50.0.0/24"]
  tags          = [qtail_tag_owner.k8s.tag]
  %[4]s
}

resource "qtail_exposed_service" "billing" {
  application_id = %[3]q
  hostname       = "billing-api-us-east-1"
  tags           = [qtail_tag_owner.k8s.tag]
  %[4]s
}
`, orgID, envID, appID, ref)
}

// devices lists the tailnet's devices, sorted.
func devices(env *acctest.Env) []string {
	var out []string
	for _, d := range env.Tailnet.Devices() {
		out = append(out, d.ID+" "+d.Hostname)
	}
	slices.Sort(out)
	return out
}

// tornDown checks that the destroy left the devices the tailnet had
// before and nothing stuck on the cluster.
func tornDown(env *acctest.Env, before []string) func(*terraform.State) error {
	return func(*terraform.State) error {
		if after := devices(env); !slices.Equal(after, before) {
			return fmt.Errorf("after destroy the tailnet has the devices %q, before it had %q", after, before)
		}
		if stuck := env.Cluster.Stuck(); len(stuck) != 0 {
			return fmt.Errorf("after destroy these objects are stuck: %q", stuck)
		}
		if left := env.Cluster.Leftovers(); len(left) != 0 {
			return fmt.Errorf("after destroy the cluster still runs %q", left)
		}
		return nil
	}
}

func testOrder(t *testing.T, refs bool) {
	t.Parallel()
	env := acctest.New(t)
	seed := env.Seed()
	appID := env.ApplicationID(t, acctest.Region, "billing-api")
	hcl := orderConfig(seed.OrganizationID, seed.Regions[acctest.Region].EnvironmentID, appID, refs)
	before := devices(env)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy:             tornDown(env, before),
		Steps: []resource.TestStep{{
			Config: hcl,
			Check: func(*terraform.State) error {
				for _, h := range []string{"tailscale-operator-us-east-1", "lab-us-east-1", "billing-api-us-east-1"} {
					if len(env.DevicesNamed(h)) != 1 {
						return fmt.Errorf("want one device %s, got %+v", h, env.DevicesNamed(h))
					}
				}
				return nil
			},
		}, {
			Config:   hcl,
			PlanOnly: true,
		}},
	})
}

func TestOrder_withoutReferencesPlansAppliesAndDestroys(t *testing.T) { testOrder(t, false) }

func TestOrder_operatorIDOrdersEverything(t *testing.T) { testOrder(t, true) }

// An operator's destroy refuses while objects that need it remain on its
// cluster that this Terraform run does not destroy, and names them.
func TestOrder_operatorDestroyRefusedWhileItServes(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	seed := env.Seed()
	hcl := fmt.Sprintf(`
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

resource "qtail_operator" "this" {
  environment_id      = %q
  helm_repository_id  = qtail_helm_repository.tailscale.id
  chart_version       = "1.102.4"
  hostname            = "tailscale-operator-us-east-1"
  default_tags        = [qtail_tag_owner.k8s_operator.tag]
  proxy_default_tags  = [qtail_tag_owner.k8s.tag]
  create_oauth_client = true
}
`, seed.OrganizationID, seed.Regions[acctest.Region].EnvironmentID)
	var foreign string
	const values = "manifests:\n  - {apiVersion: tailscale.com/v1alpha1, kind: Connector, metadata: {name: by-hand}, spec: {subnetRouter: {advertiseRoutes: [10.60.0.0/24]}}}\n"
	before := devices(env)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy:             tornDown(env, before),
		Steps: []resource.TestStep{{
			Config: hcl,
		}, {
			PreConfig: func() { foreign = env.DeployManifestService(t, "connector-by-hand", values) },
			Config:    hcl,
			Destroy:   true,
			ExpectError: regexp.MustCompile(`(?s)Objects Still Need the Operator.*Connector by-hand of the Helm service` +
				`.*connector-by-hand.*operator_id = qtail_operator.NAME.id`),
		}, {
			PreConfig: func() {
				if err := env.QoveryClient(t).DeleteHelm(acctest.Background(t), foreign); err != nil {
					t.Fatal(err)
				}
				// The deletion ends after the fake's deploy time.
				for deadline := time.Now().Add(10 * time.Second); len(env.DevicesNamed("by-hand-connector")) != 0; {
					if time.Now().After(deadline) {
						t.Fatalf("the running operator left the devices of the deleted Connector: %+v", env.DevicesNamed("by-hand-connector"))
					}
					time.Sleep(10 * time.Millisecond)
				}
			},
			Config: hcl,
			Check: func(*terraform.State) error {
				if stuck := env.Cluster.Stuck(); len(stuck) != 0 {
					return fmt.Errorf("the refused destroy left %s", strings.Join(stuck, ", "))
				}
				return nil
			},
		}},
	})
}

// operator_id must name the operator of the object's cluster.
func TestOrder_operatorIDMustBeTheClustersOperator(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	env.InstallOperator(t, acctest.Region)
	other := env.CreateManifestService(t, "not-an-operator", "manifests: []\n")
	appID := env.ApplicationID(t, acctest.Region, "billing-api")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      acctest.ExposedServiceConfig(appID, "billing-api-us-east-1", fmt.Sprintf("operator_id = %q", other)),
			ExpectError: acctest.ErrorOn("operator_id", "does not install the tailscale-operator chart"),
		}},
	})
}
