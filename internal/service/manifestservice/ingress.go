package manifestservice

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

var (
	_ resource.Resource                = &ingressResource{}
	_ resource.ResourceWithConfigure   = &ingressResource{}
	_ resource.ResourceWithImportState = &ingressResource{}
	_ resource.ResourceWithModifyPlan  = &ingressResource{}
)

// ingressKind is the Ingress of an HTTPS exposure: namespaced, in the
// application's environment.
var ingressKind = manifestKind{noun: "Ingress", resourceType: "qtail_ingress", object: manifest.KindIngress, clusterScoped: false,
	servicePrefix: "tailscale-ingress-", renameHint: "choose another hostname"}

// NewIngressResource returns the qtail_ingress resource.
func NewIngressResource() resource.Resource {
	r := &ingressResource{}
	r.kind = ingressKind
	r.hooks = r
	return r
}

// ingressResource adds to the shared lifecycle the proxy device of the
// Ingress and the application it serves.
type ingressResource struct {
	manifestResource[ingressModel, *ingressModel]
	noHooks[ingressModel]
}

func (r *ingressResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_ingress"
}

// usesTailnet reports whether the apply waits for the proxy device.
func (r *ingressResource) usesTailnet(m *ingressModel) bool { return m.waitsForDevices() }

// deployed waits, after a deployment, for the proxy device, and records
// its MagicDNS name.
func (r *ingressResource) deployed(ctx context.Context, m *ingressModel, tn *tailnet.Client, d cluster.Deployment, diags *diag.Diagnostics) {
	if !m.waitsForDevices() {
		tn = nil
	}
	if m.throughProxyGroup() {
		m.Devices, _ = types.ListValue(manifestDeviceType, nil)
		m.setAddress(nil)
		if tn == nil {
			return
		}
		fqdn, err := r.awaitService(ctx, m, tn)
		if err != nil {
			d.Failed(diags, "waiting for the Tailscale Service of the Ingress", err)
			return
		}
		m.TailnetFQDN, m.URL = types.StringValue(fqdn), types.StringValue(ingressURL(fqdn))
		return
	}
	devices, _, ok := r.awaitDevices(ctx, ingressKind, m, m.EnvironmentID.ValueString(), tn, d, diags)
	if ok && len(devices) == 1 {
		m.setAddress(&devices[0])
		return
	}
	m.setAddress(nil)
}

// redeploy reports whether the proxy device is gone from the tailnet.
func (r *ingressResource) redeploy(ctx context.Context, plan, state *ingressModel) bool {
	if plan.throughProxyGroup() {
		return plan.waitsForDevices() && state.TailnetFQDN.IsNull()
	}
	return plan.waitsForDevices() && !devicesComplete(ctx, state.Devices, []string{plan.Hostname.ValueString()})
}

// imported sets wait_for_device to its default after an import.
func (r *ingressResource) imported(m *ingressModel) {
	if m.WaitForDevice.IsNull() {
		m.WaitForDevice = types.BoolValue(true)
	}
}

// leftovers are the IDs of the proxy device of the state.
func (r *ingressResource) leftovers(ctx context.Context, m *ingressModel) []string {
	_, ids := stateDevices(ctx, m.Devices)
	return ids
}

// observe finds, after an import, the application whose Service the
// Ingress names, and reads the proxy device on the tailnet.
func (r *ingressResource) observe(ctx context.Context, m *ingressModel, diags *diag.Diagnostics) {
	if m.ApplicationID.IsNull() {
		r.findApplication(ctx, m, diags)
	}
	tn := r.Clients.TailnetOrNil()
	if tn == nil {
		return
	}
	if m.throughProxyGroup() {
		m.Devices, _ = types.ListValue(manifestDeviceType, nil)
		r.observeService(ctx, m, tn, diags)
		return
	}
	devices, _, _, ok := observeDevices(ctx, ingressKind, m, tn, m.Deployed.ValueBool(), diags)
	if !ok {
		return
	}
	if len(devices) == 1 {
		m.setAddress(&devices[0])
		return
	}
	m.setAddress(nil)
}

// findApplication sets the application of an imported Ingress: the one of
// its environment whose Kubernetes Service is the Ingress's backend.
func (r *ingressResource) findApplication(ctx context.Context, m *ingressModel, diags *diag.Diagnostics) {
	apps, err := r.Clients.QoveryOrNil().ListApplications(ctx, m.EnvironmentID.ValueString())
	if err != nil {
		tfx.APIError(diags, "list the applications of the Ingress's environment", err)
		return
	}
	for _, a := range apps {
		if manifest.ApplicationServiceName(a.ID) == m.backendService {
			m.ApplicationID = types.StringValue(a.ID)
			return
		}
	}
	diags.AddError("Ingress Backend Not Found",
		fmt.Sprintf("The Ingress of the Helm service %s proxies to the Service %q, which no application of the environment %s has. "+
			"Import the Helm service of an Ingress that qtail_ingress made, whose backend is an application of its environment.",
			m.ID.ValueString(), m.backendService, m.EnvironmentID.ValueString()))
}

// awaitService waits, after the deployment of an Ingress through an
// ingress ProxyGroup, for its Tailscale Service and for an approved host,
// and returns the Service's MagicDNS name.
func (r *ingressResource) awaitService(ctx context.Context, m *ingressModel, tn *tailnet.Client) (string, error) {
	hostname, pg := m.Hostname.ValueString(), m.ProxyGroup.ValueString()
	if _, err := cluster.AwaitExposureService(ctx, r.Clients, tn, m.ApplicationID.ValueString(), pg, hostname); err != nil {
		return "", err
	}
	name := tailnet.ServiceName(hostname)
	wait := tfx.StartWait(ctx, "an approved host of the Tailscale Service "+name)
	for {
		hosts, err := tn.ServiceHosts(ctx, name)
		if err != nil && ctx.Err() == nil {
			return "", fmt.Errorf("reading the hosts of the Tailscale Service %s: %w", name, err)
		}
		if i := slices.IndexFunc(hosts, tailnet.ServiceHost.Approved); i >= 0 {
			return serviceFQDN(ctx, tn, hostname, hosts[i])
		}
		if wait.Sleep(ctx, r.Clients.PollInterval(), fmt.Sprintf("%d hosts, none approved", len(hosts))) != nil {
			return "", fmt.Errorf("%w: no host of the Tailscale Service %s (the replicas of the ProxyGroup %s) was approved. Approve them with "+
				"an autoApprovers.services entry (a qtail_auto_approver with service = %q), or in the Services page of the admin console",
				cluster.ErrTimedOut, name, pg, name)
		}
	}
}

// serviceFQDN is the MagicDNS name of the Tailscale Service of hostname:
// HOSTNAME and the MagicDNS suffix of its host h.
func serviceFQDN(ctx context.Context, tn *tailnet.Client, hostname string, h tailnet.ServiceHost) (string, error) {
	d, err := tn.GetDevice(ctx, h.NodeID)
	if err != nil {
		return "", fmt.Errorf("reading the host %s of the Tailscale Service %s: %w", h.NodeID, tailnet.ServiceName(hostname), err)
	}
	_, suffix, _ := strings.Cut(cluster.DeviceFQDN(d), ".")
	return hostname + "." + suffix, nil
}

// observeService reads the Tailscale Service of an Ingress through a
// ProxyGroup: gone, tailnet_fqdn is null and the plan redeploys; there,
// its name is read from an approved host.
func (r *ingressResource) observeService(ctx context.Context, m *ingressModel, tn *tailnet.Client, diags *diag.Diagnostics) {
	name := tailnet.ServiceName(m.Hostname.ValueString())
	svc, err := tn.FindService(ctx, name)
	if err != nil {
		tfx.APIError(diags, "look up the Tailscale Service "+name, err)
		return
	}
	if svc == nil {
		if m.waitsForDevices() && m.Deployed.ValueBool() {
			diags.AddWarning("Tailscale Service Missing",
				fmt.Sprintf("The tailnet has no Tailscale Service %s for the Ingress %s. qtail plans to redeploy it so that the operator "+
					"makes it again.", name, m.Hostname.ValueString()))
		}
		m.setAddress(nil)
		return
	}
	if !m.TailnetFQDN.IsNull() {
		return
	}
	hosts, err := tn.ServiceHosts(ctx, name)
	if err != nil {
		return
	}
	if i := slices.IndexFunc(hosts, tailnet.ServiceHost.Approved); i >= 0 {
		if fqdn, err := serviceFQDN(ctx, tn, m.Hostname.ValueString(), hosts[i]); err == nil {
			m.TailnetFQDN, m.URL = types.StringValue(fqdn), types.StringValue(ingressURL(fqdn))
		}
	}
}
