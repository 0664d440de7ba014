package policyfragment

import (
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/qtail/terraform-provider-qtail/internal/fragment"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

var (
	_ resource.Resource                   = &autoApproverResource{}
	_ resource.ResourceWithConfigure      = &autoApproverResource{}
	_ resource.ResourceWithImportState    = &autoApproverResource{}
	_ resource.ResourceWithModifyPlan     = &autoApproverResource{}
	_ resource.ResourceWithValidateConfig = &autoApproverResource{}
)

// NewAutoApproverResource returns the qtail_auto_approver resource,
// described by fragment.AutoApprover.
func NewAutoApproverResource() resource.Resource {
	return &autoApproverResource{fragmentResource{kind: fragment.AutoApprover, ext: ownedApprovers{}}}
}

type autoApproverResource struct {
	fragmentResource
}

// ownedApprovers is the extension of the auto approver: the approvers one
// resource adds to a shared list have an owner, drawn when they are first
// written and kept in the owner attribute.
type ownedApprovers struct{}

// ownerAttr holds the owner of the approvers.
const ownerAttr = "owner"

// plannedOwner stands for the owner of new approvers in the plan-time
// checks: the owner is drawn when they are written.
const plannedOwner = "planned"

// planComputed plans id, marker and owner as unknown when the owner is
// still to be drawn (a creation, or approvers written before lists were
// shared).
func (ownedApprovers) planComputed(m *model, key policyfile.Key) bool {
	if key.Owner != "" {
		return false
	}
	for _, name := range []string{fragment.IDAttr, fragment.MarkerAttr, ownerAttr} {
		m.set(name, fragment.Unknown)
	}
	return true
}

// write draws the owner when the approvers have none yet.
func (ownedApprovers) write(m *model, key policyfile.Key) policyfile.Key {
	if key.Owner == "" {
		key.Owner = policyfile.NewOwner()
	}
	m.set(ownerAttr, key.Owner)
	return key
}

// checked gives new approvers the owner that stands for the one to be
// drawn.
func (ownedApprovers) checked(key policyfile.Key) policyfile.Key {
	if key.Owner == "" {
		key.Owner = plannedOwner
	}
	return key
}

// takeOver removes the part of the list that no owner marked, when the
// state's approvers have no owner (written before lists were shared, or
// imported from a list): it is this resource's, and its approvers get an
// owner.
func (ownedApprovers) takeOver(old policyfile.Key) []policyfile.Mutation {
	if old.Name == "" || old.Owner != "" {
		return nil
	}
	return []policyfile.Mutation{{Key: old, Delete: true, Overwrite: true}}
}

// owned is false: the approvers of a list are shared, and their owner is
// part of their key.
func (ownedApprovers) owned() bool { return false }
