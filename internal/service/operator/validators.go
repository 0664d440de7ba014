package operator

import (
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// extraValuesValidator accepts YAML that does not set a key qtail owns.
func extraValuesValidator() validator.String {
	return tfx.StringCheck{Rule: "must be YAML that does not set the keys qtail owns", Check: func(s string) error {
		_, err := manifest.ParseExtraValues(s)
		return err
	}}
}

// validateWorkloadIdentity checks the credentials that go with
// oauth_audience: oauth_client_id (the federated identity), and no client
// secret. Each error is on oauth_audience.
func validateWorkloadIdentity(hasID, hasSecret, hasVersion bool, diags *diag.Diagnostics) {
	at := path.Root("oauth_audience")
	if !hasID {
		diags.AddAttributeError(at, "Missing Federated Identity",
			"oauth_audience needs oauth_client_id: the ID of the Tailscale federated identity that trusts the cluster's service "+
				"account tokens for this audience.")
	}
	for _, a := range []struct {
		name string
		set  bool
	}{{"oauth_client_secret_wo", hasSecret}, {"oauth_client_secret_wo_version", hasVersion}} {
		if a.set {
			diags.AddAttributeError(at, "Conflicting OAuth Client Settings",
				"oauth_audience cannot be set with "+a.name+": with workload identity the operator exchanges a service account token "+
					"and no secret is stored. Drop "+a.name+", or drop oauth_audience to use an OAuth client with its secret.")
		}
	}
}
