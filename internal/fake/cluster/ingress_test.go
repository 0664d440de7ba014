package cluster_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
)

// ingressYAML is a values file with one Ingress of class tailscale named
// web whose default backend is port of the web application's Service
// (app-zweb), served at host.
func ingressYAML(port int, host string, annotations ...string) string {
	ann := ""
	for i := 0; i+1 < len(annotations); i += 2 {
		ann += fmt.Sprintf("%q: %q, ", annotations[i], annotations[i+1])
	}
	return fmt.Sprintf("manifests:\n  - {apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: web, annotations: {%s}}, "+
		"spec: {ingressClassName: tailscale, defaultBackend: {service: {name: app-zweb, port: {number: %d}}}, tls: [{hosts: [%s]}]}}\n",
		ann, port, host)
}

// webApp is an application in the lab's manifests namespace, whose
// Service the Ingresses below name.
func webApp() qoveryapi.ServiceSnapshot {
	return qoveryapi.ServiceSnapshot{
		Kind: "APPLICATION", ID: "app-web", Name: "web", ClusterID: labCluster, Namespace: labNamespace, KubernetesName: "app-zweb",
		Ports: []qoveryapi.Port{{Name: "http", InternalPort: 8080, Protocol: "HTTP"}},
	}
}

// ingress returns the Ingress web.
func (l *lab) ingress() cluster.Ingress {
	l.t.Helper()
	for _, g := range l.engine.Ingresses() {
		if g.Name == "web" {
			return g
		}
	}
	l.t.Fatalf("no Ingress web; Ingresses %+v", l.engine.Ingresses())
	return cluster.Ingress{}
}

// With HTTPS certificates on, the operator makes one proxy named after the
// TLS host; its certificate gives the Ingress its status hostname.
func TestIngress_servesHTTPSWithTheTailnetsCertificate(t *testing.T) {
	l := newLab(t, labPolicy)
	l.tailnet.SetHTTPSEnabled(true)
	l.deploy(webApp())
	web := release("web-https", ingressYAML(8080, "web-us"))
	l.deploy(web)
	d := l.device("web-us", "tag:k8s")
	g := l.ingress()
	if g.StatusHostname != "web-us.tail1234.ts.net" || !slices.Equal(g.StatusPorts, []int{443}) || g.DeviceID != d.ID {
		t.Fatalf("Ingress %+v", g)
	}
	if g.Target != "http://app-zweb."+labNamespace+".svc:8080/" || !g.TargetServed {
		t.Fatalf("target %q served %v", g.Target, g.TargetServed)
	}
	certs := l.tailnet.Certificates()
	if len(certs) != 1 || certs[0].Domain != "web-us.tail1234.ts.net" || certs[0].DeviceID != d.ID {
		t.Fatalf("certificates %+v", certs)
	}

	// A new TLS host renames the device, and the proxy gets a
	// certificate for its new name.
	l.deploy(release("web-https", ingressYAML(8080, "web-east", cluster.AnnotationTags, "tag:k8s-prod")))
	if again := l.device("web-east", "tag:k8s"); again.ID != d.ID {
		t.Fatalf("a rename replaced the proxy %s with %s", d.ID, again.ID)
	}
	if g := l.ingress(); g.StatusHostname != "web-east.tail1234.ts.net" {
		t.Fatalf("status hostname %q after the rename", g.StatusHostname)
	}

	// A port the application does not declare: the operator proxies to
	// it anyway, and nothing answers there.
	l.deploy(release("web-https", ingressYAML(9999, "web-east")))
	if g := l.ingress(); g.TargetServed || g.Target != "http://app-zweb."+labNamespace+".svc:9999/" {
		t.Fatalf("Ingress to an undeclared port: %+v", g)
	}

	// Uninstalled, the Ingress takes its proxy with it.
	l.remove(web)
	l.noDevice("web-east")
	if n := len(l.engine.Ingresses()); n != 0 {
		t.Fatalf("%d Ingresses after the uninstall", n)
	}
}

// With HTTPS certificates off (a new tailnet's default) the operator warns,
// makes the proxy all the same, and the proxy's certificate is refused:
// the Ingress gets no status hostname until an admin turns HTTPS on.
func TestIngress_withoutHTTPSTheStatusStaysEmpty(t *testing.T) {
	l := newLab(t, labPolicy)
	l.deploy(webApp())
	l.deploy(release("web-https", ingressYAML(8080, "web-us")))
	l.device("web-us", "tag:k8s")
	if g := l.ingress(); g.StatusHostname != "" || g.StatusPorts != nil {
		t.Fatalf("status without HTTPS: %+v", g)
	}
	l.event("Ingress " + labNamespace + "/web: HTTPSNotEnabled: HTTPS is not enabled on the tailnet; ingress may not work")
	l.event("Ingress " + labNamespace + "/web: proxy web-us: serve: failed to get TLS certificate: your Tailscale account does not support getting TLS certs")
	if n := len(l.tailnet.Certificates()); n != 0 {
		t.Fatalf("%d certificates issued with HTTPS off", n)
	}

	// HTTPS turned on: at the next reconciliation the proxy gets its
	// certificate.
	l.tailnet.SetHTTPSEnabled(true)
	l.deploy(webApp())
	if g := l.ingress(); g.StatusHostname != "web-us.tail1234.ts.net" {
		t.Fatalf("status hostname %q once HTTPS is on", g.StatusHostname)
	}
}

// The backend Service must be in the Ingress's namespace; an Ingress of
// another class or on a ProxyGroup is not the single-proxy reconciler's.
func TestIngress_whatTheOperatorDoesNotServe(t *testing.T) {
	l := newLab(t, labPolicy)
	l.tailnet.SetHTTPSEnabled(true)
	l.deploy(release("web-https", ingressYAML(8080, "web-us")))
	l.noDevice("web-us")
	l.event(`Ingress ` + labNamespace + `/web: InvalidIngressBackend: failed to get service "app-zweb" for path "/": services "app-zweb" not found`)
	l.event("Ingress " + labNamespace + "/web: NoValidBackends: no valid backends")

	// The application deployed in another namespace is not a backend.
	other := webApp()
	other.Namespace = "zother-prod"
	l.deploy(other)
	l.noDevice("web-us")

	// Deployed where the Ingress is, it is.
	l.deploy(webApp())
	l.device("web-us", "tag:k8s")

	// Moved to a ProxyGroup (or to another class), the proxy goes.
	l.deploy(release("web-https", ingressYAML(8080, "web-us", cluster.AnnotationProxyGroup, "ingress-us")))
	l.noDevice("web-us")

	// The API server refuses an Ingress with neither a default backend
	// nor rules.
	err := l.engine.Deploy(t.Context(), release("empty", "manifests:\n  - {apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: empty}, spec: {ingressClassName: tailscale}}\n"))
	if err == nil || err.Error() != `helm upgrade --install failed: failed to create resource: Ingress.networking.k8s.io "empty" is invalid: spec: Invalid value: null: either `+"`defaultBackend` or `rules` must be specified" {
		t.Fatalf("an Ingress without a backend: %v", err)
	}
}

// An Ingress deleted by hand takes its proxy with it; the next deployment
// of its release brings both back.
func TestIngress_deletedByHand(t *testing.T) {
	l := newLab(t, labPolicy)
	l.tailnet.SetHTTPSEnabled(true)
	l.deploy(webApp())
	web := release("web-https", ingressYAML(8080, "web-us"))
	l.deploy(web)
	l.device("web-us", "tag:k8s")
	if !l.engine.DeleteIngress(labNamespace, "web") || l.engine.DeleteIngress(labNamespace, "web") {
		t.Fatal("DeleteIngress did not delete the Ingress once")
	}
	l.noDevice("web-us")
	l.deploy(web)
	l.device("web-us", "tag:k8s")
	if g := l.ingress(); g.StatusHostname != "web-us.tail1234.ts.net" {
		t.Fatalf("status after the redeployment: %+v", g)
	}
}

// On an ingress ProxyGroup the Ingress is the Tailscale Service
// svc:HOSTNAME on port 443, which the replicas advertise; with HTTPS on its
// hosts get the certificate and the Ingress its status hostname. The
// Service goes with the Ingress.
func TestIngress_throughAnIngressProxyGroup(t *testing.T) {
	l := newLabWith(t, labPolicy, []string{"devices:core", "auth_keys", "services"}, "")
	l.deploy(webApp())
	web := release("web-https", ingressYAML(8080, "web-us", cluster.AnnotationProxyGroup, "ingress-us"))
	l.deploy(web)
	l.event(`Ingress ` + labNamespace + `/web: ProxyGroup "ingress-us" does not exist, it may have been deleted.`)

	l.deploy(release("pg", proxyGroupYAML("ingress-us", "{type: egress, replicas: 1}")))
	l.event(`Ingress ` + labNamespace + `/web: InvalidIngressConfiguration: ProxyGroup "ingress-us" is of type "egress" but must be of type "ingress"`)
	l.remove(release("pg"))

	l.deploy(release("pg", proxyGroupYAML("ingress-us", "{type: ingress, replicas: 2}")))
	svcs := l.tailnet.Services()
	if len(svcs) != 1 || svcs[0].Name != "svc:web-us" || !slices.Equal(svcs[0].Ports, []string{"tcp:443"}) || !slices.Equal(svcs[0].Tags, []string{"tag:k8s"}) {
		t.Fatalf("Tailscale Services %+v (events %q)", svcs, l.engine.Events())
	}
	if hosts := l.tailnet.ServiceHosts("svc:web-us"); len(hosts) != 2 {
		t.Fatalf("hosts of svc:web-us: %+v", hosts)
	}
	l.noDevice("web-us")
	// HTTPS off (the lab's tailnet is new): no certificate, no status.
	if g := l.ingress(); g.StatusHostname != "" || g.DeviceID != "" {
		t.Fatalf("Ingress without HTTPS: %+v", g)
	}
	l.event(`Ingress ` + labNamespace + `/web: ProxyGroup ingress-us: failed to get TLS certificate for svc:web-us: your Tailscale account does not support getting TLS certs`)

	l.tailnet.SetHTTPSEnabled(true)
	l.deploy(web)
	if g := l.ingress(); g.StatusHostname != "web-us.tail1234.ts.net" {
		t.Fatalf("status hostname %q with HTTPS on", g.StatusHostname)
	}
	if certs := l.tailnet.Certificates(); len(certs) != 1 || certs[0].Service != "svc:web-us" {
		t.Fatalf("certificates %+v", certs)
	}

	l.remove(web)
	if svcs := l.tailnet.Services(); len(svcs) != 0 {
		t.Fatalf("Tailscale Services after the uninstall: %+v", svcs)
	}
}
