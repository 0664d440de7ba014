package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// Private state keys of qtail_operator.
const (
	// privateRevokeClients holds the IDs of OAuth clients qtail created
	// and replaced, still to be revoked once a deployment with their
	// successor has succeeded.
	privateRevokeClients = "revoke_oauth_clients"
	// privateReplaced names the Helm service and the device of an
	// operator being replaced (a replacement planned, or a creation that
	// failed and left a tainted operator), so that the plan of the new
	// operator does not take them for conflicts.
	privateReplaced = "replaced_operator"
)

var (
	_ resource.Resource                   = &operatorResource{}
	_ resource.ResourceWithConfigure      = &operatorResource{}
	_ resource.ResourceWithImportState    = &operatorResource{}
	_ resource.ResourceWithValidateConfig = &operatorResource{}
	_ resource.ResourceWithModifyPlan     = &operatorResource{}
)

// NewOperatorResource returns the qtail_operator resource.
func NewOperatorResource() resource.Resource {
	return &operatorResource{}
}

type operatorResource struct {
	resourceBase
}

type operatorModel struct {
	ID                          types.String   `tfsdk:"id"`
	EnvironmentID               types.String   `tfsdk:"environment_id"`
	HelmRepositoryID            types.String   `tfsdk:"helm_repository_id"`
	ChartVersion                types.String   `tfsdk:"chart_version"`
	Hostname                    types.String   `tfsdk:"hostname"`
	DefaultTags                 types.List     `tfsdk:"default_tags"`
	ProxyDefaultTags            types.List     `tfsdk:"proxy_default_tags"`
	APIServerProxy              types.String   `tfsdk:"api_server_proxy"`
	ExtraValues                 types.String   `tfsdk:"extra_values"`
	OAuthClientID               types.String   `tfsdk:"oauth_client_id"`
	OAuthClientSecretWO         types.String   `tfsdk:"oauth_client_secret_wo"`
	OAuthClientSecretWOVersion  types.Int64    `tfsdk:"oauth_client_secret_wo_version"`
	CreateOAuthClient           types.Bool     `tfsdk:"create_oauth_client"`
	Values                      types.String   `tfsdk:"values"`
	ClusterWideResourcesAllowed types.Bool     `tfsdk:"cluster_wide_resources_allowed"`
	Deployed                    types.Bool     `tfsdk:"deployed"`
	OAuthClientIDVariableID     types.String   `tfsdk:"oauth_client_id_variable_id"`
	OAuthClientSecretVariableID types.String   `tfsdk:"oauth_client_secret_variable_id"`
	DeviceID                    types.String   `tfsdk:"device_id"`
	TailnetFQDN                 types.String   `tfsdk:"tailnet_fqdn"`
	Timeouts                    timeouts.Value `tfsdk:"timeouts"`
}

func (r *operatorResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_operator"
}

func (r *operatorResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	tagElems := []validator.String{tagValidator()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The Tailscale Kubernetes operator of one cluster, installed as a Qovery Helm service and checked on the tailnet.\n\n" +
			"qtail creates a Helm service named after `hostname` in the environment, from the `" + operatorChart + "` chart of a Helm " +
			"repository at an exact version, with cluster-wide resources allowed (the chart installs CRDs and ClusterRoles). Its raw " +
			"values file reads the OAuth client as `" + manifest.OAuthClientIDRef + "` and `" + manifest.OAuthClientSecretRef + "`: " +
			"Qovery replaces them at deploy time from two variables of the Helm service, `" + manifest.OAuthClientIDVariable + "` (a plain " +
			"variable: a client ID is not a secret, and qtail reads it back for drift detection and import) and `" +
			manifest.OAuthClientSecretVariable + "` (a secret). qtail then deploys the service, waits for the deployment, and waits for " +
			"the operator's device to join the tailnet with its tags.\n\n" +
			"The OAuth client comes either from you (`oauth_client_id` with the write-only `oauth_client_secret_wo`, which needs " +
			"Terraform 1.11 or later and never reaches the plan or the state), or from qtail (`create_oauth_client = true`): qtail then " +
			"creates one OAuth client for this cluster, writes its secret straight into the Qovery secret variable, and revokes it on " +
			"destroy.\n\n" +
			"Before creating anything, the plan checks that the environment exists, that the chart version is published by the " +
			"repository, that `tagOwners` of the tailnet policy declares the operator's tags and lets them own the proxy tags (counting " +
			"`qtail_tag_owner` resources planned in the same run, when this resource depends on them), and that no other device uses " +
			"the hostname.\n\n" +
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
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{uuidValidator()},
			},
			"helm_repository_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "ID of the organization Helm repository that serves the `" + operatorChart + "` chart, such as `qtail_helm_repository.tailscale.id`.",
				Validators:          []validator.String{uuidValidator()},
			},
			"chart_version": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Exact version of the `" + operatorChart + "` chart, such as `1.102.4`. `latest`, ranges and empty " +
					"strings are refused: an upgrade can change CRDs and proxy images, so it is a reviewed change. When the repository " +
					"lists its charts, the plan checks that it publishes this version. Changing it upgrades the operator in place.",
				Validators: []validator.String{chartVersionValidator()},
			},
			"hostname": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Name of the operator's device on the tailnet, and of the Helm service. It must be unique per " +
					"cluster (for example `tailscale-operator-us-east-1`) and be a DNS label: 1 to 63 lower-case letters, digits and dashes.",
				Validators: []validator.String{deviceHostnameValidator()},
			},
			"default_tags": schema.ListAttribute{
				ElementType: types.StringType,
				Optional:    true,
				Computed:    true,
				Default:     listdefault.StaticValue(stringList([]string{chartDefaultOperatorTag})),
				MarkdownDescription: "Tags of the operator's own device (`operatorConfig.defaultTags`). `tagOwners` must declare them, " +
					"and a created OAuth client carries them. Default `[\"" + chartDefaultOperatorTag + "\"]`.",
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
				Default:     listdefault.StaticValue(stringList([]string{chartDefaultProxyTag})),
				MarkdownDescription: "Tags of the proxies the operator creates (`proxyConfig.defaultTags`). `tagOwners` must let one of " +
					"`default_tags` own each of them. Default `[\"" + chartDefaultProxyTag + "\"]`.",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(tagElems...),
				},
			},
			"api_server_proxy": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(chartDefaultAPIServerProxy),
				MarkdownDescription: "Whether the operator proxies the Kubernetes API on the tailnet (`apiServerProxyConfig.mode`): " +
					"`\"false\"`, `\"true\"` (callers authenticated by their tailnet identity, which still needs RBAC in the cluster) " +
					"or `\"noauth\"`. Default `\"false\"`.",
				Validators: []validator.String{stringvalidator.OneOf("false", "true", "noauth")},
			},
			"extra_values": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "More chart values, as YAML, merged under qtail's values (for example `operatorConfig.logging` " +
					"or `proxyConfig.firewallMode`). The keys qtail sets are refused: " + operatorBackquoted(manifest.OwnedPaths()) + ".",
				Validators: []validator.String{extraValuesValidator()},
			},
			"oauth_client_id": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "ID of the operator's OAuth client, stored in the Helm service's plain variable `" +
					manifest.OAuthClientIDVariable + "` (a client ID is not a secret). Set it with `oauth_client_secret_wo` and " +
					"`oauth_client_secret_wo_version` to use a client you created (scopes `devices:core` and `auth_keys`, " +
					"plus `services` for ProxyGroup ingress, with write access; tagged with `default_tags` or tags that own them). " +
					"With `create_oauth_client = true` it is computed.",
				Validators: []validator.String{nonBlankValidator()},
			},
			"oauth_client_secret_wo": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				WriteOnly: true,
				MarkdownDescription: "Secret of the OAuth client `oauth_client_id`, written into the Helm service's secret variable `" +
					manifest.OAuthClientSecretVariable + "`. Write-only (Terraform 1.11 or later): it is never stored in the plan or the " +
					"state, so a change is applied only when `oauth_client_secret_wo_version` changes.",
				Validators: []validator.String{nonBlankValidator()},
			},
			"oauth_client_secret_wo_version": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: "Version of `oauth_client_secret_wo`. Change it (for example increment it) to write a new secret " +
					"into Qovery and redeploy the operator.",
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
				MarkdownDescription: "ID of the Helm service's secret variable `" + manifest.OAuthClientSecretVariable + "`. When the " +
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
			"timeouts": timeoutsAttribute(ctx,
				"Time to create the Helm service and its variables, deploy the operator and wait for its device on the tailnet.",
				"Time to update the Helm service, redeploy it and wait for the device.",
				"Time to delete the Helm service, wait until it is gone, revoke a created OAuth client and wait for the device to leave."),
		},
	}
}

func operatorBackquoted(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = "`" + s + "`"
	}
	return strings.Join(out, ", ")
}

// operatorListStrings returns the strings of a known list.
func operatorListStrings(ctx context.Context, l types.List) ([]string, diag.Diagnostics) {
	var out []string
	diags := l.ElementsAs(ctx, &out, false)
	return out, diags
}

// operatorValues returns the chart values qtail owns and the extra values
// of m, whose attributes must be known.
func (m *operatorModel) operatorValues(ctx context.Context) (manifest.OperatorValues, map[string]any, diag.Diagnostics) {
	var diags diag.Diagnostics
	tags, d := operatorListStrings(ctx, m.DefaultTags)
	diags.Append(d...)
	proxyTags, d := operatorListStrings(ctx, m.ProxyDefaultTags)
	diags.Append(d...)
	extra, err := manifest.ParseExtraValues(m.ExtraValues.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root("extra_values"), "Invalid Extra Values", err.Error()+". Correct extra_values.")
	}
	v := manifest.OperatorValues{
		Hostname:         m.Hostname.ValueString(),
		DefaultTags:      tags,
		ProxyDefaultTags: proxyTags,
		APIServerProxy:   m.APIServerProxy.ValueString(),
	}
	return v, extra, diags
}

// valuesKnown reports whether every input of the values file is known.
func (m *operatorModel) valuesKnown() bool {
	return !m.Hostname.IsUnknown() && !m.DefaultTags.IsUnknown() && !m.ProxyDefaultTags.IsUnknown() &&
		!m.APIServerProxy.IsUnknown() && !m.ExtraValues.IsUnknown()
}

// renderValues renders the values file of m.
func (m *operatorModel) renderValues(ctx context.Context) (string, diag.Diagnostics) {
	v, extra, diags := m.operatorValues(ctx)
	if diags.HasError() {
		return "", diags
	}
	out, err := manifest.RenderOperatorValues(v, extra)
	if err != nil {
		diags.AddError("Unable to Render the Operator's Values File", err.Error()+". Please report this issue to the qtail developers.")
	}
	return out, diags
}

// nullUnknowns replaces the unknown computed values of m by null, so that a
// partial state can be saved.
func (m *operatorModel) nullUnknowns() {
	for _, s := range []*types.String{&m.ID, &m.OAuthClientID, &m.Values, &m.OAuthClientIDVariableID, &m.OAuthClientSecretVariableID, &m.DeviceID, &m.TailnetFQDN} {
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
	m.OAuthClientSecretWO = types.StringNull()
}

// setDevice records the operator's device, or its absence.
func (m *operatorModel) setDevice(d *tailnet.Device) {
	if d == nil {
		m.DeviceID, m.TailnetFQDN = types.StringNull(), types.StringNull()
		return
	}
	m.DeviceID, m.TailnetFQDN = types.StringValue(deviceID(d)), types.StringValue(deviceFQDN(d))
}

// pendingRevocations reads the OAuth clients still to be revoked.
func pendingRevocations(ctx context.Context, get func(context.Context, string) ([]byte, diag.Diagnostics)) ([]string, diag.Diagnostics) {
	raw, diags := get(ctx, privateRevokeClients)
	var ids []string
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &ids); err != nil {
			diags.AddWarning("Unreadable Private State", "qtail could not read the list of replaced OAuth clients it still has to revoke: "+
				err.Error()+". Revoke the operator's replaced OAuth clients in the Tailscale admin console.")
		}
	}
	return ids, diags
}

func encodeRevocations(ids []string) []byte {
	if len(ids) == 0 {
		return nil
	}
	b, _ := json.Marshal(ids)
	return b
}

// operatorDeployFailed adds the error of a failed deployment or wait.
func operatorDeployFailed(diags *diag.Diagnostics, what, op, helmID string, err error, timeout time.Duration) {
	var de *qovery.DeploymentError
	switch {
	case errors.As(err, &de):
		reason := de.Reason
		if reason == "" {
			reason = "Qovery gave no reason; see the deployment logs of the Helm service in the Qovery console"
		}
		diags.AddError("Operator Deployment Failed",
			fmt.Sprintf("The deployment of the Helm service %s ended in %s:\n\n%s\n\nqtail saved what it created in the state; fix the "+
				"cause and apply again.", helmID, de.State, reason))
	case errors.Is(err, errOperatorTimeout):
		diags.AddError("Timed Out "+titleCase(what),
			fmt.Sprintf("qtail waited %s (timeouts.%s) for the Helm service %s: %s. qtail saved what it did in the state. "+
				"Look at the deployment in the Qovery console, raise timeouts.%s if it is only slow, then apply again.", timeout, op, helmID, err, op))
	default:
		apiError(diags, what, err)
	}
}

func (r *operatorResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan, config operatorModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, timeout := withTimeout(ctx, plan.Timeouts.Create, &resp.Diagnostics)
	defer cancel()
	q, diags := r.data.Qovery()
	resp.Diagnostics.Append(diags...)
	tn, diags := r.data.Tailnet()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateReplaced, nil)...)

	values, diags := plan.renderValues(ctx)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	envID := plan.EnvironmentID.ValueString()
	env, err := q.GetEnvironment(ctx, envID)
	if err != nil {
		apiError(&resp.Diagnostics, "read the environment "+envID, err)
		return
	}

	creds := oauthCredentials{clientID: plan.OAuthClientID.ValueString(), secret: config.OAuthClientSecretWO.ValueString()}
	created := plan.CreateOAuthClient.ValueBool()
	if created {
		tags, diags := operatorListStrings(ctx, plan.DefaultTags)
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
		id, secret, err := tn.CreateOAuthClient(ctx, operatorOAuthScopes, tags, oauthClientDescription(env.ClusterName, plan.Hostname.ValueString()))
		if err != nil {
			apiError(&resp.Diagnostics, "create the operator's OAuth client", err)
			return
		}
		tflog.Info(ctx, "created the operator's OAuth client", map[string]any{"oauth_client_id": id})
		creds = oauthCredentials{clientID: id, secret: secret}
	}
	if creds.secret == "" {
		resp.Diagnostics.AddAttributeError(path.Root("oauth_client_secret_wo"), "Missing OAuth Client Secret",
			"oauth_client_secret_wo is empty: the operator cannot authenticate without its OAuth client's secret. "+
				"Set oauth_client_secret_wo to the secret of the OAuth client oauth_client_id.")
		return
	}

	hreq := qovery.HelmRequest{}
	operatorRequest(&hreq, &plan, values)
	helm, err := q.CreateHelm(ctx, envID, &hreq)
	if err != nil {
		apiError(&resp.Diagnostics, "create the operator's Helm service", err)
		if created {
			if rerr := revokeOperatorClient(ctx, tn, creds.clientID); rerr != nil {
				resp.Diagnostics.AddWarning("OAuth Client Left Behind",
					fmt.Sprintf("qtail could not revoke the OAuth client %s it had just created: %v. Revoke it in the Tailscale admin console.", creds.clientID, rerr))
			}
		}
		return
	}

	// From here on the Helm service exists: a failure saves what exists,
	// and Terraform marks the resource tainted.
	progress := plan
	progress.ID = types.StringValue(helm.ID)
	progress.OAuthClientID = types.StringValue(creds.clientID)
	progress.Values = types.StringValue(values)
	progress.ClusterWideResourcesAllowed = types.BoolValue(helm.AllowClusterWideResources)
	progress.Deployed = types.BoolValue(false)
	progress.nullUnknowns()
	save := func() { resp.Diagnostics.Append(resp.State.Set(ctx, &progress)...) }
	fail := func() {
		save()
		// Terraform taints the operator and plans its replacement as a
		// creation: its Helm service and device are no conflict then.
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateReplaced, encodeReplaced(progress.ID, progress.DeviceID))...)
	}

	idVarID, secretVarID, err := syncOAuthVariables(ctx, q, helm.ID, creds)
	if idVarID != "" {
		progress.OAuthClientIDVariableID = types.StringValue(idVarID)
	}
	if secretVarID != "" {
		progress.OAuthClientSecretVariableID = types.StringValue(secretVarID)
	}
	if err != nil {
		apiError(&resp.Diagnostics, "store the operator's OAuth client in Qovery", err)
		fail()
		return
	}
	if err := deployOperator(ctx, q, helm.ID, r.data.pollInterval); err != nil {
		operatorDeployFailed(&resp.Diagnostics, "waiting for the operator deployment", "create", helm.ID, err, timeout)
		fail()
		return
	}
	tags, diags := operatorListStrings(ctx, plan.DefaultTags)
	resp.Diagnostics.Append(diags...)
	dev, err := waitForOperatorDevice(ctx, tn, plan.Hostname.ValueString(), tags, r.data.pollInterval)
	if err != nil {
		operatorDeployFailed(&resp.Diagnostics, "waiting for the operator device", "create", helm.ID, err, timeout)
		fail()
		return
	}
	progress.Deployed = types.BoolValue(true)
	progress.setDevice(dev)
	save()
}

func (r *operatorResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state operatorModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	q, diags := r.data.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	obs, err := observeOperator(ctx, q, state.ID.ValueString())
	if qovery.IsNotFound(err) {
		r.readGone(ctx, &state, resp)
		return
	}
	if err != nil {
		apiError(&resp.Diagnostics, "read the operator's Helm service", err)
		return
	}
	imported := state.CreateOAuthClient.IsNull() || state.CreateOAuthClient.IsUnknown()
	if imported {
		// Read the client ID from its variable, as for a client given
		// by hand; one that qtail created is recognized below.
		state.CreateOAuthClient = types.BoolValue(false)
	}
	state.fillFromQovery(obs, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if imported && r.data.tailnet != nil && !state.OAuthClientID.IsNull() {
		// An OAuth client that qtail created carries its description: it
		// stays qtail's to replace and revoke, instead of being left
		// behind when the configuration says create_oauth_client = true.
		k, err := r.data.tailnet.GetKey(ctx, state.OAuthClientID.ValueString())
		if err == nil && k.KeyType == "client" && strings.HasPrefix(k.Description, oauthClientDescriptionPrefix) {
			state.CreateOAuthClient = types.BoolValue(true)
		}
	}

	if r.data.tailnet != nil && !state.Hostname.IsNull() {
		tags, diags := operatorListStrings(ctx, state.DefaultTags)
		resp.Diagnostics.Append(diags...)
		dev, seen, err := findOperatorDevice(ctx, r.data.tailnet, state.Hostname.ValueString(), tags)
		if err != nil {
			apiError(&resp.Diagnostics, "look for the operator device on the tailnet", err)
			return
		}
		if dev == nil && !state.DeviceID.IsNull() {
			resp.Diagnostics.AddWarning("Operator Device Gone From the Tailnet",
				fmt.Sprintf("The operator device %s (%s) is no longer on the tailnet (%s). qtail plans to redeploy the operator so that it joins again.",
					state.Hostname.ValueString(), state.DeviceID.ValueString(), seen))
		}
		state.setDevice(dev)
	}
	if raw, diags := req.Private.GetKey(ctx, privateReplaced); !diags.HasError() && len(raw) > 0 {
		// A creation that failed: Terraform plans its replacement next.
		r.data.operators.add(state.ID.ValueString(), state.DeviceID.ValueString())
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// readGone handles a Helm service that no longer exists. An operator with an
// OAuth client that qtail created stays in the state, marked gone, so that
// the plan replaces it and the old client is revoked on the way; otherwise
// the resource leaves the state and the plan creates it again.
func (r *operatorResource) readGone(ctx context.Context, state *operatorModel, resp *resource.ReadResponse) {
	if !state.CreateOAuthClient.ValueBool() || state.OAuthClientID.IsNull() {
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.AddWarning("Operator Helm Service Gone",
		fmt.Sprintf("The Helm service %s of the operator %s no longer exists in Qovery. qtail plans to replace the operator: the "+
			"OAuth client %s that it created for it is revoked, and a new operator is installed with a new client.",
			state.ID.ValueString(), state.Hostname.ValueString(), state.OAuthClientID.ValueString()))
	state.Values = types.StringNull()
	state.ClusterWideResourcesAllowed = types.BoolNull()
	state.Deployed = types.BoolValue(false)
	state.OAuthClientIDVariableID = types.StringNull()
	state.OAuthClientSecretVariableID = types.StringNull()
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// fillFromQovery updates m with what Qovery holds, and warns about drift
// that no user attribute shows.
func (m *operatorModel) fillFromQovery(obs *operatorObservation, diags *diag.Diagnostics) {
	h := obs.helm
	m.ID = types.StringValue(h.ID)
	m.EnvironmentID = types.StringValue(h.Environment.ID)
	if src := h.Source.Repository; src != nil && src.ChartName == operatorChart {
		m.HelmRepositoryID = types.StringValue(src.Repository.ID)
		m.ChartVersion = types.StringValue(src.ChartVersion)
	} else {
		m.HelmRepositoryID, m.ChartVersion = types.StringNull(), types.StringNull()
		diags.AddWarning("Operator Chart Changed in Qovery",
			fmt.Sprintf("The Helm service %s no longer installs the %s chart from a Helm repository. qtail plans to set it back.", h.ID, operatorChart))
	}
	m.ClusterWideResourcesAllowed = types.BoolValue(h.AllowClusterWideResources)
	if !h.AllowClusterWideResources {
		diags.AddWarning("Cluster-Wide Resources Turned Off",
			fmt.Sprintf("The Helm service %s may no longer install cluster-wide resources, which the operator chart needs (CRDs, "+
				"ClusterRoles, an IngressClass). qtail plans to allow them again and redeploy.", h.ID))
	}

	reported := obs.reportedValues()
	if len(obs.others) == 0 && !m.Values.IsNull() && !m.Values.IsUnknown() && operatorYAMLEqual(reported, m.Values.ValueString()) {
		reported = m.Values.ValueString()
	}
	m.Values = types.StringValue(reported)
	switch {
	case !obs.fileFound:
		diags.AddWarning("Operator Values File Missing",
			fmt.Sprintf("The Helm service %s has no values file %s. qtail plans to write it again and redeploy.", h.ID, manifest.ValuesFileName))
	case len(obs.others) > 0:
		diags.AddWarning("Values Added Outside qtail",
			fmt.Sprintf("The values override of the Helm service %s holds more than qtail's values file (%s). qtail owns the whole "+
				"override and plans to remove them; move such values to extra_values.", h.ID, strings.Join(obs.others, "; ")))
	}
	if obs.fileFound {
		m.fillFromValues(obs.file, h.ID, diags)
	}
	m.fillFromVariables(obs, diags)

	st := obs.status
	m.Deployed = types.BoolValue(st.State == qovery.StateDeployed && st.ServiceDeploymentStatus == qovery.UpToDate)
	switch {
	case strings.HasSuffix(st.State, "_ERROR"):
		reason := st.Message
		if reason == "" {
			reason = "no reason given; see the deployment logs in the Qovery console"
		}
		diags.AddWarning("Operator Deployment Failed",
			fmt.Sprintf("The last deployment of the Helm service %s ended in %s (%s). qtail plans to deploy it again.", h.ID, st.State, reason))
	case st.State == qovery.StateDeployed && st.ServiceDeploymentStatus != qovery.UpToDate:
		diags.AddWarning("Operator Configuration Not Deployed",
			fmt.Sprintf("The Helm service %s is %s: its configuration changed since its last deployment. qtail plans to deploy it.", h.ID, st.ServiceDeploymentStatus))
	}
}

// fillFromValues reads the attributes that the values file carries.
func (m *operatorModel) fillFromValues(file, helmID string, diags *diag.Diagnostics) {
	if !manifest.OAuthReferences(file) {
		diags.AddWarning("Values File No Longer Reads the OAuth Variables",
			fmt.Sprintf("The values file of the Helm service %s no longer sets oauth.clientId: %s and oauth.clientSecret: %s. qtail plans to write it again and redeploy.",
				helmID, manifest.OAuthClientIDRef, manifest.OAuthClientSecretRef))
	}
	v, extra, err := manifest.ReadOperatorValues(file)
	if err != nil {
		diags.AddWarning("Unreadable Values File", fmt.Sprintf("The values file of the Helm service %s: %v. qtail plans to write it again.", helmID, err))
		return
	}
	orDefault := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	m.Hostname = types.StringValue(orDefault(v.Hostname, chartDefaultHostname))
	if len(v.DefaultTags) == 0 {
		v.DefaultTags = []string{chartDefaultOperatorTag}
	}
	if len(v.ProxyDefaultTags) == 0 {
		v.ProxyDefaultTags = []string{chartDefaultProxyTag}
	}
	m.DefaultTags = stringList(v.DefaultTags)
	m.ProxyDefaultTags = stringList(v.ProxyDefaultTags)
	m.APIServerProxy = types.StringValue(orDefault(v.APIServerProxy, chartDefaultAPIServerProxy))
	canonical, err := manifest.CanonicalYAML(extra)
	if err != nil {
		diags.AddWarning("Unreadable Extra Values", fmt.Sprintf("The values file of the Helm service %s: %v. qtail plans to write it again.", helmID, err))
		return
	}
	cur := m.ExtraValues
	switch {
	case !cur.IsNull() && !cur.IsUnknown() && sameExtraValues(cur.ValueString(), canonical):
		// Same values, maybe written differently: keep the configuration's text.
	case canonical == "":
		m.ExtraValues = types.StringNull()
	default:
		m.ExtraValues = types.StringValue(canonical)
	}
}

// fillFromVariables reads the two OAuth variables.
func (m *operatorModel) fillFromVariables(obs *operatorObservation, diags *diag.Diagnostics) {
	helmID := obs.helm.ID
	sv := obs.secretVar
	switch {
	case sv == nil:
		m.OAuthClientSecretVariableID = types.StringNull()
		diags.AddWarning("OAuth Secret Variable Missing",
			fmt.Sprintf("The Helm service %s has no variable %s, so the operator cannot authenticate at its next deployment. %s",
				helmID, manifest.OAuthClientSecretVariable, m.secretRepair()))
	case !sv.IsSecret:
		m.OAuthClientSecretVariableID = types.StringNull()
		diags.AddWarning("OAuth Secret Variable Is Not a Secret",
			fmt.Sprintf("The variable %s of the Helm service %s is a plain variable, readable in the console. %s",
				manifest.OAuthClientSecretVariable, helmID, m.secretRepair()))
	default:
		m.OAuthClientSecretVariableID = types.StringValue(sv.ID)
	}

	created := m.CreateOAuthClient.ValueBool()
	iv := obs.idVar
	switch {
	case iv == nil:
		m.OAuthClientIDVariableID = types.StringNull()
		diags.AddWarning("OAuth Client ID Variable Missing",
			fmt.Sprintf("The Helm service %s has no variable %s. qtail plans to write it again and redeploy.", helmID, manifest.OAuthClientIDVariable))
	case iv.IsSecret || iv.Value == nil:
		m.OAuthClientIDVariableID = types.StringNull()
		diags.AddWarning("OAuth Client ID Variable Is a Secret",
			fmt.Sprintf("The variable %s of the Helm service %s is a secret, so qtail cannot read which client the operator uses. "+
				"qtail plans to write it again as a plain variable (a client ID is not a secret).", manifest.OAuthClientIDVariable, helmID))
	case created && !m.OAuthClientID.IsNull() && *iv.Value != m.OAuthClientID.ValueString():
		m.OAuthClientIDVariableID = types.StringNull()
		m.OAuthClientSecretVariableID = types.StringNull()
		diags.AddWarning("Operator Moved to Another OAuth Client",
			fmt.Sprintf("The variable %s of the Helm service %s names the OAuth client %s, not the client %s that qtail created. "+
				"qtail plans to create a new client, store it, and revoke %s.", manifest.OAuthClientIDVariable, helmID, *iv.Value,
				m.OAuthClientID.ValueString(), m.OAuthClientID.ValueString()))
	default:
		m.OAuthClientIDVariableID = types.StringValue(iv.ID)
		if !created {
			m.OAuthClientID = types.StringValue(*iv.Value)
		}
	}
}

func (m *operatorModel) secretRepair() string {
	if m.CreateOAuthClient.ValueBool() {
		return "Its secret cannot be read back: qtail plans to create a new OAuth client, store its secret, redeploy, and revoke the old client " +
			m.OAuthClientID.ValueString() + "."
	}
	return "qtail plans to write oauth_client_secret_wo into it again and redeploy."
}

// credentialPlan is what an update does with the OAuth client.
type credentialPlan struct {
	newClient   bool   // create a new client (create_oauth_client)
	writeSecret bool   // write the configured secret (explicit client)
	revoke      string // a created client that the update replaces
}

func planCredentials(plan, state *operatorModel) credentialPlan {
	var cp credentialPlan
	wasCreated := state.CreateOAuthClient.ValueBool()
	if plan.CreateOAuthClient.ValueBool() {
		cp.newClient = !wasCreated || state.OAuthClientID.IsNull() || state.OAuthClientSecretVariableID.IsNull() ||
			!plan.DefaultTags.Equal(state.DefaultTags)
		if cp.newClient && wasCreated && !state.OAuthClientID.IsNull() {
			cp.revoke = state.OAuthClientID.ValueString()
		}
		return cp
	}
	cp.writeSecret = wasCreated || state.OAuthClientSecretVariableID.IsNull() ||
		!plan.OAuthClientID.Equal(state.OAuthClientID) || !plan.OAuthClientSecretWOVersion.Equal(state.OAuthClientSecretWOVersion)
	// A created client that the configuration now names itself stays.
	if wasCreated && !state.OAuthClientID.IsNull() && !plan.OAuthClientID.Equal(state.OAuthClientID) {
		cp.revoke = state.OAuthClientID.ValueString()
	}
	return cp
}

func (r *operatorResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state, config operatorModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if onlyTimeoutsChange(req) {
		// New waits for the next operations: nothing to deploy.
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	ctx, cancel, timeout := withTimeout(ctx, plan.Timeouts.Update, &resp.Diagnostics)
	defer cancel()
	q, diags := r.data.Qovery()
	resp.Diagnostics.Append(diags...)
	tn, diags := r.data.Tailnet()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	pending, diags := pendingRevocations(ctx, req.Private.GetKey)
	resp.Diagnostics.Append(diags...)
	helmID := state.ID.ValueString()

	values, diags := plan.renderValues(ctx)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}

	// What the remote side holds so far, saved if a step fails. Read
	// refreshes the rest before the next plan.
	progress := state
	progress.Timeouts = plan.Timeouts
	save := func() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &progress)...)
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateRevokeClients, encodeRevocations(pending))...)
	}

	cp := planCredentials(&plan, &state)
	creds := oauthCredentials{clientID: plan.OAuthClientID.ValueString()}
	switch {
	case cp.newClient:
		env, err := q.GetEnvironment(ctx, plan.EnvironmentID.ValueString())
		if err != nil {
			apiError(&resp.Diagnostics, "read the environment "+plan.EnvironmentID.ValueString(), err)
			save()
			return
		}
		tags, diags := operatorListStrings(ctx, plan.DefaultTags)
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			save()
			return
		}
		id, secret, err := tn.CreateOAuthClient(ctx, operatorOAuthScopes, tags, oauthClientDescription(env.ClusterName, plan.Hostname.ValueString()))
		if err != nil {
			apiError(&resp.Diagnostics, "create the operator's OAuth client", err)
			save()
			return
		}
		tflog.Info(ctx, "created the operator's OAuth client", map[string]any{"oauth_client_id": id})
		creds = oauthCredentials{clientID: id, secret: secret}
	case cp.writeSecret:
		creds.secret = config.OAuthClientSecretWO.ValueString()
		if creds.secret == "" {
			resp.Diagnostics.AddAttributeError(path.Root("oauth_client_secret_wo"), "Missing OAuth Client Secret",
				"qtail must write the OAuth client's secret into Qovery, but oauth_client_secret_wo is empty. "+
					"Set oauth_client_secret_wo to the secret of the OAuth client oauth_client_id.")
			save()
			return
		}
	case plan.CreateOAuthClient.ValueBool():
		creds.clientID = state.OAuthClientID.ValueString()
	}

	h, err := q.GetHelm(ctx, helmID)
	if err != nil {
		apiError(&resp.Diagnostics, "read the operator's Helm service", err)
		r.dropNewClient(ctx, tn, cp, creds, &resp.Diagnostics)
		save()
		return
	}
	hreq := h.ToRequest()
	operatorRequest(&hreq, &plan, values)
	if _, err := q.EditHelm(ctx, helmID, &hreq); err != nil {
		apiError(&resp.Diagnostics, "update the operator's Helm service", err)
		r.dropNewClient(ctx, tn, cp, creds, &resp.Diagnostics)
		save()
		return
	}
	idVarID, secretVarID, err := syncOAuthVariables(ctx, q, helmID, creds)
	if err != nil {
		apiError(&resp.Diagnostics, "store the operator's OAuth client in Qovery", err)
		if secretVarID == "" {
			r.dropNewClient(ctx, tn, cp, creds, &resp.Diagnostics)
		}
		save()
		return
	}
	// Qovery now holds the new configuration and credentials, not yet
	// deployed.
	progress.Deployed = types.BoolValue(false)
	progress.OAuthClientID = types.StringValue(creds.clientID)
	progress.CreateOAuthClient = plan.CreateOAuthClient
	progress.OAuthClientSecretWOVersion = plan.OAuthClientSecretWOVersion
	progress.OAuthClientIDVariableID = types.StringValue(idVarID)
	progress.OAuthClientSecretVariableID = types.StringValue(secretVarID)
	if cp.revoke != "" {
		// Revoked once the operator runs with its successor: the running
		// operator still uses it until then.
		pending = append(pending, cp.revoke)
	}

	if err := deployOperator(ctx, q, helmID, r.data.pollInterval); err != nil {
		operatorDeployFailed(&resp.Diagnostics, "waiting for the operator deployment", "update", helmID, err, timeout)
		save()
		return
	}
	tags, diags := operatorListStrings(ctx, plan.DefaultTags)
	resp.Diagnostics.Append(diags...)
	dev, err := waitForOperatorDevice(ctx, tn, plan.Hostname.ValueString(), tags, r.data.pollInterval)
	if err != nil {
		operatorDeployFailed(&resp.Diagnostics, "waiting for the operator device", "update", helmID, err, timeout)
		save()
		return
	}

	var left []string
	for _, id := range pending {
		if err := revokeOperatorClient(ctx, tn, id); err != nil {
			resp.Diagnostics.AddWarning("OAuth Client Not Revoked",
				fmt.Sprintf("qtail could not revoke the replaced OAuth client %s: %v. It tries again at the next apply; you can also revoke it in the Tailscale admin console.", id, err))
			left = append(left, id)
		}
	}
	pending = left

	progress = plan
	progress.OAuthClientID = types.StringValue(creds.clientID)
	if plan.Values.IsUnknown() {
		progress.Values = types.StringValue(values)
	}
	progress.ClusterWideResourcesAllowed = types.BoolValue(true)
	progress.Deployed = types.BoolValue(true)
	progress.OAuthClientIDVariableID = types.StringValue(idVarID)
	progress.OAuthClientSecretVariableID = types.StringValue(secretVarID)
	progress.setDevice(dev)
	progress.OAuthClientSecretWO = types.StringNull()
	save()
}

// dropNewClient revokes a client created by a failed update before Qovery
// held its secret: nothing uses it.
func (r *operatorResource) dropNewClient(ctx context.Context, tn *tailnet.Client, cp credentialPlan, creds oauthCredentials, diags *diag.Diagnostics) {
	if !cp.newClient {
		return
	}
	if err := revokeOperatorClient(ctx, tn, creds.clientID); err != nil {
		diags.AddWarning("OAuth Client Left Behind",
			fmt.Sprintf("qtail could not revoke the OAuth client %s it had just created: %v. Revoke it in the Tailscale admin console.", creds.clientID, err))
	}
}

func (r *operatorResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state operatorModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, timeout := withTimeout(ctx, state.Timeouts.Delete, &resp.Diagnostics)
	defer cancel()
	q, diags := r.data.Qovery()
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
		tn, diags = r.data.Tailnet()
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
	}

	helmID := state.ID.ValueString()
	err := q.DeleteHelm(ctx, helmID)
	switch {
	case qovery.IsNotFound(err):
	case err != nil:
		apiError(&resp.Diagnostics, "delete the operator's Helm service", err)
		return
	default:
		get := func(ctx context.Context) (*qovery.Status, error) { return q.GetHelmStatus(ctx, helmID) }
		if err := qovery.WaitForDeletion(ctx, get, qovery.WaitOptions{PollInterval: r.data.pollInterval}); err != nil {
			if ctx.Err() != nil {
				last := "unknown"
				if s, serr := q.GetHelmStatus(context.WithoutCancel(ctx), helmID); serr == nil {
					last = s.State
				}
				err = fmt.Errorf("%w waiting for the Helm service to be deleted (last state seen: %s)", errOperatorTimeout, last)
			}
			operatorDeployFailed(&resp.Diagnostics, "waiting for the operator's deletion", "delete", helmID, err, timeout)
			return
		}
	}

	for _, id := range pending {
		if err := revokeOperatorClient(ctx, tn, id); err != nil {
			apiError(&resp.Diagnostics, "revoke the operator's OAuth client "+id, err)
			return
		}
	}
	if !state.DeviceID.IsNull() {
		if err := removeOperatorDevice(ctx, tn, state.DeviceID.ValueString()); err != nil {
			apiError(&resp.Diagnostics, "remove the operator device "+state.DeviceID.ValueString()+" from the tailnet", err)
		}
	}
}

func (r *operatorResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !uuidRE.MatchString(req.ID) {
		invalidImportID(&resp.Diagnostics, req.ID, "the ID of the operator's Helm service (a UUID)")
		return
	}
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
