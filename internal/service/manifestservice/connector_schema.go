package manifestservice

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// connectorReplacing are the attributes whose change replaces a connector.
var connectorReplacing = tfx.Replacing{"environment_id", "name", "tags"}

func (r *connectorResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := manifestAttributes(ctx, connectorKind, "wait for the connector's devices (and approve their routes)")
	attrs["name"] = schema.StringAttribute{
		Required: true,
		MarkdownDescription: "Name of the `Connector` object (cluster-scoped, so unique per cluster), such as `homelab` or " +
			"`vpc-us-east-1`. The Helm service is named `" + connectorKind.servicePrefix + "NAME`. Changing it replaces the connector.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a Kubernetes name", Check: manifest.CheckKubernetesName}},
	}
	attrs["hostname"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Hostname of the connector's device on the tailnet, for one replica. Without it and without " +
			"`hostname_prefix`, the operator names the device `NAME-connector`. 2 to 63 lower-case letters, digits and dashes. " +
			"Conflicts with `hostname_prefix`, and with `replicas` above 1.",
		Validators: []validator.String{
			tfx.StringCheck{Rule: "a Connector hostname", Check: manifest.CheckConnectorHostname},
			stringvalidator.ConflictsWith(path.MatchRoot("hostname_prefix")),
		},
	}
	attrs["hostname_prefix"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Prefix of the devices' hostnames, required when the connector runs several replicas: replica N " +
			"is `PREFIX-N`, from 0. 1 to 62 lower-case letters, digits and dashes. Conflicts with `hostname`.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a hostname prefix", Check: manifest.CheckHostnamePrefix}},
	}
	attrs["replicas"] = schema.Int64Attribute{
		Optional: true,
		Computed: true,
		Default:  int64default.StaticInt64(1),
		MarkdownDescription: "Number of replicas, each a device advertising the same routes, for high availability. " +
			"From 0 (no device) to 10. `hostname` only with 1; above 1, set `hostname_prefix`. Default `1`.",
		Validators: []validator.Int64{int64validator.Between(0, 10)},
	}
	attrs["subnet_routes"] = schema.ListAttribute{
		ElementType: types.StringType,
		Optional:    true,
		MarkdownDescription: "Routes the connector advertises as a subnet router, such as the VPC or pod CIDR: every address in " +
			"them becomes reachable from the tailnet, subject to grants. Each a CIDR without host bits; no duplicates, no overlaps, " +
			"no default route (`0.0.0.0/0` or `::/0`: set `exit_node` instead). At least one of `subnet_routes` and `exit_node`.",
		Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(tfx.NonBlank())},
	}
	attrs["exit_node"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(false),
		MarkdownDescription: "Whether the connector is also an exit node: its devices advertise `0.0.0.0/0` and `::/0`. " +
			"Default `false`.",
	}
	attrs["approve_routes"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(false),
		MarkdownDescription: "Approve the advertised routes through the Tailscale API once the devices appear, keeping the routes " +
			"already approved. Use it on tailnets without a matching `autoApprovers` entry (see `qtail_auto_approver`). A route " +
			"revoked by hand then shows as a change and is approved again. The provider's Tailscale credential needs the " +
			"`devices:routes` scope. Requires `wait_for_devices`. Default `false`.",
	}
	attrs["wait_for_devices"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(true),
		MarkdownDescription: "Wait, after each deployment, until every replica's device is on the tailnet with the tags and " +
			"advertises the routes. A device gone from the tailnet then shows as a change, and qtail redeploys. Default `true`.",
	}
	attrs["routes_approved"] = schema.BoolAttribute{
		Computed: true,
		MarkdownDescription: "Whether every device has every route of the connector approved. With `approve_routes` it is " +
			"always planned `true`, so a route revoked by hand shows as a change. Use `qtail_route_status` for the full picture " +
			"(approval, grants).",
	}
	addReplicaAttributes(attrs, connectorKind, "Routes the device advertises.")
	connectorReplacing.AddTo(attrs)
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Tailscale `Connector`: a subnet router, an exit node, or both, with one device per replica, " +
			"deployed as a Qovery Helm service on the cluster of a `qtail_operator`.\n\n" +
			"qtail renders the `Connector` into the raw values file of a Helm service whose chart applies the list `manifests` " +
			"(such as `examples/charts/" + cluster.ManifestsChart + "`), with cluster-wide resources allowed (a Connector is " +
			"cluster-scoped). It deploys the service, waits for the devices to join the tailnet with their tags and routes, and " +
			"with `approve_routes` approves the routes.\n\n" +
			"A route works only when four things hold: the connector advertises it, it is approved (by `approve_routes`, an " +
			"`autoApprovers` entry such as `qtail_auto_approver`, or by hand), a grant lets someone reach it (`qtail_grant`), and " +
			"the client accepts routes (`tailscale up --accept-routes` on Linux, outside any API). The data source " +
			"`qtail_route_status` checks the first three.\n\n" +
			"A subnet router makes every address of its routes reachable; when people need one service, `qtail_exposed_service` " +
			"is the narrower choice.",
		Attributes: attrs,
	}
}
