package cluster_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

// stuck fails unless the engine reports exactly these stuck objects.
func (l *lab) stuck(want ...string) {
	l.t.Helper()
	if got := l.engine.Stuck(); !slices.Equal(got, want) {
		l.t.Fatalf("stuck objects %q, want %q", got, want)
	}
}

// TestFinalizers_operatorUninstalledFirst: a Connector deleted after its
// operator stays Terminating with its device, the CRDs of the uninstalled
// operator stay wedged, and installing the operator again fails until a
// person removes the finalizers.
func TestFinalizers_operatorUninstalledFirst(t *testing.T) {
	l := newLab(t, labPolicy)
	svc := release("lab", connectorValues(t, manifest.Connector{Name: "homelab", Hostname: "homelab", SubnetRoutes: []string{"10.0.0.0/8"}}))
	l.deploy(svc)
	l.device("homelab", "tag:k8s")
	l.stuck()

	l.remove(l.operator)
	l.device("homelab", "tag:k8s")
	l.stuck("Connector homelab on cluster "+labCluster+" (Terminating)",
		"CustomResourceDefinition connectors.tailscale.com on cluster "+labCluster+" (Terminating)")
	if got := l.engine.Connectors(); len(got) != 0 {
		t.Fatalf("the Connector went with its CRD, yet the engine lists %+v", got)
	}
	// The manifests release no longer finds its Connector; its deletion
	// changes nothing.
	l.remove(svc)
	l.device("homelab", "tag:k8s")

	err := l.engine.Deploy(context.Background(), l.operator)
	if err == nil || !strings.Contains(err.Error(), `object is being deleted: customresourcedefinitions.apiextensions.k8s.io "connectors.tailscale.com" already exists`) ||
		!strings.Contains(err.Error(), cluster.Finalizer) {
		t.Fatalf("reinstalling the operator: %v", err)
	}
	if len(l.engine.Operators()) != 0 {
		t.Fatalf("an operator runs: %+v", l.engine.Operators())
	}

	l.engine.RemoveFinalizers(labCluster)
	l.stuck()
	// kubectl removes the finalizer, not the device.
	l.device("homelab", "tag:k8s")
	l.deploy(l.operator)
}

// TestFinalizers_objectsDeletedFirst: deleting what the operator serves
// before the operator leaves nothing behind.
func TestFinalizers_objectsDeletedFirst(t *testing.T) {
	l := newLab(t, labPolicy)
	pg := release("pg", proxyGroupValues(t, manifest.ProxyGroup{Name: "ingress", Type: manifest.ProxyGroupIngress, Replicas: replicas(2)}))
	egress := release("db", serviceYAML("db", "ExternalName", false, cluster.AnnotationTailnetFQDN, "db.tail1234.ts.net"))
	l.deploy(pg)
	l.deploy(egress)
	if got := l.hostnames(); len(got) != 3 {
		t.Fatalf("want two replicas and an egress proxy, got %q (events %q)", got, l.engine.Events())
	}
	l.remove(pg)
	l.remove(egress)
	l.remove(l.operator)
	if got := l.hostnames(); len(got) != 0 {
		t.Fatalf("devices left: %q", got)
	}
	l.stuck()
}

// TestFinalizers_egressServiceWithoutOperator: an egress Service deleted
// while no operator runs stays Terminating with its proxy device; the
// next operator finishes its cleanup.
func TestFinalizers_egressServiceWithoutOperator(t *testing.T) {
	l := newLab(t, labPolicy)
	egress := release("db", serviceYAML("db", "ExternalName", false, cluster.AnnotationTailnetFQDN, "db.tail1234.ts.net"))
	l.deploy(egress)
	hostname := labNamespace + "-db"
	l.device(hostname, "tag:k8s")
	l.remove(l.operator)
	l.remove(egress)
	l.device(hostname, "tag:k8s")
	l.stuck("Service " + labNamespace + "/db on cluster " + labCluster + " (Terminating)")

	// A namespaced Service wedges no CRD: the operator installs, and
	// removes the proxy and the finalizer.
	l.deploy(l.operator)
	l.noDevice(hostname)
	l.stuck()
}

// TestFinalizers_compatCleanupWithoutOperator: the earlier simulation
// removed the devices of deleted objects whether or not an operator ran.
func TestFinalizers_compatCleanupWithoutOperator(t *testing.T) {
	l := newLab(t, labPolicy)
	l.engine.SetCompat(cluster.Compat{CleanupWithoutOperator: true})
	svc := release("lab", connectorValues(t, manifest.Connector{Name: "homelab", Hostname: "homelab", SubnetRoutes: []string{"10.0.0.0/8"}}))
	l.deploy(svc)
	l.remove(l.operator)
	l.remove(svc)
	l.noDevice("homelab")
	l.stuck()
}

// TestEgress_tagsAnnotationQuirks: the operator validates trimmed tags but
// requests them as split, and refuses an empty tags annotation; an empty
// proxy-group annotation makes it skip the Service.
func TestEgress_tagsAnnotationQuirks(t *testing.T) {
	l := newLab(t, labPolicy)
	spaced := release("spaced", serviceYAML("spaced", "ExternalName", false, cluster.AnnotationTailnetFQDN, "db.tail1234.ts.net",
		cluster.AnnotationTags, "tag:k8s, tag:k8s-prod"))
	l.deploy(spaced)
	l.noDevice(labNamespace + "-spaced")
	l.event("no device for egress proxy " + labNamespace + "-spaced")
	if s := l.engine.EgressServices(); len(s) != 1 || !s[0].Valid {
		t.Fatalf("the spaced tags pass validation, got %+v", s)
	}

	empty := release("empty", serviceYAML("empty", "ExternalName", false, cluster.AnnotationTailnetFQDN, "db.tail1234.ts.net",
		cluster.AnnotationTags, ""))
	l.deploy(empty)
	l.noDevice(labNamespace + "-empty")
	l.event(`tailscale.com/tags annotation contains invalid tag ""`)

	skipped := release("skipped", serviceYAML("skipped", "ExternalName", false, cluster.AnnotationTailnetFQDN, "db.tail1234.ts.net",
		cluster.AnnotationProxyGroup, ""))
	l.deploy(skipped)
	l.noDevice(labNamespace + "-skipped")
	l.event("annotation tailscale.com/proxy-group is empty")
}
