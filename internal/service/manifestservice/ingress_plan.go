package manifestservice

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

func (r *ingressResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !r.Configured() {
		return
	}
	var plan, state ingressModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	creating := req.State.Raw.IsNull()
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	values := ""
	if plan.specKnown() {
		var diags diag.Diagnostics
		_, values, diags = plan.renderValues(ctx)
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
	}
	plan.planShared(ingressKind, plan.Hostname, values)
	if creating {
		r.expectCreation(&plan.manifestServiceModel, ingressKind)
	}
	changed := creating || values == "" || !plan.Values.Equal(state.Values)
	var hostnames []string
	if !plan.Hostname.IsUnknown() {
		hostnames = []string{plan.Hostname.ValueString()}
	}
	plan.Devices = planDevices(ctx, changed, plan.WaitForDevice.ValueBool(), state.Devices, hostnames)
	if plan.ProxyGroup.IsUnknown() {
		plan.Devices = types.ListUnknown(manifestDeviceType)
	}
	if plan.throughProxyGroup() {
		// The replicas of the ProxyGroup host the Tailscale Service: no
		// device of its own.
		plan.Devices, _ = types.ListValue(manifestDeviceType, nil)
		changed = changed || state.TailnetFQDN.IsNull()
	}
	if creating || plan.Devices.IsUnknown() || (plan.throughProxyGroup() && changed) {
		plan.TailnetFQDN, plan.URL = types.StringUnknown(), types.StringUnknown()
	} else {
		plan.TailnetFQDN, plan.URL = state.TailnetFQDN, state.URL
	}
	if ingressReplacing.ReplacedBy(ctx, req, &resp.Diagnostics) {
		// The replacement, planned as a creation, may take the Helm
		// service name and the hostname of this one.
		r.release(ctx, &state.manifestServiceModel, state.Devices)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if resp.Diagnostics.HasError() || values == "" || (!creating && plan.Values.Equal(state.Values)) {
		return
	}
	ops := r.planChecks(ctx, ingressKind, &plan.manifestServiceModel, plan.Hostname, &resp.Diagnostics)
	r.checkBackend(ctx, &plan, &resp.Diagnostics)
	want, _ := plan.wantedDevices(ctx)
	// Through a ProxyGroup a device of that name would break the lookup
	// of the Tailscale Service's name.
	want.hostnames = hostnames
	r.checkDevices(ctx, devicesCheck{kind: ingressKind, name: plan.Hostname.ValueString(), ops: ops, want: want,
		state: state.Devices, creating: creating, at: path.Root("hostname")}, &resp.Diagnostics)
	if pg := plan.ProxyGroup; !pg.IsNull() && !plan.EnvironmentID.IsUnknown() {
		cluster.CheckProxyGroupType(ctx, r.Clients, pg.ValueString(), plan.EnvironmentID.ValueString(), manifest.ProxyGroupIngress, &resp.Diagnostics)
		if ops != nil && !resp.Diagnostics.HasError() {
			cluster.CheckIngressScope(ctx, r.Clients, ops, path.Root("proxy_group"), "the Ingress "+plan.Hostname.ValueString(), &resp.Diagnostics)
			cluster.CheckServiceApproved(ctx, r.Clients, ops, cluster.ServiceApprovalCheck{
				Hostname: plan.Hostname.ValueString(), ProxyGroup: pg.ValueString(), ServiceTags: want.tags, At: path.Root("proxy_group"),
			}, &resp.Diagnostics)
		}
	}
	if creating && r.Clients.TailnetOrNil() != nil {
		cluster.CheckHTTPS(ctx, r.Clients, &resp.Diagnostics, cluster.HTTPSNeed{
			At:     path.Root("hostname"),
			Needs:  "the Ingress's proxy needs to serve HTTPS with a certificate for its MagicDNS name",
			Serves: "The Ingress's proxy serves HTTPS on port 443 with the tailnet's certificate for its MagicDNS name",
			Without: "the operator would make the proxy, whose certificate would be refused, and the Ingress would never get an " +
				"address",
			Fix: ", then plan again",
		})
	}
	if creating {
		r.checkServiceFree(ctx, plan.Hostname.ValueString(), &resp.Diagnostics)
	}
}

// checkBackend refuses an application that is not in the Ingress's
// environment (the operator proxies only to a Service of the Ingress's
// namespace) and a backend port that the application does not declare
// (Qovery's Service has no such port: every request would fail).
func (r *ingressResource) checkBackend(ctx context.Context, m *ingressModel, diags *diag.Diagnostics) {
	q := r.Clients.QoveryOrNil()
	if q == nil {
		return
	}
	appID := m.ApplicationID.ValueString()
	app, err := q.GetApplication(ctx, appID)
	if qovery.IsNotFound(err) {
		diags.AddAttributeError(path.Root("application_id"), "Application Not Found",
			fmt.Sprintf("Qovery has no application %s visible to this API token. Check application_id.", appID))
		return
	}
	if err != nil {
		diags.AddWarning("Application Not Checked", fmt.Sprintf("qtail could not read the application %s: %v. The apply reports any problem.", appID, err))
		return
	}
	if envID := m.EnvironmentID.ValueString(); !m.EnvironmentID.IsUnknown() && app.Environment.ID != envID {
		diags.AddAttributeError(path.Root("environment_id"), "Ingress Outside the Application's Environment",
			fmt.Sprintf("The application %s (%s) runs in the environment %s, not %s. The operator proxies an Ingress only to a Service "+
				"of the Ingress's own namespace, so the Ingress must be deployed in the application's environment: set "+
				"environment_id = %q.", app.Name, appID, app.Environment.ID, envID, app.Environment.ID))
	}
	port := m.BackendPort.ValueInt64()
	declared := make([]string, 0, len(app.Ports))
	for _, p := range app.Ports {
		if int64(p.InternalPort) == port {
			return
		}
		declared = append(declared, strconv.Itoa(p.InternalPort))
	}
	list := "none"
	if len(declared) > 0 {
		list = strings.Join(declared, ", ")
	}
	diags.AddAttributeError(path.Root("backend_port"), "Backend Port Not Declared",
		fmt.Sprintf("The application %s (%s) declares no port %d (its ports: %s). Its Kubernetes Service has only the declared "+
			"ports, so the proxy would answer every request with an error. Set backend_port to a declared port, or declare "+
			"port %d on the application in Qovery.", app.Name, appID, port, list, port))
}

// checkServiceFree refuses a hostname that a Tailscale Service of the
// tailnet has: its MagicDNS name is the one the proxy would take.
func (r *ingressResource) checkServiceFree(ctx context.Context, hostname string, diags *diag.Diagnostics) {
	tn := r.Clients.TailnetOrNil()
	if tn == nil {
		return
	}
	name := tailnet.ServiceName(hostname)
	svc, err := tn.FindService(ctx, name)
	switch {
	case err != nil:
		diags.AddWarning("Tailscale Services Not Checked",
			fmt.Sprintf("qtail could not look up the Tailscale Service %s (%v): make sure that none uses the hostname %s.", name, err, hostname))
	case svc != nil:
		diags.AddAttributeError(path.Root("hostname"), "Hostname Taken by a Tailscale Service",
			fmt.Sprintf("The tailnet has the Tailscale Service %s, whose MagicDNS name is %s.TAILNET.ts.net: the Ingress's proxy "+
				"could not take that name. Choose another hostname, or remove the Service.", name, hostname))
	}
}
