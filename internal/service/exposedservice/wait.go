package exposedservice

import (
	"context"
	"errors"
	"fmt"
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
// A failed deployment says where its logs are.
func (r *exposedServiceResource) redeploy(ctx context.Context, q *qovery.Client, w workload, envID string, timeout time.Duration, op string) error {
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
		trigger, err = w.redeploy(ctx, q)
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
