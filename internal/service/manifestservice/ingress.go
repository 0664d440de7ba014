package manifestservice

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ resource.Resource                = &ingressResource{}
	_ resource.ResourceWithConfigure   = &ingressResource{}
	_ resource.ResourceWithImportState = &ingressResource{}
	_ resource.ResourceWithModifyPlan  = &ingressResource{}
)

// ingressKind is the Ingress of an HTTPS exposure: namespaced, in the
// application's environment.
var ingressKind = manifestKind{noun: "Ingress", resourceType: "qtail_ingress", object: manifest.KindIngress, clusterScoped: false,
	servicePrefix: "tailscale-ingress-", renameHint: "choose another hostname"}

// NewIngressResource returns the qtail_ingress resource.
func NewIngressResource() resource.Resource {
	r := &ingressResource{}
	r.kind = ingressKind
	r.hooks = r
	return r
}

// ingressResource adds to the shared lifecycle the proxy device of the
// Ingress and the application it serves.
type ingressResource struct {
	manifestResource[ingressModel, *ingressModel]
	noHooks[ingressModel]
}

func (r *ingressResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_ingress"
}

// usesTailnet reports whether the apply waits for the proxy device.
func (r *ingressResource) usesTailnet(m *ingressModel) bool { return m.waitsForDevices() }

// deployed waits, after a deployment, for the proxy device, and records
// its MagicDNS name.
func (r *ingressResource) deployed(ctx context.Context, m *ingressModel, tn *tailnet.Client, d cluster.Deployment, diags *diag.Diagnostics) {
	if !m.waitsForDevices() {
		tn = nil
	}
	devices, _, ok := r.awaitDevices(ctx, ingressKind, m, m.EnvironmentID.ValueString(), tn, d, diags)
	if ok && len(devices) == 1 {
		m.setAddress(&devices[0])
		return
	}
	m.setAddress(nil)
}

// redeploy reports whether the proxy device is gone from the tailnet.
func (r *ingressResource) redeploy(ctx context.Context, plan, state *ingressModel) bool {
	return plan.waitsForDevices() && !devicesComplete(ctx, state.Devices, []string{plan.Hostname.ValueString()})
}

// imported sets wait_for_device to its default after an import.
func (r *ingressResource) imported(m *ingressModel) {
	if m.WaitForDevice.IsNull() {
		m.WaitForDevice = types.BoolValue(true)
	}
}

// leftovers are the IDs of the proxy device of the state.
func (r *ingressResource) leftovers(ctx context.Context, m *ingressModel) []string {
	_, ids := stateDevices(ctx, m.Devices)
	return ids
}

// observe finds, after an import, the application whose Service the
// Ingress names, and reads the proxy device on the tailnet.
func (r *ingressResource) observe(ctx context.Context, m *ingressModel, diags *diag.Diagnostics) {
	if m.ApplicationID.IsNull() {
		r.findApplication(ctx, m, diags)
	}
	tn := r.Clients.TailnetOrNil()
	if tn == nil {
		return
	}
	devices, _, _, ok := observeDevices(ctx, ingressKind, m, tn, m.Deployed.ValueBool(), diags)
	if !ok {
		return
	}
	if len(devices) == 1 {
		m.setAddress(&devices[0])
		return
	}
	m.setAddress(nil)
}

// findApplication sets the application of an imported Ingress: the one of
// its environment whose Kubernetes Service is the Ingress's backend.
func (r *ingressResource) findApplication(ctx context.Context, m *ingressModel, diags *diag.Diagnostics) {
	apps, err := r.Clients.QoveryOrNil().ListApplications(ctx, m.EnvironmentID.ValueString())
	if err != nil {
		tfx.APIError(diags, "list the applications of the Ingress's environment", err)
		return
	}
	for _, a := range apps {
		if manifest.ApplicationServiceName(a.ID) == m.backendService {
			m.ApplicationID = types.StringValue(a.ID)
			return
		}
	}
	diags.AddError("Ingress Backend Not Found",
		fmt.Sprintf("The Ingress of the Helm service %s proxies to the Service %q, which no application of the environment %s has. "+
			"Import the Helm service of an Ingress that qtail_ingress made, whose backend is an application of its environment.",
			m.ID.ValueString(), m.backendService, m.EnvironmentID.ValueString()))
}
