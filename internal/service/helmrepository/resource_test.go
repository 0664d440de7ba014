package helmrepository_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
)

const helmRepoAddr = "qtail_helm_repository.tailscale"

func TestHelmRepository_lifecycle(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	org := env.Seed().OrganizationID
	var id string

	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		CheckDestroy: func(*terraform.State) error {
			if n := len(env.Qovery.HelmRepositories()); n != 0 {
				return fmt.Errorf("%d Helm repositories left after destroy", n)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: acctest.HelmRepositoryConfig(org, "tailscale", ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(helmRepoAddr, tfjsonpath.New("url"), knownvalue.StringExact("https://pkgs.tailscale.com/helmcharts")),
					statecheck.ExpectKnownValue(helmRepoAddr, tfjsonpath.New("allow_unstable"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(helmRepoAddr, tfjsonpath.New("skip_tls_verification"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(helmRepoAddr, tfjsonpath.New("id"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f-]{36}$`))),
				},
				Check: func(s *terraform.State) error {
					if err := acctest.Capture(helmRepoAddr, "id", &id)(s); err != nil {
						return err
					}
					repo, ok := env.Qovery.HelmRepository(id)
					if !ok {
						return fmt.Errorf("repository %s not in the fake Qovery API", id)
					}
					if repo.Kind != "HTTPS" || repo.Name != "tailscale" || repo.OrganizationID != org {
						return fmt.Errorf("unexpected repository in Qovery: %+v", repo)
					}
					return nil
				},
			},
			{
				// Rename and switch to the unstable channel knowingly: an
				// in-place update.
				Config: acctest.HelmRepositoryConfig(org, "tailscale-unstable", `url = "https://pkgs.tailscale.com/unstable/helmcharts"
  allow_unstable = true`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(helmRepoAddr, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					repo, _ := env.Qovery.HelmRepository(id)
					if repo.Name != "tailscale-unstable" || repo.URL != "https://pkgs.tailscale.com/unstable/helmcharts" {
						return fmt.Errorf("update not applied in Qovery: %+v", repo)
					}
					return nil
				},
			},
			{
				ResourceName:      helmRepoAddr,
				ImportState:       true,
				ImportStateVerify: true,
				ImportStateIdFunc: func(*terraform.State) (string, error) { return org + "/" + id, nil },
			},
		},
	})
}

func TestHelmRepository_driftDeletedInConsole(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	org := env.Seed().OrganizationID
	var id string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: acctest.HelmRepositoryConfig(org, "tailscale", ""),
				Check:  acctest.Capture(helmRepoAddr, "id", &id),
			},
			{
				PreConfig: func() {
					if err := env.Qovery.DeleteHelmRepository(id); err != nil {
						t.Fatal(err)
					}
				},
				Config: acctest.HelmRepositoryConfig(org, "tailscale", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(helmRepoAddr, plancheck.ResourceActionCreate),
				}},
				Check: func(*terraform.State) error {
					if n := len(env.Qovery.HelmRepositories()); n != 1 {
						return fmt.Errorf("want the repository created again, Qovery has %d", n)
					}
					return nil
				},
			},
		},
	})
}

func TestHelmRepository_driftURLChangedInConsole(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	org := env.Seed().OrganizationID
	var id string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: acctest.HelmRepositoryConfig(org, "tailscale", ""),
				Check:  acctest.Capture(helmRepoAddr, "id", &id),
			},
			{
				PreConfig: func() {
					err := env.Qovery.UpdateHelmRepository(id, func(r *qoveryapi.HelmRepository) {
						r.URL = "https://charts.example.com/mirror"
					})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: acctest.HelmRepositoryConfig(org, "tailscale", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(helmRepoAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(helmRepoAddr, tfjsonpath.New("url"), knownvalue.StringExact("https://pkgs.tailscale.com/helmcharts")),
				}},
				Check: func(*terraform.State) error {
					repo, _ := env.Qovery.HelmRepository(id)
					if repo.URL != "https://pkgs.tailscale.com/helmcharts" {
						return fmt.Errorf("URL not repaired: %s", repo.URL)
					}
					return nil
				},
			},
		},
	})
}

func TestHelmRepository_driftNameAndTLSChangedInConsole(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	org := env.Seed().OrganizationID
	var id string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: acctest.HelmRepositoryConfig(org, "tailscale", ""),
				Check:  acctest.Capture(helmRepoAddr, "id", &id),
			},
			{
				PreConfig: func() {
					err := env.Qovery.UpdateHelmRepository(id, func(r *qoveryapi.HelmRepository) {
						r.Name = "tailscale-renamed"
						r.SkipTLSVerification = true
					})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: acctest.HelmRepositoryConfig(org, "tailscale", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(helmRepoAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(helmRepoAddr, tfjsonpath.New("name"), knownvalue.StringExact("tailscale")),
					plancheck.ExpectKnownValue(helmRepoAddr, tfjsonpath.New("skip_tls_verification"), knownvalue.Bool(false)),
					plancheck.ExpectKnownValue(helmRepoAddr, tfjsonpath.New("id"), knownvalue.StringFunc(func(v string) error {
						if v != id {
							return fmt.Errorf("the repair plans id %s, want the repository's own %s", v, id)
						}
						return nil
					})),
				}},
				Check: func(*terraform.State) error {
					repo, _ := env.Qovery.HelmRepository(id)
					if repo.Name != "tailscale" || repo.SkipTLSVerification {
						return fmt.Errorf("console edits not repaired: %+v", repo)
					}
					return nil
				},
			},
		},
	})
}

func TestHelmRepository_planTimeValidation(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	org := env.Seed().OrganizationID
	cases := []struct {
		name   string
		config string
		want   string
	}{
		{"unstable channel", acctest.HelmRepositoryConfig(org, "ts", `url = "https://pkgs.tailscale.com/unstable/helmcharts"`), `is Tailscale's unstable chart channel`},
		{"plain http", acctest.HelmRepositoryConfig(org, "ts", `url = "http://pkgs.tailscale.com/helmcharts"`), `reach Helm chart repositories over HTTPS only`},
		{"oci url", acctest.HelmRepositoryConfig(org, "ts", `url = "oci://registry.example.com/charts"`), `reach Helm chart repositories over HTTPS only`},
		{"bad organization id", acctest.HelmRepositoryConfig("acme", "ts", ""), `must be a Qovery ID`},
		{"blank name", acctest.HelmRepositoryConfig(org, "  ", ""), `must not be empty or blank`},
		{"unknown organization", acctest.HelmRepositoryConfig("00000000-0000-4000-8000-000000000000", "ts", ""), `Organization Not Found`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{{
					Config:      tc.config,
					ExpectError: acctest.ErrorRE(tc.want),
				}},
			})
		})
	}
	if n := len(env.Qovery.HelmRepositories()); n != 0 {
		t.Fatalf("refused configurations created %d repositories", n)
	}
}

func TestHelmRepository_nameTakenRefusedAtPlan(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	org := env.Seed().OrganizationID
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: acctest.HelmRepositoryConfig(org, "tailscale", ""),
			},
			{
				Config: acctest.HelmRepositoryConfig(org, "tailscale", "") + `
resource "qtail_helm_repository" "again" {
  organization_id = "` + org + `"
  name            = "Tailscale"
}
`,
				ExpectError: regexp.MustCompile(`(?s)already has a Helm repository named "tailscale" \(ID.*import \{.*to = qtail_helm_repository.NAME.*` +
					`terraform import qtail_helm_repository.NAME ` + org + `/`),
			},
		},
	})
}

func TestHelmRepository_missingQoveryToken(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	env.Setenv("QOVERY_API_TOKEN", "")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      acctest.HelmRepositoryConfig(env.Seed().OrganizationID, "tailscale", ""),
			ExpectError: regexp.MustCompile(`(?s)qovery_api_token.*QOVERY_API_TOKEN`),
		}},
	})
}

// Qovery answers 403, or 400 "helm repository does not exist", about a
// deleted Helm repository: destroy takes either for "gone" (the
// organization's list proves it) and finishes.
func TestHelmRepository_destroyFinishesWhatQoveryAnswersAboutTheDeleted(t *testing.T) {
	t.Parallel()
	acctest.ForEachDeletedAnswer(t, func(t *testing.T, answer acctest.Option, status int) {
		env := acctest.New(t, answer)
		org := env.Seed().OrganizationID
		var id string
		resource.UnitTest(t, resource.TestCase{
			ProtoV6ProviderFactories: env.Factories(),
			CheckDestroy: func(*terraform.State) error {
				if n := len(env.Qovery.HelmRepositories()); n != 0 {
					return fmt.Errorf("%d Helm repositories left after destroy", n)
				}
				_, err := env.QoveryClient(t).GetHelmRepository(acctest.Background(t), org, id)
				return acctest.AnsweredAsDeleted(err, status)
			},
			Steps: []resource.TestStep{{
				Config: acctest.HelmRepositoryConfig(org, "tailscale", ""),
				Check:  acctest.Capture(helmRepoAddr, "id", &id),
			}},
		})
	})
}
