package cluster

import (
	"fmt"
	"sort"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
)

// Finalizers and CRDs. The operator puts its finalizer on every object it
// serves (an exposed Service, a Connector, a ProxyGroup, an egress
// Service) and, when the object goes, removes the proxy's devices through
// the Tailscale API, then the finalizer. With no operator running, nothing
// removes the finalizer: a deleted object stays Terminating and its
// devices stay on the tailnet, and a Service whose annotations were
// removed keeps its proxy. The operator's CRDs are part of its release:
// uninstalling it deletes them, which deletes every custom resource; those
// with the finalizer keep the CRD deletion wedged, and a new install of
// the operator on that cluster fails. A running operator finishes the
// cleanup of the Terminating objects it can see when it starts.

// Finalizer is the operator's finalizer.
const Finalizer = "tailscale.com/finalizer"

// crdNames are the CRDs of the kinds whose objects carry the finalizer,
// as a wedged deletion names them.
var crdNames = map[string]string{kindConnector: "connectors.tailscale.com", kindProxyGroup: "proxygroups.tailscale.com"}

// stuckService is an application's Service deleted with the finalizer on
// while no operator ran.
type stuckService struct {
	app qoveryapi.ServiceSnapshot
}

// runningLocked reports whether an operator runs on the cluster, so that
// deleted objects lose their finalizer.
func (e *Engine) runningLocked(cluster string) bool {
	if e.compat.CleanupWithoutOperator {
		return true
	}
	_, ok := e.operators[cluster]
	return ok
}

// markFinalizersLocked records that the running operator of the cluster
// has put its finalizer on the objects it serves.
func (e *Engine) markFinalizersLocked(cluster string) {
	if _, ok := e.operators[cluster]; !ok {
		return
	}
	for k, o := range e.objects {
		if k.cluster == cluster && (o.connector != nil || o.proxyGroup != nil || o.egress != nil && o.egress.Valid || o.ingress != nil && o.ingress.ClassName == IngressClassTailscale) {
			o.finalizer = true
		}
	}
}

// deleteObjectLocked deletes an object: at once when it carries no
// finalizer or an operator runs to clean it up, otherwise it stays
// Terminating with its devices.
func (e *Engine) deleteObjectLocked(k objectKey) {
	o := e.objects[k]
	if o.finalizer && !e.runningLocked(k.cluster) {
		delete(e.objects, k)
		e.terminating[k] = o
		return
	}
	e.removeObjectLocked(k)
}

// uninstallCRDsLocked deletes the CRDs of the operator release of a
// cluster with it: every custom resource goes, and those that carry the
// finalizer stay Terminating, the CRD deletion with them.
func (e *Engine) uninstallCRDsLocked(cluster string) {
	for k, o := range e.objects {
		if k.cluster != cluster || k.group != tailscaleGroup {
			continue
		}
		if o.finalizer {
			delete(e.objects, k)
			e.terminating[k] = o
			continue
		}
		e.removeObjectLocked(k)
	}
}

// wedgedCRDsLocked returns the CRDs of a cluster whose deletion waits for
// Terminating custom resources, with those resources.
func (e *Engine) wedgedCRDsLocked(cluster string) (crds []string, objects []string) {
	seen := map[string]bool{}
	for k := range e.terminating {
		if k.cluster != cluster || k.group != tailscaleGroup {
			continue
		}
		if n := crdNames[k.kind]; n != "" && !seen[n] {
			seen[n] = true
			crds = append(crds, n)
		}
		objects = append(objects, k.kind+" "+k.name)
	}
	sort.Strings(crds)
	sort.Strings(objects)
	return crds, objects
}

// checkCRDsFreeLocked fails an operator install on a cluster whose
// previous operator's CRDs are still being deleted, as Helm does.
func (e *Engine) checkCRDsFreeLocked(cluster string) error {
	crds, objs := e.wedgedCRDsLocked(cluster)
	if len(crds) == 0 {
		return nil
	}
	return fmt.Errorf("helm upgrade --install failed: failed to install CRD crds/%s.yaml: object is being deleted: "+
		"customresourcedefinitions.apiextensions.k8s.io %q already exists (its deletion waits for the finalizer %s of %s, "+
		"which no operator runs to remove)", crds[0], crds[0], Finalizer, strings.Join(objs, ", "))
}

// finishCleanupLocked is a starting operator removing what it finds
// Terminating on its cluster (the Services; custom resources cannot be
// there, as their CRDs block the install): their devices, then the
// finalizer.
func (e *Engine) finishCleanupLocked(cluster string) {
	for k, o := range e.terminating {
		if k.cluster != cluster || k.group == tailscaleGroup {
			continue
		}
		e.objects[k] = o
		e.removeObjectLocked(k)
		delete(e.terminating, k)
	}
	for id, s := range e.stuckServices {
		if s.app.ClusterID != cluster {
			continue
		}
		e.apps[id] = s.app
		e.unexposeLocked(id)
		delete(e.apps, id)
		delete(e.stuckServices, id)
	}
}

// deleteAppLocked deletes an application's Service: the operator cleans
// up what it made for it, or, with none running, the Service stays
// Terminating and its proxy stays.
func (e *Engine) deleteAppLocked(svc qoveryapi.ServiceSnapshot) {
	app, known := e.apps[svc.ID]
	_, proxied := e.proxies[svc.ID]
	_, served := e.appServices[svc.ID]
	if known && (proxied || served) && !e.runningLocked(app.ClusterID) {
		e.stuckServices[svc.ID] = stuckService{app: app}
		delete(e.apps, svc.ID)
		return
	}
	e.unexposeLocked(svc.ID)
	delete(e.apps, svc.ID)
}

// RemoveFinalizers is what a person does with kubectl on a cluster whose
// objects are stuck: remove the operator's finalizer from every
// Terminating object, which lets them and the wedged CRDs go. Their
// devices stay on the tailnet.
func (e *Engine) RemoveFinalizers(clusterID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k := range e.terminating {
		if k.cluster == clusterID {
			delete(e.terminating, k)
		}
	}
	for id, s := range e.stuckServices {
		if s.app.ClusterID == clusterID {
			delete(e.stuckServices, id)
			delete(e.proxies, id)
			delete(e.appServices, id)
		}
	}
}

// Stuck describes the objects that stay Terminating because the
// operator's finalizer is on them and no operator runs, and the CRDs whose
// deletion waits for them, sorted: "Connector homelab on cluster C
// (Terminating)", "CustomResourceDefinition connectors.tailscale.com on
// cluster C (Terminating)". It is empty after a clean teardown.
func (e *Engine) Stuck() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	clusters := map[string]bool{}
	for k := range e.terminating {
		clusters[k.cluster] = true
		name := k.name
		if k.namespace != "" {
			name = k.namespace + "/" + k.name
		}
		out = append(out, fmt.Sprintf("%s %s on cluster %s (Terminating)", k.kind, name, k.cluster))
	}
	for _, s := range e.stuckServices {
		out = append(out, fmt.Sprintf("Service %s/%s on cluster %s (Terminating)", s.app.Namespace, s.app.KubernetesName, s.app.ClusterID))
	}
	for c := range clusters {
		crds, _ := e.wedgedCRDsLocked(c)
		for _, n := range crds {
			out = append(out, fmt.Sprintf("CustomResourceDefinition %s on cluster %s (Terminating)", n, c))
		}
	}
	sort.Strings(out)
	return out
}

// Leftovers describes what the operator still runs for objects whose
// annotations are gone, with no operator to clean up: the proxies of
// applications that are no longer exposed. It is empty after a clean
// teardown.
func (e *Engine) Leftovers() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for id, p := range e.proxies {
		app, ok := e.apps[id]
		if ok && serviceAnnotations(app)[AnnotationExpose] == "true" {
			continue
		}
		if _, stuck := e.stuckServices[id]; stuck {
			continue
		}
		out = append(out, fmt.Sprintf("proxy %s of application %s on cluster %s", p.Hostname, id, p.ClusterID))
	}
	sort.Strings(out)
	return out
}
