package batch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// The tests that depend on time run in a synctest bubble, where time is
// virtual: it moves only when every goroutine of the bubble is blocked, so
// the waits are exact and cost nothing.

// pause lets d of virtual time pass for the calling goroutine.
func pause(d time.Duration) {
	if d > 0 {
		<-time.After(d)
	}
}

// recorder is a runner that records its batches and answers each request
// with its double.
type recorder struct {
	mu      sync.Mutex
	batches [][]int
	// hold, when set, blocks the runner until it is closed.
	hold chan struct{}
}

func (r *recorder) run(batch []int) []int {
	if r.hold != nil {
		<-r.hold
	}
	r.mu.Lock()
	r.batches = append(r.batches, slices.Clone(batch))
	r.mu.Unlock()
	out := make([]int, len(batch))
	for i, n := range batch {
		out[i] = 2 * n
	}
	return out
}

func (r *recorder) sizes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for _, b := range r.batches {
		out = append(out, len(b))
	}
	return out
}

// Requests made together share one run, and each caller gets the result
// of its own request.
func TestBatcherGathersConcurrentRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		b := NewBatcher(BatcherOptions[int]{Quiet: 50 * time.Millisecond, MaxWait: 5 * time.Second}, r.run)
		var wg sync.WaitGroup
		results := make([]int, 20)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, inFlight, err := b.Do(context.Background(), "", i)
				if err != nil || inFlight {
					t.Errorf("request %d: inFlight %v, err %v", i, inFlight, err)
				}
				results[i] = res
			}()
		}
		wg.Wait()
		for i, res := range results {
			if res != 2*i {
				t.Errorf("request %d got %d, want %d", i, res, 2*i)
			}
		}
		if got := r.sizes(); !slices.Equal(got, []int{20}) {
			t.Errorf("batches of %v, want one batch of 20", got)
		}
	})
}

// Requests that arrive spread out share a batch as long as each comes
// within the quiet period of the previous one.
func TestBatcherWaitsForAQuietPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		b := NewBatcher(BatcherOptions[int]{Quiet: 200 * time.Millisecond, MaxWait: 5 * time.Second}, r.run)
		var wg sync.WaitGroup
		for i := range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pause(time.Duration(i) * 20 * time.Millisecond)
				if _, _, err := b.Do(context.Background(), "", i); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if got := r.sizes(); !slices.Equal(got, []int{5}) {
			t.Errorf("batches of %v, want one batch of 5", got)
		}
	})
}

// A stream of requests that never pauses is cut at maxWait.
func TestBatcherCapsTheWaitOfTheFirstRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		b := NewBatcher(BatcherOptions[int]{Quiet: time.Second, MaxWait: 100 * time.Millisecond}, r.run)
		start := time.Now()
		if _, _, err := b.Do(context.Background(), "", 1); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Errorf("the first request waited %s, want maxWait, 100ms, not the quiet period of 1s", d)
		}
	})
}

// A negative quiet period runs each request at once.
func TestBatcherWithoutQuietPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		b := NewBatcher(BatcherOptions[int]{Quiet: -1, MaxWait: time.Hour}, r.run)
		start := time.Now()
		for i := range 3 {
			if res, _, err := b.Do(context.Background(), "", i); err != nil || res != 2*i {
				t.Fatalf("request %d: %d, %v", i, res, err)
			}
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("three requests took %s, want no wait", d)
		}
		if got := r.sizes(); !slices.Equal(got, []int{1, 1, 1}) {
			t.Errorf("batches of %v, want three of 1", got)
		}
	})
}

// Requests that arrive while the runner works form the next batch; one
// runner runs at a time.
func TestBatcherRunsOneBatchAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{hold: make(chan struct{})}
		b := NewBatcher(BatcherOptions[int]{Quiet: -1, MaxWait: time.Hour}, r.run)
		first := make(chan error, 1)
		go func() {
			_, _, err := b.Do(context.Background(), "", 0)
			first <- err
		}()
		// Once every goroutine is blocked, the runner holds the first
		// batch.
		synctest.Wait()
		b.mu.Lock()
		taken := b.running && len(b.queue) == 0
		b.mu.Unlock()
		if !taken {
			close(r.hold)
			t.Fatal("the runner never took the first request")
		}
		var wg sync.WaitGroup
		for i := 1; i <= 3; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, _, err := b.Do(context.Background(), "", i); err != nil {
					t.Error(err)
				}
			}()
		}
		synctest.Wait()
		b.mu.Lock()
		n := len(b.queue)
		b.mu.Unlock()
		if n != 3 {
			close(r.hold)
			t.Fatalf("%d requests queued behind the running batch, want 3", n)
		}
		close(r.hold)
		wg.Wait()
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		if got := r.sizes(); !slices.Equal(got, []int{1, 3}) {
			t.Errorf("batches of %v, want 1 then 3", got)
		}
	})
}

// A caller that stops waiting before its request is taken withdraws it:
// the runner never sees it.
func TestBatcherWithdrawsAnAbandonedRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		b := NewBatcher(BatcherOptions[int]{Quiet: 300 * time.Millisecond, MaxWait: time.Second}, r.run)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, inFlight, err := b.Do(ctx, "", 7)
		if !errors.Is(err, context.DeadlineExceeded) || inFlight {
			t.Fatalf("inFlight %v, err %v; want a withdrawn request and the context's error", inFlight, err)
		}
		if d := time.Since(start); d != 10*time.Millisecond {
			t.Errorf("Do returned after %v, want the context's 10ms", d)
		}
		// Past the quiet period and maxWait, with every goroutine
		// settled: the runner never ran.
		pause(500 * time.Millisecond)
		synctest.Wait()
		if got := r.sizes(); len(got) != 0 {
			t.Errorf("the runner saw batches %v, want none", got)
		}
	})
}

// A caller that stops waiting once the runner has its request is told
// that the request is in flight.
func TestBatcherReportsARequestInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{hold: make(chan struct{})}
		defer close(r.hold)
		b := NewBatcher(BatcherOptions[int]{Quiet: -1, MaxWait: time.Hour}, r.run)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		type outcome struct {
			inFlight bool
			err      error
		}
		done := make(chan outcome, 1)
		go func() {
			_, inFlight, err := b.Do(ctx, "", 1)
			done <- outcome{inFlight, err}
		}()
		// Once every goroutine is blocked, the runner holds the request.
		synctest.Wait()
		b.mu.Lock()
		taken := b.running && len(b.queue) == 0
		b.mu.Unlock()
		if !taken {
			t.Fatal("the runner never took the request")
		}
		cancel()
		o := <-done
		if !errors.Is(o.err, context.Canceled) || !o.inFlight {
			t.Fatalf("inFlight %v, err %v; want a request in flight and the context's error", o.inFlight, o.err)
		}
	})
}

// storeQuiet and storeMaxWait are the batching settings of qtail's
// policy Store.
const (
	storeQuiet   = 25 * time.Millisecond
	storeMaxWait = 400 * time.Millisecond
)

// terraformRun makes n requests through b as Terraform makes its
// operations: p at a time, each starting as soon as another ends. An
// operation first says that its request is on its way (it validates its
// configuration), then makes it. Starting the i-th operation takes
// start(i), one start after another, as on a busy machine.
func terraformRun(t *testing.T, b *Batcher[int, int], n, p int, start func(i int) time.Duration) {
	t.Helper()
	jobs := make(chan int, n)
	for i := range n {
		jobs <- i
	}
	close(jobs)
	// starting lets one operation start at a time; a channel, which a
	// synctest bubble sees as blocking, unlike a mutex.
	starting := make(chan struct{}, 1)
	var wg sync.WaitGroup
	for range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				starting <- struct{}{}
				pause(start(i))
				<-starting
				key := fmt.Sprintf("op-%d", i)
				b.Expect(key)
				if res, _, err := b.Do(context.Background(), key, i); err != nil || res != 2*i {
					t.Errorf("operation %d: %d, %v", i, res, err)
				}
			}
		}()
	}
	wg.Wait()
}

// When Terraform starts its operations slowly, one after the other, each
// wave still makes one batch: the batcher waits for the operations that its
// answers let go, and learns how long they take.
func TestBatcherKeepsSlowWavesWhole(t *testing.T) {
	t.Parallel()
	for name, start := range map[string]func(int) time.Duration{
		// Starting an operation takes a moment however fast the machine:
		// with none, an answered operation's next request could reach the
		// batcher in the same instant as the runner looks at an empty
		// queue, and which comes first is up to the scheduler, not the
		// clock.
		"fast": func(int) time.Duration { return time.Microsecond },
		"slow": func(int) time.Duration { return 15 * time.Millisecond },
		"slow after fast": func(i int) time.Duration {
			return max(time.Duration(min(i/30, 1))*25*time.Millisecond, time.Microsecond)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				log := &infoLog{}
				r := &recorder{}
				b := NewBatcher(BatcherOptions[int]{Quiet: storeQuiet, MaxWait: storeMaxWait, OnBatch: log.add}, func(batch []int) []int {
					pause(20 * time.Millisecond) // the API call
					return r.run(batch)
				})
				const n, p = 100, 10
				terraformRun(t, b, n, p, start)
				want := slices.Repeat([]int{p}, n/p)
				if sizes := r.sizes(); !slices.Equal(sizes, want) {
					t.Errorf("%d operations, %d at a time, made batches of %v, want %d batches of %d: %+v", n, p, sizes, n/p, p, log.all())
				}
			})
		})
	}
}
