package cluster_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/cluster"
)

// A kube-apiserver ProxyGroup gets the Tailscale Service svc:NAME, tagged
// as the ProxyGroup, on tcp:443. Its replicas serve it only with HTTPS
// certificates on the tailnet, as the operator reports in its status; the
// Service goes with the ProxyGroup.
func TestManifests_kubeAPIServerProxyGroup(t *testing.T) {
	l := newLabWith(t, labPolicy, []string{"devices:core", "auth_keys", "services"}, "")
	pg := release("pg", proxyGroupYAML("kubeapi", "{type: kube-apiserver, kubeAPIServer: {mode: noauth}}"))
	get := func() *cluster.KubeAPIServerProxy {
		t.Helper()
		for _, g := range l.engine.ProxyGroups() {
			if g.Name == "kubeapi" && g.KubeAPIServer != nil {
				return g.KubeAPIServer
			}
		}
		t.Fatalf("no kube-apiserver ProxyGroup: %+v", l.engine.ProxyGroups())
		return nil
	}

	// HTTPS certificates off (a new tailnet's default): the devices come,
	// and the Service, but no replica serves it.
	l.deploy(pg)
	l.device("kubeapi-0", "tag:k8s")
	l.device("kubeapi-1", "tag:k8s")
	k := get()
	if c := k.Conditions[cluster.ConditionKubeAPIServerProxyConfigured]; c.Status != "False" || k.URL != "" ||
		c.Message != "0/2 proxy backends ready and advertising" || k.Mode != "noauth" {
		t.Fatalf("with HTTPS off: %+v", k)
	}
	l.event("HTTPS certificates are disabled on the tailnet")
	svcs := l.tailnet.Services()
	if len(svcs) != 1 || svcs[0].Name != "svc:kubeapi" || !slices.Equal(svcs[0].Tags, []string{"tag:k8s"}) || !slices.Equal(svcs[0].Ports, []string{"tcp:443"}) {
		t.Fatalf("Tailscale Services %+v", svcs)
	}

	l.tailnet.SetHTTPSEnabled(true)
	l.deploy(pg)
	k = get()
	if c := k.Conditions[cluster.ConditionKubeAPIServerProxyConfigured]; c.Status != "True" || k.URL != "https://kubeapi.tail1234.ts.net" ||
		k.Conditions[cluster.ConditionKubeAPIServerProxyValid].Status != "True" {
		t.Fatalf("with HTTPS on: %+v", k)
	}

	// No mode: the CRD's default, auth. A bad mode is refused.
	l.deploy(release("pg", proxyGroupYAML("kubeapi", "{type: kube-apiserver}")))
	if k := get(); k.Mode != "auth" {
		t.Fatalf("default mode %q", k.Mode)
	}
	err := l.engine.Deploy(context.Background(), release("pg", proxyGroupYAML("kubeapi", "{type: kube-apiserver, kubeAPIServer: {mode: 'true'}}")))
	if err == nil || !strings.Contains(err.Error(), `spec.kubeAPIServer.mode: Unsupported value: "true"`) {
		t.Fatalf("a bad mode: %v", err)
	}

	l.remove(pg)
	if svcs := l.tailnet.Services(); len(svcs) != 0 {
		t.Fatalf("Tailscale Services after the ProxyGroup went: %+v", svcs)
	}
}
