package tailnet

import (
	"slices"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

func TestServices(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{InitialPolicy: []byte(operatorPolicy)})
	c := e.client(Config{})
	ctx := t.Context()

	if s, err := c.FindService(ctx, ServiceName("web")); s != nil || err != nil {
		t.Fatalf("a new tailnet has svc:web: %+v, %v", s, err)
	}
	if _, err := c.GetService(ctx, "svc:web"); !IsNotFound(err) {
		t.Fatalf("GetService of nothing: %v", err)
	}
	if r := e.rec.last(t, "GET", "/vip-services/svc:web"); r.URL.Path != "/tailscale/api/v2/tailnet/-/vip-services/svc:web" {
		t.Errorf("path %s", r.URL.Path)
	}

	// The operator makes the Service (here through the fake directly).
	id, secret := e.srv.SeedOAuthClient("", "", []string{"services"}, []string{"tag:k8s-operator"})
	caller, err := e.srv.Caller(id, secret)
	if err != nil {
		t.Fatal(err)
	}
	made, err := caller.PutService(tailnetapi.Service{Name: "svc:web", Tags: []string{"tag:k8s"}, Ports: []string{"do-not-validate"},
		Annotations: map[string]string{"tailscale.com/owner-references": `{"ownerRefs":[{"operatorID":"n1"}]}`}})
	if err != nil {
		t.Fatal(err)
	}

	s, err := c.FindService(ctx, "svc:web")
	if err != nil || s == nil {
		t.Fatalf("FindService: %+v, %v", s, err)
	}
	if s.Name != "svc:web" || !slices.Equal(s.Addrs, made.Addrs) || !slices.Equal(s.Tags, []string{"tag:k8s"}) ||
		s.Annotations["tailscale.com/owner-references"] == "" {
		t.Errorf("service %+v", s)
	}
	list, err := c.ListServices(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "svc:web" {
		t.Errorf("ListServices: %+v, %v", list, err)
	}
}

func TestSetDeviceTags(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{InitialPolicy: []byte(operatorPolicy)})
	c := e.client(Config{})
	ctx := t.Context()
	d := e.srv.AddDevice(tailnetapi.DeviceSpec{Hostname: "tailscale-operator", Tags: []string{"tag:k8s-operator"}})

	if err := c.SetDeviceTags(ctx, d.NodeID, []string{"tag:k8s-operator", "tag:k8s"}); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetDevice(ctx, d.NodeID)
	if err != nil || got.ID != d.ID || !slices.Equal(got.Tags, []string{"tag:k8s-operator", "tag:k8s"}) {
		t.Fatalf("device after SetDeviceTags: %+v, %v", got, err)
	}
	err = c.SetDeviceTags(ctx, d.NodeID, []string{"tag:undeclared"})
	ae, ok := AsAPIError(err)
	if !ok || ae.Status != 400 || ae.Message != "requested tags [tag:undeclared] are invalid or not permitted" {
		t.Errorf("undeclared tag: %v", err)
	}
	if err := c.SetDeviceTags(ctx, "nope", []string{"tag:k8s"}); !IsNotFound(err) {
		t.Errorf("missing device: %v", err)
	}
}
