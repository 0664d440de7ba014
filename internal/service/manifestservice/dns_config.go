package manifestservice

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var (
	_ resource.Resource                = &dnsConfigResource{}
	_ resource.ResourceWithConfigure   = &dnsConfigResource{}
	_ resource.ResourceWithImportState = &dnsConfigResource{}
	_ resource.ResourceWithModifyPlan  = &dnsConfigResource{}
)

// NewDNSConfigResource returns the qtail_dns_config resource.
func NewDNSConfigResource() resource.Resource {
	r := &dnsConfigResource{}
	r.kind = dnsConfigKind
	r.hooks = r
	return r
}

// dnsConfigResource is the shared lifecycle with nothing added: the
// DNSConfig brings up no device, and its status (the nameserver's IP) is a
// Kubernetes object's, which qtail does not read.
type dnsConfigResource struct {
	manifestResource[dnsConfigModel, *dnsConfigModel]
	noHooks[dnsConfigModel]
}

func (r *dnsConfigResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_dns_config"
}
