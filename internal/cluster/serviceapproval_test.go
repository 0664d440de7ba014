package cluster

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

func TestServiceApproverHCL(t *testing.T) {
	t.Parallel()
	if got := ServiceApproverResourceName("billing-api.v2"); got != "svc_billing_api_v2" {
		t.Errorf("ServiceApproverResourceName = %q", got)
	}
	want := "  resource \"qtail_auto_approver\" \"svc_billing_api\" {\n    service   = \"svc:billing-api\"\n" +
		"    approvers = [\"tag:k8s\", \"tag:web\"]\n  }"
	if got := ServiceApproverHCL("billing-api", []string{"tag:k8s", "tag:web"}); got != want {
		t.Errorf("ServiceApproverHCL =\n%s\nwant\n%s", got, want)
	}
}

// proxyGroupTagsValues is a manifests values file with the ingress
// ProxyGroup web, tagged tags, and the ProxyGroup bare without tags.
func proxyGroupTagsValues(tags string) string {
	return proxyGroupValues("web", manifest.ProxyGroupIngress) + "      tags: " + tags + "\n" +
		"  - apiVersion: tailscale.com/v1alpha1\n    kind: ProxyGroup\n    metadata:\n      name: bare\n    spec:\n      type: ingress\n"
}

// The hosts of a Tailscale Service are the ProxyGroup's devices, tagged
// as it renders them, else with the operator's proxy tags; the Service
// has its own tags, else the operator's proxy tags too.
func TestServiceTags(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.operator(w.other, w.operatorValues(manifest.OperatorValues{ProxyDefaultTags: []string{"tag:proxies"}}, nil))
	w.manifests(w.env, "proxies", proxyGroupTagsValues(`["tag:web", "tag:ingress"]`))
	w.manifests(w.env, "more-proxies", proxyGroupTagsValues(`["tag:shadowed"]`))
	ops := w.lookup()
	for name, want := range map[string][]string{
		"web":     {"tag:web", "tag:ingress"},
		"bare":    {"tag:proxies"},
		"missing": {"tag:proxies"},
	} {
		if got := ProxyGroupHostTags(w.ctx, ops, name); !slices.Equal(got, want) {
			t.Errorf("ProxyGroupHostTags(%s) = %v, want %v", name, got, want)
		}
	}
	if got := ServiceTags(w.ctx, ops, nil); !slices.Equal(got, []string{"tag:proxies"}) {
		t.Errorf("ServiceTags without tags = %v, want the operator's proxy tags", got)
	}
	if got := ServiceTags(w.ctx, ops, []string{"tag:billing"}); !slices.Equal(got, []string{"tag:billing"}) {
		t.Errorf("ServiceTags = %v, want the exposure's", got)
	}

	// Helm services qtail cannot list give the operator's defaults, here
	// the chart's.
	w.Qovery.Faults().Add(faults.Rule{Route: "GET /organization/{organizationId}/project", Status: http.StatusInternalServerError})
	if got := ProxyGroupHostTags(w.ctx, w.lookup(), "web"); !slices.Equal(got, []string{DefaultProxyTag}) {
		t.Errorf("ProxyGroupHostTags when the listing fails = %v, want the chart's default", got)
	}
}

// approvers sets members of autoApprovers.services in the tailnet
// policy: by Service name or tag, the approvers as JSON.
func (w *world) approvers(services map[string]string) {
	w.t.Helper()
	body, _ := w.Tailnet.Policy()
	doc, err := policyfile.Parse(body)
	if err != nil {
		w.t.Fatal(err)
	}
	for name, list := range services {
		if err := doc.Put(policyfile.Key{Kind: policyfile.KindAutoApprover, Name: "service:" + name}, []byte(list)); err != nil {
			w.t.Fatal(err)
		}
	}
	if err := w.Tailnet.SetPolicyDirect(doc.Bytes()); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) serviceApproved(c *conn.Clients, check ServiceApprovalCheck) diag.Diagnostics {
	var diags diag.Diagnostics
	CheckServiceApproved(w.ctx, c, NewLookup(c.QoveryOrNil(), w.environment(w.env)), check, &diags)
	return diags
}

func TestCheckServiceApproved(t *testing.T) {
	t.Parallel()
	at := path.Root("proxy_group")
	check := ServiceApprovalCheck{Hostname: "billing-api", ProxyGroup: "web", At: at}
	setUp := func(t *testing.T) *world {
		w := newWorld(t)
		w.operator(w.env, w.operatorValues(manifest.OperatorValues{ProxyDefaultTags: []string{"tag:proxies"}}, nil))
		w.manifests(w.env, "proxies", proxyGroupTagsValues(`["tag:web"]`))
		w.tagOwners(map[string][]string{"tag:web": nil, "tag:proxies": nil, "tag:billing": nil, "tag:elsewhere": nil})
		return w
	}
	t.Run("not approved", func(t *testing.T) {
		t.Parallel()
		w := setUp(t)
		w.approvers(map[string]string{"svc:other": `["tag:web"]`, "tag:proxies": `["tag:elsewhere"]`})
		d := w.serviceApproved(w.clients(), check)
		if len(d) != 1 || !d.HasError() || d[0].Summary() != "Tailscale Service Not Approved" || !isOn(d[0], at) {
			t.Fatalf("diagnostics %v, want one error on proxy_group", d)
		}
		want := "The ProxyGroup \"web\" serves this exposure as the Tailscale Service svc:billing-api (tagged tag:proxies): its " +
			"devices, tagged tag:web, advertise the Service, but carry its traffic only once they are approved, and no entry of " +
			"autoApprovers.services in the tailnet policy (as it will be after this plan) approves them, neither \"svc:billing-api\" " +
			"nor one of the Service's tags with one of the devices' tags among its approvers. The apply would expose nothing.\n\n" +
			"Approve them with a qtail_auto_approver, and make this exposure depend on it so that it is planned first:\n\n" +
			"  resource \"qtail_auto_approver\" \"svc_billing_api\" {\n    service   = \"svc:billing-api\"\n" +
			"    approvers = [\"tag:web\"]\n  }\n\n  depends_on = [qtail_auto_approver.svc_billing_api]"
		if d[0].Detail() != want {
			t.Errorf("detail\n%s\nwant\n%s", d[0].Detail(), want)
		}
	})
	t.Run("approved by name", func(t *testing.T) {
		t.Parallel()
		w := setUp(t)
		w.approvers(map[string]string{"svc:billing-api": `["tag:web"]`})
		if d := w.serviceApproved(w.clients(), check); len(d) != 0 {
			t.Errorf("diagnostics %v, want none", d)
		}
	})
	t.Run("approved by the Service's tag", func(t *testing.T) {
		t.Parallel()
		w := setUp(t)
		w.approvers(map[string]string{"tag:billing": `["tag:web"]`})
		withTags := check
		withTags.ServiceTags = []string{"tag:billing"}
		if d := w.serviceApproved(w.clients(), withTags); len(d) != 0 {
			t.Errorf("diagnostics %v, want none", d)
		}
		if d := w.serviceApproved(w.clients(), check); len(d) != 1 || !strings.Contains(d[0].Detail(), "(tagged tag:proxies)") {
			t.Errorf("diagnostics %v, want the error for a Service tagged with the operator's proxy tags", d)
		}
	})
	t.Run("no Tailscale client", func(t *testing.T) {
		t.Parallel()
		w := setUp(t)
		c := conn.New("test", conn.Options{})
		c.ConfigureQovery(conn.Setting{Value: testToken}, conn.Setting{Value: "http://127.0.0.1:1/qovery"})
		var d diag.Diagnostics
		CheckServiceApproved(w.ctx, c, w.lookup(), check, &d)
		if len(d) != 0 {
			t.Errorf("diagnostics %v, want none", d)
		}
	})
	t.Run("policy unreadable", func(t *testing.T) {
		t.Parallel()
		w := setUp(t)
		w.Tailnet.Faults().Add(faults.Rule{Route: "GET /api/v2/tailnet/{tailnet}/acl", Status: http.StatusForbidden, Count: 2})
		d := w.serviceApproved(w.clients(), check)
		if len(d) == 0 || d.HasError() || d[0].Summary() != "Service Approval Not Checked" || !isOn(d[0], at) ||
			!strings.HasPrefix(d[0].Detail(), "qtail could not check that autoApprovers.services approve the hosts of the Tailscale "+
				"Service svc:billing-api: ") {
			t.Errorf("diagnostics %v, want a warning that the approval is not checked", d)
		}
	})
}
