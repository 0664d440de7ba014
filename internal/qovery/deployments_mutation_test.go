package qovery

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestDeploymentErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  DeploymentError
		want string
	}{
		{DeploymentError{ServiceID: "s", State: "DEPLOYMENT_ERROR"},
			"qovery: service s ended in DEPLOYMENT_ERROR; the API gives no reason: see the deployment logs in the Qovery console"},
		{DeploymentError{ServiceID: "s", State: "DEPLOYMENT_ERROR", FailedStep: "BUILD"},
			"qovery: service s ended in DEPLOYMENT_ERROR (failed step BUILD); the API gives no reason: see the deployment logs in the Qovery console"},
		{DeploymentError{ServiceID: "s", State: "CANCELED", DeploymentRequestID: "r1", ExecutionID: "e1", Reason: "quota"},
			"qovery: service s ended in CANCELED (deployment request r1, execution e1): quota"},
		{DeploymentError{ServiceID: "s", State: "DELETE_ERROR", ExecutionID: "e1"},
			"qovery: service s ended in DELETE_ERROR (execution e1); the API gives no reason: see the deployment logs in the Qovery console"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestFailedStepAndFailure(t *testing.T) {
	rid := "r1"
	s := &Status{ID: "s", State: "DEPLOYMENT_ERROR", DeploymentRequestID: &rid, ExecutionID: "e1", Message: "m",
		Steps: &Steps{Details: []Step{{StepName: "BUILD", Status: "SUCCESS"}, {StepName: "DEPLOYMENT", Status: "CANCEL"}, {StepName: "ROUTER_DEPLOYMENT", Status: "ERROR"}}}}
	if st := s.FailedStep(); st == nil || st.StepName != "DEPLOYMENT" {
		t.Errorf("FailedStep = %+v, want the canceled DEPLOYMENT step", st)
	}
	f := s.Failure()
	if *f != (DeploymentError{ServiceID: "s", State: "DEPLOYMENT_ERROR", DeploymentRequestID: "r1", ExecutionID: "e1", FailedStep: "DEPLOYMENT", Reason: "m"}) {
		t.Errorf("Failure = %+v", f)
	}
	s.Steps.Details[1].Status = "SKIP"
	if st := s.FailedStep(); st == nil || st.StepName != "ROUTER_DEPLOYMENT" {
		t.Errorf("FailedStep = %+v, want the ROUTER_DEPLOYMENT step in ERROR", st)
	}
	s.Steps.Details[2].Status = "SUCCESS"
	if st := s.FailedStep(); st != nil {
		t.Errorf("FailedStep of a status without failure = %+v", st)
	}
	if st := (&Status{}).FailedStep(); st != nil {
		t.Errorf("FailedStep without steps = %+v", st)
	}
	if st := (*Status)(nil).FailedStep(); st != nil {
		t.Errorf("FailedStep of nil = %+v", st)
	}
	if f := (&Status{ID: "s", State: "CANCELED"}).Failure(); f.DeploymentRequestID != "" || f.FailedStep != "" {
		t.Errorf("Failure without ids = %+v", f)
	}
}

func TestIsFinalStateAndConsoleURL(t *testing.T) {
	for state, final := range map[string]bool{
		"": false, "QUEUED": false, "DEPLOYMENT_QUEUED": false, "DEPLOYING": false, "WAITING_RUNNING": false,
		"DEPLOYED": true, "DEPLOYMENT_ERROR": true, "CANCELED": true, "READY": true, "QUEUED_X": true, "XWAITING_": true,
	} {
		if got := IsFinalState(state); got != final {
			t.Errorf("IsFinalState(%q) = %v, want %v", state, got, final)
		}
	}
	if got, want := ConsoleDeploymentURL("o", "p", "e", "s", ""), ConsoleURL+"/organization/o/project/p/environment/e/service/s/deployments"; got != want {
		t.Errorf("ConsoleDeploymentURL = %q, want %q", got, want)
	}
	if got, want := ConsoleDeploymentURL("o", "p", "e", "s", "x/y"), ConsoleURL+"/organization/o/project/p/environment/e/service/s/deployments/logs/x%2Fy"; got != want {
		t.Errorf("ConsoleDeploymentURL = %q, want %q", got, want)
	}
}

// statuses answers the statuses in order, the last one again and again,
// and counts the reads.
type statuses struct {
	list  []*Status
	reads atomic.Int32
}

func (s *statuses) get(context.Context) (*Status, error) {
	n := int(s.reads.Add(1)) - 1
	if n >= len(s.list) {
		n = len(s.list) - 1
	}
	return s.list[n], nil
}

func TestWaitDefaultsWhenZero(t *testing.T) {
	t.Parallel()
	// A zero PollInterval waits the default 5 s between reads: within
	// 200 ms there is one read only.
	s := &statuses{list: []*Status{{ID: "s", State: StateDeploying}}}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := WaitForDeployment(ctx, s.get, WaitOptions{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "last state DEPLOYING") {
		t.Errorf("err = %v", err)
	}
	if n := s.reads.Load(); n != 1 {
		t.Errorf("%d reads in 200ms with the default interval, want 1", n)
	}

	// A zero MaxStale keeps a status that looks like Since's for the
	// default 30 s: the new outcome is awaited.
	since := &Status{ID: "s", State: StateDeployed, ExecutionID: "e1"}
	s = &statuses{list: []*Status{since, since, {ID: "s", State: StateDeployed, ExecutionID: "e2"}}}
	short, stop := context.WithTimeout(context.Background(), 2*time.Second)
	defer stop()
	got, err := WaitForDeployment(short, s.get, WaitOptions{PollInterval: time.Millisecond, Since: since})
	if err != nil || got.ExecutionID != "e2" || s.reads.Load() != 3 {
		t.Errorf("got %+v, %v after %d reads; want e2 after 3", got, err, s.reads.Load())
	}
	// A negative MaxStale also takes the default.
	s = &statuses{list: []*Status{since, {ID: "s", State: StateDeployed, ExecutionID: "e2"}}}
	got, err = WaitForDeployment(short, s.get, WaitOptions{PollInterval: time.Millisecond, Since: since, MaxStale: -time.Second})
	if err != nil || got.ExecutionID != "e2" || s.reads.Load() != 2 {
		t.Errorf("got %+v, %v after %d reads; want e2 after 2", got, err, s.reads.Load())
	}
}

func TestFreshStatuses(t *testing.T) {
	r1, r2 := "r1", "r2"
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	for _, tc := range []struct {
		name  string
		since *Status
		s     *Status
		fresh bool
	}{
		{"no since", nil, &Status{State: StateDeployed}, true},
		{"same everything", &Status{State: StateDeployed, DeploymentRequestID: &r1, ExecutionID: "e", LastDeploymentDate: &t0},
			&Status{State: StateDeployed, DeploymentRequestID: &r1, ExecutionID: "e", LastDeploymentDate: &t0}, false},
		{"other request", &Status{State: StateDeployed, DeploymentRequestID: &r1}, &Status{State: StateDeployed, DeploymentRequestID: &r2}, true},
		{"request only before", &Status{State: StateDeployed, DeploymentRequestID: &r1}, &Status{State: StateDeployed}, false},
		{"request only after", &Status{State: StateDeployed}, &Status{State: StateDeployed, DeploymentRequestID: &r2}, false},
		{"other execution", &Status{State: StateDeployed, ExecutionID: "e1"}, &Status{State: StateDeployed, ExecutionID: "e2"}, true},
		{"execution only before", &Status{State: StateDeployed, ExecutionID: "e1"}, &Status{State: StateDeployed}, false},
		{"execution only after", &Status{State: StateDeployed}, &Status{State: StateDeployed, ExecutionID: "e2"}, false},
		{"later deployment", &Status{State: StateDeployed, LastDeploymentDate: &t0}, &Status{State: StateDeployed, LastDeploymentDate: &t1}, true},
		{"earlier deployment", &Status{State: StateDeployed, LastDeploymentDate: &t1}, &Status{State: StateDeployed, LastDeploymentDate: &t0}, false},
		{"first deployment", &Status{State: StateReady}, &Status{State: StateDeployed, LastDeploymentDate: &t0}, true},
		{"date only before", &Status{State: StateDeployed, LastDeploymentDate: &t0}, &Status{State: StateDeployed}, false},
		{"running after a final since", &Status{State: StateDeployed}, &Status{State: StateDeploying}, true},
		{"running after a running since", &Status{State: StateDeploying}, &Status{State: StateDeploying}, false},
	} {
		tr := WaitOptions{Since: tc.since}.tracker()
		if got := tr.fresh(tc.s); got != tc.fresh {
			t.Errorf("%s: fresh = %v, want %v", tc.name, got, tc.fresh)
		}
	}
	// A running state read once makes the later final state fresh.
	tr := WaitOptions{Since: &Status{State: StateDeployed}}.tracker()
	if !tr.fresh(&Status{State: StateDeploying}) || !tr.fresh(&Status{State: StateDeployed}) {
		t.Error("the final state after a running one is not fresh")
	}
	// A stale look-alike becomes fresh once MaxStale has passed.
	tr = WaitOptions{Since: &Status{State: StateDeployed}, MaxStale: time.Nanosecond}.tracker()
	time.Sleep(time.Millisecond)
	if !tr.fresh(&Status{State: StateDeployed}) {
		t.Error("a look-alike is still stale after MaxStale")
	}
}

func TestWaitForDeletionWithoutOptions(t *testing.T) {
	calls := 0
	short, stop := context.WithTimeout(context.Background(), time.Second)
	defer stop()
	err := WaitForDeletion(short, func(context.Context) (*Status, error) {
		calls++
		if calls == 1 {
			return &Status{ID: "s", State: StateDeleteError}, nil
		}
		return nil, &APIError{Status: http.StatusNotFound}
	})
	var de *DeploymentError
	if !errors.As(err, &de) || de.State != StateDeleteError || calls != 1 {
		t.Errorf("err = %v after %d reads, want the DELETE_ERROR at once", err, calls)
	}
	for _, answer := range []*APIError{
		{Status: http.StatusNotFound}, {Status: http.StatusForbidden}, {Status: http.StatusBadRequest, Detail: "Helm Does Not Exist"},
	} {
		if err := WaitForDeletion(context.Background(), func(context.Context) (*Status, error) { return nil, answer }); err != nil {
			t.Errorf("%d %q: %v, want the end of the deletion", answer.Status, answer.Detail, err)
		}
	}
	other := &APIError{Status: http.StatusBadRequest, Detail: "invalid"}
	if err := WaitForDeletion(context.Background(), func(context.Context) (*Status, error) { return nil, other }); err != other {
		t.Errorf("400 invalid: %v", err)
	}
	// A read that is not a status goes on until the object is gone.
	n := 0
	err = WaitForDeletion(context.Background(), func(context.Context) (*Helm, error) {
		n++
		if n < 3 {
			return &Helm{}, nil
		}
		return nil, &APIError{Status: http.StatusNotFound}
	}, WaitOptions{PollInterval: time.Millisecond})
	if err != nil || n != 3 {
		t.Errorf("err %v after %d reads", err, n)
	}
}
