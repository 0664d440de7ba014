package status

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// routeStatusInputs are the attributes of which exactly one names what to
// check.
var routeStatusInputs = []string{"connector_id", "device_id", "hostname"}

func (d *routeStatusDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Whether the routes of a connector (or of any device) work, and what to do about those that do not.\n\n" +
			"A route works only when four things hold:\n\n" +
			"1. the device advertises it (the `Connector`'s `advertiseRoutes`, or `exitNode` for `0.0.0.0/0` and `::/0`);\n" +
			"2. it is approved on the device: by an `autoApprovers` entry for the device's tag (`qtail_auto_approver`), by " +
			"`approve_routes` of `qtail_connector`, or by hand in the admin console;\n" +
			"3. a grant or an ACL of the policy file lets someone reach it (`qtail_grant`): approving a route and allowing " +
			"access to it are separate layers;\n" +
			"4. the client accepts routes: `tailscale up --accept-routes` (or `tailscale set --accept-routes`) on Linux, the " +
			"default on the other platforms.\n\n" +
			"This data source checks the first three through the Tailscale API. **The fourth is a setting of each client that no " +
			"API shows: check it on the machines that use the routes.** Each unmet condition is a sentence in `missing` that says " +
			"what to do; `ok` is true when there is none.\n\n" +
			"Reading costs one call per API object: the connector's Helm service (with `connector_id`; for a connector without " +
			"tags, the lookup of its cluster's operator too), the devices (one list), " +
			"and the policy file, read once per provider run and shared with every other qtail policy read.",
		Attributes: map[string]schema.Attribute{
			"connector_id": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "ID of a `qtail_connector` (its Qovery Helm service). The routes checked are the connector's " +
					"subnet routes, then `0.0.0.0/0` and `::/0` when it is an exit node, on each of its devices. Exactly one of " +
					"`connector_id`, `device_id` and `hostname`.",
				Validators: []validator.String{tfx.QoveryID()},
			},
			"device_id": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Node ID (or legacy ID) of a device. The routes checked are those it advertises, then those " +
					"approved without being advertised. Exactly one of `connector_id`, `device_id` and `hostname`.",
				Validators: []validator.String{tfx.NonBlank()},
			},
			"hostname": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Hostname of a device (the machine name, not the MagicDNS name); the routes checked are " +
					"chosen as with `device_id`. Exactly one of `connector_id`, `device_id` and `hostname`.",
				Validators: []validator.String{tfx.NonBlank()},
			},
			"check_routes": schema.ListAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: "Routes to check instead of the default ones, in this order, such as `[\"10.20.0.0/16\"]`. " +
					"Each a CIDR in canonical form.",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(tfx.StringCheck{Rule: "must be a CIDR in canonical form", Check: policyfile.ValidCanonicalCIDR}),
				},
			},
			"routes": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "One entry per route checked, in the order of `check_routes`, of the connector's configuration, or of the device's routes.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"route": schema.StringAttribute{
						Computed:            true,
						MarkdownDescription: "The route, a CIDR.",
					},
					"exit_node": schema.BoolAttribute{
						Computed:            true,
						MarkdownDescription: "Whether the route is an exit node route, `0.0.0.0/0` or `::/0`.",
					},
					"advertised": schema.BoolAttribute{
						Computed:            true,
						MarkdownDescription: "Whether every device that should carry the route advertises it (false when none is on the tailnet).",
					},
					"advertised_by": schema.ListAttribute{
						ElementType:         types.StringType,
						Computed:            true,
						MarkdownDescription: "Hostnames of the devices that advertise the route.",
					},
					"approved": schema.BoolAttribute{
						Computed:            true,
						MarkdownDescription: "Whether the route is approved (enabled) on every device that should carry it (false when none is on the tailnet).",
					},
					"approval": schema.StringAttribute{
						Computed: true,
						MarkdownDescription: "How the route is approved: `auto_approver` when the policy file's `autoApprovers` approve it " +
							"for every device (`routes` with a CIDR that contains it, or `exitNode` for exit node routes, listing the " +
							"device's tag, `autogroup:tagged`, or for a device of a user the user, a group or `autogroup:member`), " +
							"`manual` when it is approved on every device but some device has no such approver, and an empty " +
							"string when it is not approved.",
					},
					"granted": schema.BoolAttribute{
						Computed: true,
						MarkdownDescription: "Whether a grant or an ACL lets someone reach the route: one with `*` in `dst`, an IP " +
							"or a CIDR that overlaps the route (written as such or through `hosts`), or for an exit node route " +
							"`autogroup:internet`.",
					},
					"granted_by": schema.ListAttribute{
						ElementType: types.StringType,
						Computed:    true,
						MarkdownDescription: "The grants and ACLs that let someone reach the route, such as `grants[3]`, `acls[0]`, " +
							"or `grants[4] (grant \"ops-to-lan\")` for a `qtail_grant`.",
					},
				}},
			},
			"missing": schema.ListAttribute{
				ElementType: types.StringType,
				Computed:    true,
				MarkdownDescription: "One sentence per unmet condition (a device of the connector not on the tailnet, a route not " +
					"advertised, not approved or not granted), each saying what to do. Empty when the routes work as far as the " +
					"API can tell.",
			},
			"ok": schema.BoolAttribute{
				Computed:            true,
				MarkdownDescription: "Whether `missing` is empty. Whether clients accept routes is not part of it.",
			},
			"devices": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The devices checked that are on the tailnet: the connector's, in replica order, or the one device.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"hostname": schema.StringAttribute{Computed: true, MarkdownDescription: "Hostname of the device."},
					"id":       schema.StringAttribute{Computed: true, MarkdownDescription: "Node ID of the device."},
					"advertised_routes": schema.ListAttribute{
						ElementType: types.StringType, Computed: true,
						MarkdownDescription: "Routes the device advertises.",
					},
					"approved_routes": schema.ListAttribute{
						ElementType: types.StringType, Computed: true,
						MarkdownDescription: "Routes approved (enabled) on the device.",
					},
				}},
			},
		},
	}
}

func (d *routeStatusDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var m routeStatusModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	values := []types.String{m.ConnectorID, m.DeviceID, m.Hostname}
	var set []string
	for i, v := range values {
		if v.IsUnknown() {
			return // known at apply time only
		}
		if !v.IsNull() {
			set = append(set, routeStatusInputs[i])
		}
	}
	switch {
	case len(set) == 0:
		resp.Diagnostics.AddAttributeError(path.Root("connector_id"), "Missing Route Source",
			"Set one of connector_id (the id of a qtail_connector), device_id or hostname (a device of the tailnet): "+
				"it says whose routes to check.")
	case len(set) > 1:
		for _, name := range set[1:] {
			resp.Diagnostics.AddAttributeError(path.Root(name), "Conflicting Route Sources",
				fmt.Sprintf("%s cannot be set with %s: set only one of connector_id, device_id and hostname.", name, set[0]))
		}
	}
}
