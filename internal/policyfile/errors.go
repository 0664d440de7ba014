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
	switch {
	case e.Key.Kind == KindAutoApprover && e.Key.Name == ExitNodeName:
		where = "autoApprovers.exitNode"
	case e.Key.Kind == KindAutoApprover:
		where = approverPath(e.Key)
	}
	return fmt.Sprintf("%s already exists in the policy file with a different value, %s, and is not managed by qtail; "+
		"%s; or remove it from the policy file by hand", where, e.Existing, naming().ImportHint(e.Key))
}
