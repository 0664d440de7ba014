package exposedservice

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

func (r *exposedServiceResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg exposedServiceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() || cfg.WaitForDevice.IsUnknown() {
		return
	}
	wait := cfg.WaitForDevice.IsNull() || cfg.WaitForDevice.ValueBool()
	if !wait {
		return
	}
	if !cfg.Redeploy.IsUnknown() && !cfg.Redeploy.IsNull() && !cfg.Redeploy.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("wait_for_device"), "Nothing Would Create the Proxy Device",
			"With redeploy = false qtail does not redeploy the application, and Qovery applies annotations only at a deployment: "+
				"no proxy device would appear while qtail waits for it. Set wait_for_device = false, or let qtail redeploy.")
	}
	if !cfg.ProxyGroup.IsUnknown() && !cfg.ProxyGroup.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("wait_for_device"), "A ProxyGroup Exposure Has No Device of Its Own",
			fmt.Sprintf("With proxy_group = %q the application is served as a Tailscale Service by the devices of the ProxyGroup, "+
				"so there is no proxy device to wait for. Set wait_for_device = false.", cfg.ProxyGroup.ValueString()))
	}
}

// ModifyPlan plans the computed attributes at their desired values (so
// that drift seen by Read shows as a change) and refuses, before anything is
// created, what the operator could not expose.
func (r *exposedServiceResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan, state, cfg exposedServiceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	creating := req.State.Raw.IsNull()
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	moved := !plan.ApplicationID.Equal(state.ApplicationID) || !plan.ContainerID.Equal(state.ContainerID)
	replacing := replacingAttributes.ReplacedBy(ctx, req, &resp.Diagnostics)

	resp.Diagnostics.Append(plan.planComputed(ctx, &cfg, &state, creating || replacing)...)
	if creating && r.Configured() {
		// During an apply, Terraform plans each resource again just
		// before it applies it: the redeployment of this creation is
		// announced before any of its wave is triggered (the
		// announcements of a plan that no apply follows lapse).
		if key := plan.creationKey(); key != "" {
			if q, _ := r.Clients.Qovery(); q != nil {
				q.ExpectDeploy(key)
			}
		}
	}
	if replacing {
		if r.Configured() {
			r.Clients.Planned().Release(state.AnnotationsGroupID.ValueString(), state.DeviceID.ValueString())
		}
		if !plan.Tags.Equal(state.Tags) && !moved {
			resp.Diagnostics.AddAttributeWarning(path.Root("tags"), "Changing Tags Replaces the Exposure",
				"Tailscale fixes a device's tags when its auth key is created, so the proxy cannot change tags in place. qtail "+
					"removes this exposure (detach, redeploy, the proxy device leaves the tailnet) and creates it again: a new "+
					"device, with new tailnet IPs, carries the new tags.")
		}
	}

	if r.Configured() {
		// Both APIs are needed: a missing credential fails the plan, not
		// the apply.
		if r.Clients.PlanQovery(&resp.Diagnostics) != nil {
			r.checkPlan(ctx, &plan, &state, creating || replacing, &resp.Diagnostics)
		}
		r.Clients.PlanTailnet(&resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// planComputed plans the computed attributes of m at their desired values:
// the annotations qtail writes, the group attached, the IDs and the device
// of the state, unknown where the apply changes them. renewed is set for a
// creation or a replacement; cfg is the configuration.
func (m *exposedServiceModel) planComputed(ctx context.Context, cfg, state *exposedServiceModel, renewed bool) diag.Diagnostics {
	if cfg.AnnotationsGroupName.IsNull() {
		if m.Hostname.IsUnknown() {
			m.AnnotationsGroupName = types.StringUnknown()
		} else {
			m.AnnotationsGroupName = types.StringValue("tailscale-" + m.Hostname.ValueString())
		}
	}
	ann, known, diags := m.desiredAnnotations(ctx)
	if known {
		values := make(map[string]attr.Value, len(ann))
		for k, v := range ann {
			values[k] = types.StringValue(v)
		}
		m.Annotations = types.MapValueMust(types.StringType, values)
	} else {
		m.Annotations = types.MapUnknown(types.StringType)
	}
	switch {
	case m.attaches():
		m.Attached = types.BoolValue(true)
	case renewed:
		m.Attached = types.BoolValue(false)
	default:
		m.Attached = state.Attached
	}

	if renewed {
		m.ID = types.StringUnknown()
		m.OrganizationID = types.StringUnknown()
		m.EnvironmentID = types.StringUnknown()
		m.AnnotationsGroupID = types.StringUnknown()
		m.DeviceID = types.StringUnknown()
		m.TailnetFQDN = types.StringUnknown()
		m.TailnetIPs = types.ListUnknown(types.StringType)
		m.Ports = types.ListUnknown(exposedPortType)
	} else {
		m.ID, m.OrganizationID, m.AnnotationsGroupID = state.ID, state.OrganizationID, state.AnnotationsGroupID
		// A state saved before environment_id existed has none until
		// its first refresh; the apply fills it.
		m.EnvironmentID = state.EnvironmentID
		if m.EnvironmentID.IsNull() {
			m.EnvironmentID = types.StringUnknown()
		}
		m.DeviceID, m.TailnetFQDN, m.TailnetIPs, m.Ports = state.DeviceID, state.TailnetFQDN, state.TailnetIPs, state.Ports
		moved := !m.Hostname.Equal(state.Hostname) || !m.ProxyGroup.Equal(state.ProxyGroup)
		missing := state.DeviceID.IsNull() && m.expectDevice()
		if moved || missing || m.WaitForDevice.IsUnknown() || m.Redeploy.IsUnknown() {
			m.DeviceID = types.StringUnknown()
			m.TailnetFQDN = types.StringUnknown()
			m.TailnetIPs = types.ListUnknown(types.StringType)
		}
	}
	return diags
}

// planCheck is what the plan-time checks of one exposure share.
type planCheck struct {
	plan, state *exposedServiceModel
	// creating is set for a creation or a replacement.
	creating bool
	appID    string
	app      *qovery.Workload
	// w is the exposed service, app what Qovery says of it.
	w workload
	// ownGroup is the annotations group of the exposure being updated.
	ownGroup string
	// leftovers are the groups taken as this exposure's own, left by a
	// failed creation.
	leftovers map[string]bool
	// ops looks up the operator of the application's cluster.
	ops *cluster.Lookup
}

// checkPlan reads the application and the tailnet to plan the ports and to
// refuse what cannot work. Checks whose inputs are unknown are skipped.
func (r *exposedServiceResource) checkPlan(ctx context.Context, plan, state *exposedServiceModel, creating bool, diags *diag.Diagnostics) {
	if !plan.workloadKnown() {
		return
	}
	q := r.Clients.QoveryOrNil()
	w := plan.workload()
	appID := w.id
	app, err := w.get(ctx, q, plan.EnvironmentID.ValueString())
	if qovery.IsNotFound(err) {
		diags.AddAttributeError(w.attr(), tfx.TitleCase(w.kind)+" Not Found",
			fmt.Sprintf("Qovery has no %s visible to this API token. Check %s_id, and that the token "+
				"belongs to the %s's organization.", w, w.kind, w.kind))
		return
	}
	if err != nil {
		diags.AddWarning(tfx.TitleCase(w.kind)+" Not Checked", "qtail could not read "+w.String()+" to plan its ports: "+err.Error()+
			". The apply reads it again; look at the ports it records before you grant access to them.")
		return
	}
	if len(app.Ports) == 0 {
		diags.AddAttributeError(w.attr(), noPortSummary(w), noPortDetail(w, app))
		return
	}
	ports, d := exposedPorts(ctx, app.Ports)
	diags.Append(d...)
	plan.Ports = ports
	plan.EnvironmentID = types.StringValue(app.Environment.ID)
	if pg := plan.ProxyGroup; !pg.IsUnknown() && pg.ValueString() != "" {
		// The operator serves an exposed Service only through an ingress
		// ProxyGroup, and otherwise only records an event on the Service.
		cluster.CheckProxyGroupType(ctx, r.Clients, pg.ValueString(), app.Environment.ID, manifest.ProxyGroupIngress, diags)
	}

	if !plan.attaches() && !creating && !slices.Contains(app.AnnotationsGroupIDs(), state.AnnotationsGroupID.ValueString()) {
		diags.AddAttributeWarning(path.Root("attach"), "Annotations Group Not Attached",
			fmt.Sprintf("The annotations group %s is not attached to %s, and attach is false: nothing exposes the Service until "+
				"it is. %s", state.AnnotationsGroupID.ValueString(), w, attachHint(w)))
	}
	c := &planCheck{plan: plan, state: state, creating: creating, appID: appID, w: w, app: app, leftovers: map[string]bool{}}
	if !creating {
		c.ownGroup = state.AnnotationsGroupID.ValueString()
	}
	if !r.checkAttachedGroups(c, diags) || plan.Hostname.IsUnknown() {
		return
	}
	hostname := plan.Hostname.ValueString()
	// The operator reads one set of annotations per Service: a second
	// exposure of the same service would wait for a device that cannot
	// come, and leave a second group attached.
	if other, conflict := r.Clients.Planned().ClaimObject("exposure of "+w.String(), "hostname "+strconv.Quote(hostname)); conflict {
		diags.AddAttributeError(w.attr(), tfx.TitleCase(w.kind)+" Exposed Twice",
			fmt.Sprintf("Another qtail_exposed_service of this configuration exposes %s, at the %s; this one would expose it "+
				"again at the hostname %q. The operator reads one set of annotations per Kubernetes Service, so the second "+
				"exposure would never get a device of its own, and both annotations groups would stay attached. Keep one of "+
				"the two resources.", w, other, hostname))
		return
	}
	if other, conflict := r.Clients.Planned().ClaimHostname(hostname, w.String()); conflict {
		diags.AddAttributeError(path.Root("hostname"), "Hostname Planned Twice",
			fmt.Sprintf("Another qtail_exposed_service of this configuration exposes %s at the hostname %q. "+
				"A hostname names one device on the tailnet: give each exposure its own.", other, hostname))
		return
	}
	if !creating {
		r.checkOperatorID(ctx, c, diags)
	}
	if !creating && plan.Hostname.Equal(state.Hostname) {
		return
	}
	// The environment gives the organization (annotations groups are
	// organization objects) and the cluster (its operator).
	env, err := q.GetEnvironment(ctx, app.Environment.ID)
	if err != nil {
		diags.AddWarning("Exposure Not Checked", "qtail could not read the environment of "+w.String()+": "+err.Error()+
			". The hostname and the tags are not checked at plan time; the apply fails if the proxy device does not appear.")
		return
	}
	c.ops = cluster.NewLookup(q, env)
	if creating {
		switch r.checkOperatorRuns(ctx, c, diags) {
		case cluster.OperatorRefused:
			return
		case cluster.OperatorDeferred:
			// What depends on the operator's configuration waits for
			// the apply.
			r.checkHostname(ctx, c, diags)
			return
		}
	}
	r.checkHostname(ctx, c, diags)
	if diags.HasError() {
		return
	}
	tags, known, d := plan.planTags(ctx)
	diags.Append(d...)
	if !creating {
		// A new hostname is a new Tailscale Service.
		r.checkServiceApproved(ctx, c, tags, known, diags)
		return
	}
	if known {
		cluster.CheckOperatorOwnsTags(ctx, r.Clients, c.ops, cluster.TagsCheck{
			Tags: tags, At: path.Root("tags"), Device: "proxy", Resource: "exposure",
		}, diags)
	}
	cluster.CheckExposure(ctx, r.Clients, c.ops, plan.ProxyGroup.ValueString(), plan.ProxyClass.ValueString(), diags)
	if !diags.HasError() {
		r.checkServiceApproved(ctx, c, tags, known, diags)
	}
}

// checkServiceApproved checks, for an exposure through an ingress
// ProxyGroup, that autoApprovers.services approve the ProxyGroup's devices
// as hosts of its Tailscale Service: they carry its traffic only then.
// tags are the exposure's tags, known whether they are.
func (r *exposedServiceResource) checkServiceApproved(ctx context.Context, c *planCheck, tags []string, known bool, diags *diag.Diagnostics) {
	pg := c.plan.ProxyGroup
	if !known || pg.IsUnknown() || pg.ValueString() == "" {
		return
	}
	cluster.CheckServiceApproved(ctx, r.Clients, c.ops, cluster.ServiceApprovalCheck{
		Hostname: c.plan.Hostname.ValueString(), ProxyGroup: pg.ValueString(), ServiceTags: tags, At: path.Root("proxy_group"),
	}, diags)
}

// checkOperatorRuns checks that an operator serves the new exposure: the
// one operator_id names, one found on the cluster, or one that this plan
// installs there. Without operator_id Terraform may plan the operator of
// the configuration after the exposure, so a missing one is a warning:
// the apply waits for an operator on the cluster and fails, before it
// creates anything, if none comes (noOperatorDetail).
func (r *exposedServiceResource) checkOperatorRuns(ctx context.Context, c *planCheck, diags *diag.Diagnostics) cluster.Presence {
	poll := r.Clients.PollInterval()
	p := c.ops.Check(ctx, cluster.OperatorRef{ID: c.plan.OperatorID, World: r.Clients.Planned(), Poll: poll, Grace: cluster.Grace(poll)}, diags)
	if p == cluster.OperatorDeferred {
		diags.AddAttributeWarning(c.w.attr(), "No Tailscale Operator on the Cluster Yet",
			fmt.Sprintf("qtail found no Helm service of the %s chart on cluster %s, where %s runs, and no qtail_operator planned "+
				"there so far. Terraform may plan the operator of this configuration after this exposure, as nothing orders them: "+
				"set operator_id = qtail_operator.NAME.id so that Terraform plans, creates and destroys them in order, and this "+
				"check runs here. The apply waits for an operator on the cluster and fails, before it changes anything, if none "+
				"comes.", cluster.OperatorChart, c.ops.Env.ClusterID, c.w))
	}
	return p
}

// checkOperatorID checks a changed operator_id of an exposure being
// updated.
func (r *exposedServiceResource) checkOperatorID(ctx context.Context, c *planCheck, diags *diag.Diagnostics) {
	if c.plan.OperatorID.IsNull() || c.plan.OperatorID.IsUnknown() || c.plan.OperatorID.Equal(c.state.OperatorID) {
		return
	}
	env, err := r.Clients.QoveryOrNil().GetEnvironment(ctx, c.app.Environment.ID)
	if err != nil {
		diags.AddAttributeWarning(path.Root("operator_id"), "Operator Not Checked",
			"qtail could not read the environment of "+c.w.String()+": "+err.Error()+". The apply reports any problem.")
		return
	}
	cluster.NewLookup(r.Clients.QoveryOrNil(), env).Check(ctx, cluster.OperatorRef{ID: c.plan.OperatorID, World: r.Clients.Planned()}, diags)
}

// noOperatorDetail says why an exposure cannot be created on the cluster
// of env, where no operator came.
func noOperatorDetail(w workload, clusterID string) string {
	return fmt.Sprintf("qtail found no Helm service of the %s chart on cluster %s, where %s runs, and no qtail_operator of this "+
		"configuration is planned there. Without an operator nothing creates the proxy: the apply would attach the "+
		"annotations group, redeploy the %s and wait for a device that cannot come. Install the operator with a "+
		"qtail_operator in an environment of that cluster, and set operator_id = qtail_operator.NAME.id in this resource so "+
		"that Terraform creates it first.", cluster.OperatorChart, clusterID, w, w.kind)
}

// checkAttachedGroups refuses an application that another annotations
// group already exposes; a group that a failed creation of this exposure
// left is taken as its own (c.leftovers). It returns false after an error.
func (r *exposedServiceResource) checkAttachedGroups(c *planCheck, diags *diag.Diagnostics) bool {
	if !checkNoFunnel(c, diags) {
		return false
	}
	for _, g := range c.app.AnnotationsGroups {
		if g.ID == c.ownGroup || r.Clients.Planned().Released(g.ID) || annotationValue(g.Annotations, manifest.AnnotationExpose) != "true" {
			continue
		}
		if c.creating && isLeftover(&g, c.plan) {
			c.leftovers[g.ID] = true
			leftoverWarning(diags, &g, c.w)
			continue
		}
		diags.AddAttributeError(c.w.attr(), tfx.TitleCase(c.w.kind)+" Already Exposed",
			fmt.Sprintf("%s %s (%s) already has the annotations group %q (%s) attached, which exposes it on the tailnet as %q. "+
				"The operator reads one set of annotations per Service: detach that group, or import it with %s",
				tfx.TitleCase(c.w.kind), c.app.Name, c.w.id, g.Name, g.ID, annotationValue(g.Annotations, manifest.AnnotationHostname),
				tfx.ImportHint("qtail_exposed_service", resourceID(c.w, g.ID))))
		return false
	}
	return true
}

// checkNoFunnel refuses an exposure of a service to which an annotations
// group gives the annotation tailscale.com/funnel: the operator reads every
// annotation of the Kubernetes Service, so the exposure would publish it on
// the public internet through Tailscale Funnel. The exposure's own group
// holds only what qtail writes: a Funnel annotation added there by hand is
// a change that the plan undoes, with a warning. It returns false after an
// error.
func checkNoFunnel(c *planCheck, diags *diag.Diagnostics) bool {
	for _, g := range c.app.AnnotationsGroups {
		if !hasAnnotation(g.Annotations, manifest.AnnotationFunnel) {
			continue
		}
		if g.ID == c.ownGroup {
			diags.AddAttributeWarning(path.Root("annotations"), "Funnel Annotation Removed",
				fmt.Sprintf("The annotations group %q (%s) of this exposure holds the annotation %s, added outside qtail: it would "+
					"publish %s on the public internet through Tailscale Funnel. qtail never turns Funnel on, and plans to write the "+
					"group back without it.", g.Name, g.ID, manifest.AnnotationFunnel, c.w))
			continue
		}
		diags.AddAttributeError(c.w.attr(), "Funnel Annotation on the "+tfx.TitleCase(c.w.kind),
			fmt.Sprintf("The annotations group %q (%s), attached to %s, sets %s = %q. The operator reads every annotation of the "+
				"Kubernetes Service, so exposing it would also publish it on the public internet through Tailscale Funnel, to "+
				"anyone, outside the tailnet policy. qtail puts services on the tailnet only: remove %s from that group (or "+
				"detach the group) in the Qovery console, then plan again.", g.Name, g.ID, c.w, manifest.AnnotationFunnel,
				annotationValue(g.Annotations, manifest.AnnotationFunnel), manifest.AnnotationFunnel))
		return false
	}
	return true
}

// hasAnnotation reports whether list has the annotation key (annotation
// keys are case-sensitive in Kubernetes, but a prefix in capitals is as
// much a mistake to refuse).
func hasAnnotation(list []qovery.Annotation, key string) bool {
	for _, a := range list {
		if strings.EqualFold(strings.TrimSpace(a.Key), key) {
			return true
		}
	}
	return false
}

// isLeftover reports whether a group is what this exposure would
// create: same name, same hostname. Terraform plans the replacement of a
// tainted exposure (one whose creation failed half-way) as a creation, with
// no prior state, while the tainted group still exists until the
// replacement removes it; such a group is not a conflict.
func isLeftover(g *qovery.AnnotationsGroup, plan *exposedServiceModel) bool {
	return !plan.AnnotationsGroupName.IsUnknown() && g.Name == plan.AnnotationsGroupName.ValueString() &&
		!plan.Hostname.IsUnknown() && strings.EqualFold(annotationValue(g.Annotations, manifest.AnnotationHostname), plan.Hostname.ValueString())
}

func leftoverWarning(diags *diag.Diagnostics, g *qovery.AnnotationsGroup, w workload) {
	diags.AddWarning("Existing Annotations Group Taken Over",
		fmt.Sprintf("The annotations group %q (%s) already exposes this hostname, with the name this exposure gives its group. "+
			"It is taken as this exposure's own earlier group (an exposure being replaced after a failed creation) and is not "+
			"reported as a conflict. If it belongs to something else, import it instead with %s",
			g.Name, g.ID, tfx.ImportHint("qtail_exposed_service", resourceID(w, g.ID))))
}

// annotationValue returns the value of one annotation.
func annotationValue(list []qovery.Annotation, key string) string {
	for _, a := range list {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// checkHostname refuses a hostname that another exposure of the
// organization, or another device of the tailnet, already uses.
func (r *exposedServiceResource) checkHostname(ctx context.Context, c *planCheck, diags *diag.Diagnostics) {
	hostname := c.plan.Hostname.ValueString()
	world := r.Clients.Planned()
	orgID := c.ops.Env.Organization.ID
	groups, err := r.Clients.QoveryOrNil().ListAnnotationsGroups(ctx, orgID)
	if err != nil {
		diags.AddWarning("Hostname Not Checked", "qtail could not list the annotations groups of organization "+orgID+": "+err.Error()+
			". Make sure that no other exposure uses the hostname "+hostname+".")
	}
	for _, g := range groups {
		if g.ID == c.ownGroup || world.Released(g.ID) || annotationValue(g.Annotations, manifest.AnnotationExpose) != "true" ||
			!strings.EqualFold(annotationValue(g.Annotations, manifest.AnnotationHostname), hostname) || c.leftovers[g.ID] {
			continue
		}
		if c.creating && isLeftover(&g, c.plan) && g.AssociatedItemsCount != nil && *g.AssociatedItemsCount == 0 {
			leftoverWarning(diags, &g, c.w)
			continue
		}
		diags.AddAttributeError(path.Root("hostname"), "Hostname Already Used by Another Exposure",
			fmt.Sprintf("The annotations group %q (%s) of the organization already exposes a Service at the hostname %q. "+
				"A hostname names one device on the tailnet: choose another one, or, if that group is this service's exposure, "+
				"import it with %s", g.Name, g.ID, hostname, tfx.ImportHint("qtail_exposed_service", resourceID(c.w, g.ID))))
		return
	}

	t := r.Clients.TailnetOrNil()
	if t == nil {
		return
	}
	dev, err := t.FindDeviceByHostname(ctx, hostname)
	if err != nil {
		diags.AddWarning("Hostname Not Checked", "qtail could not look up the tailnet's devices: "+err.Error()+
			". Make sure that no other device of the tailnet is named "+hostname+".")
		return
	}
	if dev == nil || cluster.DeviceID(dev) == c.state.DeviceID.ValueString() || world.Released(cluster.DeviceID(dev)) {
		return
	}
	// The operator's own device is never a proxy: a proxy with its name
	// would join as NAME-1, and the wait for NAME would never end.
	if op, err := c.ops.Operator(ctx); err == nil && op.IsOperatorDevice(dev.Hostname, dev.Tags) {
		diags.AddAttributeError(path.Root("hostname"), "Hostname of an Operator's Device",
			fmt.Sprintf("The tailnet device %q (%s, tagged %s) is a Tailscale operator's own device, not a proxy: "+
				"the proxy of this application would join the tailnet as %s-1 and never answer at %s. Choose another hostname.",
				dev.Hostname, cluster.DeviceID(dev), strings.Join(dev.Tags, ", "), hostname, hostname))
		return
	}
	// A device that this application's operator could have created (each
	// of its tags owned by an operator tag) is taken as the application's
	// own proxy, left over from an exposure whose group was deleted
	// without a redeployment: exposing the application again reuses it.
	if len(dev.Tags) > 0 && cluster.OperatorCanApply(ctx, r.Clients, c.ops, dev.Tags) {
		return
	}
	owner := "tagged " + strings.Join(dev.Tags, ", ")
	if len(dev.Tags) == 0 {
		owner = "owned by " + dev.User
	}
	diags.AddAttributeError(path.Root("hostname"), "Hostname Already Used on the Tailnet",
		fmt.Sprintf("The tailnet already has a device named %q (%s, %s). The proxy would get a suffixed MagicDNS name "+
			"(%s-1) and the exposure could not be found by its name: choose another hostname, or rename or remove that device.",
			hostname, cluster.DeviceID(dev), owner, hostname))
}
