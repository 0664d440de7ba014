package tfx

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// SplitImportID splits an import ID made of n parts joined by "/"; format
// names the parts for the error, such as "APPLICATION_ID/GROUP_ID".
func SplitImportID(id string, n int, format string) ([]string, diag.Diagnostics) {
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

// InvalidImportID adds the error of an import ID that names nothing qtail
// can import: what was given, what is expected.
func InvalidImportID(diags *diag.Diagnostics, id, expected string) {
	diags.AddError("Invalid Import ID", fmt.Sprintf("The import ID %q is not %s. Run the import again with such an ID.", id, expected))
}
