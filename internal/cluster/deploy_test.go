package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// poll is how often the waits of these tests read the status, on the
// clock of their synctest bubble.
const poll = 5 * time.Second

func (w *world) status(id string) *qovery.Status {
	w.t.Helper()
	st, err := w.q.GetHelmStatus(w.ctx, id)
	if err != nil {
		w.t.Fatal(err)
	}
	return st
}

func (w *world) deploys(id string) int {
	w.deployer.mu.Lock()
	defer w.deployer.mu.Unlock()
	return w.deployer.deploys[id]
}

// DeployHelm deploys and returns once the deployment ended, no sooner.
func TestDeployHelm(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		id := w.manifests(w.env, "proxies", "manifests: []\n")
		start := time.Now()
		if err := DeployHelm(w.ctx, w.q, id, poll); err != nil {
			t.Fatalf("DeployHelm: %v", err)
		}
		// The trigger waits for the quiet period of the deployments
		// gathered per environment first.
		if took := time.Since(start); took < deployTime || took > deployTime+poll+qovery.DefaultDeployQuiet {
			t.Errorf("DeployHelm returned after %s, want the deployment's %s and at most the gathering's quiet period and one poll more", took, deployTime)
		}
		if st := w.status(id); st.State != qovery.StateDeployed || st.ServiceDeploymentStatus != qovery.UpToDate || w.deploys(id) != 1 {
			t.Errorf("after DeployHelm: %s, %s, %d deployments; want one, DEPLOYED and UP_TO_DATE", st.State, st.ServiceDeploymentStatus, w.deploys(id))
		}
	})
}

// An action started in the console is waited for, then the service is
// deployed again with qtail's configuration.
func TestDeployHelmWaitsForTheRunningAction(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		id := w.manifests(w.env, "proxies", "manifests: []\n")
		if err := w.Qovery.Deploy(id); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := DeployHelm(w.ctx, w.q, id, poll); err != nil {
			t.Fatalf("DeployHelm: %v", err)
		}
		if took := time.Since(start); took < 2*deployTime {
			t.Errorf("DeployHelm returned after %s: it did not wait for both deployments", took)
		}
		st, _ := w.Qovery.Status(id)
		if st.State != qovery.StateDeployed || st.RequestsCount != 2 || w.deploys(id) != 2 {
			t.Errorf("after DeployHelm: %s, %d requests, %d deployments; want DEPLOYED after two", st.State, st.RequestsCount, w.deploys(id))
		}
	})
}

// An API that keeps refusing with 409 is asked four times, then its
// refusal is the error.
func TestDeployHelmGivesUpAfterFourConflicts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		id := w.manifests(w.env, "proxies", "manifests: []\n")
		w.Qovery.Faults().Add(faults.Rule{Route: "POST /helm/{helmId}/deploy", Status: http.StatusConflict, Count: 10,
			Body: []byte(`{"status": 409, "detail": "Operation is in progress"}`)})
		err := DeployHelm(w.ctx, w.q, id, poll)
		if !qovery.IsConflict(err) || !strings.HasPrefix(err.Error(), "starting the deployment: ") {
			t.Errorf("DeployHelm: %v, want the conflict", err)
		}
		if n := w.Qovery.Faults().Count("POST /helm/{helmId}/deploy"); n != 4 || w.deploys(id) != 0 {
			t.Errorf("%d deployment requests, %d deployments; want four requests, none deployed", n, w.deploys(id))
		}
	})
}

// A deployment refused because another action just started (409) is
// asked again.
func TestDeployHelmAsksAgainAfterAConflict(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		id := w.manifests(w.env, "proxies", "manifests: []\n")
		w.Qovery.Faults().Add(faults.Rule{Route: "POST /helm/{helmId}/deploy", Status: http.StatusConflict,
			Body: []byte(`{"status": 409, "detail": "Operation is in progress"}`)})
		if err := DeployHelm(w.ctx, w.q, id, poll); err != nil {
			t.Fatalf("DeployHelm: %v", err)
		}
		if n := w.Qovery.Faults().Count("POST /helm/{helmId}/deploy"); n != 2 || w.deploys(id) != 1 {
			t.Errorf("%d deployment requests, %d deployments; want two requests, one deployment", n, w.deploys(id))
		}
	})
}

func TestDeployHelmFailures(t *testing.T) {
	t.Parallel()
	t.Run("the deployment fails", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			id := w.manifests(w.env, "proxies", "manifests: []\n")
			w.deployer.failing(id, "the CRD is missing")
			err := DeployHelm(w.ctx, w.q, id, poll)
			var de *qovery.DeploymentError
			if !errors.As(err, &de) || de.State != qovery.StateDeploymentError || errors.Is(err, ErrTimedOut) {
				t.Fatalf("DeployHelm = %v, want a DEPLOYMENT_ERROR", err)
			}
		})
	})
	t.Run("the deadline comes first", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			id := w.manifests(w.env, "proxies", "manifests: []\n")
			ctx, cancel := context.WithTimeout(w.ctx, deployTime/2)
			defer cancel()
			err := DeployHelm(ctx, w.q, id, poll)
			if !errors.Is(err, ErrTimedOut) || !strings.Contains(err.Error(), "(last state seen: DEPLOYING)") {
				t.Fatalf("DeployHelm = %v, want a timeout that names the last state", err)
			}
		})
	})
	t.Run("the deadline comes while another action runs", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			id := w.manifests(w.env, "proxies", "manifests: []\n")
			if err := w.Qovery.Deploy(id); err != nil {
				t.Fatal(err)
			}
			w.Qovery.Faults().Add(faults.Rule{Route: "POST /helm/{helmId}/deploy", Status: http.StatusConflict, Count: 10,
				Body: []byte(`{"status": 409, "detail": "Operation is in progress"}`)})
			ctx, cancel := context.WithTimeout(w.ctx, deployTime/2)
			defer cancel()
			err := DeployHelm(ctx, w.q, id, poll)
			// The status read before the request still shows the final
			// state from before the console's deployment.
			if !errors.Is(err, ErrTimedOut) || !strings.Contains(err.Error(), "(last state seen: READY)") {
				t.Fatalf("DeployHelm = %v, want a timeout that names the state read before the request", err)
			}
			if n := w.Qovery.Faults().Count("POST /helm/{helmId}/deploy"); n != 1 {
				t.Errorf("%d deployment requests, want one: the deadline came during the wait for the running action", n)
			}
		})
	})
	t.Run("the status cannot be read", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			id := w.manifests(w.env, "proxies", "manifests: []\n")
			w.Qovery.Faults().Add(faults.Rule{Route: "GET /helm/{helmId}/status", Status: http.StatusBadGateway})
			err := DeployHelm(w.ctx, w.q, id, poll)
			if err == nil || errors.Is(err, ErrTimedOut) || !strings.HasPrefix(err.Error(), "reading the deployment status: ") || w.deploys(id) != 0 {
				t.Fatalf("DeployHelm = %v, %d deployments; want the read's error and none", err, w.deploys(id))
			}
		})
	})
	t.Run("the deployment cannot start", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			id := w.manifests(w.env, "proxies", "manifests: []\n")
			w.Qovery.Faults().Add(faults.Rule{Route: "POST /helm/{helmId}/deploy", Status: http.StatusBadRequest})
			err := DeployHelm(w.ctx, w.q, id, poll)
			if err == nil || !strings.HasPrefix(err.Error(), "starting the deployment: ") {
				t.Fatalf("DeployHelm = %v, want the request's error", err)
			}
		})
	})
}

// deadline names the last state seen only when the context ended.
func TestDeadline(t *testing.T) {
	t.Parallel()
	cause := errors.New("boom")
	if err := deadline(t.Context(), cause, "DEPLOYING"); err != cause {
		t.Errorf("deadline with a live context = %v, want the error itself", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := deadline(ctx, cause, ""); !errors.Is(err, ErrTimedOut) || !strings.Contains(err.Error(), "(last state seen: unknown)") {
		t.Errorf("deadline without a state = %v", err)
	}
}

func TestDeleteHelm(t *testing.T) {
	t.Parallel()
	t.Run("deleted, then already gone", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			id := w.manifests(w.env, "proxies", "manifests: []\n")
			start := time.Now()
			if err := DeleteHelm(w.ctx, w.q, id, w.env, poll); err != nil {
				t.Fatalf("DeleteHelm: %v", err)
			}
			if took := time.Since(start); took < deployTime {
				t.Errorf("DeleteHelm returned after %s, before the deletion ended", took)
			}
			if _, ok := w.Qovery.Helm(id); ok {
				t.Error("the Helm service is still there")
			}
			if err := DeleteHelm(w.ctx, w.q, id, w.env, poll); err != nil {
				t.Errorf("DeleteHelm of a service already gone: %v", err)
			}
		})
	})
	t.Run("the deletion fails", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			id := w.manifests(w.env, "proxies", "manifests: []\n")
			w.deployer.failing(id, "finalizer stuck")
			err := DeleteHelm(w.ctx, w.q, id, w.env, poll)
			var lf *LoggedFailure
			if !errors.As(err, &lf) || lf.State != qovery.StateDeleteError {
				t.Fatalf("DeleteHelm = %v, want a DELETE_ERROR with its logs", err)
			}
			if want := "/organization/" + w.org + "/project/" + w.project + "/environment/" + w.env + "/service/" + id + "/deployments/logs/"; !strings.Contains(lf.LogsURL, want) {
				t.Errorf("logs URL %q, want one under %q", lf.LogsURL, want)
			}
			if _, ok := w.Qovery.Helm(id); !ok {
				t.Error("the Helm service whose deletion failed is gone")
			}
		})
	})
	t.Run("the request fails", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			id := w.manifests(w.env, "proxies", "manifests: []\n")
			w.Qovery.Faults().Add(faults.Rule{Route: "DELETE /helm/{helmId}", Status: http.StatusInternalServerError})
			var re *DeleteRequestError
			if err := DeleteHelm(w.ctx, w.q, id, w.env, poll); !errors.As(err, &re) || re.Unwrap() == nil || re.Error() != re.Err.Error() {
				t.Fatalf("DeleteHelm = %v, want a *DeleteRequestError", err)
			}
		})
	})
	t.Run("the deadline comes first", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			id := w.manifests(w.env, "proxies", "manifests: []\n")
			ctx, cancel := context.WithTimeout(w.ctx, deployTime/2)
			defer cancel()
			err := DeleteHelm(ctx, w.q, id, w.env, poll)
			if !errors.Is(err, ErrTimedOut) || !strings.Contains(err.Error(), "to be deleted (last state seen: DELETING)") {
				t.Fatalf("DeleteHelm = %v, want a timeout that names the last state", err)
			}
		})
	})
}

func TestDeployed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		st      qovery.Status
		want    bool
		warning string
	}{
		{qovery.Status{State: qovery.StateDeployed, ServiceDeploymentStatus: qovery.UpToDate}, true, ""},
		{qovery.Status{State: qovery.StateDeployed, ServiceDeploymentStatus: "OUT_OF_DATE"}, false, "Operator Configuration Not Deployed"},
		{qovery.Status{State: qovery.StateDeploymentError}, false, "Operator Deployment Failed"},
		{qovery.Status{State: qovery.StateDeleteError}, false, "Operator Deployment Failed"},
		{qovery.Status{State: "DEPLOYING", ServiceDeploymentStatus: qovery.UpToDate}, false, ""},
	} {
		var diags diag.Diagnostics
		got := Deployed(&diags, "operator", "h1", &tc.st)
		summary := ""
		if len(diags) > 0 {
			summary = diags[0].Summary()
		}
		if got != tc.want || len(diags) > 1 || summary != tc.warning || diags.HasError() {
			t.Errorf("Deployed(%s, %s) = %v, %v; want %v with the warning %q", tc.st.State, tc.st.ServiceDeploymentStatus, got, diags, tc.want, tc.warning)
		}
	}
}

func TestDeploymentDeploy(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		ok := w.manifests(w.env, "fine", "manifests: []\n")
		bad := w.manifests(w.env, "broken", "manifests: []\n")
		w.deployer.failing(bad, "the CRD is missing")
		d := Deployment{Qovery: w.q, Poll: poll, EnvironmentID: w.env, Noun: "connector", Op: "create", Timeout: time.Hour}

		var diags diag.Diagnostics
		d.HelmID = ok
		if !d.Deploy(w.ctx, "waiting for the connector deployment", &diags) || diags.HasError() {
			t.Fatalf("Deploy = false, %v", diags)
		}
		d.HelmID = bad
		if d.Deploy(w.ctx, "waiting for the connector deployment", &diags) || !diags.HasError() {
			t.Fatal("a failed deployment was reported as done")
		}
		e := diags.Errors()[0]
		for _, want := range []string{"The deployment of the Helm service " + bad + " ended in DEPLOYMENT_ERROR",
			"Read them in the Qovery console", "/service/" + bad + "/deployments/logs/", "qtail saved what it did in the state"} {
			if e.Summary() != "Connector Deployment Failed" || !strings.Contains(e.Detail(), want) {
				t.Errorf("error %q: %q, want it to say %q", e.Summary(), e.Detail(), want)
			}
		}
	})
}

func TestDeploymentFailed(t *testing.T) {
	t.Parallel()
	d := Deployment{HelmID: "h1", Noun: "ProxyGroup", Op: "update", Timeout: 20 * time.Minute}
	timeout := fmt.Errorf("%w waiting for the deployment to end (last state seen: DEPLOYING)", ErrTimedOut)
	for _, tc := range []struct {
		name       string
		byOperator bool
		err        error
		summary    string
		says       []string
		not        string
	}{
		{"no proxy", false, &NoProxyError{Reason: "the ProxyClass small cannot be Ready"}, "No Device Will Appear for the ProxyGroup",
			[]string{"The Helm service h1 is deployed, but no device will appear: the ProxyClass small cannot be Ready.",
				"stopped waiting for the replicas instead of waiting"}, ""},
		{"deployment", false, &qovery.DeploymentError{State: qovery.StateDeploymentError, FailedStep: "DEPLOYMENT"}, "ProxyGroup Deployment Failed",
			[]string{"ended in DEPLOYMENT_ERROR at the step DEPLOYMENT", "Deployments tab"}, ""},
		{"deletion", false, &qovery.DeploymentError{State: qovery.StateDeleteError}, "ProxyGroup Deletion Failed",
			[]string{"The deletion of the Helm service h1 ended in DELETE_ERROR"}, ""},
		{"timeout", false, timeout, "Timed Out Waiting for the Replicas",
			[]string{"qtail waited 20m0s (timeouts.update) for the Helm service h1", "raise timeouts.update"}, "operator's logs"},
		{"timeout, operator's objects", true, timeout, "Timed Out Waiting for the Replicas",
			[]string{"Look at the deployment in the Qovery console and at the operator's logs"}, ""},
		{"API", false, errors.New("tailscale API 500"), "Unable to Finish Waiting for the Replicas", []string{"tailscale API 500"}, ""},
	} {
		if np, ok := tc.err.(*NoProxyError); ok && np.Error() != np.Reason {
			t.Errorf("NoProxyError says %q, want its reason", np.Error())
		}
		d.ByOperator = tc.byOperator
		var diags diag.Diagnostics
		d.Failed(&diags, "waiting for the replicas", tc.err)
		if len(diags) != 1 || !diags.HasError() || diags[0].Summary() != tc.summary {
			t.Errorf("%s: diagnostics %v, want one error %q", tc.name, diags, tc.summary)
			continue
		}
		for _, want := range tc.says {
			if !strings.Contains(diags[0].Detail(), want) {
				t.Errorf("%s: %q does not say %q", tc.name, diags[0].Detail(), want)
			}
		}
		if tc.not != "" && strings.Contains(diags[0].Detail(), tc.not) {
			t.Errorf("%s: %q says %q", tc.name, diags[0].Detail(), tc.not)
		}
	}
}
