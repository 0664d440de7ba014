package manifestservice

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/planned"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// serviceBase gives the manifest resources the provider's clients, and the
// plan-time checks and the waits that they share.
type serviceBase struct {
	conn.ResourceBase
}

// world is what the plan of this provider instance has planned so far.
func (b *serviceBase) world() *planned.World { return b.Clients.Planned() }

// planChecks runs the Qovery checks of a planned manifest service: the
// environment exists, the Helm service name is free, the chart version is
// published, and a new one has an operator on its cluster. It returns the
// lookup of the cluster's operator (nil when the environment is unknown or
// missing).
func (b *serviceBase) planChecks(ctx context.Context, k manifestKind, m *manifestServiceModel, name types.String, diags *diag.Diagnostics) *cluster.Lookup {
	q := b.Clients.QoveryOrNil()
	if q == nil || m.EnvironmentID.IsUnknown() {
		return nil
	}
	envID := m.EnvironmentID.ValueString()
	env, err := q.GetEnvironment(ctx, envID)
	if qovery.IsNotFound(err) {
		diags.AddAttributeError(path.Root("environment_id"), "Environment Not Found",
			fmt.Sprintf("Qovery has no environment %s that the provider's token can read. Check environment_id.", envID))
		return nil
	}
	if err != nil {
		diags.AddWarning("Environment Not Checked", fmt.Sprintf("qtail could not read the environment %s: %v. The apply reports any problem.", envID, err))
		return nil
	}
	c, known, dd := m.chart(ctx)
	diags.Append(dd...)
	if known && c.HelmRepository != nil {
		h := c.HelmRepository
		at := path.Root("chart").AtName("helm_repository")
		cluster.CheckChartPublished(ctx, q, cluster.ChartCheck{OrgID: env.Organization.ID, RepoID: h.RepositoryID.ValueString(),
			Chart: h.ChartName.ValueString(), Version: h.ChartVersion.ValueString(),
			RepoAt: at.AtName("repository_id"), ChartAt: at.AtName("chart_name"), VersionAt: at.AtName("chart_version")}, diags)
	}
	ops := cluster.NewLookup(q, env).UsePlan(b.world())
	if !m.ID.IsUnknown() {
		// An update: the name and the cluster cannot change in place; a
		// new operator_id is checked.
		if !m.OperatorID.IsNull() {
			ops.Check(ctx, cluster.OperatorRef{ID: m.OperatorID, World: b.world()}, diags)
		}
		return ops
	}
	// One listing of the cluster's Helm services serves every check of a
	// new service.
	b.checkOperatorRuns(ctx, k, m, ops, diags)
	if !name.IsUnknown() {
		b.checkServiceNameFree(ctx, k, name.ValueString(), m, ops, diags)
		if k.clusterScoped {
			b.checkObjectNameFree(ctx, k, name.ValueString(), ops, diags)
		}
	}
	return ops
}

// checkServiceNameFree refuses a new manifest service whose Helm service
// name another Helm service of the environment has: Qovery requires unique
// names. A tainted predecessor of m is no conflict (replaces).
func (b *serviceBase) checkServiceNameFree(ctx context.Context, k manifestKind, name string, m *manifestServiceModel,
	ops *cluster.Lookup, diags *diag.Diagnostics) {
	helms, err := ops.Helms(ctx)
	if err != nil {
		tflog.Debug(ctx, "listing the cluster's Helm services failed; the name is not checked", map[string]any{"error": err.Error()})
		return
	}
	want := k.serviceName(name)
	for _, h := range helms {
		if h.Environment.ID != ops.Env.ID || h.Name != want || b.world().Released(h.ID) || b.replaces(&h, m) {
			continue
		}
		diags.AddAttributeError(path.Root("name"), "Helm Service Name Taken",
			fmt.Sprintf("The environment %s already has a Helm service named %s (%s), and Qovery requires unique names. "+
				"Choose another name, or import that service with %s", ops.Env.ID, want, h.ID, tfx.ImportHint(k.resourceType, h.ID)))
		return
	}
}

// checkObjectNameFree refuses a new cluster-scoped object whose name another
// Helm service of the cluster, or another resource of the plan, already
// renders: Helm would refuse to take over an object of another release.
func (b *serviceBase) checkObjectNameFree(ctx context.Context, k manifestKind, name string, ops *cluster.Lookup, diags *diag.Diagnostics) {
	object := planned.ObjectName(k.object, name, ops.Env.ClusterID)
	if other, conflict := b.world().ClaimObject(object, "environment "+ops.Env.ID); conflict {
		diags.AddAttributeError(path.Root("name"), tfx.TitleCase(k.noun)+" Planned Twice",
			fmt.Sprintf("Another resource of this configuration (in %s) plans the %s; the objects of a cluster-scoped kind share "+
				"one name space per cluster. Give each its own name.", other, object))
		return
	}
	helms, err := ops.Helms(ctx)
	if err != nil {
		tflog.Debug(ctx, "listing the cluster's Helm services failed; the name is not checked", map[string]any{"error": err.Error()})
		return
	}
	for _, h := range helms {
		if b.world().Released(h.ID) {
			continue
		}
		file, ok := cluster.ManifestsFile(&h)
		if !ok || !slices.Contains(manifest.Names(file, k.object), name) {
			continue
		}
		diags.AddAttributeError(path.Root("name"), tfx.TitleCase(k.noun)+" Name Taken on the Cluster",
			fmt.Sprintf("The Helm service %q (%s) already deploys the %s %s on cluster %s; a cluster has one %s of a name, and Helm "+
				"refuses to take over another release's object. Choose another name, or import that Helm service with %s",
				h.Name, h.ID, k.object, name, ops.Env.ClusterID, k.object, tfx.ImportHint(k.resourceType, h.ID)))
		return
	}
}

// checkOperatorRuns checks that an operator runs the new manifest
// service m: the one operator_id names, one found on the cluster, or one
// that this plan installs there. Without operator_id Terraform may plan
// the operator of the configuration after it, so a missing one is a
// warning: the apply waits for an operator on the cluster and fails,
// before it creates anything, if none comes (noOperatorDetail).
func (b *serviceBase) checkOperatorRuns(ctx context.Context, k manifestKind, m *manifestServiceModel, ops *cluster.Lookup, diags *diag.Diagnostics) {
	poll := b.Clients.PollInterval()
	p := ops.Check(ctx, cluster.OperatorRef{ID: m.OperatorID, World: b.world(), Poll: poll, Grace: cluster.Grace(poll)}, diags)
	if p != cluster.OperatorDeferred {
		return
	}
	then := "The apply waits for an operator on the cluster and fails, before it changes anything, if none comes."
	if !k.clusterScoped {
		then = "The " + k.noun + " deploys, but nothing turns it into an egress proxy until an operator runs."
	}
	diags.AddAttributeWarning(path.Root("environment_id"), "No Tailscale Operator on the Cluster Yet",
		fmt.Sprintf("qtail found no Helm service of the %s chart on cluster %s, and no qtail_operator planned there so far. "+
			"Terraform may plan the operator of this configuration after this %s, as nothing orders them: set operator_id = "+
			"qtail_operator.NAME.id so that Terraform plans, creates and destroys them in order, and this check runs here. %s",
			cluster.OperatorChart, ops.Env.ClusterID, k.noun, then))
}

// noOperatorDetail says why a manifest service cannot be created on a
// cluster where no operator came.
func noOperatorDetail(k manifestKind, clusterID string) string {
	detail := fmt.Sprintf("qtail found no Helm service of the %s chart on cluster %s, and no qtail_operator of this "+
		"configuration is planned there. ", cluster.OperatorChart, clusterID)
	why := "The " + k.object + " CRD comes with the operator, so the deployment would fail (no matches for kind " + k.object + "). "
	return detail + why + "Install the operator with a qtail_operator, and set operator_id = qtail_operator.NAME.id so that " +
		"Terraform creates it first."
}

// release records that the plan replaces the manifest service m and its
// devices. Terraform plans a replacement again as a creation, with no prior
// state: the new service may then take the Helm service name (planChecks)
// and the devices' hostnames of the one it replaces.
func (b *serviceBase) release(ctx context.Context, m *manifestServiceModel, devices types.List) {
	_, ids := stateDevices(ctx, devices)
	b.world().Release(append(ids, m.ID.ValueString())...)
}

// replaces reports whether the planned creation m replaces the existing
// Helm service h: a resource of this configuration refreshed h, and h holds
// the very values file that m plans. The service and its devices are then
// released: they are no conflict for the new one.
func (b *serviceBase) replaces(h *qovery.Helm, m *manifestServiceModel) bool {
	devices, seen := b.world().Refreshed(h.ID)
	if !seen || m.Values.IsUnknown() {
		return false
	}
	if file, ok := cluster.ManifestsFile(h); !ok || !cluster.YAMLEqual(file, m.Values.ValueString()) {
		return false
	}
	b.world().Release(append(devices, h.ID)...)
	return true
}

// devicesCheck is the plan-time check of the devices that a Connector or a
// ProxyGroup brings up.
type devicesCheck struct {
	kind manifestKind
	// name is the name of the object.
	name string
	// ops looks up the operator of the cluster; nil when the environment
	// is not known.
	ops  *cluster.Lookup
	want deviceWant
	// state is the `devices` attribute of the state (null when creating).
	state    types.List
	creating bool
	// at is the attribute that makes the hostnames.
	at path.Path
}

// checkDevices refuses, at plan, device hostnames that another resource of
// the plan claims or that other devices of the tailnet use, tags that the
// operator's OAuth client cannot apply, and a ProxyClass that keeps the
// operator from bringing the devices up.
func (b *serviceBase) checkDevices(ctx context.Context, c devicesCheck, diags *diag.Diagnostics) {
	k := c.kind
	owner := k.noun + " " + c.name
	if c.ops != nil {
		owner += " on cluster " + c.ops.Env.ClusterID
	}
	for _, h := range c.want.hostnames {
		if other, conflict := b.world().ClaimHostname(h, owner); conflict {
			diags.AddAttributeError(c.at, "Hostname Planned Twice",
				fmt.Sprintf("Another resource of this configuration (%s) plans a device named %q. A hostname names one device on "+
					"the tailnet: %s.", other, h, k.renameHint))
			return
		}
	}
	tn := b.Clients.TailnetOrNil()
	if tn == nil {
		return
	}
	taken, err := b.hostnamesTaken(ctx, tn, c)
	if err != nil {
		diags.AddWarning("Hostnames Not Checked", "qtail could not list the tailnet's devices: "+err.Error()+". The apply reports any problem.")
	} else if len(taken) > 0 {
		diags.AddAttributeError(c.at, "Hostname Taken on the Tailnet",
			fmt.Sprintf("Devices that are not %s already use its hostnames: %s. Its devices would get other MagicDNS names. "+
				"Remove those devices from the tailnet, or %s.", owner, strings.Join(taken, ", "), k.renameHint))
	}
	if c.ops == nil {
		return
	}
	if c.creating {
		cluster.CheckOperatorOwnsTags(ctx, b.Clients, c.ops, cluster.TagsCheck{
			Tags: c.want.tags, At: path.Root("tags"), Device: k.noun, Resource: k.noun, Replicas: true,
		}, diags)
	}
	cluster.CheckProxyClass(ctx, b.Clients, c.ops, cluster.ProxyClassCheck{Name: c.want.proxyClass, OperatorDefault: k.operatorDefaultClass,
		At: path.Root("proxy_class"), Object: "the " + k.object + " " + c.name}, diags)
}

// hostnamesTaken describes the devices of the tailnet that use one of the
// wanted hostnames and are not the manifest service's own: they would make
// the operator's devices get other MagicDNS names. Its own devices are the
// devices of its state (when not creating), those of a service that this
// plan replaces (released in the planned world: the replacement is planned
// as a creation), and, for an existing service, the devices that are as
// wanted: a replica that an edit of the values in the console left out of
// the refreshed state is still the service's.
func (b *serviceBase) hostnamesTaken(ctx context.Context, tn *tailnet.Client, c devicesCheck) ([]string, error) {
	list, err := tn.ListDevices(ctx, tailnet.ListDevicesOptions{AllFields: true})
	if err != nil {
		return nil, err
	}
	var own []string
	if !c.creating {
		_, own = stateDevices(ctx, c.state)
	}
	asWanted := !c.creating || b.replacesService(ctx, c)
	isOwn := func(dev *tailnet.Device) bool {
		for _, id := range []string{dev.ID, dev.NodeID} {
			if id != "" && (slices.Contains(own, id) || b.world().Released(id)) {
				return true
			}
		}
		return asWanted && c.want.matches(dev)
	}
	var taken []string
	for i := range list {
		dev := &list[i]
		if slices.Contains(c.want.hostnames, dev.Hostname) && !isOwn(dev) {
			taken = append(taken, fmt.Sprintf("%s (%s)", dev.Hostname, cluster.DeviceID(dev)))
		}
	}
	return taken, nil
}

// replacesService reports whether the planned creation of c replaces a
// Helm service of the same name that this plan releases (a tainted
// predecessor). Its devices as wanted are then the predecessor's, even
// those that joined the tailnet after the refresh read it (a creation that
// timed out while the operator was still bringing them up).
func (b *serviceBase) replacesService(ctx context.Context, c devicesCheck) bool {
	if c.ops == nil {
		return false
	}
	helms, err := c.ops.Helms(ctx)
	if err != nil {
		return false
	}
	name := c.kind.serviceName(c.name)
	for _, h := range helms {
		if h.Environment.ID == c.ops.Env.ID && h.Name == name && b.world().Released(h.ID) {
			return true
		}
	}
	return false
}

// checkReplicaHostnames refuses a hostname prefix whose last replica,
// PREFIX-(N-1), would not fit in a DNS label. replicas null stands for
// defaultReplicas; at is the attribute that gives the prefix: hostname_prefix,
// or name when the prefix defaults to it.
func checkReplicaHostnames(prefix types.String, replicas types.Int64, defaultReplicas int64, at path.Path, diags *diag.Diagnostics) {
	if prefix.IsNull() || prefix.IsUnknown() || replicas.IsUnknown() {
		return
	}
	n := defaultReplicas
	if !replicas.IsNull() {
		n = replicas.ValueInt64()
	}
	fix := "Shorten hostname_prefix."
	if at.Equal(path.Root("name")) {
		fix = "Shorten name, or set a shorter hostname_prefix."
	}
	if last := fmt.Sprintf("%s-%d", prefix.ValueString(), max(n-1, 0)); len(last) > 63 {
		diags.AddAttributeError(at, "Hostname Prefix Too Long",
			fmt.Sprintf("The last replica's hostname would be %q, longer than the 63 characters of a DNS label. %s", last, fix))
	}
}

// resolveTags gives an object read back without tags (m.untagged) the
// tags its devices get: the proxy tags (PROXY_TAGS) of the operator of the
// cluster of envID, or the chart's default when there is none. The CRDs of
// Connector and ProxyGroup give tags no default.
func (b *serviceBase) resolveTags(ctx context.Context, m *proxyReplicas, envID, helmID string, diags *diag.Diagnostics) {
	if !m.untagged {
		return
	}
	var proxyTags []string
	if q := b.Clients.QoveryOrNil(); q != nil {
		if env, err := q.GetEnvironment(ctx, envID); err == nil {
			if op, err := cluster.FindOperator(ctx, q, env); err == nil {
				proxyTags = op.ProxyTags
			}
		}
	}
	m.Tags = keepReplacing(diags, helmID, "tags", m.priorTags, tfx.StringList(manifest.ProxyDeviceTags(nil, proxyTags)))
	m.untagged = false
}

// planShared plans the shared computed attributes at their desired values:
// values is the file qtail would write ("" when not known yet).
func (m *manifestServiceModel) planShared(k manifestKind, name types.String, values string) {
	if values != "" {
		m.Values = types.StringValue(values)
	} else {
		m.Values = types.StringUnknown()
	}
	if name.IsUnknown() {
		m.HelmServiceName = types.StringUnknown()
	} else {
		m.HelmServiceName = types.StringValue(k.serviceName(name.ValueString()))
	}
	m.ClusterWideResourcesAllowed = types.BoolValue(k.clusterScoped)
	m.Deployed = types.BoolValue(true)
}

// withRoutesApproved returns the `devices` attribute as approveRoutes
// leaves it: on each device, every route of routes that it advertises is
// approved, with the routes approved already, sorted by address as the
// API reports them. ok is false when l cannot be read.
func withRoutesApproved(ctx context.Context, l types.List, routes []string) (types.List, bool) {
	if l.IsNull() || l.IsUnknown() {
		return l, false
	}
	var devs []deviceModel
	if d := l.ElementsAs(ctx, &devs, false); d.HasError() {
		return l, false
	}
	for i := range devs {
		var advertised, approved []string
		if devs[i].AdvertisedRoutes.ElementsAs(ctx, &advertised, false).HasError() ||
			devs[i].ApprovedRoutes.ElementsAs(ctx, &approved, false).HasError() {
			return l, false
		}
		for _, r := range routes {
			if slices.Contains(advertised, r) && !slices.Contains(approved, r) {
				approved = append(approved, r)
			}
		}
		devs[i].ApprovedRoutes = tfx.StringList(tailnet.SortRoutes(approved))
	}
	out, d := types.ListValueFrom(ctx, manifestDeviceType, devs)
	return out, !d.HasError()
}

// planDevices plans the `devices` attribute: unknown when the apply changes
// them (changing), or when a device is gone and the redeployment brings it
// back (waiting for devices); otherwise as in the state.
func planDevices(ctx context.Context, changing, wait bool, state types.List, hostnames []string) types.List {
	if changing || (wait && !devicesComplete(ctx, state, hostnames)) {
		return types.ListUnknown(manifestDeviceType)
	}
	return state
}
