package manifest

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestRenderAndReadOperatorValues(t *testing.T) {
	extra, err := ParseExtraValues("operatorConfig:\n  logging: debug\nproxyConfig:\n  firewallMode: nftables\ningressClass:\n  enabled: false\n")
	if err != nil {
		t.Fatal(err)
	}
	v := OperatorValues{Hostname: "tailscale-operator-us-east-1", DefaultTags: []string{"tag:k8s-operator"}, ProxyDefaultTags: []string{"tag:k8s", "tag:prod"}, APIServerProxy: "false"}
	doc, err := RenderOperatorValues(v, extra)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"clientId: qovery.env.TS_OAUTH_CLIENT_ID",
		"clientSecret: qovery.env.TS_OAUTH_CLIENT_SECRET",
		"hostname: tailscale-operator-us-east-1",
		"defaultTags: tag:k8s,tag:prod",
		"mode: \"false\"",
		"logging: debug",
		"firewallMode: nftables",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("rendered values lack %q:\n%s", want, doc)
		}
	}
	again, err := RenderOperatorValues(v, extra)
	if err != nil || again != doc {
		t.Fatalf("rendering is not stable: %v\n%s\n---\n%s", err, doc, again)
	}
	if !OAuthReferences(doc) {
		t.Error("OAuthReferences = false on a rendered file")
	}
	gotV, gotExtra, err := ReadOperatorValues(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotV, v) {
		t.Errorf("read values = %+v, want %+v", gotV, v)
	}
	a, _ := CanonicalYAML(gotExtra)
	b, _ := CanonicalYAML(extra)
	if a != b {
		t.Errorf("extra values did not survive the round trip:\n%s\n---\n%s", a, b)
	}
}

func TestParseExtraValuesRefusesOwnedKeys(t *testing.T) {
	for _, doc := range []string{
		"oauth:\n  clientSecret: plain\n",
		"operatorConfig:\n  hostname: other\n",
		"proxyConfig:\n  defaultTags: tag:x\n",
		"apiServerProxyConfig:\n  mode: \"true\"\n",
		"operatorConfig: notamap\n",
		"oauth:\n  audience: https://oidc.example.com\n",
		"oauthSecretVolume:\n  csi:\n    driver: secrets-store.csi.k8s.io\n",
	} {
		if _, err := ParseExtraValues(doc); err == nil {
			t.Errorf("ParseExtraValues(%q) accepted a key qtail owns", doc)
		}
	}
	if _, err := ParseExtraValues("a: [1, 2"); err == nil || !strings.Contains(err.Error(), "YAML") {
		t.Errorf("invalid YAML: err = %v", err)
	}
	if m, err := ParseExtraValues("  \n"); err != nil || len(m) != 0 {
		t.Errorf("blank document: %v %v", m, err)
	}
}

func TestOAuthReferencesDetectsHandEdit(t *testing.T) {
	if OAuthReferences("oauth:\n  clientId: abc\n  clientSecret: qovery.env.TS_OAUTH_CLIENT_SECRET\n") {
		t.Error("a literal client id was taken for the variable reference")
	}
}

func TestOwnedKeysSayWhatToSetInstead(t *testing.T) {
	for doc, want := range map[string][]string{
		"oauth:\n  audience: https://oidc.example.com\n":                       {"oauth.audience (for workload identity, set oauth_audience with oauth_client_id"},
		"oauthSecretVolume:\n  secret:\n    secretName: mine\n":                {"oauthSecretVolume (a volume of client credentials", "oauth_client_id"},
		"operatorConfig:\n  hostname: x\nproxyConfig:\n  defaultTags: tag:x\n": {"operatorConfig.hostname (set hostname)", "proxyConfig.defaultTags (set proxy_default_tags)"},
	} {
		_, err := ParseExtraValues(doc)
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("ParseExtraValues(%q) = %v, want it to say %q", doc, err, w)
			}
		}
	}
	paths := OwnedPaths()
	for _, p := range []string{"oauth.audience", "oauthSecretVolume"} {
		if !slices.Contains(paths, p) {
			t.Errorf("OwnedPaths() lacks %s: %v", p, paths)
		}
	}
	for _, d := range OwnedPathDetails() {
		if d.Instead == "" {
			t.Errorf("%s says nothing about what to set instead", d.Path)
		}
	}
}

func TestWorkloadIdentityValues(t *testing.T) {
	v := OperatorValues{Hostname: "op", DefaultTags: []string{"tag:k8s-operator"}, ProxyDefaultTags: []string{"tag:k8s"}, APIServerProxy: "false",
		OAuthAudience: "https://oidc.example.com/prod"}
	doc, err := RenderOperatorValues(v, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(doc, "clientSecret") || !strings.Contains(doc, "audience: https://oidc.example.com/prod") {
		t.Fatalf("workload identity values:\n%s", doc)
	}
	if !OAuthReferences(doc) {
		t.Error("OAuthReferences = false with workload identity")
	}
	back, extra, err := ReadOperatorValues(doc)
	if err != nil || !reflect.DeepEqual(back, v) || len(extra) != 0 {
		t.Errorf("read back %+v, extra %v, %v", back, extra, err)
	}
	// A client secret left beside an audience is a hand edit: the chart
	// would use the audience.
	edited := strings.Replace(doc, "  audience:", "  clientSecret: qovery.env.TS_OAUTH_CLIENT_SECRET\n  audience:", 1)
	if edited == doc || OAuthReferences(edited) {
		t.Error("OAuthReferences accepted a secret beside the audience")
	}
}

func TestOperatorDefaultProxyClass(t *testing.T) {
	if got := OperatorDefaultProxyClass("proxyConfig:\n  defaultTags: tag:k8s\n  defaultProxyClass: small\n"); got != "small" {
		t.Errorf("got %q", got)
	}
	for _, doc := range []string{"", "proxyConfig:\n  defaultTags: tag:k8s\n", "proxyConfig: [", "proxyConfig:\n  defaultProxyClass: 3\n"} {
		if got := OperatorDefaultProxyClass(doc); got != "" {
			t.Errorf("OperatorDefaultProxyClass(%q) = %q", doc, got)
		}
	}
}

func TestRenderedProxyClasses(t *testing.T) {
	first := `manifests:
  - apiVersion: tailscale.com/v1alpha1
    kind: ProxyClass
    metadata: {name: old}
    spec: {}
`
	second := `manifests:
  - apiVersion: tailscale.com/v1alpha1
    kind: ProxyClass
    metadata: {name: small}
    spec:
      statefulSet:
        pod:
          labels: {team: platform}
  - apiVersion: tailscale.com/v1alpha1
    kind: ProxyClass
    metadata: {name: monitored}
    spec:
      metrics:
        enable: true
        serviceMonitor: {enable: true}
  - apiVersion: tailscale.com/v1alpha1
    kind: ProxyClass
    metadata: {name: broken}
    spec:
      metrics:
        enable: false
        serviceMonitor: {enable: true}
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: small}
  - apiVersion: example.com/v1
    kind: ProxyClass
    metadata: {name: foreign}
`
	// The later file's list replaces the earlier one, as Helm merges.
	got := RenderedProxyClasses(first, "not: [yaml", second)
	want := []ProxyClass{{Name: "small"}, {Name: "monitored", MetricsEnabled: true, ServiceMonitor: true}, {Name: "broken", ServiceMonitor: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("RenderedProxyClasses = %+v, want %+v", got, want)
	}
	if got[0].Problem() != "" || got[1].Problem() != "" || !strings.Contains(got[2].Problem(), "ServiceMonitor can only be enabled if metrics are enabled") {
		t.Errorf("problems: %q, %q, %q", got[0].Problem(), got[1].Problem(), got[2].Problem())
	}
	if got := RenderedProxyClasses(first); len(got) != 1 || got[0].Name != "old" {
		t.Errorf("one file: %+v", got)
	}
}

func TestParseExtraValuesRefusesFunnel(t *testing.T) {
	t.Parallel()
	for doc, at := range map[string]string{
		"operatorConfig:\n  podAnnotations:\n    tailscale.com/funnel: \"true\"\n": "operatorConfig.podAnnotations.tailscale.com/funnel",
		"extra:\n  - annotations:\n      Tailscale.com/Funnel: \"true\"\n":         "extra[0].annotations.Tailscale.com/Funnel",
	} {
		_, err := ParseExtraValues(doc)
		if err == nil || !strings.Contains(err.Error(), "publishes a Service on the public internet through Tailscale Funnel: "+at+".") {
			t.Errorf("%q: %v", doc, err)
		}
	}
	if _, err := ParseExtraValues("operatorConfig:\n  podAnnotations:\n    example.com/funnel: \"true\"\n"); err != nil {
		t.Errorf("another annotation refused: %v", err)
	}
}
