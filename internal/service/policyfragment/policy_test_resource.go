package policyfragment

import (
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/qtail/terraform-provider-qtail/internal/fragment"
)

var (
	_ resource.Resource                   = &policyTestResource{}
	_ resource.ResourceWithConfigure      = &policyTestResource{}
	_ resource.ResourceWithImportState    = &policyTestResource{}
	_ resource.ResourceWithModifyPlan     = &policyTestResource{}
	_ resource.ResourceWithValidateConfig = &policyTestResource{}
)

// NewPolicyTestResource returns the qtail_policy_test resource, described
// by fragment.PolicyTest.
func NewPolicyTestResource() resource.Resource {
	return &policyTestResource{fragmentResource{kind: fragment.PolicyTest, ext: ownedEntry{}}}
}

type policyTestResource struct {
	fragmentResource
}
