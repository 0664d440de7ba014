package exposedservice

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ resource.Resource                   = &exposedServiceResource{}
	_ resource.ResourceWithConfigure      = &exposedServiceResource{}
	_ resource.ResourceWithImportState    = &exposedServiceResource{}
	_ resource.ResourceWithValidateConfig = &exposedServiceResource{}
	_ resource.ResourceWithModifyPlan     = &exposedServiceResource{}
)

// NewExposedServiceResource returns the qtail_exposed_service resource.
func NewExposedServiceResource() resource.Resource {
	return &exposedServiceResource{}
}

type exposedServiceResource struct {
	conn.ResourceBase
}

func (r *exposedServiceResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_exposed_service"
}

// applicationContext reads the exposed service and the organization
// it belongs to (annotations groups are organization objects).
func applicationContext(ctx context.Context, q *qovery.Client, w workload) (*qovery.Workload, *qovery.Environment, error) {
	app, err := w.get(ctx, q, "")
	if err != nil {
		return nil, nil, err
	}
	env, err := q.GetEnvironment(ctx, app.Environment.ID)
	if err != nil {
		return app, nil, err
	}
	return app, env, nil
}

func (r *exposedServiceResource) clients(diags *diag.Diagnostics) (*qovery.Client, *tailnet.Client) {
	q, d := r.Clients.Qovery()
	diags.Append(d...)
	t, d := r.Clients.Tailnet()
	diags.Append(d...)
	return q, t
}

func (r *exposedServiceResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan exposedServiceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, timeout := tfx.WithTimeout(ctx, plan.Timeouts.Create, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	q, t := r.clients(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	groupReq, diags := plan.groupRequest(ctx)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	// The other deployments of this wave wait for this redeployment, to
	// make one action with those of its environment: from the start,
	// unless the operator is awaited first.
	var ticket *qovery.DeployTicket
	redeploys := plan.Redeploy.ValueBool() && plan.attaches()
	if redeploys && !plan.OperatorID.IsNull() {
		ticket = q.ExpectDeploy(plan.creationKey())
		defer ticket.Forget()
	}
	w := plan.workload()
	app, env, err := applicationContext(ctx, q, w)
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "read "+w.String(), err)
		return
	}
	if len(app.Ports) == 0 {
		resp.Diagnostics.AddAttributeError(w.attr(), noPortSummary(w), noPortDetail(w, app))
		return
	}
	if plan.OperatorID.IsNull() && !r.awaitOperator(ctx, q, env, w, &resp.Diagnostics) {
		return
	}
	if redeploys && ticket == nil {
		ticket = q.ExpectDeploy("")
		defer ticket.Forget()
	}
	orgID := env.Organization.ID
	plan.EnvironmentID = types.StringValue(app.Environment.ID)
	group, err := q.CreateAnnotationsGroup(ctx, orgID, groupReq)
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "create the annotations group "+groupReq.Name, err)
		return
	}

	// From here on the group exists: a failure saves what was done, and
	// Terraform marks the exposure tainted so that the next apply
	// replaces it.
	plan.ID = types.StringValue(resourceID(w, group.ID))
	plan.OrganizationID = types.StringValue(orgID)
	plan.AnnotationsGroupID = types.StringValue(group.ID)
	plan.Attached = types.BoolValue(false)
	if plan.Ports.IsUnknown() {
		ports, d := exposedPorts(ctx, app.Ports)
		resp.Diagnostics.Append(d...)
		plan.Ports = ports
	}
	fail := func(step string, err error) {
		plan.settle()
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		resp.Diagnostics.AddError("Unable to Expose the Application",
			fmt.Sprintf("qtail created the annotations group %s (%s) but could not %s. The exposure is saved as tainted: "+
				"the next apply removes it and tries again.\n\n%s", group.Name, group.ID, step, err))
	}

	if !plan.attaches() {
		// Another tool attaches the group, after this apply has made it.
		resp.Diagnostics.AddAttributeWarning(path.Root("attach"), "Annotations Group Not Attached Yet",
			fmt.Sprintf("qtail created the annotations group %s (%s) and, with attach = false, leaves attaching it to another tool. %s",
				group.Name, group.ID, attachHint(w)))
		dev, _ := r.settleDevice(ctx, t, &plan, false, timeout, "create", &resp.Diagnostics)
		plan.settle()
		resp.Diagnostics.Append(plan.fillDevice(ctx, dev)...)
		if dev == nil && plan.TailnetFQDN.IsNull() {
			plan.TailnetFQDN = r.guessFQDN(ctx, t, plan.Hostname.ValueString())
		}
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	if err := w.setGroups(ctx, q, append(app.AnnotationsGroupIDs(), group.ID)); err != nil {
		fail("attach it to "+w.String(), err)
		return
	}
	plan.Attached = types.BoolValue(true)
	if plan.Redeploy.ValueBool() {
		if err := r.redeploy(ctx, q, ticket, w, app.Environment.ID, timeout, "create"); err != nil {
			fail("redeploy "+w.String()+" so that the annotations reach its Kubernetes Service", err)
			return
		}
	}
	dev, err := r.settleDevice(ctx, t, &plan, plan.expectDevice(), timeout, "create", &resp.Diagnostics)
	if err != nil {
		step := "see the proxy device join the tailnet"
		if plan.ProxyGroup.ValueString() != "" {
			step = "see the Tailscale Service of the ProxyGroup " + plan.ProxyGroup.ValueString() + " carry traffic"
		}
		fail(step, err)
		return
	}
	resp.Diagnostics.Append(plan.fillDevice(ctx, dev)...)
	if dev == nil && plan.TailnetFQDN.IsNull() {
		plan.TailnetFQDN = r.guessFQDN(ctx, t, plan.Hostname.ValueString())
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// awaitOperator waits, for an exposure that names no operator, for an
// operator to run on the cluster of env: Terraform may create the operator
// of the configuration in parallel. It returns false after an error.
func (r *exposedServiceResource) awaitOperator(ctx context.Context, q *qovery.Client, env *qovery.Environment, w workload, diags *diag.Diagnostics) bool {
	poll := r.Clients.PollInterval()
	_, err := cluster.AwaitOperator(ctx, q, env, r.Clients.Planned(), poll, cluster.Grace(poll))
	switch {
	case errors.Is(err, cluster.ErrNoOperator):
		diags.AddAttributeError(w.attr(), "No Tailscale Operator on the Cluster", noOperatorDetail(w, env.ClusterID))
		return false
	case err != nil:
		diags.AddError("No Tailscale Operator on the Cluster", fmt.Sprintf("qtail waited for the operator of cluster %s before it "+
			"exposes %s: %v. Fix the operator, then apply again.", env.ClusterID, w, err))
		return false
	}
	return true
}

// settleDevice waits for the proxy device when one is expected. Otherwise
// it looks the device up once: a device that is not there yet is no
// failure (it shows up at the application's next deployment and a refresh
// records it), and a failed look-up is only worth a warning.
func (r *exposedServiceResource) settleDevice(ctx context.Context, t *tailnet.Client, m *exposedServiceModel, wait bool, timeout time.Duration,
	op string, diags *diag.Diagnostics) (*tailnet.Device, error) {
	tags, _, _ := m.planTags(ctx)
	hostname := m.Hostname.ValueString()
	if wait {
		if why := cluster.ApplicationProxyCannotAppear(ctx, r.Clients, m.ApplicationID.ValueString(), tags, m.ProxyClass.ValueString()); why != "" {
			return nil, fmt.Errorf("no proxy device will appear: %s", why)
		}
		return r.waitForDevice(ctx, t, hostname, tags, timeout, op)
	}
	if m.ProxyGroup.ValueString() != "" {
		if m.Redeploy.ValueBool() {
			if _, err := cluster.AwaitExposureService(ctx, r.Clients, t, m.ApplicationID.ValueString(), m.ProxyGroup.ValueString(), hostname); err != nil {
				return nil, err
			}
			return nil, r.waitForServiceApproval(ctx, t, hostname, m.ProxyGroup.ValueString(), timeout, op)
		}
		return nil, nil
	}
	d, err := t.FindDeviceByHostname(ctx, hostname)
	if err != nil {
		diags.AddWarning("Proxy Device Not Looked Up", fmt.Sprintf("qtail could not look up the device %s; the next "+
			"refresh records it.\n\n%s", hostname, err))
		return nil, nil
	}
	if d == nil || !tagsMatch(d.Tags, tags) {
		return nil, nil
	}
	return d, nil
}

// guessFQDN returns HOSTNAME.SUFFIX with the MagicDNS suffix of the tailnet
// as another device shows it, or null when no device shows it.
func (r *exposedServiceResource) guessFQDN(ctx context.Context, t *tailnet.Client, hostname string) types.String {
	devs, err := t.ListDevices(ctx, tailnet.ListDevicesOptions{})
	if err != nil {
		return types.StringNull()
	}
	for _, d := range devs {
		if _, suffix, ok := strings.Cut(strings.TrimSuffix(d.Name, "."), "."); ok && suffix != "" {
			return types.StringValue(hostname + "." + suffix)
		}
	}
	return types.StringNull()
}

func (r *exposedServiceResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state exposedServiceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	q, diags := r.Clients.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	w, groupID := state.workload(), state.AnnotationsGroupID.ValueString()
	appID := w.id
	// A state saved before environment_id existed, or an import, has no
	// environment yet: a deleted service then answers 403 as is.
	app, err := w.get(ctx, q, state.EnvironmentID.ValueString())
	if qovery.IsNotFound(err) {
		resp.Diagnostics.AddWarning("Exposed "+tfx.TitleCase(w.kind)+" Deleted",
			fmt.Sprintf("Qovery has no %s any more: the exposure is removed from the state. Remove the resource from "+
				"the configuration, or set %s_id to the %s that replaces it.", w, w.kind, w.kind))
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "read "+w.String(), err)
		return
	}
	state.EnvironmentID = types.StringValue(app.Environment.ID)
	if state.OrganizationID.ValueString() == "" {
		env, err := q.GetEnvironment(ctx, app.Environment.ID)
		if err != nil {
			tfx.APIError(&resp.Diagnostics, "read the environment of "+w.String(), err)
			return
		}
		state.OrganizationID = types.StringValue(env.Organization.ID)
	}
	group, err := q.GetAnnotationsGroup(ctx, state.OrganizationID.ValueString(), groupID)
	if qovery.IsNotFound(err) {
		resp.Diagnostics.AddWarning("Annotations Group Deleted",
			fmt.Sprintf("The annotations group %s of the exposure of %s was deleted outside Terraform: "+
				"the exposure is planned for creation again.", groupID, w))
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "read annotations group "+groupID, err)
		return
	}
	resp.Diagnostics.Append(state.fillGroup(group)...)
	state.ID = types.StringValue(resourceID(w, groupID))
	attached := slices.Contains(app.AnnotationsGroupIDs(), groupID)
	state.Attached = types.BoolValue(attached)
	if state.Attach.IsNull() {
		state.Attach = types.BoolValue(true)
	}
	if !attached && state.attaches() {
		resp.Diagnostics.AddWarning("Annotations Group Detached",
			fmt.Sprintf("The annotations group %s (%s) is no longer attached to %s %s (%s): the Service is not exposed "+
				"after its next deployment. The next apply attaches it again and redeploys it.",
				group.Name, groupID, w.kind, app.Name, appID))
	}
	if state.Redeploy.IsNull() {
		state.Redeploy = types.BoolValue(true)
	}
	if state.WaitForDevice.IsNull() {
		state.WaitForDevice = types.BoolValue(true)
	}
	if state.Ports.IsNull() {
		// An import: the ports as they are. Otherwise the state keeps the
		// ports made reachable by the last apply, and the plan compares
		// them with the application's current ones.
		ports, d := exposedPorts(ctx, app.Ports)
		resp.Diagnostics.Append(d...)
		state.Ports = ports
	}
	if state.Annotations.IsNull() {
		state.Annotations = types.MapValueMust(types.StringType, map[string]attr.Value{})
	}

	if t := r.Clients.TailnetOrNil(); t != nil && !r.readProxy(ctx, t, &state, attached, &resp.Diagnostics) {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// readProxy records the proxy device of the exposure m, and warns when the
// device it expects is gone. It returns false when the look-up failed.
func (r *exposedServiceResource) readProxy(ctx context.Context, t *tailnet.Client, m *exposedServiceModel, attached bool, diags *diag.Diagnostics) bool {
	dev, err := r.findProxy(ctx, t, m)
	if err != nil {
		tfx.APIError(diags, "look up the proxy device "+m.Hostname.ValueString(), err)
		return false
	}
	fqdn := m.TailnetFQDN
	diags.Append(m.fillDevice(ctx, dev)...)
	if dev == nil {
		if m.expectDevice() && attached {
			diags.AddWarning("Proxy Device Missing",
				fmt.Sprintf("The tailnet has no device %q tagged as the exposure of %s expects: it was removed, "+
					"or the proxy lost its registration. The next apply redeploys it so that the operator creates the device again.",
					m.Hostname.ValueString(), m.workload()))
		} else if !m.expectDevice() {
			m.TailnetFQDN = fqdn
		}
	}
	return true
}

// findProxy finds the proxy device of an exposure: by the id in the state,
// else by hostname with the expected tags.
func (r *exposedServiceResource) findProxy(ctx context.Context, t *tailnet.Client, m *exposedServiceModel) (*tailnet.Device, error) {
	if m.ProxyGroup.ValueString() != "" {
		return nil, nil
	}
	hostname := m.Hostname.ValueString()
	if id := m.DeviceID.ValueString(); id != "" {
		d, err := t.GetDevice(ctx, id)
		switch {
		case err == nil && strings.EqualFold(d.Hostname, hostname):
			return d, nil
		case err != nil && !tailnet.IsNotFound(err):
			return nil, err
		}
	}
	if hostname == "" {
		return nil, nil
	}
	d, err := t.FindDeviceByHostname(ctx, hostname)
	if err != nil || d == nil {
		return nil, err
	}
	tags, _, _ := m.planTags(ctx)
	if !tagsMatch(d.Tags, tags) {
		return nil, nil
	}
	return d, nil
}

func (r *exposedServiceResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state exposedServiceModel
	if !tfx.StartUpdate(ctx, req, resp, &plan, &state) {
		return
	}
	ctx, cancel, timeout := tfx.WithTimeout(ctx, plan.Timeouts.Update, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	q, t := r.clients(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	groupReq, diags := plan.groupRequest(ctx)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	w, groupID, orgID := state.workload(), state.AnnotationsGroupID.ValueString(), state.OrganizationID.ValueString()
	var ticket *qovery.DeployTicket
	if plan.Redeploy.ValueBool() {
		ticket = q.ExpectDeploy("")
		defer ticket.Forget()
	}

	annotationsChanged := !plan.Annotations.Equal(state.Annotations)
	if annotationsChanged || !plan.AnnotationsGroupName.Equal(state.AnnotationsGroupName) {
		if _, err := q.EditAnnotationsGroup(ctx, orgID, groupID, groupReq); err != nil {
			tfx.APIError(&resp.Diagnostics, "update annotations group "+groupID, err)
			return
		}
	}
	app, err := w.get(ctx, q, state.EnvironmentID.ValueString())
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "read "+w.String(), err)
		return
	}
	plan.EnvironmentID = types.StringValue(app.Environment.ID)
	reattached := false
	attached := slices.Contains(app.AnnotationsGroupIDs(), groupID)
	if !attached && plan.attaches() {
		if err := w.setGroups(ctx, q, append(app.AnnotationsGroupIDs(), groupID)); err != nil {
			tfx.APIError(&resp.Diagnostics, "attach annotations group "+groupID+" to "+w.String(), err)
			return
		}
		reattached, attached = true, true
	}
	if plan.attaches() || plan.Attached.IsUnknown() {
		plan.Attached = types.BoolValue(attached)
	}
	if plan.Ports.IsUnknown() {
		ports, d := exposedPorts(ctx, app.Ports)
		resp.Diagnostics.Append(d...)
		plan.Ports = ports
	}
	deviceUnknown := plan.DeviceID.IsUnknown()
	portsChanged := !plan.Ports.Equal(state.Ports)
	redeployed := false
	if plan.Redeploy.ValueBool() && attached && (annotationsChanged || reattached || portsChanged || deviceUnknown) {
		if err := r.redeploy(ctx, q, ticket, w, app.Environment.ID, timeout, "update"); err != nil {
			resp.Diagnostics.AddError("Unable to Update the Exposure",
				fmt.Sprintf("qtail updated the annotations group %s but the redeployment of %s failed: the change "+
					"reaches the Service at the next successful deployment. Fix the deployment, then apply again."+
					"\n\n%s", groupID, w, err))
			return
		}
		redeployed = true
	}
	if deviceUnknown || plan.TailnetFQDN.IsUnknown() || plan.TailnetIPs.IsUnknown() {
		dev, err := r.settleDevice(ctx, t, &plan, plan.expectDevice() && redeployed, timeout, "update", &resp.Diagnostics)
		if err != nil {
			resp.Diagnostics.AddError("Unable to Update the Exposure", fmt.Sprintf("qtail redeployed %s but %s.", w, err))
			return
		}
		resp.Diagnostics.Append(plan.fillDevice(ctx, dev)...)
		if dev == nil && plan.ProxyGroup.ValueString() == "" {
			plan.TailnetFQDN = r.guessFQDN(ctx, t, plan.Hostname.ValueString())
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *exposedServiceResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state exposedServiceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, timeout := tfx.WithTimeout(ctx, state.Timeouts.Delete, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	q, t := r.clients(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	w, groupID, orgID := state.workload(), state.AnnotationsGroupID.ValueString(), state.OrganizationID.ValueString()
	redeploy := state.Redeploy.IsNull() || state.Redeploy.ValueBool()
	var ticket *qovery.DeployTicket
	if redeploy {
		ticket = q.ExpectDeploy("")
		defer ticket.Forget()
	}
	// The operator of the cluster waits for this Delete.
	defer r.Clients.Planned().StartDelete(groupID)()

	app, err := w.get(ctx, q, state.EnvironmentID.ValueString())
	switch {
	case qovery.IsNotFound(err):
		// The service is gone, and its Kubernetes Service and proxy with it.
		redeploy = false
	case err != nil:
		tfx.APIError(&resp.Diagnostics, "read "+w.String(), err)
		return
	default:
		if ids := app.AnnotationsGroupIDs(); slices.Contains(ids, groupID) {
			rest := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == groupID })
			if err := w.setGroups(ctx, q, rest); err != nil {
				tfx.APIError(&resp.Diagnostics, "detach annotations group "+groupID+" from "+w.String(), err)
				return
			}
		}
		if redeploy {
			if err := r.redeploy(ctx, q, ticket, w, app.Environment.ID, timeout, "delete"); err != nil {
				resp.Diagnostics.AddError("Unable to Remove the Exposure",
					fmt.Sprintf("qtail detached the annotations group %s from %s, but the redeployment that removes "+
						"the proxy failed. Fix the deployment, then run the destroy again.\n\n%s", groupID, w, err))
				return
			}
		}
	}
	if err := q.DeleteAnnotationsGroup(ctx, orgID, groupID); err != nil && !qovery.IsNotFound(err) {
		tfx.APIError(&resp.Diagnostics, "delete annotations group "+groupID, err)
		return
	}
	if !redeploy {
		if app != nil && state.DeviceID.ValueString() != "" {
			resp.Diagnostics.AddWarning("Proxy Device Left in Place",
				fmt.Sprintf("redeploy is false, so %s was not redeployed: its proxy device %s stays on the tailnet "+
					"until its next deployment.", w, state.Hostname.ValueString()))
		}
		return
	}
	if state.WaitForDevice.IsNull() || state.WaitForDevice.ValueBool() {
		if err := r.waitForDeviceGone(ctx, t, &state, timeout); err != nil {
			resp.Diagnostics.AddError("Proxy Device Still on the Tailnet", err.Error())
		}
	}
}

func (r *exposedServiceResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	w, groupID, diags := parseImportID(req.ID)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, w.attr(), w.id)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("annotations_group_id"), groupID)...)
}

// parseImportID reads an import ID, APPLICATION_ID/ANNOTATIONS_GROUP_ID or
// container/CONTAINER_ID/ANNOTATIONS_GROUP_ID: the inverse of resourceID.
func parseImportID(id string) (workload, string, diag.Diagnostics) {
	w := workload{kind: kindApplication}
	if rest, ok := strings.CutPrefix(id, kindContainer+"/"); ok {
		id, w.kind = rest, kindContainer
	}
	parts, diags := tfx.SplitImportID(id, 2, "APPLICATION_ID/ANNOTATIONS_GROUP_ID or container/CONTAINER_ID/ANNOTATIONS_GROUP_ID")
	if diags.HasError() {
		return workload{}, "", diags
	}
	w.id = parts[0]
	return w, parts[1], diags
}

// noPortSummary and noPortDetail explain why a service
// without a port cannot be exposed.
func noPortSummary(w workload) string { return tfx.TitleCase(w.kind) + " Declares No Port" }

func noPortDetail(w workload, app *qovery.Workload) string {
	return fmt.Sprintf("%s %s (%s) declares no port. Qovery creates a Kubernetes Service only for a service with at "+
		"least one port, so the Tailscale operator would have nothing to expose. Declare the port the %s listens on "+
		"in Qovery (every declared port becomes reachable from the tailnet), or use an egress or a subnet router instead.",
		tfx.TitleCase(w.kind), app.Name, app.ID, w.kind)
}
