package batch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

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
}

// Requests that arrive spread out share a batch as long as each comes
// within the quiet period of the previous one.
func TestBatcherWaitsForAQuietPeriod(t *testing.T) {
	r := &recorder{}
	b := NewBatcher(BatcherOptions[int]{Quiet: 200 * time.Millisecond, MaxWait: 5 * time.Second}, r.run)
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 20 * time.Millisecond)
			if _, _, err := b.Do(context.Background(), "", i); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := r.sizes(); !slices.Equal(got, []int{5}) {
		t.Errorf("batches of %v, want one batch of 5", got)
	}
}

// A stream of requests that never pauses is cut at maxWait.
func TestBatcherCapsTheWaitOfTheFirstRequest(t *testing.T) {
	r := &recorder{}
	b := NewBatcher(BatcherOptions[int]{Quiet: time.Second, MaxWait: 100 * time.Millisecond}, r.run)
	start := time.Now()
	if _, _, err := b.Do(context.Background(), "", 1); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= time.Second {
		t.Errorf("the first request waited %s, more than the quiet period, though maxWait is 100ms", d)
	}
}

// A negative quiet period runs each request at once.
func TestBatcherWithoutQuietPeriod(t *testing.T) {
	r := &recorder{}
	b := NewBatcher(BatcherOptions[int]{Quiet: -1, MaxWait: time.Hour}, r.run)
	start := time.Now()
	for i := range 3 {
		if res, _, err := b.Do(context.Background(), "", i); err != nil || res != 2*i {
			t.Fatalf("request %d: %d, %v", i, res, err)
		}
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("three requests took %s", d)
	}
	if got := r.sizes(); !slices.Equal(got, []int{1, 1, 1}) {
		t.Errorf("batches of %v, want three of 1", got)
	}
}

// Requests that arrive while the runner works form the next batch; one
// runner runs at a time.
func TestBatcherRunsOneBatchAtATime(t *testing.T) {
	r := &recorder{hold: make(chan struct{})}
	b := NewBatcher(BatcherOptions[int]{Quiet: -1, MaxWait: time.Hour}, r.run)
	first := make(chan error, 1)
	go func() {
		_, _, err := b.Do(context.Background(), "", 0)
		first <- err
	}()
	// Wait until the runner holds the first batch.
	for deadline := time.Now().Add(5 * time.Second); ; {
		b.mu.Lock()
		taken := b.running && len(b.queue) == 0
		b.mu.Unlock()
		if taken {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the runner never took the first request")
		}
		time.Sleep(time.Millisecond)
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
	for deadline := time.Now().Add(5 * time.Second); ; {
		b.mu.Lock()
		n := len(b.queue)
		b.mu.Unlock()
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued behind the running batch, want 3", n)
		}
		time.Sleep(time.Millisecond)
	}
	close(r.hold)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got := r.sizes(); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("batches of %v, want 1 then 3", got)
	}
}

// A caller that stops waiting before its request is taken withdraws it:
// the runner never sees it.
func TestBatcherWithdrawsAnAbandonedRequest(t *testing.T) {
	r := &recorder{}
	b := NewBatcher(BatcherOptions[int]{Quiet: 300 * time.Millisecond, MaxWait: time.Second}, r.run)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, inFlight, err := b.Do(ctx, "", 7)
	if !errors.Is(err, context.DeadlineExceeded) || inFlight {
		t.Fatalf("inFlight %v, err %v; want a withdrawn request and the context's error", inFlight, err)
	}
	time.Sleep(500 * time.Millisecond)
	if got := r.sizes(); len(got) != 0 {
		t.Errorf("the runner saw batches %v, want none", got)
	}
}

// A caller that stops waiting once the runner has its request is told
// that the request is in flight.
func TestBatcherReportsARequestInFlight(t *testing.T) {
	r := &recorder{hold: make(chan struct{})}
	defer close(r.hold)
	b := NewBatcher(BatcherOptions[int]{Quiet: -1, MaxWait: time.Hour}, r.run)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			b.mu.Lock()
			taken := b.running && len(b.queue) == 0
			b.mu.Unlock()
			if taken {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_, inFlight, err := b.Do(ctx, "", 1)
	if !errors.Is(err, context.Canceled) || !inFlight {
		t.Fatalf("inFlight %v, err %v; want a request in flight and the context's error", inFlight, err)
	}
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
	var starting sync.Mutex
	var wg sync.WaitGroup
	for range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				starting.Lock()
				time.Sleep(start(i))
				starting.Unlock()
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
		"fast":            func(int) time.Duration { return 0 },
		"slow":            func(int) time.Duration { return 15 * time.Millisecond },
		"slow after fast": func(i int) time.Duration { return time.Duration(min(i/30, 1)) * 25 * time.Millisecond },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			log := &infoLog{}
			r := &recorder{}
			b := NewBatcher(BatcherOptions[int]{Quiet: storeQuiet, MaxWait: storeMaxWait, OnBatch: log.add}, func(batch []int) []int {
				time.Sleep(20 * time.Millisecond) // the API call
				return r.run(batch)
			})
			const n, p = 100, 10
			terraformRun(t, b, n, p, start)
			if sizes := r.sizes(); len(sizes) > n/p+2 {
				t.Errorf("%d operations, %d at a time, made %d batches, want at most %d: %+v", n, p, len(sizes), n/p+2, log.all())
			}
		})
	}
}
