package manifest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// OperatorChartSeries is what qtail has checked of one minor series of the
// tailscale-operator chart (the chart's version is the Tailscale release's,
// such as 1.102.4): the values qtail renders, and the CRD shapes of the
// objects it renders, were read against the chart, templates and CRDs of
// the release Checked. A chart fixture reproducing what qtail depends on
// lives under testdata/operator-chart/Fixture; the tests render qtail's
// values through it with the pinned Helm.
type OperatorChartSeries struct {
	// Series is MAJOR.MINOR, such as "1.102".
	Series string
	// Checked is the release whose chart and CRDs were read.
	Checked string
	// Fixture names the chart fixture under testdata/operator-chart.
	Fixture string
	// WorkloadIdentity: the chart reads oauth.audience and then runs the
	// operator with workload identity federation (a projected service
	// account token exchanged for an API token), mounting no client
	// secret.
	WorkloadIdentity bool
	// ConnectorReplicas: the Connector CRD has spec.replicas and
	// spec.hostnamePrefix.
	ConnectorReplicas bool
	// KubeAPIServerProxyGroup: ProxyGroup spec.type accepts
	// kube-apiserver, with spec.kubeAPIServer.mode (auth or noauth) and
	// spec.kubeAPIServer.hostname.
	KubeAPIServerProxyGroup bool
	// Kinds are the tailscale.com/v1alpha1 kinds the chart's CRDs define.
	Kinds []string
}

// tailscale.com kinds by the release that introduced their CRD.
var (
	kindsSince178 = []string{"Connector", "DNSConfig", "ProxyClass", "ProxyGroup", "Recorder"}
	kindsSince196 = append(append([]string(nil), kindsSince178...), "ProxyGroupPolicy", "Tailnet")
	kindsSince102 = append(append([]string(nil), kindsSince196...), "PeerRelay")
)

// operatorChartSeries is the version table, oldest first. Facts common to
// every series in it: the chart renders operatorConfig.hostname unquoted
// into OPERATOR_HOSTNAME (see CheckChartHostname), joins the
// operatorConfig.defaultTags list into OPERATOR_INITIAL_TAGS, passes
// proxyConfig.defaultTags as one string into PROXY_TAGS, quotes
// apiServerProxyConfig.mode, and creates the operator-oauth Secret from
// oauth.clientId and oauth.clientSecret unless oauthSecretVolume (or, from
// 1.92, oauth.audience) replaces it. The Connector and ProxyGroup CRDs
// give tags no default: the operator applies PROXY_TAGS.
var operatorChartSeries = []OperatorChartSeries{
	{Series: "1.78", Checked: "1.78.3", Fixture: "1.78", Kinds: kindsSince178},
	{Series: "1.80", Checked: "1.80.3", Fixture: "1.78", Kinds: kindsSince178},
	{Series: "1.82", Checked: "1.82.5", Fixture: "1.78", Kinds: kindsSince178},
	{Series: "1.84", Checked: "1.84.3", Fixture: "1.78", Kinds: kindsSince178},
	{Series: "1.86", Checked: "1.86.5", Fixture: "1.78", Kinds: kindsSince178, KubeAPIServerProxyGroup: true},
	{Series: "1.88", Checked: "1.88.4", Fixture: "1.78", Kinds: kindsSince178, KubeAPIServerProxyGroup: true, ConnectorReplicas: true},
	{Series: "1.90", Checked: "1.90.9", Fixture: "1.78", Kinds: kindsSince178, KubeAPIServerProxyGroup: true, ConnectorReplicas: true},
	{Series: "1.92", Checked: "1.92.5", Fixture: "1.92", Kinds: kindsSince178, KubeAPIServerProxyGroup: true, ConnectorReplicas: true, WorkloadIdentity: true},
	{Series: "1.94", Checked: "1.94.2", Fixture: "1.92", Kinds: kindsSince178, KubeAPIServerProxyGroup: true, ConnectorReplicas: true, WorkloadIdentity: true},
	{Series: "1.96", Checked: "1.96.5", Fixture: "1.92", Kinds: kindsSince196, KubeAPIServerProxyGroup: true, ConnectorReplicas: true, WorkloadIdentity: true},
	{Series: "1.98", Checked: "1.98.10", Fixture: "1.92", Kinds: kindsSince196, KubeAPIServerProxyGroup: true, ConnectorReplicas: true, WorkloadIdentity: true},
	{Series: "1.100", Checked: "1.100.0", Fixture: "1.92", Kinds: kindsSince196, KubeAPIServerProxyGroup: true, ConnectorReplicas: true, WorkloadIdentity: true},
	{Series: "1.102", Checked: "1.102.3", Fixture: "1.92", Kinds: kindsSince102, KubeAPIServerProxyGroup: true, ConnectorReplicas: true, WorkloadIdentity: true},
}

// OperatorChartVersions returns the version table, oldest first.
func OperatorChartVersions() []OperatorChartSeries {
	out := make([]OperatorChartSeries, len(operatorChartSeries))
	for i, s := range operatorChartSeries {
		s.Kinds = append([]string(nil), s.Kinds...)
		out[i] = s
	}
	return out
}

// chartVersionRE reads MAJOR.MINOR of a chart version such as 1.102.4 or
// 1.103.0-pre.
var chartVersionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)\.\d+(?:[-+].*)?$`)

// LookupOperatorChart returns the checked series of a chart version, and
// false for a version outside the table (older, newer, or not MAJOR.MINOR.PATCH):
// then qtail cannot tell which values and kinds the chart supports.
func LookupOperatorChart(version string) (OperatorChartSeries, bool) {
	m := chartVersionRE.FindStringSubmatch(strings.TrimSpace(version))
	if m == nil {
		return OperatorChartSeries{}, false
	}
	series := m[1] + "." + m[2]
	for _, s := range OperatorChartVersions() {
		if s.Series == series {
			return s, true
		}
	}
	return OperatorChartSeries{}, false
}

// SupportsWorkloadIdentity reports whether the chart version reads
// oauth.audience; known is false when the version is outside the table.
func SupportsWorkloadIdentity(version string) (supported, known bool) {
	s, ok := LookupOperatorChart(version)
	return s.WorkloadIdentity, ok
}

// WorkloadIdentitySince returns the oldest series of the version table
// whose chart reads oauth.audience; every later series reads it too.
func WorkloadIdentitySince() string {
	for _, s := range operatorChartSeries {
		if s.WorkloadIdentity {
			return s.Series
		}
	}
	return ""
}

// yaml11Float is YAML 1.1's float syntax, as the YAML library behind
// Kubernetes' manifest decoding resolves plain scalars.
var yaml11Float = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// yaml11Words are the plain scalars YAML 1.1 reads as booleans or null.
var yaml11Words = map[string]string{}

func init() {
	for _, w := range []string{"y", "yes", "true", "on", "n", "no", "false", "off"} {
		for _, v := range []string{w, strings.ToUpper(w[:1]) + w[1:], strings.ToUpper(w)} {
			yaml11Words[v] = "boolean"
		}
	}
	for _, v := range []string{"null", "Null", "NULL", "~", ""} {
		yaml11Words[v] = "null"
	}
}

// unquotedYAMLType returns the type a value gets when a template writes it
// unquoted into a manifest ("value: {{ . }}") and Kubernetes' YAML decoding
// (YAML 1.1) reads it back: "string", "integer", "number", "boolean" or
// "null".
func unquotedYAMLType(s string) string {
	if t, ok := yaml11Words[s]; ok {
		return t
	}
	if _, err := strconv.ParseInt(s, 0, 64); err == nil {
		return "integer"
	}
	if _, err := strconv.ParseUint(s, 0, 64); err == nil {
		return "integer"
	}
	if yaml11Float.MatchString(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil && f == float64(int64(f)) {
			return "integer"
		}
		return "number"
	}
	return "string"
}

// CheckChartHostname checks that the operator chart keeps a hostname a
// string. The chart writes operatorConfig.hostname unquoted into the
// Deployment (value: {{ .Values.operatorConfig.hostname }}), so a hostname
// that YAML reads as a number (12345, 0x1f, 1e5) or a boolean (yes, off)
// makes the API server refuse the Deployment, and null leaves the
// operator with its default hostname tailscale-operator. Every chart in
// the version table does this.
func CheckChartHostname(hostname string) error {
	switch t := unquotedYAMLType(hostname); t {
	case "string":
		return nil
	case "null":
		return fmt.Errorf("the operator chart writes the hostname unquoted into its Deployment, where %q reads as null: the operator would "+
			"fall back to the hostname tailscale-operator. Choose a hostname with other letters, such as tailscale-operator-%s", hostname, strings.ToLower(hostname))
	default:
		return fmt.Errorf("the operator chart writes the hostname unquoted into its Deployment, where %q reads as a YAML %s, not a "+
			"string: the Kubernetes API server would refuse the Deployment. Add a letter, such as operator-%s", hostname, t, hostname)
	}
}
