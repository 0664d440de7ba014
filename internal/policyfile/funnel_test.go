package policyfile

import (
	"slices"
	"testing"
)

func TestFunnelToProxies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, policy string
		want         []string
	}{
		{"the proxies' default tag", `{"nodeAttrs": [{"target": ["tag:k8s"], "attr": ["funnel"]}]}`, []string{"tag:k8s"}},
		{"every device", `{"NodeAttrs": [{"target": ["*"], "attr": ["Funnel", "https"]}]}`, []string{"*"}},
		{"a tag the operator owns", `{
  "tagOwners": {"tag:k8s-operator-eu": [], "tag:web-eu": ["tag:k8s-operator-eu"]},
  // Public demo machines.
  "nodeAttrs": [
    {"target": ["tag:web-eu", "group:eng", "tag:demo"], "attr": ["funnel"]},
    {"target": ["tag:k8s-operator-eu"], "attr": ["funnel"]},
  ],
}`, []string{"tag:k8s-operator-eu", "tag:web-eu"}},
		{"funnel to people only", `{"nodeAttrs": [{"target": ["group:eng"], "attr": ["funnel"]}]}`, nil},
		{"another attribute", `{"nodeAttrs": [{"target": ["tag:k8s"], "attr": ["mullvad"]}]}`, nil},
	} {
		d, err := Parse([]byte(tc.policy))
		if err != nil {
			t.Fatal(err)
		}
		if got := FunnelToProxies(d); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
