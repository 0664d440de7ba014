package policy

import (
	"encoding/json"
	"fmt"
	"strings"
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
		where = fmt.Sprintf("autoApprovers.routes[%q]", e.Key.entryKey())
	}
	return fmt.Sprintf("%s already exists in the policy file with a different value, %s, and is not managed by qtail; "+
		"%s; or remove it from the policy file by hand", where, e.Existing, naming().ImportHint(e.Key))
}

// ContentionError reports that every attempt to write the policy file was
// refused with HTTP 412 because the file kept changing between the read
// and the write. Nothing of the batch was written.
type ContentionError struct {
	// Attempts is the number of writes tried.
	Attempts int
	// Err is the last refusal.
	Err error
}

// Error says how many attempts were made and why they failed.
func (e *ContentionError) Error() string {
	return fmt.Sprintf("policy: gave up after %d attempts to write the policy file: it kept changing underneath "+
		"(each write was refused with HTTP 412 because the file had changed since it was read; last error: %v); "+
		"nothing was written, run the apply again", e.Attempts, e.Err)
}

// Unwrap returns the last refusal.
func (e *ContentionError) Unwrap() error { return e.Err }

// RejectedError reports that the server refused the policy file that
// contained a fragment (HTTP 400: an invalid policy or a failing test).
type RejectedError struct {
	// Keys are the fragments of the refused write.
	Keys []Key
	// Err is the server's error, with its message.
	Err error
}

// Error names the fragments and gives the server's message.
func (e *RejectedError) Error() string {
	names := make([]string, len(e.Keys))
	for i, k := range e.Keys {
		names[i] = k.String()
	}
	return fmt.Sprintf("policy: the server rejected the policy file with %s: %v", strings.Join(names, ", "), e.Err)
}

// Unwrap returns the server's error.
func (e *RejectedError) Unwrap() error { return e.Err }
