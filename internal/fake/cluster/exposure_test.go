package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

const exposurePolicy = `{
	"tagOwners": {
		"tag:k8s-operator": [],
		"tag:k8s":          ["tag:k8s-operator"],
		"tag:k8s-billing":  ["tag:k8s-operator"],
		"tag:stray":        ["autogroup:admin"],
	},
	"grants": [{"src": ["*"], "dst": ["*"], "ip": ["*"]}],
}`

const exposureCluster = "cluster-1"

// exposureWorld is a tailnet with a running operator on exposureCluster.
type exposureWorld struct {
	t       *testing.T
	tailnet *tailnetapi.Server
	engine  *Engine
	// operator is the operator's Helm service, as deployed.
	operator qoveryapi.ServiceSnapshot
}

func newExposureWorld(t *testing.T) *exposureWorld {
	t.Helper()
	ts := tailnetapi.New(tailnetapi.Options{InitialPolicy: []byte(exposurePolicy), MagicDNSSuffix: "tail1234.ts.net"})
	w := &exposureWorld{t: t, tailnet: ts, engine: New(ts)}
	id, secret := ts.SeedOAuthClient("", "", []string{"devices:core", "auth_keys"}, []string{"tag:k8s-operator"})
	values := fmt.Sprintf("oauth:\n  clientId: %s\n  clientSecret: %s\noperatorConfig:\n  hostname: tailscale-operator-test\n", id, secret)
	w.operator = qoveryapi.ServiceSnapshot{
		Kind: "HELM", ID: "helm-1", Name: "tailscale-operator", ClusterID: exposureCluster, Namespace: "zabc-tailscale",
		ChartName: OperatorChart, AllowClusterWideResources: true,
		ValuesFiles: []qoveryapi.ValuesFile{{Name: "values.yaml", Content: values}},
	}
	err := w.engine.Deploy(context.Background(), w.operator)
	if err != nil {
		t.Fatalf("operator deployment: %v", err)
	}
	if len(w.engine.Operators()) != 1 {
		t.Fatalf("want one operator, got %+v", w.engine.Operators())
	}
	return w
}

// app is the snapshot of an application with ports on exposureCluster,
// annotated by one group with the given scopes.
func exposedApp(scopes []string, annotations map[string]string) qoveryapi.ServiceSnapshot {
	var anns []qoveryapi.Annotation
	for k, v := range annotations {
		anns = append(anns, qoveryapi.Annotation{Key: k, Value: v})
	}
	slices.SortFunc(anns, func(a, b qoveryapi.Annotation) int { return strings.Compare(a.Key, b.Key) })
	snap := qoveryapi.ServiceSnapshot{
		Kind: "APPLICATION", ID: "app-1", Name: "billing-api", ClusterID: exposureCluster,
		Namespace: "zdef-prod", KubernetesName: "app-z1234abcd",
		Ports: []qoveryapi.Port{{Name: "https", InternalPort: 443, Protocol: "HTTP"}},
	}
	if annotations != nil {
		snap.AnnotationsGroups = []qoveryapi.AnnotationsGroup{{ID: "group-1", Name: "tailscale-billing", Annotations: anns, Scopes: scopes}}
	}
	return snap
}

func (w *exposureWorld) deploy(svc qoveryapi.ServiceSnapshot) {
	w.t.Helper()
	if err := w.engine.Deploy(context.Background(), svc); err != nil {
		w.t.Fatalf("deploying %s: %v", svc.Name, err)
	}
}

func (w *exposureWorld) devices(hostname string) []tailnetapi.Device {
	var out []tailnetapi.Device
	for _, d := range w.tailnet.Devices() {
		if d.Hostname == hostname {
			out = append(out, d)
		}
	}
	return out
}

func (w *exposureWorld) wantNoDevice(hostname, event string) {
	w.t.Helper()
	if d := w.devices(hostname); len(d) != 0 {
		w.t.Fatalf("want no device %s, got %+v", hostname, d)
	}
	if len(w.engine.Proxies()) != 0 {
		w.t.Fatalf("want no proxy, got %+v", w.engine.Proxies())
	}
	if event == "" {
		return
	}
	for _, e := range w.engine.Events() {
		if strings.Contains(e, event) {
			return
		}
	}
	w.t.Fatalf("no event mentions %q; events: %q", event, w.engine.Events())
}

func (w *exposureWorld) wantDevice(hostname string, tags ...string) tailnetapi.Device {
	w.t.Helper()
	devs := w.devices(hostname)
	if len(devs) != 1 {
		w.t.Fatalf("want one device %s, got %+v (events: %q)", hostname, devs, w.engine.Events())
	}
	d := devs[0]
	if !slices.Equal(d.Tags, tags) {
		w.t.Fatalf("device %s has tags %v, want %v", hostname, d.Tags, tags)
	}
	if d.Name != hostname+".tail1234.ts.net" {
		w.t.Fatalf("device %s has MagicDNS name %s", hostname, d.Name)
	}
	return d
}

var exposeAnnotations = map[string]string{AnnotationExpose: "true", AnnotationHostname: "billing-api-us-east-1"}

func withAnnotations(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func TestExposure_defaultTags(t *testing.T) {
	w := newExposureWorld(t)
	w.deploy(exposedApp([]string{"SERVICES"}, exposeAnnotations))
	d := w.wantDevice("billing-api-us-east-1", "tag:k8s")
	if len(d.Addresses) != 2 {
		t.Fatalf("want an IPv4 and an IPv6 address, got %v", d.Addresses)
	}
	p := w.engine.Proxies()
	if len(p) != 1 || p[0].ApplicationID != "app-1" || p[0].DeviceID != d.ID {
		t.Fatalf("unexpected proxies %+v", p)
	}
	// A redeployment with nothing changed keeps the same device.
	w.deploy(exposedApp([]string{"SERVICES"}, exposeAnnotations))
	if again := w.wantDevice("billing-api-us-east-1", "tag:k8s"); again.ID != d.ID {
		t.Fatalf("redeploy replaced the device: %s then %s", d.ID, again.ID)
	}
}

func TestExposure_requestedTagsReplaceDefault(t *testing.T) {
	w := newExposureWorld(t)
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationTags, "tag:k8s-billing")))
	w.wantDevice("billing-api-us-east-1", "tag:k8s-billing")
}

func TestExposure_tagNotOwnedByOperator(t *testing.T) {
	w := newExposureWorld(t)
	// The proxy fails on its own, with the API's answer to its auth key.
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationTags, "tag:stray")))
	w.wantNoDevice("billing-api-us-east-1", "ProxyFailed: failed to provision: failed to create or get API key secret: requested tags [tag:stray] are invalid or not permitted")
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationTags, "tag:undeclared")))
	w.wantNoDevice("billing-api-us-east-1", "requested tags [tag:undeclared] are invalid or not permitted: not declared in tagOwners")
}

// clientOwnsPolicy makes the OAuth client's tag, tag:ci, the owner of the
// proxy tag; the operator device's tag owns nothing.
const clientOwnsPolicy = `{
	"tagOwners": {
		"tag:ci":           [],
		"tag:k8s-operator": ["tag:ci"],
		"tag:k8s":          ["tag:ci"],
	},
}`

// newClientOwnsWorld runs an operator tagged tag:k8s-operator whose OAuth
// client is tagged tag:ci.
func newClientOwnsWorld(t *testing.T, compat Compat) (*exposureWorld, error) {
	t.Helper()
	ts := tailnetapi.New(tailnetapi.Options{InitialPolicy: []byte(clientOwnsPolicy), MagicDNSSuffix: "tail1234.ts.net"})
	w := &exposureWorld{t: t, tailnet: ts, engine: New(ts)}
	w.engine.SetCompat(compat)
	id, secret := ts.SeedOAuthClient("", "", []string{"devices:core", "auth_keys"}, []string{"tag:ci"})
	values := fmt.Sprintf("oauth:\n  clientId: %s\n  clientSecret: %s\noperatorConfig:\n  hostname: tailscale-operator-test\n", id, secret)
	return w, w.engine.Deploy(context.Background(), qoveryapi.ServiceSnapshot{
		Kind: "HELM", ID: "helm-1", Name: "tailscale-operator", ClusterID: exposureCluster, Namespace: "zabc-tailscale",
		ChartName: OperatorChart, AllowClusterWideResources: true,
		ValuesFiles: []qoveryapi.ValuesFile{{Name: "values.yaml", Content: values}},
	})
}

// The operator starts although its own tag owns no proxy tag: proxies'
// auth keys are minted with the OAuth client, whose tag owns tag:k8s.
func TestExposure_proxyTagsFollowTheOAuthClient(t *testing.T) {
	w, err := newClientOwnsWorld(t, Compat{})
	if err != nil {
		t.Fatalf("the operator did not start: %v", err)
	}
	w.deploy(exposedApp([]string{"SERVICES"}, exposeAnnotations))
	w.wantDevice("billing-api-us-east-1", "tag:k8s")

	// The earlier simulation refused the operator.
	if _, err := newClientOwnsWorld(t, Compat{OperatorOwnsProxyTags: true}); err == nil ||
		!strings.Contains(err.Error(), "proxy tags [tag:k8s] are not owned by the operator's tags [tag:k8s-operator]") {
		t.Fatalf("with Compat.OperatorOwnsProxyTags: %v", err)
	}
}

func TestExposure_invalidTag(t *testing.T) {
	w := newExposureWorld(t)
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationTags, "tag:1bad")))
	w.wantNoDevice("billing-api-us-east-1", `INVALIDSERVICE: invalid tag "tag:1bad"`)
}

func TestExposure_tagsFixedAtCreation(t *testing.T) {
	w := newExposureWorld(t)
	w.deploy(exposedApp([]string{"SERVICES"}, exposeAnnotations))
	d := w.wantDevice("billing-api-us-east-1", "tag:k8s")
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationTags, "tag:k8s-billing")))
	if again := w.wantDevice("billing-api-us-east-1", "tag:k8s"); again.ID != d.ID {
		t.Fatalf("a tags change replaced the device")
	}
}

func TestExposure_detachAndRedeployRemovesDevice(t *testing.T) {
	w := newExposureWorld(t)
	w.deploy(exposedApp([]string{"SERVICES"}, exposeAnnotations))
	w.wantDevice("billing-api-us-east-1", "tag:k8s")
	w.deploy(exposedApp(nil, nil))
	w.wantNoDevice("billing-api-us-east-1", "")

	// An exposeAnnotations annotation other than "true" is no exposure either.
	w.deploy(exposedApp([]string{"SERVICES"}, exposeAnnotations))
	w.wantDevice("billing-api-us-east-1", "tag:k8s")
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationExpose, "false")))
	w.wantNoDevice("billing-api-us-east-1", "")
}

func TestExposure_onlyServicesScope(t *testing.T) {
	w := newExposureWorld(t)
	w.deploy(exposedApp([]string{"DEPLOYMENTS", "PODS"}, exposeAnnotations))
	w.wantNoDevice("billing-api-us-east-1", "")
}

func TestExposure_noPortNoService(t *testing.T) {
	w := newExposureWorld(t)
	svc := exposedApp([]string{"SERVICES"}, exposeAnnotations)
	svc.Ports = nil
	w.deploy(svc)
	w.wantNoDevice("billing-api-us-east-1", "declares no port")
}

func TestExposure_noOperatorOnCluster(t *testing.T) {
	w := newExposureWorld(t)
	svc := exposedApp([]string{"SERVICES"}, exposeAnnotations)
	svc.ClusterID = "cluster-without-operator"
	w.deploy(svc)
	w.wantNoDevice("billing-api-us-east-1", "no Tailscale operator runs on cluster cluster-without-operator")
}

func TestExposure_hostnameDefaultAndInvalid(t *testing.T) {
	w := newExposureWorld(t)
	w.deploy(exposedApp([]string{"SERVICES"}, map[string]string{AnnotationExpose: "true"}))
	w.wantDevice("zdef-prod-app-z1234abcd", "tag:k8s")

	// The operator refuses the Service and leaves the proxy it made as it
	// is.
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationHostname, "-bad-")))
	if len(w.devices("-bad-")) != 0 {
		t.Fatal("a device for an invalid hostname")
	}
	w.wantDevice("zdef-prod-app-z1234abcd", "tag:k8s")
	w.wantEvent(`INVALIDSERVICE: unable to provision proxy resources: invalid Service: invalid Tailscale hostname specified "-bad-": "-bad-" is not a valid DNS label: must start with a letter or number`)

	// The earlier simulation removed it.
	w.engine.SetCompat(Compat{ProxyNewDevice: true})
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationHostname, "-bad-")))
	w.wantNoDevice("zdef-prod-app-z1234abcd", "")
}

func TestExposure_hostnameChangeRenamesDevice(t *testing.T) {
	w := newExposureWorld(t)
	w.deploy(exposedApp([]string{"SERVICES"}, exposeAnnotations))
	d := w.wantDevice("billing-api-us-east-1", "tag:k8s")
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationHostname, "billing")))
	if again := w.wantDevice("billing", "tag:k8s"); again.ID != d.ID {
		t.Fatalf("a hostname change replaced the proxy's device %s with %s", d.ID, again.ID)
	}
	if len(w.devices("billing-api-us-east-1")) != 0 {
		t.Fatal("the old hostname is still on the tailnet")
	}

	// The earlier simulation replaced it.
	w.engine.SetCompat(Compat{ProxyNewDevice: true})
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationHostname, "billing-2")))
	if again := w.wantDevice("billing-2", "tag:k8s"); again.ID == d.ID {
		t.Fatal("with Compat.ProxyNewDevice the device was renamed")
	}
}

func (w *exposureWorld) wantEvent(event string) {
	w.t.Helper()
	for _, e := range w.engine.Events() {
		if strings.Contains(e, event) {
			return
		}
	}
	w.t.Fatalf("no event mentions %q; events: %q", event, w.engine.Events())
}

func TestExposure_proxyGroupHasNoOwnDevice(t *testing.T) {
	w := newExposureWorld(t)
	w.deploy(exposedApp([]string{"SERVICES"}, exposeAnnotations))
	w.wantDevice("billing-api-us-east-1", "tag:k8s")
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationProxyGroup, "ingress")))
	w.wantNoDevice("billing-api-us-east-1", `ProxyGroup "ingress" does not exist on cluster cluster-1`)
}

// The operator reconciles the Services already annotated when it starts,
// without waiting for the applications' next deployment.
func TestExposure_operatorStartReconcilesAnnotatedServices(t *testing.T) {
	for _, compat := range []Compat{{}, {ReconcileOnAppDeploy: true}} {
		ts := tailnetapi.New(tailnetapi.Options{InitialPolicy: []byte(exposurePolicy), MagicDNSSuffix: "tail1234.ts.net"})
		w := &exposureWorld{t: t, tailnet: ts, engine: New(ts)}
		w.engine.SetCompat(compat)
		w.deploy(exposedApp([]string{"SERVICES"}, exposeAnnotations))
		w.wantNoDevice("billing-api-us-east-1", "no Tailscale operator runs on cluster cluster-1")

		id, secret := ts.SeedOAuthClient("", "", []string{"devices:core", "auth_keys"}, []string{"tag:k8s-operator"})
		w.deploy(qoveryapi.ServiceSnapshot{
			Kind: "HELM", ID: "helm-1", Name: "tailscale-operator", ClusterID: exposureCluster, Namespace: "zabc-tailscale",
			ChartName: OperatorChart, AllowClusterWideResources: true,
			ValuesFiles: []qoveryapi.ValuesFile{{Name: "values.yaml", Content: fmt.Sprintf("oauth:\n  clientId: %s\n  clientSecret: %s\n", id, secret)}},
		})
		if compat.ReconcileOnAppDeploy {
			w.wantNoDevice("billing-api-us-east-1", "")
			continue
		}
		w.wantDevice("billing-api-us-east-1", "tag:k8s")
	}
}

func TestExposure_removedDeviceComesBackAtNextDeployment(t *testing.T) {
	w := newExposureWorld(t)
	w.deploy(exposedApp([]string{"SERVICES"}, exposeAnnotations))
	d := w.wantDevice("billing-api-us-east-1", "tag:k8s")
	if n := w.tailnet.RemoveDevicesByHostname("billing-api-us-east-1"); n != 1 {
		t.Fatalf("removed %d devices", n)
	}
	w.deploy(exposedApp([]string{"SERVICES"}, exposeAnnotations))
	if again := w.wantDevice("billing-api-us-east-1", "tag:k8s"); again.ID == d.ID {
		t.Fatal("want a new device after the old one was removed")
	}
}

func TestExposure_deletedApplicationLosesItsProxy(t *testing.T) {
	w := newExposureWorld(t)
	w.deploy(exposedApp([]string{"SERVICES"}, exposeAnnotations))
	if err := w.engine.Delete(context.Background(), exposedApp(nil, nil)); err != nil {
		t.Fatal(err)
	}
	w.wantNoDevice("billing-api-us-east-1", "")
}

func TestValidTag(t *testing.T) {
	for tag, want := range map[string]bool{
		"tag:k8s": true, "tag:k8s-billing": true, "tag:A1": true,
		"tag:": false, "k8s": false, "tag:1a": false, "tag:-a": false, "tag:a_b": false, "tag:a.b": false,
	} {
		if got := validTag(tag); got != want {
			t.Errorf("validTag(%q) = %v, want %v", tag, got, want)
		}
	}
}
