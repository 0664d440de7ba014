package cluster

import "testing"

func TestHasCapabilityGrant(t *testing.T) {
	t.Parallel()
	policy := []byte(`{
  // The platform team reads the cluster.
  "Grants": [
    {"src": ["group:ops"], "dst": ["tag:web"], "ip": ["*"]},
    {"src": ["group:ops"], "dst": ["tag:k8s-operator"], "app": {"tailscale.com/cap/kubernetes": [{"impersonate": {"groups": ["view"]}}]}},
  ],
}`)
	for _, tc := range []struct {
		tags []string
		want bool
	}{
		{[]string{"tag:k8s-operator"}, true},
		{[]string{"tag:other", "tag:K8S-operator"}, true},
		{[]string{"tag:web"}, false},
	} {
		got, err := HasKubernetesGrant(policy, tc.tags)
		if err != nil || got != tc.want {
			t.Errorf("tags %v: %v, %v; want %v", tc.tags, got, err, tc.want)
		}
	}
	if got, err := HasKubernetesGrant([]byte(`{"grants": [{"src": ["*"], "dst": ["*"], "app": {"tailscale.com/cap/kubernetes": []}}]}`),
		[]string{"tag:x"}); err != nil || !got {
		t.Errorf("a grant to every destination: %v, %v", got, err)
	}
	if got, _ := HasKubernetesGrant([]byte(`{}`), []string{"tag:x"}); got {
		t.Error("a policy without grants has one")
	}
}
