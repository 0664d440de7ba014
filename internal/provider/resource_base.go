package provider

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
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
			fmt.Sprintf("The provider handed this resource a %T instead of its settings. Please report this issue to the qtail developers.", req.ProviderData))
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
			fmt.Sprintf("The provider handed this data source a %T instead of its settings. Please report this issue to the qtail developers.", req.ProviderData))
		return
	}
	b.data = d
}

// apiErrorAdvice is what to do about a failed API call that qtail could
// not retry its way through.
const apiErrorAdvice = "qtail has already retried what can be retried (rate limits, server errors, network failures). " +
	"Check the message above, typically a credential that lacks a scope or permission, or an ID that does not exist, " +
	"then run Terraform again."

// apiError adds an error diagnostic for a failed API call: what qtail was
// doing, the API's own words, then what to do.
func apiError(diags *diag.Diagnostics, action string, err error) {
	diags.AddError("Unable to "+titleCase(action), fmt.Sprintf("qtail could not %s.\n\n%s\n\n%s", action, err, apiErrorAdvice))
}

// titleCaseMinor are the words that stay in lower case inside a title:
// articles, short conjunctions and prepositions of three letters or less.
var titleCaseMinor = map[string]bool{
	"a": true, "an": true, "and": true, "as": true, "at": true, "but": true, "by": true, "for": true,
	"in": true, "of": true, "on": true, "or": true, "the": true, "to": true,
}

// titleCase writes a diagnostic summary in Title Case: every word but the
// minor ones starts with a capital letter. Words that are not plain lower
// case words (IDs, tags, names with digits or colons) stay as they are.
func titleCase(s string) string {
	words := strings.Split(s, " ")
	for i, w := range words {
		if w == "" || (i > 0 && titleCaseMinor[w]) || !plainLowerWord(w) {
			continue
		}
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		for j := 1; j < len(r)-1; j++ {
			// allow-all: Allow-All.
			if r[j] == '-' {
				r[j+1] = unicode.ToUpper(r[j+1])
			}
		}
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}

// plainLowerWord reports whether w is made of lower-case letters, with
// apostrophes and inner dashes.
func plainLowerWord(w string) bool {
	for i, c := range w {
		switch {
		case c >= 'a' && c <= 'z':
		case (c == '\'' || c == '-') && i > 0 && i < len(w)-1:
		default:
			return false
		}
	}
	return true
}

// splitImportID splits an import ID made of n parts joined by "/".
func splitImportID(id string, n int, format string) ([]string, diag.Diagnostics) {
	var diags diag.Diagnostics
	parts := strings.Split(id, "/")
	if len(parts) != n {
		diags.AddError("Invalid Import ID", fmt.Sprintf("The import ID %q does not have the form %s. Run the import again with an ID of that form.", id, format))
		return nil, diags
	}
	for _, p := range parts {
		if p == "" {
			diags.AddError("Invalid Import ID", fmt.Sprintf("A part of the import ID %q is empty. Run the import again with an ID of the form %s.", id, format))
			return nil, diags
		}
	}
	return parts, diags
}

// invalidImportID adds the error of an import ID that names nothing qtail
// can import: what was given, what is expected.
func invalidImportID(diags *diag.Diagnostics, id, expected string) {
	diags.AddError("Invalid Import ID", fmt.Sprintf("The import ID %q is not %s. Run the import again with such an ID.", id, expected))
}

// defaultTimeout is how long a resource that waits (for a deployment, a
// device) waits per operation when its timeouts attribute does not say.
const defaultTimeout = 20 * time.Minute

// withTimeout bounds ctx by the duration a timeouts attribute gives for
// one operation (get is its Create, Update or Delete method), or
// defaultTimeout. It also returns that duration, for messages.
func withTimeout(ctx context.Context, get func(context.Context, time.Duration) (time.Duration, diag.Diagnostics),
	diags *diag.Diagnostics) (context.Context, context.CancelFunc, time.Duration) {
	d, dd := get(ctx, defaultTimeout)
	diags.Append(dd...)
	if d <= 0 {
		d = defaultTimeout
	}
	c, cancel := context.WithTimeout(ctx, d)
	return c, cancel, d
}

// onlyTimeoutsChange reports whether an update changes nothing but the
// timeouts attribute: there is nothing to do but to save them.
func onlyTimeoutsChange(req resource.UpdateRequest) bool {
	timeoutsPath := tftypes.NewAttributePath().WithAttributeName("timeouts")
	strip := func(v tftypes.Value) (tftypes.Value, error) {
		return tftypes.Transform(v, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
			if p.Equal(timeoutsPath) {
				return tftypes.NewValue(v.Type(), nil), nil
			}
			return v, nil
		})
	}
	plan, err := strip(req.Plan.Raw)
	if err != nil {
		return false
	}
	state, err := strip(req.State.Raw)
	if err != nil {
		return false
	}
	return plan.Equal(state)
}

// sleep waits for d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// timeoutsAttribute is the `timeouts` attribute of a resource that waits
// (create, update, delete), described for the docs: create, update and del
// say what each operation waits for.
func timeoutsAttribute(ctx context.Context, create, update, del string) schema.Attribute {
	a := timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})
	nested, ok := a.(schema.SingleNestedAttribute)
	if !ok {
		return a
	}
	nested.MarkdownDescription = fmt.Sprintf("How long qtail waits before it gives up, per operation, as a duration such as `30m` or `1h`. "+
		"Each defaults to `%s`.", defaultTimeout)
	for name, text := range map[string]string{"create": create, "update": update, "delete": del} {
		if s, ok := nested.Attributes[name].(schema.StringAttribute); ok {
			s.MarkdownDescription = text
			nested.Attributes[name] = s
		}
	}
	return nested
}
