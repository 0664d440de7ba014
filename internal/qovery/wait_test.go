package qovery_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// TestWaitWithoutReliableRequestIDs: the wait does not hang on a
// deployment_request_id that turns null, is not renewed, or never
// changes; it uses the date, the state sequence, and at worst a bound.
func TestWaitWithoutReliableRequestIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := ctx(t)
		t0 := time.Date(2026, 8, 20, 10, 0, 0, 0, time.UTC)
		t1 := t0.Add(time.Minute)
		since := mkStatus("DEPLOYED", "req-1", &t0, "")
		wait := func(opts qovery.WaitOptions, statuses ...*qovery.Status) (*qovery.Status, int, error) {
			t.Helper()
			get, calls := script(statuses...)
			opts.PollInterval = time.Millisecond
			short, cancel := context.WithTimeout(c, 2*time.Second)
			defer cancel()
			st, err := qovery.WaitForDeployment(short, get, opts)
			return st, calls(), err
		}

		// The id goes from a value to null: the new date tells.
		st, n, err := wait(qovery.WaitOptions{Since: since},
			mkStatus("DEPLOYED", "", &t0, ""), mkStatus("DEPLOYMENT_QUEUED", "", &t1, ""), mkStatus("DEPLOYMENT_ERROR", "", &t1, ""))
		var de *qovery.DeploymentError
		if !errors.As(err, &de) || st.State != "DEPLOYMENT_ERROR" || n != 3 {
			t.Errorf("id turned null: %+v %v after %d reads", st, err, n)
		}
		// The id is not renewed: the date tells.
		st, n, err = wait(qovery.WaitOptions{Since: since}, mkStatus("DEPLOYED", "req-1", &t0, ""), mkStatus("DEPLOYED", "req-1", &t1, ""))
		if err != nil || !st.LastDeploymentDate.Equal(t1) || n != 2 {
			t.Errorf("id not renewed: %+v %v after %d reads", st, err, n)
		}
		// Neither the id nor the date moves: a running state read since the
		// trigger tells that the next final state is the new one.
		st, n, err = wait(qovery.WaitOptions{Since: since},
			mkStatus("DEPLOYED", "req-1", &t0, ""), mkStatus("DEPLOYING", "req-1", &t0, ""), mkStatus("DEPLOYMENT_ERROR", "req-1", &t0, ""))
		if !errors.As(err, &de) || n != 3 {
			t.Errorf("by the state sequence: %+v %v after %d reads", st, err, n)
		}
		// The execution id tells as well.
		prev := mkStatus("DEPLOYED", "", &t0, "")
		prev.ExecutionID = "svc-1"
		next := mkStatus("DEPLOYED", "", &t0, "")
		next.ExecutionID = "svc-2"
		if st, n, err = wait(qovery.WaitOptions{Since: prev}, prev, next); err != nil || st.ExecutionID != "svc-2" || n != 2 {
			t.Errorf("by execution id: %+v %v after %d reads", st, err, n)
		}
		// Nothing tells: the final state is taken after MaxStale, not at the
		// context's deadline.
		start := time.Now()
		st, _, err = wait(qovery.WaitOptions{Since: since, MaxStale: 50 * time.Millisecond}, mkStatus("DEPLOYED", "req-1", &t0, ""))
		if err != nil || st.State != "DEPLOYED" || time.Since(start) > time.Second {
			t.Errorf("bounded: %+v %v after %s", st, err, time.Since(start))
		}

		// An action was running when Since was read (another one was queued
		// behind it): its own end is stale, the queued one's is the outcome.
		running := mkStatus("DEPLOYING", "req-1", &t0, "")
		st, n, err = wait(qovery.WaitOptions{Since: running}, running, mkStatus("DEPLOYED", "req-1", &t0, ""),
			mkStatus("DEPLOYMENT_QUEUED", "req-2", &t1, ""), mkStatus("DEPLOYMENT_ERROR", "req-2", &t1, ""))
		if !errors.As(err, &de) || de.DeploymentRequestID != "req-2" || n != 4 {
			t.Errorf("queued behind a running one: %+v %v after %d reads", st, err, n)
		}
		runningNoID := mkStatus("DEPLOYING", "", &t0, "")
		st, n, err = wait(qovery.WaitOptions{Since: runningNoID}, runningNoID, mkStatus("DEPLOYED", "", &t0, ""),
			mkStatus("DEPLOYMENT_QUEUED", "", &t1, ""), mkStatus("DEPLOYMENT_ERROR", "", &t1, ""))
		if !errors.As(err, &de) || n != 4 {
			t.Errorf("queued behind a running one, no ids: %+v %v after %d reads", st, err, n)
		}
	})
}

// sequenced is a Deployer whose actions end with the errors of results in
// turn (nil once they run out). When gated, the first action waits for
// release, and entered receives when it starts waiting.
type sequenced struct {
	mu      sync.Mutex
	results []error
	gate    chan struct{}
	entered chan struct{}
	used    bool
}

func newSequenced(gated bool, results ...error) *sequenced {
	d := &sequenced{results: results, entered: make(chan struct{}, 1)}
	if gated {
		d.gate = make(chan struct{})
	}
	return d
}

func (d *sequenced) release() { close(d.gate) }

func (d *sequenced) next(ctx context.Context) error {
	d.mu.Lock()
	wait := d.gate != nil && !d.used
	d.used = true
	d.mu.Unlock()
	if wait {
		d.entered <- struct{}{}
		select {
		case <-d.gate:
		case <-ctx.Done():
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.results) == 0 {
		return nil
	}
	err := d.results[0]
	d.results = d.results[1:]
	return err
}

func (d *sequenced) Deploy(ctx context.Context, _ qoveryapi.ServiceSnapshot) error {
	return d.next(ctx)
}

func (d *sequenced) Delete(ctx context.Context, _ qoveryapi.ServiceSnapshot) error {
	return d.next(ctx)
}

// TestWaitAgainstFakeModes: the wait finds the outcome of the action it
// triggered with every status mode of the fake: null ids, ids that are not
// renewed, a stale status after the trigger (the default lag, or none),
// and an action queued (202) behind a running one, which the trigger's
// answer tells from the running one.
func TestWaitAgainstFakeModes(t *testing.T) {
	modes := map[string]qoveryapi.Options{
		"ids":                {},
		"null ids":           {NullDeploymentIDs: true},
		"frozen ids":         {FrozenDeploymentIDs: true},
		"ids, no lag":        {StatusLag: qoveryapi.NoStatusLag},
		"null ids, no lag":   {NullDeploymentIDs: true, StatusLag: qoveryapi.NoStatusLag},
		"frozen ids, no lag": {FrozenDeploymentIDs: true, StatusLag: qoveryapi.NoStatusLag},
	}
	for name, opts := range modes {
		t.Run(name+", redeploy", func(t *testing.T) {
			dep := newSequenced(false, errors.New("image pull failed"))
			opts := opts
			opts.Deployer = dep
			f := newFixture(t, opts)
			c := ctx(t)
			status := func(ctx context.Context) (*qovery.Status, error) { return f.c.GetApplicationStatus(ctx, f.app) }
			before, err := status(c)
			if err != nil || before.State != qovery.StateDeployed {
				t.Fatalf("before %+v %v", before, err)
			}
			time.Sleep(2 * time.Millisecond)
			if _, err := f.c.RedeployApplication(c, f.app); err != nil {
				t.Fatal(err)
			}
			st, err := qovery.WaitForDeployment(c, status, qovery.WaitOptions{PollInterval: 2 * time.Millisecond, Since: before, MaxStale: 5 * time.Second})
			var de *qovery.DeploymentError
			if !errors.As(err, &de) || st.State != qovery.StateDeploymentError || de.FailedStep != "DEPLOYMENT" {
				t.Errorf("outcome %+v %v", st, err)
			}
		})
		t.Run(name+", queued", func(t *testing.T) {
			// Someone's deployment runs; qtail's redeployment is queued
			// behind it (202) and fails; the running one succeeds.
			dep := newSequenced(true, nil, errors.New("second deployment failed"))
			opts := opts
			opts.Deployer = dep
			f := newFixture(t, opts)
			c := ctx(t)
			status := func(ctx context.Context) (*qovery.Status, error) { return f.c.GetApplicationStatus(ctx, f.app) }
			if err := f.fake.Deploy(f.app); err != nil {
				t.Fatal(err)
			}
			<-dep.entered
			before, err := status(c)
			// With the lag, before is the stale status of the previous
			// deployment.
			if err != nil || (opts.StatusLag < 0 && before.State != qovery.StateDeploying) {
				t.Fatalf("before %+v %v", before, err)
			}
			queued, err := f.c.RedeployApplication(c, f.app)
			if err != nil || queued.State != qovery.StateDeploymentQueued {
				t.Fatalf("queued: %+v %v", queued, err)
			}
			dep.release()
			st, err := qovery.WaitForDeployment(c, status, qovery.WaitOptions{PollInterval: 2 * time.Millisecond, Since: before, Trigger: queued, MaxStale: 5 * time.Second})
			var de *qovery.DeploymentError
			if !errors.As(err, &de) || st.DeploymentRequestsCount != 3 {
				t.Errorf("outcome %+v %v: want the queued deployment's failure", st, err)
			}
		})
	}
}
