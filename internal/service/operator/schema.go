package operator

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
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

// replacingAttributes are the attributes whose change replaces the
// operator. ModifyPlan also replaces an operator whose Helm service is gone.
var replacingAttributes = tfx.Replacing{"environment_id"}

func (r *operatorResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	tagElems := []validator.String{tfx.Tag()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The Tailscale Kubernetes operator of one cluster, installed as a Qovery Helm service and checked on the tailnet.\n\n" +
			"qtail creates a Helm service named after `hostname` in the environment, from the `" + cluster.OperatorChart + "` chart of a Helm " +
			"repository at an exact version, with cluster-wide resources allowed (the chart installs CRDs and ClusterRoles). Its raw " +
			"values file reads the OAuth client as `" + manifest.OAuthClientIDRef + "` and `" + manifest.OAuthClientSecretRef + "`: " +
			"Qovery replaces them at deploy time from two variables of the Helm service, `" + manifest.OAuthClientIDVariable + "` (a plain " +
			"variable: a client ID is not a secret, and qtail reads it back for drift detection and import) and `" +
			manifest.OAuthClientSecretVariable + "` (a secret). qtail then deploys the service, waits for the deployment, and waits for " +
			"the operator's device to join the tailnet with its tags.\n\n" +
			"The OAuth client comes either from you (`oauth_client_id` with the write-only `oauth_client_secret_wo`, which needs " +
			"Terraform 1.11 or later and never reaches the plan or the state), or from qtail (`create_oauth_client = true`): qtail then " +
			"creates one OAuth client for this cluster, writes its secret straight into the Qovery secret variable, and revokes it on " +
			"destroy. With workload identity (`oauth_client_id` naming a Tailscale federated identity, and `oauth_audience`; chart " +
			manifest.WorkloadIdentitySince() + " or later), there is no secret at all: the operator exchanges a token of its Kubernetes " +
			"service account for API access, and the Helm service holds only `" + manifest.OAuthClientIDVariable + "`.\n\n" +
			"Before creating anything, the plan checks that the environment exists, that the chart version is published by the " +
			"repository, that `tagOwners` of the tailnet policy declares the operator's tags (counting `qtail_tag_owner` resources " +
			"planned in the same run, when this resource depends on them) and lets the OAuth client own the proxy tags (a warning: " +
			"the operator starts without it), and that no other device uses the hostname (an offline tagged device of that name is " +
			"taken for the node of an earlier install, which the operator brings back).\n\n" +
			"The operator's credentials are proven before the deploy, as the operator will use them: the chart declares no readiness " +
			"probe, so an operator that cannot log in is reported `DEPLOYED` by Qovery while its pod crash-loops and no device comes. " +
			"A client given by ID is read through the keys API (its scopes, tags, and for a federated identity its audience and " +
			"subject; a warning says so when the provider's credential may not read it), and its secret is exchanged for an access " +
			"token at plan time (or, when the secret is not known yet, before the Helm service is written), whose scopes are checked " +
			"too. A wait for the operator's device that times out says what the APIs show: Qovery's status, whether the client still " +
			"logs in, whether an auth key was minted since the deployment started, the devices of that name, and the console pages " +
			"to open.\n\n" +
			"qtail owns the whole values override of the Helm service: pass other chart values through `extra_values`.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "ID of the Helm service in Qovery; the import ID.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"environment_id": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "ID of the Qovery environment the operator is installed in; its cluster is the one the operator serves " +
					"(one operator per cluster). Changing it replaces the operator.",
				Validators: []validator.String{tfx.QoveryID()},
			},
			"helm_repository_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "ID of the organization Helm repository that serves the `" + cluster.OperatorChart + "` chart, such as `qtail_helm_repository.tailscale.id`.",
				Validators:          []validator.String{tfx.QoveryID()},
			},
			"chart_version": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Exact version of the `" + cluster.OperatorChart + "` chart, such as `1.102.4`. `latest`, ranges and empty " +
					"strings are refused: an upgrade can change CRDs and proxy images, so it is a reviewed change. When the repository " +
					"lists its charts, the plan checks that it publishes this version. Changing it upgrades the operator in place.",
				Validators: []validator.String{cluster.ChartVersion()},
			},
			"hostname": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Name of the operator's device on the tailnet, and of the Helm service. It must be unique per " +
					"cluster (for example `tailscale-operator-us-east-1`) and be a DNS label: 1 to 63 lower-case letters, digits and dashes. " +
					"The chart writes it unquoted into the operator's Deployment, so a name that YAML reads as a number or a boolean " +
					"(`12345`, `1e5`, `yes`) is refused. A change renames the operator's device, which the operator keeps.",
				Validators: []validator.String{
					tfx.DeviceHostname(),
					tfx.StringCheck{Rule: "must stay a string in the chart's Deployment", Check: manifest.CheckChartHostname},
				},
			},
			"default_tags": schema.ListAttribute{
				ElementType: types.StringType,
				Optional:    true,
				Computed:    true,
				Default:     listdefault.StaticValue(tfx.StringList([]string{cluster.DefaultOperatorTag})),
				MarkdownDescription: "Tags of the operator's own device (`operatorConfig.defaultTags`). `tagOwners` must declare them, " +
					"and a created OAuth client carries them. The operator applies them only when its node first logs in, and keeps its " +
					"node across deployments: on a change, qtail sets the running device's tags through the Tailscale API, so the " +
					"provider's Tailscale credential must be allowed to apply them. Default `[\"" + cluster.DefaultOperatorTag + "\"]`.",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(tagElems...),
				},
			},
			"proxy_default_tags": schema.ListAttribute{
				ElementType: types.StringType,
				Optional:    true,
				Computed:    true,
				Default:     listdefault.StaticValue(tfx.StringList([]string{cluster.DefaultProxyTag})),
				MarkdownDescription: "Tags of the proxies the operator creates (`proxyConfig.defaultTags`). The operator mints each " +
					"proxy's auth key with its OAuth client, so each tag must be one of the client's tags or owned by one of them in " +
					"`tagOwners`; otherwise the operator still starts, but the proxies that take these tags get no device (the plan " +
					"warns). Default `[\"" + cluster.DefaultProxyTag + "\"]`.",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(tagElems...),
				},
			},
			"api_server_proxy": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(cluster.DefaultAPIServerProxy),
				MarkdownDescription: "Whether the operator proxies the Kubernetes API on the tailnet (`apiServerProxyConfig.mode`): " +
					"`\"false\"`, `\"true\"` (callers authenticated by their tailnet identity, which still needs RBAC in the cluster) " +
					"or `\"noauth\"`. The proxy serves TLS with the tailnet's certificates: the plan refuses `\"true\"` and `\"noauth\"` " +
					"while the tailnet settings say HTTPS certificates are off (it warns when the provider's credential lacks the " +
					"`feature_settings:read` scope to read them). In auth mode it impersonates the groups that a grant of the " +
					"`tailscale.com/cap/kubernetes` capability to the operator's tag names: the plan warns, with the grant to add, " +
					"when the policy has none. Default `\"false\"`.",
				Validators: []validator.String{stringvalidator.OneOf("false", "true", "noauth")},
			},
			"extra_values": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "More chart values, as YAML, merged under qtail's values (for example `operatorConfig.logging` " +
					"or `proxyConfig.firewallMode`). The keys qtail sets are refused: " + operatorBackquoted(manifest.OwnedPaths()) + ". " +
					"So is the annotation `" + manifest.AnnotationFunnel + "`, at any depth: qtail never turns Tailscale Funnel on.",
				Validators: []validator.String{extraValuesValidator()},
			},
			"oauth_client_id": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "ID of the operator's OAuth client, stored in the Helm service's plain variable `" +
					manifest.OAuthClientIDVariable + "` (a client ID is not a secret). Set it with `oauth_client_secret_wo` and " +
					"`oauth_client_secret_wo_version` to use a client you created (scopes `devices:core`, `auth_keys` and " +
					"`services`, with write access; tagged with `default_tags` or tags that own them), " +
					"or with `oauth_audience` to name a federated identity (same scopes and tags). A client without them, or with " +
					"a secret the Tailscale API refuses, is refused at plan. " +
					"With `create_oauth_client = true` it is computed.",
				Validators: []validator.String{tfx.NonBlank()},
			},
			"oauth_client_secret_wo": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				WriteOnly: true,
				MarkdownDescription: "Secret of the OAuth client `oauth_client_id`, written into the Helm service's secret variable `" +
					manifest.OAuthClientSecretVariable + "`. Write-only (Terraform 1.11 or later): it is never stored in the plan or the " +
					"state, so a change is applied only when `oauth_client_secret_wo_version` changes.",
				Validators: []validator.String{tfx.NonBlank()},
			},
			"oauth_client_secret_wo_version": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: "Version of `oauth_client_secret_wo`. Change it (for example increment it) to write a new secret " +
					"into Qovery and redeploy the operator.",
			},
			"oauth_audience": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Audience of the service-account token that the chart projects into the operator's pod " +
					"(`oauth.audience`) for workload identity; with it, `oauth_client_id` is the ID of a Tailscale federated identity " +
					"and no secret is stored: the operator exchanges the token for API access, and the Helm service has no `" +
					manifest.OAuthClientSecretVariable + "` variable. The federated identity must trust the cluster's service-account " +
					"token issuer, for the subject `system:serviceaccount:<namespace>:operator`, with exactly this audience (the plan " +
					"checks the audience, scopes and tags when the credential may read keys). Charts " + manifest.WorkloadIdentitySince() +
					" and later support it (an older chart version is refused at plan). Conflicts with `oauth_client_secret_wo`, " +
					"`oauth_client_secret_wo_version` and `create_oauth_client = true`. Setting or removing it switches the operator in " +
					"place between a client secret and workload identity: it keeps its device.",
				Validators: []validator.String{tfx.NonBlank()},
			},
			"create_oauth_client": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				MarkdownDescription: "Let qtail create the operator's OAuth client through the Tailscale keys API, one per cluster: " +
					"scopes `devices:core`, `auth_keys` and `services`, tagged with `default_tags`, described after the cluster. Its secret " +
					"goes straight into the Qovery secret variable and never into the plan, the state or the logs; the client is revoked on " +
					"destroy. The provider's Tailscale credential needs the `oauth_keys` scope. Conflicts with `oauth_client_id`. " +
					"Default `false`.",
			},
			"values": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "The raw values file qtail writes into the Helm service. A refresh reports the file Qovery holds, " +
					"and what else overrides the chart's values, so that an edit in the console shows as a change back to this file.",
			},
			"cluster_wide_resources_allowed": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether the Helm service may install cluster-wide resources, which the chart needs (CRDs, " +
					"ClusterRoles, an IngressClass). Always planned `true`: turned off in the console, it shows as a change and is turned " +
					"back on with a redeployment.",
			},
			"deployed": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether the operator runs the Helm service's configuration: its last deployment succeeded " +
					"and nothing changed since (Qovery's state `DEPLOYED`, deployment status `UP_TO_DATE`). Always planned `true`: " +
					"after a failed deployment, or a change made in the console and not deployed, it shows as a change and the " +
					"operator is redeployed.",
			},
			"oauth_client_id_variable_id": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "ID of the Helm service's plain variable `" + manifest.OAuthClientIDVariable + "`. When the variable " +
					"is gone, it shows as a change and the variable is written again.",
			},
			"oauth_client_secret_variable_id": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "ID of the Helm service's secret variable `" + manifest.OAuthClientSecretVariable + "`; null " +
					"with `oauth_audience`, which stores no secret. When the " +
					"secret is gone, it shows as a change: qtail writes `oauth_client_secret_wo` again, or, with `create_oauth_client`, " +
					"creates a new OAuth client (the old secret cannot be read back), writes its secret and revokes the old client.",
			},
			"device_id": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Node ID of the operator's device on the tailnet. When the device is gone from the tailnet, it " +
					"shows as a change and the operator is redeployed.",
			},
			"tailnet_fqdn": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "MagicDNS name of the operator's device, such as `tailscale-operator-us-east-1.tail4f2a.ts.net`.",
			},
			"timeouts": tfx.TimeoutsAttribute(ctx,
				"Time to create the Helm service and its variables, deploy the operator and wait for its device on the tailnet.",
				"Time to update the Helm service, redeploy it and wait for the device.",
				"Time to delete the Helm service, wait until it is gone, revoke a created OAuth client and wait for the device to leave."),
		},
	}
	replacingAttributes.AddTo(resp.Schema.Attributes)
}

func operatorBackquoted(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = "`" + s + "`"
	}
	return strings.Join(out, ", ")
}
