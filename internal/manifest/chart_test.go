package manifest_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

// The labels the tailnet-manifests chart adds to every object.
const (
	labelManagedBy = "app.kubernetes.io/managed-by"
	labelChart     = "helm.sh/chart"
)

// helmBinary returns the Helm CLI to render the chart with: QTAIL_HELM when
// set (make test sets it to the pinned bin/helm), else the pinned bin/helm
// of the repository, else helm on PATH. Without any the test fails: the
// chart's templates are part of the product.
func helmBinary(t *testing.T) string {
	t.Helper()
	p := os.Getenv("QTAIL_HELM")
	if p == "" {
		_, file, _, _ := runtime.Caller(0)
		pinned := filepath.Join(filepath.Dir(file), "..", "..", "bin", "helm")
		if _, err := os.Stat(pinned); err == nil {
			p = pinned
		} else if onPath, err := exec.LookPath("helm"); err == nil {
			p = onPath
		} else {
			t.Fatal("no Helm CLI to render the tailnet-manifests chart: run `make test` (it installs the pinned Helm into bin/), " +
				"or set QTAIL_HELM to a helm binary")
		}
	}
	out, err := exec.CommandContext(t.Context(), p, "version", "--short").CombinedOutput()
	if err != nil {
		t.Fatalf("the Helm CLI %s does not run: %v\n%s", p, err, out)
	}
	return p
}

// chartDir is the tailnet-manifests chart, found from this file's location.
func chartDir(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test file")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "examples", "charts", "tailnet-manifests")
	if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
		t.Fatalf("the tailnet-manifests chart is missing: %v", err)
	}
	return dir
}

// chartLabel is the helm.sh/chart label the chart should add: NAME-VERSION
// from its Chart.yaml.
func chartLabel(t *testing.T, dir string) string {
	t.Helper()
	name, version := chartNameVersion(t, dir)
	return name + "-" + strings.ReplaceAll(version, "+", "_")
}

// chartNameVersion reads the name and the version of the chart in dir from
// its Chart.yaml.
func chartNameVersion(t *testing.T, dir string) (name, version string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Name    string `yaml:"name"`
		Version string `yaml:"version"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("Chart.yaml: %v", err)
	}
	if c.Name != "tailnet-manifests" || c.Version == "" {
		t.Fatalf("Chart.yaml names %q version %q", c.Name, c.Version)
	}
	return c.Name, c.Version
}

// The version qtail publishes and pins is the chart's own: a release that
// bumps one without the other would make every example's pin point at a
// chart that was never published.
func TestManifestsChartVersion_isChartYAMLVersion(t *testing.T) {
	_, version := chartNameVersion(t, chartDir(t))
	if version != manifest.ManifestsChartVersion {
		t.Errorf("examples/charts/tailnet-manifests/Chart.yaml has version %s, manifest.ManifestsChartVersion is %s: "+
			"set both to the version being released", version, manifest.ManifestsChartVersion)
	}
}

// helmTemplate runs helm template on the chart with values as its values
// file and returns its standard output and standard error.
func helmTemplate(t *testing.T, helm, dir, values string) (stdout, stderr string, err error) {
	t.Helper()
	tmp := t.TempDir()
	valuesFile := filepath.Join(tmp, manifest.ManifestsFileName)
	if err := os.WriteFile(valuesFile, []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), helm, "template", "qtail-test", dir, "--namespace", "qtail-ns", "-f", valuesFile)
	// Keep Helm's configuration, cache and data out of the home directory.
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(tmp, "config"),
		"HELM_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"HELM_DATA_HOME="+filepath.Join(tmp, "data"),
	)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// decodeAll decodes every YAML document of s, leaving out empty ones.
func decodeAll(t *testing.T, s string) []map[string]any {
	t.Helper()
	var docs []map[string]any
	dec := yaml.NewDecoder(strings.NewReader(s))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("helm template printed invalid YAML: %v\n%s", err, s)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
}

// inputManifests are the entries of the manifests list of a values file.
func inputManifests(t *testing.T, values string) []map[string]any {
	t.Helper()
	var v struct {
		Manifests []map[string]any `yaml:"manifests"`
	}
	if err := yaml.Unmarshal([]byte(values), &v); err != nil {
		t.Fatalf("values: %v\n%s", err, values)
	}
	return v.Manifests
}

// metadata is the metadata of an object, nil when it has none.
func metadata(o map[string]any) map[string]any {
	m, _ := o["metadata"].(map[string]any)
	return m
}

// objectKey names an object by kind and name.
func objectKey(o map[string]any) string {
	return fmt.Sprintf("%v/%v", o["kind"], metadata(o)["name"])
}

// withoutChartLabels returns a copy of the object without the chart's
// labels, and the labels the object had. When no other label is left,
// metadata.labels goes too unless keepEmpty.
func withoutChartLabels(o map[string]any, keepEmpty bool) (stripped, labels map[string]any) {
	stripped = maps.Clone(o)
	meta := maps.Clone(metadata(o))
	if meta == nil {
		return stripped, nil
	}
	stripped["metadata"] = meta
	labels, _ = meta["labels"].(map[string]any)
	if labels == nil {
		return stripped, nil
	}
	rest := maps.Clone(labels)
	delete(rest, labelManagedBy)
	delete(rest, labelChart)
	if len(rest) == 0 && !keepEmpty {
		delete(meta, "labels")
	} else {
		meta["labels"] = rest
	}
	return stripped, labels
}

// TestChartTemplate renders qtail's values through the chart with helm
// template and checks that every object comes out as written, plus the
// chart's labels.
func TestChartTemplate(t *testing.T) {
	helm := helmBinary(t)
	dir := chartDir(t)
	wantChart := chartLabel(t, dir)
	mustRender := func(values string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return values
	}

	homeLab := manifest.Connector{
		Name:         "homelab",
		Hostname:     "homelab",
		ExitNode:     true,
		SubnetRoutes: []string{"10.244.0.0/16", "10.10.0.0/16", "10.50.0.0/24", "10.101.0.0/16", "192.168.0.0/24", "10.20.0.0/16"},
	}
	for _, tc := range []struct {
		name   string
		values string
	}{
		{"connector home lab", mustRender(manifest.RenderConnector(homeLab))},
		{"connector replicas", mustRender(manifest.RenderConnector(manifest.Connector{
			Name: "office", HostnamePrefix: "office", Replicas: new(int64(2)), SubnetRoutes: []string{"10.0.0.0/8"},
			Tags: []string{"tag:k8s", "tag:office"}, ProxyClass: "prod",
		}))},
		{"proxy group", mustRender(manifest.RenderProxyGroup(manifest.ProxyGroup{
			Name: "egress", Type: manifest.ProxyGroupEgress, Replicas: new(int64(3)), HostnamePrefix: "out", Tags: []string{"tag:k8s"},
		}))},
		{"egress service fqdn", mustRender(manifest.RenderEgressService(manifest.EgressService{
			Name: "db", TailnetFQDN: "db.example-tailnet.ts.net", Ports: []manifest.ServicePort{{Port: 5432, Protocol: "TCP"}},
		}))},
		{"egress service ip", mustRender(manifest.RenderEgressService(manifest.EgressService{
			Name: "nas", TailnetIP: "100.64.1.2", ProxyGroup: "egress",
			Ports: []manifest.ServicePort{{Port: 445, Protocol: "TCP"}, {Port: 53, Protocol: "UDP"}},
		}))},
		{"empty list", "manifests: []\n"},
		{"no manifests key", "# nothing\n"},
		{"labels kept and several objects", `manifests:
  - apiVersion: tailscale.com/v1alpha1
    kind: Connector
    metadata:
      name: homelab
      labels:
        team: network
        app.kubernetes.io/managed-by: someone-else
      annotations:
        note: "keep me"
    spec:
      exitNode: true
  - apiVersion: tailscale.com/v1alpha1
    kind: ProxyGroup
    metadata:
      name: ingress
      labels: {}
    spec:
      type: ingress
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: settings
    data:
      replicas: "3"
      enabled: "true"
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := helmTemplate(t, helm, dir, tc.values)
			if err != nil {
				t.Fatalf("helm template: %v\n%s\nvalues:\n%s", err, stderr, tc.values)
			}
			in := inputManifests(t, tc.values)
			out := decodeAll(t, stdout)
			if len(out) != len(in) {
				t.Fatalf("helm template printed %d objects for %d manifests:\n%s", len(out), len(in), stdout)
			}
			// Helm sorts objects by kind; match them by kind and name.
			byKey := make(map[string]map[string]any, len(out))
			for _, o := range out {
				byKey[objectKey(o)] = o
			}
			for _, want := range in {
				key := objectKey(want)
				got, ok := byKey[key]
				if !ok {
					t.Errorf("%s is missing from the output:\n%s", key, stdout)
					continue
				}
				_, hadLabels := metadata(want)["labels"]
				gotStripped, gotLabels := withoutChartLabels(got, hadLabels)
				if v := gotLabels[labelManagedBy]; v != "Helm" {
					t.Errorf("%s: label %s = %v, want Helm", key, labelManagedBy, v)
				}
				if v := gotLabels[labelChart]; v != wantChart {
					t.Errorf("%s: label %s = %v, want %s", key, labelChart, v, wantChart)
				}
				// An entry's own value for a chart label is replaced, and
				// checked above.
				wantStripped, _ := withoutChartLabels(want, hadLabels)
				if !reflect.DeepEqual(gotStripped, wantStripped) {
					t.Errorf("%s changed on its way through the chart:\ngot  %#v\nwant %#v", key, gotStripped, wantStripped)
				}
			}
		})
	}
}

// TestChartRejects checks that the chart refuses entries it cannot apply,
// naming the problem.
func TestChartRejects(t *testing.T) {
	helm := helmBinary(t)
	dir := chartDir(t)
	for _, tc := range []struct {
		name, values, want string
	}{
		{
			name: "no kind",
			values: `manifests:
  - apiVersion: tailscale.com/v1alpha1
    metadata: {name: homelab}
    spec: {exitNode: true}
`,
			want: "tailnet-manifests: manifests[0] has no kind",
		},
		{
			name: "no apiVersion",
			values: `manifests:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: ok}
  - kind: Connector
    metadata: {name: homelab}
`,
			want: "tailnet-manifests: manifests[1] has no apiVersion",
		},
		{
			name: "no metadata",
			values: `manifests:
  - apiVersion: tailscale.com/v1alpha1
    kind: Connector
`,
			want: "tailnet-manifests: manifests[0] (kind Connector) has no metadata.name",
		},
		{
			name: "no name",
			values: `manifests:
  - apiVersion: tailscale.com/v1alpha1
    kind: Connector
    metadata: {labels: {team: network}}
`,
			want: "tailnet-manifests: manifests[0] (kind Connector) has no metadata.name",
		},
		{
			name:   "not an object",
			values: "manifests:\n  - homelab\n",
			want:   "tailnet-manifests: manifests[0] is not an object",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := helmTemplate(t, helm, dir, tc.values)
			if err == nil {
				t.Fatalf("helm template succeeded:\n%s", stdout)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("helm template failed with %q, want a message containing %q", stderr, tc.want)
			}
		})
	}
}
