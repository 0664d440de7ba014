package cluster

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

// An application exposed through an ingress ProxyGroup gets no device of
// its own: the operator makes the Tailscale Service svc:HOSTNAME through
// the API, and the ProxyGroup's replicas host it.

const (
	// ownerAnnotation holds the operators that manage a Tailscale
	// Service, by the stable node ID of their device.
	ownerAnnotation = "tailscale.com/owner-references"
	// managedServiceComment is the comment the operator puts on the
	// Tailscale Services it manages.
	managedServiceComment = "This Tailscale Service is managed by the Tailscale Kubernetes Operator, do not modify"
)

// ownerRefs is the content of the owner annotation.
type ownerRefs struct {
	OwnerRefs []ownerRef `json:"ownerRefs,omitempty"`
}

type ownerRef struct {
	OperatorID string          `json:"operatorID,omitempty"`
	Resource   json.RawMessage `json:"resource,omitempty"`
}

func parseOwners(v tailnetapi.Service) (ownerRefs, error) {
	var o ownerRefs
	raw := v.Annotations[ownerAnnotation]
	if raw == "" {
		return o, nil
	}
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		return o, fmt.Errorf("error parsing Tailscale Service owner annotation: %w", err)
	}
	return o, nil
}

// ownerAnnotations returns the annotations of the Tailscale Service with
// this operator among its owners, or why the operator may not take it (in
// the operator's words): a Service without owners was made by someone
// else, one owned by a ProxyGroup serves an Ingress.
func ownerAnnotations(operatorID string, existing *tailnetapi.Service) (map[string]string, string) {
	own := ownerRef{OperatorID: operatorID}
	if existing == nil {
		b, _ := json.Marshal(ownerRefs{OwnerRefs: []ownerRef{own}})
		return map[string]string{ownerAnnotation: string(b)}, ""
	}
	o, err := parseOwners(*existing)
	if err != nil {
		return nil, err.Error()
	}
	if len(o.OwnerRefs) == 0 {
		return nil, fmt.Sprintf("Tailscale Service %s exists, but does not contain owner annotation with owner references; not proceeding as this is likely a resource created by something other than the Tailscale Kubernetes operator", existing.Name)
	}
	if slices.ContainsFunc(o.OwnerRefs, func(r ownerRef) bool { return r.OperatorID == operatorID && r.Resource == nil }) {
		return existing.Annotations, ""
	}
	if o.OwnerRefs[0].Resource != nil {
		return nil, fmt.Sprintf("Tailscale Service %s is owned by another resource: %s; cannot be reused for an Ingress", existing.Name, o.OwnerRefs[0].Resource)
	}
	o.OwnerRefs = append(o.OwnerRefs, own)
	b, _ := json.Marshal(o)
	out := map[string]string{}
	for k, v := range existing.Annotations {
		out[k] = v
	}
	out[ownerAnnotation] = string(b)
	return out, ""
}

// proxyGroupAvailableLocked reports the ProxyGroupAvailable condition: at
// least one replica's device is on the tailnet.
func (e *Engine) proxyGroupAvailableLocked(g *ProxyGroup) bool {
	for _, d := range g.Devices {
		if deviceExists(e.tailnet, d.DeviceID) {
			return true
		}
	}
	return false
}

// reconcileAppThroughProxyGroupLocked is the operator's reconciler of
// Services exposed through a ProxyGroup:
//
//   - the ProxyGroup must exist (the Service waits for it) and be
//     available (a replica is up), or nothing happens yet;
//   - the Service must be valid: a ProxyGroup of type ingress, a valid
//     hostname and tags, and no other exposed Service of the cluster
//     served through a ProxyGroup under the same hostname (both are
//     refused);
//   - the operator reads svc:HOSTNAME through the API, which needs the
//     services scope of its OAuth client; a Service someone else made (no
//     owner references) is refused, one another operator made is shared;
//   - it creates or updates the Service with the tags annotation or its
//     proxy tags, and the ProxyGroup's replicas host it.
//
// With Compat.ProxyGroupIngressWithoutService the ProxyGroup's existence
// and type are all that count, and no Tailscale Service is made.
func (e *Engine) reconcileAppThroughProxyGroupLocked(op *Operator, svc qoveryapi.ServiceSnapshot, ann map[string]string, pgName, hostname string) {
	what := fmt.Sprintf("Service %s/%s", svc.Namespace, svc.KubernetesName)
	name := "svc:" + hostname
	group := e.proxyGroupLocked(svc.ClusterID, pgName)
	if group == nil {
		e.logf("%s: cannot be served by ProxyGroup %q as Tailscale Service %s: ProxyGroup %q does not exist on cluster %s",
			what, pgName, name, pgName, svc.ClusterID)
		return
	}
	if e.compat.ProxyGroupIngressWithoutService {
		if group.Type != ProxyGroupTypeIngress {
			e.logf("%s: cannot be served by ProxyGroup %q as Tailscale Service %s: ProxyGroup %q is of type %q but must be of type %q",
				what, pgName, name, pgName, group.Type, ProxyGroupTypeIngress)
			return
		}
		e.logf("%s: served by ProxyGroup %q as Tailscale Service %s; no proxy device of its own", what, pgName, name)
		return
	}
	if !e.proxyGroupAvailableLocked(group) {
		e.logf("%s: ProxyGroup %q is not (yet) ready: none of its replicas is on the tailnet; Tailscale Service %s waits", what, pgName, name)
		return
	}
	var invalid []string
	if group.Type != ProxyGroupTypeIngress {
		invalid = append(invalid, fmt.Sprintf("ProxyGroup %q is of type %q but must be of type %q", pgName, group.Type, ProxyGroupTypeIngress))
	}
	if err := tailnetapi.CheckDNSLabel(hostname); err != nil {
		invalid = append(invalid, fmt.Sprintf("invalid Service: invalid Tailscale hostname %q: %v", hostname, err))
	}
	tags := op.ProxyTags
	if v := ann[AnnotationTags]; v != "" {
		tags = tagList(v, defaultProxyTag)
		for _, t := range tags {
			if !validTag(t) {
				invalid = append(invalid, fmt.Sprintf("invalid Service: tailscale.com/tags annotation contains invalid tag %q", t))
			}
		}
	}
	for _, other := range e.appsOnClusterLocked(svc.ClusterID) {
		oann := serviceAnnotations(other)
		if other.ID == svc.ID || oann[AnnotationExpose] != "true" || oann[AnnotationProxyGroup] == "" || len(other.Ports) == 0 {
			continue
		}
		if appHostname(other, oann) == hostname {
			invalid = append(invalid, fmt.Sprintf("found duplicate Service %q for hostname %q - multiple HA Services for the same hostname on the same tailnet are not allowed",
				other.Namespace+"/"+other.KubernetesName, hostname))
		}
	}
	if len(invalid) > 0 {
		e.dropAppServiceLocked(op, svc.ID)
		e.logf("%s: IngressSvcInvalid: %s", what, strings.Join(invalid, "\n"))
		return
	}
	if !e.ensureAppServiceLocked(op, appService{
		key: svc.ID, name: name, hostname: hostname, what: what, tags: tags, ports: []string{"do-not-validate"},
		rename: fmt.Sprintf("a different hostname with the '%s' annotaion", AnnotationHostname),
	}) {
		return
	}
	// The replicas advertise the Service; it carries traffic once the
	// tailnet approves them (tailnetapi.Server.ServiceServed).
	e.tailnet.AdvertiseService(name, group.DeviceIDs())
	e.logf("%s: served by ProxyGroup %q as Tailscale Service %s; no proxy device of its own", what, pgName, name)
}

// appService is a Tailscale Service that the operator makes for an
// application (key, its ID) or an Ingress (key, its serviceKey), served by
// an ingress ProxyGroup.
type appService struct {
	key, name, hostname, what string
	tags, ports               []string
	// rename is the operator's advice for a name another operator owns:
	// "choose ..." what.
	rename string
	// comparePorts: a Service whose ports differ is written again.
	comparePorts bool
}

// ensureAppServiceLocked makes the Tailscale Service s as the operator
// does for both kinds: it gives up the one the key had under another name,
// refuses a Service that another operator owns, writes it when it is
// missing or differs, and records it. It reports whether the Service is
// there, logging why not.
func (e *Engine) ensureAppServiceLocked(op *Operator, s appService) bool {
	if prev := e.appServices[s.key]; prev != "" && prev != s.name {
		e.dropAppServiceLocked(op, s.key)
	}
	c, err := e.callerLocked(op)
	if err != nil {
		e.logf("%s: failed to get tailscale client: %v", s.what, err)
		return false
	}
	var existing *tailnetapi.Service
	switch v, err := c.GetService(s.name); {
	case err == nil:
		existing = &v
	case !tailnetapi.IsNotFound(err):
		e.logf("%s: error getting Tailscale Service %q: %v", s.what, s.hostname, err)
		return false
	}
	annotations, refused := ownerAnnotations(op.NodeID, existing)
	if refused != "" {
		e.logf("%s: InvalidTailscaleService: error ensuring ownership of Tailscale Service %s: %s. To proceed, you can either manually delete the existing "+
			"Tailscale Service or choose %s", s.what, s.hostname, refused, s.rename)
		return false
	}
	want := tailnetapi.Service{Name: s.name, Tags: s.tags, Ports: s.ports, Comment: managedServiceComment, Annotations: annotations}
	if existing == nil || !slices.Equal(existing.Tags, s.tags) || (s.comparePorts && !slices.Equal(existing.Ports, want.Ports)) ||
		existing.Annotations[ownerAnnotation] != annotations[ownerAnnotation] {
		if _, err := c.PutService(want); err != nil {
			e.logf("%s: error creating Tailscale Service: %v", s.what, err)
			return false
		}
	}
	e.appServices[s.key] = s.name
	return true
}

// dropAppServiceLocked gives up the Tailscale Service the operator made
// for an application: deleted when the operator is its only owner,
// otherwise the operator's owner reference is removed.
func (e *Engine) dropAppServiceLocked(op *Operator, appID string) {
	name := e.appServices[appID]
	if name == "" {
		return
	}
	delete(e.appServices, appID)
	c, err := e.callerLocked(op)
	if err != nil {
		e.logf("Tailscale Service %s: cannot clean up: %v", name, err)
		return
	}
	v, err := c.GetService(name)
	switch {
	case tailnetapi.IsNotFound(err):
		return
	case err != nil:
		e.logf("Tailscale Service %s: cannot clean up: %v", name, err)
		return
	}
	o, err := parseOwners(v)
	if err != nil {
		e.logf("Tailscale Service %s: cannot clean up: %v", name, err)
		return
	}
	i := slices.IndexFunc(o.OwnerRefs, func(r ownerRef) bool { return r.OperatorID == op.NodeID })
	switch {
	case i < 0:
		return
	case len(o.OwnerRefs) == 1:
		err = c.DeleteService(name)
	default:
		o.OwnerRefs = slices.Delete(o.OwnerRefs, i, i+1)
		b, _ := json.Marshal(o)
		v.Annotations[ownerAnnotation] = string(b)
		_, err = c.PutService(v)
	}
	if err != nil {
		e.logf("Tailscale Service %s: cannot clean up: %v", name, err)
	}
}

// appsOnClusterLocked returns the applications deployed on a cluster, in
// a stable order.
func (e *Engine) appsOnClusterLocked(cluster string) []qoveryapi.ServiceSnapshot {
	var out []qoveryapi.ServiceSnapshot
	for _, a := range e.apps {
		if a.ClusterID == cluster {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b qoveryapi.ServiceSnapshot) int { return strings.Compare(a.ID, b.ID) })
	return out
}
