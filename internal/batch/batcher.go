package batch

import (
	"context"
	"sync"
	"time"
)

// Batcher gathers the requests that arrive together and hands them, as one
// batch, to a single runner, which returns one result per request (same
// index); the batcher answers each caller with its own. One runner runs at a
// time; requests that arrive while it works form the next batch.
//
// Terraform runs up to -parallelism operations at once and starts the next
// one as soon as one ends, so when a batch is answered its callers end
// together and the next wave of operations arrives, spread over a few
// milliseconds, or, on a busy machine where Terraform starts them one after
// another, over half a second. Waiting for a fixed quiet period splits a
// wave whenever Terraform is slower than that period, and a split wave
// keeps splitting the next ones. A batch therefore starts as soon as it is
// known to be complete, and otherwise waits for the rest of its wave:
//
//   - Complete: no request is expected (see Expect), and either the batch
//     holds as many requests as Terraform has run at once (the target of a
//     shared Parallelism: every operation Terraform runs is then waiting
//     in the batch, and no other can start before it is answered), or
//     every operation let go has shown itself and the batch is as large as
//     the last one. Each request answered ends its operation, and lets
//     Terraform start another in its place; the batcher owes it until it
//     shows itself (it is expected, or its request arrives). A batch waits
//     for the operations it owes, each for three times as long as the
//     recent ones took to show themselves (at least four quiet periods, at
//     most five times maxWait), so the waves of a slow Terraform stay
//     whole, and a wave split once is mended by the next batch, which
//     waits for the late operations too.
//   - Short: no request is expected, no operation is owed any longer, the
//     batch is not complete (an operation let go did not show itself in
//     time, or asked for no change), and it has waited, since its first
//     request, three times as long as the recent complete waves took to
//     arrive (at least four quiet periods): Terraform has fewer
//     operations left, or runs others.
//   - Quiet: before any target is known (the first wave), no request
//     arrived, and none is expected, for the quiet period, which grows to
//     three times the longest gap between the arrivals of the batch.
//   - At the latest maxWait after the batcher began to wait, or three
//     times the arrival spread of the recent complete batches, or the wait
//     for an owed operation, when that is longer (up to five times
//     maxWait): on a busy machine Terraform brings its waves slowly.
//
// A request is expected from the moment Terraform is known to be on its way
// to it (qtail validates a resource's configuration, then plans it, then
// applies it) until it arrives, is forgotten, or has been expected for
// maxWait.
type Batcher[Req, Res any] struct {
	quiet   time.Duration
	maxWait time.Duration
	run     func(batch []Req) []Res
	par     *Parallelism
	// onBatch, when set, is told about each batch before it runs.
	onBatch func(batch []Req, info BatchInfo)

	mu      sync.Mutex
	queue   []*batchCall[Req, Res]
	first   time.Time // when the oldest queued request arrived
	last    time.Time // when the latest request arrived or was expected
	maxGap  time.Duration
	running bool
	// expected are the requests on their way, by key, since when.
	expected map[string]time.Time
	// lapsed are the expected requests given up on (see missingLocked),
	// by key, since when: their operations have shown themselves already.
	lapsed map[string]time.Time
	// owed are the operations that the answers of earlier batches let
	// Terraform start and that have not shown themselves yet (by Expect,
	// or by a request that was not expected): when each was let go, oldest
	// first.
	owed []time.Time
	// letGo is how many requests the last batch answered: 0 before any.
	letGo int
	// latencies are how long the recent operations let go took to show
	// themselves.
	latencies []time.Duration
	// wake is signalled when a request arrives, is withdrawn, or an
	// expected one is forgotten.
	wake chan struct{}
}

// BatchInfo describes a batch as it starts.
type BatchInfo struct {
	// Size is the number of requests in the batch.
	Size int
	// Wait is how long its first request waited for the batch to start.
	Wait time.Duration
	// Reason says why it started: "complete", "short", "quiet", "max
	// wait", or "now" for a batcher without a quiet period.
	Reason string
	// Target is the size of a complete batch (see Parallelism).
	Target int
	// Missing is the number of expected requests that had not arrived.
	Missing int
}

// batchCall is one queued request and the channel its result goes to.
type batchCall[Req, Res any] struct {
	req  Req
	done chan Res
}

// Parallelism follows how many operations Terraform runs at once, as the
// batchers that share it see them: requests waiting or being run. Every
// such request is an operation that Terraform runs, so the count never
// exceeds -parallelism; it reaches it as soon as one wave arrives whole, or
// while a batch runs and the rest of its wave waits for the next. The
// target of a batch is the most requests seen at once so far; there is none
// before a first batch has run. A batch smaller than the target is
// complete when every operation it owes has come (see Batcher), so a
// target higher than what Terraform has left costs no write. Parallelism
// also keeps how long the recent complete batches took to arrive.
type Parallelism struct {
	mu      sync.Mutex
	inside  int
	peak    int
	target  int
	spreads []time.Duration
}

// spreadsKept is how many arrival spreads of complete batches are kept.
const spreadsKept = 4

// maxWaitGrowth bounds how far a busy machine stretches maxWait.
const maxWaitGrowth = 5

func (p *Parallelism) enter() {
	p.mu.Lock()
	p.inside++
	p.peak = max(p.peak, p.inside)
	p.mu.Unlock()
}

func (p *Parallelism) leave() {
	p.mu.Lock()
	p.inside--
	p.mu.Unlock()
}

// learn is called at the end of each batch: the target is the most
// requests seen at once so far.
func (p *Parallelism) learn() {
	p.mu.Lock()
	p.target = p.peak
	p.mu.Unlock()
}

// complete records how long a complete batch took to arrive, from its
// first request to its last.
func (p *Parallelism) complete(spread time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spreads = keepLast(p.spreads, spread, spreadsKept)
}

// Target returns how many requests a complete batch holds: 0 until a
// batch has run.
func (p *Parallelism) Target() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.target
}

// spread returns the longest arrival spread of the recent complete
// batches, and whether there was one.
func (p *Parallelism) spread() (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return longest(p.spreads), len(p.spreads) > 0
}

// keepLast appends d to ds and keeps the last kept of them.
func keepLast(ds []time.Duration, d time.Duration, kept int) []time.Duration {
	ds = append(ds, d)
	if len(ds) > kept {
		ds = ds[len(ds)-kept:]
	}
	return ds
}

// longest returns the longest of ds, 0 when there is none.
func longest(ds []time.Duration) time.Duration {
	var out time.Duration
	for _, d := range ds {
		out = max(out, d)
	}
	return out
}

// BatcherOptions configure a Batcher.
type BatcherOptions[Req any] struct {
	// Quiet is the shortest quiet period; a negative one does not wait:
	// each batch is whatever is queued when the runner looks.
	Quiet time.Duration
	// MaxWait bounds the wait of a batch's first request.
	MaxWait time.Duration
	// Parallelism is shared by the batchers that the same operations go
	// through; nil means one of its own.
	Parallelism *Parallelism
	// OnBatch, when set, is told about each batch before it runs.
	OnBatch func(batch []Req, info BatchInfo)
}

// NewBatcher returns a Batcher that hands its batches to run.
func NewBatcher[Req, Res any](opts BatcherOptions[Req], run func(batch []Req) []Res) *Batcher[Req, Res] {
	par := opts.Parallelism
	if par == nil {
		par = &Parallelism{}
	}
	return &Batcher[Req, Res]{
		quiet: opts.Quiet, maxWait: opts.MaxWait, run: run, par: par, onBatch: opts.OnBatch,
		expected: map[string]time.Time{}, lapsed: map[string]time.Time{}, wake: make(chan struct{}, 1),
	}
}

// Expect says that the request of key is on its way: a batch waits for it
// (within maxWait) before it starts.
func (b *Batcher[Req, Res]) Expect(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if _, ok := b.expected[key]; !ok {
		b.shownLocked(key, now)
	}
	b.expected[key] = now
	b.last = now
	b.signal()
}

// Forget says that the request of key will not come after all.
func (b *Batcher[Req, Res]) Forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.lapsed, key)
	if _, ok := b.expected[key]; ok {
		delete(b.expected, key)
		b.signal()
	}
}

// signal wakes the loop; b.mu is held.
func (b *Batcher[Req, Res]) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Do queues req, the request of key (which is no longer expected), and
// waits for its result. When ctx ends first, Do returns ctx's error at
// once: a request still in the queue is withdrawn and never reaches the
// runner (inFlight is false); one that the runner has already taken may
// still be acted upon (inFlight is true).
func (b *Batcher[Req, Res]) Do(ctx context.Context, key string, req Req) (res Res, inFlight bool, err error) {
	b.par.enter()
	defer b.par.leave()
	c := &batchCall[Req, Res]{req: req, done: make(chan Res, 1)}
	b.mu.Lock()
	now := time.Now()
	if len(b.queue) == 0 {
		b.first, b.maxGap = now, 0
	} else {
		b.maxGap = max(b.maxGap, now.Sub(b.last))
	}
	b.queue = append(b.queue, c)
	b.last = now
	if _, ok := b.expected[key]; ok {
		delete(b.expected, key)
	} else {
		b.shownLocked(key, now)
	}
	if !b.running {
		b.running = true
		go b.loop()
	}
	b.signal()
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
			b.signal()
			return res, false, ctx.Err()
		}
	}
	return res, true, ctx.Err()
}

// loop takes the queue batch by batch until it is empty.
func (b *Batcher[Req, Res]) loop() {
	for {
		info := b.settle()
		b.mu.Lock()
		calls := b.queue
		if len(calls) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		if info.Reason == "" {
			// settle found the queue empty, and a request came before
			// the lock was taken again: that request starts a batch of
			// its own, which settles like any other.
			b.mu.Unlock()
			continue
		}
		b.queue = nil
		b.mu.Unlock()

		batch := make([]Req, len(calls))
		for i, c := range calls {
			batch[i] = c.req
		}
		info.Size = len(batch)
		if b.onBatch != nil {
			b.onBatch(batch, info)
		}
		results := b.run(batch)
		b.par.learn()
		b.answered(len(calls))
		for i, c := range calls {
			c.done <- results[i]
		}
	}
}

// settle returns once the queued batch should start, and why.
func (b *Batcher[Req, Res]) settle() BatchInfo {
	if b.quiet < 0 {
		b.mu.Lock()
		defer b.mu.Unlock()
		return BatchInfo{Reason: "now", Wait: time.Since(b.first), Target: b.par.Target()}
	}
	start := time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		target := b.par.Target()
		spread, spreadKnown := b.par.spread()
		b.mu.Lock()
		now := time.Now()
		missing := b.missingLocked(now)
		live, late, nextGiveUp, hold := b.owedLocked(now)
		letGo := b.letGo
		info := BatchInfo{Wait: now.Sub(b.first), Target: target, Missing: missing}
		n := len(b.queue)
		arrived := b.last.Sub(b.first)
		sinceFirst := now.Sub(b.first)
		silent := now.Sub(b.last)
		quiet := min(max(b.quiet, 3*b.maxGap), b.maxWait)
		b.mu.Unlock()
		// On a busy machine Terraform brings a wave slowly: the waits
		// grow with the arrival spread of the recent complete batches.
		maxWait, patience := b.maxWait, b.maxWait
		if spreadKnown {
			maxWait = min(max(b.maxWait, 3*spread), b.longestWait())
			patience = min(max(3*spread, 4*b.quiet), maxWait)
		}
		maxWait = max(maxWait, hold)

		// The conditions are if statements rather than the cases of a
		// switch: Go's coverage profile, which the mutation tests read,
		// covers the conditions of an if, not the expressions of a case.
		var wait time.Duration
		left := maxWait - now.Sub(start)
		if n == 0 {
			return info
		}
		if left <= 0 {
			info.Reason = "max wait"
			return info
		}
		if missing > 0 {
			wait = b.nextExpiry(now, left)
		} else if target > 0 && n >= target {
			info.Reason = "complete"
			b.par.complete(arrived)
			return info
		} else if live > 0 {
			wait = min(nextGiveUp, left)
		} else if letGo > 0 && late == 0 && n >= letGo {
			// Every operation that the last answers let go has come,
			// and asks for a change: none of them ran something else.
			info.Reason = "complete"
			b.par.complete(arrived)
			return info
		} else if target > 0 && sinceFirst >= patience {
			info.Reason = "short"
			return info
		} else if target > 0 {
			wait = min(patience-sinceFirst, left)
		} else if silent >= quiet {
			info.Reason = "quiet"
			return info
		} else {
			wait = min(quiet-silent, left)
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-b.wake:
			if !timer.Stop() {
				<-timer.C
			}
		}
	}
}

// latenciesKept is how many latencies of operations let go are kept: a
// few waves' worth.
const latenciesKept = 64

// answered records that n requests are answered: their operations end, and
// Terraform starts as many others, which the next batch waits for.
func (b *Batcher[Req, Res]) answered(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	b.letGo = n
	b.dropLocked(now)
	for range n {
		b.owed = append(b.owed, now)
	}
}

// shownLocked records that the operation of key showed itself at now: the
// oldest operation owed, whatever it is (Terraform starts them in its own
// order), is no longer owed. An operation whose expected request lapsed
// had shown itself already.
func (b *Batcher[Req, Res]) shownLocked(key string, now time.Time) {
	if _, ok := b.lapsed[key]; ok {
		delete(b.lapsed, key)
		return
	}
	b.dropLocked(now)
	if len(b.owed) == 0 {
		return
	}
	b.latencies = keepLast(b.latencies, now.Sub(b.owed[0]), latenciesKept)
	b.owed = b.owed[1:]
}

// dropLocked forgets the operations owed for longer than a batch can
// wait: Terraform ran something else.
func (b *Batcher[Req, Res]) dropLocked(now time.Time) {
	i := 0
	for i < len(b.owed) && now.Sub(b.owed[i]) >= b.longestWait() {
		i++
	}
	b.owed = b.owed[i:]
}

// holdLocked is how long a batch waits for an operation owed: three times
// as long as the recent ones took to show themselves, at least four quiet
// periods, and at most as long as a batch can wait.
func (b *Batcher[Req, Res]) holdLocked() time.Duration {
	return min(max(3*longest(b.latencies), 4*b.quiet), b.longestWait())
}

// longestWait is the longest a batch can wait: five times maxWait.
func (b *Batcher[Req, Res]) longestWait() time.Duration { return maxWaitGrowth * b.maxWait }

// owedLocked counts the operations owed that a batch still waits for
// (live) and those it has given up on (late), and says how long until the
// next one is given up on (hold when none is live), and how long each is
// waited for (see holdLocked).
func (b *Batcher[Req, Res]) owedLocked(now time.Time) (live, late int, next, hold time.Duration) {
	b.dropLocked(now)
	hold = b.holdLocked()
	next = hold
	for _, at := range b.owed {
		if age := now.Sub(at); age < hold {
			live++
			next = min(next, hold-age)
		} else {
			late++
		}
	}
	return live, late, next, hold
}

// missingLocked counts the expected requests, giving up on those expected
// for longer than maxWait: they lapse, for as long as a batch can wait.
func (b *Batcher[Req, Res]) missingLocked(now time.Time) int {
	for k, since := range b.expected {
		if now.Sub(since) >= b.maxWait {
			delete(b.expected, k)
			b.lapsed[k] = since
		}
	}
	for k, since := range b.lapsed {
		if now.Sub(since) >= b.longestWait() {
			delete(b.lapsed, k)
		}
	}
	return len(b.expected)
}

// nextExpiry is how long until the oldest expected request is forgotten,
// at most limit.
func (b *Batcher[Req, Res]) nextExpiry(now time.Time, limit time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	next := limit
	for _, since := range b.expected {
		next = min(next, b.maxWait-now.Sub(since))
	}
	return next
}
