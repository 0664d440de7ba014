// Package policy keeps the tailnet policy file of one process: a Store
// that reads the file once and writes the fragments qtail owns, and a
// Planner that checks at plan time the changes to them. The file is edited
// with the policyfile package, and concurrent changes are gathered by the
// batch package.
//
// # Concurrency
//
// A Store serves many fragment reads with one policy read, and gathers
// concurrent changes into one read-modify-write guarded by If-Match,
// rebased and retried on 412 within a bounded, jittered budget. When the
// server rejects a batch (400), each change of the batch is written again
// on its own, once, so that only the fragment at fault fails.
//
// A Planner, next to the Store, holds the changes that a Terraform plan
// makes to the fragments and validates each against the policy file as it
// will be, with the server's Validate; concurrent checks share one
// validation and are isolated the same way. The Store's writes and the
// Planner's checks are gathered by batchers (batch.Batcher) that share
// their estimate of Terraform's parallelism.
//
// # Size
//
// The Store writes, and the Planner plans, no change that would make the
// policy file larger than the file as read and than StoreOptions.MaxSize
// (MaxPolicySize unless set): such a change fails with a *TooLargeError.
package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/batch"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// Defaults of the batching and of the 412 budget.
const (
	// DefaultQuiet is the shortest quiet period of a batch.Batcher (the
	// Store's writes, the Planner's validations): how long a batch that is
	// not known to be complete waits with no new request before it runs.
	// It grows with the gaps between the arrivals of the batch (see
	// batch.Batcher).
	DefaultQuiet = 25 * time.Millisecond
	// DefaultMaxWait bounds the wait of a batch.
	DefaultMaxWait = 400 * time.Millisecond
	// DefaultConflictAttempts is how many writes a batch may make when
	// each loses a race (412). Several Terraform runs that share a policy
	// race all the time; a rebase costs one read and one write.
	DefaultConflictAttempts = 10
)

// StoreOptions configures a Store.
type StoreOptions struct {
	// Retry sets the jittered waits between attempts after a 412; zero
	// fields take the defaults of retry.Default.
	Retry retry.Policy
	// ConflictAttempts is how many writes a batch may make, the first
	// included, while each fails with 412. Zero means
	// DefaultConflictAttempts.
	ConflictAttempts int
	// Quiet is the shortest quiet period of a batch of writes or of
	// plan-time checks, and MaxWait bounds its wait (see batch.Batcher). Zero
	// means DefaultQuiet and DefaultMaxWait; a negative Quiet does not
	// wait.
	Quiet   time.Duration
	MaxWait time.Duration
	// MaxSize is the largest policy file the Store writes and the Planner
	// plans. Zero means MaxPolicySize.
	MaxSize int
	// Log, when set, receives a debug record for each batch (what it
	// batches, its size, how long it waited and why it started) and for
	// each write, retry and isolation, with the context of the batch's
	// first caller.
	Log func(ctx context.Context, msg string, fields map[string]any)
}

// Store is the policy file of one tailnet as seen by one process. It reads
// the file once and serves every fragment read from that copy, and it
// gathers concurrent changes into one read-modify-write: a single writer
// takes every queued change, applies them to the latest copy, writes once
// with If-Match, and answers every caller. On a 412 it reads again and
// re-applies the whole batch, with bounded jittered retries.
//
// A change that fails on its own (a *policyfile.UnmanagedConflictError,
// an invalid value) fails only its caller; the others are still written.
// When the server rejects a batch (HTTP 400), each of its changes is
// written again on its own, once, so that only the culprit fails with the
// server's message.
//
// The copy is replaced by every successful write (qtail knows the bytes
// it wrote and the new ETag) and dropped on a 412. Refresh forces a read.
type Store struct {
	backend  Backend
	retry    retry.Policy
	attempts int
	log      func(ctx context.Context, msg string, fields map[string]any)
	maxSize  int

	// quiet and maxWait are the batching settings, which the Planner
	// shares, and par the estimate of Terraform's parallelism.
	quiet, maxWait time.Duration
	par            *batch.Parallelism
	// writes gathers concurrent changes into batches for cycle.
	writes *batch.Batcher[*request, error]
	// changing is set once the Store was asked to change the file: the
	// process applies a plan.
	changing atomic.Bool
	// premade, when set, returns a document already made of a snapshot
	// and a list of changes (see Planner.premade).
	premade func() (*cached, []policyfile.Mutation, *policyfile.Document)

	mu      sync.Mutex
	gen     uint64  // bumped whenever the copy is replaced or dropped
	current *cached // the copy, nil when none
	loading *load   // the read under way, if any
}

// cached is a snapshot and, once needed, its parsed document, which is
// only read, never changed.
type cached struct {
	snap Snapshot
	once sync.Once
	doc  *policyfile.Document
	err  error
}

func (c *cached) document() (*policyfile.Document, error) {
	c.once.Do(func() {
		if c.doc == nil {
			c.doc, c.err = policyfile.Parse(c.snap.HuJSON)
		}
	})
	return c.doc, c.err
}

// load is one Backend.Get shared by every reader that needs it.
type load struct {
	gen  uint64
	done chan struct{}
	res  *cached
	err  error
}

// request is one queued change, of one or more mutations applied all or
// nothing, and the context of its caller.
type request struct {
	ctx  context.Context
	muts []policyfile.Mutation
}

// NewStore returns a Store over b.
func NewStore(b Backend, opts StoreOptions) *Store {
	s := &Store{backend: b, retry: opts.Retry, attempts: opts.ConflictAttempts, log: opts.Log, par: &batch.Parallelism{}}
	if s.attempts <= 0 {
		s.attempts = DefaultConflictAttempts
	}
	s.maxSize = opts.MaxSize
	if s.maxSize <= 0 {
		s.maxSize = MaxPolicySize
	}
	if s.log == nil {
		s.log = func(context.Context, string, map[string]any) {}
	}
	s.quiet, s.maxWait = opts.Quiet, opts.MaxWait
	if s.quiet == 0 {
		s.quiet = DefaultQuiet
	}
	if s.maxWait <= 0 {
		s.maxWait = DefaultMaxWait
	}
	s.writes = batch.NewBatcher(batch.BatcherOptions[*request]{
		Quiet: s.quiet, MaxWait: s.maxWait, Parallelism: s.par,
		OnBatch: func(reqs []*request, info batch.BatchInfo) { s.logBatch(reqs[0].ctx, "write", info) },
	}, s.writeBatch)
	return s
}

// logBatch records one batch of kind (write or validate).
func (s *Store) logBatch(ctx context.Context, kind string, info batch.BatchInfo) {
	s.log(ctx, "policy batch", map[string]any{
		"batch": kind, "size": info.Size, "wait_ms": info.Wait.Milliseconds(), "reason": info.Reason,
		"target": info.Target, "missing": info.Missing,
	})
}

// claimKey is the key under which batchers expect the request of a
// fragment: its kind and name, whatever its owner (not known before it is
// created).
func claimKey(k policyfile.Key) string { return string(k.Kind) + ":" + k.Name }

// Expect says that Terraform is on its way to change the fragment of key
// (it validates or plans its resource): the batch of writes under way waits
// for it (see batch.Batcher) unless Forget says it will not come.
func (s *Store) Expect(key policyfile.Key) { s.writes.Expect(claimKey(key)) }

// Forget says that no change of the fragment of key follows: its plan
// failed, or changes nothing.
func (s *Store) Forget(key policyfile.Key) { s.writes.Forget(claimKey(key)) }

// Changing reports whether the Store was asked to change the policy file:
// the process applies a plan. Terraform plans each resource again just
// before it applies it; the changes planned then are checked by the server
// when they are written.
func (s *Store) Changing() bool { return s.changing.Load() }

// prefetchTimeout bounds a read that Prefetch starts: it outlives the
// call that started it, whose context ends with its answer.
const prefetchTimeout = 2 * time.Minute

// Prefetch starts reading the policy file in the background, unless a copy
// is kept or a read is under way: a resource that validates its
// configuration is about to be planned, and its plan reads the file. The
// read then overlaps Terraform's work between the two calls instead of
// following it. A caller that needs the file before the read ends waits
// for it (see get); one that finds it failed reads it again only when the
// failure was its context's (otherwise it gets the same error as from a
// read of its own).
func (s *Store) Prefetch(ctx context.Context) {
	s.mu.Lock()
	busy := s.current != nil || (s.loading != nil && s.loading.gen == s.gen)
	s.mu.Unlock()
	if busy {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), prefetchTimeout)
		defer cancel()
		_, _ = s.get(ctx, false)
	}()
}

// Snapshot returns the policy file, read once and then kept.
func (s *Store) Snapshot(ctx context.Context) (Snapshot, error) {
	c, err := s.get(ctx, false)
	if err != nil {
		return Snapshot{}, err
	}
	return c.snap, nil
}

// Refresh reads the policy file again and keeps the new copy.
func (s *Store) Refresh(ctx context.Context) (Snapshot, error) {
	c, err := s.get(ctx, true)
	if err != nil {
		return Snapshot{}, err
	}
	return c.snap, nil
}

// Read returns the fragment of key from the kept copy of the policy file.
func (s *Store) Read(ctx context.Context, key policyfile.Key) (policyfile.Fragment, error) {
	return s.Lookup(ctx, key, nil)
}

// Lookup is Read that also finds an unmarked grant or test identical to
// want; see policyfile.Document.Lookup.
func (s *Store) Lookup(ctx context.Context, key policyfile.Key, want json.RawMessage) (policyfile.Fragment, error) {
	c, err := s.get(ctx, false)
	if err != nil {
		return policyfile.Fragment{}, err
	}
	doc, err := c.document()
	if err != nil {
		return policyfile.Fragment{}, err
	}
	return doc.Lookup(key, want), nil
}

// Fragments lists the fragments qtail owns in the kept copy.
func (s *Store) Fragments(ctx context.Context) ([]policyfile.OwnedFragment, error) {
	c, err := s.get(ctx, false)
	if err != nil {
		return nil, err
	}
	doc, err := c.document()
	if err != nil {
		return nil, err
	}
	return doc.Fragments(), nil
}

// Preview returns the policy file as it would be after muts, applied in
// order to the kept copy, without writing it.
func (s *Store) Preview(ctx context.Context, muts ...policyfile.Mutation) ([]byte, error) {
	c, err := s.get(ctx, false)
	if err != nil {
		return nil, err
	}
	doc, err := c.document()
	if err != nil {
		return nil, err
	}
	doc = doc.Clone()
	for _, m := range muts {
		if err := doc.Apply(m); err != nil {
			return nil, err
		}
	}
	return doc.Bytes(), nil
}

// Put creates or updates the fragment of key. See
// policyfile.Document.Apply.
func (s *Store) Put(ctx context.Context, key policyfile.Key, value json.RawMessage) error {
	return s.Apply(ctx, policyfile.Mutation{Key: key, Value: value})
}

// Delete removes the fragment of key. Deleting a fragment that is not
// there is not an error.
func (s *Store) Delete(ctx context.Context, key policyfile.Key) error {
	return s.Apply(ctx, policyfile.Mutation{Key: key, Delete: true})
}

// Apply queues m, waits until the batch that holds it is written, and
// returns m's own outcome. When ctx ends first, Apply returns at once; a
// change already taken into a batch may still be written.
func (s *Store) Apply(ctx context.Context, m policyfile.Mutation) error {
	return s.ApplyAll(ctx, m.Key, []policyfile.Mutation{m})
}

// ApplyAll is Apply for several mutations that succeed or fail together:
// they are written in the same batch, in order, or not at all. claim is
// the key under which the change was expected (see Expect), the key of
// one of muts.
func (s *Store) ApplyAll(ctx context.Context, claim policyfile.Key, muts []policyfile.Mutation) error {
	if len(muts) == 0 {
		return nil
	}
	for _, m := range muts {
		if err := m.Key.Validate(); err != nil {
			return err
		}
	}
	s.changing.Store(true)
	outcome, inFlight, err := s.writes.Do(ctx, claimKey(claim), &request{ctx: ctx, muts: muts})
	if err == nil {
		return outcome
	}
	if !inFlight {
		return err
	}
	what := muts[0].Key.String()
	if len(muts) > 1 {
		what = fmt.Sprintf("%d changes (%s and others)", len(muts), what)
	}
	return fmt.Errorf("policy: stopped waiting for the write of %s, which may or may not have been applied: %w", what, err)
}

// writeBatch writes one batch of changes and returns the outcome of each.
func (s *Store) writeBatch(batch []*request) []error {
	ctx, stop := batchContext(batch)
	defer stop()
	return s.cycle(ctx, batch, true)
}

// batchContext returns a context that carries the values of the first
// caller's context and ends when every caller's context has ended.
func batchContext(batch []*request) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(batch[0].ctx))
	left := int64(len(batch))
	stops := make([]func() bool, len(batch))
	for i, r := range batch {
		stops[i] = context.AfterFunc(r.ctx, func() {
			if atomic.AddInt64(&left, -1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// cycle reads, applies the batch and writes, again after each 412 up to
// the attempt limit. It returns the outcome of each request. With isolate,
// a rejected batch of several changes is retried one change at a time.
func (s *Store) cycle(ctx context.Context, batch []*request, isolate bool) []error {
	errs := make([]error, len(batch))
	fail := func(idx []int, err error) []error {
		for _, i := range idx {
			errs[i] = err
		}
		return errs
	}
	all := make([]int, len(batch))
	for i := range all {
		all[i] = i
	}
	for attempt := 1; ; attempt++ {
		c, err := s.get(ctx, false)
		if err != nil {
			return fail(all, err)
		}
		base, err := c.document()
		if err != nil {
			return fail(all, err)
		}
		doc, applied := s.made(c, batch)
		if doc == nil {
			doc, applied = applyRequests(base, batch, errs)
		}
		out := doc.Bytes()
		if bytes.Equal(out, c.snap.HuJSON) {
			return errs
		}
		if err := checkSize(out, c.snap.HuJSON, s.maxSize); err != nil {
			if isolate && len(applied) > 1 {
				return s.isolate(ctx, batch, applied, errs, err)
			}
			return fail(applied, err)
		}
		if c.snap.ETag == "" {
			// Without an ETag the write would be unconditional and could
			// overwrite someone else's change unseen.
			return fail(applied, errors.New("policy: the server returned the policy file without an ETag, so qtail cannot write it safely (the write would overwrite any concurrent change); nothing was written"))
		}
		etag, err := s.backend.Set(ctx, out, c.snap.ETag)
		if err == nil {
			s.log(ctx, "policy written", map[string]any{"changes": len(applied), "attempt": attempt, "bytes": len(out)})
			s.replace(c, Snapshot{HuJSON: out, ETag: etag}, doc)
			return errs
		}
		if IsPreconditionFailed(err) {
			s.drop(c)
			if attempt >= s.attempts {
				s.log(ctx, "policy kept changing: giving up", map[string]any{"attempts": attempt})
				return fail(applied, &ContentionError{Attempts: attempt, Err: err})
			}
			d := s.retry.Backoff(attempt)
			s.log(ctx, "policy changed since it was read (412): reading it again and retrying", map[string]any{"attempt": attempt, "wait_ms": d.Milliseconds()})
			if werr := s.retry.Wait(ctx, d); werr != nil {
				return fail(applied, fmt.Errorf("policy: waiting to retry the write: %w", werr))
			}
			continue
		}
		if !IsRejected(err) {
			// The write may or may not have happened: forget the copy.
			s.drop(c)
			return fail(applied, fmt.Errorf("policy: writing the policy file: %w", err))
		}
		if isolate && len(applied) > 1 {
			return s.isolate(ctx, batch, applied, errs, err)
		}
		var keys []policyfile.Key
		for _, i := range applied {
			for _, m := range batch[i].muts {
				keys = append(keys, m.Key)
			}
		}
		return fail(applied, &RejectedError{Keys: keys, Err: err})
	}
}

// made returns the document that the Planner made of c and exactly the
// changes of batch, in order, when it made one, and the indexes of the
// requests applied: all of them. The plan of a process that then applies
// it checked the same changes on the same snapshot.
func (s *Store) made(c *cached, batch []*request) (*policyfile.Document, []int) {
	if s.premade == nil {
		return nil, nil
	}
	base, seq, doc := s.premade()
	if doc == nil || base != c {
		return nil, nil
	}
	all := make([]int, len(batch))
	for i, r := range batch {
		all[i] = i
		for _, m := range r.muts {
			if len(seq) == 0 || !sameMutation(seq[0], m) {
				return nil, nil
			}
			seq = seq[1:]
		}
	}
	if len(seq) > 0 {
		return nil, nil
	}
	return doc, all
}

// sameMutation reports whether a and b are the same change.
func sameMutation(a, b policyfile.Mutation) bool {
	return a.Key == b.Key && a.Delete == b.Delete && a.Overwrite == b.Overwrite && bytes.Equal(a.Value, b.Value)
}

// applyRequests applies the requests of batch, in order, to a copy of
// base, each all or nothing, sets errs[i] to the outcome of batch[i], and
// returns the copy and the indexes of the requests applied.
func applyRequests(base *policyfile.Document, batch []*request, errs []error) (*policyfile.Document, []int) {
	doc := base.Clone()
	var applied []int
	for i, r := range batch {
		if errs[i] = applyAll(doc, r.muts); errs[i] != nil {
			if len(r.muts) > 1 {
				// Some of r's mutations may have applied: start again
				// from base with the requests applied so far.
				doc = base.Clone()
				for _, j := range applied {
					_ = applyAll(doc, batch[j].muts)
				}
			}
			continue
		}
		applied = append(applied, i)
	}
	return doc, applied
}

// applyAll applies muts to doc in order and stops at the first error.
func applyAll(doc *policyfile.Document, muts []policyfile.Mutation) error {
	for _, m := range muts {
		if err := doc.Apply(m); err != nil {
			return err
		}
	}
	return nil
}

// isolate writes the applied changes of a batch that was refused one at a
// time, so that only the culprit fails.
func (s *Store) isolate(ctx context.Context, batch []*request, applied []int, errs []error, cause error) []error {
	s.log(ctx, "policy write refused: writing its changes one at a time to find the culprit",
		map[string]any{"changes": len(applied), "error": cause.Error()})
	for _, i := range applied {
		errs[i] = s.cycle(ctx, batch[i:i+1], false)[0]
	}
	return errs
}

// get returns the kept copy, reading it when there is none (or, with
// force, in any case). Concurrent readers share one Backend.Get.
func (s *Store) get(ctx context.Context, force bool) (*cached, error) {
	s.mu.Lock()
	if force {
		s.gen++
		s.current = nil
	}
	for {
		if c := s.current; c != nil {
			s.mu.Unlock()
			return c, nil
		}
		l := s.loading
		mine := l == nil || l.gen != s.gen
		if mine {
			l = &load{gen: s.gen, done: make(chan struct{})}
			s.loading = l
		}
		s.mu.Unlock()
		if mine {
			s.read(ctx, l)
		}
		select {
		case <-l.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if l.err == nil {
			return l.res, nil
		}
		if mine || ctx.Err() != nil || !isContextError(l.err) {
			return nil, l.err
		}
		// The reader that did the Get gave up; this caller has not.
		s.mu.Lock()
	}
}

// read does the Backend.Get of l and keeps its result unless the copy was
// replaced or dropped meanwhile.
func (s *Store) read(ctx context.Context, l *load) {
	snap, err := s.backend.Get(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loading == l {
		s.loading = nil
	}
	if err != nil {
		l.err = fmt.Errorf("policy: reading the policy file: %w", err)
	} else {
		l.res = &cached{snap: snap}
		if l.gen == s.gen && s.current == nil {
			s.current = l.res
		}
	}
	close(l.done)
}

// replace keeps the snapshot just written, and doc, the document whose
// bytes it holds.
func (s *Store) replace(base *cached, snap Snapshot, doc *policyfile.Document) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	if snap.ETag == "" {
		s.current = nil
		return
	}
	if s.current == base || s.current == nil {
		s.current = &cached{snap: snap, doc: doc}
		return
	}
	// A refresh replaced the copy during the write: which of the two is
	// newer is unknown, so keep neither.
	s.current = nil
}

// drop forgets the copy a failed write was based on.
func (s *Store) drop(base *cached) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == base {
		s.gen++
		s.current = nil
	}
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// ContentionError reports that every attempt to write the policy file was
// refused with HTTP 412 because the file kept changing between the read
// and the write. Nothing of the batch was written.
type ContentionError struct {
	// Attempts is the number of writes tried.
	Attempts int
	// Err is the last refusal.
	Err error
}

// Error says how many attempts were made and why they failed.
func (e *ContentionError) Error() string {
	return fmt.Sprintf("policy: gave up after %d attempts to write the policy file: it kept changing underneath "+
		"(each write was refused with HTTP 412 because the file had changed since it was read; last error: %v); "+
		"nothing was written, run the apply again", e.Attempts, e.Err)
}

// Unwrap returns the last refusal.
func (e *ContentionError) Unwrap() error { return e.Err }

// RejectedError reports that the server refused the policy file that
// contained a fragment (HTTP 400: an invalid policy or a failing test).
type RejectedError struct {
	// Keys are the fragments of the refused write.
	Keys []policyfile.Key
	// Err is the server's error, with its message.
	Err error
}

// Error names the fragments and gives the server's message.
func (e *RejectedError) Error() string {
	names := make([]string, len(e.Keys))
	for i, k := range e.Keys {
		names[i] = k.String()
	}
	return fmt.Sprintf("policy: the server rejected the policy file with %s: %v", strings.Join(names, ", "), e.Err)
}

// Unwrap returns the server's error.
func (e *RejectedError) Unwrap() error { return e.Err }
