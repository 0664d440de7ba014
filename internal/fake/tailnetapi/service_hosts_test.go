package tailnetapi

import (
	"strings"
	"testing"
)

func TestServiceHostsFollowAutoApprovers(t *testing.T) {
	h := newHarness(t, Options{InitialPolicy: []byte(operatorPolicy)})
	d := h.srv.AddDevice(DeviceSpec{Hostname: "ingress-0", Tags: []string{"tag:k8s"}})
	h.do("PUT", servicesPath+"/svc:web", `{"tags":["tag:k8s"],"ports":["do-not-validate"]}`, nil).want(t, 200)
	h.srv.AdvertiseService("svc:web", []string{d.ID})
	hosts := func() string {
		return string(h.do("GET", "/api/v2/tailnet/-/services/svc:web/devices", "", nil).want(t, 200).body)
	}
	if got := hosts(); !strings.Contains(got, `"approvalLevel":"not-approved"`) || h.srv.ServiceServed("svc:web") {
		t.Errorf("without an approver: %s, served %v", got, h.srv.ServiceServed("svc:web"))
	}
	approved := strings.Replace(operatorPolicy, `"grants": [`, `"autoApprovers": {"services": {"svc:web": ["tag:k8s"]}},
	"grants": [`, 1)
	if err := h.srv.SetPolicyDirect([]byte(approved)); err != nil {
		t.Fatal(err)
	}
	if got := hosts(); !strings.Contains(got, `"approvalLevel":"approved:auto"`) || !h.srv.ServiceServed("svc:web") {
		t.Errorf("with an approver: %s", got)
	}
	// The entry removed by hand takes the approval away; an admin gives it.
	if err := h.srv.SetPolicyDirect([]byte(operatorPolicy)); err != nil {
		t.Fatal(err)
	}
	if h.srv.ServiceServed("svc:web") {
		t.Error("served after the approver was removed")
	}
	h.do("POST", "/api/v2/tailnet/-/vip-services/svc:web/device/"+d.NodeID+"/approved", `{"approved":true}`, nil).want(t, 200)
	if got := hosts(); !strings.Contains(got, `"approvalLevel":"approved:manual"`) {
		t.Errorf("after an admin's approval: %s", got)
	}
	h.do("GET", "/api/v2/tailnet/-/services/svc:none/devices", "", nil).want(t, 404)
}

// withServiceApprovers is operatorPolicy with autoApprovers.services.
func withServiceApprovers(services string) string {
	return strings.Replace(operatorPolicy, `"grants": [`, `"autoApprovers": {"services": `+services+`},
	"grants": [`, 1)
}

func TestServiceHostsApprovedByTheServiceTag(t *testing.T) {
	h := newHarness(t, Options{InitialPolicy: []byte(withServiceApprovers(`{"tag:k8s": ["tag:k8s"]}`))})
	pg := h.srv.AddDevice(DeviceSpec{Hostname: "ingress-0", Tags: []string{"tag:k8s"}})
	other := h.srv.AddDevice(DeviceSpec{Hostname: "other-0", Tags: []string{"tag:other"}})
	h.do("PUT", servicesPath+"/svc:web", `{"tags":["tag:k8s"],"ports":["do-not-validate"]}`, nil).want(t, 200)
	h.srv.AdvertiseService("svc:web", []string{pg.ID, other.ID})
	hosts := h.srv.ServiceHosts("svc:web")
	if len(hosts) != 2 || hosts[0].Approval != ApprovalAuto || hosts[1].Approval != ApprovalNone {
		t.Fatalf("hosts %+v: want ingress-0 approved by the Service's tag, other-0 (tagged otherwise) not", hosts)
	}
	got := string(h.do("GET", "/api/v2/tailnet/-/services/svc:web/device/"+pg.NodeID+"/approved", "", nil).want(t, 200).body)
	if !strings.Contains(got, `"approved":true`) || !strings.Contains(got, `"autoApproved":true`) {
		t.Errorf("approval of ingress-0: %s", got)
	}
	// A Service without the tag is not approved by it.
	h.do("PUT", servicesPath+"/svc:api", `{"tags":["tag:other"],"ports":["do-not-validate"]}`, nil).want(t, 200)
	h.srv.AdvertiseService("svc:api", []string{pg.ID})
	if h.srv.ServiceServed("svc:api") {
		t.Error("svc:api, tagged tag:other, approved by the entry of tag:k8s")
	}
	// autogroup:tagged approves every tagged host.
	if err := h.srv.SetPolicyDirect([]byte(withServiceApprovers(`{"svc:api": ["autogroup:tagged"]}`))); err != nil {
		t.Fatal(err)
	}
	if !h.srv.ServiceServed("svc:api") {
		t.Error("svc:api not approved by autogroup:tagged")
	}
}

func TestServiceHostsApprovedByAnAdminAndRevoked(t *testing.T) {
	h := newHarness(t, Options{InitialPolicy: []byte(withServiceApprovers(`{"svc:web": ["tag:k8s"]}`))})
	d := h.srv.AddDevice(DeviceSpec{Hostname: "ingress-0", Tags: []string{"tag:other"}})
	h.do("PUT", servicesPath+"/svc:web", `{"tags":["tag:k8s"],"ports":["do-not-validate"]}`, nil).want(t, 200)
	h.srv.AdvertiseService("svc:web", []string{d.ID})
	if h.srv.ServiceServed("svc:web") {
		t.Fatal("a host tagged tag:other approved by an entry for tag:k8s")
	}
	approval := func(body string) string {
		return string(h.do("POST", "/api/v2/tailnet/-/services/svc:web/device/"+d.ID+"/approved", body, nil).want(t, 200).body)
	}
	if got := approval(`{"approved":true}`); !strings.Contains(got, `"approved":true`) || !strings.Contains(got, `"autoApproved":false`) {
		t.Errorf("after an admin's approval: %s", got)
	}
	if hosts := h.srv.ServiceHosts("svc:web"); len(hosts) != 1 || hosts[0].Approval != ApprovalManual {
		t.Errorf("hosts %+v, want one approved by an admin", hosts)
	}
	// The admin revokes it.
	if got := approval(`{"approved":false}`); !strings.Contains(got, `"approved":false`) {
		t.Errorf("after the revocation: %s", got)
	}
	if h.srv.ServiceServed("svc:web") {
		t.Error("served after the admin revoked the host")
	}
	// A revocation holds against autoApprovers.services that would
	// approve the host.
	if err := h.srv.SetPolicyDirect([]byte(withServiceApprovers(`{"svc:web": ["tag:other"]}`))); err != nil {
		t.Fatal(err)
	}
	if h.srv.ServiceServed("svc:web") {
		t.Error("an approver of the policy overrode the admin's revocation")
	}
	h.do("POST", "/api/v2/tailnet/-/services/svc:web/device/"+d.ID+"/approved", `{}`, nil).want(t, 400)
	h.do("POST", "/api/v2/tailnet/-/services/svc:none/device/"+d.ID+"/approved", `{"approved":true}`, nil).want(t, 404)
	// Withdrawing the Service takes its hosts away.
	h.srv.AdvertiseService("svc:web", nil)
	if hosts := h.srv.ServiceHosts("svc:web"); len(hosts) != 0 {
		t.Errorf("hosts after the advertisement was withdrawn: %+v", hosts)
	}
}
