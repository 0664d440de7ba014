package manifest

// Where each qtail release publishes the tailnet-manifests chart
// (examples/charts/tailnet-manifests): as an archive attached to the GitHub
// release, listed in the Helm repository index served from the project's
// GitHub Pages. The chart's version follows the provider's; the examples and
// modules pin it to this version, and a test checks that it is the version
// in the chart's Chart.yaml.
const (
	// ManifestsChartVersion is the version of the tailnet-manifests chart
	// that this release of qtail publishes and its examples pin.
	ManifestsChartVersion = "0.1.0"
	// ManifestsChartRepositoryURL is the Helm repository that serves every
	// published version of the tailnet-manifests chart.
	ManifestsChartRepositoryURL = "https://qtail.github.io/terraform-provider-qtail"
)
