package policyfile

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// FunnelAttr is the node attribute that lets devices publish services on
// the public internet through Tailscale Funnel.
const FunnelAttr = "funnel"

// Operator and proxy tags of the Kubernetes operator's defaults.
const (
	defaultOperatorTag = "tag:k8s-operator"
	defaultProxyTag    = "tag:k8s"
)

// FunnelToProxies returns the targets of the nodeAttrs entries that give
// the funnel attribute to the devices of Kubernetes operators and their
// proxies, sorted: "*" (every device), tag:k8s-operator and tag:k8s, and
// every tag that owns another tag or that a tag owns in tagOwners (an
// operator owns the tags of its proxies, which it mints their auth keys
// with). With funnel, a proxy that a Funnel annotation reaches publishes
// its Service on the public internet, outside the policy. Section and
// member names are matched case-insensitively, as the API does.
func FunnelToProxies(d *Document) []string {
	std, err := hujson.Standardize(d.Bytes())
	if err != nil {
		return nil
	}
	var doc struct {
		TagOwners map[string][]string `json:"tagOwners"`
		NodeAttrs []struct {
			Target []string `json:"target"`
			Attr   []string `json:"attr"`
		} `json:"nodeAttrs"`
	}
	if json.Unmarshal(std, &doc) != nil {
		return nil
	}
	ours := map[string]bool{"*": true, defaultOperatorTag: true, defaultProxyTag: true}
	for tag, owners := range doc.TagOwners {
		for _, o := range owners {
			if strings.HasPrefix(o, "tag:") {
				ours[strings.ToLower(tag)], ours[strings.ToLower(o)] = true, true
			}
		}
	}
	var out []string
	for _, n := range doc.NodeAttrs {
		if !slices.ContainsFunc(n.Attr, func(a string) bool { return strings.EqualFold(strings.TrimSpace(a), FunnelAttr) }) {
			continue
		}
		for _, t := range n.Target {
			if ours[strings.ToLower(t)] && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}
