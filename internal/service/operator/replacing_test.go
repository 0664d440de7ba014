package operator

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// TestReplacingAttributes checks that the attributes that require
// replacement in the schema are those that ModifyPlan takes for a
// replacement.
func TestReplacingAttributes(t *testing.T) {
	var resp resource.SchemaResponse
	NewOperatorResource().Schema(context.Background(), resource.SchemaRequest{}, &resp)
	if err := replacingAttributes.Check(context.Background(), resp.Schema); err != nil {
		t.Error(err)
	}
}
