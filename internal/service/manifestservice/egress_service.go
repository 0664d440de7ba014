package manifestservice

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ resource.Resource                   = &egressServiceResource{}
	_ resource.ResourceWithConfigure      = &egressServiceResource{}
	_ resource.ResourceWithImportState    = &egressServiceResource{}
	_ resource.ResourceWithValidateConfig = &egressServiceResource{}
	_ resource.ResourceWithModifyPlan     = &egressServiceResource{}
)

// NewEgressServiceResource returns the qtail_egress_service resource.
func NewEgressServiceResource() resource.Resource {
	r := &egressServiceResource{}
	r.kind = egressKind
	r.hooks = r.lifecycleHooks()
	return r
}

type egressServiceResource struct {
	manifestResource[egressServiceModel, *egressServiceModel]
}

type egressServiceModel struct {
	manifestServiceModel
	Name           types.String `tfsdk:"name"`
	TailnetFQDN    types.String `tfsdk:"tailnet_fqdn"`
	TailnetIP      types.String `tfsdk:"tailnet_ip"`
	Ports          types.List   `tfsdk:"ports"`
	ProxyGroup     types.String `tfsdk:"proxy_group"`
	Hostname       types.String `tfsdk:"hostname"`
	Tags           types.List   `tfsdk:"tags"`
	ProxyClass     types.String `tfsdk:"proxy_class"`
	WaitForDevice  types.Bool   `tfsdk:"wait_for_device"`
	Namespace      types.String `tfsdk:"namespace"`
	ClusterDNSName types.String `tfsdk:"cluster_dns_name"`
	ProxyHostname  types.String `tfsdk:"proxy_hostname"`
	ProxyTags      types.List   `tfsdk:"proxy_tags"`
	Devices        types.List   `tfsdk:"devices"`
}

// The namespace of an egress Service is the namespace Qovery deploys the
// environment's services to. Qovery's API has no namespace field on
// environments, but every service sees it in a built-in variable (the
// Qovery console reads it there too).
const namespaceVariable = "QOVERY_KUBERNETES_NAMESPACE_NAME"

// clusterDomain is the DNS domain of the clusters Qovery runs.
const clusterDomain = "svc.cluster.local"

func (r *egressServiceResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_egress_service"
}

func (r *egressServiceResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := manifestAttributes(ctx, egressKind, "wait for the deployment to end")
	attrs["name"] = schema.StringAttribute{
		Required: true,
		MarkdownDescription: "Name of the Kubernetes `Service`, such as `db`: 1 to 63 lower-case letters, digits and `-`, starting " +
			"with a letter and ending with a letter or a digit (an RFC 1035 label). Workloads reach the tailnet machine at " +
			"`NAME.NAMESPACE." + clusterDomain + "`. The Helm service is named `" + egressKind.servicePrefix + "NAME`. Changing it " +
			"replaces the egress Service.",
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		Validators:    []validator.String{tfx.StringCheck{Rule: "a Service name", Check: manifest.CheckServiceName}},
	}
	attrs["tailnet_fqdn"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "MagicDNS name of the tailnet machine to reach, such as `db.tail1234.ts.net`: the annotation `" +
			manifest.AnnotationTailnetFQDN + "`. A DNS name with at least one dot; a trailing dot is allowed and kept as written. " +
			"The operator only accepts the form `MACHINE.TAILNET.ts.net`. Exactly one of `tailnet_fqdn` and `tailnet_ip`; " +
			"switching between them updates the Service in place.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a DNS name", Check: checkTailnetFQDN}},
	}
	attrs["tailnet_ip"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Tailscale IP address (IPv4 or IPv6) of the tailnet machine to reach, such as `100.101.102.103`: the " +
			"annotation `" + manifest.AnnotationTailnetIP + "`. Exactly one of `tailnet_fqdn` and `tailnet_ip`.",
		Validators: []validator.String{tfx.StringCheck{Rule: "an IP address", Check: checkTailnetIP}},
	}
	attrs["ports"] = schema.ListAttribute{
		ElementType: types.StringType,
		Optional:    true,
		MarkdownDescription: "Ports of the Service, each `PROTOCOL:PORT` with the protocol `tcp` or `udp` and a port from 1 to " +
			"65535, such as `[\"tcp:5432\"]`; no duplicates. Each becomes a Service port named like `tcp-5432`. Required with " +
			"`proxy_group`, as the operator requires; without a ProxyGroup the egress proxy forwards every port and `ports` " +
			"only documents them.",
		Validators: []validator.List{
			listvalidator.SizeAtLeast(1),
			listvalidator.ValueStringsAre(tfx.StringCheck{Rule: "a port such as tcp:5432", Check: checkServicePort}),
		},
	}
	attrs["proxy_group"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Name of a `ProxyGroup` of type `egress` on the cluster: the Service then goes through the " +
			"ProxyGroup's replicas instead of a proxy of its own (the annotation `" + manifest.AnnotationProxyGroup + "`). " +
			"Requires `ports`.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a Kubernetes name", Check: manifest.CheckKubernetesName}},
	}
	attrs["hostname"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Hostname of the Service's egress proxy device on the tailnet (the annotation `" + manifest.AnnotationHostname +
			"`). Without it the operator names the device `NAMESPACE-NAME`. A DNS label: 1 to 63 lower-case letters, digits and " +
			"dashes. A change renames the same device. Conflicts with `proxy_group`, whose devices carry the traffic instead.",
		Validators: []validator.String{tfx.DeviceHostname(), stringvalidator.ConflictsWith(path.MatchRoot("proxy_group"))},
	}
	attrs["tags"] = schema.ListAttribute{
		ElementType: types.StringType,
		Optional:    true,
		MarkdownDescription: "Tags of the egress proxy device (the annotation `" + manifest.AnnotationTags + "`). Without them the " +
			"device gets the operator's proxy tags (`proxy_default_tags` of the `qtail_operator`). The operator mints the proxy's auth " +
			"key with its OAuth client, which must own each tag (the plan checks it). The tags are set when the device is created, so " +
			"changing them replaces the egress Service. Conflicts with `proxy_group`.",
		PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
		Validators: []validator.List{
			listvalidator.SizeAtLeast(1),
			listvalidator.UniqueValues(),
			listvalidator.ValueStringsAre(tfx.StringCheck{Rule: "a tag", Check: manifest.CheckTag}),
			listvalidator.ConflictsWith(path.MatchRoot("proxy_group")),
		},
	}
	attrs["proxy_class"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Name of a `ProxyClass` for the egress proxy's pod (the annotation `" + manifest.AnnotationProxyClass +
			"`); without it, the operator's default (`proxyConfig.defaultProxyClass`). The operator brings up no proxy until the " +
			"ProxyClass is Ready: the plan refuses one that no Helm service of the cluster renders.",
		Validators: []validator.String{tfx.StringCheck{Rule: "a Kubernetes name", Check: manifest.CheckKubernetesName}},
	}
	attrs["wait_for_device"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(true),
		MarkdownDescription: "Wait, after each deployment, until the egress proxy device is on the tailnet with its tags (without " +
			"`proxy_group`). A device gone from the tailnet then shows as a change, and qtail redeploys. Default `true`.",
	}
	attrs["proxy_hostname"] = schema.StringAttribute{
		Computed:            true,
		MarkdownDescription: "Hostname of the egress proxy device: `hostname`, or `NAMESPACE-NAME`. Null with `proxy_group`.",
	}
	attrs["proxy_tags"] = schema.ListAttribute{
		ElementType: types.StringType,
		Computed:    true,
		MarkdownDescription: "Tags of the egress proxy device: `tags`, or the operator's proxy tags when the Service was created. " +
			"The tailnet policy must let them reach the target. Null with `proxy_group` (the ProxyGroup's tags apply).",
	}
	attrs["devices"] = schema.ListNestedAttribute{
		Computed: true,
		MarkdownDescription: "The egress proxy device on the tailnet: one element without `proxy_group` (empty until it joins, or " +
			"with `wait_for_device = false`), none with it.",
		NestedObject: schema.NestedAttributeObject{Attributes: deviceAttributes("Routes the device advertises (none for an egress proxy).")},
	}
	attrs["namespace"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "Kubernetes namespace of the Service: the namespace Qovery deploys the environment's services to. " +
			"Qovery's API has no namespace field on environments, so qtail reads the built-in variable `" + namespaceVariable +
			"` that every service of the environment sees: from the environment's variables when it plans a creation, from " +
			"the Helm service's variables on refresh.",
	}
	attrs["cluster_dns_name"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "The name cluster workloads call to reach the tailnet machine: `NAME.NAMESPACE." + clusterDomain +
			"`, such as `db.z1a2b3c4d-production." + clusterDomain + "`. Known at plan time whenever `namespace` is.",
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Tailscale egress `Service`: cluster workloads reach one tailnet machine at " +
			"`NAME.NAMESPACE." + clusterDomain + "`, through an egress proxy that the Tailscale operator runs. Deployed as a " +
			"Qovery Helm service on the cluster of a `qtail_operator`.\n\n" +
			"qtail renders a Kubernetes `Service` of type `ExternalName`, annotated `" + manifest.AnnotationTailnetFQDN + "` " +
			"(or `" + manifest.AnnotationTailnetIP + "`, and `" + manifest.AnnotationProxyGroup + "` with `proxy_group`), into " +
			"the raw values file of a Helm service whose chart applies the list `manifests` (such as `examples/charts/" +
			cluster.ManifestsChart + "`). Its `externalName` is a placeholder that the operator rewrites to point at the egress " +
			"proxy. A Service is namespaced, so the Helm service gets no cluster-wide resources. qtail deploys the service and " +
			"waits for the deployment; the proxy is then the operator's work.\n\n" +
			"Without `proxy_group`, the operator runs a proxy of its own for the Service: a tailnet device named `hostname` (default " +
			"`NAMESPACE-NAME`) and tagged `tags` (default the operator's proxy tags, `tag:k8s` unless the operator says otherwise), " +
			"whose auth key the operator mints with its OAuth client; it then points `externalName` at the proxy. The plan checks " +
			"that the hostname is free and that the client can apply the tags, and qtail waits for the device (`devices`). With " +
			"`proxy_group`, the ProxyGroup's devices carry the traffic with their tags. The tailnet policy must let those tags " +
			"reach the target machine on the Service's ports: add a `qtail_grant` from the proxy's tags to the machine, and check " +
			"the whole path with the `qtail_egress_status` data source.\n\n" +
			"The Service lives in the environment's namespace. Qovery's API has no namespace field on environments; every " +
			"service sees the namespace in the built-in variable `" + namespaceVariable + "`, and qtail reads it there to fill " +
			"`namespace` and `cluster_dns_name`, already in the plan of a creation.",
		Attributes: attrs,
	}
}

// magicDNSNameRE is the operator's check of the tailnet-fqdn annotation.
var magicDNSNameRE = regexp.MustCompile(`^[a-zA-Z0-9-]+\.[a-zA-Z0-9-]+\.ts\.net\.?$`)

// dnsLabelRE is a DNS label, either case.
var dnsLabelRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

// checkTailnetFQDN accepts a DNS name with at least one dot, with or
// without the final dot.
func checkTailnetFQDN(s string) error {
	name := strings.TrimSuffix(s, ".")
	if !strings.Contains(name, ".") {
		return fmt.Errorf("give the machine's full MagicDNS name, MACHINE.TAILNET.ts.net, such as db.tail1234.ts.net, not its short name")
	}
	if len(name) > 253 {
		return fmt.Errorf("a DNS name has at most 253 characters")
	}
	for _, label := range strings.Split(name, ".") {
		if !dnsLabelRE.MatchString(label) {
			return fmt.Errorf("not a DNS name: %q is not a label of 1 to 63 letters, digits and '-' that starts and ends with a letter "+
				"or a digit. Give a MagicDNS name such as db.tail1234.ts.net, without scheme or port", label)
		}
	}
	return nil
}

// checkTailnetIP accepts an IPv4 or IPv6 address without zone.
func checkTailnetIP(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil {
		if _, perr := netip.ParsePrefix(s); perr == nil {
			return fmt.Errorf("give one address, without prefix length, such as 100.101.102.103")
		}
		return fmt.Errorf("not an IPv4 or IPv6 address, such as 100.101.102.103 or fd7a:115c:a1e0::1")
	}
	if a.Zone() != "" {
		return fmt.Errorf("give the address without zone (%s)", a.WithZone(""))
	}
	return nil
}

// parseServicePort reads a port written as "tcp:5432" (the inverse of
// manifest.ServicePort.String).
func parseServicePort(s string) (manifest.ServicePort, error) {
	proto, num, ok := strings.Cut(s, ":")
	if !ok {
		return manifest.ServicePort{}, fmt.Errorf("give the protocol and the port, such as tcp:%s", s)
	}
	switch proto {
	case "tcp", "udp":
	case "TCP", "UDP":
		return manifest.ServicePort{}, fmt.Errorf("write the protocol in lower case: %s:%s", strings.ToLower(proto), num)
	default:
		return manifest.ServicePort{}, fmt.Errorf("the protocol %q is not tcp or udp, the protocols an egress proxy forwards", proto)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 1 || n > 65535 {
		return manifest.ServicePort{}, fmt.Errorf("the port %q is not a number from 1 to 65535", num)
	}
	if strconv.FormatInt(n, 10) != num {
		return manifest.ServicePort{}, fmt.Errorf("write the port without sign or leading zeros: %s:%d", proto, n)
	}
	return manifest.ServicePort{Port: n, Protocol: strings.ToUpper(proto)}, nil
}

func checkServicePort(s string) error {
	_, err := parseServicePort(s)
	return err
}

func (r *egressServiceResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m egressServiceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	fqdnSet, ipSet := !m.TailnetFQDN.IsNull(), !m.TailnetIP.IsNull()
	switch {
	case m.TailnetFQDN.IsUnknown() || m.TailnetIP.IsUnknown():
		// Known at apply: the plan checks them again.
	case fqdnSet && ipSet:
		resp.Diagnostics.AddAttributeError(path.Root("tailnet_ip"), "Two Egress Targets",
			"tailnet_fqdn and tailnet_ip both name the machine to reach, and the operator refuses a Service with both annotations. Keep one of them.")
	case !fqdnSet && !ipSet:
		resp.Diagnostics.AddAttributeError(path.Root("tailnet_fqdn"), "No Egress Target",
			"An egress Service reaches one tailnet machine: set tailnet_fqdn to its MagicDNS name (such as db.tail1234.ts.net) or tailnet_ip to its Tailscale address.")
	}
	if fqdn := m.TailnetFQDN; fqdnSet && !fqdn.IsUnknown() && checkTailnetFQDN(fqdn.ValueString()) == nil && !magicDNSNameRE.MatchString(fqdn.ValueString()) {
		resp.Diagnostics.AddAttributeWarning(path.Root("tailnet_fqdn"), "Not a MagicDNS Name",
			fmt.Sprintf("The operator only accepts a name of the form MACHINE.TAILNET.ts.net in %s; it ignores the Service otherwise, "+
				"and no egress proxy appears. Give the machine's MagicDNS name (the qtail_device data source has it), or its address in tailnet_ip.",
				manifest.AnnotationTailnetFQDN))
	}
	if !m.Ports.IsNull() && !m.Ports.IsUnknown() {
		var ports []types.String
		resp.Diagnostics.Append(m.Ports.ElementsAs(ctx, &ports, false)...)
		seen := map[string]int{}
		for i, p := range ports {
			if p.IsUnknown() {
				continue
			}
			sp, err := parseServicePort(p.ValueString())
			if err != nil {
				continue // reported by the element validator
			}
			if j, dup := seen[sp.String()]; dup {
				resp.Diagnostics.AddAttributeError(path.Root("ports").AtListIndex(i), "Duplicate Port",
					fmt.Sprintf("%s is listed twice (also at index %d). Remove one of them.", sp, j))
				continue
			}
			seen[sp.String()] = i
		}
	}
	if !m.ProxyGroup.IsNull() && !m.ProxyGroup.IsUnknown() && m.Ports.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("ports"), "Ports Required With a ProxyGroup",
			fmt.Sprintf("The operator routes an egress Service through the ProxyGroup %s port by port, and refuses one without ports. "+
				"List the ports the workloads call, such as ports = [\"tcp:5432\"].", m.ProxyGroup.ValueString()))
	}
}

// specKnown reports whether every input of the Service is known.
func (m *egressServiceModel) specKnown() bool {
	return tfx.AllKnown(m.Name, m.TailnetFQDN, m.TailnetIP, m.Ports, m.ProxyGroup, m.Hostname, m.Tags, m.ProxyClass)
}

// ownProxy reports whether the operator runs a proxy of the Service's own:
// it goes through no ProxyGroup.
func (m *egressServiceModel) ownProxy() bool { return m.ProxyGroup.IsNull() }

// render renders the values file of m, whose attributes must be known.
func (m *egressServiceModel) render(ctx context.Context) (manifest.EgressService, string, diag.Diagnostics) {
	var diags diag.Diagnostics
	e := manifest.EgressService{
		Name:        m.Name.ValueString(),
		TailnetFQDN: m.TailnetFQDN.ValueString(),
		TailnetIP:   m.TailnetIP.ValueString(),
		ProxyGroup:  m.ProxyGroup.ValueString(),
		Hostname:    m.Hostname.ValueString(),
		ProxyClass:  m.ProxyClass.ValueString(),
	}
	if !m.Tags.IsNull() {
		diags.Append(m.Tags.ElementsAs(ctx, &e.Tags, false)...)
	}
	var ports []string
	if !m.Ports.IsNull() {
		diags.Append(m.Ports.ElementsAs(ctx, &ports, false)...)
	}
	for _, s := range ports {
		p, err := parseServicePort(s)
		if err != nil {
			diags.AddAttributeError(path.Root("ports"), "Invalid Port", fmt.Sprintf("%q: %v.", s, err))
			continue
		}
		e.Ports = append(e.Ports, p)
	}
	if diags.HasError() {
		return e, "", diags
	}
	values, err := manifest.RenderEgressService(e)
	if err != nil {
		diags.AddError("Unable to Render the Egress Service", err.Error()+". Please report this issue to the qtail developers.")
	}
	return e, values, diags
}

// fillFromSpec sets the attributes from the Service read back from Qovery.
func (m *egressServiceModel) fillFromSpec(e manifest.EgressService) {
	m.Name = types.StringValue(e.Name)
	m.TailnetFQDN = tfx.NullIfEmpty(e.TailnetFQDN)
	m.TailnetIP = tfx.NullIfEmpty(e.TailnetIP)
	m.ProxyGroup = tfx.NullIfEmpty(e.ProxyGroup)
	m.Hostname = tfx.NullIfEmpty(e.Hostname)
	m.ProxyClass = tfx.NullIfEmpty(e.ProxyClass)
	m.Tags = types.ListNull(types.StringType)
	if len(e.Tags) > 0 {
		m.Tags = tfx.StringList(e.Tags)
	}
	if len(e.Ports) == 0 {
		m.Ports = types.ListNull(types.StringType)
		return
	}
	ports := make([]string, len(e.Ports))
	for i, p := range e.Ports {
		ports[i] = p.String()
	}
	m.Ports = tfx.StringList(ports)
}

// setNamespace sets the namespace and the DNS name that follows from it.
func (m *egressServiceModel) setNamespace(ns types.String) {
	m.Namespace = ns
	switch {
	case m.Name.IsUnknown() || ns.IsUnknown():
		m.ClusterDNSName = types.StringUnknown()
	case m.Name.IsNull() || ns.IsNull():
		m.ClusterDNSName = types.StringNull()
	default:
		m.ClusterDNSName = types.StringValue(m.Name.ValueString() + "." + ns.ValueString() + "." + clusterDomain)
	}
	m.setProxyHostname()
}

// setProxyHostname sets proxy_hostname from hostname, or from the
// namespace and the name (NAMESPACE-NAME, as the operator names the
// proxy); null with a ProxyGroup.
func (m *egressServiceModel) setProxyHostname() {
	switch {
	case m.ProxyGroup.IsUnknown():
		m.ProxyHostname = types.StringUnknown()
	case !m.ownProxy():
		m.ProxyHostname = types.StringNull()
	case !m.Hostname.IsNull():
		m.ProxyHostname = m.Hostname
	case m.Name.IsUnknown() || m.Namespace.IsUnknown():
		m.ProxyHostname = types.StringUnknown()
	case m.Name.IsNull() || m.Namespace.IsNull():
		m.ProxyHostname = types.StringNull()
	default:
		m.ProxyHostname = types.StringValue(manifest.EgressService{Name: m.Name.ValueString()}.ProxyHostname(m.Namespace.ValueString()))
	}
}

// nullUnknowns replaces the unknown computed values by null, so that a
// partial state can be saved.
func (m *egressServiceModel) nullUnknowns() {
	m.manifestServiceModel.nullUnknowns()
	if m.Namespace.IsUnknown() {
		m.setNamespace(types.StringNull())
	}
	if m.ClusterDNSName.IsUnknown() {
		m.ClusterDNSName = types.StringNull()
	}
	if m.ProxyHostname.IsUnknown() {
		m.ProxyHostname = types.StringNull()
	}
	if m.ProxyTags.IsUnknown() {
		m.ProxyTags = types.ListNull(types.StringType)
	}
	if m.Devices.IsUnknown() {
		m.Devices = types.ListNull(manifestDeviceType)
	}
}

// namespaceFrom finds the environment's namespace among the variables a
// service or an environment sees.
func namespaceFrom(vars []qovery.Variable) (string, bool) {
	for _, v := range vars {
		// Qovery names both the scope and the type of a built-in
		// variable BUILT_IN.
		if v.Key == namespaceVariable && (v.Scope == qovery.VariableScopeBuiltIn || v.VariableType == qovery.VariableScopeBuiltIn) &&
			v.Value != nil && *v.Value != "" {
			return *v.Value, true
		}
	}
	return "", false
}

// namespaceMissing warns that Qovery did not give the namespace of the
// Helm service helmID; known says whether namespace and cluster_dns_name
// keep a value read before.
func namespaceMissing(diags *diag.Diagnostics, helmID string, known bool) {
	consequence := "namespace and cluster_dns_name stay empty"
	if known {
		consequence = "namespace and cluster_dns_name keep their last known values"
	}
	diags.AddWarning("Namespace Unknown",
		fmt.Sprintf("Qovery lists no built-in variable %s for the Helm service %s, so qtail cannot tell the Service's namespace; %s. "+
			"Look up the namespace with kubectl get services --all-namespaces, or in the environment's variables in the Qovery console, "+
			"and run terraform apply -refresh-only once Qovery lists the variable.", namespaceVariable, helmID, consequence))
}

func (r *egressServiceResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !r.Configured() {
		return
	}
	var plan, state egressServiceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	creating := req.State.Raw.IsNull()
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	values := ""
	if plan.specKnown() {
		var diags diag.Diagnostics
		_, values, diags = plan.render(ctx)
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
	}
	plan.planShared(egressKind, plan.Name, values)
	// The environment, hence the namespace, cannot change without a
	// replacement; a refresh keeps the state's value current.
	newService := creating || !plan.EnvironmentID.Equal(state.EnvironmentID) || !plan.Name.Equal(state.Name)
	if newService {
		plan.setNamespace(r.plannedNamespace(ctx, plan.EnvironmentID))
	} else {
		plan.setNamespace(state.Namespace)
	}
	// A proxy of the Service's own is made when the Service is new or
	// leaves its ProxyGroup; it keeps the tags of its first auth key.
	newProxy := newService || !state.ownProxy()
	changed := newService || values == "" || !plan.Values.Equal(state.Values)
	r.planProxy(ctx, &plan, &state, newProxy, changed)
	if !creating && (newService || !plan.Tags.Equal(state.Tags)) {
		// Replaced: the replacement, planned as a creation, may take the
		// proxy's hostname.
		r.release(ctx, &state.manifestServiceModel, state.Devices)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if resp.Diagnostics.HasError() || values == "" {
		return
	}
	if !creating && plan.Values.Equal(state.Values) {
		return
	}
	if newService && plan.Hostname.IsNull() && plan.ownProxy() {
		checkProxyHostname(plan.Name, plan.Namespace, &resp.Diagnostics)
	}
	ops := r.planChecks(ctx, egressKind, &plan.manifestServiceModel, plan.Name, &resp.Diagnostics)
	if pg := plan.ProxyGroup; !pg.IsNull() && !plan.EnvironmentID.IsUnknown() {
		cluster.CheckProxyGroupType(ctx, r.Clients, pg.ValueString(), plan.EnvironmentID.ValueString(), manifest.ProxyGroupEgress, &resp.Diagnostics)
		return
	}
	at := path.Root("hostname")
	if plan.Hostname.IsNull() {
		at = path.Root("name")
	}
	want, _ := plan.wantedDevices(ctx)
	r.checkDevices(ctx, devicesCheck{kind: egressKind, name: plan.Name.ValueString(), ops: ops, want: want,
		state: state.Devices, creating: newProxy, at: at}, &resp.Diagnostics)
}

// planProxy plans the egress proxy of m: its hostname and tags, and its
// device (unknown when the apply changes it); all null with a ProxyGroup.
// newProxy is set when the apply makes a new proxy, changed when it
// deploys a new configuration.
func (r *egressServiceResource) planProxy(ctx context.Context, m, state *egressServiceModel, newProxy, changed bool) {
	switch {
	case m.ProxyGroup.IsUnknown():
		m.ProxyTags, m.Devices = types.ListUnknown(types.StringType), types.ListUnknown(manifestDeviceType)
		return
	case !m.ownProxy():
		m.ProxyTags = types.ListNull(types.StringType)
		m.Devices, _ = types.ListValue(manifestDeviceType, nil)
		return
	case !m.Tags.IsNull():
		m.ProxyTags = m.Tags
	case !newProxy && !state.ProxyTags.IsNull():
		m.ProxyTags = state.ProxyTags
	default:
		m.ProxyTags = r.operatorProxyTags(ctx, m.EnvironmentID)
	}
	hostnames := []string{}
	if !m.ProxyHostname.IsUnknown() {
		hostnames = append(hostnames, m.ProxyHostname.ValueString())
	}
	m.Devices = planDevices(ctx, changed || newProxy || m.ProxyHostname.IsUnknown(), m.WaitForDevice.ValueBool(), state.Devices, hostnames)
}

// operatorProxyTags returns the proxy tags of the operator of the cluster
// of envID (as this plan leaves it), or unknown when qtail cannot read them.
func (r *egressServiceResource) operatorProxyTags(ctx context.Context, envID types.String) types.List {
	q := r.Clients.QoveryOrNil()
	if q == nil || envID.IsUnknown() || envID.IsNull() {
		return types.ListUnknown(types.StringType)
	}
	env, err := q.GetEnvironment(ctx, envID.ValueString())
	if err != nil {
		return types.ListUnknown(types.StringType)
	}
	op, err := cluster.NewLookup(q, env).UsePlan(r.world()).Operator(ctx)
	if err != nil {
		return types.ListUnknown(types.StringType)
	}
	return tfx.StringList(manifest.ProxyDeviceTags(nil, op.ProxyTags))
}

// checkProxyHostname refuses a Service whose egress proxy the operator
// would refuse: it names the proxy NAMESPACE-NAME, which must be a DNS
// label of at most 63 characters.
func checkProxyHostname(name, namespace types.String, diags *diag.Diagnostics) {
	if name.IsUnknown() || namespace.IsUnknown() || namespace.IsNull() {
		return
	}
	hostname := namespace.ValueString() + "-" + name.ValueString()
	if len(hostname) <= 63 {
		return
	}
	diags.AddAttributeError(path.Root("name"), "Service Name Too Long",
		fmt.Sprintf("The operator names the egress proxy NAMESPACE-NAME, here %q: %d characters, more than the 63 of a DNS label, so it "+
			"would refuse the Service. Shorten name to at most %d characters.", hostname, len(hostname), 63-len(namespace.ValueString())-1))
}

// plannedNamespace reads the namespace of a new Service from the
// environment's variables, or returns unknown.
func (r *egressServiceResource) plannedNamespace(ctx context.Context, envID types.String) types.String {
	q := r.Clients.QoveryOrNil()
	if q == nil || envID.IsUnknown() || envID.IsNull() {
		return types.StringUnknown()
	}
	vars, err := q.ListVariables(ctx, envID.ValueString(), qovery.VariableScopeEnvironment)
	if err != nil {
		tflog.Debug(ctx, "listing the environment's variables failed; the namespace is known after apply", map[string]any{"error": err.Error()})
		return types.StringUnknown()
	}
	if ns, ok := namespaceFrom(vars); ok {
		return types.StringValue(ns)
	}
	return types.StringUnknown()
}

// recordNamespace fills an unknown namespace from the variables of the
// Helm service helmID.
func (r *egressServiceResource) recordNamespace(ctx context.Context, m *egressServiceModel, helmID string, diags *diag.Diagnostics) {
	if !m.Namespace.IsUnknown() {
		m.setNamespace(m.Namespace)
		return
	}
	vars, err := r.Clients.QoveryOrNil().ListVariables(ctx, helmID, qovery.VariableScopeHelm)
	if err != nil {
		diags.AddWarning("Namespace Not Read",
			fmt.Sprintf("qtail could not list the variables of the Helm service %s to find its namespace: %v. namespace and "+
				"cluster_dns_name stay empty until the next refresh reads them; run terraform apply -refresh-only.", helmID, err))
		m.setNamespace(types.StringNull())
		return
	}
	ns, ok := namespaceFrom(vars)
	if !ok {
		namespaceMissing(diags, helmID, false)
		m.setNamespace(types.StringNull())
		return
	}
	m.setNamespace(types.StringValue(ns))
}

// lifecycleHooks are what an egress Service adds to the shared lifecycle:
// its namespace, read from Qovery, and the device of its proxy.
func (r *egressServiceResource) lifecycleHooks() manifestHooks[egressServiceModel] {
	return manifestHooks[egressServiceModel]{
		usesTailnet: func(m *egressServiceModel) bool { return m.waitsForDevices() },
		written: func(ctx context.Context, m *egressServiceModel, h *qovery.Helm, diags *diag.Diagnostics) {
			r.recordNamespace(ctx, m, h.ID, diags)
		},
		deployed: r.awaitProxy,
		redeploy: func(ctx context.Context, plan, state *egressServiceModel) bool {
			return plan.waitsForDevices() && !devicesComplete(ctx, state.Devices, []string{plan.ProxyHostname.ValueString()})
		},
		observe: r.observe,
		imported: func(m *egressServiceModel) {
			if m.WaitForDevice.IsNull() {
				m.WaitForDevice = types.BoolValue(true)
			}
		},
		leftovers: func(ctx context.Context, m *egressServiceModel) []string {
			_, ids := stateDevices(ctx, m.Devices)
			return ids
		},
	}
}

func (m *egressServiceModel) waitsForDevices() bool {
	return m.WaitForDevice.ValueBool() && m.ownProxy() && !m.ProxyHostname.IsNull()
}

func (m *egressServiceModel) devicesAttr() *types.List { return &m.Devices }

// wantedDevices is the egress proxy device: named proxy_hostname (when
// known), tagged proxy_tags (any tags while unknown).
func (m *egressServiceModel) wantedDevices(ctx context.Context) (deviceWant, diag.Diagnostics) {
	w := deviceWant{proxyClass: m.ProxyClass.ValueString()}
	var diags diag.Diagnostics
	if !m.ownProxy() {
		return w, diags
	}
	if !m.ProxyHostname.IsUnknown() && !m.ProxyHostname.IsNull() {
		w.hostnames = []string{m.ProxyHostname.ValueString()}
	}
	if !m.ProxyTags.IsUnknown() && !m.ProxyTags.IsNull() {
		diags.Append(m.ProxyTags.ElementsAs(ctx, &w.tags, false)...)
	}
	return w, diags
}

// awaitProxy waits, after a deployment, for the egress proxy device, and
// records it with its tags. With a ProxyGroup there is none.
func (r *egressServiceResource) awaitProxy(ctx context.Context, m *egressServiceModel, tn *tailnet.Client, d cluster.Deployment, diags *diag.Diagnostics) {
	if !m.ownProxy() {
		m.Devices, _ = types.ListValue(manifestDeviceType, nil)
		return
	}
	if !m.waitsForDevices() {
		tn = nil
	}
	devices, _, ok := r.awaitDevices(ctx, egressKind, m, m.EnvironmentID.ValueString(), tn, d, diags)
	if ok && len(devices) == 1 && m.ProxyTags.IsUnknown() {
		m.ProxyTags = tfx.StringList(devices[0].Tags)
	}
}

func (m *egressServiceModel) renderValues(ctx context.Context) (string, string, diag.Diagnostics) {
	spec, values, diags := m.render(ctx)
	return spec.Name, values, diags
}

func (m *egressServiceModel) readValues(file, helmID string, diags *diag.Diagnostics) error {
	spec, err := manifest.ReadEgressService(file)
	if err != nil {
		return err
	}
	name, tags := m.Name, m.Tags
	m.fillFromSpec(spec)
	m.Name = keepReplacing(diags, helmID, "name", name, m.Name)
	if !name.IsNull() {
		m.Tags = keepReplacing(diags, helmID, "tags", tags, m.Tags)
	}
	return nil
}

func (m *egressServiceModel) settle() { m.nullUnknowns() }

// observe reads the Service's namespace: the environment's built-in
// variable, which the Helm service sees.
func (r *egressServiceResource) observe(ctx context.Context, m *egressServiceModel, diags *diag.Diagnostics) {
	helmID := m.ID.ValueString()
	vars, err := r.Clients.QoveryOrNil().ListVariables(ctx, helmID, qovery.VariableScopeHelm)
	if err != nil {
		tfx.APIError(diags, "list the variables of the egress Service's Helm service", err)
		return
	}
	if ns, ok := namespaceFrom(vars); ok {
		m.setNamespace(types.StringValue(ns))
	} else {
		namespaceMissing(diags, helmID, true)
		m.setNamespace(m.Namespace)
	}
	r.observeProxy(ctx, m, diags)
}

// observeProxy reads the egress proxy device on the tailnet: the device
// under proxy_hostname, whose tags are the proxy's (the proxy keeps those
// of its first auth key).
func (r *egressServiceResource) observeProxy(ctx context.Context, m *egressServiceModel, diags *diag.Diagnostics) {
	tn := r.Clients.TailnetOrNil()
	switch {
	case !m.ownProxy():
		m.ProxyTags = types.ListNull(types.StringType)
		m.Devices, _ = types.ListValue(manifestDeviceType, nil)
		return
	case tn == nil || m.ProxyHostname.IsNull() || m.ProxyHostname.IsUnknown():
		return
	}
	hostname := m.ProxyHostname.ValueString()
	found, _, err := findDevices(ctx, tn, deviceWant{hostnames: []string{hostname}})
	if err != nil {
		tfx.APIError(diags, "look for the egress proxy device on the tailnet", err)
		return
	}
	if len(found) == 0 {
		if m.waitsForDevices() && m.Deployed.ValueBool() {
			diags.AddWarning("Egress Proxy Device Missing",
				fmt.Sprintf("The egress Service %s has no proxy device %s on the tailnet. qtail plans to redeploy it so that the operator "+
					"brings the proxy back.", m.Name.ValueString(), hostname))
		}
		m.Devices, _ = types.ListValue(manifestDeviceType, nil)
		return
	}
	setDevices(m, found, diags)
	m.ProxyTags = tfx.StringList(found[0].Tags)
}
