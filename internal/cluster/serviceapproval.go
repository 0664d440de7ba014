package cluster

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// ServiceApprovalCheck is what CheckServiceApproved checks: the Tailscale
// Service svc:HOSTNAME of an exposure through the ingress ProxyGroup
// ProxyGroup.
type ServiceApprovalCheck struct {
	Hostname, ProxyGroup string
	// ServiceTags are the exposure's tags; none means the operator's
	// default proxy tags, which the operator gives the Service then.
	ServiceTags []string
	// At is the attribute that the error is on.
	At path.Path
}

// ProxyGroupHostTags returns the tags of the devices of the ProxyGroup
// name on the cluster of ops: its spec.tags as a Helm service of the
// cluster renders them, else the operator's default proxy tags.
func ProxyGroupHostTags(ctx context.Context, ops *Lookup, name string) []string {
	var own []string
	if helms, err := ops.Helms(ctx); err == nil {
		found, _ := clusterRendered(helms, func(_ *qovery.Helm, files []string) map[string][]string {
			return manifest.RenderedProxyGroupTags(files...)
		})
		own = found[name]
	}
	op, _ := ops.Operator(ctx)
	return manifest.ProxyDeviceTags(own, op.ProxyTags)
}

// ServiceTags returns the tags the operator gives the Tailscale Service
// of an exposure with the tags own: those, else its default proxy tags.
func ServiceTags(ctx context.Context, ops *Lookup, own []string) []string {
	op, _ := ops.Operator(ctx)
	return manifest.ProxyDeviceTags(own, op.ProxyTags)
}

// ServiceApproverHCL is the qtail_auto_approver that approves the devices
// tagged hostTags as hosts of the Tailscale Service of hostname.
func ServiceApproverHCL(hostname string, hostTags []string) string {
	return fmt.Sprintf("  resource \"qtail_auto_approver\" %q {\n    service   = %q\n    approvers = %s\n  }",
		ServiceApproverResourceName(hostname), tailnet.ServiceName(hostname), tfx.HCLList(hostTags))
}

// ServiceApproverResourceName turns a hostname into the name of the
// qtail_auto_approver that diagnostics suggest: billing-api gives
// svc_billing_api.
func ServiceApproverResourceName(hostname string) string {
	return "svc_" + TagOwnerResourceName(hostname)
}

// CheckServiceApproved refuses, at plan, an exposure through an ingress
// ProxyGroup whose Tailscale Service no autoApprovers.services entry of
// the policy, as it will be after this plan, approves for the
// ProxyGroup's devices: they would advertise the Service and never carry
// its traffic. The error gives the qtail_auto_approver to add; a policy
// qtail cannot read is a warning.
func CheckServiceApproved(ctx context.Context, c *conn.Clients, ops *Lookup, check ServiceApprovalCheck, diags *diag.Diagnostics) {
	if c.TailnetOrNil() == nil {
		return
	}
	name := tailnet.ServiceName(check.Hostname)
	body, pd := c.PlannedPolicy(ctx)
	if pd.HasError() {
		for _, e := range pd.Errors() {
			diags.AddAttributeWarning(check.At, "Service Approval Not Checked", "qtail could not check that autoApprovers.services "+
				"approve the hosts of the Tailscale Service "+name+": "+e.Summary()+". "+e.Detail())
		}
		return
	}
	doc, err := policyfile.Parse(body)
	if err != nil {
		diags.AddAttributeWarning(check.At, "Service Approval Not Checked", "qtail could not parse the tailnet policy to check that "+
			"autoApprovers.services approve the hosts of the Tailscale Service "+name+": "+err.Error())
		return
	}
	hostTags := ProxyGroupHostTags(ctx, ops.UsePlan(c.Planned()), check.ProxyGroup)
	svcTags := ServiceTags(ctx, ops, check.ServiceTags)
	if doc.ServiceApprover(name, svcTags, hostTags).Approved() {
		return
	}
	diags.AddAttributeError(check.At, "Tailscale Service Not Approved",
		fmt.Sprintf("The ProxyGroup %q serves this exposure as the Tailscale Service %s (tagged %s): its devices, tagged %s, "+
			"advertise the Service, but carry its traffic only once they are approved, and no entry of autoApprovers.services "+
			"in the tailnet policy (as it will be after this plan) approves them, neither %q nor one of the Service's tags with "+
			"one of the devices' tags among its approvers. The apply would expose nothing.\n\n"+
			"Approve them with a qtail_auto_approver, and make this exposure depend on it so that it is planned first:\n\n"+
			"%s\n\n  depends_on = [qtail_auto_approver.%s]",
			check.ProxyGroup, name, strings.Join(svcTags, ", "), strings.Join(hostTags, ", "), name,
			ServiceApproverHCL(check.Hostname, hostTags), ServiceApproverResourceName(check.Hostname)))
}
