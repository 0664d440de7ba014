package cluster

import (
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

func TestYAMLEqual(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		a, b string
		want bool
	}{
		{"same text", "a: 1\n", "a: 1\n", true},
		{"keys in another order, other layout", "a: 1\nb: [x, y]\n", "b:\n  - x\n  - y\na: 1\n", true},
		{"comments and quoting", "# qtail\na: \"1\"\n", "a: '1'\n", true},
		{"a string is not a number", "a: \"1\"\n", "a: 1\n", false},
		{"a list in another order", "b: [x, y]\n", "b: [y, x]\n", false},
		{"one more key", "a: 1\n", "a: 1\nb: 2\n", false},
		{"both empty", "", "", true},
		{"first not YAML", "a: [\n", "a: [\n", false},
		{"second not YAML", "a: 1\n", "a: {\n", false},
	} {
		if got := YAMLEqual(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: YAMLEqual(%q, %q) = %v, want %v", tc.name, tc.a, tc.b, got, tc.want)
		}
	}
}

func TestManifestsFile(t *testing.T) {
	t.Parallel()
	raw := func(files ...qovery.HelmRawValuesFile) *qovery.Helm {
		return &qovery.Helm{ValuesOverride: qovery.HelmValuesOverride{File: &qovery.HelmValuesFile{Raw: &qovery.HelmRawValues{Values: files}}}}
	}
	for _, tc := range []struct {
		name    string
		helm    *qovery.Helm
		content string
		ok      bool
	}{
		{"no values file", &qovery.Helm{}, "", false},
		{"values from Git", &qovery.Helm{ValuesOverride: qovery.HelmValuesOverride{File: &qovery.HelmValuesFile{Git: &qovery.HelmGitValues{}}}}, "", false},
		{"only another file", raw(qovery.HelmRawValuesFile{Name: "other.yaml", Content: "a: 1"}), "", false},
		{"qtail's file among others", raw(qovery.HelmRawValuesFile{Name: "other.yaml", Content: "a: 1"},
			qovery.HelmRawValuesFile{Name: manifest.ManifestsFileName, Content: "manifests: []"}), "manifests: []", true},
		{"qtail's file, empty", raw(qovery.HelmRawValuesFile{Name: manifest.ManifestsFileName}), "", true},
	} {
		content, ok := ManifestsFile(tc.helm)
		if content != tc.content || ok != tc.ok {
			t.Errorf("%s: ManifestsFile = %q, %v; want %q, %v", tc.name, content, ok, tc.content, tc.ok)
		}
	}
}
