package qovery

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// reads returns a status read that gives statuses in turn, the last one
// from then on, and counts the reads.
func reads(statuses ...Status) (func(context.Context) (*Status, error), *int) {
	n := 0
	return func(context.Context) (*Status, error) {
		s := statuses[min(n, len(statuses)-1)]
		n++
		return &s, nil
	}, &n
}

func TestWaitFollowsTheTriggeredRequest(t *testing.T) {
	// The trigger names request r1: the outcome of another request (r2)
	// is not the trigger's, even though it differs from Since's.
	r0, r1, r2 := "r0", "r1", "r2"
	get, n := reads(Status{ID: "s", State: "DEPLOYMENT_ERROR", DeploymentRequestID: &r2}, Status{ID: "s", State: "DEPLOYED", DeploymentRequestID: &r1})
	s, err := WaitForDeployment(context.Background(), get, WaitOptions{PollInterval: time.Nanosecond,
		Since: &Status{ID: "s", State: "DEPLOYED", DeploymentRequestID: &r0}, Trigger: &Status{ID: "s", DeploymentRequestID: &r1}})
	if err != nil || s.State != "DEPLOYED" || *n != 2 {
		t.Errorf("status %+v, error %v after %d reads; want DEPLOYED of r1 after 2", s, err, *n)
	}
}

func TestWaitTakesAStaleLookingStateAfterMaxStale(t *testing.T) {
	// Nothing tells the reads from Since: the final state is believed once
	// MaxStale has passed, at the read that comes exactly then.
	synctest.Test(t, func(t *testing.T) {
		get, n := reads(Status{ID: "s", State: "DEPLOYED"})
		start := time.Now()
		s, err := WaitForDeployment(t.Context(), get, WaitOptions{PollInterval: 5 * time.Second, MaxStale: 10 * time.Second,
			Since: &Status{ID: "s", State: "DEPLOYED"}})
		if err != nil || s.State != "DEPLOYED" || *n != 3 || time.Since(start) != 10*time.Second {
			t.Errorf("status %+v, error %v after %d reads and %v; want DEPLOYED at the third read, after 10s", s, err, *n, time.Since(start))
		}
	})
}
