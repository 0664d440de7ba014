package cluster

import (
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

// deployApplication creates, keeps or removes the proxy of an application
// according to the annotations on its Service, as the operator reconciles
// a Service annotated tailscale.com/expose:
//
//   - no "true" expose annotation (the group was detached, or says
//     otherwise): the proxy and its device go away;
//   - no port: Qovery renders no Service, so there is nothing to expose;
//   - no operator on the cluster: nothing watches the Service;
//   - an invalid hostname or tag: the operator refuses the Service
//     (INVALIDSERVICE) and removes a proxy it made before;
//   - tailscale.com/proxy-group: the Service is served by the ProxyGroup's
//     devices as a Tailscale Service, so it gets no device of its own; the
//     ProxyGroup must exist on the cluster and be of type ingress, or the
//     operator says why it cannot serve the Service;
//   - otherwise one proxy device named by tailscale.com/hostname (default
//     NAMESPACE-SERVICE) with the requested tags (default the operator's
//     proxy tags), provided the operator's tags own each of them in
//     tagOwners: the operator could not mint the proxy's auth key otherwise.
//
// A proxy's tags are fixed when its auth key is made: a later change of
// the tags annotation leaves the running device as it is. A device removed
// from the tailnet by hand comes back at the next deployment.
func (e *Engine) deployApplication(svc qoveryapi.ServiceSnapshot) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ann := map[string]string{}
	for _, g := range svc.AnnotationsGroups {
		if !hasScope(g.Scopes, "SERVICES") {
			continue
		}
		for _, a := range g.Annotations {
			ann[a.Key] = a.Value
		}
	}
	if ann[AnnotationExpose] != "true" {
		e.removeProxy(svc.ID)
		return
	}
	if len(svc.Ports) == 0 {
		e.logf("application %s declares no port: Qovery creates no Kubernetes Service, nothing to expose", svc.Name)
		e.removeProxy(svc.ID)
		return
	}
	op, ok := e.operators[svc.ClusterID]
	if !ok || !deviceExists(e.tailnet, op.DeviceID) {
		e.logf("application %s: no Tailscale operator runs on cluster %s, the annotation has no effect", svc.Name, svc.ClusterID)
		return
	}
	hostname := ann[AnnotationHostname]
	if hostname == "" {
		hostname = svc.Namespace + "-" + svc.KubernetesName
	}
	if !validLabel(hostname) {
		e.logf("Service %s/%s: INVALIDSERVICE: invalid Tailscale hostname %q: must be a DNS label of 1 to 63 letters, digits and dashes", svc.Namespace, svc.KubernetesName, hostname)
		e.removeProxy(svc.ID)
		return
	}
	tags := op.ProxyTags
	if v := ann[AnnotationTags]; v != "" {
		tags = tagList(v, defaultProxyTag)
		for _, t := range tags {
			if !validTag(t) {
				e.logf("Service %s/%s: INVALIDSERVICE: invalid tag %q in %s: a tag is \"tag:\" then a letter, then letters, digits or dashes",
					svc.Namespace, svc.KubernetesName, t, AnnotationTags)
				e.removeProxy(svc.ID)
				return
			}
		}
	}
	if pg := ann[AnnotationProxyGroup]; pg != "" {
		e.removeProxy(svc.ID)
		switch group := e.proxyGroupLocked(svc.ClusterID, pg); {
		case group == nil:
			e.logf("Service %s/%s: cannot be served by ProxyGroup %q as Tailscale Service svc:%s: ProxyGroup %q does not exist on cluster %s",
				svc.Namespace, svc.KubernetesName, pg, hostname, pg, svc.ClusterID)
		case group.Type != ProxyGroupTypeIngress:
			e.logf("Service %s/%s: cannot be served by ProxyGroup %q as Tailscale Service svc:%s: ProxyGroup %q is of type %q but must be of type %q",
				svc.Namespace, svc.KubernetesName, pg, hostname, pg, group.Type, ProxyGroupTypeIngress)
		default:
			e.logf("Service %s/%s: served by ProxyGroup %q as Tailscale Service svc:%s; no proxy device of its own",
				svc.Namespace, svc.KubernetesName, pg, hostname)
		}
		return
	}
	if p, ok := e.proxies[svc.ID]; ok && deviceExists(e.tailnet, p.DeviceID) {
		if p.Hostname == hostname {
			// The proxy's tags were fixed when its auth key was made.
			return
		}
		e.removeProxy(svc.ID)
	}
	body, _ := e.tailnet.Policy()
	pol, perr := aclcheck.Parse(body)
	if perr != nil {
		e.logf("application %s: policy invalid: %s", svc.Name, perr.Message)
		return
	}
	for _, t := range tags {
		if !anyOwns(pol, op.Tags, t) {
			e.logf("Service %s/%s: failed to create auth key for proxy %s: requested tags [%s] are invalid or not permitted (the operator's tags %v do not own %s)",
				svc.Namespace, svc.KubernetesName, hostname, strings.Join(tags, ","), op.Tags, t)
			return
		}
	}
	for _, d := range e.tailnet.Devices() {
		if strings.EqualFold(d.Hostname, hostname) {
			e.logf("Service %s/%s: hostname %s is already used by device %s on the tailnet; the proxy gets a suffixed MagicDNS name", svc.Namespace, svc.KubernetesName, hostname, d.ID)
		}
	}
	dev := e.tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: hostname, Tags: tags, OS: "linux"})
	e.proxies[svc.ID] = &Proxy{ApplicationID: svc.ID, ClusterID: svc.ClusterID, Hostname: hostname, Tags: tags, DeviceID: dev.ID}
}

func (e *Engine) removeProxy(appID string) {
	if p, ok := e.proxies[appID]; ok {
		e.tailnet.RemoveDevice(p.DeviceID)
		delete(e.proxies, appID)
	}
}

// validTag checks a tag as the operator does (tailcfg.CheckTag): "tag:",
// then a letter, then letters, digits or dashes.
func validTag(s string) bool {
	name, ok := strings.CutPrefix(s, "tag:")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || (c < '0' || c > '9') && c != '-') {
			return false
		}
	}
	return true
}
