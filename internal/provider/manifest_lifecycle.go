package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// The lifecycle that qtail_connector, qtail_proxy_group and
// qtail_egress_service share: write the Helm service, deploy it, then do
// what the resource does on the tailnet; read it back from Qovery; delete it
// and wait. Each resource supplies its model and a few hooks.

// manifestModel is a pointer to a resource model that embeds
// manifestServiceModel.
type manifestModel[T any] interface {
	*T
	// shared returns the embedded attributes.
	shared() *manifestServiceModel
	// renderValues returns the name of the Kubernetes object and the
	// values file; the attributes must be known.
	renderValues(ctx context.Context) (name, values string, diags diag.Diagnostics)
	// readValues sets the attributes from a values file read back from
	// Qovery; an error means the file holds no such object.
	readValues(file, helmID string, diags *diag.Diagnostics) error
	// settle replaces the unknown computed values by what a saved state
	// may hold.
	settle()
}

// manifestHooks are what one manifest resource adds to the lifecycle.
// Every hook may be nil.
type manifestHooks[T any] struct {
	kind manifestKind
	// usesTailnet reports whether a create or an update of m needs the
	// Tailscale client.
	usesTailnet func(m *T) bool
	// written runs once the Helm service h holds the configuration,
	// before the deployment.
	written func(ctx context.Context, m *T, h *qovery.Helm, diags *diag.Diagnostics)
	// deployed runs after a successful deployment: wait for devices,
	// approve routes. op is "create" or "update".
	deployed func(ctx context.Context, m *T, tn *tailnet.Client, op string, timeout time.Duration, diags *diag.Diagnostics)
	// redeploy reports whether an update must deploy although Qovery holds
	// the planned configuration (a device gone from the tailnet).
	redeploy func(ctx context.Context, plan, state *T) bool
	// repair runs instead of a deployment when the update needs none.
	repair func(ctx context.Context, m *T, tn *tailnet.Client, diags *diag.Diagnostics)
	// observe runs in Read, after the attributes were read from Qovery.
	observe func(ctx context.Context, m *T, diags *diag.Diagnostics)
	// imported sets the attributes that Qovery does not hold to their
	// defaults, after an import.
	imported func(m *T)
	// leftovers are the device IDs that Delete removes if the operator
	// left them behind.
	leftovers func(ctx context.Context, m *T) []string
}

// possessive is "the connector's".
func (k manifestKind) possessive() string { return "the " + k.noun + "'s" }

// article is "a" or "an" before the kind's noun.
func (k manifestKind) article() string {
	if strings.ContainsRune("aeiouAEIOU", rune(k.noun[0])) {
		return "an"
	}
	return "a"
}

func manifestCreate[T any, P manifestModel[T]](ctx context.Context, d *providerData, h manifestHooks[T], req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan T
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	m := P(&plan)
	base := m.shared()
	ctx, cancel, timeout := withTimeout(ctx, base.Timeouts.Create, &resp.Diagnostics)
	defer cancel()
	q, tn := manifestClients(d, h, &plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name, values, diags := m.renderValues(ctx)
	resp.Diagnostics.Append(diags...)
	chart, _, diags := base.chart(ctx)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	svc, err := writeManifestService(ctx, q, h.kind, base.EnvironmentID.ValueString(), "", name, chart, values)
	if err != nil {
		apiError(&resp.Diagnostics, "create "+h.kind.possessive()+" Helm service", err)
		return
	}
	base.Values = types.StringValue(values)
	manifestDeploy[T, P](ctx, d, h, &plan, svc, tn, "create", timeout, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// manifestClients returns the Qovery client and, when the resource needs
// it, the Tailscale client.
func manifestClients[T any](d *providerData, h manifestHooks[T], m *T, diags *diag.Diagnostics) (*qovery.Client, *tailnet.Client) {
	q, dd := d.Qovery()
	diags.Append(dd...)
	var tn *tailnet.Client
	if h.usesTailnet != nil && h.usesTailnet(m) {
		tn, dd = d.Tailnet()
		diags.Append(dd...)
	}
	return q, tn
}

// manifestDeploy records the Helm service svc in m, deploys it and runs the
// resource's hooks, recording in m what it achieved.
func manifestDeploy[T any, P manifestModel[T]](ctx context.Context, d *providerData, h manifestHooks[T], m *T, svc *qovery.Helm,
	tn *tailnet.Client, op string, timeout time.Duration, diags *diag.Diagnostics) {
	base := P(m).shared()
	defer P(m).settle()
	base.ID = types.StringValue(svc.ID)
	base.HelmServiceName = types.StringValue(svc.Name)
	base.ClusterWideResourcesAllowed = types.BoolValue(svc.AllowClusterWideResources)
	base.Deployed = types.BoolValue(false)
	base.recordChart(ctx, svc)
	if h.written != nil {
		h.written(ctx, m, svc, diags)
	}
	if err := deployOperator(ctx, d.qovery, svc.ID, d.pollInterval); err != nil {
		manifestFailed(diags, h.kind, "waiting for "+h.kind.possessive()+" deployment", op, svc.ID, err, timeout)
		return
	}
	base.Deployed = types.BoolValue(true)
	if h.deployed != nil {
		h.deployed(ctx, m, tn, op, timeout, diags)
	}
}

func manifestRead[T any, P manifestModel[T]](ctx context.Context, d *providerData, h manifestHooks[T], req resource.ReadRequest, resp *resource.ReadResponse) {
	var state T
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	m := P(&state)
	base := m.shared()
	q, diags := d.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	imported := base.Values.IsNull()
	obs, err := observeManifestService(ctx, q, base.ID.ValueString())
	if qovery.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		apiError(&resp.Diagnostics, "read "+h.kind.possessive()+" Helm service", err)
		return
	}
	base.fillFromQovery(ctx, h.kind, obs, &resp.Diagnostics)
	if imported && h.imported != nil {
		h.imported(&state)
	}
	if err := m.readValues(obs.file, obs.helm.ID, &resp.Diagnostics); err != nil {
		if imported {
			resp.Diagnostics.AddError("Not "+titleCase(h.kind.article()+" "+h.kind.noun),
				fmt.Sprintf("The Helm service %s holds no %s that qtail can read: %v. Import the Helm service of a qtail resource of this type.",
					obs.helm.ID, h.kind.object, err))
			return
		}
		resp.Diagnostics.AddWarning("Unreadable "+titleCase(h.kind.noun),
			fmt.Sprintf("The values of the Helm service %s: %v. qtail plans to write them again and redeploy.", obs.helm.ID, err))
	}
	if h.observe != nil {
		h.observe(ctx, &state, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	var devices []string
	if h.leftovers != nil {
		devices = h.leftovers(ctx, &state)
	}
	d.observeManifestDevices(obs.helm.ID, devices)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func manifestUpdate[T any, P manifestModel[T]](ctx context.Context, d *providerData, h manifestHooks[T], req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state T
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if onlyTimeoutsChange(req) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	m, base, old := P(&plan), P(&plan).shared(), P(&state).shared()
	ctx, cancel, timeout := withTimeout(ctx, base.Timeouts.Update, &resp.Diagnostics)
	defer cancel()
	q, tn := manifestClients(d, h, &plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name, values, diags := m.renderValues(ctx)
	resp.Diagnostics.Append(diags...)
	chart, _, diags := base.chart(ctx)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	base.Values = types.StringValue(values)
	if !base.needsDeployment(old) && (h.redeploy == nil || !h.redeploy(ctx, &plan, &state)) {
		// Qovery holds the configuration: only qtail's own settings, or
		// something on the tailnet, changed.
		base.Deployed = old.Deployed
		if h.repair != nil {
			h.repair(ctx, &plan, tn, &resp.Diagnostics)
		}
		m.settle()
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	svc, err := writeManifestService(ctx, q, h.kind, base.EnvironmentID.ValueString(), old.ID.ValueString(), name, chart, values)
	if err != nil {
		apiError(&resp.Diagnostics, "update "+h.kind.possessive()+" Helm service", err)
		// Nothing changed: the state stays as it was.
		P(&state).shared().Timeouts = base.Timeouts
		resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
		return
	}
	manifestDeploy[T, P](ctx, d, h, &plan, svc, tn, "update", timeout, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func manifestDelete[T any, P manifestModel[T]](ctx context.Context, d *providerData, h manifestHooks[T], req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state T
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	base := P(&state).shared()
	ctx, cancel, timeout := withTimeout(ctx, base.Timeouts.Delete, &resp.Diagnostics)
	defer cancel()
	q, diags := d.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	helmID := base.ID.ValueString()
	if err := deleteManifestService(ctx, q, helmID, d.pollInterval); err != nil {
		manifestFailed(&resp.Diagnostics, h.kind, "waiting for "+h.kind.possessive()+" deletion", "delete", helmID, err, timeout)
		return
	}
	if h.leftovers == nil || d.tailnet == nil {
		return
	}
	if ids := h.leftovers(ctx, &state); len(ids) > 0 {
		if err := removeLeftoverDevices(ctx, d.tailnet, ids); err != nil {
			apiError(&resp.Diagnostics, "remove "+h.kind.possessive()+" devices from the tailnet", err)
		}
	}
}

// manifestImport imports a manifest service by the ID of its Helm service.
func manifestImport(ctx context.Context, k manifestKind, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !uuidRE.MatchString(req.ID) {
		invalidImportID(&resp.Diagnostics, req.ID, "the ID of "+k.possessive()+" Helm service (a UUID)")
		return
	}
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
