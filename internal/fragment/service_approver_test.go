package fragment

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

func TestServiceApproverKeys(t *testing.T) {
	svc := policyfile.ServiceKey("svc:billing")
	for _, tc := range []struct {
		v   Values
		key policyfile.Key
		ok  bool
	}{
		{Values{"service": "svc:billing", "exit_node": false}, svc, true},
		{Values{"service": "tag:web", "exit_node": false}, policyfile.ServiceKey("tag:web"), true},
		{Values{"service": "svc:billing", "exit_node": true}, policyfile.Key{}, false},
		{Values{"service": "svc:billing", "route": "10.0.0.0/8", "exit_node": false}, policyfile.Key{}, false},
		{Values{"service": Unknown, "exit_node": false}, policyfile.Key{}, false},
	} {
		k, ok := AutoApprover.Key(tc.v)
		if k != tc.key || ok != tc.ok {
			t.Errorf("AutoApprover.Key(%v) = %v, %v; want %v, %v", tc.v, k, ok, tc.key, tc.ok)
		}
	}
	owned := policyfile.Key{Kind: policyfile.KindAutoApprover, Name: "service:svc:billing", Owner: "abc"}
	v, problems := AutoApprover.Decode(owned, json.RawMessage(`["tag:k8s"]`))
	if len(problems) != 0 || v["service"] != "svc:billing" || v["route"] != nil || v["exit_node"] != false || v["owner"] != "abc" {
		t.Errorf("decoded: %v %q", v, problems)
	}
	if k, ok := AutoApprover.Key(v); !ok || k != owned {
		t.Errorf("key of the decoded approvers: %v", k)
	}
	for id, want := range map[string]policyfile.Key{
		"service:svc:billing#abc": owned,
		"service:svc:billing":     svc,
		"service:tag:web":         policyfile.ServiceKey("tag:web"),
	} {
		if k, err := AutoApprover.ImportKey(id); err != nil || k != want {
			t.Errorf("ImportKey(%q) = %v, %v; want %v", id, k, err, want)
		}
	}
	for _, id := range []string{"service:billing", "service:svc:Bad", "service:", "service:svc:x#"} {
		if _, err := AutoApprover.ImportKey(id); err == nil {
			t.Errorf("ImportKey(%q) accepted", id)
		}
	}
	if got := Where(svc); got != `autoApprovers.services["svc:billing"]` {
		t.Errorf("Where = %s", got)
	}
	if got := AutoApprover.Claimant(owned); got != `the qtail_auto_approver with service = "svc:billing"` {
		t.Errorf("Claimant = %s", got)
	}
	problems2 := AutoApprover.Validate(Values{"service": "svc:x", "exit_node": true})
	if len(problems2) != 1 || problems2[0].Attr != "service" || !strings.Contains(problems2[0].Detail, "not two") {
		t.Errorf("Validate(service and exit_node) = %v", problems2)
	}
}
