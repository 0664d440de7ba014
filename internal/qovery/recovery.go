package qovery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// IsAmbiguous reports whether err leaves the outcome of a create unknown:
// the connection failed after the request was sent (*retry.AmbiguousError),
// or a gateway answered 502 or 504. The object may or may not exist.
//
// The Create methods settle such an outcome themselves (see
// CreateHelmRepository); an error they return is ambiguous only when even
// that failed.
func IsAmbiguous(err error) bool {
	return retry.IsAmbiguous(err) || retry.AmbiguousStatus(StatusCode(err))
}

// createdSlack widens the window in which an object found after an
// ambiguous create counts as created by it: the server's clock is only
// known to about a second, and the server stamps the object some time
// after the request left.
const createdSlack = 5 * time.Second

// lookup finds the object an ambiguous create may have made, by its
// natural key. since returns the time the create was sent, on the clock of
// the server that answered a (it is an answer of the look-up), less
// createdSlack. found is nil when there is no such object; a non-empty
// conflict describes an object that holds the natural key but was not made
// by this request, so that the create would have been refused.
type lookup[T any] func(ctx context.Context, since func(a answer) time.Time) (found *T, conflict string, err error)

// createSettled sends a create with create. When the outcome is ambiguous
// (IsAmbiguous), it never sends the create again blindly: it looks the
// object up with find. Found, it is returned as if the create had answered.
// Not found, the create is sent once more. Any other outcome is an error
// that says what happened at each step; a conflict is a 409 *APIError, as
// the create itself would have answered.
func createSettled[T any](ctx context.Context, path, object string, create func(context.Context) (*T, error), find lookup[T]) (*T, error) {
	start := time.Now()
	out, err := create(ctx)
	if err == nil || !IsAmbiguous(err) || ctx.Err() != nil {
		return out, err
	}
	since := func(a answer) time.Time { return a.serverTime(start).Add(-createdSlack) }
	found, conflict, ferr := find(ctx, since)
	switch {
	case ferr != nil:
		return nil, fmt.Errorf("qovery: POST %s: creating %s: the outcome is unknown (%w), and looking it up failed (%w); check in the Qovery console whether it exists before trying again", path, object, err, ferr)
	case conflict != "":
		return nil, fmt.Errorf("qovery: POST %s: creating %s: the outcome was unknown (%v), and a look-up found another one: %w", path, object, err,
			&APIError{Status: http.StatusConflict, Method: http.MethodPost, Path: path, Detail: conflict})
	case found != nil:
		return found, nil
	}
	out, err2 := create(ctx)
	if err2 == nil {
		return out, nil
	}
	hint := ""
	if IsAmbiguous(err2) {
		hint = "; check in the Qovery console whether it exists before trying again"
	}
	return nil, fmt.Errorf("qovery: POST %s: creating %s: the outcome of the first attempt was unknown (%v) and a look-up did not find it, so it was sent once more: %w%s", path, object, err, err2, hint)
}

// checkCreated returns a conflict when the object found by its natural key
// was created before the request was sent.
func checkCreated(kind, name, id string, created, since time.Time) string {
	if created.IsZero() || !created.Before(since) {
		return ""
	}
	return fmt.Sprintf("%s %s already exists (%s, created at %s, before this request)", kind, name, id, created.UTC().Format(time.RFC3339))
}

// confirmGone settles a 403 answered for an organization object. The API
// answers 403 both for an object that was deleted and to a token that may
// not see it. ids lists the organization's objects of that kind, which the
// token can read: when it succeeds without id, the object is gone and err
// becomes a 404 *APIError (IsNotFound is true). Otherwise err is returned
// as is: a 403 is never taken for "gone" without that proof, because
// Terraform would then forget an object that still exists.
func confirmGone(ctx context.Context, err error, kind, id string, ids func(context.Context) ([]string, error)) error {
	var e *APIError
	if !errors.As(err, &e) || e.Status != http.StatusForbidden {
		return err
	}
	list, lerr := ids(ctx)
	if lerr != nil || slices.Contains(list, id) {
		return err
	}
	return &APIError{
		Status:   http.StatusNotFound,
		Method:   e.Method,
		Path:     e.Path,
		Detail:   fmt.Sprintf("%s %s was deleted: the API answered 403 Forbidden for it and the organization's list, which this token can read, no longer holds it", kind, id),
		Attempts: e.Attempts,
	}
}
