package policy

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// rejectBad refuses a policy file that mentions "bad", as a server refuses
// an invalid destination.
func rejectBad(body []byte) string {
	if strings.Contains(string(body), "bad") {
		return `dst="bad": invalid destination`
	}
	return ""
}

func grantPut(name, dst string) []policyfile.Mutation {
	return []policyfile.Mutation{{Key: policyfile.Key{Kind: policyfile.KindGrant, Name: name},
		Value: json.RawMessage(`{"src":["*"],"dst":["` + dst + `"],"ip":["*"]}`)}}
}

// checkAll runs one check per name at once and returns their outcomes.
func checkAll(p *Planner, names []string, dst func(i int) string) []error {
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.Check(context.Background(), grantPut(name, dst(i)))
		}()
	}
	wg.Wait()
	return errs
}

func TestPlannerBatchesAndIsolates(t *testing.T) {
	b := newMemBackend("{\n\t\"grants\": [],\n}\n")
	b.reject = rejectBad
	p := NewPlanner(NewStore(b, StoreOptions{}))
	ctx := context.Background()

	// Ten good changes at once: one read, and far fewer validations than
	// changes.
	names := []string{"ga", "gb", "gc", "gd", "ge", "gf", "gg", "gh", "gi", "gj"}
	for i, err := range checkAll(p, names, func(int) string { return "100.64.0.1" }) {
		if err != nil {
			t.Errorf("check %d: %v", i, err)
		}
	}
	c := b.counts()
	if c.gets != 1 {
		t.Errorf("%d policy reads, want 1", c.gets)
	}
	if c.validates >= 10 {
		t.Errorf("%d validations for 10 changes checked at once, want them batched", c.validates)
	}
	if n := len(p.Planned()); n != 10 {
		t.Errorf("%d changes recorded as planned, want 10", n)
	}

	// A bad change among good ones fails alone, and is not planned.
	errs := checkAll(p, []string{"ha", "hb", "hc", "hd", "he"}, func(i int) string {
		if i == 3 {
			return "bad"
		}
		return "100.64.0.2"
	})
	for i, err := range errs {
		if (err != nil) != (i == 3) {
			t.Errorf("check %d: %v", i, err)
		}
	}
	if !IsRejected(errs[3]) || !strings.Contains(errs[3].Error(), "invalid destination") {
		t.Errorf("want the server's rejection of the bad change, got %v", errs[3])
	}
	if n := len(p.Planned()); n != 14 {
		t.Errorf("%d changes recorded as planned, want 14", n)
	}

	// A later change is validated together with the planned ones.
	if err := p.Check(ctx, grantPut("ga", "bad")); err == nil {
		t.Error("want a rejection of a change to a planned grant")
	}
	if c := b.counts(); c.writes != 0 {
		t.Errorf("checks wrote the policy file %d times", c.writes)
	}
	planned, err := p.PlannedPolicy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(planned), "// qtail:grant:he") || strings.Contains(string(planned), "// qtail:grant:hd") {
		t.Errorf("the planned policy lacks a planned grant or holds the refused one:\n%s", planned)
	}
}

// A change that cannot be checked (the server does not answer) is reported
// as such, and planned all the same.
func TestPlannerPlansAChangeItCannotCheck(t *testing.T) {
	b := newMemBackend("{\n\t\"grants\": [],\n}\n")
	b.reject = func([]byte) string { return "" }
	store := NewStore(unreachableValidate{b}, StoreOptions{})
	p := NewPlanner(store)
	err := p.Check(context.Background(), grantPut("g", "100.64.0.1"))
	var unchecked *ValidateCallError
	if !errors.As(err, &unchecked) || IsRejected(err) {
		t.Fatalf("err = %v, want a *ValidateCallError", err)
	}
	if n := len(p.Planned()); n != 1 {
		t.Errorf("%d changes planned, want the unchecked one", n)
	}
}

// unreachableValidate is a backend whose validation never gets an answer.
type unreachableValidate struct{ *memBackend }

func (unreachableValidate) Validate(context.Context, []byte) error {
	return errors.New("dial tcp: connection refused")
}

func TestPlannerOwnedElsewhere(t *testing.T) {
	b := newMemBackend("{\n\t\"grants\": [\n\t\t// qtail:grant:theirs\n\t\t{\"src\": [\"*\"], \"dst\": [\"tag:x\"], \"ip\": [\"*\"]},\n" +
		"\t\t// qtail:grant:owned#p7mv2rt4ha\n\t\t{\"src\": [\"*\"], \"dst\": [\"tag:y\"], \"ip\": [\"*\"]},\n\t],\n}\n")
	p := NewPlanner(NewStore(b, StoreOptions{}))
	ctx := context.Background()
	if err := p.Check(ctx, grantPut("mine", "100.64.0.1")); err != nil {
		t.Fatal(err)
	}
	grant := func(name, owner string) policyfile.Key {
		return policyfile.Key{Kind: policyfile.KindGrant, Name: name, Owner: owner}
	}
	if c := p.OwnedElsewhere(ctx, grant("mine", "")); c != nil {
		t.Errorf("a key only planned, not in the file: %+v, want no conflict (claims catch it)", c)
	}
	// Whatever the content: one marked entry, whose owner is not known
	// or is another one, is someone else's.
	c := p.OwnedElsewhere(ctx, grant("theirs", ""))
	if c == nil || c.Owner != "" || !policyfile.SameJSON(c.Existing, json.RawMessage(`{"src":["*"],"dst":["tag:x"],"ip":["*"]}`)) {
		t.Errorf("an entry marked for no owner: %+v, want a conflict with the existing value and no owner", c)
	}
	if c := p.OwnedElsewhere(ctx, grant("theirs", "k3x9q2mfa7")); c == nil {
		t.Error("an entry marked for no owner, created with an owner: no conflict")
	}
	if c := p.OwnedElsewhere(ctx, grant("owned", "")); c == nil || c.Owner != "p7mv2rt4ha" {
		t.Errorf("an entry marked for an owner: %+v, want a conflict that names it", c)
	}
	if c := p.OwnedElsewhere(ctx, grant("owned", "k3x9q2mfa7")); c == nil || c.Owner != "p7mv2rt4ha" {
		t.Errorf("an entry marked for another owner: %+v, want a conflict that names it", c)
	}
	if c := p.OwnedElsewhere(ctx, grant("owned", "p7mv2rt4ha")); c != nil {
		t.Errorf("an entry marked for the key's own owner: %+v, want no conflict", c)
	}
	if c := p.OwnedElsewhere(ctx, grant("free", "")); c != nil {
		t.Errorf("a free key: %+v, want no conflict", c)
	}
	// A resource of this plan that gives the entry up releases it.
	p.Record(policyfile.Mutation{Key: grant("theirs", "k3x9q2mfa7"), Delete: true})
	if c := p.OwnedElsewhere(ctx, grant("theirs", "")); c != nil {
		t.Errorf("an entry this plan removes: %+v, want no conflict", c)
	}
}

func TestPlannerWarnsAboutAllowAllOnce(t *testing.T) {
	const withRule = "{\n\t\"grants\": [\n\t\t{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"*\"]},\n\t],\n}\n"
	ctx := context.Background()
	p := NewPlanner(NewStore(newMemBackend(withRule), StoreOptions{}))
	if !p.WarnAllowAll(ctx) {
		t.Error("no warning while the rule is in the policy file")
	}
	if p.WarnAllowAll(ctx) {
		t.Error("a second warning in the same plan")
	}

	p = NewPlanner(NewStore(newMemBackend(withRule), StoreOptions{}))
	p.Record(policyfile.Mutation{Key: policyfile.AllowAllKey(), Delete: true})
	if p.WarnAllowAll(ctx) {
		t.Error("a warning although the plan removes the rule")
	}

	p = NewPlanner(NewStore(newMemBackend(basePolicy), StoreOptions{}))
	if p.WarnAllowAll(ctx) {
		t.Error("a warning without the rule")
	}
}

// recordingValidate is a backend whose validation runs during, before its
// answer, while a removal is recorded in the Planner.
type recordingValidate struct {
	*memBackend
	during func()
}

func (r recordingValidate) Validate(ctx context.Context, body []byte) error {
	if r.during != nil {
		r.during()
	}
	return r.memBackend.Validate(ctx, body)
}

// The copy that a batch validated becomes the policy file as planned; a
// change recorded while it was validated is kept all the same, and the
// planned file is the one that applying the planned changes in order to
// the file read gives.
func TestPlannerPlannedPolicyAfterBatches(t *testing.T) {
	const start = "{\n\t\"grants\": [\n\t\t// qtail:grant:old\n\t\t{\"src\": [\"*\"], \"dst\": [\"tag:old\"], \"ip\": [\"*\"]},\n\t],\n}\n"
	b := newMemBackend(start)
	b.reject = rejectBad
	rv := recordingValidate{memBackend: b}
	p := NewPlanner(NewStore(&rv, StoreOptions{}))
	ctx := context.Background()
	oldKey := policyfile.Key{Kind: policyfile.KindGrant, Name: "old"}

	for _, step := range []struct {
		name    string
		muts    []policyfile.Mutation
		during  func()
		refused bool
		want    []string
		absent  []string
	}{
		{name: "a grant checked alone", muts: grantPut("a", "100.64.0.1"), want: []string{"qtail:grant:a", "qtail:grant:old"}},
		{name: "a removal recorded during the validation", muts: grantPut("b", "100.64.0.2"),
			during: func() { p.Record(policyfile.Mutation{Key: oldKey, Delete: true}) },
			want:   []string{"qtail:grant:a", "qtail:grant:b"}, absent: []string{"qtail:grant:old", "tag:old"}},
		{name: "a refused grant", muts: grantPut("c", "bad"), refused: true, want: []string{"qtail:grant:b"}, absent: []string{"qtail:grant:c"}},
		{name: "a grant after the refused one", muts: grantPut("d", "100.64.0.4"), want: []string{"qtail:grant:d"}, absent: []string{"qtail:grant:c", "qtail:grant:old"}},
	} {
		rv.during = step.during
		err := p.Check(ctx, step.muts)
		if (err != nil) != step.refused {
			t.Errorf("%s: check: %v", step.name, err)
		}
		got, err := p.PlannedPolicy(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range step.want {
			if !strings.Contains(string(got), w) {
				t.Errorf("%s: the planned policy lacks %q:\n%s", step.name, w, got)
			}
		}
		for _, a := range step.absent {
			if strings.Contains(string(got), a) {
				t.Errorf("%s: the planned policy holds %q:\n%s", step.name, a, got)
			}
		}
		replay := mustParse(t, []byte(start))
		for _, m := range p.Planned() {
			_ = replay.Apply(m)
		}
		if string(replay.Bytes()) != string(got) {
			t.Errorf("%s: the planned policy is not the planned changes applied in order:\n got %s\nwant %s", step.name, got, replay.Bytes())
		}
	}
}

// A write of exactly the changes that the plan checked, on the snapshot it
// checked them on, writes the document the plan made; any other write
// makes its own.
func TestStoreWritesThePlannedDocument(t *testing.T) {
	ctx := context.Background()
	b := newMemBackend("{\n\t\"grants\": [],\n}\n")
	store := NewStore(b, StoreOptions{Quiet: -1})
	p := NewPlanner(store)
	a, bb := grantPut("a", "100.64.0.1"), grantPut("b", "100.64.0.2")
	if err := p.CheckAll(ctx, a[0].Key, append(append([]policyfile.Mutation{}, a...), bb...)); err != nil {
		t.Fatal(err)
	}
	c, err := store.get(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	planned, err := p.PlannedPolicy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := func(muts ...[]policyfile.Mutation) []*request {
		var out []*request
		for _, m := range muts {
			out = append(out, &request{ctx: ctx, muts: m})
		}
		return out
	}
	changed := grantPut("b", "100.64.0.9")
	deleted := []policyfile.Mutation{{Key: bb[0].Key, Delete: true}}
	for _, tc := range []struct {
		name  string
		base  *cached
		batch []*request
		made  bool
	}{
		{"the same changes in one request", c, req(append(append([]policyfile.Mutation{}, a...), bb...)), true},
		{"the same changes in two requests", c, req(a, bb), true},
		{"another order", c, req(bb, a), false},
		{"fewer changes", c, req(a), false},
		{"more changes", c, req(a, bb, grantPut("c", "100.64.0.3")), false},
		{"another value", c, req(a, changed), false},
		{"a delete instead", c, req(a, deleted), false},
		{"another snapshot", &cached{snap: c.snap}, req(a, bb), false},
	} {
		doc, applied := store.made(tc.base, tc.batch)
		if (doc != nil) != tc.made {
			t.Errorf("%s: made = %v, want %v", tc.name, doc != nil, tc.made)
			continue
		}
		if doc != nil && (string(doc.Bytes()) != string(planned) || len(applied) != len(tc.batch)) {
			t.Errorf("%s: the document made is not the planned one, or applied %v", tc.name, applied)
		}
	}
	if err := store.ApplyAll(ctx, a[0].Key, append(append([]policyfile.Mutation{}, a...), bb...)); err != nil {
		t.Fatal(err)
	}
	if got := string(b.bytes()); got != string(planned) {
		t.Errorf("the write wrote\n%s\nwant the planned file\n%s", got, planned)
	}

	// A change that could not be applied leaves no document to reuse.
	p2 := NewPlanner(NewStore(newMemBackend("{\n\t\"tagOwners\": {\"tag:x\": []},\n}\n"), StoreOptions{Quiet: -1}))
	conflict := policyfile.Mutation{Key: policyfile.Key{Kind: policyfile.KindTagOwner, Name: "tag:x"}, Value: json.RawMessage(`["a@example.com"]`)}
	p2.Record(conflict)
	if _, err := p2.PlannedPolicy(ctx); err != nil {
		t.Fatal(err)
	}
	if base, _, doc := p2.premade(); base != nil || doc != nil {
		t.Error("a planned document with a change that did not apply is offered for reuse")
	}
	p3 := NewPlanner(NewStore(newMemBackend("{\n\t\"tagOwners\": {\"tag:x\": []},\n}\n"), StoreOptions{Quiet: -1}))
	if _, err := p3.PlannedPolicy(ctx); err != nil {
		t.Fatal(err)
	}
	if base, _, doc := p3.premade(); base == nil || doc == nil {
		t.Error("the planned document without changes is not offered")
	}
	p3.Record(conflict)
	if base, _, doc := p3.premade(); base != nil || doc != nil {
		t.Error("a planned document with a change recorded that did not apply is offered for reuse")
	}
}

// bodyRecorder is a backend that keeps the bodies it was asked to
// validate.
type bodyRecorder struct {
	*memBackend
	mu     sync.Mutex
	bodies []string
}

func (r *bodyRecorder) Validate(ctx context.Context, body []byte) error {
	r.mu.Lock()
	r.bodies = append(r.bodies, string(body))
	r.mu.Unlock()
	return r.memBackend.Validate(ctx, body)
}

// recordingPlanner is a Planner, batching after 300 ms of quiet, on a
// policy file of one marked grant, "old", whose backend keeps the bodies
// it validates.
func recordingPlanner() (*Planner, *bodyRecorder) {
	const start = "{\n\t\"grants\": [\n\t\t// qtail:grant:old\n\t\t{\"src\": [\"*\"], \"dst\": [\"tag:old\"], \"ip\": [\"*\"]},\n\t],\n}\n"
	b := &bodyRecorder{memBackend: newMemBackend(start)}
	return NewPlanner(NewStore(b, StoreOptions{Quiet: 300 * time.Millisecond, MaxWait: time.Second})), b
}

// A check validates the policy file as planned when its batch starts, with
// its changes: the trial document made while it waited serves only if
// nothing was planned meanwhile.
func TestPlannerValidatesWhatIsPlannedWhenTheBatchStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, b := recordingPlanner()
		ctx := context.Background()
		check := func(name string) chan error {
			done := make(chan error, 1)
			go func() { done <- p.Check(ctx, grantPut(name, "100.64.0.1")) }()
			return done
		}
		// Alone: the document made while waiting is validated.
		if err := <-check("a"); err != nil {
			t.Fatal(err)
		}
		// A removal planned while the next check waits for its batch (for
		// another resource on its way) is in the document validated.
		other := policyfile.Key{Kind: policyfile.KindGrant, Name: "other"}
		p.Expect(ctx, other)
		done := check("b")
		pause(100 * time.Millisecond)
		p.Record(policyfile.Mutation{Key: policyfile.Key{Kind: policyfile.KindGrant, Name: "old"}, Delete: true})
		p.Forget(other, false)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		b.mu.Lock()
		bodies := slices.Clone(b.bodies)
		b.mu.Unlock()
		if len(bodies) != 2 {
			t.Fatalf("%d validations, want 2", len(bodies))
		}
		if !strings.Contains(bodies[0], "qtail:grant:a") || !strings.Contains(bodies[0], "tag:old") {
			t.Errorf("first validation: %s", bodies[0])
		}
		if !strings.Contains(bodies[1], "qtail:grant:b") || strings.Contains(bodies[1], "tag:old") {
			t.Errorf("the second validation did not see the removal planned while it waited:\n%s", bodies[1])
		}
		planned, err := p.PlannedPolicy(ctx)
		if err != nil || string(planned) != bodies[1] {
			t.Errorf("the planned policy is not the one validated last: %v\n%s", err, planned)
		}
	})
}

// The owner that a process draws for a fragment it creates is drawn once:
// the check of the plan and the write of the apply make the same marker.
// Each fragment gets its own, whatever owner its key carries.
func TestPlannerOwnerIsDrawnOncePerFragment(t *testing.T) {
	p := NewPlanner(NewStore(newMemBackend("{}\n"), StoreOptions{Quiet: -1}))
	a := policyfile.Key{Kind: policyfile.KindGrant, Name: "a"}
	first := p.Owner(a)
	if first == "" {
		t.Fatal("no owner drawn")
	}
	withOwner := a
	withOwner.Owner = "someone-else"
	if got := p.Owner(withOwner); got != first {
		t.Errorf("the owner of a again is %q, want %q", got, first)
	}
	seen := map[string]policyfile.Key{first: a}
	for _, k := range []policyfile.Key{
		{Kind: policyfile.KindGrant, Name: "b"},
		{Kind: policyfile.KindTagOwner, Name: "a"},
	} {
		o := p.Owner(k)
		if other, dup := seen[o]; dup {
			t.Errorf("%v and %v share the owner %q", k, other, o)
		}
		seen[o] = k
	}
	if other := NewPlanner(p.store).Owner(a); other == first {
		t.Error("another process drew the same owner for a")
	}
}

// A trial document made while a check waited does not serve once a change
// was planned and the policy file read again meanwhile, even though the
// document as planned was then made again from the new copy.
func TestPlannerDropsATrialMadeBeforeTheFileWasReadAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, b := recordingPlanner()
		ctx := context.Background()
		if err := p.Check(ctx, grantPut("a", "100.64.0.1")); err != nil {
			t.Fatal(err)
		}
		other := policyfile.Key{Kind: policyfile.KindGrant, Name: "other"}
		p.Expect(ctx, other)
		done := make(chan error, 1)
		go func() { done <- p.Check(ctx, grantPut("b", "100.64.0.2")) }()
		pause(100 * time.Millisecond)
		p.Record(policyfile.Mutation{Key: policyfile.Key{Kind: policyfile.KindGrant, Name: "old"}, Delete: true})
		if _, err := p.store.get(ctx, true); err != nil {
			t.Fatal(err)
		}
		if _, err := p.PlannedPolicy(ctx); err != nil {
			t.Fatal(err)
		}
		p.Forget(other, false)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		b.mu.Lock()
		last := b.bodies[len(b.bodies)-1]
		b.mu.Unlock()
		if !strings.Contains(last, "qtail:grant:b") || strings.Contains(last, "tag:old") {
			t.Errorf("the validation of b did not see the removal planned while it waited:\n%s", last)
		}
		planned, err := p.PlannedPolicy(ctx)
		if err != nil || string(planned) != last || !strings.Contains(last, "qtail:grant:a") {
			t.Errorf("the planned policy is not the one validated last, with a and b: %v\n%s", err, planned)
		}
	})
}
