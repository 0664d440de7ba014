package batch

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestParallelismCountsWhatIsInside(t *testing.T) {
	p := &Parallelism{}
	if got := p.Target(); got != 0 {
		t.Fatalf("Target before any batch = %d", got)
	}
	p.enter()
	p.enter()
	p.enter()
	if got := p.Target(); got != 0 {
		t.Fatalf("Target before a batch ended = %d", got)
	}
	p.leave()
	p.learn() // the peak so far was 3
	if got := p.Target(); got != 3 {
		t.Errorf("Target after a peak of 3 = %d", got)
	}
	p.leave()
	p.leave() // nothing inside
	p.enter()
	p.learn() // one request in this cycle: the target stays
	if got := p.Target(); got != 3 {
		t.Errorf("Target after a cycle of one = %d, want the peak of 3 kept", got)
	}
	p.leave()
	for range 4 {
		p.enter()
	}
	p.learn()
	if got := p.Target(); got != 4 {
		t.Errorf("Target after a peak of 4 = %d", got)
	}
}

func TestParallelismKeepsTheRecentSpreads(t *testing.T) {
	p := &Parallelism{}
	if d, ok := p.spread(); ok || d != 0 {
		t.Fatalf("spread before any complete batch = %v, %v", d, ok)
	}
	p.complete(0)
	if d, ok := p.spread(); !ok || d != 0 {
		t.Errorf("spread after one instant batch = %v, %v", d, ok)
	}
	for _, d := range []time.Duration{10, 1, 2} {
		p.complete(d)
	}
	if d, ok := p.spread(); !ok || d != 10 {
		t.Errorf("spread of the last four = %v, %v; want 10", d, ok)
	}
	p.complete(3) // 0 leaves
	if d, _ := p.spread(); d != 10 {
		t.Errorf("spread = %v; want 10", d)
	}
	p.complete(4) // 10 leaves
	if d, _ := p.spread(); d != 4 {
		t.Errorf("spread once the longest left = %v; want 4", d)
	}
}

func TestBatchWaitIsMeasuredFromItsFirstRequest(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var infos []BatchInfo
		r := &recorder{}
		b := NewBatcher(BatcherOptions[int]{Quiet: 5 * time.Millisecond, MaxWait: time.Second,
			OnBatch: func(_ []int, info BatchInfo) { infos = append(infos, info) }}, r.run)
		for i := 1; i <= 2; i++ {
			pause(20 * time.Millisecond)
			res, _, err := b.Do(context.Background(), "", i)
			if err != nil || res != 2*i {
				t.Fatalf("Do(%d) = %d, %v", i, res, err)
			}
		}
		if len(infos) != 2 {
			t.Fatalf("%d batches, want 2", len(infos))
		}
		// The first waits out the quiet period; the second is complete at
		// once (one request at a time is what the first cycle saw).
		for i, want := range []struct {
			reason string
			wait   time.Duration
		}{{"quiet", 5 * time.Millisecond}, {"complete", 0}} {
			if info := infos[i]; info.Size != 1 || info.Reason != want.reason || info.Wait != want.wait {
				t.Errorf("batch %d: %+v, want one request, %s, that waited %v", i, info, want.reason, want.wait)
			}
		}
	})
}

// infoLog collects the BatchInfo of each batch.
type infoLog struct {
	mu    sync.Mutex
	infos []BatchInfo
}

func (l *infoLog) add(_ []int, info BatchInfo) {
	l.mu.Lock()
	l.infos = append(l.infos, info)
	l.mu.Unlock()
}

func (l *infoLog) all() []BatchInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]BatchInfo(nil), l.infos...)
}

// seasoned returns a Parallelism that saw target requests at once and a
// complete batch that took spread to arrive.
func seasoned(target int, spread time.Duration) *Parallelism {
	p := &Parallelism{}
	for range target {
		p.enter()
	}
	p.learn()
	for range target {
		p.leave()
	}
	p.complete(spread)
	return p
}

func TestBatcherZeroQuietStillSettles(t *testing.T) {
	for quiet, reason := range map[time.Duration]string{0: "quiet", -1: "now"} {
		log := &infoLog{}
		b := NewBatcher(BatcherOptions[int]{Quiet: quiet, MaxWait: time.Second, OnBatch: log.add}, (&recorder{}).run)
		if res, _, err := b.Do(context.Background(), "", 4); err != nil || res != 8 {
			t.Fatalf("Do = %d, %v", res, err)
		}
		if infos := log.all(); len(infos) != 1 || infos[0].Reason != reason {
			t.Errorf("quiet %v: batches %+v, want one that started for %q", quiet, infos, reason)
		}
	}
}

func TestBatcherShortBatchWaitsThriceTheSpread(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Target 2, spread 100ms: a lone request waits 300ms for the rest
		// of its wave, not four quiet periods.
		log := &infoLog{}
		b := NewBatcher(BatcherOptions[int]{Quiet: time.Millisecond, MaxWait: 2 * time.Second, Parallelism: seasoned(2, 100*time.Millisecond), OnBatch: log.add}, (&recorder{}).run)
		if _, _, err := b.Do(context.Background(), "", 1); err != nil {
			t.Fatal(err)
		}
		if infos := log.all(); len(infos) != 1 || infos[0].Reason != "short" || infos[0].Wait != 300*time.Millisecond {
			t.Errorf("batches %+v, want one short batch after 300ms", infos)
		}
	})
}

func TestBatcherShortBatchCountsFromItsFirstRequest(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Target 3, patience 300ms: a second request 150ms in does not
		// push the start back.
		log := &infoLog{}
		b := NewBatcher(BatcherOptions[int]{Quiet: time.Millisecond, MaxWait: 2 * time.Second, Parallelism: seasoned(3, 100*time.Millisecond), OnBatch: log.add}, (&recorder{}).run)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			pause(150 * time.Millisecond)
			_, _, _ = b.Do(context.Background(), "", 2)
		}()
		if _, _, err := b.Do(context.Background(), "", 1); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if infos := log.all(); len(infos) != 1 || infos[0].Size != 2 || infos[0].Reason != "short" || infos[0].Wait != 300*time.Millisecond {
			t.Errorf("batches %+v, want one short batch of 2 after 300ms", infos)
		}
	})
}

func TestBatcherMaxWaitEndsAnEndlessExpectation(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// A request that stays expected (Expect again and again) holds
		// the batch only until maxWait.
		log := &infoLog{}
		// An expectation lapses maxWait after it was last renewed: the
		// renewals every 5ms keep it alive.
		b := NewBatcher(BatcherOptions[int]{Quiet: time.Millisecond, MaxWait: 300 * time.Millisecond, OnBatch: log.add}, (&recorder{}).run)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		b.Expect("k")
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				b.Expect("k")
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		_, _, err := b.Do(ctx, "", 1)
		took := time.Since(start)
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if infos := log.all(); len(infos) != 1 || infos[0].Reason != "max wait" || infos[0].Missing != 1 || infos[0].Wait != 300*time.Millisecond || took != 300*time.Millisecond {
			t.Errorf("batches %+v after %v, want one that started at max wait, 300ms, with the request still missing", infos, took)
		}
	})
}

func TestBatcherQuietCountsFromTheLastArrival(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// An expected request is forgotten 150ms after the only one
		// arrived: the quiet period of 300ms counts from that arrival.
		log := &infoLog{}
		b := NewBatcher(BatcherOptions[int]{Quiet: 300 * time.Millisecond, MaxWait: 2 * time.Second, OnBatch: log.add}, (&recorder{}).run)
		b.Expect("k")
		go func() {
			pause(150 * time.Millisecond)
			b.Forget("k")
		}()
		if _, _, err := b.Do(context.Background(), "", 1); err != nil {
			t.Fatal(err)
		}
		if infos := log.all(); len(infos) != 1 || infos[0].Reason != "quiet" || infos[0].Wait != 300*time.Millisecond {
			t.Errorf("batches %+v, want one quiet batch after 300ms", infos)
		}
	})
}

func TestBatcherOwesTheOperationsItLetsGo(t *testing.T) {
	b := NewBatcher(BatcherOptions[int]{Quiet: 25 * time.Millisecond, MaxWait: 400 * time.Millisecond}, (&recorder{}).run)
	b.answered(3)
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.owed[0]
	if hold := b.holdLocked(); hold != 100*time.Millisecond {
		t.Errorf("hold before any operation showed itself = %v, want four quiet periods", hold)
	}
	if live, late, next, _ := b.owedLocked(now); live != 3 || late != 0 || next != 100*time.Millisecond {
		t.Errorf("owed = %d live, %d late, next given up in %v; want 3, 0, 100ms", live, late, next)
	}
	b.shownLocked("", now.Add(50*time.Millisecond))
	if hold := b.holdLocked(); hold != 150*time.Millisecond {
		t.Errorf("hold after one operation took 50ms = %v, want 150ms", hold)
	}
	if live, late, _, _ := b.owedLocked(now.Add(100 * time.Millisecond)); live != 2 || late != 0 {
		t.Errorf("owed 100ms in = %d live, %d late; want 2, 0", live, late)
	}
	if live, late, _, _ := b.owedLocked(now.Add(200 * time.Millisecond)); live != 0 || late != 2 {
		t.Errorf("owed 200ms in = %d live, %d late; want 0, 2", live, late)
	}
	// A late operation still counts, and teaches the batcher to wait
	// longer.
	b.shownLocked("", now.Add(300*time.Millisecond))
	if hold := b.holdLocked(); hold != 900*time.Millisecond {
		t.Errorf("hold after one operation took 300ms = %v, want 900ms", hold)
	}
	// At most five times maxWait, after which the owed operations are
	// dropped.
	b.latencies = append(b.latencies, time.Hour)
	if hold := b.holdLocked(); hold != 2*time.Second {
		t.Errorf("hold after an hour = %v, want 2s", hold)
	}
	if live, late, _, _ := b.owedLocked(now.Add(2 * time.Second)); live != 0 || late != 0 || len(b.owed) != 0 {
		t.Errorf("owed after 2s = %d live, %d late, %d kept; want none", live, late, len(b.owed))
	}
	// An operation shown when nothing is owed teaches nothing.
	n := len(b.latencies)
	b.shownLocked("", now.Add(3*time.Second))
	if len(b.latencies) != n {
		t.Errorf("an operation that was not owed was timed")
	}
	for range latenciesKept + 5 {
		b.owed = append(b.owed, now)
		b.shownLocked("", now)
	}
	if len(b.latencies) != latenciesKept {
		t.Errorf("%d latencies kept, want %d", len(b.latencies), latenciesKept)
	}
}

func TestBatcherGivesUpOnOperationsThatDoNotCome(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// A batch of three answered, then one request: the two other
		// operations never come (Terraform runs something else), and the
		// lone request starts short once they are given up on, after four
		// quiet periods.
		log := &infoLog{}
		b := NewBatcher(BatcherOptions[int]{Quiet: 25 * time.Millisecond, MaxWait: time.Second, Parallelism: seasoned(3, 0), OnBatch: log.add}, (&recorder{}).run)
		b.answered(3)
		if _, _, err := b.Do(context.Background(), "", 3); err != nil {
			t.Fatal(err)
		}
		if infos := log.all(); len(infos) != 1 || infos[0].Size != 1 || infos[0].Reason != "short" || infos[0].Wait != 100*time.Millisecond {
			t.Errorf("batches %+v, want a lone short batch after 100ms", infos)
		}
	})
}

func TestBatcherCompleteWhenEveryOperationLetGoHasCome(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Four requests seen at once, then a batch of two answered: when
		// the two operations that it let go have come, the batch is
		// complete, though smaller than the target.
		log := &infoLog{}
		b := NewBatcher(BatcherOptions[int]{Quiet: 25 * time.Millisecond, MaxWait: time.Second, Parallelism: seasoned(4, 0), OnBatch: log.add}, (&recorder{}).run)
		b.answered(2)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pause(time.Duration(i) * 20 * time.Millisecond)
				_, _, _ = b.Do(context.Background(), "", i)
			}()
		}
		wg.Wait()
		infos := log.all()
		if len(infos) != 1 || infos[0].Size != 2 || infos[0].Reason != "complete" || infos[0].Wait != 20*time.Millisecond {
			t.Errorf("batches %+v, want one complete batch of 2 as soon as the second came, 20ms after the first", infos)
		}
	})
}

func TestBatcherCountsAnOperationWhoseRequestLapsedOnce(t *testing.T) {
	b := NewBatcher(BatcherOptions[int]{Quiet: 25 * time.Millisecond, MaxWait: 400 * time.Millisecond}, (&recorder{}).run)
	b.answered(2)
	b.Expect("k")
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.owed) != 1 {
		t.Fatalf("%d operations owed once one was expected, want 1", len(b.owed))
	}
	// The request of k is given up on, then comes, or is expected again:
	// the same operation, which pays nothing more.
	now := b.expected["k"].Add(b.maxWait)
	if missing := b.missingLocked(now); missing != 0 {
		t.Fatalf("%d missing after maxWait, want 0", missing)
	}
	b.shownLocked("k", now)
	if len(b.owed) != 1 {
		t.Errorf("%d operations owed after a lapsed request came, want 1", len(b.owed))
	}
	b.shownLocked("k", now)
	if len(b.owed) != 0 {
		t.Errorf("%d operations owed after a second arrival of k, want 0", len(b.owed))
	}
	// Lapsed requests are kept only as long as a batch can wait.
	b.lapsed["old"] = now
	b.missingLocked(now.Add(maxWaitGrowth * b.maxWait))
	if _, ok := b.lapsed["old"]; ok {
		t.Errorf("a lapsed request was kept after %v", maxWaitGrowth*b.maxWait)
	}
}
