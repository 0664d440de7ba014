package cluster

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// WithLogs adds the console page of the logs to a failed deployment when
// it can read the environment, and leaves every other error alone.
func TestWithLogs(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	failed := &qovery.DeploymentError{State: qovery.StateDeploymentError, ExecutionID: "exec-1"}

	other := errors.New("boom")
	if err := WithLogs(w.ctx, w.q, w.env, "h1", other); err != other {
		t.Errorf("WithLogs of another error = %v, want it unchanged", err)
	}

	err := WithLogs(w.ctx, w.q, w.env, "h1", fmt.Errorf("deploying: %w", failed))
	var lf *LoggedFailure
	if !errors.As(err, &lf) || lf.LogsURL != qovery.ConsoleDeploymentURL(w.org, w.project, w.env, "h1", "exec-1") {
		t.Fatalf("WithLogs = %#v, want the console page of the logs", err)
	}
	var de *qovery.DeploymentError
	if !errors.As(err, &de) || de != failed {
		t.Error("the failure no longer unwraps to the deployment error")
	}

	for name, f := range map[string]func() error{
		"no environment": func() error { return WithLogs(w.ctx, w.q, "", "h1", failed) },
		"no client":      func() error { return WithLogs(w.ctx, nil, w.env, "h1", failed) },
		"unreadable environment": func() error {
			w.Qovery.Faults().Add(faults.Rule{Route: "GET /environment/{environmentId}", Status: http.StatusForbidden})
			return WithLogs(w.ctx, w.q, w.env, "h1", failed)
		},
	} {
		if !errors.As(f(), &lf) || lf.LogsURL != "" {
			t.Errorf("%s: WithLogs = %#v, want a failure without a logs URL", name, lf)
		}
	}
}

func TestFailureDetail(t *testing.T) {
	t.Parallel()
	if d := FailureDetail("the Helm service h1", errors.New("boom")); d != "" {
		t.Errorf("FailureDetail of another error = %q, want none", d)
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"bare", &qovery.DeploymentError{State: qovery.StateDeploymentError},
			"The deployment of the Helm service h1 ended in DEPLOYMENT_ERROR. Qovery's status gives no reason: the deployment logs do. " +
				"Read them on the service's Deployments tab in the Qovery console (" + qovery.ConsoleURL + ")."},
		{"step, execution and reason", &qovery.DeploymentError{State: qovery.StateDeploymentError, FailedStep: "DEPLOYMENT", ExecutionID: "e1", Reason: "image pull back-off."},
			"The deployment of the Helm service h1 ended in DEPLOYMENT_ERROR at the step DEPLOYMENT (execution e1). Qovery says: image pull back-off. " +
				"Read them on the service's Deployments tab"},
		{"deletion with its logs", &LoggedFailure{DeploymentError: &qovery.DeploymentError{State: qovery.StateDeleteError}, LogsURL: "https://console.example/logs"},
			"The deletion of the Helm service h1 ended in DELETE_ERROR. Qovery's status gives no reason: the deployment logs do. " +
				"Read them in the Qovery console:\n\n  https://console.example/logs"},
		{"logs lookup failed", &LoggedFailure{DeploymentError: &qovery.DeploymentError{State: qovery.StateDeploymentError}},
			"Read them on the service's Deployments tab"},
	} {
		if got := FailureDetail("the Helm service h1", tc.err); !strings.Contains(got, tc.want) {
			t.Errorf("%s: FailureDetail = %q, want it to say %q", tc.name, got, tc.want)
		}
	}
}
