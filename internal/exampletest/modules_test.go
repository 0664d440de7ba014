package exampletest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// terraform test in each module: the mocked plan-time checks, and the
// applies against a sandbox of its own.
func TestModules_terraformTest(t *testing.T) {
	t.Parallel()
	for _, module := range []string{"tailnet", "region"} {
		t.Run(module, func(t *testing.T) {
			t.Parallel()
			ws := newWorkspace(t, newWorld(t, ""))
			m := ws.root("modules/" + module)
			m.get()
			out := m.must("test", "-no-color")
			if !strings.Contains(out, "Success!") || strings.Contains(out, " 0 passed") {
				t.Fatalf("terraform test in examples/modules/%s ran no test:\n%s", module, out)
			}
			t.Logf("terraform test in examples/modules/%s:\n%s", module, lastLine(out))
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// A typo in a module's input fails the plan with a message that names the
// key, before anything is read or created.
func TestModules_validationMessagesNameTheKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "")
	ws := newWorkspace(t, w)
	seed := w.Seed()
	env := seed.Regions["us-east-1"].EnvironmentID
	billing := seed.Regions["us-east-1"].Applications["billing-api"]
	for _, tc := range []struct {
		module string
		vars   map[string]any
		want   []string
	}{{
		module: "tailnet",
		vars: map[string]any{
			"organization_id":       seed.OrganizationID,
			"remove_allow_all":      true,
			"service_tags":          []string{"tag:k8s-billing", "k8s-web"},
			"helm_repository_names": map[string]string{"operator": "charts", "manifests": "Charts"},
			"policy_tests":          map[string]any{"carol-denied": map[string]string{"src": "carol@example.com"}},
		},
		want: []string{
			`service_tags: "k8s-web" is not a tag`,
			`helm_repository_names: operator and manifests are both "charts"`,
			`policy_tests: "carol-denied" needs at least one destination in accept or deny`,
		},
	}, {
		module: "region",
		vars: map[string]any{
			"region":         "us-east-1",
			"environment_id": env,
			"tailnet": map[string]any{
				"operator_helm_repository_id": "9c1f0a52-7a2b-4e3c-8d1e-2f6b5a4c3d21", "manifests_helm_repository_id": "7d2c9e41-0b6a-4f3e-9a55-1c8e2b4d6f90",
				"operator_tag": "tag:k8s-operator", "proxy_tag": "tag:k8s", "service_tags": []string{"tag:k8s-billing"},
			},
			"services": map[string]any{
				"billing-api": map[string]any{"application_id": billing, "tags": []string{"tag:k8s-biling"}},
				"metrics":     map[string]any{"hostname": "metrics"},
				"web":         map[string]any{"application_id": billing, "access": map[string]any{"all": map[string]any{"src": []string{"*"}}}},
			},
			"connector":       map[string]any{"subnet_routes": []string{"10.1.2.3/16"}},
			"egress_services": map[string]any{"db": map[string]string{"tailnet_ip": "100.101.102.103", "tailnet_fqdn": "db.tail1234.ts.net"}},
		},
		want: []string{
			`services["metrics"] needs exactly one of application_id and container_id`,
			`services["billing-api"].tags ("tag:k8s-biling") is not a tag the tailnet module owns (tag:k8s, tag:k8s-billing)`,
			`services["web"].access["all"] (policy test from "*"; set test_src`,
			`connector.subnet_routes: "10.1.2.3/16" is not a CIDR without host bits`,
			`egress_services["db"] needs exactly one of tailnet_fqdn and tailnet_ip`,
		},
	}} {
		t.Run(tc.module, func(t *testing.T) {
			m := ws.root("modules/" + tc.module)
			b, err := json.Marshal(tc.vars)
			if err != nil {
				t.Fatal(err)
			}
			vars := filepath.Join(m.dir, "typos.tfvars.json")
			if err := os.WriteFile(vars, b, 0o600); err != nil {
				t.Fatal(err)
			}
			out, code, err := m.run(t.Context(), "plan", "-input=false", "-no-color", "-var-file="+vars)
			if err != nil || code != 1 {
				t.Fatalf("plan with typos exited %d (%v), want 1:\n%s", code, err, out)
			}
			flat := strings.Join(strings.Fields(out), " ")
			for _, want := range tc.want {
				if !strings.Contains(flat, want) {
					t.Errorf("the plan does not say %q:\n%s", want, out)
				}
			}
		})
	}
	// Nothing was created.
	if n := len(w.Qovery.HelmRepositories()); n != 0 {
		t.Errorf("%d Helm repositories were created by plans that failed", n)
	}
}

// One root with the region module for_each over both seeded regions (and
// the tailnet module) applies, then plans empty, then destroys.
func TestModules_regionForEachOverTwoRegions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "")
	ws := newWorkspace(t, w)
	r := ws.root("modules/region/tests/two-regions")
	r.get()
	before := deviceIDs(w)
	r.apply()
	var regions map[string]struct {
		Operator struct {
			Hostname string `json:"hostname"`
		} `json:"operator"`
		GrantNames []string `json:"grant_names"`
	}
	r.output("regions", &regions)
	for _, region := range regionRoots {
		got := regions[region]
		if got.Operator.Hostname != "tailscale-operator-"+region || !slices.Contains(got.GrantNames, region+"-billing-api-platform-ops") {
			t.Errorf("module.region[%q] has operator %q and grants %v", region, got.Operator.Hostname, got.GrantNames)
		}
		for _, hostname := range regionHostnames(region) {
			checkConnected(t, w, hostname)
		}
	}
	r.emptyPlan()
	r.destroy()
	if owned := fragmentKeys(currentPolicy(t, w)); len(owned) != 0 {
		t.Errorf("after destroy the policy file still holds qtail's fragments %v", owned)
	}
	checkTornDown(t, w, before)
}
