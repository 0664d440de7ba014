package policyfragment

import (
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/qtail/terraform-provider-qtail/internal/fragment"
)

var (
	_ resource.Resource                   = &tagOwnerResource{}
	_ resource.ResourceWithConfigure      = &tagOwnerResource{}
	_ resource.ResourceWithImportState    = &tagOwnerResource{}
	_ resource.ResourceWithModifyPlan     = &tagOwnerResource{}
	_ resource.ResourceWithValidateConfig = &tagOwnerResource{}
)

// NewTagOwnerResource returns the qtail_tag_owner resource, described by
// fragment.TagOwner.
func NewTagOwnerResource() resource.Resource {
	return &tagOwnerResource{fragmentResource{kind: fragment.TagOwner, ext: ownedEntry{}}}
}

type tagOwnerResource struct {
	fragmentResource
}
