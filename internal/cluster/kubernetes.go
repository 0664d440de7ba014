package cluster

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// KubernetesCapability is the application capability that an API server
// proxy (the operator's own, or a kube-apiserver ProxyGroup) reads, in auth
// mode, from the grants to its tags: the groups it impersonates.
const KubernetesCapability = "tailscale.com/cap/kubernetes"

// HasKubernetesGrant reports whether the policy file holds a grant of the
// application capability tailscale.com/cap/kubernetes whose destinations
// include one of tags.
// Section and member names are matched case-insensitively, as the API
// does.
func HasKubernetesGrant(policy []byte, tags []string) (bool, error) {
	std, err := hujson.Standardize(slices.Clone(policy))
	if err != nil {
		return false, err
	}
	var doc struct {
		Grants []struct {
			Dst []string                   `json:"dst"`
			App map[string]json.RawMessage `json:"app"`
		} `json:"grants"`
	}
	if err := json.Unmarshal(std, &doc); err != nil {
		return false, err
	}
	for _, g := range doc.Grants {
		if _, ok := g.App[KubernetesCapability]; !ok {
			continue
		}
		for _, d := range g.Dst {
			if d == "*" || slices.ContainsFunc(tags, func(t string) bool { return strings.EqualFold(t, d) }) {
				return true, nil
			}
		}
	}
	return false, nil
}
