package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/planned"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// ValidateConfig requires exactly one way of getting the OAuth client:
// oauth_client_id with its write-only secret and the secret's version,
// oauth_client_id with oauth_audience (workload identity), or
// create_oauth_client = true.
func (r *operatorResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg operatorModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() || cfg.CreateOAuthClient.IsUnknown() {
		return
	}
	set := func(isNull, isUnknown bool) bool { return !isNull || isUnknown }
	hasID := set(cfg.OAuthClientID.IsNull(), cfg.OAuthClientID.IsUnknown())
	hasSecret := set(cfg.OAuthClientSecretWO.IsNull(), cfg.OAuthClientSecretWO.IsUnknown())
	hasVersion := set(cfg.OAuthClientSecretWOVersion.IsNull(), cfg.OAuthClientSecretWOVersion.IsUnknown())
	hasAudience := set(cfg.OAuthAudience.IsNull(), cfg.OAuthAudience.IsUnknown())

	if cfg.CreateOAuthClient.ValueBool() {
		for _, a := range []struct {
			name string
			set  bool
		}{{"oauth_client_id", hasID}, {"oauth_client_secret_wo", hasSecret}, {"oauth_client_secret_wo_version", hasVersion}, {"oauth_audience", hasAudience}} {
			if a.set {
				resp.Diagnostics.AddAttributeError(path.Root(a.name), "Conflicting OAuth Client Settings",
					fmt.Sprintf("%s cannot be set with create_oauth_client = true: qtail then creates the OAuth client itself. "+
						"Use either create_oauth_client = true, or oauth_client_id with oauth_client_secret_wo and oauth_client_secret_wo_version, "+
						"or oauth_client_id with oauth_audience (workload identity).", a.name))
			}
		}
		return
	}
	if hasAudience {
		validateWorkloadIdentity(hasID, hasSecret, hasVersion, &resp.Diagnostics)
		return
	}
	if !hasID {
		resp.Diagnostics.AddAttributeError(path.Root("oauth_client_id"), "Missing OAuth Client",
			"The operator needs an OAuth client: set oauth_client_id with oauth_client_secret_wo and oauth_client_secret_wo_version, "+
				"oauth_client_id with oauth_audience to authenticate with workload identity, "+
				"or create_oauth_client = true to let qtail create one for this cluster.")
		return
	}
	if !hasSecret {
		resp.Diagnostics.AddAttributeError(path.Root("oauth_client_secret_wo"), "Missing OAuth Client Secret",
			"oauth_client_id needs its secret in oauth_client_secret_wo (write-only: it never reaches the plan or the state).")
	}
	if !hasVersion {
		resp.Diagnostics.AddAttributeError(path.Root("oauth_client_secret_wo_version"), "Missing OAuth Client Secret Version",
			"oauth_client_secret_wo is write-only, so Terraform cannot see it change: set oauth_client_secret_wo_version (for example 1) "+
				"and change it whenever the secret changes.")
	}
}

// ModifyPlan plans the computed attributes at their desired values, so that
// drift that no argument shows (a deleted variable, cluster-wide resources
// turned off, a device gone) is planned as an update, and checks against
// both APIs what would make the operator fail, before anything is created.
func (r *operatorResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan, state operatorModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	creating := req.State.Raw.IsNull()
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}

	if !plan.planComputed(&state, creating, &resp.Diagnostics) {
		return
	}

	// A Helm service found gone, whose OAuth client qtail created, is
	// replaced: the delete revokes the old client.
	helmGone := !creating && state.Values.IsNull()
	if helmGone {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("values"))
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if helmGone || replacingAttributes.ReplacedBy(ctx, req, &resp.Diagnostics) {
		// A replacement: Terraform plans the new operator again as a
		// creation, where the checks run. The Helm service and the device
		// of the operator being replaced are no conflict then.
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateReplaced, encodeReplaced(state.ID, state.DeviceID))...)
		return
	}
	if !creating && resp.Plan.Raw.Equal(req.State.Raw) {
		return
	}
	checkWorkloadIdentityChart(&plan, &state, creating, &resp.Diagnostics)
	checkChartSeries(&plan, &state, creating, &resp.Diagnostics)
	if !r.Configured() {
		return
	}
	own := ownedIDs{state.ID.ValueString(), state.DeviceID.ValueString()}
	if creating {
		// A replacement planned above carries the replaced operator in
		// the private state.
		var rep replacedOperator
		if raw, diags := req.Private.GetKey(ctx, privateReplaced); !diags.HasError() && len(raw) > 0 && json.Unmarshal(raw, &rep) == nil {
			own = append(own, rep.HelmID, rep.DeviceID)
		}
	}
	// The write-only secret is in the configuration only.
	var secret types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("oauth_client_secret_wo"), &secret)...)
	r.checkPlan(ctx, &operatorCheck{plan: &plan, state: &state, creating: creating, own: own, secret: secret.ValueString()}, &resp.Diagnostics)
}

// planComputed plans the computed attributes of m at their desired values (the
// values file as qtail renders it, the operator deployed, the variables and
// the device as the state has them, unknown where the apply changes them).
// state is the zero model when creating. ok is false after an error.
func (m *operatorModel) planComputed(state *operatorModel, creating bool, diags *diag.Diagnostics) (ok bool) {
	// The same extra values written differently are no change.
	if !creating && !m.ExtraValues.IsNull() && !m.ExtraValues.IsUnknown() && !state.ExtraValues.IsNull() &&
		sameExtraValues(m.ExtraValues.ValueString(), state.ExtraValues.ValueString()) {
		m.ExtraValues = state.ExtraValues
	}
	unknownString := types.StringUnknown()
	m.ClusterWideResourcesAllowed = types.BoolValue(true)
	m.Deployed = types.BoolValue(true)
	m.Values = unknownString
	if m.valuesKnown() {
		rendered, dd := m.renderValues()
		if diags.Append(dd...); diags.HasError() {
			return false
		}
		m.Values = types.StringValue(rendered)
		if !creating && !state.Values.IsNull() && cluster.YAMLEqual(rendered, state.Values.ValueString()) {
			m.Values = state.Values
		}
	}
	if creating {
		m.ID = unknownString
		m.OAuthClientIDVariableID, m.OAuthClientSecretVariableID = unknownString, unknownString
		m.DeviceID, m.TailnetFQDN = unknownString, unknownString
		if m.CreateOAuthClient.IsUnknown() || m.CreateOAuthClient.ValueBool() {
			m.OAuthClientID = unknownString
		}
		m.planSecretVariable()
		return true
	}
	m.ID = state.ID
	keep := func(v types.String) types.String {
		if v.IsNull() {
			return unknownString
		}
		return v
	}
	m.OAuthClientIDVariableID = keep(state.OAuthClientIDVariableID)
	m.OAuthClientSecretVariableID = keep(state.OAuthClientSecretVariableID)
	m.planSecretVariable()
	// The operator keeps its node: a new hostname renames the same device
	// (its MagicDNS name follows), and qtail sets new tags on it.
	m.DeviceID, m.TailnetFQDN = keep(state.DeviceID), keep(state.TailnetFQDN)
	if !m.Hostname.Equal(state.Hostname) {
		m.TailnetFQDN = unknownString
	}
	if m.CreateOAuthClient.IsUnknown() {
		m.OAuthClientID = unknownString
	} else if m.CreateOAuthClient.ValueBool() {
		cp := planCredentials(m, state)
		m.OAuthClientID = state.OAuthClientID
		if cp.newClient {
			m.OAuthClientID = unknownString
		}
	}
	return true
}

// planSecretVariable plans no secret variable with workload identity (an
// existing one is deleted), and an unknown one while oauth_audience is
// unknown.
func (m *operatorModel) planSecretVariable() {
	switch {
	case m.OAuthAudience.IsUnknown():
		m.OAuthClientSecretVariableID = types.StringUnknown()
	case m.workloadIdentity():
		m.OAuthClientSecretVariableID = types.StringNull()
	}
}

// ownedIDs are the Helm service and device IDs that belong to the operator
// being planned (or to the one it replaces): no conflict.
type ownedIDs []string

func (o ownedIDs) has(r *operatorResource, id string) bool {
	if id == "" {
		return false
	}
	for _, s := range o {
		if s == id {
			return true
		}
	}
	// A tainted operator, being replaced, registered by Read.
	return r.Clients.Planned().FailedOperator(id)
}

// replacedOperator names the Helm service and the device of an operator
// being replaced.
type replacedOperator struct {
	HelmID   string `json:"helm_id,omitempty"`
	DeviceID string `json:"device_id,omitempty"`
}

func encodeReplaced(helmID, deviceID types.String) []byte {
	b, _ := json.Marshal(replacedOperator{HelmID: helmID.ValueString(), DeviceID: deviceID.ValueString()})
	return b
}

// operatorChanged reports whether a planned attribute differs from the state.
func operatorChanged(creating bool, plan, state attr.Value) bool {
	return creating || plan.IsUnknown() || !plan.Equal(state)
}

// operatorCheck is what the plan-time checks of one operator share.
type operatorCheck struct {
	plan, state *operatorModel
	creating    bool
	// own are the Helm service and device of this operator, or of the one
	// it replaces.
	own ownedIDs
	// secret is oauth_client_secret_wo from the configuration, "" when
	// unset or unknown.
	secret string
}

// changed reports whether a planned attribute differs from the state.
func (c *operatorCheck) changed(plan, state attr.Value) bool {
	return operatorChanged(c.creating, plan, state)
}

// checkPlan runs the API checks of a creation or an update. Each is skipped
// when its inputs are not known yet, or when the provider's settings of its
// API are not (they come from another resource).
func (r *operatorResource) checkPlan(ctx context.Context, c *operatorCheck, diags *diag.Diagnostics) {
	if q := r.Clients.PlanQovery(diags); q != nil {
		r.checkQovery(ctx, q, c, diags)
	}
	if tn := r.Clients.PlanTailnet(diags); tn != nil {
		r.checkTailnet(ctx, tn, c, diags)
	}
}

// checkQovery checks the environment, the name of the Helm service and the
// chart version.
func (r *operatorResource) checkQovery(ctx context.Context, q *qovery.Client, c *operatorCheck, diags *diag.Diagnostics) {
	plan, state := c.plan, c.state
	if plan.EnvironmentID.IsUnknown() {
		return
	}
	envID := plan.EnvironmentID.ValueString()
	env, err := q.GetEnvironment(ctx, envID)
	if qovery.IsNotFound(err) {
		diags.AddAttributeError(path.Root("environment_id"), "Environment Not Found",
			fmt.Sprintf("Qovery has no environment %s visible to this API token. Check environment_id, and that the token belongs to "+
				"the environment's organization.", envID))
		return
	}
	if err != nil {
		tfx.APIError(diags, "read the environment "+envID, err)
		return
	}
	facts := planned.Operator{CreatesClient: plan.CreateOAuthClient.ValueBool()}
	if !plan.Values.IsUnknown() {
		facts.Values = plan.Values.ValueString()
	}
	if !plan.ChartVersion.IsUnknown() {
		facts.ChartVersion = plan.ChartVersion.ValueString()
	}
	if !facts.CreatesClient && !plan.CreateOAuthClient.IsUnknown() && !plan.OAuthClientID.IsUnknown() {
		facts.ClientID = plan.OAuthClientID.ValueString()
	}
	if !plan.ChartVersion.IsUnknown() {
		facts.ChartVersion = plan.ChartVersion.ValueString()
	}
	r.Clients.Planned().PlanOperator(env.ClusterID, facts)

	if !plan.Hostname.IsUnknown() && c.changed(plan.Hostname, state.Hostname) {
		helms, err := q.ListHelms(ctx, envID)
		if err != nil {
			tfx.APIError(diags, "list the Helm services of the environment "+envID, err)
			return
		}
		for _, h := range helms {
			if c.own.has(r, h.ID) {
				continue
			}
			if strings.EqualFold(h.Name, plan.Hostname.ValueString()) {
				diags.AddAttributeError(path.Root("hostname"), "Helm Service Name Already Taken",
					fmt.Sprintf("The environment %s already has a Helm service named %q (ID %s), and the operator's Helm service is named after "+
						"its hostname. Choose another hostname, or adopt that service with %s", env.Name, h.Name, h.ID, tfx.ImportHint("qtail_operator", h.ID)))
				return
			}
			if c.creating && h.Source.Repository != nil && h.Source.Repository.ChartName == cluster.OperatorChart {
				diags.AddAttributeError(path.Root("environment_id"), "Operator Already Installed",
					fmt.Sprintf("The environment %s already runs the Tailscale operator: Helm service %q (ID %s). A cluster runs one operator; "+
						"adopt that one with %s", env.Name, h.Name, h.ID, tfx.ImportHint("qtail_operator", h.ID)))
				return
			}
		}
	}

	versionChanged := c.changed(plan.ChartVersion, state.ChartVersion) ||
		!plan.HelmRepositoryID.Equal(state.HelmRepositoryID)
	if plan.HelmRepositoryID.IsUnknown() || plan.ChartVersion.IsUnknown() || !versionChanged {
		return
	}
	cluster.CheckChartPublished(ctx, q, cluster.ChartCheck{OrgID: env.Organization.ID, RepoID: plan.HelmRepositoryID.ValueString(),
		Chart: cluster.OperatorChart, Version: plan.ChartVersion.ValueString(),
		RepoAt: path.Root("helm_repository_id"), VersionAt: path.Root("chart_version")}, diags)
}

// checkTailnet checks the tag owners, an OAuth client given by ID, and that
// no other device uses the hostname.
func (r *operatorResource) checkTailnet(ctx context.Context, tn *tailnet.Client, c *operatorCheck, diags *diag.Diagnostics) {
	plan, state := c.plan, c.state
	tags, known := tfx.Strings(plan.DefaultTags)
	proxyTags, proxyKnown := tfx.Strings(plan.ProxyDefaultTags)
	if !known || !proxyKnown || diags.HasError() {
		return
	}
	body, dd := r.Clients.PlannedPolicy(ctx)
	if dd.HasError() {
		// A credential without the policy_file scope, say: the operator
		// reports missing tag owners at deployment instead.
		for _, d := range dd.Errors() {
			diags.AddWarning("Operator's Tag Owners Not Checked", "qtail could not read the tailnet policy file to check the tag owners "+
				"the operator needs ("+d.Summary()+": "+d.Detail()+"). The operator reports missing tag owners when it starts instead; "+
				"give the provider's Tailscale credential the policy_file scope to have them checked at plan time.")
		}
		return
	}
	doc, err := policyfile.Parse(body)
	if err != nil {
		diags.AddWarning("Operator's Tag Owners Not Checked", "qtail could not parse the tailnet policy file: "+err.Error()+
			". The operator reports missing tag owners when it starts instead.")
		return
	}
	if gaps := operatorTagGaps(doc, tags); len(gaps) > 0 {
		diags.AddAttributeError(path.Root("default_tags"), "Missing Tag Owners for the Operator", tagOwnerGapsMessage(gaps, tags,
			"Without them the operator pod fails at startup, and nothing is created."))
		return
	}

	// The tags the OAuth client mints keys for: a client qtail creates
	// carries default_tags.
	clientTags, clientKnown := tags, !plan.CreateOAuthClient.IsUnknown()
	if clientKnown && !plan.CreateOAuthClient.ValueBool() {
		clientKnown = false
		if !plan.OAuthClientID.IsUnknown() && !plan.OAuthAudience.IsUnknown() &&
			(c.creating || !plan.OAuthClientID.Equal(state.OAuthClientID) || !plan.DefaultTags.Equal(state.DefaultTags) ||
				!plan.OAuthAudience.Equal(state.OAuthAudience)) {
			if k := checkOAuthClient(ctx, tn, doc, plan.OAuthClientID.ValueString(), plan.OAuthAudience.ValueString(), tags, diags); k != nil {
				clientTags, clientKnown = k.Tags, true
			}
		}
	}
	if c.secret != "" && !plan.CreateOAuthClient.IsUnknown() && !plan.CreateOAuthClient.ValueBool() && !plan.OAuthClientID.IsUnknown() &&
		!plan.OAuthAudience.IsUnknown() && !plan.workloadIdentity() && !diags.HasError() &&
		(c.creating || !plan.OAuthClientID.Equal(state.OAuthClientID) || !plan.OAuthClientSecretWOVersion.Equal(state.OAuthClientSecretWOVersion)) {
		proveOperatorClient(ctx, tn, plan.OAuthClientID.ValueString(), c.secret, diags)
	}
	r.checkAPIServerProxy(ctx, c, body, tags, diags)
	proxyChanged := c.creating || !plan.ProxyDefaultTags.Equal(state.ProxyDefaultTags) || !plan.DefaultTags.Equal(state.DefaultTags) ||
		!plan.OAuthClientID.Equal(state.OAuthClientID)
	if diags.HasError() || !clientKnown || !proxyChanged {
		return
	}
	if gaps := proxyTagGaps(doc, proxyTags, clientTags); len(gaps) > 0 {
		diags.AddAttributeWarning(path.Root("proxy_default_tags"), "Proxy Tags Not Owned by the Operator's OAuth Client",
			tagOwnerGapsMessage(gaps, clientTags, "The operator starts without them, but it mints the auth key of each proxy with its OAuth "+
				"client, which can only apply tags that its tags "+tfx.HCLList(clientTags)+" are or own: every exposure, Connector, "+
				"ProxyGroup and egress Service that takes the default proxy tags would get no device."))
	}

	if !plan.Hostname.IsUnknown() && c.changed(plan.Hostname, state.Hostname) {
		hostname := plan.Hostname.ValueString()
		dev, err := tn.FindDeviceByHostname(ctx, hostname)
		if err != nil {
			tfx.APIError(diags, "look for devices named "+hostname, err)
			return
		}
		switch {
		case dev == nil || c.own.has(r, cluster.DeviceID(dev)) || c.own.has(r, dev.ID):
		case c.creating && !dev.ConnectedToControl && len(dev.Tags) > 0:
			// An uninstalled operator leaves its node on the tailnet,
			// offline, and its state in the operator Secret of its
			// namespace: installed there again, it comes back online as
			// the same device.
			diags.AddAttributeWarning(path.Root("hostname"), "Offline Operator Device Taken Over",
				fmt.Sprintf("The offline device %s (%s, tagged %s) already uses the hostname %s. qtail takes it for the node of an "+
					"earlier operator of this cluster: the operator keeps its node in the operator Secret of its namespace, and an "+
					"install in that namespace brings the device back online (qtail then sets its tags to %s). If the device belongs to "+
					"another cluster, remove it from the tailnet first: the new operator's device would get a suffixed MagicDNS name.",
					dev.Name, cluster.DeviceID(dev), tfx.HCLList(dev.Tags), hostname, tfx.HCLList(tags)))
		default:
			diags.AddAttributeError(path.Root("hostname"), "Hostname Already Used on the Tailnet",
				fmt.Sprintf("The device %s (%s, tagged %s) already uses the hostname %s. Each operator needs a hostname of its own, unique "+
					"per cluster, such as tailscale-operator-us-east-1: the operator's device would otherwise get a suffixed MagicDNS name. "+
					"Choose another hostname, or remove that device from the tailnet.",
					dev.Name, cluster.DeviceID(dev), tfx.HCLList(dev.Tags), hostname))
		}
	}
}

// tagOwnerGap is one tagOwners entry the operator needs.
type tagOwnerGap struct {
	tag      string
	declared bool
	// owners is the entry as it must read.
	owners []string
	// reason says what the operator does with the tag.
	reason string
	// near are declared tags that tag may be a typo of.
	near []string
}

// operatorTagGaps lists what tagOwners lacks for the operator's own
// tags: each must be declared.
func operatorTagGaps(doc *policyfile.Document, tags []string) []tagOwnerGap {
	var gaps []tagOwnerGap
	for _, t := range tags {
		if !doc.Get(policyfile.Key{Kind: policyfile.KindTagOwner, Name: t}).Found {
			gaps = append(gaps, tagOwnerGap{tag: t, owners: []string{}, reason: "the operator's own device is tagged with it",
				near: policyfile.Nearest(t, doc.DeclaredNames("tagOwners"), 3)})
		}
	}
	return gaps
}

// proxyTagGaps lists what tagOwners lacks for the proxy tags: each must be
// one of the OAuth client's tags or owned by one of them.
func proxyTagGaps(doc *policyfile.Document, proxyTags, clientTags []string) []tagOwnerGap {
	var gaps []tagOwnerGap
	for _, p := range proxyTags {
		owned, declared, owners := doc.TagOwnedBy(p, clientTags)
		switch {
		case owned:
		case !declared:
			gaps = append(gaps, tagOwnerGap{tag: p, owners: []string{clientTags[0]},
				reason: "the operator tags its proxies with it, so one of its OAuth client's tags must own it",
				near:   policyfile.Nearest(p, doc.DeclaredNames("tagOwners"), 3)})
		default:
			gaps = append(gaps, tagOwnerGap{tag: p, declared: true, owners: append(owners, clientTags[0]),
				reason: fmt.Sprintf("the operator tags its proxies with it, but its owners %s include none of the OAuth client's tags", tfx.HCLList(owners))})
		}
	}
	return gaps
}

// tagOwnerGapsMessage explains the gaps (tagOwners entries for tags),
// what happens without them (consequence), and shows the qtail_tag_owner
// resources that would fill them.
func tagOwnerGapsMessage(gaps []tagOwnerGap, tags []string, consequence string) string {
	var b strings.Builder
	b.WriteString("The tailnet policy file, with the policy changes already planned in this run, lacks these tagOwners entries that the operator " +
		"needs (tags " + tfx.HCLList(tags) + "):\n\n")
	for _, g := range gaps {
		reason := g.reason
		if len(g.near) > 0 {
			reason += "; did you mean " + strings.Join(g.near, " or ") + ", which tagOwners declares?"
		}
		fmt.Fprintf(&b, "  %q: %s  (%s)\n", g.tag, tfx.HCLList(g.owners), reason)
	}
	b.WriteString("\n" + consequence + " Declare them with qtail_tag_owner resources, " +
		"and list those in this resource's depends_on so that they are planned first:\n")
	for _, g := range gaps {
		fmt.Fprintf(&b, "\nresource \"qtail_tag_owner\" %q {\n  tag    = %q\n  owners = %s\n}\n", cluster.TagOwnerResourceName(g.tag), g.tag, tfx.HCLList(g.owners))
	}
	for _, g := range gaps {
		if g.declared {
			fmt.Fprintf(&b, "\n%s is already declared: if that entry was written by hand, adopt it first with\n  terraform import qtail_tag_owner.%s %s\n",
				g.tag, cluster.TagOwnerResourceName(g.tag), g.tag)
		}
	}
	b.WriteString("\nWhen several configurations share this tailnet, declare the tag owners in the one that manages them " +
		"(its platform root), apply it first, and leave them out of this one.")
	return b.String()
}

// checkOAuthClient checks the key given by ID in oauth_client_id: an OAuth
// client, or with workload identity (audience not empty) a federated
// identity whose audience is audience; it exists, is not revoked, has the
// scopes the operator needs, and its tags are or own the operator's tags.
// It returns the key when it passes. A credential that may not read keys
// skips the check (and returns nil).
func checkOAuthClient(ctx context.Context, tn *tailnet.Client, doc *policyfile.Document, id, audience string, tags []string, diags *diag.Diagnostics) *tailnet.Key {
	attr := path.Root("oauth_client_id")
	k, err := tn.GetKey(ctx, id)
	switch {
	case tailnet.IsNotFound(err) && audience != "":
		diags.AddAttributeError(attr, "Federated Identity Not Found", fmt.Sprintf("The tailnet has no federated identity %s. Check "+
			"oauth_client_id: with oauth_audience, it is the ID of a Tailscale federated identity (Settings, Trust credentials).", id))
		return nil
	case tailnet.IsNotFound(err):
		diags.AddAttributeError(attr, "OAuth Client Not Found", fmt.Sprintf("The tailnet has no OAuth client %s. Check oauth_client_id, "+
			"or set create_oauth_client = true to let qtail create a client for this cluster.", id))
		return nil
	case err != nil:
		tflog.Debug(ctx, "could not read the OAuth client; not checked", map[string]any{"oauth_client_id": id, "error": err.Error()})
		what := "OAuth client"
		if audience != "" {
			what = "federated identity"
		}
		diags.AddAttributeWarning(attr, "Operator's OAuth Client Not Checked",
			fmt.Sprintf("qtail could not read the %s %s with the provider's Tailscale credential (%v), so the plan has not checked its "+
				"scopes (the operator needs %s), its tags (they must be or own %s)%s. A client that lacks them lets the operator's "+
				"deployment succeed while its pod crash-loops, and no device comes. Give the provider's credential the oauth_keys:read "+
				"scope (federated_keys:read for a federated identity) to have it checked at plan time.",
				what, id, err, tfx.HCLList(cluster.OperatorOAuthScopes), tfx.HCLList(tags), map[bool]string{true: " or its audience", false: ""}[audience != ""]))
		return nil
	}
	noun := "OAuth client"
	switch {
	case k.KeyType == keyTypeFederated && audience == "":
		diags.AddAttributeError(attr, "Federated Identity Without an Audience",
			fmt.Sprintf("%s is a federated identity, which authenticates with workload identity and has no secret. Set oauth_audience "+
				"to its audience%s (and drop oauth_client_secret_wo and oauth_client_secret_wo_version), or set oauth_client_id to an "+
				"OAuth client.", id, quotedOrEmpty(" ", k.Audience)))
		return nil
	case k.KeyType == keyTypeFederated:
		noun = "federated identity"
		if k.Audience != "" && k.Audience != audience {
			diags.AddAttributeError(path.Root("oauth_audience"), "Audience Not Trusted by the Federated Identity",
				fmt.Sprintf("The federated identity %s accepts tokens for the audience %q, not %q: the operator's token exchange would "+
					"be refused. Set oauth_audience = %q, or change the identity's audience.", id, k.Audience, audience, k.Audience))
			return nil
		}
	case audience != "" && (k.KeyType == "" || k.KeyType == keyTypeClient):
		diags.AddAttributeError(attr, "OAuth Client Given for Workload Identity",
			fmt.Sprintf("%s is an OAuth client, not a federated identity: with oauth_audience, the operator exchanges a service "+
				"account token and uses no secret. Either drop oauth_audience and give the client's secret in oauth_client_secret_wo "+
				"with oauth_client_secret_wo_version, or set oauth_client_id to the ID of a federated identity.", id))
		return nil
	case k.KeyType != "" && k.KeyType != keyTypeClient:
		diags.AddAttributeError(attr, "Not an OAuth Client", fmt.Sprintf("%s is a key of type %q, not an OAuth client or a federated identity. "+
			"Set oauth_client_id to the ID of an OAuth client (or, with oauth_audience, of a federated identity).", id, k.KeyType))
		return nil
	}
	if k.Invalid || !k.Revoked.IsZero() {
		fix := "Create a new OAuth client, then set oauth_client_id, oauth_client_secret_wo and a new oauth_client_secret_wo_version."
		if noun != "OAuth client" {
			fix = "Create a new federated identity, then set oauth_client_id to its ID."
		}
		diags.AddAttributeError(attr, "OAuth Client Revoked", fmt.Sprintf("The %s %s is revoked: the operator could not authenticate with it. %s", noun, id, fix))
		return nil
	}
	if missing := missingOperatorScopes(k.Scopes); len(missing) > 0 {
		diags.AddAttributeError(attr, "OAuth Client Lacks Scopes", lacksScopesMessage(noun, id, k.Scopes, missing))
		return nil
	}
	if noun != "OAuth client" && !subjectFitsOperator(k.Subject) {
		diags.AddAttributeError(attr, "Federated Identity Does Not Trust the Operator's Service Account",
			fmt.Sprintf("The federated identity %s trusts the subject %q, but the operator's token is issued for its service account, "+
				"with the subject system:serviceaccount:<namespace>:%s. Set the identity's subject to "+
				"system:serviceaccount:<namespace of the Helm service>:%s (or system:serviceaccount:*:%s).", id, k.Subject,
				operatorServiceAccount, operatorServiceAccount, operatorServiceAccount))
		return nil
	}
	for _, t := range tags {
		if owned, _, _ := doc.TagOwnedBy(t, k.Tags); !owned {
			diags.AddAttributeError(attr, "OAuth Client Cannot Tag the Operator",
				fmt.Sprintf("The %s %s is tagged %s: it can create devices tagged %s only if one of its tags is %s or owns it in tagOwners. "+
					"Use one tagged %s, or let one of its tags own %s with a qtail_tag_owner.",
					noun, id, tfx.HCLList(k.Tags), t, t, t, t))
			return nil
		}
	}
	return k
}

// operatorServiceAccount is the service account the operator chart runs
// the operator under: the subject of its tokens with workload identity.
const operatorServiceAccount = "operator"

// missingOperatorScopes returns the scopes of cluster.OperatorOAuthScopes
// that granted does not cover.
func missingOperatorScopes(granted []string) []string {
	var missing []string
	for _, s := range cluster.OperatorOAuthScopes {
		if !cluster.ScopeGranted(granted, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// lacksScopesMessage explains that the OAuth client (noun) id, with the
// scopes granted, lacks missing.
func lacksScopesMessage(noun, id string, granted, missing []string) string {
	var login, services []string
	for _, m := range missing {
		if m == "services" {
			services = append(services, m)
		} else {
			login = append(login, m)
		}
	}
	var needs []string
	if len(login) > 0 {
		needs = append(needs, tfx.HCLList(login)+" with write access to log in and mint the auth keys of its proxies")
	}
	if len(services) > 0 {
		w := " with write access"
		if len(login) > 0 {
			w = ""
		}
		needs = append(needs, tfx.HCLList(services)+w+" to create the Tailscale Services of exposures through an ingress ProxyGroup")
	}
	return fmt.Sprintf("The %s %s has the scopes %s; the operator needs %s. Without them the operator's deployment succeeds in "+
		"Qovery, but its pod exits at start (or its proxies never get a device), and nothing tells why. Add the scopes to the %s, "+
		"or use one that has them (or set create_oauth_client = true).", noun, id, tfx.HCLList(granted), strings.Join(needs, ", and "), noun)
}

// subjectFitsOperator reports whether a federated identity's subject can
// match the tokens of the operator's service account,
// system:serviceaccount:<namespace>:operator, in some namespace (the
// subject may hold * wildcards). An empty subject is not checked.
func subjectFitsOperator(subject string) bool {
	if subject == "" {
		return true
	}
	// The namespace is not known at plan: any one will do.
	re := "^" + strings.ReplaceAll(regexp.QuoteMeta(subject), `\*`, ".*") + "$"
	m, err := regexp.Compile(re)
	if err != nil {
		return true
	}
	for _, ns := range []string{"x", "*", "ns-" + strings.Repeat("x", 8)} {
		if m.MatchString("system:serviceaccount:" + ns + ":" + operatorServiceAccount) {
			return true
		}
	}
	// A subject naming its namespace: system:serviceaccount:NS:operator.
	parts := strings.Split(subject, ":")
	return len(parts) == 4 && parts[0] == "system" && parts[1] == "serviceaccount" && (parts[3] == operatorServiceAccount || parts[3] == "*")
}

// Key types of the Tailscale keys API: an OAuth client, a federated
// identity.
const (
	keyTypeClient    = "client"
	keyTypeFederated = "federated"
)

// quotedOrEmpty returns prefix and s quoted, or "" when s is empty.
func quotedOrEmpty(prefix, s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("%s%q", prefix, s)
}

// checkChartSeries warns, when the chart version is new to the plan, about
// a version of no series qtail has checked: the Helm repository publishes
// it (checked later), but qtail cannot tell which values its templates
// read and which kinds its CRDs define.
func checkChartSeries(plan, state *operatorModel, creating bool, diags *diag.Diagnostics) {
	if plan.ChartVersion.IsUnknown() || plan.ChartVersion.IsNull() || (!creating && plan.ChartVersion.Equal(state.ChartVersion)) {
		return
	}
	version := plan.ChartVersion.ValueString()
	if _, known := manifest.LookupOperatorChart(version); known {
		return
	}
	series := manifest.OperatorChartVersions()
	diags.AddAttributeWarning(path.Root("chart_version"), "Chart Version Not Checked by qtail",
		fmt.Sprintf("qtail has checked the %s chart series %s to %s (the Chart versions table of the qtail_operator documentation); "+
			"%s is outside them. qtail applies it with the values it writes for every checked series, and a chart it has not read "+
			"may ignore or refuse some of them: read the chart's release notes, or pin a checked version such as %s.",
			cluster.OperatorChart, series[0].Series, series[len(series)-1].Series, version, series[len(series)-1].Checked))
}

// checkWorkloadIdentityChart checks that the chart version reads
// oauth.audience when oauth_audience is set: an error for a version the
// table knows does not, a warning for a version outside the table.
func checkWorkloadIdentityChart(plan, state *operatorModel, creating bool, diags *diag.Diagnostics) {
	if !plan.workloadIdentity() || plan.ChartVersion.IsUnknown() ||
		(!creating && plan.OAuthAudience.Equal(state.OAuthAudience) && plan.ChartVersion.Equal(state.ChartVersion)) {
		return
	}
	version := plan.ChartVersion.ValueString()
	since := manifest.WorkloadIdentitySince()
	switch supported, known := manifest.SupportsWorkloadIdentity(version); {
	case supported:
	case known:
		diags.AddAttributeError(path.Root("oauth_audience"), "Chart Version Without Workload Identity",
			fmt.Sprintf("The %s chart %s does not read oauth.audience: workload identity needs chart %s or later. Its operator would "+
				"look for a client secret that qtail does not store. Set chart_version to %s or later, or drop oauth_audience and give "+
				"an OAuth client's secret in oauth_client_secret_wo.", cluster.OperatorChart, version, since, since))
	default:
		diags.AddAttributeWarning(path.Root("oauth_audience"), "Workload Identity Not Checked for This Chart Version",
			fmt.Sprintf("qtail has not checked the %s chart %s, so it cannot tell whether it reads oauth.audience (the checked charts "+
				"do from %s on). If it does not, the operator looks for a client secret that qtail does not store, and its deployment fails.",
				cluster.OperatorChart, version, since))
	}
}
