package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
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
	conn.ResourceBase
}

func (r *operatorResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_operator"
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

func (r *operatorResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state operatorModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	q, diags := r.Clients.Qovery()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	obs, err := observeOperator(ctx, q, state.ID.ValueString(), state.EnvironmentID.ValueString())
	if qovery.IsNotFound(err) {
		r.readGone(ctx, &state, resp)
		return
	}
	if err != nil {
		tfx.APIError(&resp.Diagnostics, "read the operator's Helm service", err)
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
	if imported && r.Clients.TailnetOrNil() != nil && !state.OAuthClientID.IsNull() {
		// An OAuth client that qtail created carries its description: it
		// stays qtail's to replace and revoke, instead of being left
		// behind when the configuration says create_oauth_client = true.
		k, err := r.Clients.TailnetOrNil().GetKey(ctx, state.OAuthClientID.ValueString())
		if err == nil && k.KeyType == keyTypeClient && strings.HasPrefix(k.Description, oauthClientDescriptionPrefix) {
			state.CreateOAuthClient = types.BoolValue(true)
		}
	}

	if tn := r.Clients.TailnetOrNil(); tn != nil && !state.Hostname.IsNull() {
		tags, _ := tfx.Strings(state.DefaultTags)
		hostname := state.Hostname.ValueString()
		dev, err := lookupOperatorDevice(ctx, tn, state.DeviceID.ValueString(), hostname)
		if err != nil {
			tfx.APIError(&resp.Diagnostics, "look for the operator device on the tailnet", err)
			return
		}
		if dev == nil && !state.DeviceID.IsNull() {
			resp.Diagnostics.AddWarning("Operator Device Gone From the Tailnet",
				fmt.Sprintf("The operator device %s (%s) is no longer on the tailnet (no tagged device named %s). qtail plans to redeploy "+
					"the operator so that it joins again.", hostname, state.DeviceID.ValueString(), hostname))
		}
		if dev != nil {
			if drift := operatorDeviceDrift(dev, hostname, tags); drift != "" {
				resp.Diagnostics.AddWarning("Operator Device Changed on the Tailnet",
					fmt.Sprintf("The operator device is not as configured: %s. qtail plans to redeploy the operator and set the "+
						"device's tags to %s.", drift, tfx.HCLList(tags)))
				dev = nil
			}
		}
		state.setDevice(dev)
	}
	if raw, diags := req.Private.GetKey(ctx, privateReplaced); !diags.HasError() && len(raw) > 0 {
		// A creation that failed: Terraform plans its replacement next.
		r.Clients.Planned().AddFailedOperator(state.ID.ValueString(), state.DeviceID.ValueString())
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

func (r *operatorResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !tfx.IsUUID(req.ID) {
		tfx.InvalidImportID(&resp.Diagnostics, req.ID, "the ID of the operator's Helm service (a UUID)")
		return
	}
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
