package cluster

import (
	"errors"
	"fmt"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

// deployApplication records the application's Service as deployed and
// lets the operator reconcile it.
func (e *Engine) deployApplication(svc qoveryapi.ServiceSnapshot) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if reason, ok := e.broken[svc.ID]; ok {
		e.logf("application %s: deployment failed: %s", svc.ID, reason)
		return errors.New(reason)
	}
	e.apps[svc.ID] = svc
	e.reconcileAppLocked(svc)
	// The Ingresses whose backend is this Service see it change.
	e.reconcileIngressesLocked(svc.ClusterID)
	return nil
}

// BreakApplication makes every deployment of the application or container
// id fail with reason (its pods do not start), until RepairApplication.
// The version already running stays.
func (e *Engine) BreakApplication(id, reason string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.broken == nil {
		e.broken = map[string]string{}
	}
	e.broken[id] = reason
}

// RepairApplication lets the deployments of the application id succeed
// again.
func (e *Engine) RepairApplication(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.broken, id)
}

// serviceAnnotations are the annotations Qovery puts on an application's
// Service: those of its annotations groups scoped to SERVICES.
func serviceAnnotations(svc qoveryapi.ServiceSnapshot) map[string]string {
	ann := map[string]string{}
	for _, g := range svc.AnnotationsGroups {
		if !hasScope(g.Scopes, "SERVICES") {
			continue
		}
		for _, a := range g.Annotations {
			ann[a.Key] = a.Value
		}
	}
	return ann
}

// appHostname is the tailnet hostname of an application's Service: the
// hostname annotation, else NAMESPACE-SERVICE.
func appHostname(svc qoveryapi.ServiceSnapshot, ann map[string]string) string {
	if h, ok := ann[AnnotationHostname]; ok {
		return h
	}
	return svc.Namespace + "-" + svc.KubernetesName
}

// reconcileAppLocked creates, keeps or removes the proxy of an
// application according to the annotations on its Service, as the
// operator reconciles a Service annotated tailscale.com/expose:
//
//   - no "true" expose annotation (the group was detached, or says
//     otherwise): the proxy and its device go away, and so does the
//     Tailscale Service the operator made for it;
//   - no port: Qovery renders no Service, so there is nothing to expose;
//   - no operator on the cluster: nothing watches the Service;
//   - tailscale.com/proxy-group: the Service is served by the ProxyGroup's
//     devices as the Tailscale Service svc:HOSTNAME (see
//     reconcileAppThroughProxyGroupLocked);
//   - an invalid hostname or tag: the operator refuses the Service
//     (INVALIDSERVICE) and leaves a proxy it made before as it is;
//   - a ProxyClass (label or annotation tailscale.com/proxy-class, else
//     the operator's default) that is missing or not Ready: the operator
//     waits, and makes no proxy;
//   - otherwise one proxy device named by tailscale.com/hostname (default
//     NAMESPACE-SERVICE) with the requested tags (default the operator's
//     proxy tags). The operator mints its auth key with its OAuth client,
//     whose tags must own each of them; otherwise the proxy fails on its
//     own (the Service's condition says why) and no device appears.
//
// A proxy keeps the device its state Secret names: a new hostname renames
// it, and its tags stay those of its first auth key. A device removed from
// the tailnet by hand comes back at the next reconciliation.
func (e *Engine) reconcileAppLocked(svc qoveryapi.ServiceSnapshot) {
	ann := serviceAnnotations(svc)
	exposed := ann[AnnotationExpose] == "true"
	if exposed && len(svc.Ports) == 0 {
		e.logf("application %s declares no port: Qovery creates no Kubernetes Service, nothing to expose", svc.Name)
		exposed = false
	}
	if !exposed {
		_, proxied := e.proxies[svc.ID]
		_, served := e.appServices[svc.ID]
		if (proxied || served) && !e.runningLocked(svc.ClusterID) {
			e.logf("application %s: no Tailscale operator runs on cluster %s to clean up its proxy", svc.Name, svc.ClusterID)
			return
		}
		e.unexposeLocked(svc.ID)
		return
	}
	op, ok := e.operators[svc.ClusterID]
	if !ok || !deviceExists(e.tailnet, op.DeviceID) {
		e.logf("application %s: no Tailscale operator runs on cluster %s, the annotation has no effect", svc.Name, svc.ClusterID)
		return
	}
	hostname := appHostname(svc, ann)
	what := fmt.Sprintf("Service %s/%s", svc.Namespace, svc.KubernetesName)
	if pg, set := ann[AnnotationProxyGroup]; set && pg == "" && !e.compat.LenientAnnotations {
		// The single-proxy reconciler skips a Service with the
		// annotation, and the ProxyGroup's reconciler one without a name.
		e.logf("%s: annotation %s is empty: no reconciler serves the Service", what, AnnotationProxyGroup)
		return
	}
	if pg := ann[AnnotationProxyGroup]; pg != "" {
		e.removeProxy(svc.ID)
		e.reconcileAppThroughProxyGroupLocked(op, svc, ann, pg, hostname)
		return
	}
	e.dropAppServiceLocked(op, svc.ID)
	if err := tailnetapi.CheckDNSLabel(hostname); err != nil {
		if _, named := ann[AnnotationHostname]; named {
			e.logf("%s: INVALIDSERVICE: unable to provision proxy resources: invalid Service: invalid Tailscale hostname specified %q: %v", what, hostname, err)
		} else {
			e.logf("%s: INVALIDSERVICE: unable to provision proxy resources: invalid Service: invalid Tailscale hostname %q, use %q annotation to override: %v",
				what, hostname, AnnotationHostname, err)
		}
		if e.compat.ProxyNewDevice {
			e.removeProxy(svc.ID)
		}
		return
	}
	tags := op.ProxyTags
	if v, set := ann[AnnotationTags]; set && (v != "" || !e.compat.LenientAnnotations) {
		// Validation trims each tag; the auth key is requested with
		// the tags as split.
		tags = strings.Split(v, ",")
		if e.compat.LenientAnnotations {
			tags = tagList(v, defaultProxyTag)
		}
		for _, t := range tags {
			if !validTag(strings.TrimSpace(t)) {
				e.logf("%s: INVALIDSERVICE: invalid tag %q in %s: a tag is \"tag:\" then a letter, then letters, digits or dashes",
					what, t, AnnotationTags)
				if e.compat.ProxyNewDevice {
					e.removeProxy(svc.ID)
				}
				return
			}
		}
	}
	if !e.proxyClassAllowsLocked(what, kindService, op, serviceProxyClass(op, ann, nil)) {
		return
	}
	if p, ok := e.proxies[svc.ID]; ok && deviceExists(e.tailnet, p.DeviceID) {
		switch {
		case p.Hostname == hostname:
			// The proxy's tags were fixed when its auth key was made.
			return
		case !e.compat.ProxyNewDevice:
			e.tailnet.RenameDevice(p.DeviceID, hostname)
			p.Hostname = hostname
			return
		}
		e.removeProxy(svc.ID)
	}
	if err := e.mintLocked(op, tags, e.compat.OperatorOwnsProxyTags); err != nil {
		e.logf("%s: ProxyFailed: failed to provision: failed to create or get API key secret: %v (no device for proxy %s)", what, err, hostname)
		return
	}
	e.noteSharedHostnameLocked(what, hostname)
	dev := e.tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: hostname, Tags: tags, OS: "linux"})
	e.proxies[svc.ID] = &Proxy{ApplicationID: svc.ID, ClusterID: svc.ClusterID, Hostname: hostname, Tags: tags, DeviceID: dev.ID}
}

// noteSharedHostnameLocked logs that a new device's hostname is taken.
func (e *Engine) noteSharedHostnameLocked(what, hostname string) {
	for _, d := range e.tailnet.Devices() {
		if strings.EqualFold(d.Hostname, hostname) {
			e.logf("%s: hostname %s is already used by device %s on the tailnet; the proxy gets a suffixed MagicDNS name", what, hostname, d.ID)
		}
	}
}

// mintLocked checks that the operator could mint an auth key with tags
// now: with its OAuth client (the tailnet's own rules for POST /keys), or,
// with byOperatorTags, the earlier rule that the operator device's tags
// own each tag.
func (e *Engine) mintLocked(op *Operator, tags []string, byOperatorTags bool) error {
	if byOperatorTags {
		body, _ := e.tailnet.Policy()
		pol, perr := aclcheck.Parse(body)
		if perr != nil {
			return fmt.Errorf("the tailnet policy is invalid: %s", perr.Message)
		}
		for _, t := range tags {
			if !anyOwns(pol, op.Tags, t) {
				return fmt.Errorf("requested tags [%s] are invalid or not permitted (the operator's tags %v do not own %s)", strings.Join(tags, ","), op.Tags, t)
			}
		}
		return nil
	}
	c, err := e.callerLocked(op)
	if err != nil {
		return err
	}
	return c.CheckAuthKey(tags)
}

// callerLocked is the operator's API client.
func (e *Engine) callerLocked(op *Operator) (*tailnetapi.Caller, error) {
	if op.audience != "" {
		return e.workloadCallerLocked(op.ClusterID, op.Namespace, op.OAuthClient, op.audience)
	}
	return e.tailnet.Caller(op.OAuthClient, op.secret)
}

// unexposeLocked removes what the operator made for an application.
func (e *Engine) unexposeLocked(appID string) {
	e.removeProxy(appID)
	if app, ok := e.apps[appID]; ok {
		if op := e.operators[app.ClusterID]; op != nil {
			e.dropAppServiceLocked(op, appID)
			return
		}
	}
	delete(e.appServices, appID)
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
