package cluster

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

// A ProxyGroup of type kube-apiserver proxies the Kubernetes API on the
// tailnet: the operator makes the Tailscale Service svc:HOSTNAME (the
// hostname of spec.kubeAPIServer, else the ProxyGroup's name) through the
// API, tagged with the ProxyGroup's tags, on tcp:443; each replica gets the
// certificate of HOSTNAME.TAILNET.ts.net and then advertises the Service.
// The operator reports it in two conditions and status.url.

// Modes of spec.kubeAPIServer.mode, as the CRD enumerates them.
const (
	KubeAPIServerModeAuth   = "auth"
	KubeAPIServerModeNoAuth = "noauth"
)

// Conditions and reasons of a kube-apiserver ProxyGroup, in the operator's
// words.
const (
	ConditionKubeAPIServerProxyValid      = "KubeAPIServerProxyValid"
	ConditionKubeAPIServerProxyConfigured = "KubeAPIServerProxyConfigured"
	reasonKubeAPIServerProxyInvalid       = "KubeAPIServerProxyInvalid"
	reasonKubeAPIServerProxyNoBackends    = "KubeAPIServerProxyNoBackends"
)

// kubeAPIServerHostnameRE is the CRD's pattern of spec.kubeAPIServer.hostname.
var kubeAPIServerHostnameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Condition is a status condition of an object, as the operator sets it.
type Condition struct {
	Status  string // "True" or "False"
	Reason  string
	Message string
}

// KubeAPIServerProxy is spec.kubeAPIServer of a kube-apiserver ProxyGroup
// with the defaults applied, and what the operator reports of it.
type KubeAPIServerProxy struct {
	// Mode is "auth" (the CRD's default) or "noauth".
	Mode string
	// Hostname names the Tailscale Service svc:HOSTNAME; the ProxyGroup's
	// name by default.
	Hostname string
	// Service is the Tailscale Service the operator made ("" until then).
	Service string
	// URL is status.url: https://HOSTNAME.TAILNET.ts.net once a replica
	// advertises the Service, "" before.
	URL string
	// Conditions are KubeAPIServerProxyValid and
	// KubeAPIServerProxyConfigured, by type.
	Conditions map[string]Condition
}

// validateKubeAPIServer checks spec.kubeAPIServer against the CRD's schema
// and returns it for a ProxyGroup of type kube-apiserver (nil otherwise:
// the operator ignores the field for the other types).
func validateKubeAPIServer(spec map[string]any, typ string, errs *fieldErrors) *KubeAPIServerProxy {
	k := &KubeAPIServerProxy{Mode: KubeAPIServerModeAuth}
	if obj, ok := errs.object(spec, "kubeAPIServer", "spec.kubeAPIServer"); ok {
		if mode, ok := errs.str(obj, "mode", "spec.kubeAPIServer.mode"); ok {
			if mode != KubeAPIServerModeAuth && mode != KubeAPIServerModeNoAuth {
				*errs = append(*errs, fmt.Sprintf("spec.kubeAPIServer.mode: Unsupported value: %q: supported values: %q, %q",
					mode, KubeAPIServerModeAuth, KubeAPIServerModeNoAuth))
			}
			k.Mode = mode
		}
		if h, ok := errs.str(obj, "hostname", "spec.kubeAPIServer.hostname"); ok {
			if !kubeAPIServerHostnameRE.MatchString(h) {
				errs.pattern("spec.kubeAPIServer.hostname", h, kubeAPIServerHostnameRE)
			}
			k.Hostname = h
		}
	}
	if typ != ProxyGroupTypeKubeAPIServer {
		return nil
	}
	return k
}

// reconcileKubeAPIServerLocked is the operator's reconciler of the
// Tailscale Service of a kube-apiserver ProxyGroup:
//
//   - nothing happens until the ProxyGroup is available (a replica's
//     device is on the tailnet);
//   - a Service svc:HOSTNAME that someone else made is refused
//     (KubeAPIServerProxyValid False); otherwise the operator creates it
//     with the ProxyGroup's tags, on tcp:443;
//   - the replicas advertise it once they have the certificate of
//     HOSTNAME.TAILNET.ts.net, which needs HTTPS certificates on the
//     tailnet: with them off, no replica serves, and
//     KubeAPIServerProxyConfigured stays False with no status.url.
func (e *Engine) reconcileKubeAPIServerLocked(op *Operator, g *ProxyGroup) {
	k := g.KubeAPIServer
	hostname := k.Hostname
	if hostname == "" {
		hostname = g.Name
	}
	name := "svc:" + hostname
	what := "ProxyGroup " + g.Name
	if k.Conditions == nil {
		k.Conditions = map[string]Condition{}
	}
	advertising := 0
	defer func() {
		k.URL = ""
		c := Condition{Status: "False", Reason: reasonKubeAPIServerProxyNoBackends}
		if advertising > 0 {
			c = Condition{Status: "True", Reason: ConditionKubeAPIServerProxyConfigured}
			k.URL = "https://" + hostname + "." + e.tailnet.MagicDNSSuffix()
		}
		c.Message = fmt.Sprintf("%d/%d proxy backends ready and advertising", advertising, g.Replicas)
		k.Conditions[ConditionKubeAPIServerProxyConfigured] = c
	}()
	if !e.proxyGroupAvailableLocked(g) {
		return
	}
	if k.Service != "" && k.Service != name {
		e.dropKubeAPIServerServiceLocked(g)
	}
	c, err := e.callerLocked(op)
	if err != nil {
		e.logf("%s: failed to get tailscale client: %v", what, err)
		return
	}
	var existing *tailnetapi.Service
	switch v, err := c.GetService(name); {
	case err == nil:
		existing = &v
	case !tailnetapi.IsNotFound(err):
		e.logf("%s: error getting Tailscale Service %q: %v", what, name, err)
		return
	}
	annotations, refused := ownerAnnotations(op.NodeID, existing)
	if refused != "" {
		msg := fmt.Sprintf("error ensuring exclusive ownership of Tailscale Service %s: %s. To proceed, you can either manually delete "+
			"the existing Tailscale Service or choose a different Service name in the ProxyGroup's spec.kubeAPIServer.serviceName field", name, refused)
		k.Conditions[ConditionKubeAPIServerProxyValid] = Condition{Status: "False", Reason: reasonKubeAPIServerProxyInvalid, Message: msg}
		e.logf("%s: InvalidTailscaleService: %s", what, msg)
		return
	}
	k.Conditions[ConditionKubeAPIServerProxyValid] = Condition{Status: "True", Reason: ConditionKubeAPIServerProxyValid, Message: ConditionKubeAPIServerProxyValid}
	want := tailnetapi.Service{Name: name, Tags: slices.Clone(g.Tags), Ports: []string{"tcp:443"}, Comment: managedServiceComment, Annotations: annotations}
	if existing == nil || !slices.Equal(existing.Tags, want.Tags) || !slices.Equal(existing.Ports, want.Ports) ||
		existing.Annotations[ownerAnnotation] != annotations[ownerAnnotation] {
		if _, err := c.PutService(want); err != nil {
			e.logf("%s: error creating Tailscale Service: %v", what, err)
			return
		}
	}
	k.Service = name
	if !e.tailnet.HTTPSEnabled() {
		e.tailnet.AdvertiseService(name, nil)
		e.logf("%s: the replicas cannot get a TLS certificate for %s.%s: HTTPS certificates are disabled on the tailnet, so none "+
			"advertises Tailscale Service %s", what, hostname, e.tailnet.MagicDNSSuffix(), name)
		return
	}
	ids := g.DeviceIDs()
	e.tailnet.AdvertiseService(name, ids)
	advertising = len(ids)
}

// dropKubeAPIServerServiceLocked deletes the Tailscale Service of a
// kube-apiserver ProxyGroup, as the operator's finalizer does when the
// ProxyGroup is deleted (or its Service renamed).
func (e *Engine) dropKubeAPIServerServiceLocked(g *ProxyGroup) {
	if g.KubeAPIServer == nil || g.KubeAPIServer.Service == "" {
		return
	}
	name := g.KubeAPIServer.Service
	g.KubeAPIServer.Service = ""
	e.tailnet.AdvertiseService(name, nil)
	op := e.operators[g.ClusterID]
	if op == nil {
		return
	}
	c, err := e.callerLocked(op)
	if err == nil {
		err = c.DeleteService(name)
	}
	if err != nil && !tailnetapi.IsNotFound(err) {
		e.logf("Tailscale Service %s: cannot clean up: %v", name, err)
	}
}
