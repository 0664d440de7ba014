package manifestservice

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// The lifecycle that qtail_connector, qtail_proxy_group and
// qtail_egress_service share, implemented once by manifestResource: write
// the Helm service, deploy it and wait (cluster.Deployment), then do what
// the resource does on the tailnet; read it back from Qovery; delete it and
// wait. Each resource supplies its model and, as methods (manifestHooks),
// what it adds to the lifecycle.

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

// manifestHooks are what one manifest resource adds to the lifecycle: methods
// of the resource, which embeds noHooks (or replicaHooks) for those it does
// not need.
type manifestHooks[T any] interface {
	// usesTailnet reports whether a create or an update of m needs the
	// Tailscale client.
	usesTailnet(m *T) bool
	// written runs once the Helm service h holds the configuration,
	// before the deployment.
	written(ctx context.Context, m *T, h *qovery.Helm, diags *diag.Diagnostics)
	// deployed runs after a successful deployment d: wait for devices,
	// approve routes.
	deployed(ctx context.Context, m *T, tn *tailnet.Client, d cluster.Deployment, diags *diag.Diagnostics)
	// redeploy reports whether an update must deploy although Qovery holds
	// the planned configuration (a device gone from the tailnet).
	redeploy(ctx context.Context, plan, state *T) bool
	// repair runs instead of a deployment when the update needs none.
	repair(ctx context.Context, m *T, tn *tailnet.Client, diags *diag.Diagnostics)
	// observe runs in Read, after the attributes were read from Qovery.
	observe(ctx context.Context, m *T, diags *diag.Diagnostics)
	// imported sets the attributes that Qovery does not hold to their
	// defaults, after an import.
	imported(m *T)
	// leftovers are the device IDs that Delete removes if the operator
	// left them behind.
	leftovers(ctx context.Context, m *T) []string
}

// noHooks implements every method of manifestHooks as doing nothing.
type noHooks[T any] struct{}

func (noHooks[T]) usesTailnet(*T) bool                                          { return false }
func (noHooks[T]) written(context.Context, *T, *qovery.Helm, *diag.Diagnostics) {}
func (noHooks[T]) deployed(context.Context, *T, *tailnet.Client, cluster.Deployment, *diag.Diagnostics) {
}
func (noHooks[T]) redeploy(context.Context, *T, *T) bool                          { return false }
func (noHooks[T]) repair(context.Context, *T, *tailnet.Client, *diag.Diagnostics) {}
func (noHooks[T]) observe(context.Context, *T, *diag.Diagnostics)                 {}
func (noHooks[T]) imported(*T)                                                    {}
func (noHooks[T]) leftovers(context.Context, *T) []string                         { return nil }

// manifestResource implements Create, Read, Update, Delete and ImportState
// for a manifest service of kind whose model is T. A resource embeds it and
// sets hooks to itself when it is made.
type manifestResource[T any, P manifestModel[T]] struct {
	serviceBase
	kind  manifestKind
	hooks manifestHooks[T]
}

// deployment is the deploy-and-wait of the Helm service helmID in the
// Terraform operation op.
func (r *manifestResource[T, P]) deployment(q *qovery.Client, helmID, envID, op string, timeout time.Duration) cluster.Deployment {
	return cluster.Deployment{Qovery: q, Poll: r.Clients.PollInterval(), HelmID: helmID, EnvironmentID: envID, Noun: r.kind.noun, Op: op,
		Timeout: timeout, ByOperator: true}
}

// clients returns the Qovery client and, when the resource needs it for
// m, the Tailscale client.
func (r *manifestResource[T, P]) clients(m *T, diags *diag.Diagnostics) (*qovery.Client, *tailnet.Client) {
	q, dd := r.Clients.Qovery()
	diags.Append(dd...)
	var tn *tailnet.Client
	if r.hooks.usesTailnet(m) {
		tn, dd = r.Clients.Tailnet()
		diags.Append(dd...)
	}
	return q, tn
}

// manifestWrite is what a Create or an Update writes into the Helm
// service.
type manifestWrite struct {
	q      *qovery.Client
	tn     *tailnet.Client
	name   string // of the Kubernetes object
	values string
	chart  manifestChart
}

// prepare renders what m writes into the Helm service, records the values
// file in m, and gets the clients it needs. ok is false after an error.
func (r *manifestResource[T, P]) prepare(ctx context.Context, m *T, diags *diag.Diagnostics) (w manifestWrite, ok bool) {
	w.q, w.tn = r.clients(m, diags)
	if diags.HasError() {
		return w, false
	}
	base := P(m).shared()
	name, values, dd := P(m).renderValues(ctx)
	diags.Append(dd...)
	chart, _, dd := base.chart(ctx)
	if diags.Append(dd...); diags.HasError() {
		return w, false
	}
	w.name, w.values, w.chart = name, values, chart
	base.Values = types.StringValue(values)
	return w, true
}

func (r *manifestResource[T, P]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan T
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	base := P(&plan).shared()
	ctx, cancel, timeout := tfx.WithTimeout(ctx, base.Timeouts.Create, &resp.Diagnostics)
	defer cancel()
	w, ok := r.prepare(ctx, &plan, &resp.Diagnostics)
	if !ok {
		return
	}
	// A namespaced egress Service deploys without the operator, which
	// serves it once it runs.
	if base.OperatorID.IsNull() && r.kind.clusterScoped && !r.awaitOperator(ctx, w.q, base.EnvironmentID.ValueString(), &resp.Diagnostics) {
		return
	}
	svc, err := writeManifestService(ctx, w.q, r.kind, base.EnvironmentID.ValueString(), "", w.name, w.chart, w.values)
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "create "+r.kind.possessive()+" Helm service", err)
		return
	}
	r.deploy(ctx, &plan, svc, w.tn, r.deployment(w.q, svc.ID, svc.Environment.ID, "create", timeout), &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *manifestResource[T, P]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state T
	if !tfx.StartUpdate(ctx, req, resp, &plan, &state) {
		return
	}
	base, old := P(&plan).shared(), P(&state).shared()
	ctx, cancel, timeout := tfx.WithTimeout(ctx, base.Timeouts.Update, &resp.Diagnostics)
	defer cancel()
	w, ok := r.prepare(ctx, &plan, &resp.Diagnostics)
	if !ok {
		return
	}
	if !base.needsDeployment(old) && !r.hooks.redeploy(ctx, &plan, &state) {
		// Qovery holds the configuration: only qtail's own settings, or
		// something on the tailnet, changed.
		base.Deployed = old.Deployed
		r.hooks.repair(ctx, &plan, w.tn, &resp.Diagnostics)
		P(&plan).settle()
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	svc, err := writeManifestService(ctx, w.q, r.kind, base.EnvironmentID.ValueString(), old.ID.ValueString(), w.name, w.chart, w.values)
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "update "+r.kind.possessive()+" Helm service", err)
		// Nothing changed: the state stays as it was.
		old.Timeouts = base.Timeouts
		resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
		return
	}
	r.deploy(ctx, &plan, svc, w.tn, r.deployment(w.q, svc.ID, svc.Environment.ID, "update", timeout), &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// deploy records the Helm service svc in m, deploys it and runs the
// resource's hooks, recording in m what it achieved.
func (r *manifestResource[T, P]) deploy(ctx context.Context, m *T, svc *qovery.Helm, tn *tailnet.Client, d cluster.Deployment, diags *diag.Diagnostics) {
	base := P(m).shared()
	defer P(m).settle()
	base.ID = types.StringValue(svc.ID)
	base.HelmServiceName = types.StringValue(svc.Name)
	base.ClusterWideResourcesAllowed = types.BoolValue(svc.AllowClusterWideResources)
	base.Deployed = types.BoolValue(false)
	base.recordChart(ctx, svc)
	r.hooks.written(ctx, m, svc, diags)
	if !d.Deploy(ctx, "waiting for "+r.kind.possessive()+" deployment", diags) {
		return
	}
	base.Deployed = types.BoolValue(true)
	r.hooks.deployed(ctx, m, tn, d, diags)
}

func (r *manifestResource[T, P]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state T
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	m := P(&state)
	base := m.shared()
	q, diags := r.Clients.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	imported := base.Values.IsNull()
	obs, err := observeManifestService(ctx, q, base.ID.ValueString(), base.EnvironmentID.ValueString())
	if qovery.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "read "+r.kind.possessive()+" Helm service", err)
		return
	}
	base.fillFromQovery(ctx, r.kind, obs, &resp.Diagnostics)
	if imported {
		r.hooks.imported(&state)
	}
	if err := m.readValues(obs.file, obs.helm.ID, &resp.Diagnostics); err != nil {
		if imported {
			resp.Diagnostics.AddError("Not "+tfx.TitleCase(r.kind.article()+" "+r.kind.noun),
				fmt.Sprintf("The Helm service %s holds no %s that qtail can read: %v. Import the Helm service of a qtail resource of this type.",
					obs.helm.ID, r.kind.object, err))
			return
		}
		resp.Diagnostics.AddWarning("Unreadable "+tfx.TitleCase(r.kind.noun),
			fmt.Sprintf("The values of the Helm service %s: %v. qtail plans to write them again and redeploy.", obs.helm.ID, err))
	}
	r.hooks.observe(ctx, &state, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	r.world().RecordRefresh(obs.helm.ID, r.hooks.leftovers(ctx, &state))
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *manifestResource[T, P]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state T
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	base := P(&state).shared()
	ctx, cancel, timeout := tfx.WithTimeout(ctx, base.Timeouts.Delete, &resp.Diagnostics)
	defer cancel()
	q, diags := r.Clients.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	helmID := base.ID.ValueString()
	envID := base.EnvironmentID.ValueString()
	// The operator of the cluster waits for this Delete.
	defer r.world().StartDelete(helmID)()
	if err := cluster.DeleteHelm(ctx, q, helmID, envID, r.Clients.PollInterval()); err != nil {
		r.deployment(q, helmID, envID, "delete", timeout).Failed(&resp.Diagnostics, "waiting for "+r.kind.possessive()+" deletion", err)
		return
	}
	tn := r.Clients.TailnetOrNil()
	if tn == nil {
		return
	}
	if ids := r.hooks.leftovers(ctx, &state); len(ids) > 0 {
		if err := removeLeftoverDevices(ctx, tn, ids); err != nil {
			tfx.APIError(&resp.Diagnostics, "remove "+r.kind.possessive()+" devices from the tailnet", err)
		}
	}
}

// awaitOperator waits, for a manifest service that names no operator, for
// an operator to run on the cluster of the environment envID: Terraform may
// create the operator of the configuration in parallel. It returns false
// after an error.
func (r *manifestResource[T, P]) awaitOperator(ctx context.Context, q *qovery.Client, envID string, diags *diag.Diagnostics) bool {
	env, err := q.GetEnvironment(ctx, envID)
	if err != nil {
		tfx.APIError(diags, "read the environment "+envID, err)
		return false
	}
	poll := r.Clients.PollInterval()
	_, err = cluster.AwaitOperator(ctx, q, env, r.world(), poll, cluster.Grace(poll))
	switch {
	case errors.Is(err, cluster.ErrNoOperator):
		diags.AddAttributeError(path.Root("environment_id"), "No Tailscale Operator on the Cluster", noOperatorDetail(r.kind, env.ClusterID))
		return false
	case err != nil:
		diags.AddError("No Tailscale Operator on the Cluster", fmt.Sprintf("qtail waited for the operator of cluster %s before it "+
			"creates %s: %v. Fix the operator, then apply again.", env.ClusterID, r.kind.article()+" "+r.kind.noun, err))
		return false
	}
	return true
}

// ImportState imports a manifest service by the ID of its Helm service.
func (r *manifestResource[T, P]) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !tfx.IsUUID(req.ID) {
		tfx.InvalidImportID(&resp.Diagnostics, req.ID, "the ID of "+r.kind.possessive()+" Helm service (a UUID)")
		return
	}
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}

// withReplicas is a pointer to a manifest model whose object brings up one
// device per replica.
type withReplicas[T any] interface {
	*T
	withDevices
	replicas() *proxyReplicas
}

// replicaHooks are the hooks of a model whose object brings up one device
// per replica, which every such resource embeds: it needs the Tailscale
// client while it waits for the devices, redeploys when a device is gone
// from the tailnet (the redeployment brings it back), removes the devices
// the operator left behind, and waits for devices after an import.
type replicaHooks[T any, P withReplicas[T]] struct {
	noHooks[T]
}

func (replicaHooks[T, P]) usesTailnet(m *T) bool { return P(m).waitsForDevices() }

func (replicaHooks[T, P]) redeploy(ctx context.Context, plan, state *T) bool {
	want, _ := P(plan).wantedDevices(ctx)
	return P(plan).waitsForDevices() && !devicesComplete(ctx, *P(state).devicesAttr(), want.hostnames)
}

func (replicaHooks[T, P]) leftovers(ctx context.Context, m *T) []string {
	_, ids := stateDevices(ctx, *P(m).devicesAttr())
	return ids
}

func (replicaHooks[T, P]) imported(m *T) {
	if r := P(m).replicas(); r.WaitForDevices.IsNull() {
		r.WaitForDevices = types.BoolValue(true)
	}
}
