package policy

import (
	"context"
	"sync"
	"time"
)

// Batcher gathers the requests that arrive together and hands them, as one
// batch, to a single runner. Terraform starts up to -parallelism operations
// together, but they reach the provider spread over a few milliseconds: a
// batch starts once no request has arrived for the quiet period, and at the
// latest maxWait after the batcher began to wait. One runner runs at a
// time; it takes the whole queue, returns one result per request (same
// index), and the batcher answers each caller with its own. Requests that
// arrive while the runner works form the next batch.
//
// The Store batches its writes with it, the Planner its plan-time
// validations.
type Batcher[Req, Res any] struct {
	quiet   time.Duration
	maxWait time.Duration
	run     func(batch []Req) []Res

	mu      sync.Mutex
	queue   []*batchCall[Req, Res]
	last    time.Time // when the latest request was queued
	running bool
}

// batchCall is one queued request and the channel its result goes to.
type batchCall[Req, Res any] struct {
	req  Req
	done chan Res
}

// NewBatcher returns a Batcher that hands its batches to run. A negative
// quiet period does not wait: each batch is whatever is queued when the
// runner looks.
func NewBatcher[Req, Res any](quiet, maxWait time.Duration, run func(batch []Req) []Res) *Batcher[Req, Res] {
	return &Batcher[Req, Res]{quiet: quiet, maxWait: maxWait, run: run}
}

// Do queues req and waits for its result. When ctx ends first, Do returns
// ctx's error at once: a request still in the queue is withdrawn and never
// reaches the runner (inFlight is false); one that the runner has already
// taken may still be acted upon (inFlight is true).
func (b *Batcher[Req, Res]) Do(ctx context.Context, req Req) (res Res, inFlight bool, err error) {
	c := &batchCall[Req, Res]{req: req, done: make(chan Res, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	b.last = time.Now()
	if !b.running {
		b.running = true
		go b.loop()
	}
	b.mu.Unlock()
	select {
	case res = <-c.done:
		return res, false, nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, q := range b.queue {
		if q == c {
			b.queue = append(b.queue[:i:i], b.queue[i+1:]...)
			return res, false, ctx.Err()
		}
	}
	return res, true, ctx.Err()
}

// loop takes the queue batch by batch until it is empty.
func (b *Batcher[Req, Res]) loop() {
	for {
		b.settle()
		b.mu.Lock()
		calls := b.queue
		b.queue = nil
		if len(calls) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()

		batch := make([]Req, len(calls))
		for i, c := range calls {
			batch[i] = c.req
		}
		results := b.run(batch)
		for i, c := range calls {
			c.done <- results[i]
		}
	}
}

// settle returns once nothing has been queued for the quiet period, or
// once maxWait has passed since it was called.
func (b *Batcher[Req, Res]) settle() {
	if b.quiet < 0 {
		return
	}
	start := time.Now()
	for {
		b.mu.Lock()
		last := b.last
		b.mu.Unlock()
		wait := b.quiet - time.Since(last)
		if left := b.maxWait - time.Since(start); left < wait {
			wait = left
		}
		if wait <= 0 {
			return
		}
		time.Sleep(wait)
	}
}
