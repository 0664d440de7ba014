package manifestservice_test

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
	"github.com/qtail/terraform-provider-qtail/internal/fake/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

const dnsConfigAddr = "qtail_dns_config.dns"

// dnsConfigConfig is one DNSConfig in envID; body adds attributes.
func dnsConfigConfig(envID, body string) string {
	return fmt.Sprintf(`
resource "qtail_dns_config" "dns" {
  environment_id = %q
  %s
  %s
}
`, envID, connectorChartGit, body)
}

// clusterDNSConfig returns the DNSConfig the simulated cluster runs for
// the Helm service helmID.
func clusterDNSConfig(env *acctest.Env, helmID string) (cluster.DNSConfig, bool) {
	for _, d := range env.Cluster.DNSConfigs() {
		if d.HelmID == helmID {
			return d, true
		}
	}
	return cluster.DNSConfig{}, false
}

// checkNameserver checks that the cluster runs the DNSConfig of the Helm
// service *helmID, Ready with the nameserver's IP (ip, when not empty),
// and that the nameserver runs image with replicas pods.
func checkNameserver(env *acctest.Env, helmID *string, ip, image string, replicas int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		d, ok := clusterDNSConfig(env, *helmID)
		if !ok {
			return fmt.Errorf("the cluster runs no DNSConfig of %s (events %q)", *helmID, env.Cluster.Events())
		}
		ns, ok := env.Cluster.NameserverOf(d.ClusterID)
		switch {
		case !ok || !d.Ready || d.NameserverIP != ns.IP:
			return fmt.Errorf("DNSConfig %+v, nameserver %+v (found %v)", d, ns, ok)
		case ip != "" && ns.IP != ip:
			return fmt.Errorf("the nameserver's IP is %s, want %s", ns.IP, ip)
		case ns.Image != image || ns.Replicas != replicas:
			return fmt.Errorf("the nameserver runs %s with %d replicas, want %s with %d", ns.Image, ns.Replicas, image, replicas)
		}
		return nil
	}
}

func TestDNSConfig_createUpdateImportDestroy(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	var helmID string
	updated := dnsConfigConfig(envID, `image_repo = "ghcr.io/acme/k8s-nameserver"
  image_tag  = "v1.102.3"
  replicas   = 2`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: dnsConfigConfig(envID, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(dnsConfigAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(dnsConfigAddr, tfjsonpath.New("name"), knownvalue.StringExact("ts-dns")),
					plancheck.ExpectKnownValue(dnsConfigAddr, tfjsonpath.New("helm_service_name"), knownvalue.StringExact("tailscale-dnsconfig-ts-dns")),
					plancheck.ExpectKnownValue(dnsConfigAddr, tfjsonpath.New("values"), knownvalue.StringRegexp(regexp.MustCompile(`kind: DNSConfig[\s\S]*nameserver: \{\}`))),
					plancheck.ExpectKnownValue(dnsConfigAddr, tfjsonpath.New("cluster_wide_resources_allowed"), knownvalue.Bool(true)),
					plancheck.ExpectKnownValue(dnsConfigAddr, tfjsonpath.New("nameserver_ip"), knownvalue.Null()),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dnsConfigAddr, tfjsonpath.New("deployed"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dnsConfigAddr, tfjsonpath.New("replicas"), knownvalue.Null()),
					statecheck.ExpectKnownValue(dnsConfigAddr, tfjsonpath.New("nameserver_ip"), knownvalue.Null()),
				},
				Check: resource.ComposeTestCheckFunc(
					acctest.Capture(dnsConfigAddr, "id", &helmID),
					checkNameserver(env, &helmID, "", "tailscale/k8s-nameserver:stable", 1),
				),
			},
			{Config: dnsConfigConfig(envID, ""), PlanOnly: true},
			{
				Config: updated,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(dnsConfigAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkNameserver(env, &helmID, "", "ghcr.io/acme/k8s-nameserver:v1.102.3", 2),
			},
			{Config: updated, PlanOnly: true},
			{
				ResourceName:                         dnsConfigAddr,
				ImportState:                          true,
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "id",
			},
			{
				ResourceName:  dnsConfigAddr,
				ImportState:   true,
				ImportStateId: "ts-dns",
				ExpectError:   acctest.ErrorRE("is not the ID of the DNSConfig's Helm service"),
			},
		},
		CheckDestroy: func(*terraform.State) error {
			if _, ok := env.Qovery.Helm(helmID); ok {
				return fmt.Errorf("the Helm service %s is still there", helmID)
			}
			if _, ok := clusterDNSConfig(env, helmID); ok {
				return fmt.Errorf("the cluster still runs the DNSConfig")
			}
			if ns, ok := env.Cluster.NameserverOf(env.Seed().Regions[acctest.Region].ClusterID); ok {
				return fmt.Errorf("the nameserver %+v is still there", ns)
			}
			return nil
		},
	})
}

// A static cluster IP is known at plan as nameserver_ip, and changing it
// replaces the DNSConfig: the operator sets it only when it creates the
// nameserver's Service.
func TestDNSConfig_clusterIPReplaces(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	var firstID, secondID string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: dnsConfigConfig(envID, `cluster_ip = "10.96.0.53"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(dnsConfigAddr, tfjsonpath.New("nameserver_ip"), knownvalue.StringExact("10.96.0.53")),
			}},
			Check: resource.ComposeTestCheckFunc(
				acctest.Capture(dnsConfigAddr, "id", &firstID),
				checkNameserver(env, &firstID, "10.96.0.53", "tailscale/k8s-nameserver:stable", 1),
			),
		}, {
			Config: dnsConfigConfig(envID, `cluster_ip = "10.96.0.54"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(dnsConfigAddr, plancheck.ResourceActionReplace),
				plancheck.ExpectKnownValue(dnsConfigAddr, tfjsonpath.New("nameserver_ip"), knownvalue.StringExact("10.96.0.54")),
			}},
			Check: resource.ComposeTestCheckFunc(
				acctest.Capture(dnsConfigAddr, "id", &secondID),
				checkNameserver(env, &secondID, "10.96.0.54", "tailscale/k8s-nameserver:stable", 1),
				func(*terraform.State) error {
					if secondID == firstID {
						return fmt.Errorf("the Helm service %s was kept", firstID)
					}
					return nil
				},
			),
		}, {
			Config:   dnsConfigConfig(envID, `cluster_ip = "10.96.0.54"`),
			PlanOnly: true,
		}},
	})
}

// What a person changes in the Qovery console shows in the plan, and the
// apply puts it back.
func TestDNSConfig_drift(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	config := dnsConfigConfig(envID, `image_tag = "v1.102.3"`)
	var helmID string
	setValues := func(d manifest.DNSConfig) func() {
		return func() {
			values, err := manifest.RenderDNSConfig(d)
			if err != nil {
				t.Fatal(err)
			}
			if err := env.Qovery.SetHelmRawValues(helmID, qoveryapi.ValuesFile{Name: manifest.ManifestsFileName, Content: values}); err != nil {
				t.Fatal(err)
			}
		}
	}
	image := "tailscale/k8s-nameserver:v1.102.3"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{Config: config, Check: resource.ComposeTestCheckFunc(acctest.Capture(dnsConfigAddr, "id", &helmID), checkNameserver(env, &helmID, "", image, 1))},
			{
				// The image tag edited in the console.
				PreConfig: setValues(manifest.DNSConfig{Name: "ts-dns", ImageTag: "unstable"}),
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(dnsConfigAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkNameserver(env, &helmID, "", image, 1),
			},
			{
				// A static IP added in the console: the nameserver keeps
				// its Service, so the values are written back, in place.
				PreConfig: setValues(manifest.DNSConfig{Name: "ts-dns", ImageTag: "v1.102.3", ClusterIP: "10.96.0.99"}),
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(dnsConfigAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkNameserver(env, &helmID, "", image, 1),
			},
			{
				PreConfig: func() {
					if err := env.Qovery.SetHelmAllowClusterWideResources(helmID, false); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(dnsConfigAddr, plancheck.ResourceActionUpdate),
				}},
			},
			{
				// The Helm service deleted in the console: its release,
				// the DNSConfig and the nameserver go with it.
				PreConfig: func() {
					if err := env.Qovery.DeleteService(helmID); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(dnsConfigAddr, plancheck.ResourceActionCreate),
				}},
				Check: resource.ComposeTestCheckFunc(acctest.Capture(dnsConfigAddr, "id", &helmID), checkNameserver(env, &helmID, "", image, 1)),
			},
			{Config: config, PlanOnly: true},
		},
	})
}

// The operator supports one DNSConfig per cluster: the plan refuses a
// second one, of the same configuration or of another Helm service.
func TestDNSConfig_onePerCluster(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	before := env.Calls("POST /qovery/environment/{environmentId}/helm")
	two := dnsConfigConfig(envID, "") + fmt.Sprintf(`
resource "qtail_dns_config" "other" {
  environment_id = %q
  name           = "other"
  %s
}
`, envID, connectorChartGit)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      two,
			PlanOnly:    true,
			ExpectError: acctest.ErrorOn("environment_id", "plans a DNSConfig on cluster "+env.Seed().Regions[acctest.Region].ClusterID),
		}},
	})
	values, err := manifest.RenderDNSConfig(manifest.DNSConfig{Name: "by-hand"})
	if err != nil {
		t.Fatal(err)
	}
	otherID := env.DeployManifestService(t, "dns-by-hand", values)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      dnsConfigConfig(envID, ""),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`already\s+deploys\s+the\s+DNSConfig\s+by-hand[\s\S]*terraform import qtail_dns_config\.NAME ` + otherID),
		}},
	})
	if after := env.Calls("POST /qovery/environment/{environmentId}/helm"); after != before+1 {
		t.Errorf("%d Helm services created, want only the one made by hand", after-before)
	}
}

// The plan refuses, on their attributes, the fields that the DNSConfig CRD
// of the chart of the cluster's operator lacks.
func TestDNSConfig_fieldsOfTheChartSeries(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	op := env.InstallOperator(t, acctest.Region)
	pin := func(version string) {
		t.Helper()
		q := env.QoveryClient(t)
		h, err := q.GetHelm(acctest.Background(t), op.HelmID)
		if err != nil {
			t.Fatal(err)
		}
		req := h.ToRequest()
		req.Source.HelmRepository.ChartVersion = version
		if _, err := q.EditHelm(acctest.Background(t), op.HelmID, &req); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		chart, attr, body, field string
	}{
		{"1.84.3", "cluster_ip", `cluster_ip = "10.96.0.53"`, "spec.nameserver.service.clusterIP"},
		{"1.84.3", "replicas", `replicas = 2`, "spec.nameserver.replicas"},
		{"1.88.4", "replicas", `replicas = 2`, "spec.nameserver.replicas"},
	} {
		pin(tc.chart)
		resource.UnitTest(t, resource.TestCase{
			ProtoV6ProviderFactories: env.Factories(),
			Steps: []resource.TestStep{{
				Config:      dnsConfigConfig(op.EnvironmentID, tc.body),
				PlanOnly:    true,
				ExpectError: acctest.ErrorOn(tc.attr, "runs the tailscale-operator chart "+tc.chart+", whose DNSConfig CRD has no "+tc.field),
			}},
		})
	}
	// 1.88 has the static cluster IP; a chart outside the table is a
	// warning only.
	for _, version := range []string{"1.88.4", "1.200.0"} {
		pin(version)
		resource.UnitTest(t, resource.TestCase{
			ProtoV6ProviderFactories: env.Factories(),
			Steps: []resource.TestStep{{
				Config:             dnsConfigConfig(op.EnvironmentID, `cluster_ip = "10.96.0.53"`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			}},
		})
	}
}

func TestDNSConfig_invalidInputsCreateNothing(t *testing.T) {
	t.Parallel()
	env, envID := connectorEnv(t)
	before := env.Calls("POST /qovery/environment/{environmentId}/helm")
	for _, tc := range []struct{ name, body, want string }{
		{"name", `name = "TS_DNS"`, "is not a valid Kubernetes name"},
		{"repo with tag", `image_repo = "tailscale/k8s-nameserver:stable"`, "carries a tag"},
		{"repo with digest", `image_repo = "tailscale/k8s-nameserver@sha256:abcd"`, "carries a digest"},
		{"tag", `image_tag = "-latest"`, "is not an image tag"},
		{"headless", `cluster_ip = "None"`, "makes the nameserver's Service headless"},
		{"cidr", `cluster_ip = "10.96.0.0/12"`, "is not an IP address"},
		{"replicas", `replicas = -1`, "at least 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{{
					Config:      dnsConfigConfig(envID, tc.body),
					PlanOnly:    true,
					ExpectError: acctest.ErrorRE(tc.want),
				}},
			})
		})
	}
	if after := env.Calls("POST /qovery/environment/{environmentId}/helm"); after != before {
		t.Errorf("%d Helm services created", after-before)
	}
}
