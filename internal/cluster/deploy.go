package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// ErrTimedOut marks a wait that did not end before the deadline of the
// Terraform operation.
var ErrTimedOut = errors.New("timed out")

// DeployHelm deploys the Helm service and waits for the outcome of its
// own deployment request. While another action runs (a deployment started
// in the console, say), the API queues the request behind it: the wait
// follows the request id of the trigger's answer, so that neither the
// previous action's final state, which the status still shows for a few
// seconds after the trigger, nor the end of the action it waited for is
// taken for its outcome. An API that refuses the request with 409 instead
// has the running action waited for, whatever its outcome, and the
// request made again. A failed deployment is a *qovery.DeploymentError
// with the reason; a wait cut by the deadline wraps ErrTimedOut.
//
// The deployment goes through a ticket (qovery.Client.ExpectDeploy), so
// that the deployments of the service's environment asked for at about the
// same time make one action.
func DeployHelm(ctx context.Context, q *qovery.Client, helmID string, poll time.Duration) error {
	return DeployHelmTicket(ctx, q, nil, helmID, poll)
}

// DeployHelmTicket is DeployHelm through ticket, the deployment announced
// when the operation began (nil takes one of the service's environment at
// the trigger).
func DeployHelmTicket(ctx context.Context, q *qovery.Client, ticket *qovery.DeployTicket, helmID string, poll time.Duration) error {
	defer ticket.Forget()
	get := func(ctx context.Context) (*qovery.Status, error) { return q.GetHelmStatus(ctx, helmID) }
	const attempts = 4
	for attempt := 1; ; attempt++ {
		before, err := q.GetHelmStatus(ctx, helmID)
		if err != nil {
			return deadline(ctx, fmt.Errorf("reading the deployment status: %w", err), "")
		}
		h, err := q.GetHelm(ctx, helmID)
		if err != nil {
			return deadline(ctx, fmt.Errorf("starting the deployment: %w", err), before.State)
		}
		if ticket == nil {
			ticket = q.ExpectDeploy("")
		}
		trigger, err := ticket.Deploy(ctx, qovery.ServiceDeploy{Kind: qovery.ServiceHelm, ID: helmID, EnvironmentID: h.Environment.ID, Helm: h.DeployRequest()})
		if qovery.IsConflict(err) && attempt < attempts {
			// Another action runs and the API does not queue: wait for
			// it, whatever its outcome, then ask again. A final state
			// read before is stale (the action started since, or the
			// status lags behind it): the wait sees through it.
			running := qovery.WaitOptions{PollInterval: poll}
			if qovery.IsFinalState(before.State) {
				running.Since = before
			}
			if _, err := qovery.WaitForDeployment(ctx, get, running); err != nil && ctx.Err() != nil {
				return deadline(ctx, err, before.State)
			}
			continue
		}
		if err != nil {
			return deadline(ctx, fmt.Errorf("starting the deployment: %w", err), before.State)
		}
		wait := tfx.StartWait(ctx, "the deployment of the Helm service "+helmID)
		last, err := qovery.WaitForDeployment(ctx, get, qovery.WaitOptions{PollInterval: poll, Since: before, Trigger: trigger,
			Progress: func(state string) { wait.Progress(ctx, "deployment state "+state) }})
		if err != nil {
			state := ""
			if last != nil {
				state = last.State
			}
			return deadline(ctx, err, state)
		}
		return nil
	}
}

// deadline turns an error caused by the context's deadline into a precise
// timeout error.
func deadline(ctx context.Context, err error, lastState string) error {
	if ctx.Err() == nil {
		return err
	}
	if lastState == "" {
		lastState = "unknown"
	}
	return fmt.Errorf("%w waiting for the deployment to end (last state seen: %s)", ErrTimedOut, lastState)
}

// DeleteRequestError is the failure of the request that deletes a Helm
// service, as opposed to the wait for its deletion.
type DeleteRequestError struct{ Err error }

func (e *DeleteRequestError) Error() string { return e.Err.Error() }
func (e *DeleteRequestError) Unwrap() error { return e.Err }

// DeleteHelm deletes the Helm service helmID of the environment envID and
// waits until it is gone; one already gone is fine (the environment's list
// tells a deleted service from one the token may not read). A failed
// request is a *DeleteRequestError; a failed deletion a *LoggedFailure; a
// wait cut by the deadline wraps ErrTimedOut.
func DeleteHelm(ctx context.Context, q *qovery.Client, helmID, envID string, poll time.Duration) error {
	err := q.DeleteHelm(ctx, helmID, qovery.InEnvironment(envID))
	if qovery.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return &DeleteRequestError{Err: err}
	}
	get := func(ctx context.Context) (*qovery.Status, error) { return q.GetHelmStatus(ctx, helmID) }
	if err := qovery.WaitForDeletion(ctx, get, qovery.WaitOptions{PollInterval: poll}); err != nil {
		if ctx.Err() != nil {
			last := "unknown"
			if s, serr := q.GetHelmStatus(context.WithoutCancel(ctx), helmID); serr == nil {
				last = s.State
			}
			return fmt.Errorf("%w waiting for the Helm service to be deleted (last state seen: %s)", ErrTimedOut, last)
		}
		return WithLogs(ctx, q, envID, helmID, err)
	}
	return nil
}

// Deployed reports whether the Helm service helmID runs its configuration
// (Qovery's state DEPLOYED, deployment status UP_TO_DATE), and warns about a
// deployment that failed or a configuration not deployed yet, which the
// plan then deploys. noun names what the service runs: "operator".
func Deployed(diags *diag.Diagnostics, noun, helmID string, st *qovery.Status) bool {
	if strings.HasSuffix(st.State, "_ERROR") {
		diags.AddWarning(tfx.TitleCase(noun)+" Deployment Failed",
			fmt.Sprintf("%s\n\nqtail plans to deploy it again.", FailureDetail("the Helm service "+helmID, st.Failure())))
	} else if st.State == qovery.StateDeployed && st.ServiceDeploymentStatus != qovery.UpToDate {
		diags.AddWarning(tfx.TitleCase(noun)+" Configuration Not Deployed",
			fmt.Sprintf("The Helm service %s is %s: its configuration changed since its last deployment. qtail plans to deploy it.", helmID, st.ServiceDeploymentStatus))
	}
	return st.State == qovery.StateDeployed && st.ServiceDeploymentStatus == qovery.UpToDate
}

// Deployment is one deploy-and-wait of a Helm service that qtail wrote, as
// the operator and the manifest services do it: deploy the service, wait
// for the outcome, then wait for what it brings up on the tailnet. Its
// failures become errors that say what failed, that qtail saved what it
// did, and how to go on.
type Deployment struct {
	Qovery *qovery.Client
	Poll   time.Duration
	HelmID string
	// EnvironmentID is the Helm service's environment, which names the
	// console page of the deployment logs of a failed deployment.
	EnvironmentID string
	// Noun names what the Helm service runs: "operator", "connector".
	Noun string
	// Op is the Terraform operation, "create", "update" or "delete",
	// whose timeouts attribute bounds the waits.
	Op      string
	Timeout time.Duration
	// ByOperator is set when the Helm service deploys objects that the
	// operator turns into devices: its logs then tell what went wrong.
	ByOperator bool
	// Ticket is the deployment announced when the operation began
	// (qovery.Client.ExpectDeploy), nil for one taken at the trigger.
	Ticket *qovery.DeployTicket
}

// Deploy deploys the Helm service and waits for the outcome. On failure it
// adds the error, with step naming the wait ("waiting for the operator
// deployment"), and returns false.
func (d Deployment) Deploy(ctx context.Context, step string, diags *diag.Diagnostics) bool {
	if err := DeployHelmTicket(ctx, d.Qovery, d.Ticket, d.HelmID, d.Poll); err != nil {
		d.Failed(diags, step, WithLogs(ctx, d.Qovery, d.EnvironmentID, d.HelmID, err))
		return false
	}
	return true
}

// NoProxyError stops a wait for a proxy device that the operator will not
// bring up (see ProxyCannotAppear): Reason says why.
type NoProxyError struct{ Reason string }

func (e *NoProxyError) Error() string { return e.Reason }

// Failed adds the error of a failed step of the deployment: a deployment
// that ended in error (with the console page of its logs when err went
// through WithLogs), a wait cut by the timeout or stopped because what it
// waits for cannot come, or a failed API call.
func (d Deployment) Failed(diags *diag.Diagnostics, step string, err error) {
	var de *qovery.DeploymentError
	var np *NoProxyError
	switch {
	case errors.As(err, &np):
		diags.AddError("No Device Will Appear for the "+tfx.TitleCase(d.Noun),
			fmt.Sprintf("The Helm service %s is deployed, but no device will appear: %s.\n\nqtail stopped %s instead of waiting for "+
				"the timeout, and saved what it did in the state; fix the cause and apply again.", d.HelmID, np.Reason, step))
	case errors.As(err, &de):
		summary := " Deployment Failed"
		if de.State == qovery.StateDeleteError {
			summary = " Deletion Failed"
		}
		diags.AddError(tfx.TitleCase(d.Noun)+summary,
			fmt.Sprintf("%s\n\nqtail saved what it did in the state; fix the cause and apply again.",
				FailureDetail("the Helm service "+d.HelmID, err)))
	case errors.Is(err, ErrTimedOut):
		look := "Look at the deployment in the Qovery console"
		if d.ByOperator {
			look += " and at the operator's logs"
		}
		diags.AddError("Timed Out "+tfx.TitleCase(step),
			fmt.Sprintf("qtail waited %s (timeouts.%s) for the Helm service %s: %s. qtail saved what it did in the state. "+
				"%s, raise timeouts.%s if it is only slow, then apply again.", d.Timeout, d.Op, d.HelmID, err, look, d.Op))
	default:
		// step names a wait ("waiting for the operator deployment"):
		// the error says that qtail could not finish it.
		tfx.APIError(diags, "finish "+step, err)
	}
}
