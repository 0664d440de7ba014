package tfx

// The validators of this file are the domain knowledge of tfx, gathered
// here so that the rest of the package stays free of it: the shape of a
// Qovery ID (QoveryID, IsUUID), of the hostname of a tailnet device
// (DeviceHostname) and of a Tailscale tag (Tag, which asks
// policyfile.ValidTag, so that a plan refuses exactly the tags the policy
// engine would). They live in tfx because they are Terraform validators
// that the schemas of several families use: the lower packages import no
// Terraform module, and a family imports no other family.

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

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
