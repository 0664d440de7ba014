package manifestservice

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ resource.Resource                   = &egressServiceResource{}
	_ resource.ResourceWithConfigure      = &egressServiceResource{}
	_ resource.ResourceWithImportState    = &egressServiceResource{}
	_ resource.ResourceWithValidateConfig = &egressServiceResource{}
	_ resource.ResourceWithModifyPlan     = &egressServiceResource{}
)

// NewEgressServiceResource returns the qtail_egress_service resource.
func NewEgressServiceResource() resource.Resource {
	r := &egressServiceResource{}
	r.kind = egressKind
	r.hooks = r
	return r
}

// egressServiceResource adds to the shared lifecycle the Service's
// namespace, read from Qovery, and the device of its proxy.
type egressServiceResource struct {
	manifestResource[egressServiceModel, *egressServiceModel]
	noHooks[egressServiceModel]
}

func (r *egressServiceResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_egress_service"
}

// namespaceMissing warns that Qovery did not give the namespace of the
// Helm service helmID; known says whether namespace and cluster_dns_name
// keep a value read before.
func namespaceMissing(diags *diag.Diagnostics, helmID string, known bool) {
	consequence := "namespace and cluster_dns_name stay empty"
	if known {
		consequence = "namespace and cluster_dns_name keep their last known values"
	}
	diags.AddWarning("Namespace Unknown",
		fmt.Sprintf("Qovery lists no built-in variable %s for the Helm service %s, so qtail cannot tell the Service's namespace; %s. "+
			"Look up the namespace with kubectl get services --all-namespaces, or in the environment's variables in the Qovery console, "+
			"and run terraform apply -refresh-only once Qovery lists the variable.", namespaceVariable, helmID, consequence))
}

// recordNamespace fills an unknown namespace from the variables of the
// Helm service helmID.
func (r *egressServiceResource) recordNamespace(ctx context.Context, m *egressServiceModel, helmID string, diags *diag.Diagnostics) {
	if !m.Namespace.IsUnknown() {
		m.setNamespace(m.Namespace)
		return
	}
	vars, err := r.Clients.QoveryOrNil().ListVariables(ctx, helmID, qovery.VariableScopeHelm)
	if err != nil {
		diags.AddWarning("Namespace Not Read",
			fmt.Sprintf("qtail could not list the variables of the Helm service %s to find its namespace: %v. namespace and "+
				"cluster_dns_name stay empty until the next refresh reads them; run terraform apply -refresh-only.", helmID, err))
		m.setNamespace(types.StringNull())
		return
	}
	ns, ok := namespaceFrom(vars)
	if !ok {
		namespaceMissing(diags, helmID, false)
		m.setNamespace(types.StringNull())
		return
	}
	m.setNamespace(types.StringValue(ns))
}

// usesTailnet reports whether the apply waits for the proxy device.
func (r *egressServiceResource) usesTailnet(m *egressServiceModel) bool { return m.waitsForDevices() }

// written records the namespace of the Helm service h.
func (r *egressServiceResource) written(ctx context.Context, m *egressServiceModel, h *qovery.Helm, diags *diag.Diagnostics) {
	r.recordNamespace(ctx, m, h.ID, diags)
}

// redeploy reports whether the proxy device is gone from the tailnet.
func (r *egressServiceResource) redeploy(ctx context.Context, plan, state *egressServiceModel) bool {
	return plan.waitsForDevices() && !devicesComplete(ctx, state.Devices, []string{plan.ProxyHostname.ValueString()})
}

// imported sets wait_for_device to its default after an import.
func (r *egressServiceResource) imported(m *egressServiceModel) {
	if m.WaitForDevice.IsNull() {
		m.WaitForDevice = types.BoolValue(true)
	}
}

// leftovers are the IDs of the proxy devices of the state.
func (r *egressServiceResource) leftovers(ctx context.Context, m *egressServiceModel) []string {
	_, ids := stateDevices(ctx, m.Devices)
	return ids
}

// deployed waits, after a deployment, for the egress proxy device, and
// records it with its tags. With a ProxyGroup there is none.
func (r *egressServiceResource) deployed(ctx context.Context, m *egressServiceModel, tn *tailnet.Client, d cluster.Deployment, diags *diag.Diagnostics) {
	if !m.ownProxy() {
		m.Devices, _ = types.ListValue(manifestDeviceType, nil)
		return
	}
	if !m.waitsForDevices() {
		tn = nil
	}
	devices, _, ok := r.awaitDevices(ctx, egressKind, m, m.EnvironmentID.ValueString(), tn, d, diags)
	if ok && len(devices) == 1 && m.ProxyTags.IsUnknown() {
		m.ProxyTags = tfx.StringList(devices[0].Tags)
	}
}

// observe reads the Service's namespace: the environment's built-in
// variable, which the Helm service sees.
func (r *egressServiceResource) observe(ctx context.Context, m *egressServiceModel, diags *diag.Diagnostics) {
	helmID := m.ID.ValueString()
	vars, err := r.Clients.QoveryOrNil().ListVariables(ctx, helmID, qovery.VariableScopeHelm)
	if err != nil {
		tfx.APIError(diags, "list the variables of the egress Service's Helm service", err)
		return
	}
	if ns, ok := namespaceFrom(vars); ok {
		m.setNamespace(types.StringValue(ns))
	} else {
		namespaceMissing(diags, helmID, true)
		m.setNamespace(m.Namespace)
	}
	r.observeProxy(ctx, m, diags)
}

// observeProxy reads the egress proxy device on the tailnet: the device
// under proxy_hostname, whose tags are the proxy's (the proxy keeps those
// of its first auth key).
func (r *egressServiceResource) observeProxy(ctx context.Context, m *egressServiceModel, diags *diag.Diagnostics) {
	tn := r.Clients.TailnetOrNil()
	switch {
	case !m.ownProxy():
		m.ProxyTags = types.ListNull(types.StringType)
		m.Devices, _ = types.ListValue(manifestDeviceType, nil)
		return
	case tn == nil || m.ProxyHostname.IsNull() || m.ProxyHostname.IsUnknown():
		return
	}
	hostname := m.ProxyHostname.ValueString()
	found, _, err := findDevices(ctx, tn, deviceWant{hostnames: []string{hostname}})
	if err != nil {
		tfx.APIError(diags, "look for the egress proxy device on the tailnet", err)
		return
	}
	if len(found) == 0 {
		if m.waitsForDevices() && m.Deployed.ValueBool() {
			diags.AddWarning("Egress Proxy Device Missing",
				fmt.Sprintf("The egress Service %s has no proxy device %s on the tailnet. qtail plans to redeploy it so that the operator "+
					"brings the proxy back.", m.Name.ValueString(), hostname))
		}
		m.Devices, _ = types.ListValue(manifestDeviceType, nil)
		return
	}
	setDevices(m, found, diags)
	m.ProxyTags = tfx.StringList(found[0].Tags)
}
