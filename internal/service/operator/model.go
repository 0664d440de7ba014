package operator

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

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
	OAuthAudience               types.String   `tfsdk:"oauth_audience"`
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

// operatorValues returns the chart values qtail owns and the extra values
// of m, whose attributes must be known.
func (m *operatorModel) operatorValues() (manifest.OperatorValues, map[string]any, diag.Diagnostics) {
	var diags diag.Diagnostics
	tags, _ := tfx.Strings(m.DefaultTags)
	proxyTags, _ := tfx.Strings(m.ProxyDefaultTags)
	extra, err := manifest.ParseExtraValues(m.ExtraValues.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root("extra_values"), "Invalid Extra Values", err.Error()+". Correct extra_values.")
	}
	v := manifest.OperatorValues{
		Hostname:         m.Hostname.ValueString(),
		DefaultTags:      tags,
		ProxyDefaultTags: proxyTags,
		APIServerProxy:   m.APIServerProxy.ValueString(),
		OAuthAudience:    m.OAuthAudience.ValueString(),
	}
	return v, extra, diags
}

// valuesKnown reports whether every input of the values file is known.
func (m *operatorModel) valuesKnown() bool {
	return tfx.AllKnown(m.Hostname, m.DefaultTags, m.ProxyDefaultTags, m.APIServerProxy, m.ExtraValues, m.OAuthAudience)
}

// workloadIdentity reports whether the operator authenticates with
// workload identity (oauth_audience set): oauth_client_id is then a
// federated identity, and no secret is stored.
func (m *operatorModel) workloadIdentity() bool {
	return !m.OAuthAudience.IsNull() && !m.OAuthAudience.IsUnknown()
}

// renderValues renders the values file of m.
func (m *operatorModel) renderValues() (string, diag.Diagnostics) {
	v, extra, diags := m.operatorValues()
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

// setCredentials records the OAuth client that Qovery holds, and the IDs of
// its variables; secretVarID is empty with workload identity, which has no
// secret variable.
func (m *operatorModel) setCredentials(clientID, idVarID, secretVarID string) {
	m.OAuthClientID = types.StringValue(clientID)
	m.OAuthClientIDVariableID = types.StringValue(idVarID)
	m.OAuthClientSecretVariableID = types.StringNull()
	if secretVarID != "" {
		m.OAuthClientSecretVariableID = types.StringValue(secretVarID)
	}
}

// setDevice records the operator's device, or its absence.
func (m *operatorModel) setDevice(d *tailnet.Device) {
	if d == nil {
		m.DeviceID, m.TailnetFQDN = types.StringNull(), types.StringNull()
		return
	}
	m.DeviceID, m.TailnetFQDN = types.StringValue(cluster.DeviceID(d)), types.StringValue(cluster.DeviceFQDN(d))
}

// fillFromQovery updates m with what Qovery holds, and warns about drift
// that no user attribute shows.
func (m *operatorModel) fillFromQovery(obs *operatorObservation, diags *diag.Diagnostics) {
	h := obs.helm
	m.ID = types.StringValue(h.ID)
	m.EnvironmentID = types.StringValue(h.Environment.ID)
	if src := h.Source.Repository; src != nil && src.ChartName == cluster.OperatorChart {
		m.HelmRepositoryID = types.StringValue(src.Repository.ID)
		m.ChartVersion = types.StringValue(src.ChartVersion)
	} else {
		m.HelmRepositoryID, m.ChartVersion = types.StringNull(), types.StringNull()
		diags.AddWarning("Operator Chart Changed in Qovery",
			fmt.Sprintf("The Helm service %s no longer installs the %s chart from a Helm repository. qtail plans to set it back.", h.ID, cluster.OperatorChart))
	}
	m.ClusterWideResourcesAllowed = types.BoolValue(h.AllowClusterWideResources)
	if !h.AllowClusterWideResources {
		diags.AddWarning("Cluster-Wide Resources Turned Off",
			fmt.Sprintf("The Helm service %s may no longer install cluster-wide resources, which the operator chart needs (CRDs, "+
				"ClusterRoles, an IngressClass). qtail plans to allow them again and redeploy.", h.ID))
	}

	reported := obs.reportedValues()
	if len(obs.others) == 0 && !m.Values.IsNull() && !m.Values.IsUnknown() && cluster.YAMLEqual(reported, m.Values.ValueString()) {
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

	m.Deployed = types.BoolValue(cluster.Deployed(diags, "operator", h.ID, obs.status))
}

// fillFromValues reads the attributes that the values file carries.
func (m *operatorModel) fillFromValues(file, helmID string, diags *diag.Diagnostics) {
	if !manifest.OAuthReferences(file) {
		diags.AddWarning("Values File No Longer Reads the OAuth Variables",
			fmt.Sprintf("The values file of the Helm service %s no longer sets oauth.clientId: %s and either oauth.clientSecret: %s or, "+
				"with workload identity, oauth.audience alone. qtail plans to write it again and redeploy.",
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
	m.Hostname = types.StringValue(orDefault(v.Hostname, cluster.DefaultHostname))
	if len(v.DefaultTags) == 0 {
		v.DefaultTags = []string{cluster.DefaultOperatorTag}
	}
	if len(v.ProxyDefaultTags) == 0 {
		v.ProxyDefaultTags = []string{cluster.DefaultProxyTag}
	}
	m.DefaultTags = tfx.StringList(v.DefaultTags)
	m.ProxyDefaultTags = tfx.StringList(v.ProxyDefaultTags)
	m.APIServerProxy = types.StringValue(orDefault(v.APIServerProxy, cluster.DefaultAPIServerProxy))
	m.OAuthAudience = types.StringNull()
	if v.OAuthAudience != "" {
		m.OAuthAudience = types.StringValue(v.OAuthAudience)
	}
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
	case m.workloadIdentity() && sv == nil:
		m.OAuthClientSecretVariableID = types.StringNull()
	case m.workloadIdentity():
		// Not read by the chart with oauth.audience, but a secret
		// nothing uses.
		m.OAuthClientSecretVariableID = types.StringValue(sv.ID)
		diags.AddWarning("OAuth Secret Variable Left With Workload Identity",
			fmt.Sprintf("The Helm service %s authenticates with workload identity (oauth.audience) but still has the variable %s, "+
				"which nothing reads. qtail plans to delete it.", helmID, manifest.OAuthClientSecretVariable))
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
	// Workload identity has no secret to write: the secret variable goes.
	cp.writeSecret = !plan.workloadIdentity() && (wasCreated || state.OAuthClientSecretVariableID.IsNull() ||
		!plan.OAuthClientID.Equal(state.OAuthClientID) || !plan.OAuthClientSecretWOVersion.Equal(state.OAuthClientSecretWOVersion))
	// A created client that the configuration now names itself stays.
	if wasCreated && !state.OAuthClientID.IsNull() && !plan.OAuthClientID.Equal(state.OAuthClientID) {
		cp.revoke = state.OAuthClientID.ValueString()
	}
	return cp
}
