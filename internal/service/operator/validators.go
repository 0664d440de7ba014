package operator

import (
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// extraValuesValidator accepts YAML that does not set a key qtail owns.
func extraValuesValidator() validator.String {
	return tfx.StringCheck{Rule: "must be YAML that does not set the keys qtail owns", Check: func(s string) error {
		_, err := manifest.ParseExtraValues(s)
		return err
	}}
}
