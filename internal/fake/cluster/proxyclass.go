package cluster

import "fmt"

// ProxyClass objects: a Helm service renders them like any other
// tailscale.com object; the API server checks them against the CRD, and
// the operator marks each Ready, or not, after checking what it depends
// on. A Connector, ProxyGroup or Service that names a ProxyClass gets no
// proxy until that ProxyClass is Ready; a missing one is an error on the
// object.

const (
	kindProxyClass = "ProxyClass"
	// serviceMonitorCRD is the Prometheus operator's CRD that a ProxyClass
	// with a ServiceMonitor needs on the cluster.
	serviceMonitorCRD = "servicemonitors.monitoring.coreos.com"
)

// ProxyClass is a tailscale.com ProxyClass a Helm service rendered.
type ProxyClass struct {
	HelmID    string
	ClusterID string
	Name      string
	// MetricsEnabled and ServiceMonitor are spec.metrics.enable and
	// spec.metrics.serviceMonitor.enable.
	MetricsEnabled bool
	ServiceMonitor bool
	// Ready is the ProxyClassReady condition the operator set at its last
	// reconciliation; Problem says why it is not Ready.
	Ready   bool
	Problem string
}

// ProxyClasses lists the rendered ProxyClasses, by cluster then name.
func (e *Engine) ProxyClasses() []ProxyClass {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []ProxyClass
	for _, k := range e.sortedKeysLocked("") {
		if pc := e.objects[k].proxyClass; pc != nil {
			out = append(out, *pc)
		}
	}
	return out
}

func (e *Engine) proxyClassLocked(cluster, name string) *ProxyClass {
	if o := e.objects[objectKey{cluster: cluster, group: tailscaleGroup, kind: kindProxyClass, name: name}]; o != nil {
		return o.proxyClass
	}
	return nil
}

// validateProxyClass checks a ProxyClass against the CRD: a spec, and in
// spec.metrics the required enable fields and the rule that a
// ServiceMonitor needs metrics.
func validateProxyClass(m *manifest, errs *fieldErrors) *ProxyClass {
	spec, ok := specOf(m, errs)
	if !ok {
		return nil
	}
	pc := &ProxyClass{}
	metrics, ok := errs.object(spec, "metrics", "spec.metrics")
	if !ok {
		return pc
	}
	before := len(*errs)
	enable, has := errs.boolean(metrics, "enable", "spec.metrics.enable")
	if !has && metrics["enable"] == nil {
		errs.required("spec.metrics.enable")
	}
	pc.MetricsEnabled = enable
	if sm, ok := errs.object(metrics, "serviceMonitor", "spec.metrics.serviceMonitor"); ok {
		on, has := errs.boolean(sm, "enable", "spec.metrics.serviceMonitor.enable")
		if !has && sm["enable"] == nil {
			errs.required("spec.metrics.serviceMonitor.enable")
		}
		pc.ServiceMonitor = on
	}
	if len(*errs) == before && pc.ServiceMonitor && !pc.MetricsEnabled {
		errs.rule("spec.metrics", metrics, "ServiceMonitor can only be enabled if metrics are enabled")
	}
	return pc
}

// reconcileProxyClassLocked is the operator's ProxyClass reconciler: Ready
// unless it asks for a ServiceMonitor on a cluster without the
// ServiceMonitor CRD. Without an operator nothing sets the condition.
func (e *Engine) reconcileProxyClassLocked(op *Operator, pc *ProxyClass) {
	pc.Ready, pc.Problem = false, ""
	switch {
	case op == nil:
		pc.Problem = fmt.Sprintf("no Tailscale operator runs on cluster %s: nothing marks the ProxyClass Ready", pc.ClusterID)
	case pc.ServiceMonitor && e.objects[objectKey{cluster: pc.ClusterID, group: "apiextensions.k8s.io", kind: "CustomResourceDefinition", name: serviceMonitorCRD}] == nil:
		pc.Problem = fmt.Sprintf("ProxyClass is not valid: spec.metrics.serviceMonitor: Invalid value: \"enable\": ProxyClass defines that a ServiceMonitor "+
			"custom resource should be created, but %q CRD was not found", serviceMonitorCRD)
	default:
		pc.Ready = true
		return
	}
	e.logf("ProxyClass %s: ProxyClassInvalid: %s", pc.Name, pc.Problem)
}

// proxyClassAllowsLocked reports whether the ProxyClass name (empty: none)
// lets the operator provision a proxy for what, an object of kind kind;
// when it does not, it logs what the operator reports on the object.
func (e *Engine) proxyClassAllowsLocked(what, kind string, op *Operator, name string) bool {
	if name == "" || e.compat.IgnoreProxyClass {
		return true
	}
	pc := e.proxyClassLocked(op.ClusterID, name)
	switch {
	case pc == nil && kind == kindProxyGroup:
		e.logf("%s: ProxyGroupCreating: the ProxyGroup's ProxyClass %q does not (yet) exist", what, name)
	case pc == nil:
		e.logf("%s: error verifying ProxyClass for %s: error getting ProxyClass %s: proxyclasses.tailscale.com %q not found; no proxy", what, kind, name, name)
	case !pc.Ready && kind == kindProxyGroup:
		e.logf("%s: ProxyGroupCreating: the ProxyGroup's ProxyClass %q is not yet in a ready state, waiting...", what, name)
	case !pc.Ready:
		e.logf("%s: ProxyClass %s specified for the %s, but is not (yet) Ready, waiting..; no proxy", what, name, kind)
	default:
		return true
	}
	return false
}

// serviceProxyClass is the ProxyClass of a Service's proxy: the
// tailscale.com/proxy-class label, else the annotation, else the
// operator's default.
func serviceProxyClass(op *Operator, annotations, labels map[string]string) string {
	if v, ok := labels[AnnotationProxyClass]; ok {
		return v
	}
	if v, ok := annotations[AnnotationProxyClass]; ok {
		return v
	}
	return op.DefaultProxyClass
}
