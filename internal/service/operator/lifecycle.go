package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// An operator's Create and Update share one shape: settle the OAuth client
// (create one, or take the configured one), write the Helm service and its
// two OAuth variables, then deploy and wait for the operator's device
// (cluster.Deployment). What exists on the remote side is saved in the state
// after each failure, so that the next plan repairs the rest.

// operatorWrite is one Create or Update of an operator.
type operatorWrite struct {
	r  *operatorResource
	q  *qovery.Client
	tn *tailnet.Client
	// op is "create" or "update", timeout the operation's timeout.
	op      string
	timeout time.Duration
	plan    *operatorModel
	// values is the values file qtail writes.
	values string
	creds  oauthCredentials
	// newClient is set when this operation created the OAuth client: it
	// is revoked again when Qovery does not hold its secret.
	newClient bool
	// rolloutStart is when the deployment was asked for.
	rolloutStart time.Time
}

// newWrite returns the write of plan for op, or nil after adding why it
// cannot start: a client that is not configured.
func (r *operatorResource) newWrite(op string, plan *operatorModel, timeout time.Duration, diags *diag.Diagnostics) *operatorWrite {
	q, dd := r.Clients.Qovery()
	diags.Append(dd...)
	tn, dd := r.Clients.Tailnet()
	diags.Append(dd...)
	if diags.HasError() {
		return nil
	}
	return &operatorWrite{r: r, q: q, tn: tn, op: op, timeout: timeout, plan: plan}
}

// render renders the values file that the write puts in the Helm service.
func (w *operatorWrite) render(diags *diag.Diagnostics) bool {
	values, dd := w.plan.renderValues()
	w.values = values
	diags.Append(dd...)
	return !diags.HasError()
}

// createClient creates the operator's OAuth client through the keys API,
// for the cluster of env.
func (w *operatorWrite) createClient(ctx context.Context, env *qovery.Environment, diags *diag.Diagnostics) bool {
	tags, _ := tfx.Strings(w.plan.DefaultTags)
	id, secret, err := w.tn.CreateOAuthClient(ctx, cluster.OperatorOAuthScopes, tags, oauthClientDescription(env.ClusterName, w.plan.Hostname.ValueString()))
	if err != nil {
		tfx.APIError(diags, "create the operator's OAuth client", err)
		return false
	}
	tflog.Info(ctx, "created the operator's OAuth client", map[string]any{"oauth_client_id": id})
	w.creds, w.newClient = oauthCredentials{clientID: id, secret: secret}, true
	return true
}

// dropNewClient revokes a client created by this operation before Qovery
// held its secret: nothing uses it.
func (w *operatorWrite) dropNewClient(ctx context.Context, diags *diag.Diagnostics) {
	if !w.newClient {
		return
	}
	if err := revokeOperatorClient(ctx, w.tn, w.creds.clientID); err != nil {
		diags.AddWarning("OAuth Client Left Behind",
			fmt.Sprintf("qtail could not revoke the OAuth client %s it had just created: %v. Revoke it in the Tailscale admin console.", w.creds.clientID, err))
	}
}

// deployment is the deploy-and-wait of the operator's Helm service.
func (w *operatorWrite) deployment(helmID string) cluster.Deployment {
	return cluster.Deployment{Qovery: w.q, Poll: w.r.Clients.PollInterval(), HelmID: helmID, EnvironmentID: w.plan.EnvironmentID.ValueString(),
		Noun: "operator", Op: w.op, Timeout: w.timeout}
}

// rollout deploys the Helm service, which holds the configuration and the
// credentials, and waits for the operator's device on the tailnet. ok is
// false after a failure, which it adds to diags.
func (w *operatorWrite) rollout(ctx context.Context, helmID string, diags *diag.Diagnostics) (dev *tailnet.Device, ok bool) {
	d := w.deployment(helmID)
	w.rolloutStart = time.Now()
	if !d.Deploy(ctx, "waiting for the operator deployment", diags) {
		return nil, false
	}
	tags, _ := tfx.Strings(w.plan.DefaultTags)
	id := ""
	if !w.plan.DeviceID.IsUnknown() {
		id = w.plan.DeviceID.ValueString()
	}
	dev, err := awaitOperatorDevice(ctx, w.tn, id, w.plan.Hostname.ValueString(), tags, d.Poll)
	var retag *retagError
	switch {
	case errors.As(err, &retag):
		diags.AddAttributeError(path.Root("default_tags"), "Unable to Tag the Operator Device",
			fmt.Sprintf("The operator runs, but its device keeps the tags of its first login, and qtail could not give it the tags "+
				"%s: %v.\n\nThe provider's Tailscale credential sets them: an API key, or an OAuth client with the devices:core scope "+
				"whose tags own %s. Fix the credential, or the tagOwners, and apply again.", tfx.HCLList(tags), retag, tfx.HCLList(tags)))
		return nil, false
	case errors.Is(err, cluster.ErrTimedOut):
		d.Failed(diags, "waiting for the operator device", fmt.Errorf("%w.\n\n%s", err, w.deviceHint(ctx, helmID, w.plan.Hostname.ValueString(), tags)))
		return nil, false
	case err != nil:
		d.Failed(diags, "waiting for the operator device", err)
		return nil, false
	}
	if id != "" && cluster.DeviceID(dev) != id {
		diags.AddError("Operator Device Replaced During the Apply",
			fmt.Sprintf("The operator device %s left the tailnet during the apply, and the operator now runs as device %s (%s). "+
				"The next refresh records the new device: apply again.", id, cluster.DeviceID(dev), dev.Hostname))
		return nil, false
	}
	return dev, true
}

func (r *operatorResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan, config operatorModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, timeout := tfx.WithTimeout(ctx, plan.Timeouts.Create, &resp.Diagnostics)
	defer cancel()
	w := r.newWrite("create", &plan, timeout, &resp.Diagnostics)
	if w == nil {
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateReplaced, nil)...)
	if !w.render(&resp.Diagnostics) {
		return
	}
	helm, ok := w.createService(ctx, config.OAuthClientSecretWO.ValueString(), &resp.Diagnostics)
	if !ok {
		return
	}

	// From here on the Helm service exists: a failure saves what exists,
	// and Terraform marks the resource tainted.
	progress := plan
	progress.ID = types.StringValue(helm.ID)
	progress.OAuthClientID = types.StringValue(w.creds.clientID)
	progress.Values = types.StringValue(w.values)
	progress.ClusterWideResourcesAllowed = types.BoolValue(helm.AllowClusterWideResources)
	progress.Deployed = types.BoolValue(false)
	progress.nullUnknowns()
	fail := func() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &progress)...)
		// Terraform taints the operator and plans its replacement as a
		// creation: its Helm service and device are no conflict then.
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateReplaced, encodeReplaced(progress.ID, progress.DeviceID))...)
	}
	idVarID, secretVarID, err := syncOAuthVariables(ctx, w.q, helm.ID, w.creds)
	if idVarID != "" {
		progress.OAuthClientIDVariableID = types.StringValue(idVarID)
	}
	if secretVarID != "" {
		progress.OAuthClientSecretVariableID = types.StringValue(secretVarID)
	}
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "store the operator's OAuth client in Qovery", err)
		fail()
		return
	}
	dev, ok := w.rollout(ctx, helm.ID, &resp.Diagnostics)
	if !ok {
		fail()
		return
	}
	progress.Deployed = types.BoolValue(true)
	progress.setDevice(dev)
	resp.Diagnostics.Append(resp.State.Set(ctx, &progress)...)
}

// createService settles the OAuth client of a new operator (one that qtail
// creates, or the configured one with its secret) and creates the Helm
// service.
func (w *operatorWrite) createService(ctx context.Context, secret string, diags *diag.Diagnostics) (*qovery.Helm, bool) {
	envID := w.plan.EnvironmentID.ValueString()
	env, err := w.q.GetEnvironment(ctx, envID)
	if err != nil {
		tfx.APIError(diags, "read the environment "+envID, err)
		return nil, false
	}
	w.creds = oauthCredentials{clientID: w.plan.OAuthClientID.ValueString(), secret: secret, workloadIdentity: w.plan.workloadIdentity()}
	if w.plan.CreateOAuthClient.ValueBool() && !w.createClient(ctx, env, diags) {
		return nil, false
	}
	if w.creds.secret == "" && !w.creds.workloadIdentity {
		diags.AddAttributeError(path.Root("oauth_client_secret_wo"), "Missing OAuth Client Secret",
			"oauth_client_secret_wo is empty: the operator cannot authenticate without its OAuth client's secret. "+
				"Set oauth_client_secret_wo to the secret of the OAuth client oauth_client_id.")
		return nil, false
	}
	// Proven before anything is created: the operator would crash-loop
	// with credentials the API refuses, in a deployment Qovery reports
	// DEPLOYED.
	if !w.newClient && !w.creds.workloadIdentity && !proveOperatorClient(ctx, w.tn, w.creds.clientID, w.creds.secret, diags) {
		return nil, false
	}
	hreq := qovery.HelmRequest{}
	operatorRequest(&hreq, w.plan, w.values)
	helm, err := w.q.CreateHelm(ctx, envID, &hreq)
	if err != nil {
		tfx.APIError(diags, "create the operator's Helm service", err)
		w.dropNewClient(ctx, diags)
		return nil, false
	}
	return helm, true
}

func (r *operatorResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state, config operatorModel
	if !tfx.StartUpdate(ctx, req, resp, &plan, &state) {
		return
	}
	if resp.Diagnostics.Append(req.Config.Get(ctx, &config)...); resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, timeout := tfx.WithTimeout(ctx, plan.Timeouts.Update, &resp.Diagnostics)
	defer cancel()
	w := r.newWrite("update", &plan, timeout, &resp.Diagnostics)
	if w == nil {
		return
	}
	pending, diags := pendingRevocations(ctx, req.Private.GetKey)
	resp.Diagnostics.Append(diags...)
	if !w.render(&resp.Diagnostics) {
		return
	}
	helmID := state.ID.ValueString()

	// What the remote side holds so far, saved if a step fails. Read
	// refreshes the rest before the next plan.
	progress := state
	progress.Timeouts = plan.Timeouts
	save := func() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &progress)...)
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateRevokeClients, encodeRevocations(pending))...)
	}
	cp := planCredentials(&plan, &state)
	if !w.settleCredentials(ctx, cp, &state, config.OAuthClientSecretWO.ValueString(), &resp.Diagnostics) {
		save()
		return
	}
	idVarID, secretVarID, ok := w.writeService(ctx, helmID, &resp.Diagnostics)
	if !ok {
		save()
		return
	}
	// Qovery now holds the new configuration and credentials, not yet
	// deployed.
	progress.Deployed = types.BoolValue(false)
	progress.CreateOAuthClient = plan.CreateOAuthClient
	progress.OAuthClientSecretWOVersion = plan.OAuthClientSecretWOVersion
	progress.OAuthAudience = plan.OAuthAudience
	progress.setCredentials(w.creds.clientID, idVarID, secretVarID)
	if cp.revoke != "" {
		// Revoked once the operator runs with its successor: the running
		// operator still uses it until then.
		pending = append(pending, cp.revoke)
	}
	dev, ok := w.rollout(ctx, helmID, &resp.Diagnostics)
	if !ok {
		save()
		return
	}
	pending = revokeAll(ctx, w.tn, pending, &resp.Diagnostics)

	progress = plan
	if plan.Values.IsUnknown() {
		progress.Values = types.StringValue(w.values)
	}
	progress.ClusterWideResourcesAllowed = types.BoolValue(true)
	progress.Deployed = types.BoolValue(true)
	progress.setCredentials(w.creds.clientID, idVarID, secretVarID)
	progress.setDevice(dev)
	progress.OAuthClientSecretWO = types.StringNull()
	save()
}

// settleCredentials decides the OAuth client of an update (cp): a new one
// that qtail creates, the configured secret to write, or the client that
// Qovery holds.
func (w *operatorWrite) settleCredentials(ctx context.Context, cp credentialPlan, state *operatorModel, secret string, diags *diag.Diagnostics) bool {
	plan := w.plan
	w.creds = oauthCredentials{clientID: plan.OAuthClientID.ValueString(), workloadIdentity: plan.workloadIdentity()}
	switch {
	case cp.newClient:
		env, err := w.q.GetEnvironment(ctx, plan.EnvironmentID.ValueString())
		if err != nil {
			tfx.APIError(diags, "read the environment "+plan.EnvironmentID.ValueString(), err)
			return false
		}
		return w.createClient(ctx, env, diags)
	case cp.writeSecret:
		w.creds.secret = secret
		if w.creds.secret == "" {
			diags.AddAttributeError(path.Root("oauth_client_secret_wo"), "Missing OAuth Client Secret",
				"qtail must write the OAuth client's secret into Qovery, but oauth_client_secret_wo is empty. "+
					"Set oauth_client_secret_wo to the secret of the OAuth client oauth_client_id.")
			return false
		}
		return proveOperatorClient(ctx, w.tn, w.creds.clientID, w.creds.secret, diags)
	case plan.CreateOAuthClient.ValueBool():
		w.creds.clientID = state.OAuthClientID.ValueString()
	}
	return true
}

// writeService writes the planned configuration into the existing Helm
// service helmID and its OAuth variables, and returns the variables' IDs.
func (w *operatorWrite) writeService(ctx context.Context, helmID string, diags *diag.Diagnostics) (idVarID, secretVarID string, ok bool) {
	h, err := w.q.GetHelm(ctx, helmID, qovery.InEnvironment(w.plan.EnvironmentID.ValueString()))
	if err != nil {
		tfx.APIError(diags, "read the operator's Helm service", err)
		w.dropNewClient(ctx, diags)
		return "", "", false
	}
	hreq := h.ToRequest()
	operatorRequest(&hreq, w.plan, w.values)
	if _, err := w.q.EditHelm(ctx, helmID, &hreq); err != nil {
		tfx.APIError(diags, "update the operator's Helm service", err)
		w.dropNewClient(ctx, diags)
		return "", "", false
	}
	idVarID, secretVarID, err = syncOAuthVariables(ctx, w.q, helmID, w.creds)
	if err != nil {
		tfx.APIError(diags, "store the operator's OAuth client in Qovery", err)
		if secretVarID == "" {
			w.dropNewClient(ctx, diags)
		}
		return "", "", false
	}
	return idVarID, secretVarID, true
}

// revokeAll revokes the replaced OAuth clients and returns those it could
// not revoke, to try again at the next apply.
func revokeAll(ctx context.Context, tn *tailnet.Client, ids []string, diags *diag.Diagnostics) []string {
	var left []string
	for _, id := range ids {
		if err := revokeOperatorClient(ctx, tn, id); err != nil {
			diags.AddWarning("OAuth Client Not Revoked",
				fmt.Sprintf("qtail could not revoke the replaced OAuth client %s: %v. It tries again at the next apply; you can also revoke it in the Tailscale admin console.", id, err))
			left = append(left, id)
		}
	}
	return left
}

func (r *operatorResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state operatorModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, timeout := tfx.WithTimeout(ctx, state.Timeouts.Delete, &resp.Diagnostics)
	defer cancel()
	q, diags := r.Clients.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	pending, diags := pendingRevocations(ctx, req.Private.GetKey)
	resp.Diagnostics.Append(diags...)
	if state.CreateOAuthClient.ValueBool() && !state.OAuthClientID.IsNull() {
		pending = append(pending, state.OAuthClientID.ValueString())
	}
	var tn *tailnet.Client
	if len(pending) > 0 || !state.DeviceID.IsNull() {
		tn, diags = r.Clients.Tailnet()
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
	}

	helmID := state.ID.ValueString()
	if !r.dependentsGone(ctx, q, &state, &resp.Diagnostics) {
		return
	}
	var request *cluster.DeleteRequestError
	switch err := cluster.DeleteHelm(ctx, q, helmID, state.EnvironmentID.ValueString(), r.Clients.PollInterval()); {
	case errors.As(err, &request):
		tfx.APIError(&resp.Diagnostics, "delete the operator's Helm service", request.Err)
		return
	case err != nil:
		d := cluster.Deployment{HelmID: helmID, Noun: "operator", Op: "delete", Timeout: timeout}
		d.Failed(&resp.Diagnostics, "waiting for the operator's deletion", err)
		return
	}
	for _, id := range pending {
		if err := revokeOperatorClient(ctx, tn, id); err != nil {
			tfx.APIError(&resp.Diagnostics, "revoke the operator's OAuth client "+id, err)
			return
		}
	}
	if !state.DeviceID.IsNull() {
		if err := cluster.RemoveDevice(ctx, tn, state.DeviceID.ValueString()); err != nil {
			tfx.APIError(&resp.Diagnostics, "remove the operator device "+state.DeviceID.ValueString()+" from the tailnet", err)
		}
	}
}

// dependentsGone waits for the objects that need the operator on its
// cluster to go (those that Terraform destroys in parallel), and refuses
// the deletion while others remain: only a running operator removes their
// devices and its finalizer, and its CRDs go with its release. It returns
// false after an error.
func (r *operatorResource) dependentsGone(ctx context.Context, q *qovery.Client, state *operatorModel, diags *diag.Diagnostics) bool {
	env, err := q.GetEnvironment(ctx, state.EnvironmentID.ValueString())
	if qovery.IsNotFound(err) {
		return true
	}
	if err != nil {
		tfx.APIError(diags, "read the operator's environment "+state.EnvironmentID.ValueString(), err)
		return false
	}
	poll := r.Clients.PollInterval()
	grace := min(max(cluster.DependentsGrace, 10*poll), time.Minute)
	deps, err := cluster.AwaitDependents(ctx, q, env, r.Clients.Planned(), poll, grace)
	if err != nil {
		tfx.APIError(diags, "list what needs the operator on cluster "+env.ClusterID, err)
		return false
	}
	if len(deps) == 0 {
		return true
	}
	list := make([]string, 0, len(deps))
	for _, d := range deps {
		list = append(list, "  - "+d.What)
	}
	diags.AddError("Objects Still Need the Operator",
		fmt.Sprintf("The operator on cluster %s still serves:\n%s\n\nOnly a running operator removes their devices from the tailnet and "+
			"its finalizer from them; uninstalled first, it would leave them Terminating with their devices, and its CRDs, which go "+
			"with its release, wedged, so that a new install fails. Destroy them first: set operator_id = qtail_operator.NAME.id on "+
			"the qtail_exposed_service, qtail_connector, qtail_proxy_group and qtail_egress_service resources of this configuration, "+
			"so that Terraform destroys them before the operator, and remove the others (or their annotations groups) elsewhere. "+
			"Then run the destroy again.", env.ClusterID, strings.Join(list, "\n")))
	return false
}
