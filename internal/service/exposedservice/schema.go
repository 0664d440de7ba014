package exposedservice

import (
	"context"
	"fmt"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// kubernetesNameRE is a Kubernetes object name (an RFC 1123
// subdomain).
var kubernetesNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

func kubernetesNameValidator(kind string) validator.String {
	return tfx.StringCheck{
		Rule: "must be the name of a Kubernetes " + kind,
		Check: func(s string) error {
			if len(s) <= 253 && kubernetesNameRE.MatchString(s) {
				return nil
			}
			return fmt.Errorf("must be the name of a Kubernetes %s: at most 253 lower-case letters, digits, dashes and dots, "+
				"starting and ending with a letter or digit", kind)
		},
	}
}

// replacingAttributes are the attributes whose change replaces an exposure:
// the workload it exposes, and the tags (Tailscale fixes a device's tags when
// its auth key is created: new tags need a new proxy).
var replacingAttributes = tfx.Replacing{"application_id", "container_id", "tags"}

func (r *exposedServiceResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Puts one Qovery application or container on the tailnet at `HOSTNAME.TAILNET.ts.net` through the Tailscale Kubernetes operator. " +
			"qtail creates a Qovery annotations group (scope `SERVICES`) that annotates the application's Kubernetes Service with " +
			"`tailscale.com/expose = \"true\"` and `tailscale.com/hostname`, attaches it to the application, redeploys the application, " +
			"and waits for the proxy device to join the tailnet with its tags.\n\n" +
			"Every port the application declares becomes reachable from the tailnet (`ports` lists them in the plan); nothing else in the " +
			"cluster does. Who may reach the proxy is decided by the tailnet policy: give the exposure its own tag (`tags`), declare that " +
			"tag in `tagOwners` with `qtail_tag_owner`, and grant a group access to it on the declared ports with `qtail_grant`.\n\n" +
			"The plan refuses, before anything is created, an application without a port, a hostname already used on the tailnet or by " +
			"another exposure, a tag that the operator's tag does not own, and, through an ingress ProxyGroup, a Tailscale Service " +
			"whose hosts no `autoApprovers.services` entry approves.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`APPLICATION_ID/ANNOTATIONS_GROUP_ID`, or `container/CONTAINER_ID/ANNOTATIONS_GROUP_ID` for a container.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"application_id": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "ID of the Qovery application to expose (exactly one of `application_id` and `container_id`). It must " +
					"declare at least one port: without one Qovery creates no Kubernetes Service and the operator has nothing to expose. " +
					"The plan refuses an application to which an attached annotations group gives `tailscale.com/funnel`: exposed, it " +
					"would also be public through Tailscale Funnel. Changing it replaces the exposure.",
				Validators: []validator.String{tfx.QoveryID(),
					stringvalidator.ExactlyOneOf(path.MatchRoot("application_id"), path.MatchRoot("container_id"))},
			},
			"container_id": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "ID of the Qovery container (a service run from a registry's image) to expose, instead of an " +
					"application: qtail attaches the annotations group to the container and redeploys it. It must declare at least one " +
					"port. Changing it replaces the exposure.",
				Validators: []validator.String{tfx.QoveryID(),
					stringvalidator.ExactlyOneOf(path.MatchRoot("application_id"), path.MatchRoot("container_id"))},
			},
			"hostname": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Name of the proxy on the tailnet (`tailscale.com/hostname`): the application answers at " +
					"`HOSTNAME.TAILNET.ts.net`. A DNS label of 1 to 63 lower-case letters, digits and dashes, unique on the tailnet. " +
					"Include the region when the same application runs in several clusters, e.g. `billing-api-us-east-1`.",
				Validators: []validator.String{tfx.DeviceHostname()},
			},
			"tags": schema.SetAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: "Tags of the proxy device (`tailscale.com/tags`). They replace the operator's default proxy tag " +
					"(`tag:k8s`), so that the policy can grant access to this service alone. Each must be owned by the operator's tag " +
					"(`tag:k8s-operator`) in `tagOwners`, or the operator could not create the proxy's auth key: declare it with a " +
					"`qtail_tag_owner` and reference that resource here. The tags are fixed when the proxy's auth key is created, " +
					"so changing them replaces the exposure (a new device).",
				Validators: []validator.Set{
					setvalidator.SizeAtLeast(1),
					setvalidator.ValueStringsAre(tfx.Tag()),
				},
			},
			"proxy_group": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Name of an existing ingress `ProxyGroup` to serve the application through " +
					"(`tailscale.com/proxy-group`), instead of one proxy pod for this service. The service is then a Tailscale Service " +
					"served by the ProxyGroup's devices and has no device of its own, so `wait_for_device` must be `false`. The devices " +
					"carry the Service's traffic once the tailnet approves them as its hosts: the plan checks that " +
					"`autoApprovers.services` does (a `qtail_auto_approver` with `service = \"svc:HOSTNAME\"`), and the apply waits for " +
					"an approved host.",
				Validators: []validator.String{kubernetesNameValidator("ProxyGroup")},
			},
			"proxy_class": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Name of a `ProxyClass` that configures the proxy pod (`tailscale.com/proxy-class`).",
				Validators:          []validator.String{kubernetesNameValidator("ProxyClass")},
			},
			"operator_id": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "ID of the `qtail_operator` whose Tailscale operator serves the " + "exposure" + ", such as `qtail_operator.NAME.id` (the ID of " +
					"the operator's Qovery Helm service). The reference makes Terraform plan and create the operator first, and destroy " +
					"it last: only a running operator removes the devices of what it serves. The plan checks that it is the operator " +
					"of the cluster (or the one this plan installs there). Without it, the checks that need the operator wait for the " +
					"apply when the plan does not show it yet. Changing it changes nothing on the cluster. Left unset by an import.",
				Validators: []validator.String{tfx.QoveryID()},
			},
			"annotations_group_name": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: "Name of the Qovery annotations group. Defaults to `tailscale-HOSTNAME`.",
				Validators:          []validator.String{tfx.NonBlank()},
			},
			"attach": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
				MarkdownDescription: "Attach the annotations group to the application or container. Set `false` when the Qovery " +
					"provider manages the service (`qovery_application` or `qovery_container`): its `annotations_group_ids` owns the list " +
					"of attached groups, so put `annotations_group_id` there instead. qtail then creates and updates the group, does not " +
					"attach it, waits for no device until the group is attached, and warns at plan while it is not. Default `true`.",
			},
			"redeploy": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
				MarkdownDescription: "Redeploy the application after each change, and wait for the deployment: Qovery applies annotations " +
					"only at the next deployment. With `false` the change reaches the cluster at the application's next deployment, " +
					"and `wait_for_device` must be `false`. Default `true`.",
			},
			"wait_for_device": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
				MarkdownDescription: "Wait until the proxy device has joined the tailnet with the expected tags, and until it has left " +
					"when the exposure is destroyed. Default `true`.",
			},
			"timeouts": tfx.TimeoutsAttribute(ctx,
				"Time to create the annotations group, attach it, redeploy the application and wait for the proxy device.",
				"Time to update the annotations group, redeploy the application and wait for the proxy device.",
				"Time to detach the group, redeploy the application, delete the group and wait for the proxy device to leave."),

			"organization_id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "ID of the Qovery organization that owns the annotations group (the application's).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"environment_id": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "ID of the Qovery environment of the application. qtail reads the environment's services to tell " +
					"an application deleted in Qovery (which the API then answers with 403) from one the API token may not read.",
			},
			"annotations_group_id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "ID of the Qovery annotations group.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"annotations": schema.MapAttribute{
				ElementType: types.StringType,
				Computed:    true,
				MarkdownDescription: "The annotations of the group, as qtail writes them. An annotation edited in the Qovery console " +
					"shows here as a change to undo.",
			},
			"attached": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether the annotations group is attached to the application. A group detached in the Qovery " +
					"console shows as a change to `true`: qtail attaches it again and redeploys. With `attach = false` it reports " +
					"whether another tool attached it.",
			},
			"tailnet_fqdn": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "MagicDNS name of the proxy device, e.g. `billing-api-us-east-1.tail4f2a.ts.net`.",
			},
			"device_id": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Node ID of the proxy device. Null while the device is missing: the next apply redeploys the " +
					"application so that the operator creates it again.",
			},
			"tailnet_ips": schema.ListAttribute{
				ElementType:         types.StringType,
				Computed:            true,
				MarkdownDescription: "Tailnet addresses of the proxy device (IPv4 `100.x` and IPv6 `fd7a:115c:a1e0::/48`).",
			},
			"ports": schema.ListNestedAttribute{
				Computed: true,
				MarkdownDescription: "The ports the application declares: **every one of them is reachable from the tailnet** through " +
					"the proxy, as far as the policy allows. Read from Qovery at plan time, so that the plan shows what becomes " +
					"reachable; a port added or removed in the console shows as a change, and the apply redeploys the application.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":                schema.StringAttribute{Computed: true, MarkdownDescription: "Name of the port."},
					"internal_port":       schema.Int64Attribute{Computed: true, MarkdownDescription: "Port number the Service listens on."},
					"protocol":            schema.StringAttribute{Computed: true, MarkdownDescription: "`HTTP`, `GRPC`, `TCP` or `UDP`."},
					"publicly_accessible": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether Qovery also exposes the port on the public internet."},
				}},
			},
		},
	}
	replacingAttributes.AddTo(resp.Schema.Attributes)
}
