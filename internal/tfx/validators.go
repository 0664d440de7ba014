package tfx

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
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

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// IsUUID reports whether s is a UUID, the form of every Qovery ID.
func IsUUID(s string) bool { return uuidRE.MatchString(s) }

// QoveryID accepts a Qovery ID (a UUID).
func QoveryID() validator.String {
	return stringvalidator.RegexMatches(uuidRE, "must be a Qovery ID (a UUID such as 3fa85f64-5717-4562-b3fc-2c963f66afa6)")
}

// deviceHostnameRE is a DNS label in lower case, as a tailnet device name.
var deviceHostnameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// DeviceHostname accepts the hostname of a tailnet device that qtail
// brings up: a DNS label of 1 to 63 lower-case letters, digits and dashes,
// starting and ending with a letter or a digit.
func DeviceHostname() validator.String {
	return StringCheck{Rule: "must be a DNS label: 1 to 63 lower-case letters, digits and dashes", Check: func(s string) error {
		if deviceHostnameRE.MatchString(s) {
			return nil
		}
		if deviceHostnameRE.MatchString(strings.ToLower(s)) {
			return fmt.Errorf("use lower case (%q): MagicDNS names are lower case, so the name in the configuration is the name on the tailnet", strings.ToLower(s))
		}
		return fmt.Errorf("a device hostname must be a DNS label: 1 to 63 lower-case letters, digits and dashes, " +
			"starting and ending with a letter or a digit (for example billing-api-us-east-1)")
	}}
}

// Tag accepts a Tailscale tag such as tag:k8s-operator.
func Tag() validator.String {
	return StringCheck{Rule: "must be a Tailscale tag such as tag:k8s", Check: policyfile.ValidTag}
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
