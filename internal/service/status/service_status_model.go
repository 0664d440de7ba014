package status

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type serviceStatusModel struct {
	Name      types.String `tfsdk:"name"`
	Exists    types.Bool   `tfsdk:"exists"`
	Tags      types.List   `tfsdk:"tags"`
	Addresses types.List   `tfsdk:"addresses"`
	Hosts     types.List   `tfsdk:"hosts"`
	Approved  types.Bool   `tfsdk:"approved"`
	Missing   types.List   `tfsdk:"missing"`
}

var serviceHostAttrTypes = map[string]attr.Type{
	"node_id":  types.StringType,
	"hostname": types.StringType,
	"approval": types.StringType,
	"approved": types.BoolType,
}
