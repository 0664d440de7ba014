package batch

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestBatcherShortBatchWaitsFourQuietPeriodsAtLeast(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Target 2, spread 10ms: thrice the spread is shorter than four
		// quiet periods of 25ms, which a lone request waits.
		log := &infoLog{}
		b := NewBatcher(BatcherOptions[int]{Quiet: 25 * time.Millisecond, MaxWait: 2 * time.Second, Parallelism: seasoned(2, 10*time.Millisecond), OnBatch: log.add}, (&recorder{}).run)
		if _, _, err := b.Do(context.Background(), "", 1); err != nil {
			t.Fatal(err)
		}
		if infos := log.all(); len(infos) != 1 || infos[0].Reason != "short" || infos[0].Wait != 100*time.Millisecond {
			t.Errorf("batches %+v, want one short batch after 100ms", infos)
		}
	})
}

func TestBatcherStartsWhenAnExpectedRequestLapses(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// k is expected at 0 and never comes; a request arrives at 300ms.
		// The batch waits for k until its expectation lapses, at maxWait
		// (400ms), and then starts at once, quiet since 100ms, rather
		// than waiting maxWait from its own first request.
		log := &infoLog{}
		b := NewBatcher(BatcherOptions[int]{Quiet: 25 * time.Millisecond, MaxWait: 400 * time.Millisecond, OnBatch: log.add}, (&recorder{}).run)
		b.Expect("k")
		pause(300 * time.Millisecond)
		start := time.Now()
		if _, _, err := b.Do(context.Background(), "other", 1); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		if infos := log.all(); len(infos) != 1 || infos[0].Reason != "quiet" || infos[0].Missing != 0 || infos[0].Wait != 100*time.Millisecond || took != 100*time.Millisecond {
			t.Errorf("batches %+v after %v, want one quiet batch 100ms after its request, when k lapsed", infos, took)
		}
	})
}

func TestBatcherWaitsForAnOwedOperationUntilItIsLate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// A batch of two answered at 0 lets two operations go. One shows
		// itself at 50ms, which makes the hold three times 50ms; the other
		// never comes, and the batch waits for it until 150ms after it
		// was let go, then starts, quiet.
		log := &infoLog{}
		b := NewBatcher(BatcherOptions[int]{Quiet: 25 * time.Millisecond, MaxWait: time.Second, OnBatch: log.add}, (&recorder{}).run)
		b.answered(2)
		pause(50 * time.Millisecond)
		if _, _, err := b.Do(context.Background(), "", 1); err != nil {
			t.Fatal(err)
		}
		if infos := log.all(); len(infos) != 1 || infos[0].Reason != "quiet" || infos[0].Wait != 100*time.Millisecond {
			t.Errorf("batches %+v, want one quiet batch 100ms after its request", infos)
		}
	})
}

func TestGathererWithZeroQuietWaitsForTheExpected(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// A zero quiet period still waits for an expected request; only a
		// negative one starts at once.
		log := &infoLog{}
		g := NewGatherer(GathererOptions[int]{Quiet: 0, MaxWait: time.Second, OnBatch: log.add}, (&recordingRunner{}).run)
		g.Expect("k")
		go func() {
			pause(100 * time.Millisecond)
			g.Forget("k")
		}()
		if res, _, err := g.Do(context.Background(), "x", 4); err != nil || res != 8 {
			t.Fatalf("Do = %d, %v", res, err)
		}
		if infos := log.all(); len(infos) != 1 || infos[0].Reason != "quiet" || infos[0].Wait != 100*time.Millisecond {
			t.Errorf("batches %+v, want one quiet batch once k was forgotten, after 100ms", infos)
		}
	})
}

func TestGathererMaxWaitEndsAStream(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// A request every 20ms, within the quiet period of 25ms: the
		// batch starts at maxWait (100ms) after its first request.
		log := &infoLog{}
		r := &recordingRunner{}
		g := NewGatherer(GathererOptions[int]{Quiet: 25 * time.Millisecond, MaxWait: 100 * time.Millisecond, OnBatch: log.add}, r.run)
		var wg sync.WaitGroup
		for i := range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pause(time.Duration(i) * 20 * time.Millisecond)
				_, _, _ = g.Do(context.Background(), "", i)
			}()
		}
		wg.Wait()
		if infos := log.all(); len(infos) != 1 || infos[0].Size != 5 || infos[0].Reason != "max wait" || infos[0].Wait != 100*time.Millisecond {
			t.Errorf("batches %+v, want one batch of 5 at max wait, 100ms", infos)
		}
	})
}

func TestGathererQuietCountsFromTheLastArrival(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// A request at 0, a key expected at 10ms and forgotten at 15ms:
		// the quiet period of 25ms still counts from the request.
		log := &infoLog{}
		g := NewGatherer(GathererOptions[int]{Quiet: 25 * time.Millisecond, MaxWait: time.Second, OnBatch: log.add}, (&recordingRunner{}).run)
		go func() {
			pause(10 * time.Millisecond)
			g.Expect("k")
			pause(5 * time.Millisecond)
			g.Forget("k")
		}()
		if _, _, err := g.Do(context.Background(), "x", 1); err != nil {
			t.Fatal(err)
		}
		if infos := log.all(); len(infos) != 1 || infos[0].Reason != "quiet" || infos[0].Wait != 25*time.Millisecond {
			t.Errorf("batches %+v, want one quiet batch after 25ms", infos)
		}
	})
}

func TestBatcherStartsAsSoonAsItReachesTheTarget(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Target 2: the second request completes the batch, which starts
		// at once.
		log := &infoLog{}
		b := NewBatcher(BatcherOptions[int]{Quiet: 25 * time.Millisecond, MaxWait: time.Second, Parallelism: seasoned(2, 0), OnBatch: log.add}, (&recorder{}).run)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, _ = b.Do(context.Background(), "", i)
			}()
		}
		wg.Wait()
		if infos := log.all(); len(infos) != 1 || infos[0].Size != 2 || infos[0].Reason != "complete" || infos[0].Wait != 0 {
			t.Errorf("batches %+v, want one complete batch of 2 at once", infos)
		}
	})
}
