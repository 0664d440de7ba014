package manifestservice

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

func (r *proxyGroupResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m proxyGroupModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	prefix, at := m.HostnamePrefix, path.Root("hostname_prefix")
	if prefix.IsNull() {
		prefix, at = m.Name, path.Root("name")
	}
	checkReplicaHostnames(prefix, m.Replicas, manifest.ProxyGroupDefaultReplicas, at, &resp.Diagnostics)
	checkKubeAPIServerConfig(&m, &resp.Diagnostics)
}

func (r *proxyGroupResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !r.Configured() {
		return
	}
	var plan, state proxyGroupModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	creating := req.State.Raw.IsNull()
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if proxyGroupReplacing.ReplacedBy(ctx, req, &resp.Diagnostics) {
		// Terraform plans the replacement again as a creation: it may
		// take the Helm service name and the hostnames of this one.
		r.release(ctx, &state.manifestServiceModel, state.Devices)
		if !plan.Type.Equal(state.Type) && !plan.Type.IsUnknown() {
			resp.Diagnostics.AddAttributeWarning(path.Root("type"), "Changing the Type Replaces the ProxyGroup",
				fmt.Sprintf("The ProxyGroup CRD makes the type immutable, so qtail deletes the ProxyGroup %s (its devices leave the "+
					"tailnet) and creates it again as type %q: new devices, with new tailnet addresses. The Services it served "+
					"stop working until the new devices are up, and only a ProxyGroup of type %q serves exposed Services.",
					state.Name.ValueString(), plan.Type.ValueString(), manifest.ProxyGroupIngress))
		}
	}
	values := ""
	var spec manifest.ProxyGroup
	if plan.specKnown() {
		var diags diag.Diagnostics
		spec, values, diags = plan.render(ctx)
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
	}
	plan.planShared(proxyGroupKind, plan.Name, values)
	if creating {
		r.expectCreation(&plan.manifestServiceModel, proxyGroupKind)
	}
	changed := creating || values == "" || !plan.Values.Equal(state.Values)
	plan.Devices = planDevices(ctx, changed, plan.WaitForDevices.ValueBool(), state.Devices, spec.DeviceHostnames())
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var ops *cluster.Lookup
	if values != "" && (creating || !plan.Values.Equal(state.Values)) {
		ops = r.planChecks(ctx, proxyGroupKind, &plan.manifestServiceModel, plan.Name, &resp.Diagnostics)
		at := path.Root("name")
		if spec.HostnamePrefix != "" {
			at = path.Root("hostname_prefix")
		}
		r.checkDevices(ctx, devicesCheck{kind: proxyGroupKind, name: spec.Name, ops: ops, want: proxyGroupWant(spec),
			state: state.Devices, creating: creating, at: at}, &resp.Diagnostics)
		if ops != nil && creating && spec.Type == manifest.ProxyGroupIngress {
			cluster.CheckIngressScope(ctx, r.Clients, ops, path.Root("type"), "the ingress ProxyGroup "+spec.Name, &resp.Diagnostics)
		}
		if ops != nil && spec.Type == manifest.ProxyGroupKubeAPIServer {
			stateMode, _ := state.kubeAPIServerMode()
			r.checkKubeAPIServer(ctx, ops, spec, creating || stateMode != spec.KubeAPIServerMode, &resp.Diagnostics)
		}
	}
	if !plan.Name.IsUnknown() && !plan.Type.IsUnknown() && !plan.EnvironmentID.IsUnknown() {
		clusterID := ""
		if ops != nil {
			clusterID = ops.Env.ClusterID
		}
		r.Clients.Planned().DeclareProxyGroup(plan.EnvironmentID.ValueString(), clusterID, plan.Name.ValueString(), plan.Type.ValueString())
	}
}
