package cluster

import (
	"fmt"
	"slices"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

// The operator's Ingress reconciler (cmd/k8s-operator/ingress.go), for an
// Ingress of class tailscale that a Helm service renders: one proxy
// device that serves HTTPS on port 443, with the tailnet's certificate for
// its MagicDNS name, and proxies to the Ingress's backend Service, which
// must live in the Ingress's namespace.

const (
	// IngressClassTailscale is the class of the operator's Ingresses.
	IngressClassTailscale = "tailscale"

	networkingGroup = "networking.k8s.io"
	kindIngress     = "Ingress"
)

// Ingress is an Ingress a Helm service rendered, with what the operator
// made of it.
type Ingress struct {
	HelmID    string
	ClusterID string
	Namespace string
	Name      string
	// ClassName is spec.ingressClassName ("" when unset).
	ClassName string
	// BackendService and BackendPort are spec.defaultBackend.service
	// (name and port.number); BackendPortName is port.name.
	BackendService  string
	BackendPort     int
	BackendPortName string
	// TLSHost is spec.tls[0].hosts[0] ("" when unset).
	TLSHost string
	// ProxyGroup is the tailscale.com/proxy-group annotation.
	ProxyGroup string
	tags       []string
	hasTags    bool

	// Hostname is the proxy's: the first label of TLSHost, else
	// NAMESPACE-NAME-ingress. DeviceID is its device ("" when the
	// operator made none) and Tags its tags.
	Hostname string
	DeviceID string
	Tags     []string
	// Target is where the proxy sends requests, "http://SERVICE:PORT/"
	// ("https+insecure://" for port 443 or a port named https), and
	// TargetServed whether the backend Service's application declares
	// that port (the operator does not check: a port that nothing serves
	// answers 502).
	Target       string
	TargetServed bool
	// StatusHostname is status.loadBalancer.ingress[0].hostname: the
	// device's MagicDNS name once the proxy has its certificate, "" until
	// then (with HTTPS certificates off it never gets one). StatusPorts
	// are the ports of that entry.
	StatusHostname string
	StatusPorts    []int
}

// Ingresses lists the Ingresses rendered by Helm services.
func (e *Engine) Ingresses() []Ingress {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Ingress
	for _, k := range e.sortedKeysLocked("") {
		if g := e.objects[k].ingress; g != nil {
			c := *g
			c.Tags, c.StatusPorts, c.tags = slices.Clone(g.Tags), slices.Clone(g.StatusPorts), slices.Clone(g.tags)
			out = append(out, c)
		}
	}
	return out
}

// readIngress reads an Ingress as the API server validates it: a
// defaultBackend or rules.
func readIngress(m *manifest, errs *fieldErrors) *Ingress {
	spec, ok := specOf(m, errs)
	if !ok {
		return nil
	}
	g := &Ingress{}
	g.ClassName, _ = errs.str(spec, "ingressClassName", "spec.ingressClassName")
	backend, hasBackend := errs.object(spec, "defaultBackend", "spec.defaultBackend")
	rules, hasRules := spec["rules"].([]any)
	if !hasBackend && (!hasRules || len(rules) == 0) {
		*errs = append(*errs, "spec: Invalid value: null: either `defaultBackend` or `rules` must be specified")
	}
	if hasBackend {
		svc, ok := errs.object(backend, "service", "spec.defaultBackend.service")
		if ok {
			g.BackendService, _ = errs.str(svc, "name", "spec.defaultBackend.service.name")
			if port, ok := errs.object(svc, "port", "spec.defaultBackend.service.port"); ok {
				if n, ok := errs.integer(port, "number", "spec.defaultBackend.service.port.number"); ok {
					g.BackendPort = int(n)
				}
				g.BackendPortName, _ = errs.str(port, "name", "spec.defaultBackend.service.port.name")
			}
		}
	}
	if tls, ok := spec["tls"].([]any); ok && len(tls) > 0 {
		if first, ok := tls[0].(map[string]any); ok {
			if hosts, ok := first["hosts"].([]any); ok && len(hosts) > 0 {
				g.TLSHost, _ = hosts[0].(string)
			}
		}
	}
	g.ProxyGroup = m.annotations[AnnotationProxyGroup]
	if v, ok := m.annotations[AnnotationTags]; ok {
		g.tags, g.hasTags = strings.Split(v, ","), true
	}
	return g
}

// ingressHostname is the operator's hostnameForIngress.
func (g *Ingress) ingressHostname() string {
	if g.TLSHost != "" {
		h, _, _ := strings.Cut(g.TLSHost, ".")
		return h
	}
	return g.Namespace + "-" + g.Name + "-ingress"
}

// served reports whether the operator's single-proxy Ingress reconciler
// serves the Ingress (shouldExpose).
func (g *Ingress) served() bool {
	return g.ClassName == IngressClassTailscale && g.ProxyGroup == ""
}

// keepStatus carries what the operator made over to a new version of the
// object.
func (g *Ingress) keepStatus(prev *Ingress) {
	g.Hostname, g.DeviceID, g.Tags = prev.Hostname, prev.DeviceID, prev.Tags
	g.StatusHostname, g.StatusPorts = prev.StatusHostname, prev.StatusPorts
}

// reconcileIngressesLocked is the operator reconciling the Ingresses of a
// cluster, after an Ingress, a Service (an application's deployment) or
// the operator changed.
func (e *Engine) reconcileIngressesLocked(cluster string) {
	for _, k := range e.sortedKeysLocked(cluster) {
		if g := e.objects[k].ingress; g != nil {
			e.reconcileIngressLocked(e.operators[cluster], g)
		}
	}
}

// reconcileIngressLocked is the operator's Ingress reconciler for one
// Ingress:
//
//   - not of class tailscale, or annotated tailscale.com/proxy-group (the
//     ProxyGroup's reconciler serves it): its proxy, if any, goes;
//   - no operator running: nothing happens;
//   - HTTPS certificates off on the tailnet: a warning event
//     (HTTPSNotEnabled), and the proxy is made all the same;
//   - a backend Service missing from the Ingress's namespace: an event
//     (InvalidIngressBackend), no valid backend, no proxy;
//   - otherwise one proxy device named after spec.tls[0].hosts[0] (first
//     label) with the tailscale.com/tags tags (default the operator's
//     proxy tags). The proxy asks for a certificate for its MagicDNS name:
//     granted, the Ingress status gets that name and port 443; refused
//     (HTTPS off), the proxy logs the error and the status stays empty.
func (e *Engine) reconcileIngressLocked(op *Operator, g *Ingress) {
	what := fmt.Sprintf("Ingress %s/%s", g.Namespace, g.Name)
	if g.ClassName == IngressClassTailscale && g.ProxyGroup != "" {
		e.dropIngressProxyLocked(g)
		e.reconcileIngressThroughProxyGroupLocked(op, g)
		return
	}
	if op != nil {
		e.dropAppServiceLocked(op, g.serviceKey())
	}
	if !g.served() {
		e.dropIngressProxyLocked(g)
		return
	}
	if op == nil || !deviceExists(e.tailnet, op.DeviceID) {
		return
	}
	if !e.tailnet.HTTPSEnabled() {
		e.logf("%s: HTTPSNotEnabled: HTTPS is not enabled on the tailnet; ingress may not work", what)
	}
	app, found := e.backendLocked(g)
	if !found {
		e.logf("%s: InvalidIngressBackend: failed to get service %q for path \"/\": services %q not found", what, g.BackendService, g.BackendService)
		e.logf("%s: NoValidBackends: no valid backends", what)
		return
	}
	port := g.BackendPort
	if g.BackendPortName != "" {
		port = 0
		for _, p := range app.Ports {
			if p.Name == g.BackendPortName {
				port = p.InternalPort
			}
		}
	}
	if port == 0 {
		e.logf("%s: InvalidIngressBackend: backend for path \"/\" has invalid port", what)
		e.logf("%s: NoValidBackends: no valid backends", what)
		return
	}
	scheme := "http://"
	if port == 443 || g.BackendPortName == "https" {
		scheme = "https+insecure://"
	}
	g.Target = fmt.Sprintf("%s%s.%s.svc:%d/", scheme, g.BackendService, g.Namespace, port)
	g.TargetServed = slices.ContainsFunc(app.Ports, func(p qoveryapi.Port) bool { return p.InternalPort == port })

	hostname := g.ingressHostname()
	tags := op.ProxyTags
	if g.hasTags {
		tags = g.tags
	}
	if g.DeviceID == "" || !deviceExists(e.tailnet, g.DeviceID) {
		if err := e.mintLocked(op, tags, e.compat.OperatorOwnsProxyTags); err != nil {
			e.logf("%s: failed to provision: failed to create or get API key secret: %v (no device for proxy %s)", what, err, hostname)
			return
		}
		e.noteSharedHostnameLocked(what, hostname)
		dev := e.tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: hostname, Tags: tags, OS: "linux"})
		g.DeviceID, g.Hostname, g.Tags = dev.ID, hostname, slices.Clone(tags)
		g.StatusHostname, g.StatusPorts = "", nil
	} else if g.Hostname != hostname {
		e.tailnet.RenameDevice(g.DeviceID, hostname)
		g.Hostname, g.StatusHostname, g.StatusPorts = hostname, "", nil
	}
	if g.StatusHostname != "" {
		return
	}
	cert, err := e.tailnet.IssueCertificate(g.DeviceID)
	if err != nil {
		e.logf("%s: proxy %s: serve: failed to get TLS certificate: %v", what, hostname, err)
		return
	}
	g.StatusHostname, g.StatusPorts = cert.Domain, []int{443}
}

// backendLocked finds the application whose Kubernetes Service is the
// Ingress's backend: same cluster, same namespace, that name.
func (e *Engine) backendLocked(g *Ingress) (app qoveryapi.ServiceSnapshot, found bool) {
	for _, a := range e.appsOnClusterLocked(g.ClusterID) {
		if a.Namespace == g.Namespace && a.KubernetesName == g.BackendService && len(a.Ports) > 0 {
			return a, true
		}
	}
	return qoveryapi.ServiceSnapshot{}, false
}

// dropIngressProxyLocked removes the proxy of an Ingress the operator no
// longer serves.
func (e *Engine) dropIngressProxyLocked(g *Ingress) {
	if g.DeviceID != "" {
		e.tailnet.RemoveDevice(g.DeviceID)
	}
	g.DeviceID, g.Hostname, g.Tags, g.StatusHostname, g.StatusPorts = "", "", nil, "", nil
}

// DeleteIngress deletes the Ingress name of namespace as a person does
// with kubectl: the operator removes its proxy, and the Helm release
// brings the Ingress back at its next deployment. It reports whether there
// was one.
func (e *Engine) DeleteIngress(namespace, name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range e.sortedKeysLocked("") {
		if g := e.objects[k].ingress; g != nil && g.Namespace == namespace && g.Name == name {
			e.deleteObjectLocked(k)
			return true
		}
	}
	return false
}

// serviceKey names the Ingress among the owners of the Tailscale Services
// the operator made (Engine.appServices).
func (g *Ingress) serviceKey() string {
	return "ingress:" + g.ClusterID + "/" + g.Namespace + "/" + g.Name
}

// reconcileIngressThroughProxyGroupLocked is the operator's HA Ingress
// reconciler (cmd/k8s-operator/ingress-for-pg.go), for an Ingress annotated
// tailscale.com/proxy-group:
//
//   - the ProxyGroup must exist and be available (a replica is up), or
//     nothing happens yet;
//   - the Ingress must be valid: a ProxyGroup of type ingress, a hostname
//     that is a DNS label, valid tags, and no other such Ingress of the
//     cluster under the same hostname (an InvalidIngressConfiguration
//     event otherwise);
//   - the operator reads svc:HOSTNAME through the API (the services scope
//     of its OAuth client): one someone else made is refused, one another
//     operator made is shared;
//   - it creates or updates the Service, on port 443, with the
//     tailscale.com/tags tags or its proxy tags; the ProxyGroup's
//     replicas advertise it, and the Ingress status gets HOSTNAME.TAILNET.ts.net
//     once the hosts have the certificate (never with HTTPS off).
func (e *Engine) reconcileIngressThroughProxyGroupLocked(op *Operator, g *Ingress) {
	if op == nil || !deviceExists(e.tailnet, op.DeviceID) {
		return
	}
	what := fmt.Sprintf("Ingress %s/%s", g.Namespace, g.Name)
	hostname := g.ingressHostname()
	name := "svc:" + hostname
	group := e.proxyGroupLocked(g.ClusterID, g.ProxyGroup)
	if group == nil {
		e.logf("%s: ProxyGroup %q does not exist, it may have been deleted. Reconciliation for ingress %q will be skipped until the ProxyGroup is found",
			what, g.ProxyGroup, g.Name)
		return
	}
	if !e.proxyGroupAvailableLocked(group) {
		e.logf("%s: ProxyGroup %q is not (yet) ready", what, g.ProxyGroup)
		return
	}
	var invalid []string
	tags := op.ProxyTags
	if g.hasTags {
		tags = g.tags
		for _, t := range tags {
			if !validTag(t) {
				invalid = append(invalid, fmt.Sprintf("Ingress contains invalid tags: %s", t))
			}
		}
	}
	if err := tailnetapi.CheckDNSLabel(hostname); err != nil {
		invalid = append(invalid, fmt.Sprintf("invalid hostname %q: %v. Ensure that the hostname is a valid DNS label", hostname, err))
	}
	if group.Type != ProxyGroupTypeIngress {
		invalid = append(invalid, fmt.Sprintf("ProxyGroup %q is of type %q but must be of type %q", g.ProxyGroup, group.Type, ProxyGroupTypeIngress))
	}
	for _, k := range e.sortedKeysLocked(g.ClusterID) {
		o := e.objects[k].ingress
		if o != nil && o != g && o.ClassName == IngressClassTailscale && o.ProxyGroup != "" && o.ingressHostname() == hostname {
			invalid = append(invalid, fmt.Sprintf("found duplicate Ingress %q for hostname %q - multiple Ingresses for the same hostname in the same cluster are not allowed",
				o.Namespace+"/"+o.Name, hostname))
		}
	}
	if len(invalid) > 0 {
		e.logf("%s: InvalidIngressConfiguration: %s", what, strings.Join(invalid, "\n"))
		return
	}
	if !e.tailnet.HTTPSEnabled() {
		e.logf("%s: HTTPSNotEnabled: HTTPS is not enabled on the tailnet; ingress may not work", what)
	}
	if !e.ensureAppServiceLocked(op, appService{
		key: g.serviceKey(), name: name, hostname: hostname, what: what, tags: tags, ports: []string{"tcp:443"},
		rename: "a different MagicDNS name at `.spec.tls.hosts[0] in the Ingress definition", comparePorts: true,
	}) {
		return
	}
	e.tailnet.AdvertiseService(name, group.DeviceIDs())
	g.Hostname = hostname
	if g.StatusHostname != "" {
		return
	}
	cert, err := e.tailnet.IssueServiceCertificate(name)
	if err != nil {
		e.logf("%s: ProxyGroup %s: failed to get TLS certificate for %s: %v", what, g.ProxyGroup, name, err)
		return
	}
	g.StatusHostname, g.StatusPorts = cert.Domain, []int{443}
}
