package policyfile

import (
	"slices"
	"testing"
)

func TestServiceApprover(t *testing.T) {
	doc, err := Parse([]byte(`{
	// Approvers of Tailscale Services.
	"autoApprovers": {
		"services": {
			"svc:billing": ["tag:ingress"], // by name
			"tag:web":     ["autogroup:tagged"],
			"svc:other":   ["group:ops"],
		},
	},
}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name              string
		service           string
		svcTags, hostTags []string
		want              string
	}{
		{"by name", "svc:billing", []string{"tag:k8s"}, []string{"tag:ingress"}, "svc:billing"},
		{"by name, case folded", "svc:billing", nil, []string{"TAG:Ingress"}, "svc:billing"},
		{"by name, host tagged otherwise", "svc:billing", []string{"tag:k8s"}, []string{"tag:k8s"}, ""},
		{"by the Service's tag, autogroup:tagged", "svc:shop", []string{"tag:web"}, []string{"tag:k8s"}, "tag:web"},
		{"autogroup:tagged needs a tagged host", "svc:shop", []string{"tag:web"}, nil, ""},
		{"no entry", "svc:none", []string{"tag:k8s"}, []string{"tag:k8s"}, ""},
		{"approvers that are no tag of the host", "svc:other", nil, []string{"tag:k8s"}, ""},
	}
	for _, tc := range cases {
		got := doc.ServiceApprover(tc.service, tc.svcTags, tc.hostTags)
		if got.Entry != tc.want || got.Approved() != (tc.want != "") {
			t.Errorf("%s: %+v, want the entry %q", tc.name, got, tc.want)
		}
	}
	if a := doc.ServiceApprover("svc:billing", nil, []string{"tag:ingress"}); !slices.Equal(a.Approvers, []string{"tag:ingress"}) {
		t.Errorf("approvers %v", a.Approvers)
	}
	empty, err := Parse([]byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if empty.ServiceApprover("svc:billing", nil, []string{"tag:ingress"}).Approved() {
		t.Error("a policy without autoApprovers approves")
	}
}
