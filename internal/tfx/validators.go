package tfx

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// StringCheck is a validator.String made of a rule (its description, such
// as "must be a tag") and a function that returns what is wrong with a
// known value.
type StringCheck struct {
	Rule  string
	Check func(string) error
}

var _ validator.String = StringCheck{}

func (v StringCheck) Description(context.Context) string         { return v.Rule }
func (v StringCheck) MarkdownDescription(context.Context) string { return v.Rule }

func (v StringCheck) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := v.Check(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Value", fmt.Sprintf("%q: %v.", req.ConfigValue.ValueString(), err))
	}
}

// NonBlank refuses an empty or blank string.
func NonBlank() validator.String {
	return StringCheck{Rule: "must not be empty or blank", Check: func(s string) error {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("must not be empty or blank")
		}
		return nil
	}}
}

// HTTPSURL accepts an https:// URL with a host; its error names the kind
// of repository and gives an example.
func HTTPSURL(kind, example string) validator.String {
	return StringCheck{Rule: "must be an https:// URL", Check: func(s string) error {
		u, err := url.Parse(s)
		if err != nil {
			return fmt.Errorf("not a URL: %v", err)
		}
		if u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("qtail and Qovery reach %s over HTTPS only: give an https:// URL with a host, such as %s", kind, example)
		}
		return nil
	}}
}
