package policy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

func TestPlannerOrderStaysBounded(t *testing.T) {
	p := NewPlanner(NewStore(newMemBackend("{}"), StoreOptions{}))
	a, b := grantPut("a", "x")[0], grantPut("b", "y")[0]
	for i := range 2*2 + 64 {
		if i%2 == 0 {
			p.Record(a)
		} else {
			p.Record(b)
		}
	}
	// Two changes planned, 68 recorded: the list is kept as it is.
	if n := len(p.order); n != 68 {
		t.Errorf("%d entries in the order list after 68 records, want 68", n)
	}
	p.Record(a) // 69 > 2*2+64: only the latest record of each key stays
	if n := len(p.order); n != 2 {
		t.Errorf("%d entries in the order list after compaction, want 2", n)
	}
	got := p.Planned()
	if len(got) != 2 || got[0].Key != b.Key || got[1].Key != a.Key {
		t.Errorf("Planned = %+v, want b then a", got)
	}
	p.Record(b)
	if got := p.Planned(); len(got) != 2 || got[0].Key != a.Key || got[1].Key != b.Key {
		t.Errorf("Planned = %+v, want a then b", got)
	}
}

func TestPlannedPolicyFollowsTheStoreCopy(t *testing.T) {
	b := newMemBackend("{\n\t\"grants\": [],\n}\n")
	s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3})
	p := NewPlanner(s)
	ctx := context.Background()
	p.Record(grantPut("a", "x")...)
	out, err := p.PlannedPolicy(ctx)
	if err != nil || !strings.Contains(string(out), "qtail:grant:a") {
		t.Fatalf("PlannedPolicy = %s, %v", out, err)
	}
	// A change recorded after the planned document was built is in it.
	p.Record(grantPut("b", "y")...)
	out, _ = p.PlannedPolicy(ctx)
	if !strings.Contains(string(out), "qtail:grant:b") {
		t.Errorf("PlannedPolicy lacks a later record:\n%s", out)
	}
	// A new copy of the file is the new base of the planned document.
	b.edit()
	if _, err := s.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	out, _ = p.PlannedPolicy(ctx)
	if !strings.Contains(string(out), "edited by hand, 1") || !strings.Contains(string(out), "qtail:grant:a") || !strings.Contains(string(out), "qtail:grant:b") {
		t.Errorf("PlannedPolicy after a refresh:\n%s", out)
	}
}

func TestPlannerClaims(t *testing.T) {
	p := NewPlanner(NewStore(newMemBackend("{}"), StoreOptions{}))
	first := policyfile.Key{Kind: policyfile.KindAutoApprover, Name: policyfile.ExitNodeName, Owner: "aaaaaaaaaa"}
	if c, taken := p.Claim(first, Claim{Who: "one"}); taken || c != (Claim{}) {
		t.Errorf("first claim: %+v, %v", c, taken)
	}
	// The same list under another owner is the same claim.
	if c, taken := p.Claim(policyfile.Key{Kind: policyfile.KindAutoApprover, Name: policyfile.ExitNodeName, Owner: "bbbbbbbbbb"}, Claim{Who: "two"}); !taken || c.Who != "one" {
		t.Errorf("second claim: %+v, %v", c, taken)
	}
	if _, taken := p.Claim(policyfile.RouteKey("10.0.0.0/8"), Claim{Who: "three"}); taken {
		t.Error("another list is taken")
	}
}

func TestPlannerCheckWhileApplying(t *testing.T) {
	b := newMemBackend("{\n\t\"grants\": [],\n}\n")
	b.reject = rejectBad
	s := NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: -1})
	p := NewPlanner(s)
	ctx := context.Background()
	if err := s.Put(ctx, policyfile.Key{Kind: policyfile.KindGrant, Name: "w"}, grantValue("w")); err != nil {
		t.Fatal(err)
	}
	// The process applies: a check records the change unchecked.
	if err := p.Check(ctx, grantPut("bad1", "bad")); err != nil {
		t.Errorf("Check while applying = %v, want the change recorded", err)
	}
	if c := b.counts(); c.validates != 0 {
		t.Errorf("%d validations while applying", c.validates)
	}
	if got := p.Planned(); len(got) != 1 || got[0].Key.Name != "bad1" {
		t.Errorf("Planned = %+v", got)
	}
}

func TestPlannerCheckOutcomes(t *testing.T) {
	b := newMemBackend("{\n\t\"grants\": [],\n}\n")
	b.reject = rejectBad
	p := NewPlanner(NewStore(b, StoreOptions{Retry: testRetry(3), ConflictAttempts: 3, Quiet: -1}))
	ctx := context.Background()
	if err := p.Check(ctx, nil); err != nil {
		t.Errorf("Check of nothing = %v", err)
	}
	err := p.Check(ctx, grantPut("one", "bad"))
	if !IsRejected(err) || !strings.Contains(err.Error(), "invalid destination") {
		t.Errorf("a rejected change: %v", err)
	}
	var vc *ValidateCallError
	if errors.As(err, &vc) {
		t.Errorf("a rejection is taken for a failed call: %v", err)
	}
	if got := p.Planned(); len(got) != 0 {
		t.Errorf("a rejected change is planned: %+v", got)
	}
	if err := p.Check(ctx, grantPut("two", "100.64.0.1")); err != nil {
		t.Fatal(err)
	}
	// A change that cannot be applied fails on its own, unchecked.
	err = p.Check(ctx, []policyfile.Mutation{{Key: policyfile.Key{Kind: policyfile.KindGrant, Name: "three"}, Value: raw(`[]`)}})
	if err == nil || IsRejected(err) {
		t.Errorf("an invalid value: %v", err)
	}
	// The empty check, "one" and "two" were validated; "three" never
	// reached the server.
	if c := b.counts(); c.validates != 3 {
		t.Errorf("%d validations, want 3", c.validates)
	}
	// A check whose context ends before its batch runs fails with a
	// *ValidateCallError.
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.Check(ended, grantPut("four", "x")); !errors.As(err, &vc) || !errors.Is(err, context.Canceled) {
		t.Errorf("a canceled check: %v", err)
	}
	if validateError(nil) != nil {
		t.Error("validateError(nil)")
	}
	tl := &TooLargeError{Size: 2, Before: 1, Limit: 1}
	if validateError(tl) != tl || !errors.As(validateError(errors.New("x")), &vc) {
		t.Error("validateError")
	}
}
