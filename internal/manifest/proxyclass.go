package manifest

import (
	"go.yaml.in/yaml/v3"
)

// ProxyClass is a tailscale.com/v1alpha1 ProxyClass that a Helm service of
// the cluster renders through the tailnet-manifests chart. A Connector,
// ProxyGroup or Service that names a ProxyClass gets no proxy until the
// operator marks that ProxyClass Ready; one that does not exist on the
// cluster is an error the operator reports on the object.
type ProxyClass struct {
	Name string
	// MetricsEnabled is spec.metrics.enable.
	MetricsEnabled bool
	// ServiceMonitor is spec.metrics.serviceMonitor.enable: the operator
	// marks the ProxyClass Ready only where the Prometheus ServiceMonitor
	// CRD (servicemonitors.monitoring.coreos.com) is installed, which
	// qtail cannot see.
	ServiceMonitor bool
}

// Problem says what keeps the ProxyClass from being Ready that the values
// alone show, or "" when nothing does: the CRD refuses a ServiceMonitor
// without metrics (the Helm deployment fails).
func (p ProxyClass) Problem() string {
	if p.ServiceMonitor && !p.MetricsEnabled {
		return "spec.metrics.serviceMonitor.enable is true but spec.metrics.enable is not: the CRD refuses it " +
			"(ServiceMonitor can only be enabled if metrics are enabled)"
	}
	return ""
}

// RenderedProxyClasses returns the ProxyClasses a Helm service renders
// from its values files, in order: the manifests list of the last file
// that sets it (Helm's merge replaces lists), its entries of kind
// ProxyClass in tailscale.com/v1alpha1. Files that are not YAML maps are
// skipped, as the deployment would fail on them anyway.
func RenderedProxyClasses(valuesFiles ...string) []ProxyClass {
	var out []ProxyClass
	for _, obj := range renderedObjects(KindProxyClass, valuesFiles) {
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		pc := ProxyClass{Name: name}
		spec, _ := obj["spec"].(map[string]any)
		metrics, _ := spec["metrics"].(map[string]any)
		pc.MetricsEnabled, _ = metrics["enable"].(bool)
		sm, _ := metrics["serviceMonitor"].(map[string]any)
		pc.ServiceMonitor, _ = sm["enable"].(bool)
		out = append(out, pc)
	}
	return out
}

// RenderedProxyGroups returns the type of each ProxyGroup, by name, that
// the manifests list of a Helm service's values files renders.
func RenderedProxyGroups(valuesFiles ...string) map[string]string {
	out := map[string]string{}
	for _, obj := range renderedObjects(KindProxyGroup, valuesFiles) {
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		spec, _ := obj["spec"].(map[string]any)
		typ, _ := spec["type"].(string)
		out[name] = typ
	}
	return out
}

// renderedObjects returns the Tailscale objects of one kind in the
// manifests list of values files (the last file that has the list wins,
// as Helm merges them).
func renderedObjects(kind string, valuesFiles []string) []map[string]any {
	var list []any
	for _, f := range valuesFiles {
		var doc map[string]any
		if yaml.Unmarshal([]byte(f), &doc) != nil {
			continue
		}
		if v, ok := doc[ManifestsKey]; ok {
			list, _ = v.([]any)
		}
	}
	var out []map[string]any
	for _, e := range list {
		obj, ok := e.(map[string]any)
		if ok && obj["apiVersion"] == TailscaleAPIVersion && obj["kind"] == kind {
			out = append(out, obj)
		}
	}
	return out
}

// RenderedProxyGroupTags returns the tags (spec.tags) of each ProxyGroup
// that the manifests of the values files render, by name; a ProxyGroup
// without tags has none in the map.
func RenderedProxyGroupTags(valuesFiles ...string) map[string][]string {
	out := map[string][]string{}
	for _, obj := range renderedObjects(KindProxyGroup, valuesFiles) {
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		spec, _ := obj["spec"].(map[string]any)
		list, _ := spec["tags"].([]any)
		for _, t := range list {
			if s, ok := t.(string); ok {
				out[name] = append(out[name], s)
			}
		}
	}
	return out
}
