package manifestservice

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

func (r *connectorResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m connectorModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !m.Hostname.IsNull() && !m.Hostname.IsUnknown() && !m.Replicas.IsNull() && !m.Replicas.IsUnknown() && m.Replicas.ValueInt64() > 1 {
		resp.Diagnostics.AddAttributeError(path.Root("replicas"), "Hostname With Several Replicas",
			fmt.Sprintf("hostname names one device, but replicas = %d. Set hostname_prefix instead of hostname: replica N is then PREFIX-N.",
				m.Replicas.ValueInt64()))
	}
	if m.Hostname.IsNull() && m.HostnamePrefix.IsNull() && !m.Replicas.IsNull() && !m.Replicas.IsUnknown() && m.Replicas.ValueInt64() > 1 {
		resp.Diagnostics.AddAttributeError(path.Root("hostname_prefix"), "Several Replicas Need a Hostname Prefix",
			fmt.Sprintf("Without hostname_prefix the operator gives all %d replicas the same hostname, NAME-connector, and the tailnet "+
				"tells their devices apart only by a number added to their MagicDNS names. Set hostname_prefix: replica N is then PREFIX-N.",
				m.Replicas.ValueInt64()))
	}
	if m.Hostname.IsNull() && m.HostnamePrefix.IsNull() && !m.Name.IsNull() && !m.Name.IsUnknown() {
		if h := m.Name.ValueString() + "-connector"; len(h) > 63 {
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Default Hostname Too Long",
				fmt.Sprintf("Without hostname, the operator names the connector's device %q, longer than the 63 characters of a DNS "+
					"label. Set hostname, or shorten name.", h))
		}
	}
	routesSet := !m.SubnetRoutes.IsNull()
	if !routesSet && !m.SubnetRoutes.IsUnknown() && !m.ExitNode.IsUnknown() && !m.ExitNode.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("subnet_routes"), "Connector Without a Role",
			"A connector must be a subnet router, an exit node, or both: set subnet_routes, exit_node = true, or both.")
	}
	if routesSet && !m.SubnetRoutes.IsUnknown() {
		var routes []types.String
		resp.Diagnostics.Append(m.SubnetRoutes.ElementsAs(ctx, &routes, false)...)
		known := make([]string, 0, len(routes))
		for _, r := range routes {
			if r.IsUnknown() {
				known = nil
				break
			}
			known = append(known, r.ValueString())
		}
		if known != nil {
			for _, err := range manifest.CheckSubnetRoutes(known) {
				resp.Diagnostics.AddAttributeError(path.Root("subnet_routes"), "Invalid Subnet Route", err.Error()+".")
			}
		}
	}
	if !m.ApproveRoutes.IsUnknown() && m.ApproveRoutes.ValueBool() && !m.WaitForDevices.IsNull() && !m.WaitForDevices.IsUnknown() && !m.WaitForDevices.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("approve_routes"), "Routes Approved Without Waiting",
			"approve_routes approves the routes once the devices appear, so it needs wait_for_devices = true.")
	}
	checkReplicaHostnames(m.HostnamePrefix, m.Replicas, 1, path.Root("hostname_prefix"), &resp.Diagnostics)
}

func (r *connectorResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !r.Configured() {
		return
	}
	var plan, state connectorModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	creating := req.State.Raw.IsNull()
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if connectorReplacing.ReplacedBy(ctx, req, &resp.Diagnostics) {
		// Replaced: the replacement, planned as a creation, may take the
		// Helm service name and the hostnames.
		r.release(ctx, &state.manifestServiceModel, state.Devices)
	}
	values := ""
	var spec manifest.Connector
	if plan.specKnown() {
		var diags diag.Diagnostics
		spec, values, diags = plan.render(ctx)
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
	}
	plan.planShared(connectorKind, plan.Name, values)
	if creating {
		r.expectCreation(&plan.manifestServiceModel, connectorKind)
	}
	changed := creating || values == "" || !plan.Values.Equal(state.Values)
	plan.Devices = planDevices(ctx, changed, plan.WaitForDevices.ValueBool(), state.Devices, spec.DeviceHostnames())
	if !plan.Devices.IsUnknown() && plan.ApproveRoutes.ValueBool() && !state.RoutesApproved.ValueBool() {
		// Routes revoked by hand: the plan shows them approved again.
		devices, ok := withRoutesApproved(ctx, plan.Devices, spec.AdvertisedRoutes())
		if !ok {
			devices = types.ListUnknown(manifestDeviceType)
		}
		plan.Devices = devices
	}
	switch {
	case plan.ApproveRoutes.ValueBool():
		plan.RoutesApproved = types.BoolValue(true)
	case changed || plan.Devices.IsUnknown():
		plan.RoutesApproved = types.BoolUnknown()
	default:
		plan.RoutesApproved = state.RoutesApproved
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if resp.Diagnostics.HasError() || values == "" {
		return
	}
	if !creating && plan.Values.Equal(state.Values) {
		return
	}
	ops := r.planChecks(ctx, connectorKind, &plan.manifestServiceModel, plan.Name, &resp.Diagnostics)
	at := path.Root("hostname")
	if spec.HostnamePrefix != "" {
		at = path.Root("hostname_prefix")
	}
	r.checkDevices(ctx, devicesCheck{kind: connectorKind, name: spec.Name, ops: ops, want: connectorWant(spec),
		state: state.Devices, creating: creating, at: at}, &resp.Diagnostics)
}
