package policyfragment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fragment"
	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// ModifyPlan plans id and marker, then checks a created or changed entry:
// that no other resource of the configuration writes it, locally against
// the policy file read by this provider instance (an entry it would
// overwrite), and with Tailscale's /acl/validate against the policy file
// as it would be after this change and the ones planned before it. It
// also warns while the default allow-all rule exists.
func (r *fragmentResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !r.Configured() {
		return
	}
	var state *model
	if !req.State.Raw.IsNull() {
		var diags diag.Diagnostics
		state, diags = readModel(ctx, r.kind, req.State)
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
	}
	if req.Plan.Raw.IsNull() {
		r.planDelete(state)
		return
	}
	plan, diags := readModel(ctx, r.kind, req.Plan)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	key, keyKnown := plan.fragmentKey()
	value, valueKnown := plan.entry()

	var oldKey policyfile.Key
	var oldValue json.RawMessage
	// A plan that replaces the resource creates the new entry.
	creating := state == nil || !keyKnown
	if state != nil {
		oldKey, _ = state.fragmentKey()
		oldValue, _ = state.entry()
		creating = creating || r.kind.Replaced(state.values(), plan.values())
	}
	drawn := false
	if keyKnown {
		if drawn = r.ext.planComputed(plan, key); !drawn {
			plan.setComputed(key, true)
		}
		resp.Diagnostics.Append(plan.save(ctx, &resp.Plan)...)
	}
	changing := creating || drawn || !valueKnown || !policyfile.SameJSON(oldValue, value)
	planner := r.planner()
	if planner != nil && keyKnown {
		defer func() { planner.Forget(key, changing && !resp.Diagnostics.HasError()) }()
	}
	if planner == nil {
		if changing && !r.Clients.TailnetUnknown() {
			// No Tailscale client: say so on the resources that need it.
			_, diags := r.Clients.Policy()
			resp.Diagnostics.Append(diags...)
		}
		return
	}
	if state != nil && keyKnown && oldKey.Name != "" && creating {
		// The key changed: Terraform replaces the resource, and plans its
		// creation next, without a prior state, which checks the new
		// entry. The old one goes.
		planner.Record(policyfile.Mutation{Key: oldKey, Delete: true})
		return
	}
	if keyKnown {
		if earlier, taken := planner.Claim(key, policy.Claim{Who: r.kind.Claimant(key)}); taken {
			resp.Diagnostics.AddError("Two Resources Claim One Policy Entry", duplicateClaimMessage(key, earlier))
			return
		}
	}
	if !changing {
		return
	}
	if planner.WarnAllowAll(ctx) {
		resp.Diagnostics.AddWarning("Default Allow-All Rule Still in the Policy File", allowAllWarning)
	}
	if !keyKnown || !valueKnown {
		return
	}
	muts := []policyfile.Mutation{{Key: r.ext.checked(key), Value: value, Overwrite: !creating}}
	if creating {
		if c := planner.OwnedElsewhere(ctx, key); c != nil {
			resp.Diagnostics.AddError("Policy Entry Already Owned", ownedElsewhereMessage(c))
			return
		}
	}
	if state != nil {
		muts = append(r.ext.takeOver(oldKey), muts...)
	}
	err := planner.Check(ctx, muts)
	r.reportCheck(ctx, &resp.Diagnostics, key, value, err, explainRefusal(ctx, planner, muts, err))
}

// planner returns the Planner of the plan (see plannerOf).
func (r *fragmentResource) planner() *policy.Planner { return plannerOf(r.Clients) }

// plannerOf returns the Planner of the plan of clients, or nil when the
// provider is not configured, or the tailnet is not known yet or has no
// client.
func plannerOf(c *conn.Clients) *policy.Planner {
	if c == nil || c.TailnetUnknown() || c.TailnetOrNil() == nil {
		return nil
	}
	return c.Planner()
}

// unmanagedWarning warns that the entry of key, of kind k, has members
// that qtail does not manage, if it has.
func unmanagedWarning(diags *diag.Diagnostics, k *fragment.Kind, key policyfile.Key, value json.RawMessage) {
	unmanaged := unmanagedMembers(value, k.Members())
	if len(unmanaged) == 0 {
		return
	}
	diags.AddWarning("Unmanaged Members in a Policy Entry",
		fmt.Sprintf("The %s %s in the policy file has members that qtail does not manage: %s. "+
			"They stay as they are until qtail next writes this %s, which replaces the whole entry with the configuration. "+
			"Remove them from the policy file, or keep them out of this resource's entry.",
			k.What, describeKey(key), strings.Join(unmanaged, ", "), k.What))
}

// expect tells the Planner that Terraform is on its way to plan the
// fragment of cfg, the configuration it validates: the checks and writes
// under way wait for it.
func (r *fragmentResource) expect(ctx context.Context, cfg *model) {
	if !r.Configured() {
		return
	}
	if key, ok := cfg.fragmentKey(); ok {
		if planner := r.planner(); planner != nil {
			planner.Expect(ctx, key)
		}
	}
}

// duplicateClaimMessage says that this resource and an earlier one of the
// plan write the same entry, and what to do.
func duplicateClaimMessage(key policyfile.Key, earlier policy.Claim) string {
	return fmt.Sprintf("This resource and %s, another resource of this configuration, both write %s: "+
		"each apply would undo the other's, and every plan would show a change. "+
		"Terraform does not tell a provider the address of the resources it plans, so qtail can only name the other one by what it writes; "+
		"look for it in the configuration and its modules.\n\n%s", earlier.Who, describeKey(key), kindOf(key.Kind).DuplicateAdvice)
}

// reportCheck adds what the plan-time check of the change of key found
// (see policy.Planner.Check); explained says which tests a refusal fails
// and why (see explainRefusal).
func (r *fragmentResource) reportCheck(ctx context.Context, diags *diag.Diagnostics, key policyfile.Key, value json.RawMessage, err error, explained string) {
	var conflict *policyfile.UnmanagedConflictError
	var owned *policyfile.OwnedError
	var unchecked *policy.ValidateCallError
	var tooLarge *policy.TooLargeError
	switch {
	case err == nil:
	case errors.As(err, &conflict):
		diags.AddError("Entry Exists Without qtail's Marker", conflict.Error()+".")
	case errors.As(err, &owned):
		diags.AddError("Policy Entry Owned by Another Configuration", ownedByOtherMessage(r.kind, key, owned.Owner))
	case errors.As(err, &unchecked) && !policy.IsRejected(err):
		diags.AddWarning("Policy Change Not Validated",
			fmt.Sprintf("qtail could not ask Tailscale to validate the policy file with %s at plan time; "+
				"Tailscale checks it again when it is written, so nothing needs to be done unless the apply fails.\n\n%v", key, unchecked.Err))
	case errors.As(err, &tooLarge):
		diags.AddError("Policy File Too Large", fmt.Sprintf("qtail refuses to add %s: %v.", key, tooLarge))
	case policy.IsRejected(err):
		detail := fmt.Sprintf("Tailscale refuses the policy file as it would be with %s:\n\n%v%s\n\nChange the configuration so that the entry is valid.%s",
			key, err, explained, rejectionHint(ctx, r.Clients, err))
		if at, ok := blamedPath(r.kind, value, err.Error()); ok {
			diags.AddAttributeError(at, "Tailscale Rejects the Policy Change", detail)
			return
		}
		diags.AddError("Tailscale Rejects the Policy Change", detail)
	default:
		diags.AddError("Invalid Policy Change", fmt.Sprintf("qtail cannot apply %s to the policy file: %v. "+
			"Fix the policy file or the configuration, then plan again.", key, err))
	}
}

// planDelete records a planned removal, so that the entries planned after
// it are validated without it.
func (r *fragmentResource) planDelete(state *model) {
	if state == nil || r.Clients.TailnetOrNil() == nil {
		return
	}
	key, ok := state.fragmentKey()
	if !ok {
		return
	}
	if planner := r.Clients.Planner(); planner != nil {
		planner.Record(policyfile.Mutation{Key: key, Delete: true})
	}
}

const allowAllWarning = "The policy file still holds the rule that every new tailnet ships with, " +
	"a grant with src [\"*\"], dst [\"*\"] and ip [\"*\"] (or the ACL with src [\"*\"] and dst [\"*:*\"]). " +
	"It lets every device reach every other device, including every proxy qtail puts on the tailnet, " +
	"so the grants of this configuration restrict nothing while it is there. " +
	"Once your grants cover the access you need, remove the rule with a qtail_allow_all_removal resource that depends on them " +
	"(if this configuration already has one, the apply removes the rule and this warning goes away), " +
	"or delete it in the Tailscale admin console. The qtail_policy data source reports it as findings.allow_all_present."

// notFoundRE reads what a rejection says is missing: Tailscale answers
// `tag not found: "tag:web"` or `group not found: "group:ops"`.
var notFoundRE = regexp.MustCompile(`\b(tag|group) not found: "([^"]+)"`)

// rejectionHint adds advice to a rejection that names something missing:
// the names the planned policy file declares that it may have been meant
// for, and how to declare what is new.
func rejectionHint(ctx context.Context, c *conn.Clients, err error) string {
	if !strings.Contains(err.Error(), "not found") {
		return ""
	}
	var b strings.Builder
	if m := notFoundRE.FindStringSubmatch(err.Error()); m != nil && c != nil {
		section := map[string]string{"tag": "tagOwners", "group": "groups"}[m[1]]
		if body, d := c.PlannedPolicy(ctx); !d.HasError() {
			if doc, perr := policyfile.Parse(body); perr == nil {
				if near := policyfile.Nearest(m[2], doc.DeclaredNames(section), 3); len(near) > 0 {
					fmt.Fprintf(&b, "\n\nDid you mean %s? The policy file's %s declares %s.", orList(near), section, andList(near))
				}
			}
		}
	}
	if m := notFoundRE.FindStringSubmatch(err.Error()); m != nil && m[1] == "group" {
		b.WriteString("\n\nGroups are written by hand in the policy file (groups); qtail does not manage them.")
		return b.String()
	}
	b.WriteString("\n\nIf the tag is new, declare it with a qtail_tag_owner in the configuration that manages this tailnet's tag owners " +
		"(its platform root, when several configurations share the tailnet). If a resource of this configuration declares it, " +
		"refer to its attribute, for example src = [qtail_tag_owner.web.tag], so that Terraform plans it first " +
		"and qtail validates both changes together.")
	return b.String()
}

// orList quotes names, joined with "or".
func orList(names []string) string { return joinQuoted(names, " or ") }

// andList quotes names, joined with "and".
func andList(names []string) string { return joinQuoted(names, " and ") }

func joinQuoted(names []string, last string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + last + q[len(q)-1]
}

// ownedElsewhereMessage says whose the entry is and what to do.
func ownedElsewhereMessage(c *policy.OwnershipConflict) string {
	return ownedElsewhereMessageFor(c, kindOf(c.Key.Kind).Type)
}

// ownedElsewhereMessageFor is ownedElsewhereMessage for a resource of type
// resourceType, whose import ID may name the entry alone.
func ownedElsewhereMessageFor(c *policy.OwnershipConflict, resourceType string) string {
	marker, whose := c.Key.List().Marker(), ""
	if c.Owner != "" {
		marker += "#" + c.Owner
		whose = fmt.Sprintf("It belongs to the resource whose owner attribute is %q: look for that owner in the states of the "+
			"other Terraform configurations that share this tailnet policy (terraform state show prints it).", c.Owner)
	} else {
		whose = "Its marker names no owner: it was written before markers named their owner, by a configuration that qtail cannot tell; " +
			"the next refresh of that configuration writes its owner in the marker."
	}
	return fmt.Sprintf("The policy file already has the entry marked %s, with the content %s. %s "+
		"Two configurations that own one entry would each delete it for the other, so qtail does not create it again, whatever its content. "+
		"Choose another key, or, if this configuration should own that entry, remove it from the other configuration "+
		"(a removed block, or terraform state rm) and import it here with %s",
		marker, c.Existing, whose, tfx.ImportHint(resourceType, c.Key.ImportID()))
}

// ownedByOtherMessage says that the entry of key, of kind k, which the
// state of this resource names, is now marked for another owner.
func ownedByOtherMessage(k *fragment.Kind, key policyfile.Key, owner string) string {
	return fmt.Sprintf("The %s %s is marked for the owner %q in the policy file, not for this resource's owner %q: "+
		"another configuration that shares this tailnet policy owns it now, and qtail neither changes nor removes it from here. "+
		"Remove this resource from the configuration, or give it another key.", k.What, describeKey(key), owner, key.Owner)
}
