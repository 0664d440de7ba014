package status

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type egressStatusModel struct {
	EgressServiceID types.String `tfsdk:"egress_service_id"`
	SourceTags      types.List   `tfsdk:"source_tags"`
	Target          types.String `tfsdk:"target"`
	TargetDeviceID  types.String `tfsdk:"target_device_id"`
	TargetAddresses types.List   `tfsdk:"target_addresses"`
	Ports           types.List   `tfsdk:"ports"`
	Allowed         types.Bool   `tfsdk:"allowed"`
	Missing         types.List   `tfsdk:"missing"`
}

var egressStatusPortAttrTypes = map[string]attr.Type{
	"port":    types.StringType,
	"allowed": types.BoolType,
}
