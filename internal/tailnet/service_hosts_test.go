package tailnet

import (
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

func TestServiceHosts(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{InitialPolicy: []byte(operatorPolicy)})
	c := e.client(Config{})
	ctx := t.Context()
	if _, err := c.ServiceHosts(ctx, "svc:web"); !IsNotFound(err) {
		t.Fatalf("hosts of no Service: %v", err)
	}
	id, secret := e.srv.SeedOAuthClient("", "", []string{"services"}, []string{"tag:k8s-operator"})
	caller, err := e.srv.Caller(id, secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := caller.PutService(tailnetapi.Service{Name: "svc:web", Tags: []string{"tag:k8s"}, Ports: []string{"do-not-validate"}}); err != nil {
		t.Fatal(err)
	}
	a := e.srv.AddDevice(tailnetapi.DeviceSpec{Hostname: "ingress-0", Tags: []string{"tag:k8s"}})
	b := e.srv.AddDevice(tailnetapi.DeviceSpec{Hostname: "ingress-1", Tags: []string{"tag:k8s"}})
	e.srv.AdvertiseService("svc:web", []string{a.ID, b.ID})
	if err := e.srv.ApproveServiceHost("svc:web", b.NodeID, true); err != nil {
		t.Fatal(err)
	}
	hosts, err := c.ServiceHosts(ctx, "svc:web")
	if err != nil {
		t.Fatal(err)
	}
	want := []ServiceHost{{NodeID: a.NodeID, Hostname: "ingress-0", Approval: ApprovalNone}, {NodeID: b.NodeID, Hostname: "ingress-1", Approval: ApprovalManual}}
	if len(hosts) != 2 || hosts[0] != want[0] || hosts[1] != want[1] {
		t.Fatalf("hosts %+v, want %+v", hosts, want)
	}
	if r := e.rec.last(t, "GET", "/devices"); r.URL.Path != "/tailscale/api/v2/tailnet/-/services/svc:web/devices" {
		t.Errorf("path %s", r.URL.Path)
	}
	if u := UnapprovedHosts(hosts); len(u) != 1 || u[0].Hostname != "ingress-0" {
		t.Errorf("unapproved %+v", u)
	}
}
