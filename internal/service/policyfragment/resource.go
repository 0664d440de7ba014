package policyfragment

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fragment"
	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
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
//   - ModifyPlan (plan.go) plans id and marker, checks the change against
//     the policy file as it would be after it and the changes planned
//     before it (policy.Planner, Tailscale's /acl/validate), and warns
//     while the default allow-all rule is in the file.
//   - Create, Update and Delete are changes to the policy.Store, whose
//     Batcher gathers the changes that Terraform starts together into one
//     conditional write.
//   - A grant, a tag owner or a test is one resource's: its marker names
//     the resource's owner (ownedEntry), which Read writes into a marker
//     that names none, and Delete leaves an entry marked for another.

// fragmentResource implements the fragment resources: their metadata,
// schema, configuration checks and import from the description of their
// kind, and Create, Read, Update, Delete and ModifyPlan. What a kind adds
// to this life cycle is its extension.
type fragmentResource struct {
	conn.ResourceBase
	kind *fragment.Kind
	ext  extension
}

// extension is what a kind of fragment adds to the shared life cycle. A
// kind that adds nothing has plainFragment; one that adds a part embeds
// plainFragment and overrides what it needs.
type extension interface {
	// planComputed plans the computed attributes of m for its key, and
	// reports whether it did; otherwise they are planned as qtail keeps
	// them for key (see setComputed).
	planComputed(m *model, key policyfile.Key) bool
	// write returns the key under which m's entry is written, and sets
	// the attributes of m that it makes.
	write(m *model, key policyfile.Key) policyfile.Key
	// checked is the key under which the plan checks the entry of key.
	checked(key policyfile.Key) policyfile.Key
	// takeOver returns the changes that come before an update of the
	// entry of the state's key old.
	takeOver(old policyfile.Key) []policyfile.Mutation
	// owned reports whether the entry is one resource's, known by the
	// owner in its marker (see ownedEntry).
	owned() bool
}

// plainFragment is the extension of the kinds that add nothing to the
// shared life cycle.
type plainFragment struct{}

func (plainFragment) planComputed(*model, policyfile.Key) bool          { return false }
func (plainFragment) write(_ *model, key policyfile.Key) policyfile.Key { return key }
func (plainFragment) checked(key policyfile.Key) policyfile.Key         { return key }
func (plainFragment) takeOver(policyfile.Key) []policyfile.Mutation     { return nil }
func (plainFragment) owned() bool                                       { return false }

// ownedEntry is the extension of the grant, the tag owner and the policy
// test: the entry is this resource's alone, and its marker names the
// owner, drawn when the resource first writes it (or first reads an
// entry marked before markers named their owner) and kept in the owner
// attribute. The plan refuses to create an entry that the policy file
// already has marked, and a destroy removes the entry only while its
// marker names this resource's owner.
type ownedEntry struct{ plainFragment }

// planComputed plans the owner as unknown when it is still to be drawn:
// a creation, or a state that names no owner (the framework would plan
// the state's null).
func (ownedEntry) planComputed(m *model, key policyfile.Key) bool {
	if key.Owner == "" {
		m.set(fragment.OwnerAttr, fragment.Unknown)
	}
	return false
}

// write draws the owner when the entry has none yet.
func (ownedEntry) write(m *model, key policyfile.Key) policyfile.Key {
	if key.Owner == "" {
		key.Owner = policyfile.NewOwner()
	}
	m.set(fragment.OwnerAttr, key.Owner)
	return key
}

func (ownedEntry) owned() bool { return true }

func (r *fragmentResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + strings.TrimPrefix(r.kind.Type, fragment.Provider)
}

func (r *fragmentResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = kindSchema(r.kind)
}

// ValidateConfig checks what one attribute needs of another, and tells the
// plan-time checks that this fragment is on its way.
func (r *fragmentResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	cfg, diags := readModel(ctx, r.kind, req.Config)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	r.expect(ctx, cfg)
	for _, p := range r.kind.Validate(cfg.values()) {
		resp.Diagnostics.AddAttributeError(path.Root(p.Attr), p.Summary, p.Detail)
	}
}

// ImportState sets id and the attributes of the key that the import ID
// names; Read finds the rest.
func (r *fragmentResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	key, err := r.kind.ImportKey(req.ID)
	if err != nil {
		tfx.InvalidImportID(&resp.Diagnostics, req.ID, err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(fragment.IDAttr), req.ID)...)
	v := r.kind.KeyValues(key)
	for _, a := range r.kind.Attrs {
		if val := v[a.Name]; val != nil {
			resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(a.Name), attrValue(a.Type, val))...)
		}
	}
}

func (r *fragmentResource) policyStore(diags *diag.Diagnostics) *policy.Store {
	store, d := r.Clients.Policy()
	diags.Append(d...)
	return store
}

// change returns what a Create (creating) or an Update writes: the store,
// the key and the value of the planned entry.
func (r *fragmentResource) change(plan *model, creating bool, diags *diag.Diagnostics) (*policy.Store, policyfile.Key, json.RawMessage, bool) {
	store := r.policyStore(diags)
	if store == nil {
		return nil, policyfile.Key{}, nil, false
	}
	key, ok := plan.fragmentKey()
	value, known := plan.entry()
	if !ok || !known {
		verb := "updated"
		if creating {
			verb = "created"
		}
		diags.AddError("Unknown Values at Apply Time", "An attribute of the "+r.kind.What+" was still unknown when it was "+verb+
			", which Terraform does not allow. Please report this issue to the qtail developers.")
		return nil, policyfile.Key{}, nil, false
	}
	return store, key, value, true
}

func (r *fragmentResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	plan, diags := readModel(ctx, r.kind, req.Plan)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	store, key, value, ok := r.change(plan, true, &resp.Diagnostics)
	if !ok {
		return
	}
	key = r.ext.write(plan, key)
	add := policyfile.Mutation{Key: key, Value: value}
	if err := store.Apply(ctx, add); err != nil && !r.wentThrough(ctx, store, key, value) {
		explainedWriteError(ctx, &resp.Diagnostics, store, "add "+key.String()+" to the policy file", []policyfile.Mutation{add}, err)
		return
	}
	plan.setComputed(key, true)
	resp.Diagnostics.Append(plan.save(ctx, &resp.State)...)
}

// wentThrough reports, after a failed write of the entry of key with
// value, whether the policy file has it all the same: the write went
// through and its answer was lost. Only this write can have marked the
// entry with the owner that it has just drawn.
func (r *fragmentResource) wentThrough(ctx context.Context, store *policy.Store, key policyfile.Key, value json.RawMessage) bool {
	if !r.ext.owned() || key.Owner == "" {
		return false
	}
	if _, err := store.Refresh(ctx); err != nil {
		return false
	}
	f, err := store.Read(ctx, key)
	return err == nil && f.Found && f.Marked && f.Owner == key.Owner && policyfile.SameJSON(f.Value, value)
}

func (r *fragmentResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, diags := readModel(ctx, r.kind, req.State)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	store := r.policyStore(&resp.Diagnostics)
	if store == nil {
		return
	}
	key, ok := state.fragmentKey()
	if !ok {
		resp.Diagnostics.AddError("Invalid State", "The state of this "+r.kind.What+" does not name its policy entry. "+
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
		tfx.APIError(&resp.Diagnostics, "read the policy file", err)
		return
	}
	if !f.Found {
		if !complete {
			resp.Diagnostics.AddError("Nothing to Import",
				fmt.Sprintf("The policy file has no %s %s. %s", r.kind.What, describeKey(key), r.kind.ImportHint))
			return
		}
		resp.State.RemoveResource(ctx)
		return
	}
	if resp.Diagnostics.Append(state.setEntry(key, f.Value)...); resp.Diagnostics.HasError() {
		return
	}
	unmanagedWarning(&resp.Diagnostics, r.kind, key, f.Value)
	if r.ext.owned() && f.Marked {
		key = r.readOwner(ctx, store, key, f, &resp.Diagnostics)
		state.set(fragment.OwnerAttr, key.Owner)
	}
	state.setComputed(key, f.Marked)
	resp.Diagnostics.Append(state.save(ctx, &resp.State)...)
}

// readOwner returns key with the owner of the resource whose state has
// key, after Read found its entry f marked. A state without an owner (an
// import, or a state from before markers named their owner) takes the
// marker's. A marker without an owner, written before markers named it,
// gets the resource's owner (drawn now when the state has none either),
// in place: the entry stays as it is, and the plan shows no change. An
// entry marked for another owner is left to it, with a warning.
func (r *fragmentResource) readOwner(ctx context.Context, store *policy.Store, key policyfile.Key, f policyfile.Fragment, diags *diag.Diagnostics) policyfile.Key {
	switch {
	case key.Owner == "" && f.Owner != "":
		key.Owner = f.Owner
	case f.Owner == "":
		if key.Owner == "" {
			key.Owner = policyfile.NewOwner()
		}
		if err := store.Apply(ctx, policyfile.Mutation{Key: key, Value: f.Value}); err != nil {
			diags.AddWarning("Owner Not Written in the Marker",
				fmt.Sprintf("qtail could not write the owner %q of this %s in the marker of %s, which names none "+
					"(it was written before markers named their owner): %v. The state keeps the owner, and the next refresh writes it again.",
					key.Owner, r.kind.What, describeKey(key), err))
		}
	case f.Owner != key.Owner:
		diags.AddWarning("Policy Entry Owned by Another Configuration", ownedByOtherMessage(r.kind, key, f.Owner))
	}
	return key
}

func (r *fragmentResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	plan, diags := readModel(ctx, r.kind, req.Plan)
	resp.Diagnostics.Append(diags...)
	state, diags := readModel(ctx, r.kind, req.State)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	store, key, value, ok := r.change(plan, false, &resp.Diagnostics)
	if !ok {
		return
	}
	oldKey, _ := state.fragmentKey()
	for _, m := range r.ext.takeOver(oldKey) {
		if err := store.Apply(ctx, m); err != nil {
			fragmentWriteError(&resp.Diagnostics, "take over "+describeKey(m.Key)+" in the policy file", err)
			return
		}
	}
	key = r.ext.write(plan, key)
	// A grant or a test whose marker a person removed is found by its
	// content only: adopt it as it is before changing it, so that the
	// change does not add a second entry.
	if state.str(fragment.MarkerAttr) == "" && !r.kind.Keyed() {
		if old, ok := state.entry(); ok && !policyfile.SameJSON(old, value) {
			if err := store.Apply(ctx, policyfile.Mutation{Key: key, Value: old}); err != nil {
				fragmentWriteError(&resp.Diagnostics, "adopt "+key.String()+" in the policy file", err)
				return
			}
		}
	}
	update := policyfile.Mutation{Key: key, Value: value, Overwrite: true}
	if err := store.Apply(ctx, update); err != nil {
		explainedWriteError(ctx, &resp.Diagnostics, store, "update "+key.String()+" in the policy file", []policyfile.Mutation{update}, err)
		return
	}
	plan.setComputed(key, true)
	resp.Diagnostics.Append(plan.save(ctx, &resp.State)...)
}

func (r *fragmentResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, diags := readModel(ctx, r.kind, req.State)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
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
	if r.ext.owned() && key.Owner != "" {
		f, err := store.Read(ctx, key)
		if err != nil {
			tfx.APIError(&resp.Diagnostics, "read the policy file", err)
			return
		}
		if f.Found && f.Marked && f.Owner != "" && f.Owner != key.Owner {
			resp.Diagnostics.AddWarning("Policy Entry Left to Its Owner", ownedByOtherMessage(r.kind, key, f.Owner)+
				" qtail leaves it in the policy file, and this resource leaves the state.")
			return
		}
	}
	// An entry whose marker a person removed is still this resource's:
	// mark it again so that the delete finds it.
	if state.str(fragment.MarkerAttr) == "" {
		if old, ok := state.entry(); ok {
			if err := store.Apply(ctx, policyfile.Mutation{Key: key, Value: old, Overwrite: true}); err != nil {
				fragmentWriteError(&resp.Diagnostics, "adopt "+key.String()+" before deleting it", err)
				return
			}
		}
	}
	remove := policyfile.Mutation{Key: key, Delete: true}
	if err := store.Apply(ctx, remove); err != nil {
		explainedWriteError(ctx, &resp.Diagnostics, store, "remove "+key.String()+" from the policy file", []policyfile.Mutation{remove}, err)
	}
}
