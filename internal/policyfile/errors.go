package policyfile

import (
	"encoding/json"
	"fmt"
)

// UnmanagedConflictError reports that a keyed entry (a tag owner or an
// auto approver) already exists in the policy file without qtail's marker
// and with other content than the one to write. qtail does not overwrite
// it: it can be imported, or removed by hand.
type UnmanagedConflictError struct {
	// Key is the fragment qtail was asked to write.
	Key Key
	// Existing is the value found in the policy file, in canonical JSON.
	Existing json.RawMessage
}

// Error says where the entry is, what it holds and how to import it.
func (e *UnmanagedConflictError) Error() string {
	where := fmt.Sprintf("tagOwners[%q]", e.Key.Name)
	if e.Key.Kind == KindAutoApprover {
		where = approverPath(e.Key)
	}
	return fmt.Sprintf("%s already exists in the policy file with a different value, %s, and is not managed by qtail; "+
		"%s; or remove it from the policy file by hand", where, e.Existing, naming().ImportHint(e.Key))
}

// OwnedError reports that the entry of a key is marked for another owner:
// another configuration that shares the policy file owns it. qtail
// neither changes nor removes it.
type OwnedError struct {
	// Key is the fragment qtail was asked to write, with its owner.
	Key Key
	// Owner is the owner that the entry's marker names.
	Owner string
	// Existing is the value found in the policy file, in canonical JSON.
	Existing json.RawMessage
}

// Error says whose the entry is.
func (e *OwnedError) Error() string {
	return fmt.Sprintf("%s is marked %s in the policy file: it belongs to the owner %q, not to %q, and qtail leaves it as it is",
		e.Key, e.Key.List().Marker()+ownerSep+e.Owner, e.Owner, e.Key.Owner)
}
