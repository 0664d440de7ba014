package policyfragment

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
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

// fragmentResource implements Create, Read, Update, Delete and ModifyPlan
// for the fragment resources. M is the model type.
type fragmentResource[M any, P fragmentPtr[M]] struct {
	conn.ResourceBase
	// what names an entry of this kind in messages, e.g. "grant".
	what string
	// importHint tells how to take over an entry that has no marker, for
	// an import that finds nothing.
	importHint string
	// members are the lower-cased member names of an entry that the model
	// reads (grants and tests are objects); other members are reported.
	members []string
	// listAttr is the attribute that holds the entry when the entry is a
	// list (the approvers of a route, the owners of a tag).
	listAttr string
}

func (r *fragmentResource[M, P]) policyStore(diags *diag.Diagnostics) *policy.Store {
	store, d := r.Clients.Policy()
	diags.Append(d...)
	return store
}

// change returns what a Create (creating) or an Update writes: the store,
// the key and the value of the planned entry.
func (r *fragmentResource[M, P]) change(plan P, creating bool, diags *diag.Diagnostics) (*policy.Store, policyfile.Key, json.RawMessage, bool) {
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
		diags.AddError("Unknown Values at Apply Time", "An attribute of the "+r.what+" was still unknown when it was "+verb+
			", which Terraform does not allow. Please report this issue to the qtail developers.")
		return nil, policyfile.Key{}, nil, false
	}
	return store, key, value, true
}

func (r *fragmentResource[M, P]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	plan := P(new(M))
	resp.Diagnostics.Append(req.Plan.Get(ctx, plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	store, key, value, ok := r.change(plan, true, &resp.Diagnostics)
	if !ok {
		return
	}
	key = drawOwner(plan, key)
	if err := store.Apply(ctx, policyfile.Mutation{Key: key, Value: value}); err != nil {
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
		tfx.APIError(&resp.Diagnostics, "read the policy file", err)
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
	unmanagedWarning(&resp.Diagnostics, r.what, key, f.Value, r.members)
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
	store, key, value, ok := r.change(plan, false, &resp.Diagnostics)
	if !ok {
		return
	}
	if oldKey, _ := state.fragmentKey(); key.Kind == policyfile.KindAutoApprover && oldKey.Owner == "" {
		// Approvers written before lists were shared, or imported from a
		// list: the part of the list no owner marked is this resource's;
		// its approvers get an owner.
		if err := store.Apply(ctx, policyfile.Mutation{Key: oldKey, Delete: true, Overwrite: true}); err != nil {
			fragmentWriteError(&resp.Diagnostics, "take over "+describeKey(oldKey)+" in the policy file", err)
			return
		}
	}
	key = drawOwner(plan, key)
	// A grant or a test whose marker a person removed is found by its
	// content only: adopt it as it is before changing it, so that the
	// change does not add a second entry.
	if _, marker := state.computed(); marker.ValueString() == "" && !keyedKind(key.Kind) {
		if old, ok := state.entry(); ok && !policyfile.SameJSON(old, value) {
			if err := store.Apply(ctx, policyfile.Mutation{Key: key, Value: old}); err != nil {
				fragmentWriteError(&resp.Diagnostics, "adopt "+key.String()+" in the policy file", err)
				return
			}
		}
	}
	if err := store.Apply(ctx, policyfile.Mutation{Key: key, Value: value, Overwrite: true}); err != nil {
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
			if err := store.Apply(ctx, policyfile.Mutation{Key: key, Value: old, Overwrite: true}); err != nil {
				fragmentWriteError(&resp.Diagnostics, "adopt "+key.String()+" before deleting it", err)
				return
			}
		}
	}
	if err := store.Apply(ctx, policyfile.Mutation{Key: key, Delete: true}); err != nil {
		fragmentWriteError(&resp.Diagnostics, "remove "+key.String()+" from the policy file", err)
	}
}
