package policy

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"
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
// The writes themselves are gathered by the Store.
type Planner struct {
	store  *Store
	checks *Batcher[*planCheck, error]

	mu      sync.Mutex
	planned []Mutation      // changes that passed, one per key, in order
	hasRule map[string]bool // HasAllowAll by policy ETag
	// warned is set once the plan has warned about the allow-all rule:
	// one warning per plan, not one per fragment.
	warned bool
}

// planCheck is one queued check and the context of its caller.
type planCheck struct {
	ctx  context.Context
	muts []Mutation
}

// ValidateCallError is a failure to ask the server to validate the policy
// file, as opposed to its answer.
type ValidateCallError struct{ Err error }

func (e *ValidateCallError) Error() string { return e.Err.Error() }
func (e *ValidateCallError) Unwrap() error { return e.Err }

// planCheckTimeout bounds the validations of one batch of checks.
const planCheckTimeout = 2 * time.Minute

// NewPlanner returns a Planner over the policy file of store. Its batches
// of checks start as the Store's batches of writes do: after DefaultQuiet
// without a new check, at the latest DefaultMaxWait after the first one.
func NewPlanner(store *Store) *Planner {
	p := &Planner{store: store, hasRule: map[string]bool{}}
	p.checks = NewBatcher(DefaultQuiet, DefaultMaxWait, p.checkBatch)
	return p
}

// Planned returns the changes planned so far, in order.
func (p *Planner) Planned() []Mutation {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.planned)
}

// PlannedPolicy returns the policy file as it will be once the changes
// planned so far are applied.
func (p *Planner) PlannedPolicy(ctx context.Context) ([]byte, error) {
	return p.store.Preview(ctx, p.Planned()...)
}

// Record adds changes that need no check (removals) to the planned ones.
func (p *Planner) Record(muts ...Mutation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acceptLocked(muts)
}

func (p *Planner) acceptLocked(muts []Mutation) {
	for _, m := range muts {
		p.planned = slices.DeleteFunc(p.planned, func(q Mutation) bool { return q.Key == m.Key })
		p.planned = append(p.planned, m)
	}
}

// allowAllPresent reports whether the policy file read by the store holds
// the default allow-all rule.
func (p *Planner) allowAllPresent(ctx context.Context) (bool, error) {
	snap, err := p.store.Snapshot(ctx)
	if err != nil {
		return false, err
	}
	p.mu.Lock()
	present, ok := p.hasRule[snap.ETag]
	p.mu.Unlock()
	if ok {
		return present, nil
	}
	doc, err := Parse(snap.HuJSON)
	if err != nil {
		return false, err
	}
	present = HasAllowAll(doc)
	p.mu.Lock()
	p.hasRule[snap.ETag] = present
	p.mu.Unlock()
	return present, nil
}

// WarnAllowAll reports whether the plan should warn that the policy file
// holds the default allow-all rule: it does, no removal of it is planned,
// and the plan has not warned yet.
func (p *Planner) WarnAllowAll(ctx context.Context) bool {
	p.mu.Lock()
	done := p.warned || slices.ContainsFunc(p.planned, func(m Mutation) bool { return m.Key == AllowAllKey() && m.Delete })
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
	Key Key
	// InPlan is set when another change of this plan writes Key with
	// other content (another resource of the same configuration).
	InPlan bool
	// Existing is, otherwise, the marked entry of the policy file with
	// other content (another configuration owns it).
	Existing json.RawMessage
}

// OwnedElsewhere returns why creating the fragment of key with value
// would take over an entry that is someone else's: a change of this plan
// to the same key with other content, or a marked entry with other
// content in the policy file. It returns nil when there is no such entry.
func (p *Planner) OwnedElsewhere(ctx context.Context, key Key, value json.RawMessage) *OwnershipConflict {
	p.mu.Lock()
	for _, m := range p.planned {
		if m.Key == key && !m.Delete && !SameJSON(m.Value, value) {
			p.mu.Unlock()
			return &OwnershipConflict{Key: key, InPlan: true}
		}
	}
	p.mu.Unlock()
	f, err := p.store.Read(ctx, key)
	if err != nil || !f.Found || !f.Marked || SameJSON(f.Value, value) {
		return nil
	}
	return &OwnershipConflict{Key: key, Existing: f.Value}
}

// Check validates muts against the policy file as it would be after the
// changes planned so far and muts, and plans muts unless they are refused.
// It returns nil, the error of applying muts to the policy file (such as
// an *UnmanagedConflictError), the server's rejection, or a
// *ValidateCallError when the server could not be asked.
func (p *Planner) Check(ctx context.Context, muts []Mutation) error {
	outcome, _, err := p.checks.Do(ctx, &planCheck{ctx: ctx, muts: muts})
	if err != nil {
		return &ValidateCallError{Err: err}
	}
	return outcome
}

// checkBatch validates one batch of checks, plans the changes that pass
// (or could not be checked), and returns the outcome of each.
func (p *Planner) checkBatch(batch []*planCheck) []error {
	p.mu.Lock()
	base := slices.Clone(p.planned)
	p.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.WithoutCancel(batch[0].ctx), planCheckTimeout)
	errs := p.validateBatch(ctx, base, batch)
	cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, pc := range batch {
		var unchecked *ValidateCallError
		if errs[i] == nil || errors.As(errs[i], &unchecked) {
			p.acceptLocked(pc.muts)
		}
	}
	return errs
}

// validateBatch validates the batch in one call; when the server rejects
// it, each check again on its own.
func (p *Planner) validateBatch(ctx context.Context, base []Mutation, batch []*planCheck) []error {
	errs := make([]error, len(batch))
	if len(batch) > 1 {
		all := slices.Clone(base)
		for _, pc := range batch {
			all = append(all, pc.muts...)
		}
		if doc, err := p.store.Preview(ctx, all...); err == nil {
			err = p.store.backend.Validate(ctx, doc)
			if err == nil {
				return errs
			}
			if !IsRejected(err) {
				for i := range errs {
					errs[i] = &ValidateCallError{Err: err}
				}
				return errs
			}
		}
	}
	var wg sync.WaitGroup
	for i, pc := range batch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.validateOne(ctx, base, pc.muts)
		}()
	}
	wg.Wait()
	return errs
}

func (p *Planner) validateOne(ctx context.Context, base, muts []Mutation) error {
	doc, err := p.store.Preview(ctx, append(slices.Clone(base), muts...)...)
	if err != nil {
		// A change planned before may no longer apply (the policy file was
		// read again meanwhile): check muts on their own.
		if doc, err = p.store.Preview(ctx, muts...); err != nil {
			return err
		}
	}
	if err := p.store.backend.Validate(ctx, doc); err != nil {
		if IsRejected(err) {
			return err
		}
		return &ValidateCallError{Err: err}
	}
	return nil
}
