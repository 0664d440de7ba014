package cluster

import (
	"reflect"

	"go.yaml.in/yaml/v3"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// ManifestsChart is the chart that applies the list `manifests` of its
// values, shipped in examples/charts/tailnet-manifests: the default chart
// of the manifest services.
const ManifestsChart = "tailnet-manifests"

// YAMLEqual reports whether two YAML documents hold the same data.
func YAMLEqual(a, b string) bool {
	var va, vb any
	if err := yaml.Unmarshal([]byte(a), &va); err != nil {
		return false
	}
	if err := yaml.Unmarshal([]byte(b), &vb); err != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// ManifestsFile returns the content of qtail's values file
// (manifest.ManifestsFileName) of a Helm service.
func ManifestsFile(h *qovery.Helm) (string, bool) {
	f := h.ValuesOverride.File
	if f == nil || f.Raw == nil {
		return "", false
	}
	for _, v := range f.Raw.Values {
		if v.Name == manifest.ManifestsFileName {
			return v.Content, true
		}
	}
	return "", false
}
