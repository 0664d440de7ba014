package policy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// logRecords collects the Store's log records.
type logRecords struct {
	mu      sync.Mutex
	records []string
	fields  []map[string]any
}

func (l *logRecords) log(_ context.Context, msg string, fields map[string]any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, msg)
	l.fields = append(l.fields, fields)
}

// batches returns the fields of the "policy batch" records.
func (l *logRecords) batches() []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for i, m := range l.records {
		if m == "policy batch" {
			out = append(out, l.fields[i])
		}
	}
	return out
}

func TestStoreZeroOptionsTakeTheDefaults(t *testing.T) {
	// Zero ConflictAttempts allows DefaultConflictAttempts writes; zero
	// MaxSize allows MaxPolicySize bytes.
	b := newMemBackend(basePolicy)
	b.storm = DefaultConflictAttempts - 1
	s := NewStore(b, StoreOptions{Retry: testRetry(3), Quiet: -1})
	if err := s.Put(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, grantValue("g")); err != nil {
		t.Fatalf("Put through %d conflicts: %v", DefaultConflictAttempts-1, err)
	}
	if c := b.counts(); c.sets != DefaultConflictAttempts || c.writes != 1 {
		t.Errorf("counts %+v, want %d attempts and 1 write", c, DefaultConflictAttempts)
	}
	b.mu.Lock()
	b.storm = DefaultConflictAttempts
	b.mu.Unlock()
	err := s.Put(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: "h"}, grantValue("h"))
	var ce *ContentionError
	if !errors.As(err, &ce) || ce.Attempts != DefaultConflictAttempts {
		t.Errorf("err = %v, want a *ContentionError after %d attempts", err, DefaultConflictAttempts)
	}
}

func TestStoreQuietAndMaxWaitDefaults(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			opts   StoreOptions
			reason string
			waitMS int64
		}{
			// Zero Quiet waits DefaultQuiet (25ms) with no other request.
			{"zero quiet", StoreOptions{}, "quiet", 25},
			// A negative Quiet does not wait.
			{"negative quiet", StoreOptions{Quiet: -1}, "now", 0},
			// Zero MaxWait is DefaultMaxWait, not an immediate start.
			{"zero max wait", StoreOptions{Quiet: 100 * time.Millisecond}, "quiet", 100},
		} {
			b := newMemBackend(basePolicy)
			l := &logRecords{}
			tc.opts.Retry, tc.opts.Log = testRetry(3), l.log
			s := NewStore(b, tc.opts)
			if err := s.Put(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, grantValue("g")); err != nil {
				t.Fatal(err)
			}
			bs := l.batches()
			if len(bs) != 1 || bs[0]["reason"] != tc.reason || bs[0]["size"] != 1 || bs[0]["batch"] != "write" {
				t.Errorf("%s: batches %v, want one write batch of 1 that started for %q", tc.name, bs, tc.reason)
				continue
			}
			if w, _ := bs[0]["wait_ms"].(int64); w != tc.waitMS {
				t.Errorf("%s: waited %dms, want %dms", tc.name, w, tc.waitMS)
			}
		}
	})
}

func TestStoreSingleRejectedChangeIsWrittenOnce(t *testing.T) {
	b := newMemBackend(basePolicy)
	b.reject = func([]byte) string { return "tests failed" }
	s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: -1})
	key := policyfile.Key{Kind: policyfile.KindGrant, Name: "bad"}
	err := s.Put(context.Background(), key, grantValue("bad"))
	var re *RejectedError
	if !errors.As(err, &re) || len(re.Keys) != 1 || re.Keys[0] != key || !strings.Contains(err.Error(), "tests failed") {
		t.Fatalf("err = %v, want the rejection of %v", err, key)
	}
	if c := b.counts(); c.sets != 1 || c.rejects != 1 || c.gets != 1 {
		t.Errorf("counts %+v, want one read and one refused write", c)
	}
}

func TestStoreTooLargeBatchIsIsolated(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Each change fits on its own; both together do not. Isolation writes
		// the first and refuses the second.
		b := newMemBackend(basePolicy)
		doc := mustParse(t, []byte(basePolicy))
		if err := doc.Put(policyfile.Key{Kind: policyfile.KindGrant, Name: "a"}, grantValue("a")); err != nil {
			t.Fatal(err)
		}
		limit := len(doc.Bytes()) + 10
		l := &logRecords{}
		s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, MaxSize: limit, Quiet: 50 * time.Millisecond, Log: l.log})
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, name := range []string{"a", "b"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pause(time.Duration(i) * 10 * time.Millisecond)
				errs[i] = s.Put(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: name}, grantValue(name))
			}()
		}
		wg.Wait()
		var tl *TooLargeError
		if errs[0] != nil || !errors.As(errs[1], &tl) || tl.Limit != limit {
			t.Fatalf("errors %v, want the first written and the second too large", errs)
		}
		if c := b.counts(); c.writes != 1 || c.sets != 1 {
			t.Errorf("counts %+v, want 1 write", c)
		}
		if got := string(b.bytes()); got != string(doc.Bytes()) {
			t.Errorf("file:\n%s\nwant\n%s", got, doc.Bytes())
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		isolated := false
		for i, m := range l.records {
			if strings.HasPrefix(m, "policy write refused: writing its changes one at a time") && l.fields[i]["changes"] == 2 {
				isolated = true
			}
		}
		if !isolated {
			t.Errorf("the batch of 2 was not isolated: %v", l.records)
		}
	})
}

func TestCheckSizeBounds(t *testing.T) {
	for _, tc := range []struct {
		after, before, limit int
		refused              bool
	}{
		{10, 5, 10, false},
		{11, 5, 10, true},
		{11, 11, 10, false},
		{12, 11, 10, true},
		{11, 12, 10, false},
	} {
		err := checkSize(make([]byte, tc.after), make([]byte, tc.before), tc.limit)
		if (err != nil) != tc.refused {
			t.Errorf("checkSize(%d, %d, %d) = %v, want refused %v", tc.after, tc.before, tc.limit, err, tc.refused)
		}
	}
	e := &TooLargeError{Size: 11 << 20, Before: 9 << 20, Limit: 10 << 20}
	if !strings.Contains(e.Error(), "would grow from 9437184 to 11534336 bytes, beyond the 10485760 bytes (10 MiB)") {
		t.Errorf("message %q", e.Error())
	}
}

func TestStoreWriteStopsWhenEveryCallerLeft(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// The only caller gives up while the write is under way: the write
		// is abandoned.
		b := newMemBackend(basePolicy)
		b.latency = 150 * time.Millisecond
		s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: -1})
		if _, err := s.Snapshot(context.Background()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		err := s.Put(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, grantValue("g"))
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "may or may not have been applied") {
			t.Fatalf("err = %v, want the end of the wait for a write under way", err)
		}
		// Past the write's latency, once every goroutine is blocked, the
		// write has ended.
		pause(300 * time.Millisecond)
		synctest.Wait()
		if c := b.counts(); c.sets != 0 || c.writes != 0 {
			t.Errorf("counts %+v, want the write abandoned", c)
		}

		// Another caller in the same batch still waits: the write goes on.
		b2 := newMemBackend(basePolicy)
		b2.latency = 50 * time.Millisecond
		s2 := NewStore(b2, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: 30 * time.Millisecond})
		short, stop := context.WithTimeout(context.Background(), 60*time.Millisecond)
		defer stop()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s2.Put(short, policyfile.Key{Kind: policyfile.KindGrant, Name: "a"}, grantValue("a"))
		}()
		if err := s2.Put(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: "b"}, grantValue("b")); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if c := b2.counts(); c.writes != 1 {
			t.Errorf("counts %+v, want the write made for the caller that stayed", c)
		}
	})
}

func TestStoreReaderTakesOverAnAbandonedRead(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newMemBackend(basePolicy)
		b.latency = 100 * time.Millisecond
		s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3})
		short, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		var wg sync.WaitGroup
		var shortErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, shortErr = s.Snapshot(short)
		}()
		pause(10 * time.Millisecond) // the short reader's Get is under way
		snap, err := s.Snapshot(context.Background())
		wg.Wait()
		if !errors.Is(shortErr, context.DeadlineExceeded) {
			t.Errorf("short reader: %v", shortErr)
		}
		if err != nil || string(snap.HuJSON) != basePolicy {
			t.Fatalf("the reader that stayed: %v", err)
		}
		if c := b.counts(); c.gets != 1 {
			t.Errorf("counts %+v, want one completed read", c)
		}
		// Refresh reads again; Snapshot then serves the new copy.
		b.edit()
		snap, err = s.Refresh(context.Background())
		if err != nil || !strings.Contains(string(snap.HuJSON), "edited by hand, 1") {
			t.Fatalf("Refresh = %v", err)
		}
		if snap2, _ := s.Snapshot(context.Background()); string(snap2.HuJSON) != string(snap.HuJSON) || b.counts().gets != 2 {
			t.Errorf("Snapshot after Refresh read %d times", b.counts().gets)
		}
	})
}

func TestStoreSingleTooLargeChangeIsNotIsolated(t *testing.T) {
	b := newMemBackend(basePolicy)
	l := &logRecords{}
	s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, MaxSize: len(basePolicy), Quiet: -1, Log: l.log})
	err := s.Put(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: "a"}, grantValue("a"))
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Before != len(basePolicy) || tl.Limit != len(basePolicy) {
		t.Fatalf("err = %v, want a *TooLargeError", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.records {
		if strings.HasPrefix(m, "policy write refused") {
			t.Errorf("a single change was isolated: %v", l.records)
		}
	}
	if c := b.counts(); c.sets != 0 {
		t.Errorf("counts %+v, want no write", c)
	}
}

func TestStoreKeepsWhatItWroteDuringARefresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A Refresh that starts while a write is under way finds no copy when
		// the write ends: the Store keeps the bytes it wrote, and a later
		// Snapshot needs no read.
		b := newMemBackend(basePolicy)
		b.latency = 80 * time.Millisecond
		s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: -1})
		ctx := context.Background()
		if _, err := s.Snapshot(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Put(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, grantValue("g")) }()
		pause(20 * time.Millisecond) // the write is under way
		if _, err := s.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		gets := b.counts().gets
		snap, err := s.Snapshot(ctx)
		if err != nil || !strings.Contains(string(snap.HuJSON), "qtail:grant:g") {
			t.Fatalf("Snapshot = %s, %v", snap.HuJSON, err)
		}
		if c := b.counts(); c.gets != gets || c.writes != 1 {
			t.Errorf("counts %+v, want no read after the write and the refresh (%d before)", c, gets)
		}
	})
}

func TestErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&ContentionError{Attempts: 3, Err: errors.New("412")},
			"policy: gave up after 3 attempts to write the policy file: it kept changing underneath (each write was refused with HTTP 412 because the file had changed since it was read; last error: 412); nothing was written, run the apply again"},
		{&RejectedError{Keys: []policyfile.Key{{Kind: policyfile.KindGrant, Name: "a"}, {Kind: policyfile.KindPolicyTest, Name: "b"}}, Err: errors.New("bad")},
			`policy: the server rejected the policy file with qtail_grant "a", qtail_policy_test "b": bad`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() =\n%s\nwant\n%s", got, tc.want)
		}
	}
}

// timedBackend is a memBackend whose reads take, in order, the times of
// reads (then none), each returning the file as it was when the read
// began, and whose writes take write.
type timedBackend struct {
	*memBackend
	mu    sync.Mutex
	reads []time.Duration
	write time.Duration
}

func (b *timedBackend) Get(ctx context.Context) (Snapshot, error) {
	snap, err := b.memBackend.Get(ctx)
	b.mu.Lock()
	var d time.Duration
	if len(b.reads) > 0 {
		d, b.reads = b.reads[0], b.reads[1:]
	}
	b.mu.Unlock()
	pause(d)
	return snap, err
}

func (b *timedBackend) Set(ctx context.Context, body []byte, etag string) (string, error) {
	pause(b.write)
	return b.memBackend.Set(ctx, body, etag)
}

// A read that began before a write replaced the copy is never kept, even
// when a refresh then waits for a read: the refresh that follows the
// write reads the file again and finds the write.
func TestStoreRefreshAfterAWriteDoesNotJoinAnOlderRead(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := &timedBackend{memBackend: newMemBackend(basePolicy), reads: []time.Duration{0, 300 * time.Millisecond}, write: 100 * time.Millisecond}
		s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: -1})
		ctx := context.Background()
		if _, err := s.Snapshot(ctx); err != nil {
			t.Fatal(err)
		}
		put := make(chan error, 1)
		go func() { put <- s.Put(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, grantValue("g")) }()
		pause(10 * time.Millisecond) // the write is under way
		slow := make(chan Snapshot, 1)
		go func() {
			snap, _ := s.Refresh(ctx) // reads the file before the write, slowly
			slow <- snap
		}()
		if err := <-put; err != nil {
			t.Fatal(err)
		}
		pause(50 * time.Millisecond)
		snap, err := s.Refresh(ctx)
		if err != nil || !strings.Contains(string(snap.HuJSON), "qtail:grant:g") {
			t.Errorf("the refresh after the write = %s, %v; want the file as written", snap.HuJSON, err)
		}
		if old := <-slow; strings.Contains(string(old.HuJSON), "qtail:grant:g") {
			t.Errorf("the slow refresh read the file after the write: %s", old.HuJSON)
		}
		if snap, err := s.Snapshot(ctx); err != nil || !strings.Contains(string(snap.HuJSON), "qtail:grant:g") {
			t.Errorf("Snapshot after both refreshes = %s, %v; want the file as written", snap.HuJSON, err)
		}
	})
}

// A read that began before the copy that a failed write dropped is never
// kept: the write's next attempt reads the file again at once, instead of
// waiting for the older read and failing on it once more.
func TestStoreWriteAfterADropDoesNotJoinAnOlderRead(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := &timedBackend{memBackend: newMemBackend(basePolicy), reads: []time.Duration{0, 300 * time.Millisecond}, write: 100 * time.Millisecond}
		s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: -1})
		ctx := context.Background()
		if _, err := s.Snapshot(ctx); err != nil {
			t.Fatal(err)
		}
		first := make(chan error, 1)
		go func() { first <- s.Put(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "a"}, grantValue("a")) }()
		pause(10 * time.Millisecond) // the first write is under way
		slow := make(chan error, 1)
		go func() {
			_, err := s.Refresh(ctx) // reads the file before the first write, slowly
			slow <- err
		}()
		if err := <-first; err != nil { // the Store keeps what it wrote
			t.Fatal(err)
		}
		b.edit() // the second write finds the file changed: 412, and its base dropped
		start := time.Now()
		if err := s.Put(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "b"}, grantValue("b")); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took >= 300*time.Millisecond {
			t.Errorf("the second write took %s: it waited for the older read", took)
		}
		if c := b.counts(); c.conflicts != 1 || c.writes != 2 {
			t.Errorf("counts %+v, want one 412 and two writes", c)
		}
		if err := <-slow; err != nil {
			t.Fatal(err)
		}
		if snap, err := s.Snapshot(ctx); err != nil || !strings.Contains(string(snap.HuJSON), "qtail:grant:b") {
			t.Errorf("Snapshot after the older read ended = %s, %v; want the file as written", snap.HuJSON, err)
		}
	})
}
