package exposedservice

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// redeploy redeploys the application appID of the environment envID with
// its current configuration (which is how annotations reach its Kubernetes
// Service) and waits for the deployment to end. A deployment already
// running is waited for first: the API refuses a second one while it runs.
// A failed deployment says where its logs are. ticket is the deployment
// announced when the operation began (nil for one taken here): the
// redeployments of the environment asked for at about the same time are
// triggered together, in one action.
func (r *exposedServiceResource) redeploy(ctx context.Context, q *qovery.Client, ticket *qovery.DeployTicket, w workload, envID string, timeout time.Duration, op string) error {
	if ticket == nil {
		ticket = q.ExpectDeploy("")
	}
	defer ticket.Forget()
	appID := w.id
	get := func(ctx context.Context) (*qovery.Status, error) { return w.status(ctx, q) }
	opts := qovery.WaitOptions{PollInterval: r.Clients.PollInterval()}
	timedOut := func(what string, err error) error {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%s did not finish within the %s timeout (timeouts.%s): %w", what, timeout, op, err)
		}
		return err
	}
	before, err := get(ctx)
	if err != nil {
		return fmt.Errorf("reading the deployment status of %s: %w", w, err)
	}
	var trigger *qovery.Status
	for attempt := 0; ; attempt++ {
		if !qovery.IsFinalState(before.State) {
			// Its outcome is not this exposure's business.
			prev, err := qovery.WaitForDeployment(ctx, get, opts)
			var failed *qovery.DeploymentError
			if err != nil && !errors.As(err, &failed) {
				return timedOut("the deployment of "+w.String()+" that was already running", err)
			}
			if prev != nil {
				before = prev
			}
		}
		trigger, err = ticket.Deploy(ctx, w.deployment(envID))
		if err == nil {
			break
		}
		if !qovery.IsConflict(err) || attempt >= 2 {
			return fmt.Errorf("redeploying %s: %w", w, err)
		}
		// Someone started a deployment in between: wait for it.
		if before, err = get(ctx); err != nil {
			return fmt.Errorf("reading the deployment status of %s: %w", w, err)
		}
	}
	// The answer names the request: its outcome is the one waited for.
	opts.Since, opts.Trigger = before, trigger
	wait := tfx.StartWait(ctx, "the redeployment of "+w.String())
	opts.Progress = func(state string) { wait.Progress(ctx, "deployment state "+state) }
	if _, err := qovery.WaitForDeployment(ctx, get, opts); err != nil {
		if detail := cluster.FailureDetail(w.String(), cluster.WithLogs(ctx, q, envID, appID, err)); detail != "" {
			return errors.New(detail)
		}
		return timedOut("the redeployment of "+w.String(), err)
	}
	return nil
}

// waitForDevice waits until a device with this hostname and these tags
// (any tags when none are given: the operator's default) is on the
// tailnet.
func (r *exposedServiceResource) waitForDevice(ctx context.Context, t *tailnet.Client, hostname string, tags []string, timeout time.Duration, op string) (*tailnet.Device, error) {
	var last *tailnet.Device
	wait := tfx.StartWait(ctx, "the proxy device "+hostname+" to join the tailnet")
	for {
		d, err := t.FindDeviceByHostname(ctx, hostname)
		if err != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("looking up the proxy device %s: %w", hostname, err)
		}
		if d != nil {
			if tagsMatch(d.Tags, tags) {
				return d, nil
			}
			last = d
		}
		seen := "no device of that name"
		if last != nil {
			seen = "a device tagged " + strings.Join(last.Tags, ", ")
		}
		if err := wait.Sleep(ctx, r.Clients.PollInterval(), seen); err != nil {
			want := "tagged (the operator's default proxy tags)"
			if len(tags) > 0 {
				want = "tagged " + strings.Join(tags, ", ")
			}
			if last != nil {
				return nil, fmt.Errorf("the device %s (%s) on the tailnet is tagged [%s], not %s, after the %s timeout (timeouts.%s). "+
					"A proxy keeps the tags of its first auth key: remove the device from the tailnet (or the old proxy), then apply again",
					hostname, cluster.DeviceID(last), strings.Join(last.Tags, ", "), want, timeout, op)
			}
			return nil, fmt.Errorf("no device %s %s joined the tailnet within the %s timeout (timeouts.%s). The operator creates it once "+
				"the application's Service carries the annotations. Check that a Tailscale operator runs on the application's cluster "+
				"(qtail_operator, created before this exposure), that the operator's tag owns the proxy's tags in tagOwners, and the "+
				"Service's events and the operator's logs in the cluster",
				hostname, want, timeout, op)
		}
	}
}

// waitForDeviceGone waits until the proxy device of an exposure has left
// the tailnet.
func (r *exposedServiceResource) waitForDeviceGone(ctx context.Context, t *tailnet.Client, m *exposedServiceModel, timeout time.Duration) error {
	if m.ProxyGroup.ValueString() != "" {
		return nil
	}
	hostname, id := m.Hostname.ValueString(), m.DeviceID.ValueString()
	tags, _, _ := m.planTags(ctx)
	wait := tfx.StartWait(ctx, "the proxy device "+hostname+" to leave the tailnet")
	for {
		gone, err := func() (bool, error) {
			if id != "" {
				_, err := t.GetDevice(ctx, id)
				if tailnet.IsNotFound(err) {
					return true, nil
				}
				return false, err
			}
			d, err := t.FindDeviceByHostname(ctx, hostname)
			return err == nil && (d == nil || !tagsMatch(d.Tags, tags)), err
		}()
		if gone {
			return nil
		}
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("looking up the proxy device %s: %w", hostname, err)
		}
		if err := wait.Sleep(ctx, r.Clients.PollInterval(), "the device is still there"); err != nil {
			return fmt.Errorf("the proxy device %s (%s) was still on the tailnet at the end of the %s timeout (timeouts.delete), "+
				"although the application was redeployed without the annotations group. The operator removes it with the proxy; "+
				"check the operator's logs, or remove the device from the tailnet by hand", hostname, id, timeout)
		}
	}
}

// waitForServiceApproval waits until a host of the Tailscale Service of
// an exposure through the ingress ProxyGroup proxyGroup is approved: until
// then the Service carries no traffic. Hosts that advertise the Service
// without being approved end the wait at the timeout with what approves
// them.
func (r *exposedServiceResource) waitForServiceApproval(ctx context.Context, t *tailnet.Client, hostname, proxyGroup string, timeout time.Duration, op string) error {
	name := tailnet.ServiceName(hostname)
	wait := tfx.StartWait(ctx, "the hosts of the Tailscale Service "+name+" to be approved")
	var last []tailnet.ServiceHost
	for {
		hosts, err := t.ServiceHosts(ctx, name)
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("reading the hosts of the Tailscale Service %s: %w", name, err)
		}
		if slices.ContainsFunc(hosts, tailnet.ServiceHost.Approved) {
			return nil
		}
		if len(hosts) > 0 {
			last = hosts
		}
		seen := "no device advertises it yet"
		if len(last) > 0 {
			seen = "advertised, not approved: " + hostList(last)
		}
		if err := wait.Sleep(ctx, r.Clients.PollInterval(), seen); err != nil {
			if len(last) == 0 {
				return fmt.Errorf("no device of the ProxyGroup %s advertised the Tailscale Service %s within the %s timeout (timeouts.%s). "+
					"Check that the ProxyGroup has a replica online, and the operator's logs in the cluster", proxyGroup, name, timeout, op)
			}
			return r.notApproved(t, name, hostname, proxyGroup, last, timeout, op)
		}
	}
}

// notApproved says that the hosts of the Tailscale Service name advertise
// it, but are not approved, and what approves them.
func (r *exposedServiceResource) notApproved(t *tailnet.Client, name, hostname, proxyGroup string, hosts []tailnet.ServiceHost,
	timeout time.Duration, op string) error {
	// The wait's context is over: the devices' tags are read on a
	// short context of their own.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var tags []string
	for _, h := range hosts {
		if d, err := t.GetDevice(ctx, h.NodeID); err == nil {
			for _, tag := range d.Tags {
				if !slices.Contains(tags, tag) {
					tags = append(tags, tag)
				}
			}
		}
	}
	if len(tags) == 0 {
		tags = []string{cluster.DefaultProxyTag}
	}
	return fmt.Errorf("the Tailscale Service %s is advertised, not approved: its hosts %s (the devices of the ProxyGroup %s, tagged %s) "+
		"advertise it, but none was approved within the %s timeout (timeouts.%s), so the Service carries no traffic: neither an "+
		"entry of autoApprovers.services in the tailnet policy (for %s, or for one of the Service's tags) nor an admin approved "+
		"them. Add the approver, then apply again:\n\n%s\n\nor approve the devices as hosts of %s in the Services page of the "+
		"admin console",
		name, hostList(hosts), proxyGroup, strings.Join(tags, ", "), timeout, op, name, cluster.ServiceApproverHCL(hostname, tags), name)
}

// hostList names hosts of a Tailscale Service, with their approval.
func hostList(hosts []tailnet.ServiceHost) string {
	parts := make([]string, 0, len(hosts))
	for _, h := range hosts {
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", h.Hostname, h.NodeID, h.Approval))
	}
	return strings.Join(parts, ", ")
}
