package batch

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// recordingRunner runs batches of ints, answering each with its double,
// and records the batches and when they started.
type recordingRunner struct {
	mu      sync.Mutex
	batches [][]int
	at      []time.Time
}

func (r *recordingRunner) run(batch []int) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, append([]int(nil), batch...))
	r.at = append(r.at, time.Now())
	out := make([]int, len(batch))
	for i, v := range batch {
		out[i] = 2 * v
	}
	return out
}

func (r *recordingRunner) sizes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for _, b := range r.batches {
		out = append(out, len(b))
	}
	return out
}

const (
	testQuiet   = 25 * time.Millisecond
	testMaxWait = 2 * time.Second
)

func newTestGatherer(r *recordingRunner) *Gatherer[int, int] {
	return NewGatherer(GathererOptions[int]{Quiet: testQuiet, MaxWait: testMaxWait}, r.run)
}

// TestGathererLoneRequest: a request alone waits for the quiet period and
// no longer.
func TestGathererLoneRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recordingRunner{}
		g := newTestGatherer(r)
		start := time.Now()
		res, inFlight, err := g.Do(t.Context(), "a", 21)
		if err != nil || inFlight || res != 42 {
			t.Fatalf("Do = %d, %v, %v", res, inFlight, err)
		}
		if waited := time.Since(start); waited != testQuiet {
			t.Errorf("waited %s, want the quiet period %s", waited, testQuiet)
		}
	})
}

// TestGathererExpected: a batch waits for the expected requests, however
// late within maxWait, and then starts after the quiet period; every
// caller gets its own result.
func TestGathererExpected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recordingRunner{}
		g := newTestGatherer(r)
		for _, k := range []string{"b", "c"} {
			g.Expect(k)
		}
		var wg sync.WaitGroup
		results := make([]int, 3)
		for i, k := range []string{"a", "b", "c"} {
			wg.Go(func() {
				// The expected ones arrive a second later: after
				// their own API calls.
				if k != "a" {
					time.Sleep(time.Second)
				}
				res, _, err := g.Do(t.Context(), k, i+1)
				if err != nil {
					t.Error(err)
				}
				results[i] = res
			})
		}
		wg.Wait()
		if got := r.sizes(); len(got) != 1 || got[0] != 3 {
			t.Fatalf("batches %v, want one of 3", got)
		}
		for i, res := range results {
			if res != 2*(i+1) {
				t.Errorf("result %d = %d, want %d", i, res, 2*(i+1))
			}
		}
	})
}

// TestGathererForget: a request forgotten is not waited for: the batch
// starts at the Forget, its latest request quiet for long enough.
func TestGathererForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recordingRunner{}
		g := newTestGatherer(r)
		g.Expect("late")
		start := time.Now()
		go func() {
			time.Sleep(100 * time.Millisecond)
			g.Forget("late")
		}()
		if _, _, err := g.Do(t.Context(), "a", 1); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 100*time.Millisecond {
			t.Errorf("waited %s, want until the Forget", waited)
		}
	})
}

// TestGathererMaxWait: an expected request that never comes holds a batch
// for maxWait at most.
func TestGathererMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recordingRunner{}
		g := newTestGatherer(r)
		g.Expect("never")
		start := time.Now()
		if _, _, err := g.Do(t.Context(), "a", 1); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != testMaxWait {
			t.Errorf("waited %s, want maxWait %s", waited, testMaxWait)
		}
		// The expectation lapsed: the next request waits the quiet period.
		start = time.Now()
		if _, _, err := g.Do(t.Context(), "b", 1); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != testQuiet {
			t.Errorf("after the lapse: waited %s, want %s", waited, testQuiet)
		}
	})
}

// TestGathererQuietResets: requests that keep arriving within the quiet
// period join the batch, up to maxWait after the first.
func TestGathererQuietResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recordingRunner{}
		g := newTestGatherer(r)
		var wg sync.WaitGroup
		for i := range 5 {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 20 * time.Millisecond)
				if _, _, err := g.Do(t.Context(), "", i); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got := r.sizes(); len(got) != 1 || got[0] != 5 {
			t.Errorf("batches %v, want one of 5", got)
		}
		// Spaced wider than the quiet period, they make batches of one.
		r2 := &recordingRunner{}
		g2 := newTestGatherer(r2)
		for i := range 3 {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 100 * time.Millisecond)
				if _, _, err := g2.Do(t.Context(), "", i); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got := r2.sizes(); len(got) != 3 {
			t.Errorf("batches %v, want 3 of one", got)
		}
	})
}

// TestGathererCanceled: a request whose context ends while it is queued is
// withdrawn and never runs.
func TestGathererCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recordingRunner{}
		g := newTestGatherer(r)
		g.Expect("other")
		ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
		defer cancel()
		_, inFlight, err := g.Do(ctx, "a", 1)
		if !errors.Is(err, context.DeadlineExceeded) || inFlight {
			t.Fatalf("Do = %v, inFlight %v; want the deadline, withdrawn", err, inFlight)
		}
		g.Forget("other")
		synctest.Wait()
		if got := r.sizes(); len(got) != 0 {
			t.Errorf("batches %v, want none", got)
		}
	})
}

// TestGathererNoQuiet: a negative quiet period runs whatever is queued at
// once.
func TestGathererNoQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recordingRunner{}
		g := NewGatherer(GathererOptions[int]{Quiet: -1, MaxWait: testMaxWait}, r.run)
		g.Expect("b")
		start := time.Now()
		if _, _, err := g.Do(t.Context(), "a", 1); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("waited %s, want none", waited)
		}
	})
}
