package manifestservice

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

func (r *egressServiceResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m egressServiceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	fqdnSet, ipSet := !m.TailnetFQDN.IsNull(), !m.TailnetIP.IsNull()
	switch {
	case m.TailnetFQDN.IsUnknown() || m.TailnetIP.IsUnknown():
		// Known at apply: the plan checks them again.
	case fqdnSet && ipSet:
		resp.Diagnostics.AddAttributeError(path.Root("tailnet_ip"), "Two Egress Targets",
			"tailnet_fqdn and tailnet_ip both name the machine to reach, and the operator refuses a Service with both annotations. Keep one of them.")
	case !fqdnSet && !ipSet:
		resp.Diagnostics.AddAttributeError(path.Root("tailnet_fqdn"), "No Egress Target",
			"An egress Service reaches one tailnet machine: set tailnet_fqdn to its MagicDNS name (such as db.tail1234.ts.net) or tailnet_ip to its Tailscale address.")
	}
	if fqdn := m.TailnetFQDN; fqdnSet && !fqdn.IsUnknown() && checkTailnetFQDN(fqdn.ValueString()) == nil && !magicDNSNameRE.MatchString(fqdn.ValueString()) {
		resp.Diagnostics.AddAttributeWarning(path.Root("tailnet_fqdn"), "Not a MagicDNS Name",
			fmt.Sprintf("The operator only accepts a name of the form MACHINE.TAILNET.ts.net in %s; it ignores the Service otherwise, "+
				"and no egress proxy appears. Give the machine's MagicDNS name (the qtail_device data source has it), or its address in tailnet_ip.",
				manifest.AnnotationTailnetFQDN))
	}
	if !m.Ports.IsNull() && !m.Ports.IsUnknown() {
		var ports []types.String
		resp.Diagnostics.Append(m.Ports.ElementsAs(ctx, &ports, false)...)
		seen := map[string]int{}
		for i, p := range ports {
			if p.IsUnknown() {
				continue
			}
			sp, err := parseServicePort(p.ValueString())
			if err != nil {
				continue // reported by the element validator
			}
			if j, dup := seen[sp.String()]; dup {
				resp.Diagnostics.AddAttributeError(path.Root("ports").AtListIndex(i), "Duplicate Port",
					fmt.Sprintf("%s is listed twice (also at index %d). Remove one of them.", sp, j))
				continue
			}
			seen[sp.String()] = i
		}
	}
	if !m.ProxyGroup.IsNull() && !m.ProxyGroup.IsUnknown() && m.Ports.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("ports"), "Ports Required With a ProxyGroup",
			fmt.Sprintf("The operator routes an egress Service through the ProxyGroup %s port by port, and refuses one without ports. "+
				"List the ports the workloads call, such as ports = [\"tcp:5432\"].", m.ProxyGroup.ValueString()))
	}
}

func (r *egressServiceResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !r.Configured() {
		return
	}
	var plan, state egressServiceModel
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
		_, values, diags = plan.render(ctx)
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
	}
	plan.planShared(egressKind, plan.Name, values)
	if creating {
		r.expectCreation(&plan.manifestServiceModel, egressKind)
	}
	// The environment, hence the namespace, cannot change without a
	// replacement; a refresh keeps the state's value current.
	newService := creating || !plan.EnvironmentID.Equal(state.EnvironmentID) || !plan.Name.Equal(state.Name)
	if newService {
		plan.setNamespace(r.plannedNamespace(ctx, plan.EnvironmentID))
	} else {
		plan.setNamespace(state.Namespace)
	}
	// A proxy of the Service's own is made when the Service is new or
	// leaves its ProxyGroup; it keeps the tags of its first auth key.
	newProxy := newService || !state.ownProxy()
	changed := newService || values == "" || !plan.Values.Equal(state.Values)
	r.planProxy(ctx, &plan, &state, newProxy, changed)
	if egressServiceReplacing.ReplacedBy(ctx, req, &resp.Diagnostics) {
		// Replaced: the replacement, planned as a creation, may take the
		// proxy's hostname.
		r.release(ctx, &state.manifestServiceModel, state.Devices)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if resp.Diagnostics.HasError() || values == "" {
		return
	}
	if !creating && plan.Values.Equal(state.Values) {
		return
	}
	if newService && plan.Hostname.IsNull() && plan.ownProxy() {
		checkProxyHostname(plan.Name, plan.Namespace, &resp.Diagnostics)
	}
	ops := r.planChecks(ctx, egressKind, &plan.manifestServiceModel, plan.Name, &resp.Diagnostics)
	if pg := plan.ProxyGroup; !pg.IsNull() && !plan.EnvironmentID.IsUnknown() {
		cluster.CheckProxyGroupType(ctx, r.Clients, pg.ValueString(), plan.EnvironmentID.ValueString(), manifest.ProxyGroupEgress, &resp.Diagnostics)
		return
	}
	at := path.Root("hostname")
	if plan.Hostname.IsNull() {
		at = path.Root("name")
	}
	want, _ := plan.wantedDevices(ctx)
	r.checkDevices(ctx, devicesCheck{kind: egressKind, name: plan.Name.ValueString(), ops: ops, want: want,
		state: state.Devices, creating: newProxy, at: at}, &resp.Diagnostics)
}

// planProxy plans the egress proxy of m: its hostname and tags, and its
// device (unknown when the apply changes it); all null with a ProxyGroup.
// newProxy is set when the apply makes a new proxy, changed when it
// deploys a new configuration.
func (r *egressServiceResource) planProxy(ctx context.Context, m, state *egressServiceModel, newProxy, changed bool) {
	switch {
	case m.ProxyGroup.IsUnknown():
		m.ProxyTags, m.Devices = types.ListUnknown(types.StringType), types.ListUnknown(manifestDeviceType)
		return
	case !m.ownProxy():
		m.ProxyTags = types.ListNull(types.StringType)
		m.Devices, _ = types.ListValue(manifestDeviceType, nil)
		return
	case !m.Tags.IsNull():
		m.ProxyTags = m.Tags
	case !newProxy && !state.ProxyTags.IsNull():
		m.ProxyTags = state.ProxyTags
	default:
		m.ProxyTags = r.operatorProxyTags(ctx, m.EnvironmentID)
	}
	hostnames := []string{}
	if !m.ProxyHostname.IsUnknown() {
		hostnames = append(hostnames, m.ProxyHostname.ValueString())
	}
	m.Devices = planDevices(ctx, changed || newProxy || m.ProxyHostname.IsUnknown(), m.WaitForDevice.ValueBool(), state.Devices, hostnames)
}

// operatorProxyTags returns the proxy tags of the operator of the cluster
// of envID (as this plan leaves it), or unknown when qtail cannot read them.
func (r *egressServiceResource) operatorProxyTags(ctx context.Context, envID types.String) types.List {
	q := r.Clients.QoveryOrNil()
	if q == nil || envID.IsUnknown() || envID.IsNull() {
		return types.ListUnknown(types.StringType)
	}
	env, err := q.GetEnvironment(ctx, envID.ValueString())
	if err != nil {
		return types.ListUnknown(types.StringType)
	}
	op, err := cluster.NewLookup(q, env).UsePlan(r.world()).Operator(ctx)
	if err != nil {
		return types.ListUnknown(types.StringType)
	}
	return tfx.StringList(manifest.ProxyDeviceTags(nil, op.ProxyTags))
}

// checkProxyHostname refuses a Service whose egress proxy the operator
// would refuse: it names the proxy NAMESPACE-NAME, which must be a DNS
// label of at most 63 characters.
func checkProxyHostname(name, namespace types.String, diags *diag.Diagnostics) {
	if name.IsUnknown() || namespace.IsUnknown() || namespace.IsNull() {
		return
	}
	hostname := namespace.ValueString() + "-" + name.ValueString()
	if len(hostname) <= 63 {
		return
	}
	diags.AddAttributeError(path.Root("name"), "Service Name Too Long",
		fmt.Sprintf("The operator names the egress proxy NAMESPACE-NAME, here %q: %d characters, more than the 63 of a DNS label, so it "+
			"would refuse the Service. Shorten name to at most %d characters.", hostname, len(hostname), 63-len(namespace.ValueString())-1))
}

// plannedNamespace reads the namespace of a new Service from the
// environment's variables, or returns unknown.
func (r *egressServiceResource) plannedNamespace(ctx context.Context, envID types.String) types.String {
	q := r.Clients.QoveryOrNil()
	if q == nil || envID.IsUnknown() || envID.IsNull() {
		return types.StringUnknown()
	}
	vars, err := q.ListVariables(ctx, envID.ValueString(), qovery.VariableScopeEnvironment)
	if err != nil {
		tflog.Debug(ctx, "listing the environment's variables failed; the namespace is known after apply", map[string]any{"error": err.Error()})
		return types.StringUnknown()
	}
	if ns, ok := namespaceFrom(vars); ok {
		return types.StringValue(ns)
	}
	return types.StringUnknown()
}
