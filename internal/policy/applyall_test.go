package policy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// A change of several mutations is written whole or not at all, and its
// failure does not fail the changes batched with it.
func TestStoreApplyAllIsAllOrNothing(t *testing.T) {
	b := newMemBackend(basePolicy)
	s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: 30 * time.Millisecond, Log: testLog(t)})
	grant := func(name string) policyfile.Mutation {
		return policyfile.Mutation{Key: policyfile.Key{Kind: policyfile.KindGrant, Name: name}, Value: grantValue(name)}
	}
	set := []policyfile.Mutation{grant("set-a"), grant("set-b"), grant("set-c")}
	// The second mutation conflicts with a tag owner written by hand.
	broken := []policyfile.Mutation{grant("broken-a"), {Key: policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:db"}, Value: raw(`["someone@example.com"]`)}, grant("broken-c")}
	var wg sync.WaitGroup
	var setErr, brokenErr, aloneErr error
	wg.Add(3)
	go func() { defer wg.Done(); setErr = s.ApplyAll(context.Background(), set[0].Key, set) }()
	go func() { defer wg.Done(); brokenErr = s.ApplyAll(context.Background(), broken[0].Key, broken) }()
	go func() { defer wg.Done(); aloneErr = s.Apply(context.Background(), grant("alone")) }()
	wg.Wait()
	var conflict *policyfile.UnmanagedConflictError
	if setErr != nil || aloneErr != nil || !errors.As(brokenErr, &conflict) {
		t.Fatalf("set: %v, alone: %v, broken: %v (want only the broken change to fail, on its tag owner)", setErr, aloneErr, brokenErr)
	}
	doc := mustParse(t, b.bytes())
	for _, name := range []string{"set-a", "set-b", "set-c", "alone"} {
		if f := doc.Get(policyfile.Key{Kind: policyfile.KindGrant, Name: name}); !f.Found || !f.Marked {
			t.Errorf("%s was not written", name)
		}
	}
	for _, name := range []string{"broken-a", "broken-c"} {
		if f := doc.Get(policyfile.Key{Kind: policyfile.KindGrant, Name: name}); f.Found {
			t.Errorf("%s of the refused change was written", name)
		}
	}
	if c := b.counts(); c.writes != 1 {
		t.Errorf("%d writes, want the three changes in 1", c.writes)
	}
	if err := s.ApplyAll(context.Background(), policyfile.Key{}, nil); err != nil {
		t.Errorf("an empty change: %v", err)
	}
}

// Blame finds the changes at fault among many by halves, with fewer
// validations than changes, and plans none of them.
func TestPlannerBlameBisects(t *testing.T) {
	b := newMemBackend("{\n\t\"grants\": [],\n}\n")
	b.reject = func(body []byte) string {
		switch {
		case strings.Contains(string(body), "bad-1"):
			return `dst="bad-1": invalid destination`
		case strings.Contains(string(body), "bad-2"):
			return `dst="bad-2": invalid destination`
		}
		return ""
	}
	p := NewPlanner(NewStore(b, StoreOptions{}))
	var muts []policyfile.Mutation
	for i := range 32 {
		dst := "100.64.0.1"
		switch i {
		case 5:
			dst = "bad-1"
		case 23:
			dst = "bad-2"
		}
		muts = append(muts, grantPut(fmt.Sprintf("g%02d", i), dst)...)
	}
	ctx := context.Background()
	claim := muts[0].Key
	if err := p.CheckAll(ctx, claim, muts); !IsRejected(err) {
		t.Fatalf("CheckAll of 32 changes with two bad ones: %v, want a rejection", err)
	}
	before := b.counts().validates
	errs := p.Blame(ctx, muts)
	for i, err := range errs {
		bad := i == 5 || i == 23
		if bad != (err != nil) || bad && !IsRejected(err) {
			t.Errorf("change %d: %v (at fault: %v)", i, err, bad)
		}
	}
	if !strings.Contains(errs[5].Error(), "bad-1") || !strings.Contains(errs[23].Error(), "bad-2") {
		t.Errorf("each culprit gets its own message: %v / %v", errs[5], errs[23])
	}
	// Two culprits among 32: two paths of 5 halvings, both halves
	// validated at each step: at most 2*2*5 validations, well under 32.
	if n := b.counts().validates - before; n > 20 {
		t.Errorf("%d validations to blame 2 changes of 32, want at most 20", n)
	}
	if planned := p.Planned(); len(planned) != 0 {
		t.Errorf("Blame planned %d changes, want none", len(planned))
	}
}
