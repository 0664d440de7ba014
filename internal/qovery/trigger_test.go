package qovery_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// TestWaitFollowsTheTriggeredRequest: with the trigger's answer, the wait
// takes only its request's final state: not the stale final state of the
// previous one, nor the end of the action it was queued behind; without
// an id, the trigger's date tells.
func TestWaitFollowsTheTriggeredRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := ctx(t)
		t0 := time.Date(2026, 8, 20, 10, 0, 0, 0, time.UTC)
		t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)
		wait := func(opts qovery.WaitOptions, statuses ...*qovery.Status) (*qovery.Status, int, error) {
			t.Helper()
			get, calls := script(statuses...)
			opts.PollInterval = time.Millisecond
			st, err := qovery.WaitForDeployment(c, get, opts)
			return st, calls(), err
		}
		var de *qovery.DeploymentError

		// Someone's req-2 ran when qtail's req-3 was queued; the status shows
		// req-1's end for a moment, then req-2, then req-3.
		since := mkStatus("DEPLOYED", "req-1", &t0, "")
		trigger := mkStatus("DEPLOYMENT_QUEUED", "req-3", &t2, "")
		st, n, err := wait(qovery.WaitOptions{Since: since, Trigger: trigger},
			since, mkStatus("DEPLOYING", "req-2", &t1, ""), mkStatus("DEPLOYED", "req-2", &t1, ""),
			mkStatus("DEPLOYING", "req-3", &t2, ""), mkStatus("DEPLOYMENT_ERROR", "req-3", &t2, ""))
		if !errors.As(err, &de) || de.DeploymentRequestID != "req-3" || st.State != "DEPLOYMENT_ERROR" || n != 5 {
			t.Errorf("queued behind another: %+v %v after %d reads", st, err, n)
		}

		// No ids: the trigger's date tells the queued request's statuses.
		since, trigger = mkStatus("DEPLOYED", "", &t0, ""), mkStatus("DEPLOYMENT_QUEUED", "", &t1, "")
		later := t1.Add(time.Second)
		st, n, err = wait(qovery.WaitOptions{Since: since, Trigger: trigger},
			since, mkStatus("DEPLOYING", "", &t0, ""), mkStatus("DEPLOYED", "", &t0, ""), mkStatus("DEPLOYMENT_ERROR", "", &later, ""))
		if !errors.As(err, &de) || n != 4 {
			t.Errorf("by the trigger's date: %+v %v after %d reads", st, err, n)
		}

		// The trigger's id is Since's (ids not renewed): the other rules
		// apply, here the new date.
		since, trigger = mkStatus("DEPLOYED", "req-1", &t0, ""), mkStatus("DEPLOYMENT_QUEUED", "req-1", nil, "")
		st, n, err = wait(qovery.WaitOptions{Since: since, Trigger: trigger}, since, mkStatus("DEPLOYED", "req-1", &t1, ""))
		if err != nil || !st.LastDeploymentDate.Equal(t1) || n != 2 {
			t.Errorf("frozen ids: %+v %v after %d reads", st, err, n)
		}
	})
}

// TestWaitTreatsRecapAsUnexpected: RECAP is neither a success nor a
// failure. A passing RECAP is waited through; one that stays fails the
// wait after RecapReads reads, as the official provider fails on it.
func TestWaitTreatsRecapAsUnexpected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := ctx(t)
		t0 := time.Date(2026, 8, 20, 10, 0, 0, 0, time.UTC)
		recap := mkStatus(qovery.StateRecap, "req-2", &t0, "")
		get, calls := script(recap, recap, mkStatus("DEPLOYED", "req-2", &t0, ""))
		st, err := qovery.WaitForDeployment(c, get, qovery.WaitOptions{PollInterval: time.Millisecond})
		if err != nil || st.State != "DEPLOYED" || calls() != 3 {
			t.Errorf("passing RECAP: %+v %v after %d reads", st, err, calls())
		}
		get, calls = script(recap)
		st, err = qovery.WaitForDeployment(c, get, qovery.WaitOptions{PollInterval: time.Millisecond})
		var de *qovery.DeploymentError
		if !errors.As(err, &de) || de.State != qovery.StateRecap || st.State != qovery.StateRecap || calls() != qovery.RecapReads ||
			!strings.Contains(err.Error(), "does not document") {
			t.Errorf("lasting RECAP: %+v %v after %d reads", st, err, calls())
		}
		// A stale RECAP (another request's) does not count.
		get, calls = script(mkStatus(qovery.StateRecap, "req-1", &t0, ""), mkStatus("DEPLOYED", "req-2", &t0, ""))
		st, err = qovery.WaitForDeployment(c, get, qovery.WaitOptions{PollInterval: time.Millisecond, Trigger: mkStatus("DEPLOYMENT_QUEUED", "req-2", nil, "")})
		if err != nil || st.State != "DEPLOYED" || calls() != 2 {
			t.Errorf("stale RECAP: %+v %v after %d reads", st, err, calls())
		}
	})
}

// TestWaitPollsThroughTheLag: in a bubble, with a status that lags 2 s
// behind the trigger (the sandbox's default), the wait polls at its
// interval until the triggered request shows, and sleeps no more.
func TestWaitPollsThroughTheLag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		prev := mkStatus("DEPLOYED", "req-1", &start, "")
		at := start.Add(time.Millisecond)
		next := mkStatus("DEPLOYED", "req-2", &at, "")
		reads := 0
		get := func(context.Context) (*qovery.Status, error) {
			reads++
			if time.Since(start) < 2*time.Second {
				return prev, nil
			}
			return next, nil
		}
		st, err := qovery.WaitForDeployment(context.Background(), get, qovery.WaitOptions{PollInterval: 500 * time.Millisecond, Since: prev,
			Trigger: mkStatus("DEPLOYMENT_QUEUED", "req-2", &at, "")})
		if err != nil || *st.DeploymentRequestID != "req-2" || reads != 5 || time.Since(start) != 2*time.Second {
			t.Errorf("%+v %v after %d reads and %s", st, err, reads, time.Since(start))
		}
	})
}

// TestWaitIgnoresAnUninformativeTrigger: an answer that is the status as
// it was (Since's id and date) tells nothing: the stale final state is
// still not taken for the outcome.
func TestWaitIgnoresAnUninformativeTrigger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := ctx(t)
		t0 := time.Date(2026, 8, 20, 10, 0, 0, 0, time.UTC)
		t1 := t0.Add(time.Minute)
		since := mkStatus("DEPLOYED", "req-1", &t0, "")
		get, calls := script(since, mkStatus("DEPLOYING", "req-2", &t1, ""), mkStatus("DEPLOYED", "req-2", &t1, ""))
		st, err := qovery.WaitForDeployment(c, get, qovery.WaitOptions{PollInterval: time.Millisecond, Since: since, Trigger: since})
		if err != nil || *st.DeploymentRequestID != "req-2" || calls() != 3 {
			t.Errorf("%+v %v after %d reads", st, err, calls())
		}
	})
}
