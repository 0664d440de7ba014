package manifest

import (
	"reflect"
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
