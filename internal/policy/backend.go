package policy

import (
	"context"
	"errors"
)

// Snapshot is the policy file as the server returned it.
type Snapshot struct {
	// HuJSON is the policy file, byte for byte, comments included.
	HuJSON []byte
	// ETag is the server's ETag for HuJSON, quotes included.
	ETag string
}

// Backend is the raw policy file API of one tailnet.
type Backend interface {
	// Get reads the policy file as HuJSON with its ETag.
	Get(ctx context.Context) (Snapshot, error)
	// Set replaces the policy file if its ETag is still etag and returns
	// the new ETag. A mismatch is an error for which IsPreconditionFailed
	// is true.
	Set(ctx context.Context, hujson []byte, etag string) (string, error)
	// Validate asks the server whether hujson would be accepted; a
	// rejection is an error carrying the server's message.
	Validate(ctx context.Context, hujson []byte) error
}

// ErrPreconditionFailed is the error a Backend may wrap when the policy
// changed since it was read (HTTP 412).
var ErrPreconditionFailed = errors.New("precondition failed, invalid old hash")

// IsPreconditionFailed reports whether err means the policy changed since
// it was read: err wraps ErrPreconditionFailed, or carries HTTP status 412
// through an HTTPStatus() int method.
func IsPreconditionFailed(err error) bool {
	if errors.Is(err, ErrPreconditionFailed) {
		return true
	}
	var s interface{ HTTPStatus() int }
	return errors.As(err, &s) && s.HTTPStatus() == 412
}

// ErrRejected is the error a Backend may wrap when the server refused the
// policy itself (HTTP 400: invalid policy or failing tests).
var ErrRejected = errors.New("policy rejected")

// IsRejected reports whether err means the server refused the policy
// itself: err wraps ErrRejected, or carries HTTP status 400 through an
// HTTPStatus() int method.
func IsRejected(err error) bool {
	if errors.Is(err, ErrRejected) {
		return true
	}
	var s interface{ HTTPStatus() int }
	return errors.As(err, &s) && s.HTTPStatus() == 400
}
