package status

import (
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type deviceDataSourceModel struct {
	Hostname  types.String `tfsdk:"hostname"`
	ID        types.String `tfsdk:"id"`
	FQDN      types.String `tfsdk:"fqdn"`
	Addresses types.List   `tfsdk:"addresses"`
	Tags      types.Set    `tfsdk:"tags"`
	Connected types.Bool   `tfsdk:"connected"`
}
