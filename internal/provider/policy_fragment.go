package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/policy"
)

// A fragment resource owns one entry of the tailnet policy file: a grant, a
// tag owner, an auto approver or a policy test. The four resources share
// their life cycle, implemented once here by fragmentResource:
//
//   - Read finds the entry by its marker (or, for a keyed entry, by its key)
//     in the policy file read once per provider instance, and fills the
//     model from its standardized value. An entry found without its marker
//     sets marker to "", which the next plan turns into an in-place update
//     that puts the marker back.
//   - ModifyPlan plans id and marker, checks the change against the policy
//     file as it would be after it (Tailscale's /acl/validate), and warns
//     while the default allow-all rule is in the file.
//   - Create, Update and Delete are changes to the policy store, which
//     gathers concurrent changes into one conditional write; they first
//     wait at a gate (see policyCoordinator) so that the changes Terraform
//     starts together reach the store together.

// fragmentModel is what a fragment resource model gives the shared logic.
type fragmentModel interface {
	// fragmentKey returns the key of the fragment; ok is false while the
	// attributes that make it are unknown.
	fragmentKey() (key policy.Key, ok bool)
	// entry returns the JSON value of the policy entry; ok is false when a
	// value is unknown, or missing (as after an import).
	entry() (value json.RawMessage, ok bool)
	// setEntry fills the model from the standardized value of the entry of
	// key.
	setEntry(key policy.Key, value json.RawMessage) diag.Diagnostics
	// computed returns the id and marker attributes of the model.
	computed() (id, marker *types.String)
}

// fragmentPtr is a pointer to a fragment model type.
type fragmentPtr[M any] interface {
	*M
	fragmentModel
}

// fragmentResource implements Create, Read, Update, Delete and ModifyPlan
// for the fragment resources. M is the model type.
type fragmentResource[M any, P fragmentPtr[M]] struct {
	resourceBase
	// what names an entry of this kind in messages, e.g. "grant".
	what string
	// importHint tells how to take over an entry that has no marker, for
	// an import that finds nothing.
	importHint string
	// members are the lower-cased member names of an entry that the model
	// reads (grants and tests are objects); other members are reported.
	members []string
}

// markerText is the marker comment of key without its leading "//", as the
// marker attribute holds it.
func markerText(key policy.Key) string {
	return strings.TrimPrefix(key.Marker(), "// ")
}

// setComputed sets id and marker to the values qtail keeps for key.
func setComputed(m fragmentModel, key policy.Key, marked bool) {
	id, marker := m.computed()
	*id = types.StringValue(key.ImportID())
	*marker = types.StringValue("")
	if marked {
		*marker = types.StringValue(markerText(key))
	}
}

func (r *fragmentResource[M, P]) policyStore(diags *diag.Diagnostics) *policy.Store {
	store, d := r.data.Policy()
	diags.Append(d...)
	return store
}

// change returns what a Create or Update writes: the store, the key and the
// value of the planned entry.
func (r *fragmentResource[M, P]) change(plan P, verb string, diags *diag.Diagnostics) (*policy.Store, policy.Key, json.RawMessage, bool) {
	store := r.policyStore(diags)
	if store == nil {
		return nil, policy.Key{}, nil, false
	}
	key, ok := plan.fragmentKey()
	value, known := plan.entry()
	if !ok || !known {
		diags.AddError("Unknown Values at Apply Time", "An attribute of the "+r.what+" was still unknown when it was "+verb+
			", which Terraform does not allow. Please report this issue to the qtail developers.")
		return nil, policy.Key{}, nil, false
	}
	return store, key, value, true
}

func (r *fragmentResource[M, P]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	plan := P(new(M))
	resp.Diagnostics.Append(req.Plan.Get(ctx, plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	store, key, value, ok := r.change(plan, "created", &resp.Diagnostics)
	if !ok {
		return
	}
	if err := store.Apply(ctx, policy.Mutation{Key: key, Value: value}); err != nil {
		fragmentWriteError(&resp.Diagnostics, "add "+key.String()+" to the policy file", err)
		return
	}
	setComputed(plan, key, true)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

func (r *fragmentResource[M, P]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state := P(new(M))
	resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	store := r.policyStore(&resp.Diagnostics)
	if store == nil {
		return
	}
	key, ok := state.fragmentKey()
	if !ok {
		resp.Diagnostics.AddError("Invalid State", "The state of this "+r.what+" does not name its policy entry. "+
			"Remove it from the state with terraform state rm, then import it again.")
		return
	}
	// A state without the entry's values comes from an import.
	want, complete := state.entry()
	if !complete {
		want = nil
	}
	f, err := store.Lookup(ctx, key, want)
	if err != nil {
		apiError(&resp.Diagnostics, "read the policy file", err)
		return
	}
	if !f.Found {
		if !complete {
			resp.Diagnostics.AddError("Nothing to Import",
				fmt.Sprintf("The policy file has no %s %s. %s", r.what, describeKey(key), r.importHint))
			return
		}
		resp.State.RemoveResource(ctx)
		return
	}
	if resp.Diagnostics.Append(state.setEntry(key, f.Value)...); resp.Diagnostics.HasError() {
		return
	}
	if unmanaged := unmanagedMembers(f.Value, r.members); len(unmanaged) > 0 {
		resp.Diagnostics.AddWarning("Unmanaged Members in a Policy Entry",
			fmt.Sprintf("The %s %s in the policy file has members that qtail does not manage: %s. "+
				"They stay as they are until qtail next writes this %s, which replaces the whole entry with the configuration. "+
				"Remove them from the policy file, or keep them out of this resource's entry.",
				r.what, describeKey(key), strings.Join(unmanaged, ", "), r.what))
	}
	setComputed(state, key, f.Marked)
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

func (r *fragmentResource[M, P]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	plan, state := P(new(M)), P(new(M))
	resp.Diagnostics.Append(req.Plan.Get(ctx, plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	store, key, value, ok := r.change(plan, "updated", &resp.Diagnostics)
	if !ok {
		return
	}
	// A grant or a test whose marker a person removed is found by its
	// content only: adopt it as it is before changing it, so that the
	// change does not add a second entry.
	if _, marker := state.computed(); marker.ValueString() == "" && !keyedKind(key.Kind) {
		if old, ok := state.entry(); ok && !sameJSON(old, value) {
			if err := store.Apply(ctx, policy.Mutation{Key: key, Value: old}); err != nil {
				fragmentWriteError(&resp.Diagnostics, "adopt "+key.String()+" in the policy file", err)
				return
			}
		}
	}
	if err := store.Apply(ctx, policy.Mutation{Key: key, Value: value, Overwrite: true}); err != nil {
		fragmentWriteError(&resp.Diagnostics, "update "+key.String()+" in the policy file", err)
		return
	}
	setComputed(plan, key, true)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

func (r *fragmentResource[M, P]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state := P(new(M))
	resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	store := r.policyStore(&resp.Diagnostics)
	if store == nil {
		return
	}
	key, ok := state.fragmentKey()
	if !ok {
		return
	}
	// An entry whose marker a person removed is still this resource's:
	// mark it again so that the delete finds it.
	if _, marker := state.computed(); marker.ValueString() == "" {
		if old, ok := state.entry(); ok {
			if err := store.Apply(ctx, policy.Mutation{Key: key, Value: old, Overwrite: true}); err != nil {
				fragmentWriteError(&resp.Diagnostics, "adopt "+key.String()+" before deleting it", err)
				return
			}
		}
	}
	if err := store.Apply(ctx, policy.Mutation{Key: key, Delete: true}); err != nil {
		fragmentWriteError(&resp.Diagnostics, "remove "+key.String()+" from the policy file", err)
	}
}

// ModifyPlan plans id and marker, then checks a created or changed entry:
// locally against the policy file read by this provider instance (an
// entry it would overwrite), and with Tailscale's /acl/validate against
// the policy file as it would be after this change and the ones planned
// before it. It also warns while the default allow-all rule exists.
func (r *fragmentResource[M, P]) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !r.configured() {
		return
	}
	var state P
	if !req.State.Raw.IsNull() {
		state = P(new(M))
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if req.Plan.Raw.IsNull() {
		r.planDelete(state)
		return
	}
	plan := P(new(M))
	resp.Diagnostics.Append(req.Plan.Get(ctx, plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	key, keyKnown := plan.fragmentKey()
	if keyKnown {
		setComputed(plan, key, true)
		resp.Diagnostics.Append(resp.Plan.Set(ctx, plan)...)
	}
	value, valueKnown := plan.entry()

	var oldKey policy.Key
	var oldValue json.RawMessage
	creating := state == nil
	if state != nil {
		oldKey, _ = state.fragmentKey()
		oldValue, _ = state.entry()
		creating = !keyKnown || oldKey != key
	}
	changing := creating || !valueKnown || !sameJSON(oldValue, value)
	if !changing || r.data.tailnetUnknown {
		return
	}
	if _, diags := r.data.Policy(); diags.HasError() {
		resp.Diagnostics.Append(diags...)
		return
	}
	checks := r.data.policyChecks()
	if checks.warnAllowAll(ctx) {
		resp.Diagnostics.AddWarning("Default Allow-All Rule Still in the Policy File", allowAllWarning)
	}
	if !keyKnown || !valueKnown {
		return
	}

	muts := []policy.Mutation{{Key: key, Value: value, Overwrite: !creating}}
	if creating {
		if state != nil && oldKey.Name != "" {
			muts = append([]policy.Mutation{{Key: oldKey, Delete: true}}, muts...)
		}
		if msg := checks.ownedElsewhere(ctx, key, value); msg != "" {
			resp.Diagnostics.AddError("Policy Entry Already Owned", msg)
			return
		}
	}
	err := checks.check(ctx, muts)
	var conflict *policy.UnmanagedConflictError
	var unchecked *validateCallError
	switch {
	case err == nil:
	case errors.As(err, &conflict):
		resp.Diagnostics.AddError("Entry Exists Without qtail's Marker", conflict.Error()+".")
	case errors.As(err, &unchecked) && !policy.IsRejected(err):
		resp.Diagnostics.AddWarning("Policy Change Not Validated",
			fmt.Sprintf("qtail could not ask Tailscale to validate the policy file with %s at plan time; "+
				"Tailscale checks it again when it is written, so nothing needs to be done unless the apply fails.\n\n%v", key, unchecked.err))
	case policy.IsRejected(err):
		resp.Diagnostics.AddError("Tailscale Rejects the Policy Change",
			fmt.Sprintf("Tailscale refuses the policy file as it would be with %s:\n\n%v\n\nChange the configuration so that the entry is valid.%s",
				key, err, rejectionHint(err)))
	default:
		resp.Diagnostics.AddError("Invalid Policy Change", fmt.Sprintf("qtail cannot apply %s to the policy file: %v. "+
			"Fix the policy file or the configuration, then plan again.", key, err))
	}
}

// planDelete records a planned removal, so that the entries planned after
// it are validated without it.
func (r *fragmentResource[M, P]) planDelete(state P) {
	if state == nil || r.data.tailnet == nil {
		return
	}
	key, ok := state.fragmentKey()
	if !ok {
		return
	}
	if checks := r.data.policyChecks(); checks != nil {
		checks.record(policy.Mutation{Key: key, Delete: true})
	}
}

const allowAllWarning = "The policy file still holds the rule that every new tailnet ships with, " +
	"a grant with src [\"*\"], dst [\"*\"] and ip [\"*\"] (or the ACL with src [\"*\"] and dst [\"*:*\"]). " +
	"It lets every device reach every other device, including every proxy qtail puts on the tailnet, " +
	"so the grants of this configuration restrict nothing while it is there. " +
	"Once your grants cover the access you need, remove the rule with a qtail_allow_all_removal resource that depends on them " +
	"(if this configuration already has one, the apply removes the rule and this warning goes away), " +
	"or delete it in the Tailscale admin console. The qtail_policy data source reports it as findings.allow_all_present."

// rejectionHint adds advice to a rejection that names something missing.
func rejectionHint(err error) string {
	if !strings.Contains(err.Error(), "not found") {
		return ""
	}
	return "\n\nIf another resource of this configuration declares what is missing (a qtail_tag_owner for a tag, say), " +
		"refer to its attribute, for example src = [qtail_tag_owner.web.tag], so that Terraform plans it first " +
		"and qtail validates both changes together."
}

// fragmentWriteError adds the error of a failed change of the policy file.
func fragmentWriteError(diags *diag.Diagnostics, action string, err error) {
	var conflict *policy.UnmanagedConflictError
	var contention *policy.ContentionError
	var rejected *policy.RejectedError
	switch {
	case errors.As(err, &conflict):
		diags.AddError("Entry Exists Without qtail's Marker", fmt.Sprintf("qtail could not %s: %v.", action, conflict))
	case errors.As(err, &contention):
		diags.AddError("Policy File Kept Changing", fmt.Sprintf("qtail could not %s: %v.", action, contention))
	case errors.As(err, &rejected):
		diags.AddError("Tailscale Rejected the Policy File", fmt.Sprintf("qtail could not %s: Tailscale refused the policy file.\n\n%v\n\n"+
			"Nothing was written. Change the configuration (or the policy file) so that Tailscale accepts it, then apply again.", action, rejected.Err))
	default:
		apiError(diags, action, err)
	}
}

// describeKey names the entry of key the way the policy file shows it.
func describeKey(key policy.Key) string {
	switch {
	case key.Kind == policy.KindTagOwner:
		return fmt.Sprintf("tagOwners[%q]", key.Name)
	case key.Kind == policy.KindAutoApprover && key.Name == policy.ExitNodeName:
		return "autoApprovers.exitNode"
	case key.Kind == policy.KindAutoApprover:
		return fmt.Sprintf("autoApprovers.routes[%q]", strings.TrimPrefix(key.Name, policy.RoutePrefix))
	}
	return "marked " + key.Marker()
}

// keyedKind reports whether entries of kind are object members found by
// their key (tag owners, auto approvers) rather than array elements found
// by their marker.
func keyedKind(k policy.Kind) bool {
	return k == policy.KindTagOwner || k == policy.KindAutoApprover
}

// sameJSON reports whether a and b are the same JSON value in canonical
// form. A nil value equals only nil.
func sameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ca, err := policy.Canonicalize(a)
	if err != nil {
		return false
	}
	cb, err := policy.Canonicalize(b)
	if err != nil {
		return false
	}
	return bytes.Equal(ca, cb)
}

// stringsOf returns the elements of a list of strings: nil for a null
// list, an empty slice for an empty one. ok is false when the list or one
// of its elements is unknown.
func stringsOf(l types.List) (out []string, ok bool) {
	if l.IsUnknown() {
		return nil, false
	}
	if l.IsNull() {
		return nil, true
	}
	out = make([]string, 0, len(l.Elements()))
	for _, e := range l.Elements() {
		s, isString := e.(types.String)
		if !isString || s.IsUnknown() || s.IsNull() {
			return nil, false
		}
		out = append(out, s.ValueString())
	}
	return out, true
}

// stringList returns a list of strings.
func stringList(ss []string) types.List {
	elems := make([]attr.Value, len(ss))
	for i, s := range ss {
		elems[i] = types.StringValue(s)
	}
	return types.ListValueMust(types.StringType, elems)
}

// entryBuilder builds the JSON object of a grant or a test, leaving out
// the members whose value is null.
type entryBuilder struct {
	fields map[string]any
	known  bool
}

func newEntryBuilder() *entryBuilder { return &entryBuilder{fields: map[string]any{}, known: true} }

func (b *entryBuilder) list(name string, l types.List) {
	ss, ok := stringsOf(l)
	if !ok {
		b.known = false
		return
	}
	if ss != nil {
		b.fields[name] = ss
	}
}

func (b *entryBuilder) str(name string, s types.String) {
	if s.IsUnknown() {
		b.known = false
		return
	}
	if !s.IsNull() {
		b.fields[name] = s.ValueString()
	}
}

func (b *entryBuilder) raw(name string, s types.String) {
	if s.IsUnknown() {
		b.known = false
		return
	}
	if !s.IsNull() {
		if !json.Valid([]byte(s.ValueString())) {
			b.known = false
			return
		}
		b.fields[name] = json.RawMessage(s.ValueString())
	}
}

func (b *entryBuilder) build() (json.RawMessage, bool) {
	if !b.known {
		return nil, false
	}
	out, err := json.Marshal(b.fields)
	if err != nil {
		return nil, false
	}
	return out, true
}

// entryFields are the members of a grant or a test read from the policy
// file. Tailscale reads member names case-insensitively, so they are kept
// lower-cased; each read member is taken off, and what is left is not
// managed by qtail.
type entryFields map[string]json.RawMessage

func parseEntryFields(key policy.Key, value json.RawMessage) (entryFields, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(value, &raw); err != nil {
		return nil, fmt.Errorf("the entry of %s in the policy file is not a JSON object: %w", key, err)
	}
	f := make(entryFields, len(raw))
	for name, v := range raw {
		f[strings.ToLower(name)] = v
	}
	return f, nil
}

// take removes and returns the first of names present.
func (f entryFields) take(names ...string) (json.RawMessage, string, bool) {
	for _, n := range names {
		if v, ok := f[strings.ToLower(n)]; ok {
			delete(f, strings.ToLower(n))
			return v, n, true
		}
	}
	return nil, "", false
}

// list reads a list of strings: null when absent.
func (f entryFields) list(diags *diag.Diagnostics, names ...string) types.List {
	v, name, ok := f.take(names...)
	if !ok {
		return types.ListNull(types.StringType)
	}
	var ss []string
	if err := json.Unmarshal(v, &ss); err != nil {
		diags.AddError("Unexpected Policy Entry", fmt.Sprintf("%q in the policy file is not a list of strings: %s. Correct it in the policy file.", name, v))
		return types.ListNull(types.StringType)
	}
	return stringList(ss)
}

// str reads a string: null when absent.
func (f entryFields) str(diags *diag.Diagnostics, names ...string) types.String {
	v, name, ok := f.take(names...)
	if !ok {
		return types.StringNull()
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		diags.AddError("Unexpected Policy Entry", fmt.Sprintf("%q in the policy file is not a string: %s. Correct it in the policy file.", name, v))
		return types.StringNull()
	}
	return types.StringValue(s)
}

// raw reads a member as canonical JSON text: null when absent.
func (f entryFields) raw(names ...string) types.String {
	v, _, ok := f.take(names...)
	if !ok {
		return types.StringNull()
	}
	if c, err := policy.Canonicalize(v); err == nil {
		v = c
	}
	return types.StringValue(string(v))
}

// unmanagedMembers returns the names of the members of the JSON object
// value that are not among known (lower-cased), sorted. Tailscale reads
// member names case-insensitively.
func unmanagedMembers(value json.RawMessage, known []string) []string {
	if known == nil {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(value, &obj) != nil {
		return nil
	}
	var out []string
	for name := range obj {
		if !slices.Contains(known, strings.ToLower(name)) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// readList reads the JSON array of owners or approvers of a keyed entry.
func readList(diags *diag.Diagnostics, key policy.Key, value json.RawMessage) types.List {
	var ss []string
	if err := json.Unmarshal(value, &ss); err != nil {
		diags.AddError("Unexpected Policy Entry", fmt.Sprintf("The value of %s in the policy file is not a list of strings: %s. "+
			"Correct it in the policy file.", describeKey(key), value))
		return types.ListNull(types.StringType)
	}
	return stringList(ss)
}

// listJSON encodes a list of strings as a JSON array; ok is false when it
// is unknown or null.
func listJSON(l types.List) (json.RawMessage, bool) {
	ss, ok := stringsOf(l)
	if !ok || ss == nil {
		return nil, false
	}
	out, err := json.Marshal(ss)
	return out, err == nil
}

// policyCoordinator holds the policy fragment changes planned by one
// provider instance (one Terraform operation) and validates them.
//
// Each change is checked together with the changes planned before it (a
// tag owner and the grant that uses its tag are valid only together), and
// concurrent checks share one call of /acl/validate: when the batch
// passes, every change of it passes; when Tailscale rejects it, each change
// is validated again on its own so that only the one at fault fails.
// Resources that depend on fragments (an operator on its tag owners) read
// the policy file as it will be through planned.
//
// The writes themselves are gathered by the policy.Store.
type policyCoordinator struct {
	store    *policy.Store
	validate func(ctx context.Context, hujson []byte) error

	mu          sync.Mutex
	planned     []policy.Mutation // changes that passed, one per key, in order
	queue       []*planCheck
	lastArrival time.Time
	running     bool
	allowAll    map[string]bool // HasAllowAll by policy ETag
	// allowAllWarned is set once the plan has warned about the allow-all
	// rule: one warning per plan, not one per fragment.
	allowAllWarned bool
}

// planCheck is one queued check and the channel its outcome goes to.
type planCheck struct {
	muts []policy.Mutation
	done chan error
}

// validateCallError is a failure to ask Tailscale, as opposed to an answer.
type validateCallError struct{ err error }

func (e *validateCallError) Error() string { return e.err.Error() }
func (e *validateCallError) Unwrap() error { return e.err }

// A batch of checks starts once no other has come for batchQuiet, and at
// the latest batchMaxWait after its first one, as the store's writes do.
const (
	batchQuiet   = policy.DefaultQuiet
	batchMaxWait = policy.DefaultMaxWait
)

func newPolicyCoordinator(store *policy.Store, validate func(context.Context, []byte) error) *policyCoordinator {
	return &policyCoordinator{store: store, validate: validate, allowAll: map[string]bool{}}
}

// plannedChanges returns the changes planned so far, in order.
func (c *policyCoordinator) plannedChanges() []policy.Mutation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.planned)
}

// planCheckTimeout bounds one batch of checks.
const planCheckTimeout = 2 * time.Minute

// record adds changes that need no check (removals) to the planned ones.
func (c *policyCoordinator) record(muts ...policy.Mutation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acceptLocked(muts)
}

func (c *policyCoordinator) acceptLocked(muts []policy.Mutation) {
	for _, m := range muts {
		c.planned = slices.DeleteFunc(c.planned, func(p policy.Mutation) bool { return p.Key == m.Key })
		c.planned = append(c.planned, m)
	}
}

// allowAllPresent reports whether the policy file read by the store holds
// the default allow-all rule.
func (c *policyCoordinator) allowAllPresent(ctx context.Context) (bool, error) {
	snap, err := c.store.Snapshot(ctx)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	present, ok := c.allowAll[snap.ETag]
	c.mu.Unlock()
	if ok {
		return present, nil
	}
	doc, err := policy.Parse(snap.HuJSON)
	if err != nil {
		return false, err
	}
	present = policy.HasAllowAll(doc)
	c.mu.Lock()
	c.allowAll[snap.ETag] = present
	c.mu.Unlock()
	return present, nil
}

// warnAllowAll reports whether the plan should warn that the policy file
// holds the default allow-all rule: it does, no removal of it is planned,
// and the plan has not warned yet.
func (c *policyCoordinator) warnAllowAll(ctx context.Context) bool {
	c.mu.Lock()
	done := c.allowAllWarned || slices.ContainsFunc(c.planned, func(m policy.Mutation) bool { return m.Key == policy.AllowAllKey() && m.Delete })
	c.mu.Unlock()
	if done {
		return false
	}
	if present, err := c.allowAllPresent(ctx); err != nil || !present {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.allowAllWarned {
		return false
	}
	c.allowAllWarned = true
	return true
}

// ownedElsewhere returns why creating the fragment of key with value
// would take over an entry that is someone else's: a marked entry with
// other content in the policy file (another configuration owns it) or a
// change of this plan to the same key (another resource of this
// configuration). It returns "" when there is no such entry.
func (c *policyCoordinator) ownedElsewhere(ctx context.Context, key policy.Key, value json.RawMessage) string {
	c.mu.Lock()
	for _, m := range c.planned {
		if m.Key == key && !m.Delete && !sameJSON(m.Value, value) {
			c.mu.Unlock()
			return fmt.Sprintf("Another resource of this configuration also writes %s with other content. "+
				"Each fragment qtail owns has a unique key: give the resources different names.", key)
		}
	}
	c.mu.Unlock()
	f, err := c.store.Read(ctx, key)
	if err != nil || !f.Found || !f.Marked || sameJSON(f.Value, value) {
		return ""
	}
	return fmt.Sprintf("The policy file already has the entry marked %s, with other content: %s. "+
		"Another Terraform configuration sharing this tailnet policy probably manages it, and fragment keys are unique across "+
		"everyone who shares the file. Choose another key, or, if this configuration should own that entry, import it: "+
		"terraform import <address> %s", key.Marker(), f.Value, shellWord(key.ImportID()))
}

// check validates muts against the policy file as it would be after the
// changes planned so far and muts. It returns nil, the error of applying
// muts to the policy file (such as an *policy.UnmanagedConflictError),
// Tailscale's rejection, or a *validateCallError when Tailscale could not
// be asked.
func (c *policyCoordinator) check(ctx context.Context, muts []policy.Mutation) error {
	pc := &planCheck{muts: muts, done: make(chan error, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, pc)
	c.lastArrival = time.Now()
	if !c.running {
		c.running = true
		go c.run(context.WithoutCancel(ctx))
	}
	c.mu.Unlock()
	select {
	case err := <-pc.done:
		return err
	case <-ctx.Done():
		return &validateCallError{err: ctx.Err()}
	}
}

// run takes the queue batch by batch until it is empty.
func (c *policyCoordinator) run(ctx context.Context) {
	for {
		c.settle()
		c.mu.Lock()
		batch := c.queue
		c.queue = nil
		if len(batch) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		base := slices.Clone(c.planned)
		c.mu.Unlock()

		bctx, cancel := context.WithTimeout(ctx, planCheckTimeout)
		errs := c.checkBatch(bctx, base, batch)
		cancel()
		c.mu.Lock()
		for i, pc := range batch {
			// A change is planned unless it is refused; one that could not
			// be checked (Tailscale unreachable) is planned too.
			var unchecked *validateCallError
			if errs[i] == nil || errors.As(errs[i], &unchecked) {
				c.acceptLocked(pc.muts)
			}
		}
		c.mu.Unlock()
		for i, pc := range batch {
			pc.done <- errs[i]
		}
	}
}

// settle waits until no check has been queued for batchQuiet, or for
// batchMaxWait.
func (c *policyCoordinator) settle() {
	policy.WaitForQuiet(func() time.Time {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.lastArrival
	}, batchQuiet, batchMaxWait)
}

func (c *policyCoordinator) checkBatch(ctx context.Context, base []policy.Mutation, batch []*planCheck) []error {
	errs := make([]error, len(batch))
	if len(batch) > 1 {
		all := slices.Clone(base)
		for _, pc := range batch {
			all = append(all, pc.muts...)
		}
		if doc, err := c.store.Preview(ctx, all...); err == nil {
			err = c.validate(ctx, doc)
			if err == nil {
				return errs
			}
			if !policy.IsRejected(err) {
				for i := range errs {
					errs[i] = &validateCallError{err: err}
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
			errs[i] = c.checkOne(ctx, base, pc.muts)
		}()
	}
	wg.Wait()
	return errs
}

func (c *policyCoordinator) checkOne(ctx context.Context, base, muts []policy.Mutation) error {
	doc, err := c.store.Preview(ctx, append(slices.Clone(base), muts...)...)
	if err != nil {
		// A change planned before may no longer apply (the policy file was
		// read again meanwhile): check muts on their own.
		if doc, err = c.store.Preview(ctx, muts...); err != nil {
			return err
		}
	}
	if err := c.validate(ctx, doc); err != nil {
		if policy.IsRejected(err) {
			return err
		}
		return &validateCallError{err: err}
	}
	return nil
}

// shellWord quotes s for a POSIX shell when it needs quotes.
func shellWord(s string) string {
	if strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
