package policy

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/batch"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// Planner holds the fragment changes planned by one provider instance (one
// Terraform operation) and validates them against the policy file of a
// Store, with the server's Backend.Validate.
//
// Each change is checked together with the changes planned before it (a
// tag owner and the grant that uses its tag are valid only together), and
// concurrent checks share one validation: when the batch passes, every
// change of it passes; when the server rejects it, each change is validated
// again on its own, so that only the one at fault fails. A change is
// planned unless it is refused; one that could not be checked (the server
// unreachable) is planned too. Resources that depend on fragments (an
// operator on its tag owners) read the policy file as it will be through
// PlannedPolicy.
//
// The Planner keeps the policy file as planned, and each batch adds its
// changes to it, so that a check costs the same whatever the number of
// changes planned before it. Terraform plans each resource again just
// before it applies it: once the Store has written, the process is
// applying, and those checks plan their changes without asking the
// server, which checks them when they are written (and blames only the
// culprit as well).
//
// The writes themselves are gathered by the Store.
type Planner struct {
	store  *Store
	checks *batch.Batcher[*planCheck, error]

	mu sync.Mutex
	// planned are the changes that passed, one per key, in order: order
	// lists the keys, at the index planned gives them.
	planned map[policyfile.Key]plannedChange
	order   []policyfile.Key
	// doc is the policy file as planned: the store's copy base with the
	// planned changes applied, nil until needed.
	doc     *policyfile.Document
	docBase *cached
	// docGen counts the changes of doc: a copy taken at one generation
	// holds what doc holds as long as the generation is the same.
	docGen uint64
	// docSeq are the changes applied to the base, in order, to make doc,
	// and docClean whether every one of them applied (see premade).
	docSeq   []policyfile.Mutation
	docClean bool
	hasRule  map[string]bool // policyfile.HasAllowAll by policy ETag
	// warned is set once the plan has warned about the allow-all rule:
	// one warning per plan, not one per fragment.
	warned bool
	// claims are the fragments that the resources of the plan write, by
	// key without owner.
	claims map[policyfile.Key]Claim
	// released are the entries, by key without owner, whose removal this
	// plan records.
	released map[policyfile.Key]bool
	// owners are the owners drawn for the fragments that this process
	// creates, by key without owner (see Owner).
	owners map[policyfile.Key]string
}

// plannedChange is a planned change and its place in the order.
type plannedChange struct {
	mut policyfile.Mutation
	at  int
}

// planCheck is one queued check and the context of its caller.
type planCheck struct {
	ctx  context.Context
	muts []policyfile.Mutation
	// prepared receives the trial document of the check (see prepare),
	// which is made while the check waits for its batch.
	prepared chan preparedTrial
}

// preparedTrial is a copy of the policy file as planned at generation gen
// with the changes of one check applied, or the error of applying them;
// ok is false when the policy file could not be read.
type preparedTrial struct {
	doc    *policyfile.Document
	before []byte
	gen    uint64
	err    error
	ok     bool
}

// ValidateCallError is a failure to ask the server to validate the policy
// file, as opposed to its answer.
type ValidateCallError struct{ Err error }

func (e *ValidateCallError) Error() string { return e.Err.Error() }
func (e *ValidateCallError) Unwrap() error { return e.Err }

// planCheckTimeout bounds the validations of one batch of checks.
const planCheckTimeout = 2 * time.Minute

// NewPlanner returns a Planner over the policy file of store. Its batches
// of checks start as the Store's batches of writes do, and share their
// estimate of Terraform's parallelism.
func NewPlanner(store *Store) *Planner {
	p := &Planner{store: store, hasRule: map[string]bool{}, planned: map[policyfile.Key]plannedChange{}, claims: map[policyfile.Key]Claim{}, released: map[policyfile.Key]bool{}, owners: map[policyfile.Key]string{}}
	p.checks = batch.NewBatcher(batch.BatcherOptions[*planCheck]{
		Quiet: store.quiet, MaxWait: store.maxWait, Parallelism: store.par,
		OnBatch: func(checks []*planCheck, info batch.BatchInfo) { store.logBatch(checks[0].ctx, "validate", info) },
	}, p.checkBatch)
	store.premade = p.premade
	return p
}

// Expect says that Terraform is on its way to plan the fragment of key (it
// validates its resource's configuration): the batch of checks under way
// waits for it (see batch.Batcher) until Check or Forget. The Store
// expects its change too, and starts reading the policy file that the plan
// will need (see Store.Prefetch).
func (p *Planner) Expect(ctx context.Context, key policyfile.Key) {
	p.checks.Expect(claimKey(key))
	p.store.Expect(key)
	p.store.Prefetch(ctx)
}

// Prefetch starts reading the policy file that the plans of this process
// will need (see Store.Prefetch).
func (p *Planner) Prefetch(ctx context.Context) { p.store.Prefetch(ctx) }

// Forget says that the plan of the fragment of key needs no check, and,
// unless changing, that it writes nothing either.
func (p *Planner) Forget(key policyfile.Key, changing bool) {
	p.checks.Forget(claimKey(key))
	if !changing {
		p.store.Forget(key)
	}
}

// Planned returns the changes planned so far, in order.
func (p *Planner) Planned() []policyfile.Mutation {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.plannedLocked()
}

func (p *Planner) plannedLocked() []policyfile.Mutation {
	out := make([]policyfile.Mutation, 0, len(p.planned))
	for i, k := range p.order {
		if c, ok := p.planned[k]; ok && c.at == i {
			out = append(out, c.mut)
		}
	}
	return out
}

// PlannedPolicy returns the policy file as it will be once the changes
// planned so far are applied.
func (p *Planner) PlannedPolicy(ctx context.Context) ([]byte, error) {
	doc, err := p.plannedDocument(ctx)
	if err != nil {
		return nil, err
	}
	defer p.mu.Unlock()
	return doc.Bytes(), nil
}

// plannedDocument returns the policy file as planned, with p.mu held: the
// document is the Planner's own, to read before unlocking.
func (p *Planner) plannedDocument(ctx context.Context) (*policyfile.Document, error) {
	c, err := p.store.get(ctx, false)
	if err != nil {
		return nil, err
	}
	base, err := c.document()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.doc == nil || p.docBase != c {
		doc := base.Clone()
		seq := p.plannedLocked()
		clean := true
		for _, m := range seq {
			// A change planned before may no longer apply (the policy
			// file was read again meanwhile): it is left out.
			if doc.Apply(m) != nil {
				clean = false
			}
		}
		p.doc, p.docBase, p.docSeq, p.docClean = doc, c, seq, clean
		p.docGen++
	}
	return p.doc, nil
}

// premade returns the policy file as planned, the snapshot it was made
// from and the changes that made it, in order, when every one of them
// applied: a write of exactly those changes on that snapshot writes that
// document (see Store.made), which need not be made again.
func (p *Planner) premade() (*cached, []policyfile.Mutation, *policyfile.Document) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.doc == nil || !p.docClean {
		return nil, nil, nil
	}
	return p.docBase, p.docSeq, p.doc.Clone()
}

// Owner returns the owner of the fragment of key (whatever its owner) when
// this process creates it: drawn at random (policyfile.NewOwner) the first
// time, the same ever after. Terraform plans a resource again just before
// it applies it, in the process that applies it: the check of that plan
// and the write of the apply then make the same marker, and the write
// takes the document the check made (see premade) instead of making it
// again. The plan itself still shows the owner as unknown: the process
// that plans is not the one that applies.
func (p *Planner) Owner(key policyfile.Key) string {
	k := key.List()
	p.mu.Lock()
	defer p.mu.Unlock()
	if o, ok := p.owners[k]; ok {
		return o
	}
	o := policyfile.NewOwner()
	p.owners[k] = o
	return o
}

// Record adds changes that need no check (removals) to the planned ones.
func (p *Planner) Record(muts ...policyfile.Mutation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acceptLocked(muts, nil)
}

// acceptLocked plans muts, and applies them to the document as planned;
// or, when done is set, makes done the document as planned: done is a
// copy of it with muts applied.
func (p *Planner) acceptLocked(muts []policyfile.Mutation, done *policyfile.Document) {
	if done != nil {
		p.doc = done
	}
	if p.doc != nil {
		p.docGen++
		p.docSeq = append(p.docSeq, muts...)
	}
	for _, m := range muts {
		if m.Delete {
			p.released[m.Key.List()] = true
		} else {
			delete(p.released, m.Key.List())
		}
		p.planned[m.Key] = plannedChange{mut: m, at: len(p.order)}
		p.order = append(p.order, m.Key)
		if p.doc != nil && done == nil && p.doc.Apply(m) != nil {
			p.docClean = false
		}
	}
	if len(p.order) > 2*len(p.planned)+64 {
		// Keys planned again left holes in the order: close them.
		order := p.order[:0]
		for i, k := range p.order {
			if c, ok := p.planned[k]; ok && c.at == i {
				c.at = len(order)
				p.planned[k] = c
				order = append(order, k)
			}
		}
		p.order = order
	}
}

// allowAllPresent reports whether the policy file read by the store holds
// the default allow-all rule.
func (p *Planner) allowAllPresent(ctx context.Context) (bool, error) {
	c, err := p.store.get(ctx, false)
	if err != nil {
		return false, err
	}
	p.mu.Lock()
	present, ok := p.hasRule[c.snap.ETag]
	p.mu.Unlock()
	if ok {
		return present, nil
	}
	doc, err := c.document()
	if err != nil {
		return false, err
	}
	present = policyfile.HasAllowAll(doc)
	p.mu.Lock()
	p.hasRule[c.snap.ETag] = present
	p.mu.Unlock()
	return present, nil
}

// WarnAllowAll reports whether the plan should warn that the policy file
// holds the default allow-all rule: it does, no removal of it is planned,
// and the plan has not warned yet.
func (p *Planner) WarnAllowAll(ctx context.Context) bool {
	p.mu.Lock()
	c, planned := p.planned[policyfile.AllowAllKey()]
	done := p.warned || planned && c.mut.Delete
	p.mu.Unlock()
	if done {
		return false
	}
	if present, err := p.allowAllPresent(ctx); err != nil || !present {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.warned {
		return false
	}
	p.warned = true
	return true
}

// OwnershipConflict says why creating a fragment would take over an entry
// that is someone else's.
type OwnershipConflict struct {
	Key policyfile.Key
	// Existing is the marked entry of the policy file (another
	// configuration owns it).
	Existing json.RawMessage
	// Owner is the owner that the entry's marker names, "" when it names
	// none (a marker written before markers named their owner).
	Owner string
}

// OwnedElsewhere returns why creating the fragment of key would take
// over an entry that is someone else's: an entry of the policy
// file marked for another owner than key's, or for no owner, whatever its
// content. It returns nil when there is no such entry, or when this plan
// removes it (a resource of this configuration gives the entry up). The
// approvers of an auto approver are shared, never someone else's.
func (p *Planner) OwnedElsewhere(ctx context.Context, key policyfile.Key) *OwnershipConflict {
	if key.Kind == policyfile.KindAutoApprover {
		return nil
	}
	f, err := p.store.Read(ctx, key)
	if err != nil || !f.Found || !f.Marked || (key.Owner != "" && f.Owner == key.Owner) {
		return nil
	}
	p.mu.Lock()
	released := p.released[key.List()]
	p.mu.Unlock()
	if released {
		return nil
	}
	return &OwnershipConflict{Key: key, Existing: f.Value, Owner: f.Owner}
}

// Claim is what a resource of the plan says about itself when it claims a
// fragment: Terraform does not tell a provider the address of the
// resource it plans, so the caller describes a claim by what it knows of
// the resource, such as its type and the attributes that make its key.
type Claim struct {
	Who string
}

// Claim records that a resource of this plan writes the fragment of key,
// and returns the claim that another resource of the plan made on it
// before, if any. Two resources of one configuration cannot own one
// fragment: each plan would undo the other's apply. Approvers of one route
// are shared between configurations, but not between two resources of one
// configuration either: one resource lists them all.
func (p *Planner) Claim(key policyfile.Key, c Claim) (Claim, bool) {
	k := key.List()
	p.mu.Lock()
	defer p.mu.Unlock()
	if earlier, ok := p.claims[k]; ok {
		return earlier, true
	}
	p.claims[k] = c
	return Claim{}, false
}

// Check validates muts against the policy file as it would be after the
// changes planned so far and muts, and plans muts unless they are refused.
// It returns nil, the error of applying muts to the policy file (such as
// a *policyfile.UnmanagedConflictError or a *TooLargeError), the server's
// rejection, or a *ValidateCallError when the server could not be asked.
func (p *Planner) Check(ctx context.Context, muts []policyfile.Mutation) error {
	var claim policyfile.Key
	if len(muts) > 0 {
		claim = muts[len(muts)-1].Key
	}
	return p.CheckAll(ctx, claim, muts)
}

// CheckAll is Check for the changes of a resource that writes several
// fragments: claim is the key under which the resource was expected (see
// Expect). The changes pass or fail together.
func (p *Planner) CheckAll(ctx context.Context, claim policyfile.Key, muts []policyfile.Mutation) error {
	if p.store.Changing() {
		// The process applies: the Store's writes check the changes.
		p.Record(muts...)
		return nil
	}
	pc := &planCheck{ctx: ctx, muts: muts, prepared: make(chan preparedTrial, 1)}
	go p.prepare(pc)
	outcome, _, err := p.checks.Do(ctx, claimKey(claim), pc)
	if err != nil {
		return &ValidateCallError{Err: err}
	}
	return outcome
}

// prepare makes the trial document of pc while it waits for its batch: a
// batch of that check alone validates it without making it then (see
// validateBatch). The wait for the batch then also covers the read of the
// policy file and the changes, which for a set of a thousand grants cost
// as much as the wait.
func (p *Planner) prepare(pc *planCheck) {
	doc, before, gen, err := p.plannedCopy(pc.ctx)
	if err != nil {
		pc.prepared <- preparedTrial{}
		return
	}
	pc.prepared <- preparedTrial{doc: doc, before: before, gen: gen, err: applyAll(doc, pc.muts), ok: true}
}

// takePrepared returns the trial document that prepare made for the
// batch, when the batch is that one check and the policy file as planned
// has not changed since.
func (p *Planner) takePrepared(batch []*planCheck) (preparedTrial, bool) {
	if len(batch) != 1 || batch[0].prepared == nil {
		return preparedTrial{}, false
	}
	t := <-batch[0].prepared
	if !t.ok {
		return preparedTrial{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return t, t.gen == p.docGen
}

// checkBatch validates one batch of checks, plans the changes that pass
// (or could not be checked), and returns the outcome of each.
func (p *Planner) checkBatch(batch []*planCheck) []error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(batch[0].ctx), planCheckTimeout)
	defer cancel()
	v := p.validateBatch(ctx, batch)
	p.mu.Lock()
	defer p.mu.Unlock()
	var accepted []int
	for i, err := range v.errs {
		var unchecked *ValidateCallError
		if err == nil || errors.As(err, &unchecked) {
			accepted = append(accepted, i)
		}
	}
	// The copy validated holds the changes accepted, and nothing else,
	// unless the document as planned changed meanwhile: it becomes the
	// document as planned, and the changes are not applied again.
	var done *policyfile.Document
	if v.trial != nil && v.gen == p.docGen && slices.Equal(accepted, v.included) {
		done = v.trial
	}
	for _, i := range accepted {
		p.acceptLocked(batch[i].muts, done)
	}
	return v.errs
}

// validation is the outcome of validateBatch: one error per check, and
// the copy of the document as planned (at generation gen) to which the
// changes of the checks included were applied, for the one validation of
// the batch.
type validation struct {
	errs     []error
	trial    *policyfile.Document
	gen      uint64
	included []int
}

// validateBatch validates the batch in one call; when the server rejects
// it, each check again on its own.
func (p *Planner) validateBatch(ctx context.Context, batch []*planCheck) validation {
	errs := make([]error, len(batch))
	var base, trial *policyfile.Document
	var before []byte
	var gen uint64
	var ok []int
	if t, ready := p.takePrepared(batch); ready {
		trial, before, gen, errs[0] = t.doc, t.before, t.gen, t.err
		if t.err == nil {
			ok = []int{0}
		}
	} else {
		var err error
		if base, before, gen, err = p.plannedCopy(ctx); err != nil {
			for i := range errs {
				errs[i] = err
			}
			return validation{errs: errs}
		}
		trial = base
		if len(batch) > 1 {
			trial = base.Clone()
		}
		for i, pc := range batch {
			if errs[i] = applyAll(trial, pc.muts); errs[i] != nil {
				// The changes of pc that applied before the one that
				// failed must not stay: start again from the base.
				trial = base.Clone()
				for _, j := range ok {
					_ = applyAll(trial, batch[j].muts)
				}
				continue
			}
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return validation{errs: errs}
	}
	out := validation{errs: errs, trial: trial, gen: gen, included: ok}
	err := p.validate(ctx, trial, before)
	if err == nil {
		return out
	}
	if len(ok) == 1 {
		errs[ok[0]] = validateError(err)
		return out
	}
	if !IsRejected(err) && !isTooLarge(err) {
		for _, i := range ok {
			errs[i] = &ValidateCallError{Err: err}
		}
		return out
	}
	var wg sync.WaitGroup
	for _, i := range ok {
		wg.Add(1)
		go func() {
			defer wg.Done()
			one := base.Clone()
			_ = applyAll(one, batch[i].muts)
			errs[i] = validateError(p.validate(ctx, one, before))
		}()
	}
	wg.Wait()
	return validation{errs: errs}
}

// Blame finds which of muts make the policy file as planned invalid, when
// together they do (a CheckAll refused them): it validates halves of muts
// on their own, without planning them, down to single changes, and returns
// the outcome of each change. A change that could not be checked gets a
// *ValidateCallError. Independent changes (grants) are blamed exactly, in
// about 2·k·log2(len(muts)) validations for k at fault.
func (p *Planner) Blame(ctx context.Context, muts []policyfile.Mutation) []error {
	errs := make([]error, len(muts))
	base, before, _, err := p.plannedCopy(ctx)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	validate := func(idx []int) error {
		one := base.Clone()
		for _, i := range idx {
			if err := one.Apply(muts[i]); err != nil {
				return err
			}
		}
		return validateError(p.validate(ctx, one, before))
	}
	var blame func(idx []int, known bool)
	blame = func(idx []int, known bool) {
		if !known {
			err := validate(idx)
			if err == nil {
				return
			}
			if len(idx) == 1 || !IsRejected(err) && !isTooLarge(err) {
				for _, i := range idx {
					errs[i] = err
				}
				return
			}
		}
		if len(idx) == 1 {
			errs[idx[0]] = validate(idx)
			return
		}
		half := len(idx) / 2
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); blame(idx[:half], false) }()
		blame(idx[half:], false)
		wg.Wait()
	}
	all := make([]int, len(muts))
	for i := range all {
		all[i] = i
	}
	blame(all, true)
	return errs
}

// plannedCopy returns a copy of the policy file as planned, and the policy
// file as read, for validations; a failure to read it is a
// *ValidateCallError.
func (p *Planner) plannedCopy(ctx context.Context) (*policyfile.Document, []byte, uint64, error) {
	doc, err := p.plannedDocument(ctx)
	if err != nil {
		return nil, nil, 0, &ValidateCallError{Err: err}
	}
	defer p.mu.Unlock()
	return doc.Clone(), p.docBase.snap.HuJSON, p.docGen, nil
}

// validate checks the size of doc against the policy file before, then
// asks the server to validate it.
func (p *Planner) validate(ctx context.Context, doc *policyfile.Document, before []byte) error {
	out := doc.Bytes()
	if err := checkSize(out, before, p.store.maxSize); err != nil {
		return err
	}
	return p.store.backend.Validate(ctx, out)
}

// validateError is the outcome of a validation that returned err: the
// server's refusal, a size refusal, or a failure to ask.
func validateError(err error) error {
	if err == nil || IsRejected(err) || isTooLarge(err) {
		return err
	}
	return &ValidateCallError{Err: err}
}

func isTooLarge(err error) bool {
	var tl *TooLargeError
	return errors.As(err, &tl)
}
