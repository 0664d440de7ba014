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
