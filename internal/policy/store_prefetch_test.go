package policy

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A read started by Prefetch is the one the plan uses: it runs while the
// caller does something else, outlives the caller's context, and a caller
// that needs the file meanwhile waits for it instead of reading again.
func TestStorePrefetchOverlapsTheRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newMemBackend("{\n\t\"grants\": [],\n}\n")
		b.latency = 50 * time.Millisecond
		s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3})
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		s.Prefetch(ctx)
		// The call that prefetched answers at once; its context ends.
		cancel()
		s.Prefetch(context.Background()) // a read is under way: no second one
		time.Sleep(30 * time.Millisecond)
		snap, err := s.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 50*time.Millisecond {
			t.Errorf("the file was there %v after the prefetch, want 50ms: the read that began with it", got)
		}
		if string(snap.HuJSON) != "{\n\t\"grants\": [],\n}\n" || snap.ETag == "" {
			t.Errorf("snapshot = %q (ETag %q), want the file and its ETag", snap.HuJSON, snap.ETag)
		}
		s.Prefetch(context.Background()) // a copy is kept: nothing to read
		synctest.Wait()
		if _, err := s.Snapshot(context.Background()); err != nil {
			t.Fatal(err)
		}
		if c := b.counts(); c.gets != 1 {
			t.Fatalf("%d reads of the policy file, want 1", c.gets)
		}
	})
}

// A prefetched read that fails leaves nothing kept: the caller that needs
// the file gets the failure as from a read of its own, and the next read
// tries again.
func TestStorePrefetchFailureIsNotKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fb := &flakyGet{memBackend: newMemBackend("{\n\t\"grants\": [],\n}\n"), failures: 1}
		s := NewStore(fb, StoreOptions{Retry: testRetry(1), ConflictAttempts: 3})
		s.Prefetch(context.Background())
		synctest.Wait()
		if _, err := s.Snapshot(context.Background()); err != nil {
			// The failed prefetch was over before Snapshot: Snapshot
			// reads again, and that read succeeds.
			t.Fatalf("Snapshot after a failed prefetch: %v", err)
		}
		if n := fb.calls.Load(); n != 2 {
			t.Fatalf("%d reads, want 2: the failed prefetch and the read after it", n)
		}
	})
}

// flakyGet fails its first reads.
type flakyGet struct {
	*memBackend
	failures int32
	calls    atomic.Int32
}

func (f *flakyGet) Get(ctx context.Context) (Snapshot, error) {
	if f.calls.Add(1) <= f.failures {
		return Snapshot{}, errors.New("boom")
	}
	return f.memBackend.Get(ctx)
}
