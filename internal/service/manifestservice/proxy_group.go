package manifestservice

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

var (
	_ resource.Resource                   = &proxyGroupResource{}
	_ resource.ResourceWithConfigure      = &proxyGroupResource{}
	_ resource.ResourceWithImportState    = &proxyGroupResource{}
	_ resource.ResourceWithValidateConfig = &proxyGroupResource{}
	_ resource.ResourceWithModifyPlan     = &proxyGroupResource{}
)

// NewProxyGroupResource returns the qtail_proxy_group resource.
func NewProxyGroupResource() resource.Resource {
	r := &proxyGroupResource{}
	r.kind = proxyGroupKind
	r.hooks = r
	return r
}

// proxyGroupResource adds to the shared lifecycle the ProxyGroup's devices.
type proxyGroupResource struct {
	manifestResource[proxyGroupModel, *proxyGroupModel]
	replicaHooks[proxyGroupModel, *proxyGroupModel]
}

func (r *proxyGroupResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_proxy_group"
}

// deployed waits for the ProxyGroup's devices after a deployment.
func (r *proxyGroupResource) deployed(ctx context.Context, m *proxyGroupModel, tn *tailnet.Client, d cluster.Deployment, diags *diag.Diagnostics) {
	r.awaitDevices(ctx, proxyGroupKind, m, m.EnvironmentID.ValueString(), tn, d, diags)
}

// observe reads the ProxyGroup's tags and its devices on the tailnet.
func (r *proxyGroupResource) observe(ctx context.Context, m *proxyGroupModel, diags *diag.Diagnostics) {
	r.resolveTags(ctx, &m.proxyReplicas, m.EnvironmentID.ValueString(), m.ID.ValueString(), diags)
	if tn := r.Clients.TailnetOrNil(); tn != nil {
		observeDevices(ctx, proxyGroupKind, m, tn, m.Deployed.ValueBool(), diags)
	}
}
