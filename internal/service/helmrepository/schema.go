package helmrepository

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// replacingAttributes are the attributes whose change replaces the
// repository.
var replacingAttributes = tfx.Replacing{"organization_id"}

func (r *helmRepositoryResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An organization Helm repository in Qovery (kind `HTTPS`) that serves the Tailscale operator chart. " +
			"It defaults to Tailscale's stable channel; the `unstable` channel is refused unless `allow_unstable = true`, " +
			"so that it stays out of production by accident.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "ID of the Helm repository in Qovery.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"organization_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "ID of the Qovery organization that owns the repository. Changing it replaces the repository.",
				Validators:          []validator.String{tfx.QoveryID()},
			},
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the repository, unique within the organization.",
				Validators:          []validator.String{tfx.NonBlank()},
			},
			"url": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(cluster.StableChartsURL),
				MarkdownDescription: "HTTPS URL of the chart repository. Defaults to Tailscale's stable channel, `" + cluster.StableChartsURL +
					"`. The unstable channel, `" + cluster.UnstableChartsURL + "`, needs `allow_unstable = true`.",
				Validators: []validator.String{tfx.HTTPSURL("Helm chart repositories", cluster.StableChartsURL)},
			},
			"allow_unstable": schema.BoolAttribute{
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
				MarkdownDescription: "Allow Tailscale's unstable chart channel. Keep it out of production. Default `false`.",
			},
			"skip_tls_verification": schema.BoolAttribute{
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
				MarkdownDescription: "Skip TLS certificate verification when Qovery pulls from the repository. Default `false`.",
			},
		},
	}
	replacingAttributes.AddTo(resp.Schema.Attributes)
}
