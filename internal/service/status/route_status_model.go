package status

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

type routeStatusModel struct {
	ConnectorID types.String `tfsdk:"connector_id"`
	DeviceID    types.String `tfsdk:"device_id"`
	Hostname    types.String `tfsdk:"hostname"`
	CheckRoutes types.List   `tfsdk:"check_routes"`
	Routes      types.List   `tfsdk:"routes"`
	Missing     types.List   `tfsdk:"missing"`
	OK          types.Bool   `tfsdk:"ok"`
	Devices     types.List   `tfsdk:"devices"`
}

var (
	routeStatusRouteAttrTypes = map[string]attr.Type{
		"route":         types.StringType,
		"exit_node":     types.BoolType,
		"advertised":    types.BoolType,
		"advertised_by": types.ListType{ElemType: types.StringType},
		"approved":      types.BoolType,
		"approval":      types.StringType,
		"granted":       types.BoolType,
		"granted_by":    types.ListType{ElemType: types.StringType},
	}
	routeStatusDeviceAttrTypes = map[string]attr.Type{
		"hostname":          types.StringType,
		"id":                types.StringType,
		"advertised_routes": types.ListType{ElemType: types.StringType},
		"approved_routes":   types.ListType{ElemType: types.StringType},
	}
)

// The values of the approval attribute.
const (
	approvalAuto   = "auto_approver"
	approvalManual = "manual"
)

func routeResultsValue(results []routeResult, diags *diag.Diagnostics) types.List {
	objType := types.ObjectType{AttrTypes: routeStatusRouteAttrTypes}
	elems := make([]attr.Value, 0, len(results))
	for _, r := range results {
		obj, d := types.ObjectValue(routeStatusRouteAttrTypes, map[string]attr.Value{
			"route":         types.StringValue(r.route),
			"exit_node":     types.BoolValue(r.exitNode),
			"advertised":    types.BoolValue(r.advertised),
			"advertised_by": tfx.StringList(r.advertisedBy),
			"approved":      types.BoolValue(r.approved),
			"approval":      types.StringValue(r.approval),
			"granted":       types.BoolValue(len(r.grantedBy) > 0),
			"granted_by":    tfx.StringList(r.grantedBy),
		})
		diags.Append(d...)
		elems = append(elems, obj)
	}
	v, d := types.ListValue(objType, elems)
	diags.Append(d...)
	return v
}

func routeDevicesValue(s *routeSubject, diags *diag.Diagnostics) types.List {
	objType := types.ObjectType{AttrTypes: routeStatusDeviceAttrTypes}
	var elems []attr.Value
	for _, h := range s.hostnames {
		dev, ok := s.devices[h]
		if !ok {
			continue
		}
		obj, d := types.ObjectValue(routeStatusDeviceAttrTypes, map[string]attr.Value{
			"hostname":          types.StringValue(dev.Hostname),
			"id":                types.StringValue(cluster.DeviceID(dev)),
			"advertised_routes": tfx.StringList(dev.AdvertisedRoutes),
			"approved_routes":   tfx.StringList(dev.EnabledRoutes),
		})
		diags.Append(d...)
		elems = append(elems, obj)
	}
	v, d := types.ListValue(objType, elems)
	diags.Append(d...)
	return v
}
