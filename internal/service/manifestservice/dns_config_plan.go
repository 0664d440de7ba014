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
	"github.com/qtail/terraform-provider-qtail/internal/planned"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

func (r *dnsConfigResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !r.Configured() {
		return
	}
	var plan, state dnsConfigModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	creating := req.State.Raw.IsNull()
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if dnsConfigReplacing.ReplacedBy(ctx, req, &resp.Diagnostics) {
		r.release(ctx, &state.manifestServiceModel, types.ListNull(manifestDeviceType))
	}
	values := ""
	if plan.specKnown() {
		var diags diag.Diagnostics
		_, values, diags = plan.render()
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
	}
	plan.planShared(dnsConfigKind, plan.Name, values)
	plan.planNameserverIP()
	if creating {
		r.expectCreation(&plan.manifestServiceModel, dnsConfigKind)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !plan.Replicas.IsNull() && !plan.Replicas.IsUnknown() && plan.Replicas.ValueInt64() == 0 &&
		(creating || !plan.Replicas.Equal(state.Replicas)) {
		resp.Diagnostics.AddAttributeWarning(path.Root("replicas"), "No Nameserver Pod",
			"With replicas = 0 the operator keeps the nameserver's Service, and reports its IP, but runs no pod behind it: the "+
				"ts.net names that the cluster's DNS forwards to it do not resolve.")
	}
	if values == "" || (!creating && plan.Values.Equal(state.Values)) {
		return
	}
	ops := r.planChecks(ctx, dnsConfigKind, &plan.manifestServiceModel, plan.Name, &resp.Diagnostics)
	if ops == nil {
		return
	}
	r.checkDNSConfigFields(ctx, &plan, ops, &resp.Diagnostics)
	r.checkSingleDNSConfig(ctx, &plan, creating, ops, &resp.Diagnostics)
}

// checkDNSConfigFields refuses the fields that the DNSConfig CRD of the
// chart series of the cluster's operator does not define: the API server
// would drop them, and the nameserver would run without them.
func (r *dnsConfigResource) checkDNSConfigFields(ctx context.Context, m *dnsConfigModel, ops *cluster.Lookup, diags *diag.Diagnostics) {
	fields := []struct {
		attr, field, since string
		set                bool
		supported          func(manifest.DNSConfigSupport) bool
	}{
		{"replicas", "spec.nameserver.replicas", manifest.DNSConfigReplicasSince, !m.Replicas.IsNull(),
			func(s manifest.DNSConfigSupport) bool { return s.Replicas }},
		{"cluster_ip", "spec.nameserver.service.clusterIP", manifest.DNSConfigClusterIPSince, !m.ClusterIP.IsNull(),
			func(s manifest.DNSConfigSupport) bool { return s.ClusterIP }},
	}
	var series cluster.OperatorSeries
	looked := false
	for _, f := range fields {
		if !f.set {
			continue
		}
		if !looked {
			series, looked = ops.OperatorSeries(ctx), true
		}
		switch {
		case series.Version == "":
			// No operator known yet, or its version is not known: the
			// operator check has said what it could.
		case !series.Known:
			diags.AddAttributeWarning(path.Root(f.attr), "Field Not Checked for This Chart Version",
				fmt.Sprintf("The operator of cluster %s runs the %s chart %s, which qtail has not checked, so it cannot tell whether "+
					"its DNSConfig CRD has %s (the checked charts do from %s on). Without it the API server drops the field.",
					ops.Env.ClusterID, cluster.OperatorChart, series.Version, f.field, f.since))
		case !f.supported(series.Series.DNSConfig()):
			diags.AddAttributeError(path.Root(f.attr), "Field Not in the Operator's DNSConfig CRD",
				fmt.Sprintf("The operator of cluster %s runs the %s chart %s, whose DNSConfig CRD has no %s (it came with %s): the "+
					"API server would drop it, and the nameserver would run without it. Upgrade the operator (chart_version of its "+
					"qtail_operator) to %s or later, or remove %s.",
					ops.Env.ClusterID, cluster.OperatorChart, series.Version, f.field, f.since, f.since, f.attr))
		}
	}
}

// dnsConfigSlot is the name under which the one DNSConfig of a cluster
// is claimed in the planned world.
func dnsConfigSlot(clusterID string) string {
	return planned.ObjectName(manifest.KindDNSConfig, "(one per cluster)", clusterID)
}

// checkSingleDNSConfig refuses a second DNSConfig on a cluster: another
// qtail_dns_config of this plan, or another Helm service of the cluster
// that deploys one. The operator supports one: with two, it logs an error
// and records a MultipleDNSConfigsPresent event on each reconciliation,
// and both share one nameserver, whose pods follow whichever DNSConfig it
// reconciled last and which goes when the first one goes.
func (r *dnsConfigResource) checkSingleDNSConfig(ctx context.Context, m *dnsConfigModel, creating bool, ops *cluster.Lookup, diags *diag.Diagnostics) {
	clusterID := ops.Env.ClusterID
	owner := fmt.Sprintf("qtail_dns_config %s in environment %s", m.Name.ValueString(), ops.Env.ID)
	if other, conflict := r.world().ClaimObject(dnsConfigSlot(clusterID), owner); conflict {
		diags.AddAttributeError(path.Root("environment_id"), "Second DNSConfig on the Cluster",
			fmt.Sprintf("Another resource of this configuration (%s) plans a DNSConfig on cluster %s, and the Tailscale operator "+
				"supports one per cluster: with two, it reports an error and both share one nameserver. Keep one qtail_dns_config per "+
				"cluster.", other, clusterID))
		return
	}
	helms, err := ops.Helms(ctx)
	if err != nil {
		tflog.Debug(ctx, "listing the cluster's Helm services failed; other DNSConfigs are not checked", map[string]any{"error": err.Error()})
		return
	}
	own := m.ID.ValueString()
	for _, h := range helms {
		if h.ID == own || r.world().Released(h.ID) || (creating && r.replaces(&h, &m.manifestServiceModel)) {
			continue
		}
		file, ok := cluster.ManifestsFile(&h)
		if !ok {
			continue
		}
		names := manifest.Names(file, manifest.KindDNSConfig)
		if len(names) == 0 {
			continue
		}
		detail := fmt.Sprintf("The Helm service %q (%s) already deploys the DNSConfig %s on cluster %s, and the Tailscale operator "+
			"supports one per cluster: with two, it reports an error and both share one nameserver. Delete that Helm service first, "+
			"or manage it with this resource instead: import it with %s", h.Name, h.ID, names[0], clusterID,
			tfx.ImportHint(dnsConfigKind.resourceType, h.ID))
		if creating {
			diags.AddAttributeError(path.Root("environment_id"), "Second DNSConfig on the Cluster", detail)
		} else {
			diags.AddAttributeWarning(path.Root("environment_id"), "Second DNSConfig on the Cluster", detail)
		}
		return
	}
}
