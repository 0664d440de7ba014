package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// Qovery's deployment status says that a deployment failed, and at which
// step, but never why: the reason is in the deployment logs, which only
// the console shows. A failed deployment is therefore reported with the
// address of those logs.

// LoggedFailure is a deployment or deletion that ended in failure, with
// the console page of its logs.
type LoggedFailure struct {
	*qovery.DeploymentError
	// LogsURL is the console page of the deployment's logs, "" when the
	// environment of the service could not be read.
	LogsURL string
}

// Unwrap returns the *qovery.DeploymentError.
func (e *LoggedFailure) Unwrap() error { return e.DeploymentError }

// logsLookupTimeout bounds the read of the environment that names the
// console page of a failed deployment.
const logsLookupTimeout = 15 * time.Second

// WithLogs returns err with the console page of the deployment logs of
// the service serviceID of the environment envID when err is a failed
// deployment (*qovery.DeploymentError), and err unchanged otherwise. It
// reads the environment for its organization and project; when that
// fails, or envID is empty, the failure has no LogsURL.
func WithLogs(ctx context.Context, q *qovery.Client, envID, serviceID string, err error) error {
	var de *qovery.DeploymentError
	if !errors.As(err, &de) {
		return err
	}
	out := &LoggedFailure{DeploymentError: de}
	if q != nil && envID != "" {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), logsLookupTimeout)
		defer cancel()
		if env, eerr := q.GetEnvironment(ctx, envID); eerr == nil {
			out.LogsURL = qovery.ConsoleDeploymentURL(env.Organization.ID, env.Project.ID, envID, serviceID, de.ExecutionID)
		}
	}
	return out
}

// FailureDetail says how a failed deployment or deletion ended and where to
// read why: the final state, the failing step when the status names one,
// the reason when the server gave one, and the console page of the logs
// (see WithLogs). It returns "" when err is no failed deployment. what
// names the service: "the Helm service ID", "application ID".
func FailureDetail(what string, err error) string {
	var de *qovery.DeploymentError
	if !errors.As(err, &de) {
		return ""
	}
	var b strings.Builder
	verb := "deployment"
	if de.State == qovery.StateDeleteError {
		verb = "deletion"
	}
	fmt.Fprintf(&b, "The %s of %s ended in %s", verb, what, de.State)
	if de.FailedStep != "" {
		fmt.Fprintf(&b, " at the step %s", de.FailedStep)
	}
	if de.ExecutionID != "" {
		fmt.Fprintf(&b, " (execution %s)", de.ExecutionID)
	}
	b.WriteString(".")
	if de.Reason != "" {
		fmt.Fprintf(&b, " Qovery says: %s.", strings.TrimSuffix(de.Reason, "."))
	} else {
		b.WriteString(" Qovery's status gives no reason: the deployment logs do.")
	}
	var logged *LoggedFailure
	if errors.As(err, &logged) && logged.LogsURL != "" {
		fmt.Fprintf(&b, " Read them in the Qovery console:\n\n  %s", logged.LogsURL)
	} else {
		fmt.Fprintf(&b, " Read them on the service's Deployments tab in the Qovery console (%s).", qovery.ConsoleURL)
	}
	return b.String()
}
