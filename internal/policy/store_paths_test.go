package policy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

func TestStoreWithoutAPolicyFile(t *testing.T) {
	ctx := context.Background()
	key := policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}
	for name, tc := range map[string]struct {
		backend Backend
		want    string
	}{
		"unreadable": {failingBackend{}, "policy: reading the policy file: boom"},
		"unparsable": {newMemBackend(unparsable), "not valid HuJSON"},
	} {
		s := NewStore(tc.backend, StoreOptions{Retry: testRetry(2), ConflictAttempts: 2, Quiet: -1})
		check := func(what string, err error) {
			t.Helper()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %s = %v, want an error that says %q", name, what, err, tc.want)
			}
		}
		_, err := s.Lookup(ctx, key, nil)
		check("Lookup", err)
		_, err = s.Fragments(ctx)
		check("Fragments", err)
		_, err = s.Preview(ctx, policyfile.Mutation{Key: key, Value: grantValue("g")})
		check("Preview", err)
		check("Put", s.Put(ctx, key, grantValue("g")))
	}
	_, err := NewStore(failingBackend{}, StoreOptions{}).Refresh(ctx)
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Refresh = %v, want the read's error", err)
	}
}

func TestStoreFragmentsListsQtailsOwn(t *testing.T) {
	s := NewStore(newMemBackend("{\n\t\"grants\": [\n\t\t// qtail:grant:mine\n\t\t{\"src\": [\"*\"], \"dst\": [\"tag:x\"], \"ip\": [\"*\"]},\n"+
		"\t\t{\"src\": [\"*\"], \"dst\": [\"tag:y\"], \"ip\": [\"*\"]},\n\t],\n}\n"), StoreOptions{})
	got, err := s.Fragments(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Key != (policyfile.Key{Kind: policyfile.KindGrant, Name: "mine"}) || !policyfile.SameJSON(got[0].Value, raw(`{"src":["*"],"dst":["tag:x"],"ip":["*"]}`)) {
		t.Errorf("Fragments = %+v, want the marked grant alone", got)
	}
}

func TestStorePreviewOfAChangeThatDoesNotApply(t *testing.T) {
	b := newMemBackend("{\n\t\"grants\": [],\n}\n")
	s := NewStore(b, StoreOptions{})
	if _, err := s.Preview(context.Background(), policyfile.Mutation{Key: policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, Value: raw(`[]`)}); err == nil {
		t.Error("Preview of a grant that is not an object: no error")
	}
}

func TestStoreRefusesAnInvalidKeyBeforeQueueing(t *testing.T) {
	b := newMemBackend("{\n\t\"grants\": [],\n}\n")
	s := NewStore(b, StoreOptions{Quiet: -1})
	err := s.ApplyAll(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, []policyfile.Mutation{
		{Key: policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, Value: grantValue("g")},
		{Key: policyfile.Key{Kind: "bogus", Name: "x"}, Value: grantValue("x")},
	})
	if err == nil {
		t.Fatal("an invalid key was accepted")
	}
	if c := b.counts(); c.gets != 0 || c.sets != 0 || s.Changing() {
		t.Errorf("counts %+v, changing %t: want nothing read, written or queued", c, s.Changing())
	}
}

func TestStoreStopsWaitingForAWriteOfSeveralChanges(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		for _, tc := range []struct {
			muts []policyfile.Mutation
			want string
		}{
			{grantPut("a", "tag:a"), `the write of ` + policyfile.Key{Kind: policyfile.KindGrant, Name: "a"}.String() + `, which`},
			{append(grantPut("a", "tag:a"), grantPut("b", "tag:b")...), `the write of 2 changes (` + policyfile.Key{Kind: policyfile.KindGrant, Name: "a"}.String() + ` and others), which`},
		} {
			b := newMemBackend(basePolicy)
			b.latency = 150 * time.Millisecond
			s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: -1})
			if _, err := s.Snapshot(context.Background()); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			err := s.ApplyAll(ctx, tc.muts[0].Key, tc.muts)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
			pause(time.Second)
		}
	})
}

func TestStoreGivesUpWhenTheWaitToRetryEnds(t *testing.T) {
	b := newMemBackend("{\n\t\"grants\": [],\n}\n")
	b.storm = 1
	stop := errors.New("stopped")
	s := NewStore(b, StoreOptions{Quiet: -1, ConflictAttempts: 3, Retry: retry.Policy{Sleep: func(context.Context, time.Duration) error { return stop }}})
	err := s.Put(context.Background(), policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, grantValue("g"))
	if !errors.Is(err, stop) || !strings.Contains(err.Error(), "policy: waiting to retry the write: stopped") {
		t.Errorf("err = %v, want the end of the wait to retry", err)
	}
	if c := b.counts(); c.sets != 1 || c.writes != 0 {
		t.Errorf("counts %+v, want one refused write", c)
	}
}

// emptyETagSet is a backend whose writes answer with no ETag.
type emptyETagSet struct{ *memBackend }

func (e emptyETagSet) Set(ctx context.Context, body []byte, etag string) (string, error) {
	_, err := e.memBackend.Set(ctx, body, etag)
	return "", err
}

func TestStoreForgetsAWriteAnsweredWithoutETag(t *testing.T) {
	b := newMemBackend("{\n\t\"grants\": [],\n}\n")
	s := NewStore(emptyETagSet{b}, StoreOptions{Quiet: -1})
	ctx := context.Background()
	if err := s.Put(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, grantValue("g")); err != nil {
		t.Fatal(err)
	}
	// With no ETag the copy cannot be written back: the next use reads.
	snap, err := s.Snapshot(ctx)
	if err != nil || snap.ETag != etagOf(b.bytes()) || !strings.Contains(string(snap.HuJSON), "qtail:grant:g") {
		t.Fatalf("Snapshot = %s %q, %v", snap.HuJSON, snap.ETag, err)
	}
	if c := b.counts(); c.gets != 2 {
		t.Errorf("%d reads, want a second one after the write", c.gets)
	}
}

// slowSet is a backend whose writes take extra longer than its reads.
type slowSet struct {
	*memBackend
	extra time.Duration
}

func (s slowSet) Set(ctx context.Context, body []byte, etag string) (string, error) {
	pause(s.extra)
	return s.memBackend.Set(ctx, body, etag)
}

func TestStoreKeepsNeitherCopyWhenARefreshEndsDuringAWrite(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// A Refresh reads the file while a write is under way, and ends
		// first: which copy is newer is unknown, and the next Snapshot
		// reads again.
		b := newMemBackend(basePolicy)
		b.latency = 50 * time.Millisecond
		s := NewStore(slowSet{b, 200 * time.Millisecond}, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: -1})
		ctx := context.Background()
		if _, err := s.Snapshot(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Put(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "g"}, grantValue("g")) }()
		pause(20 * time.Millisecond)
		if snap, err := s.Refresh(ctx); err != nil || strings.Contains(string(snap.HuJSON), "qtail:grant:g") {
			t.Fatalf("Refresh = %s, %v, want the file before the write", snap.HuJSON, err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		gets := b.counts().gets
		snap, err := s.Snapshot(ctx)
		if err != nil || !strings.Contains(string(snap.HuJSON), "qtail:grant:g") {
			t.Fatalf("Snapshot = %s, %v", snap.HuJSON, err)
		}
		if c := b.counts(); c.gets != gets+1 {
			t.Errorf("%d reads after the write, want 1", c.gets-gets)
		}
	})
}
