package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

func dnsConfigValues(t *testing.T, d manifest.DNSConfig) string {
	t.Helper()
	v, err := manifest.RenderDNSConfig(d)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func dnsConfigNamed(t *testing.T, e *cluster.Engine, name string) cluster.DNSConfig {
	t.Helper()
	for _, d := range e.DNSConfigs() {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no DNSConfig %s on the cluster (events %q)", name, e.Events())
	return cluster.DNSConfig{}
}

// The operator deploys one nameserver and reports its Service's IP in the
// DNSConfig's status; an upgrade rewrites the Deployment and keeps the IP.
func TestDNSConfig_nameserver(t *testing.T) {
	l := newLab(t, labPolicy)
	svc := release("dns", dnsConfigValues(t, manifest.DNSConfig{Name: "ts-dns"}))
	l.deploy(svc)
	d := dnsConfigNamed(t, l.engine, "ts-dns")
	ns, ok := l.engine.NameserverOf(labCluster)
	if !ok || d.NameserverIP == "" || d.NameserverIP != ns.IP || !d.Ready || d.Reason != cluster.ReasonNameserverCreated {
		t.Fatalf("DNSConfig %+v, nameserver %+v", d, ns)
	}
	if ns.Image != "tailscale/k8s-nameserver:stable" || ns.Replicas != 1 || ns.Owner != "ts-dns" || ns.Namespace != l.operator.Namespace {
		t.Errorf("nameserver %+v", ns)
	}
	ip := ns.IP
	l.deploy(release("dns", dnsConfigValues(t, manifest.DNSConfig{Name: "ts-dns", ImageRepo: "ghcr.io/acme/ns", ImageTag: "v1", Replicas: replicas(3)})))
	ns, _ = l.engine.NameserverOf(labCluster)
	if ns.IP != ip || ns.Image != "ghcr.io/acme/ns:v1" || ns.Replicas != 3 {
		t.Errorf("after the upgrade: nameserver %+v, want IP %s", ns, ip)
	}
	l.remove(svc)
	if _, ok := l.engine.NameserverOf(labCluster); ok || len(l.engine.DNSConfigs()) != 0 {
		t.Errorf("the nameserver outlived its DNSConfig")
	}
}

// A static cluster IP is the Service's when it is free and in the
// Service range; otherwise the operator fails to make the Service and
// reports no IP, and sets no condition.
func TestDNSConfig_clusterIP(t *testing.T) {
	l := newLab(t, labPolicy)
	l.deploy(release("dns", dnsConfigValues(t, manifest.DNSConfig{Name: "ts-dns", ClusterIP: "10.96.0.53"})))
	if d := dnsConfigNamed(t, l.engine, "ts-dns"); d.NameserverIP != "10.96.0.53" || d.ClusterIP != "10.96.0.53" {
		t.Errorf("DNSConfig %+v", d)
	}
	l.remove(release("dns"))

	l.deploy(release("dns", dnsConfigValues(t, manifest.DNSConfig{Name: "ts-dns", ClusterIP: "10.0.0.53"})))
	if d := dnsConfigNamed(t, l.engine, "ts-dns"); d.NameserverIP != "" || d.Reason != "" {
		t.Errorf("DNSConfig %+v", d)
	}
	l.event("DNSConfig ts-dns: error provisioning nameserver resources: error reconciling Service: Service \"nameserver\" is invalid: " +
		"spec.clusterIPs: Invalid value: []string{\"10.0.0.53\"}: failed to allocate IP 10.0.0.53: provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/12")
	l.remove(release("dns"))

	l.engine.AllocateClusterIP(labCluster, "10.96.0.54")
	l.deploy(release("dns", dnsConfigValues(t, manifest.DNSConfig{Name: "ts-dns", ClusterIP: "10.96.0.54"})))
	if d := dnsConfigNamed(t, l.engine, "ts-dns"); d.NameserverIP != "" {
		t.Errorf("DNSConfig %+v", d)
	}
	l.event("provided IP is already allocated")
}

// A second DNSConfig is not refused: each reconciliation of either while
// both exist records a Warning event on it, both report the one
// nameserver's IP, and the Deployment follows the first, which owns it.
// When the owner goes, the nameserver goes with it; the other keeps the
// stale IP until it is reconciled again.
func TestDNSConfig_second(t *testing.T) {
	l := newLab(t, labPolicy)
	first := release("dns-a", dnsConfigValues(t, manifest.DNSConfig{Name: "a"}))
	l.deploy(first)
	l.deploy(release("dns-b", dnsConfigValues(t, manifest.DNSConfig{Name: "b", ImageTag: "v2"})))
	a, b := dnsConfigNamed(t, l.engine, "a"), dnsConfigNamed(t, l.engine, "b")
	ns, _ := l.engine.NameserverOf(labCluster)
	warning := "Warning MultipleDNSConfigsPresent: " + cluster.MessageMultipleDNSConfigs
	if !slices.Contains(a.Events, warning) || !slices.Contains(b.Events, warning) {
		t.Errorf("events: a %q, b %q", a.Events, b.Events)
	}
	if !b.Ready || b.NameserverIP != a.NameserverIP || ns.Owner != "a" || ns.Image != "tailscale/k8s-nameserver:stable" {
		t.Errorf("b %+v, a %+v, nameserver %+v", b, a, ns)
	}
	l.event("DNSConfig b: invalid cluster configuration: more than one tailscale.com/dnsconfigs found")
	stale := b.NameserverIP
	l.remove(first)
	if _, ok := l.engine.NameserverOf(labCluster); ok {
		t.Fatal("the nameserver outlived the DNSConfig that owns it")
	}
	if b := dnsConfigNamed(t, l.engine, "b"); b.NameserverIP != stale {
		t.Errorf("b reports %s, want the stale %s", b.NameserverIP, stale)
	}
	l.deploy(l.operator)
	ns, ok := l.engine.NameserverOf(labCluster)
	if b := dnsConfigNamed(t, l.engine, "b"); !ok || ns.Owner != "b" || b.NameserverIP != ns.IP || ns.IP == stale {
		t.Errorf("after the operator's restart: b %+v, nameserver %+v", b, ns)
	}
}

// The API server drops the fields that the DNSConfig CRD of the
// operator's chart does not define, and refuses what it does not accept.
func TestDNSConfig_crdOfTheChart(t *testing.T) {
	ts := tailnetapi.New(tailnetapi.Options{InitialPolicy: []byte(labPolicy)})
	e := cluster.New(ts)
	id, secret := ts.SeedOAuthClient("", "", []string{"devices:core", "auth_keys"}, []string{"tag:k8s-operator"})
	op := qoveryapi.ServiceSnapshot{Kind: "HELM", ID: "helm-operator", ClusterID: labCluster, Namespace: "z1234abcd-tailscale",
		ChartName: cluster.OperatorChart, ChartVersion: "1.84.3", AllowClusterWideResources: true,
		ValuesFiles: []qoveryapi.ValuesFile{{Name: "v", Content: fmt.Sprintf("oauth: {clientId: %s, clientSecret: %s}\n", id, secret)}}}
	if err := e.Deploy(context.Background(), op); err != nil {
		t.Fatal(err)
	}
	l := &lab{t: t, tailnet: ts, engine: e}
	l.deploy(release("dns", dnsConfigValues(t, manifest.DNSConfig{Name: "ts-dns", Replicas: replicas(2), ClusterIP: "10.96.0.53"})))
	d := dnsConfigNamed(t, e, "ts-dns")
	ns, _ := e.NameserverOf(labCluster)
	if d.Replicas != -1 || d.ClusterIP != "" || ns.IP == "10.96.0.53" || ns.Replicas != 1 || ns.Image != "tailscale/k8s-nameserver:unstable" {
		t.Errorf("chart 1.84: DNSConfig %+v, nameserver %+v", d, ns)
	}
	for _, tc := range []struct{ spec, want string }{
		{"{}", "spec.nameserver: Required value"},
		{"{nameserver: {replicas: -1}}", "spec.nameserver.replicas: Invalid value: -1"},
		{"{nameserver: {image: {tag: 5}}}", "spec.nameserver.image.tag: Invalid value"},
	} {
		l := newLab(t, labPolicy)
		values := "manifests:\n- apiVersion: tailscale.com/v1alpha1\n  kind: DNSConfig\n  metadata: {name: ts-dns}\n  spec: " + tc.spec + "\n"
		err := l.engine.Deploy(context.Background(), release("bad", values))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("spec %s: %v, want %q", tc.spec, err, tc.want)
		}
	}
}
