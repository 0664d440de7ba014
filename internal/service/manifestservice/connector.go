package manifestservice

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ resource.Resource                   = &connectorResource{}
	_ resource.ResourceWithConfigure      = &connectorResource{}
	_ resource.ResourceWithImportState    = &connectorResource{}
	_ resource.ResourceWithValidateConfig = &connectorResource{}
	_ resource.ResourceWithModifyPlan     = &connectorResource{}
)

// NewConnectorResource returns the qtail_connector resource.
func NewConnectorResource() resource.Resource {
	r := &connectorResource{}
	r.kind = connectorKind
	r.hooks = r
	return r
}

// connectorResource adds to the shared lifecycle the connector's devices on
// the tailnet and the approval of their routes.
type connectorResource struct {
	manifestResource[connectorModel, *connectorModel]
	replicaHooks[connectorModel, *connectorModel]
}

func (r *connectorResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_connector"
}

// imported sets approve_routes to its default after an import.
func (r *connectorResource) imported(m *connectorModel) {
	if m.ApproveRoutes.IsNull() {
		m.ApproveRoutes = types.BoolValue(false)
	}
	r.replicaHooks.imported(m)
}

// deployed waits for the connector's devices after a deployment and
// approves their routes.
func (r *connectorResource) deployed(ctx context.Context, m *connectorModel, tn *tailnet.Client, d cluster.Deployment, diags *diag.Diagnostics) {
	m.RoutesApproved = types.BoolValue(false)
	devices, want, ok := r.awaitDevices(ctx, connectorKind, m, m.EnvironmentID.ValueString(), tn, d, diags)
	if ok {
		r.approve(ctx, m, tn, devices, want, diags)
	}
}

// observe reads the connector's devices on the tailnet.
func (r *connectorResource) observe(ctx context.Context, m *connectorModel, diags *diag.Diagnostics) {
	r.resolveTags(ctx, &m.proxyReplicas, m.EnvironmentID.ValueString(), m.ID.ValueString(), diags)
	if r.Clients.TailnetOrNil() == nil {
		return
	}
	devices, want, complete, ok := observeDevices(ctx, connectorKind, m, r.Clients.TailnetOrNil(), m.Deployed.ValueBool(), diags)
	if !ok {
		return
	}
	m.RoutesApproved = types.BoolValue(complete && routesApprovedOn(devices, want.routes))
	if m.ApproveRoutes.ValueBool() && complete && !m.RoutesApproved.ValueBool() {
		diags.AddWarning("Connector Routes Not Approved",
			fmt.Sprintf("Some routes of the connector %s are not approved on its devices (revoked by hand?). qtail plans to approve them again.",
				m.Name.ValueString()))
	}
}

// repair approves the routes again on the running devices, when no
// deployment is needed.
func (r *connectorResource) repair(ctx context.Context, m *connectorModel, tn *tailnet.Client, diags *diag.Diagnostics) {
	if tn == nil {
		return
	}
	devices, want, _, ok := observeDevices(ctx, connectorKind, m, tn, false, diags)
	if ok {
		r.approve(ctx, m, tn, devices, want, diags)
	}
}

// approve approves, with approve_routes, the routes of the connector on its
// devices, and records the devices and whether every route is approved. A
// failed approval leaves the devices as they are: the state says so, and
// the next plan approves the routes again.
func (r *connectorResource) approve(ctx context.Context, m *connectorModel, tn *tailnet.Client, devices []tailnet.Device, want deviceWant, diags *diag.Diagnostics) {
	if m.ApproveRoutes.ValueBool() {
		approved, err := approveRoutes(ctx, tn, devices, want.routes)
		if err != nil {
			tfx.APIError(diags, "approve the connector's routes", err)
		} else {
			devices = approved
		}
	}
	setDevices(m, devices, diags)
	m.RoutesApproved = types.BoolValue(len(devices) == len(want.hostnames) && routesApprovedOn(devices, want.routes))
}
