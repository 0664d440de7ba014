package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
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
	replacing := !creating && (!plan.ApplicationID.Equal(state.ApplicationID) || !plan.Tags.Equal(state.Tags))

	if cfg.AnnotationsGroupName.IsNull() {
		if plan.Hostname.IsUnknown() {
			plan.AnnotationsGroupName = types.StringUnknown()
		} else {
			plan.AnnotationsGroupName = types.StringValue("tailscale-" + plan.Hostname.ValueString())
		}
	}
	ann, known, diags := plan.desiredAnnotations(ctx)
	resp.Diagnostics.Append(diags...)
	if known {
		values := make(map[string]attr.Value, len(ann))
		for k, v := range ann {
			values[k] = types.StringValue(v)
		}
		plan.Annotations = types.MapValueMust(types.StringType, values)
	} else {
		plan.Annotations = types.MapUnknown(types.StringType)
	}
	plan.Attached = types.BoolValue(true)

	if creating || replacing {
		plan.ID = types.StringUnknown()
		plan.OrganizationID = types.StringUnknown()
		plan.AnnotationsGroupID = types.StringUnknown()
		plan.DeviceID = types.StringUnknown()
		plan.TailnetFQDN = types.StringUnknown()
		plan.TailnetIPs = types.ListUnknown(types.StringType)
		plan.Ports = types.ListUnknown(exposedPortType)
	} else {
		plan.ID, plan.OrganizationID, plan.AnnotationsGroupID = state.ID, state.OrganizationID, state.AnnotationsGroupID
		plan.DeviceID, plan.TailnetFQDN, plan.TailnetIPs, plan.Ports = state.DeviceID, state.TailnetFQDN, state.TailnetIPs, state.Ports
		moved := !plan.Hostname.Equal(state.Hostname) || !plan.ProxyGroup.Equal(state.ProxyGroup)
		missing := state.DeviceID.IsNull() && plan.expectDevice()
		if moved || missing || plan.WaitForDevice.IsUnknown() || plan.Redeploy.IsUnknown() {
			plan.DeviceID = types.StringUnknown()
			plan.TailnetFQDN = types.StringUnknown()
			plan.TailnetIPs = types.ListUnknown(types.StringType)
		}
	}
	if replacing {
		if r.configured() {
			r.data.exposures.release(state.AnnotationsGroupID.ValueString(), state.DeviceID.ValueString())
		}
		if !plan.Tags.Equal(state.Tags) && plan.ApplicationID.Equal(state.ApplicationID) {
			resp.Diagnostics.AddAttributeWarning(path.Root("tags"), "Changing Tags Replaces the Exposure",
				"Tailscale fixes a device's tags when its auth key is created, so the proxy cannot change tags in place. qtail "+
					"removes this exposure (detach, redeploy, the proxy device leaves the tailnet) and creates it again: a new "+
					"device, with new tailnet IPs, carries the new tags.")
		}
	}

	if r.configured() {
		// Both APIs are needed: a missing credential fails the plan, not
		// the apply.
		switch {
		case r.data.qovery != nil:
			r.checkPlan(ctx, &plan, &state, creating || replacing, &resp.Diagnostics)
		case !r.data.qoveryUnknown:
			_, diags := r.data.Qovery()
			resp.Diagnostics.Append(diags...)
		}
		if r.data.tailnet == nil && !r.data.tailnetUnknown {
			_, diags := r.data.Tailnet()
			resp.Diagnostics.Append(diags...)
		}
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// checkPlan reads the application and the tailnet to plan the ports and to
// refuse what cannot work. Checks whose inputs are unknown are skipped.
func (r *exposedServiceResource) checkPlan(ctx context.Context, plan, state *exposedServiceModel, creating bool, diags *diag.Diagnostics) {
	if plan.ApplicationID.IsUnknown() {
		return
	}
	q := r.data.qovery
	appID := plan.ApplicationID.ValueString()
	app, err := q.GetApplication(ctx, appID)
	if qovery.IsNotFound(err) {
		diags.AddAttributeError(path.Root("application_id"), "Application Not Found",
			fmt.Sprintf("Qovery has no application %s visible to this API token. Check application_id, and that the token "+
				"belongs to the application's organization.", appID))
		return
	}
	if err != nil {
		diags.AddWarning("Application Not Checked", "qtail could not read application "+appID+" to plan its ports: "+err.Error()+
			". The apply reads it again; look at the ports it records before you grant access to them.")
		return
	}
	if len(app.Ports) == 0 {
		diags.AddAttributeError(path.Root("application_id"), "Application Declares No Port", exposureNoPortDetail(app))
		return
	}
	ports, d := exposedPorts(ctx, app.Ports)
	diags.Append(d...)
	plan.Ports = ports
	r.checkProxyGroupType(ctx, plan, app, diags)

	reg := r.data.exposures
	ownGroup := ""
	if !creating {
		ownGroup = state.AnnotationsGroupID.ValueString()
	}
	leftovers := map[string]bool{}
	for _, g := range app.AnnotationsGroups {
		if g.ID == ownGroup || reg.isReleased(g.ID) || exposureAnnotationValue(g.Annotations, exposeAnnotation) != "true" {
			continue
		}
		if creating && exposureLeftover(&g, plan) {
			leftovers[g.ID] = true
			exposureLeftoverWarning(diags, &g, appID)
			continue
		}
		diags.AddAttributeError(path.Root("application_id"), "Application Already Exposed",
			fmt.Sprintf("Application %s (%s) already has the annotations group %q (%s) attached, which exposes it on the tailnet as %q. "+
				"The operator reads one set of annotations per Service: detach that group, or import it with\n\n"+
				"  terraform import <address> %s/%s",
				app.Name, appID, g.Name, g.ID, exposureAnnotationValue(g.Annotations, exposeHostnameAnnotation), appID, g.ID))
		return
	}

	if plan.Hostname.IsUnknown() {
		return
	}
	hostname := plan.Hostname.ValueString()
	if other, conflict := reg.claim(hostname, appID); conflict {
		diags.AddAttributeError(path.Root("hostname"), "Hostname Planned Twice",
			fmt.Sprintf("Another qtail_exposed_service of this configuration exposes application %s at the hostname %q. "+
				"A hostname names one device on the tailnet: give each exposure its own.", other, hostname))
		return
	}
	hostnameChanged := creating || !plan.Hostname.Equal(state.Hostname)
	if !hostnameChanged && !creating {
		return
	}
	// The environment gives the organization (annotations groups are
	// organization objects) and the cluster (its operator).
	env, err := q.GetEnvironment(ctx, app.Environment.ID)
	if err != nil {
		diags.AddWarning("Exposure Not Checked", "qtail could not read the environment of application "+appID+": "+err.Error()+
			". The hostname and the tags are not checked at plan time; the apply fails if the proxy device does not appear.")
		return
	}
	ops := &exposureOperatorLookup{q: q, env: env}
	r.checkHostname(ctx, plan, appID, ownGroup, state, ops, leftovers, creating, diags)
	if diags.HasError() {
		return
	}
	if creating {
		r.checkTags(ctx, plan, ops, diags)
	}
}

// checkProxyGroupType refuses a proxy_group that a qtail_proxy_group of
// this plan declares, on the application's cluster, with a type other than
// ingress: the operator serves an exposed Service only through an ingress
// ProxyGroup, and otherwise only records an event on the Service.
func (r *exposedServiceResource) checkProxyGroupType(ctx context.Context, plan *exposedServiceModel, app *qovery.Application, diags *diag.Diagnostics) {
	if plan.ProxyGroup.IsUnknown() || plan.ProxyGroup.ValueString() == "" {
		return
	}
	r.data.checkPlannedProxyGroupType(ctx, plan.ProxyGroup.ValueString(), app.Environment.ID, manifest.ProxyGroupIngress,
		"The operator serves an exposed Service only through a ProxyGroup of type \""+manifest.ProxyGroupIngress+"\": this application "+
			"would not be reachable. Name an ingress ProxyGroup in proxy_group, or remove proxy_group to give the application a proxy of its own.", diags)
}

// checkPlannedProxyGroupType refuses the ProxyGroup name, used from the
// environment envID, when a qtail_proxy_group of this plan declares it on
// the same cluster with another type than want. why says what would go
// wrong and what to do. A ProxyGroup that no resource of the plan declares
// may be managed elsewhere and is not checked.
func (d *providerData) checkPlannedProxyGroupType(ctx context.Context, name, envID, want, why string, diags *diag.Diagnostics) {
	reg := d.proxyGroups
	planned := reg.named(name)
	if len(planned) == 0 {
		return
	}
	read := func(ctx context.Context, envID string) (string, error) {
		env, err := d.qovery.GetEnvironment(ctx, envID)
		if err != nil {
			return "", err
		}
		return env.ClusterID, nil
	}
	cluster, err := reg.cluster(ctx, envID, read)
	if err != nil {
		diags.AddWarning("ProxyGroup Not Checked", "qtail could not read the environment "+envID+": "+err.Error()+
			". Make sure that the ProxyGroup "+name+" is of type "+want+".")
		return
	}
	for _, pg := range planned {
		if pg.typ == want {
			continue
		}
		if c, err := reg.cluster(ctx, pg.environmentID, read); err != nil || c != cluster {
			continue
		}
		diags.AddAttributeError(path.Root("proxy_group"), "ProxyGroup Not of Type "+titleCase(want),
			fmt.Sprintf("A qtail_proxy_group of this configuration declares the ProxyGroup %q on cluster %s (environment %s) with "+
				"type %q. %s", name, cluster, pg.environmentID, pg.typ, why))
		return
	}
}

// exposureOperatorLookup finds the operator of an environment's cluster
// once, when a check needs it.
type exposureOperatorLookup struct {
	q    *qovery.Client
	env  *qovery.Environment
	done bool
	all  []qovery.Helm
	err  error
}

func (l *exposureOperatorLookup) get(ctx context.Context) (exposureOperator, error) {
	helms, err := l.helms(ctx)
	return operatorAmong(helms), err
}

// helms lists the Helm services of the cluster, once.
func (l *exposureOperatorLookup) helms(ctx context.Context) ([]qovery.Helm, error) {
	if !l.done {
		l.all, l.err = clusterHelms(ctx, l.q, l.env)
		l.done = true
	}
	return l.all, l.err
}

// exposureLeftover reports whether a group is what this exposure would
// create: same name, same hostname. Terraform plans the replacement of a
// tainted exposure (one whose creation failed half-way) as a creation, with
// no prior state, while the tainted group still exists until the
// replacement removes it; such a group is not a conflict.
func exposureLeftover(g *qovery.AnnotationsGroup, plan *exposedServiceModel) bool {
	return !plan.AnnotationsGroupName.IsUnknown() && g.Name == plan.AnnotationsGroupName.ValueString() &&
		!plan.Hostname.IsUnknown() && strings.EqualFold(exposureAnnotationValue(g.Annotations, exposeHostnameAnnotation), plan.Hostname.ValueString())
}

func exposureLeftoverWarning(diags *diag.Diagnostics, g *qovery.AnnotationsGroup, appID string) {
	diags.AddWarning("Existing Annotations Group Taken Over",
		fmt.Sprintf("The annotations group %q (%s) already exposes this hostname, with the name this exposure gives its group. "+
			"It is taken as this exposure's own earlier group (an exposure being replaced after a failed creation) and is not "+
			"reported as a conflict. If it belongs to something else, import it instead:\n\n  terraform import <address> %s/%s",
			g.Name, g.ID, appID, g.ID))
}

// exposureAnnotationValue returns the value of one annotation.
func exposureAnnotationValue(list []qovery.Annotation, key string) string {
	for _, a := range list {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// checkHostname refuses a hostname that another exposure of the
// organization, or another device of the tailnet, already uses.
func (r *exposedServiceResource) checkHostname(ctx context.Context, plan *exposedServiceModel, appID, ownGroup string, state *exposedServiceModel,
	ops *exposureOperatorLookup, leftovers map[string]bool, creating bool, diags *diag.Diagnostics) {
	hostname := plan.Hostname.ValueString()
	q := r.data.qovery
	reg := r.data.exposures
	orgID := ops.env.Organization.ID
	groups, err := q.ListAnnotationsGroups(ctx, orgID)
	if err != nil {
		diags.AddWarning("Hostname Not Checked", "qtail could not list the annotations groups of organization "+orgID+": "+err.Error()+
			". Make sure that no other exposure uses the hostname "+hostname+".")
	}
	for _, g := range groups {
		if g.ID == ownGroup || reg.isReleased(g.ID) || exposureAnnotationValue(g.Annotations, exposeAnnotation) != "true" ||
			!strings.EqualFold(exposureAnnotationValue(g.Annotations, exposeHostnameAnnotation), hostname) || leftovers[g.ID] {
			continue
		}
		if creating && exposureLeftover(&g, plan) && g.AssociatedItemsCount != nil && *g.AssociatedItemsCount == 0 {
			exposureLeftoverWarning(diags, &g, appID)
			continue
		}
		diags.AddAttributeError(path.Root("hostname"), "Hostname Already Used by Another Exposure",
			fmt.Sprintf("The annotations group %q (%s) of the organization already exposes a Service at the hostname %q. "+
				"A hostname names one device on the tailnet: choose another one, or, if that group is this application's exposure, "+
				"import it with\n\n  terraform import <address> %s/%s", g.Name, g.ID, hostname, appID, g.ID))
		return
	}

	t := r.data.tailnet
	if t == nil {
		return
	}
	dev, err := t.FindDeviceByHostname(ctx, hostname)
	if err != nil {
		diags.AddWarning("Hostname Not Checked", "qtail could not look up the tailnet's devices: "+err.Error()+
			". Make sure that no other device of the tailnet is named "+hostname+".")
		return
	}
	if dev == nil || deviceID(dev) == state.DeviceID.ValueString() || reg.isReleased(deviceID(dev)) {
		return
	}
	// A device that this application's operator could have created (each
	// of its tags owned by an operator tag) is taken as the application's
	// own proxy, left over from an exposure whose group was deleted
	// without a redeployment: exposing the application again reuses it.
	if len(dev.Tags) > 0 && r.operatorCouldOwn(ctx, ops, dev.Tags) {
		return
	}
	owner := "tagged " + strings.Join(dev.Tags, ", ")
	if len(dev.Tags) == 0 {
		owner = "owned by " + dev.User
	}
	diags.AddAttributeError(path.Root("hostname"), "Hostname Already Used on the Tailnet",
		fmt.Sprintf("The tailnet already has a device named %q (%s, %s). The proxy would get a suffixed MagicDNS name "+
			"(%s-1) and the exposure could not be found by its name: choose another hostname, or rename or remove that device.",
			hostname, deviceID(dev), owner, hostname))
}

// operatorCouldOwn reports whether every tag is one of the operator's tags
// or owned by one of them in the policy.
func (r *exposedServiceResource) operatorCouldOwn(ctx context.Context, ops *exposureOperatorLookup, tags []string) bool {
	op, _ := ops.get(ctx)
	body, d := r.data.plannedPolicy(ctx)
	if d.HasError() {
		return false
	}
	doc, err := policy.Parse(body)
	if err != nil {
		return false
	}
	for _, tag := range tags {
		if ok, _, _ := tagOwnedBy(doc, tag, op.tags); !ok {
			return false
		}
	}
	return true
}

// checkTags refuses a tag that the operator's tags do not own in the
// policy as it will be after this plan.
func (r *exposedServiceResource) checkTags(ctx context.Context, plan *exposedServiceModel, ops *exposureOperatorLookup, diags *diag.Diagnostics) {
	tags, known, d := plan.planTags(ctx)
	diags.Append(d...)
	if !known {
		return
	}
	r.data.checkOperatorOwnsTags(ctx, ops, tags, path.Root("tags"), "the proxy's auth key", "no proxy device would appear", "this exposure", diags)
}

// checkOperatorOwnsTags refuses each tag that the operator's tags do not own
// in the policy as it will be after this plan: the operator mints auth keys
// with its own OAuth client, which can only apply tags its tag owns. key
// names the keys it mints ("the proxy's auth key"), outcome what would
// happen, and subject the resource being planned ("this exposure").
func (d *providerData) checkOperatorOwnsTags(ctx context.Context, ops *exposureOperatorLookup, tags []string, at path.Path,
	key, outcome, subject string, diags *diag.Diagnostics) {
	if len(tags) == 0 || d.tailnet == nil {
		return
	}
	env := ops.env
	op, err := ops.get(ctx)
	if err != nil {
		diags.AddWarning("Operator Lookup Failed", "qtail could not look for the Tailscale operator of cluster "+env.ClusterID+
			", and checks the tags against the default operator tag "+chartDefaultOperatorTag+": "+err.Error())
	}
	body, pd := d.plannedPolicy(ctx)
	if pd.HasError() {
		for _, e := range pd.Errors() {
			diags.AddWarning("Tags Not Checked", "qtail could not check that the operator owns the tags: "+e.Summary()+". "+e.Detail())
		}
		return
	}
	doc, err := policy.Parse(body)
	if err != nil {
		diags.AddWarning("Tags Not Checked", "qtail could not parse the tailnet policy: "+err.Error())
		return
	}
	for _, tag := range tags {
		owned, declared, owners := tagOwnedBy(doc, tag, op.tags)
		if owned {
			continue
		}
		opTags := strings.Join(op.tags, ", ")
		problem := fmt.Sprintf("%s is not declared in tagOwners, so the operator's tag %s does not own it", tag, opTags)
		if declared {
			problem = fmt.Sprintf("%s is owned by [%s] in tagOwners, not by the operator's tag %s", tag, strings.Join(owners, ", "), opTags)
		}
		diags.AddAttributeError(at, "Tag Not Owned by the Operator",
			fmt.Sprintf("%s (%s). The operator mints %s with its own credentials, so it can only apply "+
				"tags that its tag owns: %s.\n\n"+
				"Declare the tag with a qtail_tag_owner, and reference it from tags so that it is planned before %s:\n\n"+
				"  resource \"qtail_tag_owner\" %q {\n    tag    = %q\n    owners = [%q]\n  }\n\n"+
				"  tags = [qtail_tag_owner.%s.tag]",
				problem, op.describe(env), key, outcome, subject, tagOwnerResourceName(tag), tag, op.tags[0],
				tagOwnerResourceName(tag)))
	}
}

// exposureOperator is the Tailscale operator of a cluster as qtail finds it.
type exposureOperator struct {
	// helmID and name are empty when no operator was found.
	helmID, name string
	tags         []string
	// proxyTags are the tags of the proxies it creates by default.
	proxyTags []string
}

func (o exposureOperator) describe(env *qovery.Environment) string {
	if o.helmID == "" {
		return fmt.Sprintf("no operator Helm service found on cluster %s yet, so the default tag is assumed", env.ClusterID)
	}
	return fmt.Sprintf("the operator Helm service %s (%s) on cluster %s", o.name, o.helmID, env.ClusterID)
}

// exposureFindOperator finds the Tailscale operator that runs on the cluster
// of env: the Helm service of the tailscale-operator chart in one of the
// organization's environments on that cluster, and its tags as its values
// file sets them. When there is none (yet: it may be created by the same
// apply), the chart's default tag:k8s-operator is returned.
func exposureFindOperator(ctx context.Context, q *qovery.Client, env *qovery.Environment) (exposureOperator, error) {
	helms, err := clusterHelms(ctx, q, env)
	return operatorAmong(helms), err
}

// operatorAmong returns the Tailscale operator among the Helm services of a
// cluster, or the chart's defaults when there is none.
func operatorAmong(helms []qovery.Helm) exposureOperator {
	op := exposureOperator{tags: []string{chartDefaultOperatorTag}, proxyTags: []string{chartDefaultProxyTag}}
	for _, h := range helms {
		if h.Source.Repository == nil || h.Source.Repository.ChartName != operatorChart {
			continue
		}
		op.helmID, op.name = h.ID, h.Name
		if vals, ok := exposureOperatorValues(&h); ok {
			if len(vals.DefaultTags) > 0 {
				op.tags = vals.DefaultTags
			}
			if len(vals.ProxyDefaultTags) > 0 {
				op.proxyTags = vals.ProxyDefaultTags
			}
		}
		return op
	}
	return op
}

// clusterHelms lists the Helm services of every environment of the
// organization that runs on the cluster of env.
func clusterHelms(ctx context.Context, q *qovery.Client, env *qovery.Environment) ([]qovery.Helm, error) {
	projects, err := q.ListProjects(ctx, env.Organization.ID)
	if err != nil {
		return nil, err
	}
	var out []qovery.Helm
	for _, p := range projects {
		envs, err := q.ListEnvironments(ctx, p.ID)
		if err != nil {
			return out, err
		}
		for _, e := range envs {
			if e.ClusterID != env.ClusterID {
				continue
			}
			helms, err := q.ListHelms(ctx, e.ID)
			if err != nil {
				return out, err
			}
			out = append(out, helms...)
		}
	}
	return out, nil
}

// exposureOperatorValues reads qtail's values back from an operator Helm
// service's raw values file.
func exposureOperatorValues(h *qovery.Helm) (manifest.OperatorValues, bool) {
	f := h.ValuesOverride.File
	if f == nil || f.Raw == nil {
		return manifest.OperatorValues{}, false
	}
	for _, v := range f.Raw.Values {
		if vals, _, err := manifest.ReadOperatorValues(v.Content); err == nil {
			return vals, true
		}
	}
	return manifest.OperatorValues{}, false
}
