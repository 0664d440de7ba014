package operator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// The operator's chart declares no readiness or liveness probe: Helm's
// --wait takes a pod that runs for a ready one, so an operator that cannot
// log in (credentials refused, scopes missing, tags it cannot own) is
// reported DEPLOYED by Qovery, and its pod crash-loops with no device.
// What the operator needs is therefore proven before the deploy, against
// the Tailscale API as the operator will use it, and a wait that sees no
// device names the likely cause from what the APIs show.

// kubernetesCapability is the application capability that the API server
// proxy reads, in auth mode, from the grants to the operator's tag: the
// groups it impersonates.
const kubernetesCapability = cluster.KubernetesCapability

// hintTimeout bounds the reads that explain a wait that timed out.
const hintTimeout = 15 * time.Second

// Console pages of the Tailscale admin console.
const (
	adminMachinesURL = "https://login.tailscale.com/admin/machines"
	adminDNSURL      = "https://login.tailscale.com/admin/dns"
	adminTrustURL    = "https://login.tailscale.com/admin/settings/trust-credentials"
)

// proveOperatorClient exchanges the OAuth client id and its secret for an
// access token, as the operator does when it starts, and checks the
// scopes granted. It adds an error and returns false when the operator
// could not log in with them; a failure to ask is a warning.
func proveOperatorClient(ctx context.Context, tn *tailnet.Client, id, secret string, diags *diag.Diagnostics) bool {
	g, err := tn.ProveOAuthClient(ctx, id, secret)
	switch {
	case tailnet.IsCredentialsRefused(err):
		diags.AddAttributeError(path.Root("oauth_client_secret_wo"), "OAuth Client Credentials Refused",
			fmt.Sprintf("The Tailscale API refuses the OAuth client %s with the secret in oauth_client_secret_wo (%v). The operator "+
				"logs in with them when it starts: its deployment would still succeed in Qovery (the chart has no readiness probe), "+
				"while its pod crash-loops and no device comes. Check that oauth_client_secret_wo holds the secret of %s (the admin "+
				"console shows a secret once, when it creates the client: %s), then change oauth_client_secret_wo_version; or set "+
				"create_oauth_client = true.", id, err, id, adminTrustURL))
		return false
	case err != nil:
		diags.AddAttributeWarning(path.Root("oauth_client_secret_wo"), "Operator's OAuth Client Secret Not Checked",
			fmt.Sprintf("qtail could not exchange the OAuth client %s and its secret for an access token (%v), so it has not checked "+
				"that the operator can log in with them. A wrong secret lets the deployment succeed while the operator's pod "+
				"crash-loops.", id, err))
		return true
	}
	if missing := missingOperatorScopes(g.Scopes); len(g.Scopes) > 0 && len(missing) > 0 {
		diags.AddAttributeError(path.Root("oauth_client_id"), "OAuth Client Lacks Scopes", lacksScopesMessage("OAuth client", id, g.Scopes, missing))
		return false
	}
	return true
}

// checkAPIServerProxy checks the prerequisites of the API server proxy
// (api_server_proxy "true" or "noauth") when it is turned on: HTTPS
// certificates enabled on the tailnet (the proxy serves TLS with a
// certificate for its MagicDNS name), from the tailnet settings'
// httpsEnabled; and in auth mode a grant of the kubernetes capability to
// one of the operator's tags, without which every caller is impersonated
// as themselves only (a warning, with the grant to add).
func (r *operatorResource) checkAPIServerProxy(ctx context.Context, c *operatorCheck, policy []byte, tags []string, diags *diag.Diagnostics) {
	plan, state := c.plan, c.state
	if plan.APIServerProxy.IsUnknown() {
		return
	}
	mode := plan.APIServerProxy.ValueString()
	if mode == "false" || mode == "" || (!c.creating && plan.APIServerProxy.Equal(state.APIServerProxy) && plan.DefaultTags.Equal(state.DefaultTags)) {
		return
	}
	at := path.Root("api_server_proxy")
	if !cluster.CheckHTTPS(ctx, r.Clients, diags, cluster.HTTPSNeed{
		At: at,
		Needs: "the API server proxy needs: it serves TLS with the tailnet's certificate for its MagicDNS name, and without " +
			"them kubectl fails with TLS errors",
		Serves: fmt.Sprintf("api_server_proxy = %q makes the operator serve the Kubernetes API on :443 with TLS, from the "+
			"tailnet's certificate for its MagicDNS name", mode),
		Without: "the operator would start and kubectl would fail with TLS errors",
		Fix:     `, or set api_server_proxy = "false"`,
	}) {
		return
	}
	if mode != "true" || len(tags) == 0 {
		return
	}
	found, err := cluster.HasKubernetesGrant(policy, tags)
	if err != nil || found {
		return
	}
	diags.AddAttributeWarning(at, "No Kubernetes Grant for the API Server Proxy",
		fmt.Sprintf("In auth mode, the API server proxy impersonates each caller: as their tailnet identity, or as the groups that "+
			"a grant with the %s capability to the operator's tag names. The tailnet policy file, with the policy changes planned "+
			"in this run, has no such grant to %s, so callers are impersonated as themselves only, and the cluster must bind RBAC "+
			"roles to each tailnet user name. To let a group in, add a grant (and list it in this resource's depends_on):\n\n"+
			"resource \"qtail_grant\" \"kubernetes_read\" {\n  name = \"kubernetes-read\"\n  src  = [\"autogroup:admin\"]\n  dst  = [%q]\n"+
			"  app = jsonencode({\n    %q = [{\n      impersonate = { groups = [\"tailnet-readers\"] }\n    }]\n  })\n}\n\n"+
			"and bind the group in the cluster, for example read-only:\n\n"+
			"kubectl create clusterrolebinding tailnet-readers --clusterrole=view --group=tailnet-readers\n\n"+
			"Without a binding, every request is refused with 403.",
			kubernetesCapability, tfx.HCLList(tags), tags[0], kubernetesCapability))
}

// mintedSlack widens the window in which an auth key counts as minted by
// the deployment: the server's clock is known to about a second, and keys
// are stamped in whole seconds.
const mintedSlack = 5 * time.Second

// mintedKeyHint says whether an auth key of the tailnet tagged tags (the
// operator mints one with its OAuth client before its node logs in) was
// created since the rollout started at since, or "" when the provider's
// credential may not list keys.
func mintedKeyHint(ctx context.Context, tn *tailnet.Client, tags []string, since time.Time) string {
	keys, err := tn.ListKeys(ctx, true)
	if err != nil {
		keys, err = tn.ListKeys(ctx, false)
	}
	if err != nil || since.IsZero() {
		return ""
	}
	for _, k := range keys {
		if (k.KeyType == "auth" || k.KeyType == "") && k.UserID == "" && sameTags(k.Tags, tags) && !k.Created.Before(since.Add(-mintedSlack)) {
			return fmt.Sprintf(" The auth key %s, tagged %s, was minted at %s: the operator logged in to the Tailscale API, but its "+
				"node did not join the tailnet; its pod logs tell why.", k.ID, tfx.HCLList(k.Tags), k.Created.UTC().Format(time.RFC3339))
		}
	}
	return fmt.Sprintf(" No auth key tagged %s was minted since the deployment started: the operator never got as far as minting "+
		"the key of its node (its credentials refused, a scope missing, or tags its OAuth client may not apply).", tfx.HCLList(tags))
}

// deviceHint names, after a wait for the operator device that timed out,
// the likely cause from what the APIs show: Qovery's deployment status,
// whether the OAuth client still logs in, the devices named like the
// operator, and the console pages to open.
func (w *operatorWrite) deviceHint(ctx context.Context, helmID, hostname string, tags []string) string {
	// The wait ended on the operation's deadline: these reads get time
	// of their own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hintTimeout)
	defer cancel()
	var b strings.Builder
	logs := qovery.ConsoleURL
	if env, err := w.q.GetEnvironment(ctx, w.plan.EnvironmentID.ValueString()); err == nil {
		logs = qovery.ConsoleDeploymentURL(env.Organization.ID, env.Project.ID, env.ID, helmID, "")
	}
	if st, err := w.q.GetHelmStatus(ctx, helmID); err == nil {
		fmt.Fprintf(&b, "Qovery reports the Helm service %s, deployment status %s", st.State, st.ServiceDeploymentStatus)
		if st.State == qovery.StateDeployed {
			b.WriteString(": the chart declares no readiness probe, so Helm took the operator's pod for ready once it ran; a pod " +
				"that exits at start (it cannot log in to Tailscale) then crash-loops with no device")
		}
		b.WriteString(".")
	}
	switch {
	case w.creds.workloadIdentity:
		fmt.Fprintf(&b, " The operator exchanges a token of its service account with the federated identity %s: check that the "+
			"identity trusts the cluster's issuer, the subject system:serviceaccount:<namespace>:%s and the audience %q (%s).",
			w.creds.clientID, operatorServiceAccount, w.plan.OAuthAudience.ValueString(), adminTrustURL)
	case w.creds.secret != "":
		if _, err := w.tn.ProveOAuthClient(ctx, w.creds.clientID, w.creds.secret); tailnet.IsCredentialsRefused(err) {
			fmt.Fprintf(&b, " The Tailscale API now refuses the OAuth client %s with the secret qtail stored (%v): the operator "+
				"cannot log in. Give it a valid secret.", w.creds.clientID, err)
		} else if err == nil {
			fmt.Fprintf(&b, " The OAuth client %s logs in: look for tags it may not apply (its tags must be or own %s) and for "+
				"the operator's pod logs.", w.creds.clientID, tfx.HCLList(tags))
		}
	}
	b.WriteString(mintedKeyHint(ctx, w.tn, tags, w.rolloutStart))
	if devs, err := w.tn.ListDevices(ctx, tailnet.ListDevicesOptions{}); err == nil {
		for _, d := range devs {
			if d.Hostname == hostname || strings.HasPrefix(d.Hostname, hostname+"-") {
				state := "offline"
				if d.ConnectedToControl {
					state = "online"
				}
				fmt.Fprintf(&b, " The device %s (%s, tagged %s) is %s.", d.Hostname, cluster.DeviceID(&d), tfx.HCLList(d.Tags), state)
			}
		}
	}
	fmt.Fprintf(&b, " Open the operator's pod logs in the Qovery console (the Helm service, %s) and the machines page of "+
		"the Tailscale admin console (%s).", logs, adminMachinesURL)
	return strings.TrimSpace(b.String())
}
