package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// A manifest service is a Qovery Helm service whose chart (tailnet-manifests
// or one like it) applies the Kubernetes objects listed under `manifests` in
// its values. qtail_connector, qtail_proxy_group and qtail_egress_service
// are manifest services: each renders one object into the raw values file
// manifest.ManifestsFileName, deploys the service and waits.

// manifestChartName is the default chart: the one shipped in
// examples/charts/tailnet-manifests.
const manifestChartName = "tailnet-manifests"

// manifestHelmArguments make Helm roll back a failed upgrade, so that a
// failed deployment leaves the previous objects in place.
var manifestHelmArguments = []string{"--atomic"}

// manifestServiceModel holds the attributes every manifest service has.
// Resource models embed it.
type manifestServiceModel struct {
	ID                          types.String   `tfsdk:"id"`
	EnvironmentID               types.String   `tfsdk:"environment_id"`
	Chart                       types.Object   `tfsdk:"chart"`
	HelmServiceName             types.String   `tfsdk:"helm_service_name"`
	Values                      types.String   `tfsdk:"values"`
	ClusterWideResourcesAllowed types.Bool     `tfsdk:"cluster_wide_resources_allowed"`
	Deployed                    types.Bool     `tfsdk:"deployed"`
	Timeouts                    timeouts.Value `tfsdk:"timeouts"`
}

// manifestChart is where the chart comes from: exactly one of the two.
type manifestChart struct {
	HelmRepository *manifestHelmChart `tfsdk:"helm_repository"`
	GitRepository  *manifestGitChart  `tfsdk:"git_repository"`
}

type manifestHelmChart struct {
	RepositoryID types.String `tfsdk:"repository_id"`
	ChartName    types.String `tfsdk:"chart_name"`
	ChartVersion types.String `tfsdk:"chart_version"`
}

type manifestGitChart struct {
	URL        types.String `tfsdk:"url"`
	Branch     types.String `tfsdk:"branch"`
	RootPath   types.String `tfsdk:"root_path"`
	GitTokenID types.String `tfsdk:"git_token_id"`
}

var (
	manifestHelmChartType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"repository_id": types.StringType, "chart_name": types.StringType, "chart_version": types.StringType,
	}}
	manifestGitChartType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"url": types.StringType, "branch": types.StringType, "root_path": types.StringType, "git_token_id": types.StringType,
	}}
	manifestChartType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"helm_repository": manifestHelmChartType, "git_repository": manifestGitChartType,
	}}
)

// manifestKind describes one kind of manifest service for schemas and
// messages.
type manifestKind struct {
	// noun names the object in messages: "connector".
	noun string
	// object is the Kubernetes kind: "Connector".
	object string
	// clusterScoped objects need cluster-wide resources allowed.
	clusterScoped bool
	// servicePrefix starts the name of the Helm service.
	servicePrefix string
}

var (
	connectorKind  = manifestKind{noun: "connector", object: manifest.KindConnector, clusterScoped: true, servicePrefix: "tailscale-connector-"}
	proxyGroupKind = manifestKind{noun: "ProxyGroup", object: manifest.KindProxyGroup, clusterScoped: true, servicePrefix: "tailscale-proxygroup-"}
	egressKind     = manifestKind{noun: "egress Service", object: manifest.KindService, clusterScoped: false, servicePrefix: "tailscale-egress-"}
)

// serviceName is the name of the Helm service of the object name.
func (k manifestKind) serviceName(name string) string { return k.servicePrefix + name }

// manifestAttributes returns the schema attributes shared by every manifest
// service. waits says what the resource waits for after a deployment.
func manifestAttributes(ctx context.Context, k manifestKind, waits string) map[string]schema.Attribute {
	clusterWide := "Always planned `false`: the " + k.object + " is namespaced, so the Helm service needs no cluster-wide permission."
	if k.clusterScoped {
		clusterWide = "Always planned `true`: a " + k.object + " is cluster-scoped, and Qovery refuses to deploy cluster-scoped " +
			"objects otherwise. Turned off in the console, it shows as a change and is turned back on with a redeployment."
	}
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "ID of the Qovery Helm service that deploys the " + k.object + "; the import ID.",
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"environment_id": schema.StringAttribute{
			Required: true,
			MarkdownDescription: "ID of the Qovery environment of the Helm service, on the cluster whose Tailscale operator runs the " +
				k.object + ": usually the operator's own environment. Changing it replaces the " + k.noun + ".",
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			Validators:    []validator.String{uuidValidator()},
		},
		"chart": schema.SingleNestedAttribute{
			Required: true,
			MarkdownDescription: "Where the Helm service takes the chart that applies the manifests from: exactly one of " +
				"`helm_repository` and `git_repository`. The chart must apply each entry of `manifests` in its values as one " +
				"Kubernetes object, as `examples/charts/" + manifestChartName + "` in qtail's repository does.",
			Validators: []validator.Object{objectvalidator.AtLeastOneOf(
				path.MatchRelative().AtName("helm_repository"), path.MatchRelative().AtName("git_repository"))},
			Attributes: map[string]schema.Attribute{
				"helm_repository": schema.SingleNestedAttribute{
					Optional:            true,
					MarkdownDescription: "The chart from an organization Helm repository. Conflicts with `git_repository`.",
					Validators: []validator.Object{objectvalidator.ConflictsWith(
						path.MatchRelative().AtParent().AtName("git_repository"))},
					Attributes: map[string]schema.Attribute{
						"repository_id": schema.StringAttribute{
							Required:            true,
							MarkdownDescription: "ID of the organization Helm repository, such as `qtail_helm_repository.manifests.id`.",
							Validators:          []validator.String{uuidValidator()},
						},
						"chart_name": schema.StringAttribute{
							Optional:            true,
							Computed:            true,
							Default:             stringdefault.StaticString(manifestChartName),
							MarkdownDescription: "Name of the chart in the repository. Default `" + manifestChartName + "`.",
							Validators:          []validator.String{nonBlankValidator()},
						},
						"chart_version": schema.StringAttribute{
							Required: true,
							MarkdownDescription: "Exact version of the chart, such as `0.1.0`. When the repository lists its charts, " +
								"the plan checks that it publishes this version.",
							Validators: []validator.String{chartVersionValidator()},
						},
					},
				},
				"git_repository": schema.SingleNestedAttribute{
					Optional:            true,
					MarkdownDescription: "The chart from a Git repository that Qovery can read. Conflicts with `helm_repository`.",
					Attributes: map[string]schema.Attribute{
						"url": schema.StringAttribute{
							Required:            true,
							MarkdownDescription: "HTTPS URL of the Git repository, such as `https://github.com/acme/platform.git`.",
							Validators:          []validator.String{httpsURLValidator()},
						},
						"branch": schema.StringAttribute{
							Optional: true,
							Computed: true,
							MarkdownDescription: "Branch to deploy. When unset, Qovery uses the repository's default branch and " +
								"qtail records the one Qovery reports.",
							Validators:    []validator.String{nonBlankValidator()},
							PlanModifiers: []planmodifier.String{defaultBranchFromState{}},
						},
						"root_path": schema.StringAttribute{
							Optional:            true,
							Computed:            true,
							Default:             stringdefault.StaticString("/"),
							MarkdownDescription: "Folder of the chart in the repository, starting with `/`, such as `/charts/" + manifestChartName + "`. Default `/`.",
							Validators:          []validator.String{rootPathValidator()},
						},
						"git_token_id": schema.StringAttribute{
							Optional:            true,
							MarkdownDescription: "ID of the Qovery Git token that reads a private repository.",
							Validators:          []validator.String{uuidValidator()},
						},
					},
				},
			},
		},
		"helm_service_name": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "Name of the Helm service in the Qovery environment: `" + k.servicePrefix + "` followed by `name`. " +
				"It must be free in the environment; the plan checks it.",
		},
		"values": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "The raw values file `" + manifest.ManifestsFileName + "` that qtail writes into the Helm service: " +
				"the list `manifests` with the " + k.object + ". The plan shows the file qtail will write; a refresh reports the " +
				"file Qovery holds, so an edit in the console shows as a change back to this file.",
		},
		"cluster_wide_resources_allowed": schema.BoolAttribute{
			Computed:            true,
			MarkdownDescription: "Whether the Helm service may deploy cluster-wide resources. " + clusterWide,
		},
		"deployed": schema.BoolAttribute{
			Computed: true,
			MarkdownDescription: "Whether the cluster runs the Helm service's configuration: its last deployment succeeded and " +
				"nothing changed since (Qovery's state `DEPLOYED`, deployment status `UP_TO_DATE`). Always planned `true`: after a " +
				"failed deployment, or a change made in the console and not deployed, it shows as a change and qtail deploys again.",
		},
		"timeouts": timeoutsAttribute(ctx,
			"Time to create the Helm service, deploy it and "+waits+".",
			"Time to update the Helm service, redeploy it and "+waits+".",
			"Time to delete the Helm service and wait until it is gone."),
	}
}

// keepReplacing returns prior, the state's value of an attribute that
// forces a replacement, when the values file read back from Qovery (read)
// says otherwise: that is an edit in the console, which writing the values
// file back undoes, not a new configuration worth a replacement. A null
// prior (an import) takes read.
func keepReplacing[V attr.Value](diags *diag.Diagnostics, helmID, name string, prior, read V) V {
	if prior.IsNull() || prior.IsUnknown() || prior.Equal(read) {
		return read
	}
	diags.AddWarning("Values Edited Outside qtail",
		fmt.Sprintf("The values file of the Helm service %s sets %s to %s, not %s. Changing %s replaces the resource, so qtail "+
			"plans to write the values file back instead. To change it, change %s in the configuration.",
			helmID, name, read, prior, name, name))
	return prior
}

// allKnown reports whether every value is known, the elements of lists
// included (a list may be known while an element comes from another
// resource).
func allKnown(values ...attr.Value) bool {
	for _, v := range values {
		if v.IsUnknown() {
			return false
		}
		if l, ok := v.(types.List); ok && !allKnown(l.Elements()...) {
			return false
		}
	}
	return true
}

// defaultBranchFromState plans an unset branch as the default branch that
// Qovery reported for the same repository, and as unknown when the URL
// changes (another repository may have another default branch).
type defaultBranchFromState struct{}

func (defaultBranchFromState) Description(context.Context) string {
	return "The repository's default branch, as Qovery reported it, while the URL stays the same."
}

func (m defaultBranchFromState) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}

func (defaultBranchFromState) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !req.ConfigValue.IsNull() || req.StateValue.IsNull() || !req.PlanValue.IsUnknown() {
		return
	}
	urlPath := req.Path.ParentPath().AtName("url")
	var planURL, stateURL types.String
	if req.Plan.GetAttribute(ctx, urlPath, &planURL).HasError() || req.State.GetAttribute(ctx, urlPath, &stateURL).HasError() {
		return
	}
	if planURL.Equal(stateURL) {
		resp.PlanValue = req.StateValue
	}
}

// rootPathValidator accepts a folder of a Git repository: it starts with "/".
func rootPathValidator() validator.String {
	return stringCheck{description: "a path starting with /", check: func(s string) error {
		if !strings.HasPrefix(s, "/") {
			return fmt.Errorf("the path does not start with /; give the chart's folder from the repository's root, such as /charts/%s", manifestChartName)
		}
		return nil
	}}
}

// chart returns the chart source of m, known false when it is not known yet.
func (m *manifestServiceModel) chart(ctx context.Context) (manifestChart, bool, diag.Diagnostics) {
	var c manifestChart
	if m.Chart.IsNull() || m.Chart.IsUnknown() {
		return c, false, nil
	}
	diags := m.Chart.As(ctx, &c, basetypes.ObjectAsOptions{UnhandledUnknownAsEmpty: true})
	if diags.HasError() {
		return c, false, diags
	}
	known := true
	if h := c.HelmRepository; h != nil {
		known = !h.RepositoryID.IsUnknown() && !h.ChartName.IsUnknown() && !h.ChartVersion.IsUnknown()
	}
	if g := c.GitRepository; g != nil {
		// The branch may be unknown until Qovery names the default one.
		known = !g.URL.IsUnknown() && !g.RootPath.IsUnknown() && !g.GitTokenID.IsUnknown()
	}
	return c, known, diags
}

// chartObject turns a chart source into the attribute's value.
func chartObject(ctx context.Context, c manifestChart) (types.Object, diag.Diagnostics) {
	return types.ObjectValueFrom(ctx, manifestChartType.AttrTypes, c)
}

// sourceRequest is the Helm service's source for chart c.
func (c manifestChart) sourceRequest() qovery.HelmSourceRequest {
	if h := c.HelmRepository; h != nil {
		return qovery.HelmSourceRequest{HelmRepository: &qovery.HelmRepositorySourceRequest{
			Repository:   h.RepositoryID.ValueString(),
			ChartName:    h.ChartName.ValueString(),
			ChartVersion: h.ChartVersion.ValueString(),
		}}
	}
	g := c.GitRepository
	src := &qovery.GitRepository{URL: g.URL.ValueString(), RootPath: g.RootPath.ValueString()}
	if !g.Branch.IsNull() && !g.Branch.IsUnknown() {
		src.Branch = g.Branch.ValueString()
	}
	if !g.GitTokenID.IsNull() && !g.GitTokenID.IsUnknown() {
		id := g.GitTokenID.ValueString()
		src.GitTokenID = &id
	}
	return qovery.HelmSourceRequest{GitRepository: src}
}

// chartFromHelm reads the chart source of a Helm service. prior keeps the
// URL as the configuration writes it when Qovery's differs only by a
// trailing ".git".
func chartFromHelm(h *qovery.Helm, prior manifestChart) manifestChart {
	switch {
	case h.Source.Repository != nil:
		r := h.Source.Repository
		return manifestChart{HelmRepository: &manifestHelmChart{
			RepositoryID: types.StringValue(r.Repository.ID),
			ChartName:    types.StringValue(r.ChartName),
			ChartVersion: types.StringValue(r.ChartVersion),
		}}
	case h.Source.Git != nil:
		g := h.Source.Git.GitRepository
		out := &manifestGitChart{URL: types.StringValue(g.URL), Branch: types.StringNull(), RootPath: types.StringValue(g.RootPath),
			GitTokenID: types.StringNull()}
		if g.Branch != "" {
			out.Branch = types.StringValue(g.Branch)
		}
		if out.RootPath.ValueString() == "" {
			out.RootPath = types.StringValue("/")
		}
		if g.GitTokenID != nil {
			out.GitTokenID = types.StringValue(*g.GitTokenID)
		}
		if p := prior.GitRepository; p != nil && strings.TrimSuffix(p.URL.ValueString(), ".git") == strings.TrimSuffix(g.URL, ".git") {
			out.URL = p.URL
		}
		return manifestChart{GitRepository: out}
	}
	return manifestChart{}
}

// recordChart sets the chart attribute from the Helm service Qovery
// returned, which names the default branch when none was given.
func (m *manifestServiceModel) recordChart(ctx context.Context, h *qovery.Helm) {
	prior, _, _ := m.chart(ctx)
	c := chartFromHelm(h, prior)
	if c.GitRepository == nil && c.HelmRepository == nil {
		return
	}
	if obj, d := chartObject(ctx, c); !d.HasError() {
		m.Chart = obj
	}
}

// manifestRequest fills req (new, or made from the service with ToRequest)
// with what qtail owns: name, source, arguments, cluster-wide resources and
// the whole values override.
func manifestRequest(req *qovery.HelmRequest, k manifestKind, name string, c manifestChart, values string) {
	req.Name = k.serviceName(name)
	if req.Description == "" {
		req.Description = "Tailscale " + k.object + " " + name + ", managed by qtail."
	}
	req.AutoDeploy = false
	req.Source = c.sourceRequest()
	req.Arguments = slices.Clone(manifestHelmArguments)
	req.AllowClusterWideResources = k.clusterScoped
	req.ValuesOverride = qovery.HelmValuesOverride{File: &qovery.HelmValuesFile{Raw: &qovery.HelmRawValues{
		Values: []qovery.HelmRawValuesFile{{Name: manifest.ManifestsFileName, Content: values}},
	}}}
}

// manifestObservation is what Qovery holds for a manifest service.
type manifestObservation struct {
	helm *qovery.Helm
	// file is the content of qtail's values file; fileFound is false when
	// the service has none.
	file      string
	fileFound bool
	// others describe the rest of the values override (names, never values).
	others []string
	status *qovery.Status
}

// observeManifestService reads a manifest service. A service that does not
// exist is an error for which qovery.IsNotFound is true.
func observeManifestService(ctx context.Context, q *qovery.Client, helmID string) (*manifestObservation, error) {
	h, err := q.GetHelm(ctx, helmID)
	if err != nil {
		return nil, err
	}
	obs := &manifestObservation{helm: h}
	vo := h.ValuesOverride
	if vo.File != nil && vo.File.Raw != nil {
		for _, f := range vo.File.Raw.Values {
			if f.Name == manifest.ManifestsFileName && !obs.fileFound {
				obs.file, obs.fileFound = f.Content, true
				continue
			}
			obs.others = append(obs.others, "values file "+f.Name)
		}
	}
	if vo.File != nil && vo.File.Git != nil {
		obs.others = append(obs.others, "values files from Git repository "+vo.File.Git.GitRepository.URL)
	}
	for _, set := range []struct {
		flag  string
		pairs [][2]string
	}{{"--set", vo.Set}, {"--set-string", vo.SetString}, {"--set-json", vo.SetJSON}} {
		for _, kv := range set.pairs {
			obs.others = append(obs.others, set.flag+" "+kv[0])
		}
	}
	if obs.status, err = q.GetHelmStatus(ctx, helmID); err != nil {
		return nil, fmt.Errorf("reading the deployment status of Helm service %s: %w", helmID, err)
	}
	return obs, nil
}

// fillFromQovery sets the shared attributes from what Qovery holds and warns
// about drift, which the planned values then show.
func (m *manifestServiceModel) fillFromQovery(ctx context.Context, k manifestKind, obs *manifestObservation, diags *diag.Diagnostics) {
	h := obs.helm
	m.ID = types.StringValue(h.ID)
	m.EnvironmentID = types.StringValue(h.Environment.ID)
	m.HelmServiceName = types.StringValue(h.Name)
	prior, _, _ := m.chart(ctx)
	c := chartFromHelm(h, prior)
	if c.HelmRepository == nil && c.GitRepository == nil {
		diags.AddWarning("Chart Source Unknown", fmt.Sprintf("The Helm service %s takes its chart from a source qtail does not know. qtail plans to set it back.", h.ID))
		m.Chart = types.ObjectNull(manifestChartType.AttrTypes)
	} else {
		obj, d := chartObject(ctx, c)
		diags.Append(d...)
		m.Chart = obj
	}
	m.ClusterWideResourcesAllowed = types.BoolValue(h.AllowClusterWideResources)
	switch {
	case k.clusterScoped && !h.AllowClusterWideResources:
		diags.AddWarning("Cluster-Wide Resources Turned Off",
			fmt.Sprintf("The Helm service %s may no longer deploy cluster-wide resources, and a %s is cluster-scoped. qtail plans to allow them again and redeploy.", h.ID, k.object))
	case !k.clusterScoped && h.AllowClusterWideResources:
		diags.AddWarning("Cluster-Wide Resources Turned On",
			fmt.Sprintf("The Helm service %s may deploy cluster-wide resources, which a namespaced %s does not need. qtail plans to turn "+
				"them off again and redeploy.", h.ID, k.object))
	}
	reported := obs.file
	if len(obs.others) > 0 {
		var b strings.Builder
		b.WriteString(obs.file)
		if obs.file != "" && !strings.HasSuffix(obs.file, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("# Also in the values override of the Helm service, outside qtail's values file:\n")
		for _, s := range obs.others {
			b.WriteString("#   " + s + "\n")
		}
		reported = b.String()
		diags.AddWarning("Values Added Outside qtail",
			fmt.Sprintf("The values override of the Helm service %s holds more than qtail's values file (%s). qtail owns the whole override and plans to remove them.",
				h.ID, strings.Join(obs.others, "; ")))
	} else if !m.Values.IsNull() && !m.Values.IsUnknown() && operatorYAMLEqual(reported, m.Values.ValueString()) {
		reported = m.Values.ValueString()
	}
	if !obs.fileFound {
		diags.AddWarning("Values File Missing",
			fmt.Sprintf("The Helm service %s has no values file %s. qtail plans to write it again and redeploy.", h.ID, manifest.ManifestsFileName))
	}
	m.Values = types.StringValue(reported)
	st := obs.status
	m.Deployed = types.BoolValue(st.State == qovery.StateDeployed && st.ServiceDeploymentStatus == qovery.UpToDate)
	switch {
	case strings.HasSuffix(st.State, "_ERROR"):
		reason := st.Message
		if reason == "" {
			reason = "no reason given; see the deployment logs in the Qovery console"
		}
		diags.AddWarning(titleCase(k.noun)+" Deployment Failed",
			fmt.Sprintf("The last deployment of the Helm service %s ended in %s (%s). qtail plans to deploy it again.", h.ID, st.State, reason))
	case st.State == qovery.StateDeployed && st.ServiceDeploymentStatus != qovery.UpToDate:
		diags.AddWarning(titleCase(k.noun)+" Configuration Not Deployed",
			fmt.Sprintf("The Helm service %s is %s: its configuration changed since its last deployment. qtail plans to deploy it.", h.ID, st.ServiceDeploymentStatus))
	}
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

// nullUnknowns replaces the unknown computed values by null, so that a
// partial state can be saved.
func (m *manifestServiceModel) nullUnknowns() {
	for _, s := range []*types.String{&m.ID, &m.Values, &m.HelmServiceName} {
		if s.IsUnknown() {
			*s = types.StringNull()
		}
	}
	if m.ClusterWideResourcesAllowed.IsUnknown() {
		m.ClusterWideResourcesAllowed = types.BoolNull()
	}
	if m.Deployed.IsUnknown() {
		m.Deployed = types.BoolValue(false)
	}
}

// needsDeployment reports whether an update must write the Helm service and
// deploy it: its configuration or its deployment differ from the plan.
func (m *manifestServiceModel) needsDeployment(state *manifestServiceModel) bool {
	return !m.Values.Equal(state.Values) || !m.Chart.Equal(state.Chart) || !m.HelmServiceName.Equal(state.HelmServiceName) ||
		!state.Deployed.ValueBool() || !m.ClusterWideResourcesAllowed.Equal(state.ClusterWideResourcesAllowed)
}

// errManifestTimeout marks a wait that did not end before the deadline.
var errManifestTimeout = errors.New("timed out")

// manifestFailed adds the error of a failed deployment or wait of a
// manifest service.
func manifestFailed(diags *diag.Diagnostics, k manifestKind, what, op, helmID string, err error, timeout time.Duration) {
	var de *qovery.DeploymentError
	switch {
	case errors.As(err, &de):
		reason := de.Reason
		if reason == "" {
			reason = "Qovery gave no reason; see the deployment logs of the Helm service in the Qovery console"
		}
		diags.AddError(titleCase(k.noun)+" Deployment Failed",
			fmt.Sprintf("The deployment of the Helm service %s ended in %s:\n\n%s\n\nqtail saved what it created in the state; fix the "+
				"cause and apply again.", helmID, de.State, reason))
	case errors.Is(err, errManifestTimeout), errors.Is(err, errOperatorTimeout):
		diags.AddError("Timed Out "+titleCase(what),
			fmt.Sprintf("qtail waited %s (timeouts.%s) for the Helm service %s: %s. qtail saved what it did in the state. "+
				"Look at the deployment in the Qovery console and at the operator's logs, raise timeouts.%s if it is only slow, then apply again.",
				timeout, op, helmID, err, op))
	default:
		apiError(diags, what, err)
	}
}

// writeManifestService creates the Helm service (helmID "") or rewrites it
// with what qtail owns, keeping the rest of the service as it is.
func writeManifestService(ctx context.Context, q *qovery.Client, k manifestKind, envID, helmID, name string, c manifestChart, values string) (*qovery.Helm, error) {
	if helmID == "" {
		req := qovery.HelmRequest{}
		manifestRequest(&req, k, name, c, values)
		return q.CreateHelm(ctx, envID, &req)
	}
	h, err := q.GetHelm(ctx, helmID)
	if err != nil {
		return nil, err
	}
	req := h.ToRequest()
	manifestRequest(&req, k, name, c, values)
	return q.EditHelm(ctx, helmID, &req)
}

// deleteManifestService deletes the Helm service and waits until it is gone;
// one already gone is fine.
func deleteManifestService(ctx context.Context, q *qovery.Client, helmID string, poll time.Duration) error {
	err := q.DeleteHelm(ctx, helmID)
	if qovery.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	get := func(ctx context.Context) (*qovery.Status, error) { return q.GetHelmStatus(ctx, helmID) }
	if err := qovery.WaitForDeletion(ctx, get, qovery.WaitOptions{PollInterval: poll}); err != nil {
		if ctx.Err() != nil {
			last := "unknown"
			if s, serr := q.GetHelmStatus(context.WithoutCancel(ctx), helmID); serr == nil {
				last = s.State
			}
			return fmt.Errorf("%w waiting for the Helm service to be deleted (last state seen: %s)", errManifestTimeout, last)
		}
		return err
	}
	return nil
}

// manifestPlanChecks runs the Qovery checks of a planned manifest service:
// the environment exists, the Helm service name is free, the chart version
// is published, and a new one has an operator on its cluster. It returns the
// lookup of the cluster's operator (nil when the environment is unknown or
// missing).
func (d *providerData) manifestPlanChecks(ctx context.Context, k manifestKind, m *manifestServiceModel, name types.String, diags *diag.Diagnostics) *exposureOperatorLookup {
	if d.qovery == nil || d.qoveryUnknown || m.EnvironmentID.IsUnknown() {
		return nil
	}
	q := d.qovery
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
		d.checkChartPublished(ctx, chartCheck{orgID: env.Organization.ID, repoID: h.RepositoryID.ValueString(), chart: h.ChartName.ValueString(),
			version: h.ChartVersion.ValueString(), repoAt: at.AtName("repository_id"), versionAt: at.AtName("chart_version"),
			serves: "such as a repository you publish examples/charts/" + manifestChartName + " to"}, diags)
	}
	ops := &exposureOperatorLookup{q: q, env: env}
	if !m.ID.IsUnknown() {
		// An update: the name and the cluster cannot change in place.
		return ops
	}
	// One listing of the cluster's Helm services serves every check of a
	// new service.
	d.checkOperatorRuns(ctx, k, ops, diags)
	if !name.IsUnknown() {
		d.checkServiceNameFree(ctx, k, name.ValueString(), m, ops, diags)
		if k.clusterScoped {
			d.checkObjectNameFree(ctx, k, name.ValueString(), ops, diags)
		}
	}
	return ops
}

// checkServiceNameFree refuses a new manifest service whose Helm service
// name another Helm service of the environment has: Qovery requires unique
// names. A tainted predecessor of m is no conflict (replacesManifestService).
func (d *providerData) checkServiceNameFree(ctx context.Context, k manifestKind, name string, m *manifestServiceModel,
	ops *exposureOperatorLookup, diags *diag.Diagnostics) {
	helms, err := ops.helms(ctx)
	if err != nil {
		tflog.Debug(ctx, "listing the cluster's Helm services failed; the name is not checked", map[string]any{"error": err.Error()})
		return
	}
	want := k.serviceName(name)
	for _, h := range helms {
		if h.Environment.ID != ops.env.ID || h.Name != want || d.exposures.isReleased(h.ID) || d.replacesManifestService(&h, m) {
			continue
		}
		diags.AddAttributeError(path.Root("name"), "Helm Service Name Taken",
			fmt.Sprintf("The environment %s already has a Helm service named %s (%s), and Qovery requires unique names. "+
				"Choose another name, or import that service: terraform import ADDRESS %s", ops.env.ID, want, h.ID, h.ID))
		return
	}
}

// checkObjectNameFree refuses a new cluster-scoped object whose name another
// Helm service of the cluster, or another resource of the plan, already
// renders: Helm would refuse to take over an object of another release.
func (d *providerData) checkObjectNameFree(ctx context.Context, k manifestKind, name string, ops *exposureOperatorLookup, diags *diag.Diagnostics) {
	key := fmt.Sprintf("%s %s on cluster %s", k.object, name, ops.env.ClusterID)
	if other, conflict := d.exposures.claim(key, "environment "+ops.env.ID); conflict {
		diags.AddAttributeError(path.Root("name"), titleCase(k.noun)+" Planned Twice",
			fmt.Sprintf("Another resource of this configuration (in %s) plans the %s; the objects of a cluster-scoped kind share "+
				"one name space per cluster. Give each its own name.", other, key))
		return
	}
	helms, err := ops.helms(ctx)
	if err != nil {
		tflog.Debug(ctx, "listing the cluster's Helm services failed; the name is not checked", map[string]any{"error": err.Error()})
		return
	}
	for _, h := range helms {
		if d.exposures.isReleased(h.ID) {
			continue
		}
		file, ok := manifestsFile(&h)
		if !ok || !slices.Contains(manifest.Names(file, k.object), name) {
			continue
		}
		diags.AddAttributeError(path.Root("name"), titleCase(k.noun)+" Name Taken on the Cluster",
			fmt.Sprintf("The Helm service %q (%s) already deploys the %s %s on cluster %s; a cluster has one %s of a name, and Helm "+
				"refuses to take over another release's object. Choose another name, or import that Helm service: "+
				"terraform import ADDRESS %s", h.Name, h.ID, k.object, name, ops.env.ClusterID, k.object, h.ID))
		return
	}
}

// checkOperatorRuns refuses a new cluster-scoped object on a cluster where
// no Tailscale operator runs and none is planned: its CRD comes with the
// operator, so the deployment would fail. A namespaced egress Service only
// gets a warning: it deploys, but does nothing until an operator runs.
func (d *providerData) checkOperatorRuns(ctx context.Context, k manifestKind, ops *exposureOperatorLookup, diags *diag.Diagnostics) {
	env := ops.env
	op, err := ops.get(ctx)
	if err != nil || op.helmID != "" || d.operators.plannedOn(env.ClusterID) {
		return
	}
	detail := fmt.Sprintf("qtail found no Helm service of the %s chart on cluster %s, and no qtail_operator of this "+
		"configuration is planned there. ", operatorChart, env.ClusterID)
	fix := "Install the operator with a qtail_operator, and set environment_id = qtail_operator.NAME.environment_id (or " +
		"depends_on = [qtail_operator.NAME]) so that Terraform plans it first."
	if !k.clusterScoped {
		diags.AddAttributeWarning(path.Root("environment_id"), "No Tailscale Operator on the Cluster",
			detail+"The "+k.noun+" deploys, but nothing turns it into an egress proxy until an operator runs. "+fix)
		return
	}
	diags.AddAttributeError(path.Root("environment_id"), "No Tailscale Operator on the Cluster",
		detail+"The "+k.object+" CRD comes with the operator, so the deployment would fail (no matches for kind "+k.object+"). "+fix)
}

// releaseManifestService records that the plan replaces the manifest
// service m and its devices. Terraform plans a replacement again as a
// creation, with no prior state: the new service may then take the Helm
// service name (manifestPlanChecks) and the devices' hostnames of the one
// it replaces.
func (d *providerData) releaseManifestService(ctx context.Context, m *manifestServiceModel, devices types.List) {
	_, ids := stateDevices(ctx, devices)
	d.exposures.release(append(ids, m.ID.ValueString())...)
}

// observeManifestDevices records, when Read refreshes a manifest service,
// its Helm service and the devices it found. A tainted resource (its
// creation failed, or someone ran terraform taint) is refreshed, then
// planned as a creation without its state: replacesManifestService then
// recognizes it.
func (d *providerData) observeManifestDevices(helmID string, deviceIDs []string) {
	d.manifestsMu.Lock()
	defer d.manifestsMu.Unlock()
	if d.manifestDevices == nil {
		d.manifestDevices = map[string][]string{}
	}
	d.manifestDevices[helmID] = slices.Clone(deviceIDs)
}

// manifestsFile returns the content of qtail's values file
// (manifest.ManifestsFileName) of a Helm service.
func manifestsFile(h *qovery.Helm) (string, bool) {
	f := h.ValuesOverride.File
	if f == nil || f.Raw == nil {
		return "", false
	}
	for _, v := range f.Raw.Values {
		if v.Name == manifest.ManifestsFileName {
			return v.Content, true
		}
	}
	return "", false
}

// replacesManifestService reports whether the planned creation m replaces
// the existing Helm service h: a resource of this configuration refreshed h,
// and h holds the very values file that m plans. The service and its devices
// are then released: they are no conflict for the new one.
func (d *providerData) replacesManifestService(h *qovery.Helm, m *manifestServiceModel) bool {
	d.manifestsMu.Lock()
	devices, seen := d.manifestDevices[h.ID]
	d.manifestsMu.Unlock()
	if !seen || m.Values.IsUnknown() {
		return false
	}
	if file, ok := manifestsFile(h); !ok || !operatorYAMLEqual(file, m.Values.ValueString()) {
		return false
	}
	d.exposures.release(append(slices.Clone(devices), h.ID)...)
	return true
}

// chartCheck names a chart version to look for in a Helm repository, and
// the attributes that hold the repository and the version.
type chartCheck struct {
	orgID, repoID, chart, version string
	repoAt, versionAt             path.Path
	// serves completes "Point ... at a repository that serves the chart,".
	serves string
}

// checkChartPublished checks that a Helm repository publishes a chart at a
// version. A repository that lists no chart at all (Qovery cannot read its
// index) is not checked.
func (d *providerData) checkChartPublished(ctx context.Context, c chartCheck, diags *diag.Diagnostics) {
	q := d.qovery
	charts, err := q.ListHelmCharts(ctx, c.orgID, c.repoID, c.chart)
	if qovery.IsNotFound(err) {
		diags.AddAttributeError(c.repoAt, "Helm Repository Not Found",
			fmt.Sprintf("The organization %s has no Helm repository %s. Check the repository ID, for example "+
				"qtail_helm_repository.NAME.id.", c.orgID, c.repoID))
		return
	}
	if err != nil {
		diags.AddWarning("Chart Version Not Checked", fmt.Sprintf("qtail could not list the charts of the Helm repository %s: %v. "+
			"Nothing needs to be done: a version that the repository does not publish makes the deployment fail instead.", c.repoID, err))
		return
	}
	var versions []string
	found := false
	for _, ch := range charts {
		if ch.ChartName == c.chart {
			found = true
			versions = append(versions, ch.Versions...)
		}
	}
	if !found {
		all, err := q.ListHelmCharts(ctx, c.orgID, c.repoID, "")
		if err != nil || len(all) == 0 {
			tflog.Debug(ctx, "the Helm repository lists no chart; the chart version is not checked", map[string]any{"helm_repository_id": c.repoID})
			return
		}
		names := make([]string, 0, len(all))
		for _, ch := range all {
			names = append(names, ch.ChartName)
		}
		diags.AddAttributeError(c.repoAt, "Chart Not in the Repository",
			fmt.Sprintf("The Helm repository %s has no chart %s; it publishes: %s. Point the repository ID at a repository that "+
				"serves the chart, %s.", c.repoID, c.chart, strings.Join(names, ", "), c.serves))
		return
	}
	if slices.Contains(versions, c.version) {
		return
	}
	diags.AddAttributeError(c.versionAt, "Chart Version Not Published",
		fmt.Sprintf("The Helm repository %s does not publish %s version %s. The nearest published versions are: %s. "+
			"Pin one of the published versions in chart_version.",
			c.repoID, c.chart, c.version, strings.Join(nearestChartVersions(c.version, versions, 5), ", ")))
}
