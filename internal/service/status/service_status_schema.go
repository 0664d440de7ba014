package status

import (
	"context"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// serviceNameRE is a Tailscale Service name: svc: and a DNS label.
var serviceNameRE = regexp.MustCompile(`^svc:[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

func (d *serviceStatusDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The hosts of a Tailscale Service and whether each is approved: whether the Service carries " +
			"traffic.\n\n" +
			"An application exposed through an ingress ProxyGroup (`qtail_exposed_service` with `proxy_group`) is the " +
			"Tailscale Service `svc:HOSTNAME`, hosted by the ProxyGroup's devices. Each of them advertises the Service, but " +
			"carries its traffic only once it is approved: by an `autoApprovers.services` entry of the policy file (a " +
			"`qtail_auto_approver` with `service`) that names the Service, or one of its tags, with one of the device's tags " +
			"among its approvers, or by an admin in the console.\n\n" +
			"Reading costs two calls (the Service, and its hosts) and one per host that is not approved (its tags).",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The Tailscale Service, `svc:` and a DNS label, such as `svc:billing-api` for an " +
					"application exposed through an ingress ProxyGroup at the hostname `billing-api`.",
				Validators: []validator.String{stringvalidator.RegexMatches(serviceNameRE,
					"must be svc: followed by a DNS label (lower-case letters, digits and dashes)")},
			},
			"exists": schema.BoolAttribute{
				Computed:            true,
				MarkdownDescription: "Whether the tailnet has the Service. When it has none, every other attribute is empty.",
			},
			"tags": schema.ListAttribute{
				ElementType:         types.StringType,
				Computed:            true,
				MarkdownDescription: "Tags of the Service, which `autoApprovers.services` entries named after a tag match.",
			},
			"addresses": schema.ListAttribute{
				ElementType:         types.StringType,
				Computed:            true,
				MarkdownDescription: "The Service's tailnet addresses, IPv4 first.",
			},
			"hosts": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The devices that advertise the Service, in the order the API lists them.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"node_id": schema.StringAttribute{
						Computed:            true,
						MarkdownDescription: "Stable node ID of the device.",
					},
					"hostname": schema.StringAttribute{
						Computed:            true,
						MarkdownDescription: "Hostname of the device.",
					},
					"approval": schema.StringAttribute{
						Computed: true,
						MarkdownDescription: "How the device is approved as a host: `approved:auto` (by `autoApprovers.services`), " +
							"`approved:manual` (by an admin) or `not-approved`.",
					},
					"approved": schema.BoolAttribute{
						Computed:            true,
						MarkdownDescription: "Whether the device carries the Service's traffic.",
					},
				}},
			},
			"approved": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether the Service exists and one of its hosts is approved: whether the Service carries " +
					"traffic.",
			},
			"missing": schema.ListAttribute{
				ElementType: types.StringType,
				Computed:    true,
				MarkdownDescription: "One sentence per problem (no such Service, no host, hosts advertised but not approved), " +
					"each saying what to do, with the `qtail_auto_approver` to add. Empty when every host is approved.",
			},
		},
	}
}
