package policy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

func TestValidateCallErrorReadsAsItsCause(t *testing.T) {
	cause := errors.New("dial tcp: connection refused")
	var err error = &ValidateCallError{Err: cause}
	if err.Error() != cause.Error() || !errors.Is(err, cause) {
		t.Errorf("ValidateCallError = %q (wraps the cause: %t), want %q", err, errors.Is(err, cause), cause)
	}
}

func TestPlannerExpectHoldsTheChecksAndTheWrites(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// A fragment expected holds the batch of checks under way until it
		// is forgotten; Forget of a plan that changes nothing lets the
		// writes go too, Forget of a changing one keeps them waiting for
		// its write, at most maxWait.
		const maxWait = time.Second
		for _, changing := range []bool{false, true} {
			b := newMemBackend("{\n\t\"grants\": [],\n}\n")
			s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: 10 * time.Millisecond, MaxWait: maxWait})
			p := NewPlanner(s)
			ctx := context.Background()
			expected := policyfile.Key{Kind: policyfile.KindGrant, Name: "expected"}
			p.Expect(ctx, expected)
			go func() {
				pause(100 * time.Millisecond)
				p.Forget(expected, changing)
			}()
			start := time.Now()
			if err := p.Check(ctx, grantPut("checked", "100.64.0.1")); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took != 100*time.Millisecond {
				t.Errorf("changing %t: the check took %v, want 100ms, until the expected fragment was forgotten", changing, took)
			}
			start = time.Now()
			if err := s.Put(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "written"}, grantValue("written")); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			if changing && took < maxWait-100*time.Millisecond {
				t.Errorf("changing: the write took %v, want it held for the expected fragment's write until maxWait", took)
			}
			if !changing && took >= maxWait/2 {
				t.Errorf("not changing: the write took %v, want it not held", took)
			}
		}
	})
}

// unparsable is a policy file that is not HuJSON.
const unparsable = "{\n\t\"grants\": [\n"

func TestPlannerWithoutAPolicyFile(t *testing.T) {
	ctx := context.Background()
	for name, backend := range map[string]Backend{"unreadable": failingBackend{}, "unparsable": newMemBackend(unparsable)} {
		s := NewStore(backend, StoreOptions{Retry: testRetry(2), ConflictAttempts: 2, Quiet: -1})
		p := NewPlanner(s)
		if out, err := p.PlannedPolicy(ctx); err == nil {
			t.Errorf("%s: PlannedPolicy = %s, want an error", name, out)
		}
		if p.WarnAllowAll(ctx) {
			t.Errorf("%s: a warning about the allow-all rule of a file not read", name)
		}
		// A change that cannot be checked is planned all the same.
		err := p.Check(ctx, grantPut("g", "100.64.0.1"))
		var unchecked *ValidateCallError
		if !errors.As(err, &unchecked) {
			t.Errorf("%s: Check = %v, want a *ValidateCallError", name, err)
		}
		if got := p.Planned(); len(got) != 1 || got[0].Key.Name != "g" {
			t.Errorf("%s: Planned = %+v, want the unchecked change", name, got)
		}
		for i, err := range p.Blame(ctx, append(grantPut("a", "x"), grantPut("b", "y")...)) {
			if !errors.As(err, &unchecked) {
				t.Errorf("%s: Blame[%d] = %v, want a *ValidateCallError", name, i, err)
			}
		}
		failures := []TestFailure{{Src: "carol@example.com", Errors: []string{`address "tag:x:443": want: Drop, got: Accept`}}}
		if got := p.ExplainTests(ctx, grantPut("a", "x"), failures); got != nil {
			t.Errorf("%s: Planner.ExplainTests = %+v, want nil", name, got)
		}
		if got := s.ExplainTests(ctx, grantPut("a", "x"), failures); got != nil {
			t.Errorf("%s: Store.ExplainTests = %+v, want nil", name, got)
		}
	}
}

// gatedGet is a backend whose reads wait until gate is closed.
type gatedGet struct {
	*memBackend
	gate chan struct{}
}

func (g gatedGet) Get(ctx context.Context) (Snapshot, error) {
	<-g.gate
	return g.memBackend.Get(ctx)
}

func TestPlannerWarnsOnceAmongConcurrentCallers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Three callers ask while the policy file is being read: all find
		// the rule, one warns.
		const withRule = "{\n\t\"grants\": [\n\t\t{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"*\"]},\n\t],\n}\n"
		gate := make(chan struct{})
		p := NewPlanner(NewStore(gatedGet{newMemBackend(withRule), gate}, StoreOptions{}))
		var warned atomic.Int32
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if p.WarnAllowAll(context.Background()) {
					warned.Add(1)
				}
			}()
		}
		synctest.Wait()
		close(gate)
		wg.Wait()
		if n := warned.Load(); n != 1 {
			t.Errorf("%d warnings, want 1", n)
		}
	})
}

func TestPlannerOwnedElsewhereSharesAutoApprovers(t *testing.T) {
	doc := mustParse(t, []byte("{}"))
	theirs := policyfile.RouteKey("10.0.0.0/8")
	theirs.Owner = "aaaaaaaaaa"
	if err := doc.Apply(policyfile.Mutation{Key: theirs, Value: raw(`["tag:router"]`)}); err != nil {
		t.Fatal(err)
	}
	p := NewPlanner(NewStore(newMemBackend(string(doc.Bytes())), StoreOptions{}))
	for _, owner := range []string{"", "bbbbbbbbbb"} {
		mine := policyfile.RouteKey("10.0.0.0/8")
		mine.Owner = owner
		if c := p.OwnedElsewhere(context.Background(), mine); c != nil {
			t.Errorf("owner %q: %+v, want no conflict: the approvers of a route are shared", owner, c)
		}
	}
}

// recordedValidate is a memBackend whose validations answer with answer
// and are recorded.
type recordedValidate struct {
	*memBackend
	answer func(body []byte) error
	mu     sync.Mutex
	bodies []string
}

func (r *recordedValidate) Validate(_ context.Context, body []byte) error {
	r.mu.Lock()
	r.bodies = append(r.bodies, string(body))
	r.mu.Unlock()
	return r.answer(body)
}

func (r *recordedValidate) validated() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bodies...)
}

// checkInOrder runs the checks of muts at once, in one batch, in the
// order given, and returns their outcomes.
func checkInOrder(p *Planner, muts ...[]policyfile.Mutation) []error {
	errs := make([]error, len(muts))
	var wg sync.WaitGroup
	for i, m := range muts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.Check(context.Background(), m)
		}()
		// Each check is queued before the next one starts.
		synctest.Wait()
	}
	wg.Wait()
	return errs
}

func TestPlannerBatchLeavesOutAFailedCheck(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// The second check of the batch applies its first change, then
		// fails on its second: the batch is validated without either.
		b := &recordedValidate{memBackend: newMemBackend("{\n\t\"grants\": [],\n}\n"), answer: func([]byte) error { return nil }}
		p := NewPlanner(NewStore(b, StoreOptions{Quiet: 10 * time.Millisecond}))
		bad := append(grantPut("partial", "tag:partial"), policyfile.Mutation{Key: policyfile.Key{Kind: policyfile.KindGrant, Name: "broken"}, Value: raw(`[]`)})
		errs := checkInOrder(p, grantPut("good", "tag:good"), bad)
		if errs[0] != nil || errs[1] == nil || IsRejected(errs[1]) {
			t.Fatalf("outcomes %v, want the first to pass and the second to fail to apply", errs)
		}
		got := b.validated()
		if len(got) != 1 || !strings.Contains(got[0], "tag:good") || strings.Contains(got[0], "tag:partial") {
			t.Errorf("validated %q, want one file with the good change and nothing of the failed check", got)
		}
		if planned := p.Planned(); len(planned) != 1 || planned[0].Key.Name != "good" {
			t.Errorf("Planned = %+v, want the good change alone", planned)
		}
	})
}

func TestPlannerBatchThatCannotBeCheckedIsPlanned(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// The server does not answer the validation of a batch of two:
		// both changes are unchecked, and planned, after one attempt.
		b := &recordedValidate{memBackend: newMemBackend("{\n\t\"grants\": [],\n}\n"), answer: func([]byte) error { return errors.New("dial tcp: connection refused") }}
		p := NewPlanner(NewStore(b, StoreOptions{Quiet: 10 * time.Millisecond}))
		errs := checkInOrder(p, grantPut("a", "tag:a"), grantPut("b", "tag:b"))
		for i, err := range errs {
			var unchecked *ValidateCallError
			if !errors.As(err, &unchecked) || !strings.Contains(err.Error(), "connection refused") {
				t.Errorf("check %d: %v, want a *ValidateCallError", i, err)
			}
		}
		if n := len(b.validated()); n != 1 {
			t.Errorf("%d validations, want 1", n)
		}
		if n := len(p.Planned()); n != 2 {
			t.Errorf("%d changes planned, want both", n)
		}
	})
}

func TestPlannerBatchTooLargeTogetherIsIsolated(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Each change fits under MaxSize alone, not both together: each is
		// checked again on its own, and both pass.
		const base = "{\n\t\"grants\": [],\n}\n"
		probe := NewStore(newMemBackend(base), StoreOptions{})
		one, err := probe.Preview(context.Background(), grantPut("a", "tag:a")...)
		if err != nil {
			t.Fatal(err)
		}
		both, err := probe.Preview(context.Background(), append(grantPut("a", "tag:a"), grantPut("b", "tag:b")...)...)
		if err != nil {
			t.Fatal(err)
		}
		b := &recordedValidate{memBackend: newMemBackend(base), answer: func([]byte) error { return nil }}
		p := NewPlanner(NewStore(b, StoreOptions{Quiet: 10 * time.Millisecond, MaxSize: (len(one) + len(both)) / 2}))
		for i, err := range checkInOrder(p, grantPut("a", "tag:a"), grantPut("b", "tag:b")) {
			if err != nil {
				t.Errorf("check %d: %v, want it to pass on its own", i, err)
			}
		}
		if n := len(b.validated()); n != 2 {
			t.Errorf("%d validations, want one per change (the batch is refused for its size before the server)", n)
		}
		// The next change makes the planned file too large.
		err = p.Check(context.Background(), grantPut("c", "tag:c"))
		var tl *TooLargeError
		if !errors.As(err, &tl) || tl.Limit != (len(one)+len(both))/2 {
			t.Errorf("a third change: %v, want a *TooLargeError", err)
		}
	})
}

func TestPlannerBlameOutcomes(t *testing.T) {
	ctx := context.Background()
	b := &recordedValidate{memBackend: newMemBackend("{\n\t\"grants\": [],\n}\n")}
	b.answer = func(body []byte) error {
		if msg := rejectBad(body); msg != "" {
			return &httpError{400, msg}
		}
		return nil
	}
	p := NewPlanner(NewStore(b, StoreOptions{}))
	// One change: validated on its own.
	if errs := p.Blame(ctx, grantPut("bad1", "bad")); len(errs) != 1 || !IsRejected(errs[0]) {
		t.Errorf("Blame of one bad change = %v", errs)
	}
	if errs := p.Blame(ctx, grantPut("good1", "tag:good")); len(errs) != 1 || errs[0] != nil {
		t.Errorf("Blame of one good change = %v", errs)
	}
	// A change that does not apply fails with its own error.
	broken := policyfile.Mutation{Key: policyfile.Key{Kind: policyfile.KindGrant, Name: "broken"}, Value: raw(`[]`)}
	errs := p.Blame(ctx, append(grantPut("good2", "tag:good"), broken))
	if errs[0] != nil || errs[1] == nil || IsRejected(errs[1]) {
		t.Errorf("Blame = %v, want the broken change alone to fail, unvalidated", errs)
	}

	// The server cannot be asked: every change of a half shares the
	// failure, and the halves are not split further.
	down := &recordedValidate{memBackend: newMemBackend("{\n\t\"grants\": [],\n}\n"), answer: func([]byte) error { return errors.New("connection refused") }}
	p = NewPlanner(NewStore(down, StoreOptions{}))
	var muts []policyfile.Mutation
	for _, n := range []string{"a", "b", "c", "d"} {
		muts = append(muts, grantPut(n, "tag:"+n)...)
	}
	for i, err := range p.Blame(ctx, muts) {
		var unchecked *ValidateCallError
		if !errors.As(err, &unchecked) {
			t.Errorf("Blame[%d] = %v, want a *ValidateCallError", i, err)
		}
	}
	if n := len(down.validated()); n != 2 {
		t.Errorf("%d validations, want one per half", n)
	}
}

func TestPlannedPolicyIsThePlanAppliedInOrder(t *testing.T) {
	// A fragment planned again after the planned policy file was built
	// stays where the plan first put it, as applying the plan's changes
	// in order does.
	const base = "{\n\t\"grants\": [],\n}\n"
	ctx := context.Background()
	p := NewPlanner(NewStore(newMemBackend(base), StoreOptions{}))
	plan := [][]policyfile.Mutation{grantPut("a", "tag:a"), grantPut("b", "tag:b")}
	for _, m := range plan {
		p.Record(m...)
	}
	if _, err := p.PlannedPolicy(ctx); err != nil {
		t.Fatal(err)
	}
	again := []policyfile.Mutation{{Key: policyfile.Key{Kind: policyfile.KindGrant, Name: "a"}, Value: raw(`{"src":["*"],"dst":["tag:a2"],"ip":["*"]}`), Overwrite: true}}
	p.Record(again...)
	got, err := p.PlannedPolicy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := mustParse(t, []byte(base))
	for _, m := range append(plan, again) {
		if err := applyAll(want, m); err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != string(want.Bytes()) {
		t.Errorf("PlannedPolicy =\n%s\nwant\n%s", got, want.Bytes())
	}
}
