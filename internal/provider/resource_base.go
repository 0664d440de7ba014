package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// resourceBase gives every resource the provider data through Configure.
type resourceBase struct {
	data *providerData
}

func (b *resourceBase) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	// Terraform calls Configure before the provider is configured too: the
	// provider data is then nil.
	if req.ProviderData == nil {
		return
	}
	d, ok := req.ProviderData.(*providerData)
	if !ok {
		resp.Diagnostics.AddError("Unexpected Resource Configure Type",
			fmt.Sprintf("Expected *providerData, got %T. Please report this issue to the qtail developers.", req.ProviderData))
		return
	}
	b.data = d
}

// configured reports whether the provider data is there; it is not while
// Terraform validates a configuration before configuring the provider.
func (b *resourceBase) configured() bool { return b.data != nil }

// dataSourceBase gives every data source the provider data.
type dataSourceBase struct {
	data *providerData
}

func (b *dataSourceBase) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	if req.ProviderData == nil {
		return
	}
	d, ok := req.ProviderData.(*providerData)
	if !ok {
		resp.Diagnostics.AddError("Unexpected Data Source Configure Type",
			fmt.Sprintf("Expected *providerData, got %T. Please report this issue to the qtail developers.", req.ProviderData))
		return
	}
	b.data = d
}

// apiError adds an error diagnostic for a failed API call: what qtail was
// doing, then the API's own words.
func apiError(diags *diag.Diagnostics, action string, err error) {
	diags.AddError("Unable to "+action, fmt.Sprintf("qtail could not %s.\n\n%s", action, err))
}

// splitImportID splits an import ID made of n parts joined by "/".
func splitImportID(id string, n int, format string) ([]string, diag.Diagnostics) {
	var diags diag.Diagnostics
	parts := strings.Split(id, "/")
	if len(parts) != n {
		diags.AddError("Invalid import ID", fmt.Sprintf("Expected an import ID of the form %s, got %q.", format, id))
		return nil, diags
	}
	for _, p := range parts {
		if p == "" {
			diags.AddError("Invalid import ID", fmt.Sprintf("Expected an import ID of the form %s, got %q: a part is empty.", format, id))
			return nil, diags
		}
	}
	return parts, diags
}

// timeoutsAttribute is the `timeouts` attribute of a resource that waits
// (create, update, delete), described for the docs. what says what each
// operation waits for.
func timeoutsAttribute(ctx context.Context, def time.Duration, create, update, del string) schema.Attribute {
	a := timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})
	nested, ok := a.(schema.SingleNestedAttribute)
	if !ok {
		return a
	}
	nested.MarkdownDescription = fmt.Sprintf("How long qtail waits before it gives up, per operation, as a duration such as `30m` or `1h`. "+
		"Each defaults to `%s`.", def)
	for name, text := range map[string]string{"create": create, "update": update, "delete": del} {
		if s, ok := nested.Attributes[name].(schema.StringAttribute); ok {
			s.MarkdownDescription = text
			nested.Attributes[name] = s
		}
	}
	return nested
}
