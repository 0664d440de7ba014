package cluster

import (
	"fmt"
	"net/netip"
)

// DNSConfig objects: a Helm service renders them like any other
// tailscale.com object, and the API server checks them against the CRD
// of the operator's chart, dropping the fields that CRD does not define
// (spec.nameserver.service from 1.86, replicas from 1.90). The operator's
// nameserver reconciler deploys, in the operator's namespace, a nameserver
// (a Deployment and a Service, both named nameserver, owned by the
// DNSConfig) and writes the Service's cluster IP to status.nameserver.ip,
// with the condition NameserverReady. It supports one DNSConfig per
// cluster, without refusing a second: reconciling one while several exist
// records a Warning event MultipleDNSConfigsPresent on it and sets the
// condition False, then goes on in the same pass, rewrites the shared
// nameserver's Deployment with its own image and replicas, keeps the
// Service (and so the IP and the owner) as it is, and ends with the
// condition True. The Deployment's change makes the operator reconcile
// the DNSConfig that owns it, which writes its own spec back (and gets the
// event too): the nameserver follows the first DNSConfig. Deleting the DNSConfig that owns the nameserver
// garbage-collects it; the others keep the IP in their status until they
// are reconciled again, which makes a new Service with a new IP.

const (
	kindDNSConfig = "DNSConfig"

	// DNSConfigReady is the condition the nameserver reconciler sets.
	DNSConfigReady = "NameserverReady"
	// ReasonNameserverCreated and ReasonMultipleDNSConfigs are its
	// reasons, and MessageMultipleDNSConfigs the message of the event
	// recorded on every DNSConfig reconciled while several exist.
	ReasonNameserverCreated   = "NameserverCreated"
	ReasonMultipleDNSConfigs  = "MultipleDNSConfigsPresent"
	MessageMultipleDNSConfigs = "Multiple DNSConfig resources found in cluster. Please ensure no more than one is present."

	defaultNameserverRepo = "tailscale/k8s-nameserver"

	// ServiceCIDR is the Service range of the simulated clusters,
	// Kubernetes' default.
	ServiceCIDR = "10.96.0.0/12"
)

// DNSConfig is a tailscale.com DNSConfig a Helm service rendered, with its
// status.
type DNSConfig struct {
	HelmID    string
	ClusterID string
	Name      string
	// ImageRepo, ImageTag, Replicas (-1 when unset) and ClusterIP are the
	// spec as the API server stored it: without the fields the CRD of
	// the operator's chart does not define.
	ImageRepo string
	ImageTag  string
	Replicas  int
	ClusterIP string
	// NameserverIP is status.nameserver.ip.
	NameserverIP string
	// Ready, Reason and Message are the NameserverReady condition; Reason
	// is empty until the operator has reconciled the DNSConfig.
	Ready   bool
	Reason  string
	Message string
	// Events are the events the operator recorded on the DNSConfig, as
	// "TYPE REASON: MESSAGE".
	Events []string
}

// Nameserver is what the operator deployed for the DNSConfigs of a
// cluster: one Deployment and one Service, owned by the DNSConfig whose
// reconciliation created them.
type Nameserver struct {
	ClusterID string
	Namespace string
	// Owner is the DNSConfig that owns the Deployment and the Service.
	Owner string
	// IP is the Service's cluster IP.
	IP string
	// Image and Replicas are the Deployment's, as the DNSConfig last
	// reconciled wrote them.
	Image    string
	Replicas int
}

// dnsState is what the simulation keeps of the nameservers.
type dnsState struct {
	// nameservers are the nameservers, by cluster ID.
	nameservers map[string]*Nameserver
	// nextIP numbers the cluster IPs the simulated clusters allocate.
	nextIP int
	// allocated are the cluster IPs in use, by cluster ID.
	allocated map[string]map[string]bool
}

// DNSConfigs lists the rendered DNSConfigs, by cluster then name.
func (e *Engine) DNSConfigs() []DNSConfig {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []DNSConfig
	for _, k := range e.sortedKeysLocked("") {
		if d := e.objects[k].dnsConfig; d != nil {
			c := *d
			c.Events = append([]string(nil), d.Events...)
			out = append(out, c)
		}
	}
	return out
}

// NameserverOf returns the nameserver the operator runs on the cluster.
func (e *Engine) NameserverOf(clusterID string) (Nameserver, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ns := e.dns.nameservers[clusterID]
	if ns == nil {
		return Nameserver{}, false
	}
	return *ns, true
}

// AllocateClusterIP takes the cluster IP ip on the cluster, as a Service
// made by hand would: a nameserver asking for it then fails.
func (e *Engine) AllocateClusterIP(clusterID, ip string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.allocatedLocked(clusterID)[ip] = true
}

func (e *Engine) allocatedLocked(clusterID string) map[string]bool {
	if e.dns.allocated == nil {
		e.dns.allocated = map[string]map[string]bool{}
	}
	if e.dns.allocated[clusterID] == nil {
		e.dns.allocated[clusterID] = map[string]bool{}
	}
	return e.dns.allocated[clusterID]
}

// validateDNSConfig checks a DNSConfig against the CRD of the chart
// version of the cluster's operator: spec.nameserver is required, and
// the fields the CRD does not define are dropped, as the API server
// prunes unknown fields of a structural schema.
func validateDNSConfig(m *manifest, chartVersion string, errs *fieldErrors) *DNSConfig {
	spec, ok := specOf(m, errs)
	if !ok {
		return nil
	}
	d := &DNSConfig{Replicas: -1}
	v, present := spec["nameserver"]
	if !present || v == nil {
		errs.required("spec.nameserver")
		return nil
	}
	ns, ok := errs.object(spec, "nameserver", "spec.nameserver")
	if !ok {
		return nil
	}
	if img, ok := errs.object(ns, "image", "spec.nameserver.image"); ok && img != nil {
		d.ImageRepo, _ = errs.str(img, "repo", "spec.nameserver.image.repo")
		d.ImageTag, _ = errs.str(img, "tag", "spec.nameserver.image.tag")
	}
	minor := chartMinor(chartVersion)
	if _, present := ns["replicas"]; present && minor >= 90 {
		if n, ok := errs.integer(ns, "replicas", "spec.nameserver.replicas"); ok {
			if n < 0 {
				errs.minimum("spec.nameserver.replicas", n, 0)
			}
			d.Replicas = int(n)
		}
	}
	if svc, ok := errs.object(ns, "service", "spec.nameserver.service"); ok && svc != nil && minor >= 86 {
		d.ClusterIP, _ = errs.str(svc, "clusterIP", "spec.nameserver.service.clusterIP")
	}
	return d
}

// reconcileDNSConfigsLocked is the operator's nameserver reconciler, for
// the DNSConfigs of the cluster that the Helm service helmID renders, or
// all of them for helmID "" (the operator starts and reconciles
// everything). A DNSConfig whose nameserver another one's deletion took
// is reconciled only then: the operator maps the nameserver's events to
// the DNSConfig that owned it.
func (e *Engine) reconcileDNSConfigsLocked(cluster, helmID string) {
	op := e.operators[cluster]
	if op == nil {
		return
	}
	var all []*DNSConfig
	for _, k := range e.sortedKeysLocked(cluster) {
		if d := e.objects[k].dnsConfig; d != nil {
			all = append(all, d)
		}
	}
	for _, d := range all {
		if helmID != "" && d.HelmID != helmID {
			continue
		}
		before := e.nameserverSpecLocked(cluster)
		e.reconcileDNSConfigLocked(op, d, len(all))
		ns := e.dns.nameservers[cluster]
		if ns == nil || ns.Owner == d.Name || e.nameserverSpecLocked(cluster) == before {
			continue
		}
		// The Deployment changed: the operator maps its event to the
		// DNSConfig that owns it, whose reconciliation writes its own
		// spec back.
		for _, o := range all {
			if o.Name == ns.Owner {
				e.reconcileDNSConfigLocked(op, o, len(all))
			}
		}
	}
}

// nameserverSpecLocked is the spec of the cluster's nameserver Deployment.
func (e *Engine) nameserverSpecLocked(cluster string) string {
	if ns := e.dns.nameservers[cluster]; ns != nil {
		return fmt.Sprintf("%s/%d", ns.Image, ns.Replicas)
	}
	return ""
}

func (e *Engine) reconcileDNSConfigLocked(op *Operator, d *DNSConfig, count int) {
	if count > 1 {
		d.Events = append(d.Events, "Warning "+ReasonMultipleDNSConfigs+": "+MessageMultipleDNSConfigs)
		d.Ready, d.Reason, d.Message = false, ReasonMultipleDNSConfigs, MessageMultipleDNSConfigs
		e.logf("DNSConfig %s: invalid cluster configuration: more than one tailscale.com/dnsconfigs found. Please ensure that no more than one is created.", d.Name)
	}
	if e.dns.nameservers == nil {
		e.dns.nameservers = map[string]*Nameserver{}
	}
	ns := e.dns.nameservers[d.ClusterID]
	if ns == nil {
		ip, err := e.allocateLocked(d.ClusterID, d.ClusterIP)
		if err != nil {
			// The reconciler returns the error, and retries; it sets no
			// condition.
			e.logf("DNSConfig %s: error provisioning nameserver resources: error reconciling Service: Service \"nameserver\" is invalid: %v", d.Name, err)
			return
		}
		ns = &Nameserver{ClusterID: d.ClusterID, Namespace: op.Namespace, Owner: d.Name, IP: ip}
		e.dns.nameservers[d.ClusterID] = ns
	}
	repo, tag := defaultNameserverRepo, "unstable"
	if chartMinor(op.ChartVersion) >= 92 {
		tag = "stable"
	}
	if d.ImageRepo != "" {
		repo = d.ImageRepo
	}
	if d.ImageTag != "" {
		tag = d.ImageTag
	}
	ns.Image, ns.Replicas = repo+":"+tag, 1
	if d.Replicas >= 0 {
		ns.Replicas = d.Replicas
	}
	d.NameserverIP = ns.IP
	d.Ready, d.Reason, d.Message = true, ReasonNameserverCreated, ReasonNameserverCreated
}

// allocateLocked allocates the nameserver Service's cluster IP: want, or
// the next free address of ServiceCIDR, as the API server does; an error
// is the API server's detail of the invalid Service.
func (e *Engine) allocateLocked(cluster, want string) (string, error) {
	used := e.allocatedLocked(cluster)
	prefix := netip.MustParsePrefix(ServiceCIDR)
	if want != "" {
		a, err := netip.ParseAddr(want)
		switch {
		case err != nil:
			return "", fmt.Errorf(`spec.clusterIPs[0]: Invalid value: %q: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`, want)
		case !prefix.Contains(a):
			return "", fmt.Errorf(`spec.clusterIPs: Invalid value: []string{%q}: failed to allocate IP %s: provided IP is not in the valid range. The range of valid IPs is %s`, want, want, ServiceCIDR)
		case used[want]:
			return "", fmt.Errorf(`spec.clusterIPs: Invalid value: []string{%q}: failed to allocate IP %s: provided IP is already allocated`, want, want)
		}
		used[want] = true
		return want, nil
	}
	for {
		e.dns.nextIP++
		a := prefix.Addr().As4()
		n := 10 + e.dns.nextIP
		a[2], a[3] = byte(n>>8), byte(n)
		ip := netip.AddrFrom4(a).String()
		if !used[ip] {
			used[ip] = true
			return ip, nil
		}
	}
}

// dnsConfigGoneLocked is the garbage collection of the nameserver when the
// DNSConfig that owns it goes.
func (e *Engine) dnsConfigGoneLocked(k objectKey) {
	ns := e.dns.nameservers[k.cluster]
	if ns == nil || ns.Owner != k.name {
		return
	}
	delete(e.allocatedLocked(k.cluster), ns.IP)
	delete(e.dns.nameservers, k.cluster)
}

// keepDNSConfigStatus gives the DNSConfig d of the object obj that an
// upgrade rewrites the status and events of prev, its version before.
func keepDNSConfigStatus(obj *ownedObject, d *DNSConfig, prev *ownedObject) {
	obj.dnsConfig = d
	if d == nil || prev == nil || prev.dnsConfig == nil {
		return
	}
	p := prev.dnsConfig
	d.NameserverIP, d.Ready, d.Reason, d.Message, d.Events = p.NameserverIP, p.Ready, p.Reason, p.Message, p.Events
}

// operatorChartLocked is the chart version of the cluster's operator, ""
// when none runs.
func (e *Engine) operatorChartLocked(cluster string) string {
	if op := e.operators[cluster]; op != nil {
		return op.ChartVersion
	}
	return ""
}
