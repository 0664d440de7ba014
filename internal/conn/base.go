package conn

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
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
	b.Clients = clientsOf(req.ProviderData, "Resource", &resp.Diagnostics)
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
	b.Clients = clientsOf(req.ProviderData, "Data Source", &resp.Diagnostics)
}

// clientsOf returns the Clients that the provider hands to a resource or a
// data source (kind, in Title Case), or nil: Terraform calls Configure
// before it configures the provider too, with no provider data.
func clientsOf(data any, kind string, diags *diag.Diagnostics) *Clients {
	if data == nil {
		return nil
	}
	c, ok := data.(*Clients)
	if !ok {
		diags.AddError("Unexpected "+kind+" Configure Type",
			fmt.Sprintf("The provider handed this %s a %T instead of its settings. Please report this issue to the qtail developers.",
				strings.ToLower(kind), data))
	}
	return c
}
