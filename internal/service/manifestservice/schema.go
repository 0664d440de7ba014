package manifestservice

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// manifestAttributes returns the schema attributes shared by every manifest
// service. waits says what the resource waits for after a deployment.
// environment_id requires replacement: every resource lists it in its
// tfx.Replacing.
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
			Validators: []validator.String{tfx.QoveryID()},
		},
		"chart": schema.SingleNestedAttribute{
			Required: true,
			MarkdownDescription: "Where the Helm service takes the chart that applies the manifests from: exactly one of " +
				"`helm_repository` and `git_repository`. The chart must apply each entry of `manifests` in its values as one " +
				"Kubernetes object, as `examples/charts/" + cluster.ManifestsChart + "` in qtail's repository does.",
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
							Validators:          []validator.String{tfx.QoveryID()},
						},
						"chart_name": schema.StringAttribute{
							Optional:            true,
							Computed:            true,
							Default:             stringdefault.StaticString(cluster.ManifestsChart),
							MarkdownDescription: "Name of the chart in the repository. Default `" + cluster.ManifestsChart + "`.",
							Validators:          []validator.String{tfx.NonBlank()},
						},
						"chart_version": schema.StringAttribute{
							Required: true,
							MarkdownDescription: "Exact version of the chart, such as `0.1.0`. When the repository lists its charts, " +
								"the plan checks that it publishes this version.",
							Validators: []validator.String{cluster.ChartVersion()},
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
							Validators:          []validator.String{tfx.HTTPSURL("Git repositories", "https://github.com/acme/platform.git")},
						},
						"branch": schema.StringAttribute{
							Optional: true,
							Computed: true,
							MarkdownDescription: "Branch to deploy. When unset, Qovery uses the repository's default branch and " +
								"qtail records the one Qovery reports.",
							Validators:    []validator.String{tfx.NonBlank()},
							PlanModifiers: []planmodifier.String{defaultBranchFromState{}},
						},
						"root_path": schema.StringAttribute{
							Optional:            true,
							Computed:            true,
							Default:             stringdefault.StaticString("/"),
							MarkdownDescription: "Folder of the chart in the repository, starting with `/`, such as `/charts/" + cluster.ManifestsChart + "`. Default `/`.",
							Validators:          []validator.String{rootPathValidator()},
						},
						"git_token_id": schema.StringAttribute{
							Optional:            true,
							MarkdownDescription: "ID of the Qovery Git token that reads a private repository.",
							Validators:          []validator.String{tfx.QoveryID()},
						},
					},
				},
			},
		},
		"operator_id": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "ID of the `qtail_operator` whose Tailscale operator serves the " + k.noun + ", such as `qtail_operator.NAME.id` (the ID of " +
				"the operator's Qovery Helm service). The reference makes Terraform plan and create the operator first, and destroy " +
				"it last: only a running operator removes the devices of what it serves. The plan checks that it is the operator " +
				"of the cluster (or the one this plan installs there). Without it, the checks that need the operator wait for the " +
				"apply when the plan does not show it yet. Changing it changes nothing on the cluster. Left unset by an import.",
			Validators: []validator.String{tfx.QoveryID()},
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
		"timeouts": tfx.TimeoutsAttribute(ctx,
			"Time to create the Helm service, deploy it and "+waits+".",
			"Time to update the Helm service, redeploy it and "+waits+".",
			"Time to delete the Helm service and wait until it is gone."),
	}
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
	return tfx.StringCheck{Rule: "a path starting with /", Check: func(s string) error {
		if !strings.HasPrefix(s, "/") {
			return fmt.Errorf("the path does not start with /; give the chart's folder from the repository's root, such as /charts/%s", cluster.ManifestsChart)
		}
		return nil
	}}
}

// addReplicaAttributes adds to attrs the attributes of a manifest service
// of kind k whose object brings up one device per replica: tags,
// proxy_class and devices. advertised describes the routes a device
// advertises. tags requires replacement: every resource lists it in its
// tfx.Replacing.
func addReplicaAttributes(attrs map[string]schema.Attribute, k manifestKind, advertised string) {
	attrs["tags"] = schema.ListAttribute{
		ElementType: types.StringType,
		Optional:    true,
		Computed:    true,
		Default:     listdefault.StaticValue(tfx.StringList([]string{cluster.DefaultProxyTag})),
		MarkdownDescription: "Tags of " + k.possessive() + " devices. The operator mints their auth keys with its OAuth client, " +
			"whose tags must be or own each of them in `tagOwners` (the plan checks it). The tags are set when the devices are " +
			"created, so changing them replaces the " + k.noun + ". Default `[\"" + cluster.DefaultProxyTag + "\"]`.",
		Validators: []validator.List{
			listvalidator.SizeAtLeast(1),
			listvalidator.UniqueValues(),
			listvalidator.ValueStringsAre(tfx.StringCheck{Rule: "a tag", Check: manifest.CheckTag}),
		},
	}
	attrs["proxy_class"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Name of a `ProxyClass` that configures " + k.possessive() + " pods" + proxyClassDefault(k) + ". The " +
			"operator brings up no device until the ProxyClass is Ready: the plan refuses one that no Helm service of the cluster " +
			"renders, or that cannot be Ready, and warns when it cannot tell.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a Kubernetes name", Check: manifest.CheckKubernetesName}},
	}
	attrs["devices"] = schema.ListNestedAttribute{
		Computed:            true,
		MarkdownDescription: "The " + k.noun + "'s devices on the tailnet, one per replica.",
		NestedObject:        schema.NestedAttributeObject{Attributes: deviceAttributes(advertised)},
	}
}

// deviceAttributes are the attributes of one device of a `devices`
// attribute; advertised describes the routes it advertises.
func deviceAttributes(advertised string) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"hostname":          schema.StringAttribute{Computed: true, MarkdownDescription: "Hostname of the device."},
		"id":                schema.StringAttribute{Computed: true, MarkdownDescription: "Node ID of the device."},
		"tailnet_fqdn":      schema.StringAttribute{Computed: true, MarkdownDescription: "MagicDNS name of the device."},
		"tailnet_ips":       schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Tailscale addresses of the device."},
		"advertised_routes": schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: advertised},
		"approved_routes":   schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Routes approved (enabled) on the device."},
	}
}

// proxyClassDefault says, for the kinds it applies to, that the operator's
// default ProxyClass applies without proxy_class.
func proxyClassDefault(k manifestKind) string {
	if !k.operatorDefaultClass {
		return " (the operator's `proxyConfig.defaultProxyClass` does not apply to it)"
	}
	return "; without it, the operator's default (`proxyConfig.defaultProxyClass`)"
}
