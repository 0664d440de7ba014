package manifestservice

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// TestReplacingAttributes checks that the attributes that require
// replacement in each schema are those that ModifyPlan takes for a
// replacement.
func TestReplacingAttributes(t *testing.T) {
	for name, c := range map[string]struct {
		r    resource.Resource
		list tfx.Replacing
	}{
		"qtail_connector":      {NewConnectorResource(), connectorReplacing},
		"qtail_proxy_group":    {NewProxyGroupResource(), proxyGroupReplacing},
		"qtail_egress_service": {NewEgressServiceResource(), egressServiceReplacing},
		"qtail_dns_config":     {NewDNSConfigResource(), dnsConfigReplacing},
		"qtail_ingress":        {NewIngressResource(), ingressReplacing},
	} {
		var resp resource.SchemaResponse
		c.r.Schema(context.Background(), resource.SchemaRequest{}, &resp)
		if err := c.list.Check(context.Background(), resp.Schema); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
