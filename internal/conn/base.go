package conn

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// ResourceBase gives a resource the provider's Clients through Configure.
// Resources embed it.
type ResourceBase struct {
	// Clients is nil until Terraform configures the provider.
	Clients *Clients
}

// Configure receives the provider's Clients.
func (b *ResourceBase) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	// Terraform calls Configure before the provider is configured too: the
	// provider data is then nil.
	if req.ProviderData == nil {
		return
	}
	c, ok := req.ProviderData.(*Clients)
	if !ok {
		resp.Diagnostics.AddError("Unexpected Resource Configure Type",
			fmt.Sprintf("The provider handed this resource a %T instead of its settings. Please report this issue to the qtail developers.", req.ProviderData))
		return
	}
	b.Clients = c
}

// Configured reports whether the Clients are there; they are not while
// Terraform validates a configuration before configuring the provider.
func (b *ResourceBase) Configured() bool { return b.Clients != nil }

// DataSourceBase gives a data source the provider's Clients.
type DataSourceBase struct {
	Clients *Clients
}

// Configure receives the provider's Clients.
func (b *DataSourceBase) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	if req.ProviderData == nil {
		return
	}
	c, ok := req.ProviderData.(*Clients)
	if !ok {
		resp.Diagnostics.AddError("Unexpected Data Source Configure Type",
			fmt.Sprintf("The provider handed this data source a %T instead of its settings. Please report this issue to the qtail developers.", req.ProviderData))
		return
	}
	b.Clients = c
}
