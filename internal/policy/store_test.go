package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

func testRetry(attempts int) retry.Policy {
	return retry.Policy{MaxAttempts: attempts, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}
}

// testLog sends the Store's records to the test log.
func testLog(t *testing.T) func(context.Context, string, map[string]any) {
	return func(_ context.Context, msg string, fields map[string]any) { t.Logf("%s %v", msg, fields) }
}

func grantValue(name string) []byte {
	return []byte(fmt.Sprintf(`{"src":["group:ops"],"dst":["tag:%s"],"ip":["tcp:443"]}`, name))
}

// putGrants runs callers goroutines that each put perCaller grants one
// after the other, at most parallel at a time, and fails on any error.
func putGrants(t *testing.T, s *Store, prefix string, callers, perCaller, parallel int) {
	t.Helper()
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	errs := make(chan error, callers*perCaller)
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perCaller; i++ {
				sem <- struct{}{}
				name := fmt.Sprintf("%s-%d-%d", prefix, c, i)
				if err := s.Put(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: name}, grantValue(name)); err != nil {
					errs <- fmt.Errorf("put %s: %w", name, err)
				}
				<-sem
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// checkGrants asserts that the backend holds exactly the named grants once.
func checkGrants(t *testing.T, b *memBackend, prefix string, callers, perCaller int) {
	t.Helper()
	doc := mustParse(t, b.bytes())
	seen := map[string]int{}
	for _, f := range doc.Fragments() {
		seen[f.Key.Name]++
	}
	for c := 0; c < callers; c++ {
		for i := 0; i < perCaller; i++ {
			name := fmt.Sprintf("%s-%d-%d", prefix, c, i)
			if seen[name] != 1 {
				t.Errorf("grant %s is present %d times", name, seen[name])
			}
		}
	}
}

func TestStoreBatchesConcurrentPuts(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		callers, perCaller, parallel int
	}{
		{"40 goroutines x 5", 40, 5, 40},
		{"parallelism 10", 40, 5, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// On virtual time every wave is whole: one write per wave of
			// the parallelism, 5 and 20, exactly.
			synctest.Test(t, func(t *testing.T) {
				b := newMemBackend(basePolicy)
				b.latency = 2 * time.Millisecond
				s := NewStore(b, StoreOptions{Retry: testRetry(6), ConflictAttempts: 6})
				putGrants(t, s, "g", tc.callers, tc.perCaller, tc.parallel)
				checkGrants(t, b, "g", tc.callers, tc.perCaller)
				n := tc.callers * tc.perCaller
				c := b.counts()
				want := n / tc.parallel
				t.Logf("%d grants, %d at a time: %d policy reads, %d writes (want %d)", n, tc.parallel, c.gets, c.writes, want)
				if c.writes != want {
					t.Errorf("%d writes for %d grants, want %d, one per wave", c.writes, n, want)
				}
				if c.gets != 1 {
					t.Errorf("%d policy reads, want 1", c.gets)
				}
				if !strings.HasPrefix(string(b.bytes()), basePolicy[:len(basePolicy)-len("\t],\n}\n")]) {
					t.Error("the bytes before the new grants changed")
				}
			})
		})
	}
}

func TestStoreReadBurstSharesOneGet(t *testing.T) {
	b := newMemBackend(basePolicy)
	b.latency = 10 * time.Millisecond
	s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3})
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:db"}
			if i%2 == 1 {
				key = policyfile.Key{Kind: policyfile.KindGrant, Name: fmt.Sprintf("g%d", i)}
			}
			f, err := s.Read(context.Background(), key)
			if err != nil {
				t.Error(err)
			}
			if key.Kind == policyfile.KindTagOwner && (!f.Found || f.Marked) {
				t.Errorf("Read(%s) = %+v", key, f)
			}
		}()
	}
	wg.Wait()
	t.Logf("100 concurrent reads: %d policy read(s)", b.counts().gets)
	if got := b.counts().gets; got != 1 {
		t.Fatalf("%d policy reads for a burst of 100, want 1", got)
	}

	// Our own write replaces the copy: reads after it cost nothing.
	key := policyfile.Key{Kind: policyfile.KindGrant, Name: "new"}
	if err := s.Put(context.Background(), key, grantValue("new")); err != nil {
		t.Fatal(err)
	}
	if f, err := s.Read(context.Background(), key); err != nil || !f.Found || !f.Marked {
		t.Fatalf("Read after Put = %+v, %v", f, err)
	}
	if got := b.counts().gets; got != 1 {
		t.Fatalf("%d policy reads after our own write, want 1", got)
	}

	// A change by someone else is seen after Refresh.
	b.edit()
	if snap, _ := s.Snapshot(context.Background()); strings.Contains(string(snap.HuJSON), "edited by hand") {
		t.Fatal("the kept copy changed without a read")
	}
	snap, err := s.Refresh(context.Background())
	if err != nil || !strings.Contains(string(snap.HuJSON), "edited by hand") || snap.ETag != etagOf(b.bytes()) {
		t.Fatalf("Refresh = %v, %v", snap.ETag, err)
	}
	if got := b.counts().gets; got != 2 {
		t.Fatalf("%d policy reads after Refresh, want 2", got)
	}
}

func TestStoreStaleCopyRebasesOn412(t *testing.T) {
	b := newMemBackend(basePolicy)
	s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3})
	if _, err := s.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.edit() // someone edits the policy in the admin console
	if err := s.Put(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: "x"}, grantValue("x")); err != nil {
		t.Fatal(err)
	}
	out := string(b.bytes())
	if !strings.Contains(out, "edited by hand, 1") || !strings.Contains(out, "qtail:grant:x") {
		t.Fatalf("the rebase lost a change:\n%s", out)
	}
	if c := b.counts(); c.conflicts != 1 || c.writes != 1 || c.gets != 2 {
		t.Fatalf("counts = %+v, want 1 conflict, 1 write, 2 reads", c)
	}
}

func TestStoreTwoProcessesLoseNothing(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "handwritten.hujson"))
	if err != nil {
		t.Fatal(err)
	}
	b := newMemBackend(string(orig))
	b.latency = time.Millisecond
	s1 := NewStore(b, StoreOptions{Retry: testRetry(20), ConflictAttempts: 20})
	s2 := NewStore(b, StoreOptions{Retry: testRetry(20), ConflictAttempts: 20})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); putGrants(t, s1, "p1", 10, 5, 10) }()
	go func() { defer wg.Done(); putGrants(t, s2, "p2", 10, 5, 10) }()
	wg.Wait()
	checkGrants(t, b, "p1", 10, 5)
	checkGrants(t, b, "p2", 10, 5)
	doc := mustParse(t, b.bytes())
	for _, f := range doc.Fragments() {
		doc.Delete(f.Key)
	}
	if !bytes.Equal(doc.Bytes(), orig) {
		t.Errorf("removing every grant did not give the hand-written policy back:\n%s", doc.Bytes())
	}
	c := b.counts()
	t.Logf("two processes, 100 grants: %d reads, %d write attempts, %d writes, %d conflicts (412)", c.gets, c.sets, c.writes, c.conflicts)
}

func TestStore412StormGivesUp(t *testing.T) {
	b := newMemBackend(basePolicy)
	b.storm = 100
	s := NewStore(b, StoreOptions{Retry: testRetry(4), ConflictAttempts: 4, Log: testLog(t)})
	key := policyfile.Key{Kind: policyfile.KindGrant, Name: "storm"}
	err := s.Put(context.Background(), key, grantValue("storm"))
	var ce *ContentionError
	if !errors.As(err, &ce) || ce.Attempts != 4 {
		t.Fatalf("err = %v, want a *ContentionError after 4 attempts", err)
	}
	if !IsPreconditionFailed(err) || !strings.Contains(err.Error(), "4 attempts") || !strings.Contains(err.Error(), "kept changing") {
		t.Fatalf("imprecise error: %v", err)
	}
	t.Logf("storm error: %v", err)
	if c := b.counts(); c.sets != 4 || c.writes != 0 {
		t.Fatalf("counts = %+v, want 4 attempts and no write", c)
	}
	if strings.Contains(string(b.bytes()), "qtail:") {
		t.Fatal("something was written during the storm")
	}

	// The storm ends after two more edits: the retry writes once, keeps
	// the edits, and duplicates nothing.
	b.mu.Lock()
	b.storm = 2
	b.mu.Unlock()
	if err := s.Put(context.Background(), key, grantValue("storm")); err != nil {
		t.Fatal(err)
	}
	out := string(b.bytes())
	if strings.Count(out, key.Marker()) != 1 || strings.Count(out, "edited by hand") != 6 {
		t.Fatalf("after the storm:\n%s", out)
	}
}

func TestStoreBadFragmentFailsOnlyItsCaller(t *testing.T) {
	b := newMemBackend(basePolicy)
	b.reject = func(std []byte) string {
		if strings.Contains(string(std), `"tag:forbidden"`) {
			return `src=tag not found: "tag:forbidden"`
		}
		return ""
	}
	s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: 30 * time.Millisecond, Log: testLog(t)})
	type result struct {
		key policyfile.Key
		err error
	}
	muts := []policyfile.Mutation{
		{Key: policyfile.Key{Kind: policyfile.KindGrant, Name: "bad"}, Value: raw(`{"src":["tag:forbidden"],"dst":["*"],"ip":["*"]}`)},
		{Key: policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:db"}, Value: raw(`["someone@example.com"]`)}, // unmanaged conflict
	}
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("good-%d", i)
		muts = append(muts, policyfile.Mutation{Key: policyfile.Key{Kind: policyfile.KindGrant, Name: name}, Value: grantValue(name)})
	}
	results := make(chan result, len(muts))
	for _, m := range muts {
		go func() { results <- result{m.Key, s.Apply(context.Background(), m)} }()
	}
	for range muts {
		r := <-results
		switch r.key.Name {
		case "bad":
			var re *RejectedError
			if !errors.As(r.err, &re) || !IsRejected(r.err) || !strings.Contains(r.err.Error(), `tag not found: "tag:forbidden"`) {
				t.Errorf("bad fragment: err = %v, want the server's rejection", r.err)
			}
			if len(re.Keys) != 1 || re.Keys[0] != r.key {
				t.Errorf("rejection names %v, want only the culprit", re.Keys)
			}
		case "tag:db":
			var ce *policyfile.UnmanagedConflictError
			if !errors.As(r.err, &ce) {
				t.Errorf("conflicting tag owner: err = %v", r.err)
			}
		default:
			if r.err != nil {
				t.Errorf("good fragment %s failed: %v", r.key.Name, r.err)
			}
		}
	}
	doc := mustParse(t, b.bytes())
	for i := 0; i < 8; i++ {
		if f := doc.Get(policyfile.Key{Kind: policyfile.KindGrant, Name: fmt.Sprintf("good-%d", i)}); !f.Found {
			t.Errorf("good-%d was not written", i)
		}
	}
	if f := doc.Get(policyfile.Key{Kind: policyfile.KindGrant, Name: "bad"}); f.Found {
		t.Error("the rejected grant was written")
	}
	c := b.counts()
	t.Logf("one bad grant among 10 changes: %d write attempts, %d writes, %d rejections", c.sets, c.writes, c.rejects)
}

func TestStorePreviewDoesNotWrite(t *testing.T) {
	b := newMemBackend(basePolicy)
	s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3})
	out, err := s.Preview(context.Background(),
		policyfile.Mutation{Key: policyfile.Key{Kind: policyfile.KindGrant, Name: "p"}, Value: grantValue("p")},
		policyfile.Mutation{Key: policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:p"}, Value: raw(`["group:ops"]`)},
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "qtail:grant:p") || !strings.Contains(string(out), "qtail:tag_owner:tag:p") {
		t.Fatalf("preview lacks the changes:\n%s", out)
	}
	if _, err := s.Preview(context.Background(), policyfile.Mutation{Key: policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:db"}, Value: raw(`[]`)}); err == nil {
		t.Fatal("preview of a conflicting change succeeded")
	}
	if c := b.counts(); c.sets != 0 || string(b.bytes()) != basePolicy {
		t.Fatal("preview wrote the policy")
	}
	// The kept copy is not changed by a preview.
	if f, _ := s.Read(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: "p"}); f.Found {
		t.Fatal("preview changed the kept copy")
	}
}

func TestStoreNoOpsDoNotWrite(t *testing.T) {
	b := newMemBackend(basePolicy)
	s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3})
	ctx := context.Background()
	if err := s.Delete(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "absent"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:db"}); err != nil { // not ours
		t.Fatal(err)
	}
	if err := s.Put(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, grantValue("g")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, grantValue("g")); err != nil {
		t.Fatal(err)
	}
	if c := b.counts(); c.sets != 1 {
		t.Fatalf("%d write attempts, want 1", c.sets)
	}
	if err := s.Delete(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}); err != nil {
		t.Fatal(err)
	}
	if string(b.bytes()) != basePolicy {
		t.Fatalf("put then delete did not restore the policy:\n%s", b.bytes())
	}
	if err := s.Put(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "bad name"}, grantValue("g")); err == nil {
		t.Fatal("invalid key accepted")
	}
}

func TestStoreCanceledBeforeBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newMemBackend(basePolicy)
		s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: 200 * time.Millisecond, MaxWait: time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		err := s.Put(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "late"}, grantValue("late"))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		// Past the quiet period, once every goroutine is blocked, the writer
		// has found an empty queue.
		pause(300 * time.Millisecond)
		synctest.Wait()
		if c := b.counts(); c.sets != 0 || c.gets != 0 {
			t.Fatalf("a canceled put reached the backend: %+v", c)
		}
	})
}

func TestStoreReadError(t *testing.T) {
	s := NewStore(failingBackend{}, StoreOptions{Retry: testRetry(2), ConflictAttempts: 2})
	if _, err := s.Read(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: "x"}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v", err)
	}
	if err := s.Put(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: "x"}, grantValue("x")); err == nil {
		t.Fatal("put without a readable policy succeeded")
	}
}

type failingBackend struct{}

func (failingBackend) Get(context.Context) (Snapshot, error) { return Snapshot{}, errors.New("boom") }
func (failingBackend) Set(context.Context, []byte, string) (string, error) {
	return "", errors.New("boom")
}
func (failingBackend) Validate(context.Context, []byte) error { return errors.New("boom") }

// Changes that arrive spread out, as Terraform's creates of one wave do,
// share one write as long as each comes within the quiet period of the
// previous one.
func TestStoreGathersAStaggeredWave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newMemBackend("{\n\t\"grants\": [],\n}\n")
		s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: 300 * time.Millisecond, MaxWait: 5 * time.Second})
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pause(time.Duration(i) * 5 * time.Millisecond)
				if err := s.Put(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: fmt.Sprintf("g%d", i)}, json.RawMessage(`{"src":["*"],"dst":["tag:x"],"ip":["*"]}`)); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if c := b.counts(); c.writes != 1 {
			t.Fatalf("a wave of 10 changes made %d writes, want 1", c.writes)
		}
	})
}

// A policy read without an ETag is never written back: the write would be
// unconditional.
func TestStoreRefusesToWriteWithoutETag(t *testing.T) {
	b := newMemBackend("{\n\t\"grants\": [],\n}\n")
	s := NewStore(noETag{b}, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: -1})
	err := s.Put(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, json.RawMessage(`{"src":["*"],"dst":["tag:x"],"ip":["*"]}`))
	if err == nil || !strings.Contains(err.Error(), "without an ETag") {
		t.Fatalf("err = %v, want a refusal to write without an ETag", err)
	}
	if c := b.counts(); c.writes != 0 {
		t.Fatalf("%d writes, want none", c.writes)
	}
}

// noETag is a backend whose reads carry no ETag.
type noETag struct{ *memBackend }

func (n noETag) Get(ctx context.Context) (Snapshot, error) {
	snap, err := n.memBackend.Get(ctx)
	snap.ETag = ""
	return snap, err
}
