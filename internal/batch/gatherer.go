package batch

import (
	"context"
	"sync"
	"time"
)

// Gatherer gathers the requests that operations make at about the same
// time into batches, each handed to one runner, which returns one result
// per request (same index). Unlike a Batcher's, its answers do not end the
// operations: an operation goes on after its answer (it waits for what the
// request started), so an answer lets Terraform start nothing, and the
// next batch owes nothing to the previous one.
//
// A batch starts when no request is expected (see Expect) and none has
// arrived for the quiet period, or at the latest maxWait after its first
// request arrived. A request expected for longer than maxWait is no
// longer waited for. One runner runs at a time; requests that arrive while
// it works form the next batch.
type Gatherer[Req, Res any] struct {
	quiet   time.Duration
	maxWait time.Duration
	run     func(batch []Req) []Res
	onBatch func(batch []Req, info BatchInfo)

	mu      sync.Mutex
	queue   []*batchCall[Req, Res]
	first   time.Time // when the oldest queued request arrived
	last    time.Time // when the latest request arrived
	running bool
	// expected are the requests on their way, by key, since when.
	expected map[string]time.Time
	// wake is signalled when a request arrives or is withdrawn, or an
	// expected one is forgotten.
	wake chan struct{}
}

// GathererOptions configure a Gatherer.
type GathererOptions[Req any] struct {
	// Quiet is how long a batch waits after its latest request for
	// another one; a negative one does not wait: each batch is whatever is
	// queued when the runner looks.
	Quiet time.Duration
	// MaxWait bounds the wait of a batch's first request, and how long a
	// request is expected.
	MaxWait time.Duration
	// OnBatch, when set, is told about each batch before it runs.
	OnBatch func(batch []Req, info BatchInfo)
}

// NewGatherer returns a Gatherer that hands its batches to run.
func NewGatherer[Req, Res any](opts GathererOptions[Req], run func(batch []Req) []Res) *Gatherer[Req, Res] {
	return &Gatherer[Req, Res]{quiet: opts.Quiet, maxWait: opts.MaxWait, run: run, onBatch: opts.OnBatch,
		expected: map[string]time.Time{}, wake: make(chan struct{}, 1)}
}

// Expect says that the request of key is on its way: a batch waits for it
// (within maxWait) before it starts.
func (g *Gatherer[Req, Res]) Expect(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expected[key] = time.Now()
	g.signal()
}

// Forget says that the request of key will not come after all.
func (g *Gatherer[Req, Res]) Forget(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.expected[key]; ok {
		delete(g.expected, key)
		g.signal()
	}
}

// signal wakes the loop; g.mu is held.
func (g *Gatherer[Req, Res]) signal() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// Do queues req, the request of key (which is no longer expected), and
// waits for its result. When ctx ends first, Do returns ctx's error at
// once: a request still in the queue is withdrawn and never reaches the
// runner (inFlight is false); one that the runner has already taken may
// still be acted upon (inFlight is true).
func (g *Gatherer[Req, Res]) Do(ctx context.Context, key string, req Req) (res Res, inFlight bool, err error) {
	c := &batchCall[Req, Res]{req: req, done: make(chan Res, 1)}
	g.mu.Lock()
	now := time.Now()
	if len(g.queue) == 0 {
		g.first = now
	}
	g.queue = append(g.queue, c)
	g.last = now
	delete(g.expected, key)
	if !g.running {
		g.running = true
		go g.loop()
	}
	g.signal()
	g.mu.Unlock()
	select {
	case res = <-c.done:
		return res, false, nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, q := range g.queue {
		if q == c {
			g.queue = append(g.queue[:i:i], g.queue[i+1:]...)
			g.signal()
			return res, false, ctx.Err()
		}
	}
	return res, true, ctx.Err()
}

// loop takes the queue batch by batch until it is empty.
func (g *Gatherer[Req, Res]) loop() {
	for {
		info := g.settle()
		g.mu.Lock()
		calls := g.queue
		if len(calls) == 0 || info.Reason == "" {
			g.running = len(calls) > 0
			g.mu.Unlock()
			if len(calls) == 0 {
				return
			}
			continue
		}
		g.queue = nil
		g.mu.Unlock()

		batch := make([]Req, len(calls))
		for i, c := range calls {
			batch[i] = c.req
		}
		info.Size = len(batch)
		if g.onBatch != nil {
			g.onBatch(batch, info)
		}
		results := g.run(batch)
		for i, c := range calls {
			c.done <- results[i]
		}
	}
}

// settle returns once the queued batch should start, and why ("quiet",
// "max wait" or "now"); with an empty queue it returns no reason.
func (g *Gatherer[Req, Res]) settle() BatchInfo {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		g.mu.Lock()
		now := time.Now()
		info := BatchInfo{Wait: now.Sub(g.first)}
		if len(g.queue) == 0 {
			g.mu.Unlock()
			return BatchInfo{}
		}
		if g.quiet < 0 {
			g.mu.Unlock()
			info.Reason = "now"
			return info
		}
		left := g.maxWait - now.Sub(g.first)
		// The expected requests, forgetting those expected for too long;
		// the batch waits until the next one is forgotten, at most.
		wait := left
		for k, since := range g.expected {
			expiry := g.maxWait - now.Sub(since)
			if expiry <= 0 {
				delete(g.expected, k)
				continue
			}
			wait = min(wait, expiry)
		}
		info.Missing = len(g.expected)
		silent := now.Sub(g.last)
		g.mu.Unlock()

		// If statements rather than a switch: see Batcher.settle.
		if left <= 0 {
			info.Reason = "max wait"
			return info
		}
		if info.Missing == 0 {
			if silent >= g.quiet {
				info.Reason = "quiet"
				return info
			}
			wait = min(g.quiet-silent, left)
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-g.wake:
			if !timer.Stop() {
				<-timer.C
			}
		}
	}
}
