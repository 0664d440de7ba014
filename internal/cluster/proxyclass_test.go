package cluster

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// rawValues is a values override of raw files.
func rawValues(files ...string) qovery.HelmValuesOverride {
	raw := &qovery.HelmRawValues{}
	for i, f := range files {
		raw.Values = append(raw.Values, qovery.HelmRawValuesFile{Name: string(rune('a'+i)) + ".yaml", Content: f})
	}
	return qovery.HelmValuesOverride{File: &qovery.HelmValuesFile{Raw: raw}}
}

// gitValues is a values override read from Git.
func gitValues() qovery.HelmValuesOverride {
	return qovery.HelmValuesOverride{File: &qovery.HelmValuesFile{Git: &qovery.HelmGitValues{
		GitRepository: qovery.GitRepository{Provider: "GITHUB", URL: "https://github.com/acme/values.git", Branch: "main"}, Paths: []string{"/values.yaml"}}}}
}

// A Helm service's rendering is readable when its raw values files are
// all there is and one of them has a manifests list.
func TestManifestsValues(t *testing.T) {
	t.Parallel()
	withSet := rawValues("manifests: []")
	withSet.Set = [][2]string{{"manifests[0].kind", "ProxyClass"}}
	withJSON := rawValues("manifests: []")
	withJSON.SetJSON = [][2]string{{"manifests", "[]"}}
	withString := rawValues("manifests: []")
	withString.SetString = [][2]string{{"manifests[0].metadata.name", "small"}}
	for _, tc := range []struct {
		name     string
		values   qovery.HelmValuesOverride
		files    []string
		readable bool
	}{
		{"no values", qovery.HelmValuesOverride{}, nil, false},
		{"values from Git", gitValues(), nil, false},
		{"--set", withSet, nil, false},
		{"--set-json", withJSON, nil, false},
		{"--set-string", withString, nil, false},
		{"no manifests list", rawValues("replicas: 2"), []string{"replicas: 2"}, false},
		{"a manifests list in the second file", rawValues("a: [", "manifests: []"), []string{"a: [", "manifests: []"}, true},
	} {
		files, readable := manifestsValues(&qovery.Helm{ValuesOverride: tc.values})
		if !slices.Equal(files, tc.files) || readable != tc.readable {
			t.Errorf("%s: manifestsValues = %q, %v; want %q, %v", tc.name, files, readable, tc.files, tc.readable)
		}
	}
}

// What the services of a cluster render: the operator's values are not
// looked at, the first service that renders a name wins, and those qtail
// cannot read are set apart.
func TestClusterRendered(t *testing.T) {
	t.Parallel()
	operator := qovery.Helm{ID: "op", Source: qovery.HelmSource{Repository: &qovery.HelmSourceRepository{ChartName: OperatorChart}},
		ValuesOverride: rawValues(proxyGroupValues("ingress", manifest.ProxyGroupEgress))}
	helms := []qovery.Helm{
		operator,
		{ID: "a", Name: "first", ValuesOverride: rawValues(proxyGroupValues("ingress", manifest.ProxyGroupIngress))},
		{ID: "b", Name: "second", ValuesOverride: rawValues(proxyGroupValues("ingress", manifest.ProxyGroupEgress) + proxyGroupValues("egress", manifest.ProxyGroupEgress)[len("manifests:\n"):])},
		{ID: "c", Name: "from Git", ValuesOverride: gitValues()},
	}
	found, opaque := clusterProxyGroups(helms)
	if len(found) != 2 || found["ingress"] != manifest.ProxyGroupIngress || found["egress"] != manifest.ProxyGroupEgress {
		t.Errorf("ProxyGroups %v, want the first service's ingress and the second's egress", found)
	}
	if len(opaque) != 1 || opaque[0].ID != "c" {
		t.Errorf("opaque %v, want the service with values from Git", opaque)
	}
	if got := helmNames(opaque); got != `"from Git" (c)` {
		t.Errorf("helmNames = %s", got)
	}
	classes, _ := clusterProxyClasses([]qovery.Helm{{ID: "d", Name: "classes", ValuesOverride: rawValues(proxyClassValues("small", "      metrics:\n        enable: true\n"))}})
	if pc, ok := classes["small"]; !ok || !pc.MetricsEnabled || pc.helm.ID != "d" {
		t.Errorf("ProxyClasses %+v", classes)
	}
}

// proxyClassWorld is a cluster whose Helm services render a ProxyClass
// small that can be Ready, one broken that cannot, and one watched that
// asks for a ServiceMonitor.
func proxyClassWorld(t *testing.T) *world {
	w := newWorld(t)
	w.manifests(w.env, "small", proxyClassValues("small", "      statefulSet:\n        resources: {}\n"))
	w.manifests(w.other, "broken", proxyClassValues("broken", "      metrics:\n        serviceMonitor:\n          enable: true\n"))
	w.manifests(w.env, "watched", proxyClassValues("watched", "      metrics:\n        enable: true\n        serviceMonitor:\n          enable: true\n"))
	// Another cluster's ProxyClasses do not count.
	w.manifests(w.otherEnv, "elsewhere", proxyClassValues("elsewhere", "      {}\n"))
	return w
}

func (w *world) proxyClassCheck(check ProxyClassCheck) diag.Diagnostics {
	var diags diag.Diagnostics
	CheckProxyClass(w.ctx, conn.New("test", conn.Options{}), w.lookup(), check, &diags)
	return diags
}

func TestCheckProxyClass(t *testing.T) {
	t.Parallel()
	at := path.Root("proxy_class")
	check := func(name string) ProxyClassCheck {
		return ProxyClassCheck{Name: name, At: at, Object: "the Connector homelab"}
	}
	w := proxyClassWorld(t)
	for _, tc := range []struct {
		name     string
		check    ProxyClassCheck
		severity diag.Severity
		summary  string
		says     []string
	}{
		{"ready", check("small"), 0, "", nil},
		{"cannot be Ready", check("broken"), diag.SeverityError, "ProxyClass Cannot Be Ready",
			[]string{`The ProxyClass broken (named in proxy_class) is rendered by the Helm service "broken"`, "the CRD refuses it",
				"no proxy for the Connector homelab"}},
		{"ServiceMonitor", check("watched"), diag.SeverityWarning, "ProxyClass Readiness Not Checked",
			[]string{`The ProxyClass watched (Helm service "watched") asks for a Prometheus ServiceMonitor`}},
		{"missing", check("elsewhere"), diag.SeverityError, "ProxyClass Not on the Cluster",
			[]string{"No Helm service of cluster " + w.cluster + " renders the ProxyClass elsewhere (named in proxy_class); qtail read the values of all 3 of them",
				"apiVersion tailscale.com/v1alpha1"}},
		{"none named", check(""), 0, "", nil},
		{"the operator's default, none", ProxyClassCheck{At: at, OperatorDefault: true, Object: "the exposed Service"}, 0, "", nil},
	} {
		d := w.proxyClassCheck(tc.check)
		if tc.summary == "" {
			if len(d) != 0 {
				t.Errorf("%s: %v, want nothing", tc.name, d)
			}
			continue
		}
		if len(d) != 1 || d[0].Severity() != tc.severity || d[0].Summary() != tc.summary || !isOn(d[0], at) {
			t.Errorf("%s: %v, want %q on proxy_class", tc.name, d, tc.summary)
			continue
		}
		for _, want := range tc.says {
			if !strings.Contains(d[0].Detail(), want) {
				t.Errorf("%s: %q does not say %q", tc.name, d[0].Detail(), want)
			}
		}
	}

	t.Run("the operator's default", func(t *testing.T) {
		t.Parallel()
		w := proxyClassWorld(t)
		w.operator(w.env, w.operatorValues(manifest.OperatorValues{}, map[string]any{"proxyConfig": map[string]any{"defaultProxyClass": "gone"}}))
		d := w.proxyClassCheck(ProxyClassCheck{At: at, OperatorDefault: true, Object: "the exposed Service"})
		if len(d) != 1 || d[0].Summary() != "ProxyClass Not on the Cluster" ||
			!strings.Contains(d[0].Detail(), "the ProxyClass gone (the operator's default, proxyConfig.defaultProxyClass in its extra_values)") ||
			!strings.Contains(d[0].Detail(), "all 4 of them") {
			t.Errorf("%v, want the operator's default refused", d)
		}
	})
	t.Run("a service qtail cannot read", func(t *testing.T) {
		t.Parallel()
		w := proxyClassWorld(t)
		git := w.helm(w.env, "from-git", gitValues())
		d := w.proxyClassCheck(check("elsewhere"))
		if len(d) != 1 || d[0].Severity() != diag.SeverityWarning || d[0].Summary() != "ProxyClass Not Checked" ||
			!strings.Contains(d[0].Detail(), `qtail cannot tell what "from-git" (`+git+`) render`) {
			t.Errorf("%v, want a warning that names the service", d)
		}
		if why := ProxyClassProblem(w.ctx, w.lookup(), "elsewhere", false); why != "" {
			t.Errorf("ProxyClassProblem = %q, want nothing: qtail cannot tell", why)
		}
	})
	t.Run("the services cannot be listed", func(t *testing.T) {
		t.Parallel()
		w := proxyClassWorld(t)
		w.Qovery.Faults().Add(faults.Rule{Route: "GET /project/{projectId}/environment", Status: http.StatusInternalServerError, Count: 2})
		d := w.proxyClassCheck(check("small"))
		if len(d) != 1 || d.HasError() || d[0].Summary() != "ProxyClass Not Checked" || !strings.Contains(d[0].Detail(), "could not list the Helm services of cluster "+w.cluster) {
			t.Errorf("%v, want a warning", d)
		}
		if why := ProxyClassProblem(w.ctx, w.lookup(), "broken", false); why != "" {
			t.Errorf("ProxyClassProblem = %q, want nothing when the services cannot be listed", why)
		}
	})
}

func TestProxyClassProblem(t *testing.T) {
	t.Parallel()
	w := proxyClassWorld(t)
	w.operator(w.env, w.operatorValues(manifest.OperatorValues{}, map[string]any{"proxyConfig": map[string]any{"defaultProxyClass": "broken"}}))
	for _, tc := range []struct {
		name            string
		operatorDefault bool
		want            string
	}{
		{"small", false, ""},
		{"watched", false, ""},
		{"broken", false, "the ProxyClass broken cannot be Ready: spec.metrics.serviceMonitor.enable is true but spec.metrics.enable is not"},
		{"elsewhere", false, "no Helm service of cluster " + w.cluster + " renders the ProxyClass elsewhere, so the operator waits for it"},
		{"", false, ""},
		{"", true, "the ProxyClass broken cannot be Ready"},
	} {
		if got := ProxyClassProblem(w.ctx, w.lookup(), tc.name, tc.operatorDefault); !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("ProxyClassProblem(%q, %v) = %q, want %q", tc.name, tc.operatorDefault, got, tc.want)
		}
	}
}
