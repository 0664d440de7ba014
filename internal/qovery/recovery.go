package qovery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
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
	if ferr != nil {
		return nil, fmt.Errorf("qovery: POST %s: creating %s: the outcome is unknown (%w), and looking it up failed (%w); check in the Qovery console whether it exists before trying again", path, object, err, ferr)
	}
	if conflict != "" {
		return nil, fmt.Errorf("qovery: POST %s: creating %s: the outcome was unknown (%v), and a look-up found another one: %w", path, object, err,
			&APIError{Status: http.StatusConflict, Method: http.MethodPost, Path: path, Detail: conflict})
	}
	if found != nil {
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

// doesNotExist reports whether e is a 400 whose detail says that the object
// does not exist, as the API answers for some deleted objects.
func doesNotExist(e *APIError) bool {
	return e.Status == http.StatusBadRequest && strings.Contains(strings.ToLower(e.Detail), "does not exist")
}

// confirmGone settles an answer about an object that may have been
// deleted: a 403 (the API answers it both for a deleted object and to a
// token that may not see the object) or a 400 saying that it does not
// exist. ids lists the objects of that kind in parent (the organization or
// environment the object belongs to), nil when the parent is unknown.
//
// When the list succeeds without id, the object is gone and err becomes a
// 404 *APIError (IsNotFound is true). When the list is refused too, the
// token cannot read the parent: err stays a 403 whose detail says so,
// never "gone", because Terraform would then forget an object that still
// exists. Without a list, a 400 saying the object does not exist is taken
// at its word (it is no permission answer) and a 403 is returned as is.
//
// A 404 (which the reads settle only once it lasted, see getObject) is
// proof enough without a list; with one, the list must agree: a 404 for
// an object that its parent still lists is a transient answer of a live
// object (taking it for a deletion would make Terraform forget a live
// operator and create another), reported as an error that is not a 404.
func confirmGone(ctx context.Context, err error, kind, id, parent string, ids func(context.Context) ([]string, error)) error {
	var e *APIError
	if !errors.As(err, &e) || (e.Status != http.StatusForbidden && e.Status != http.StatusNotFound && !doesNotExist(e)) {
		return err
	}
	if e.Status == http.StatusNotFound {
		if ids == nil {
			return err
		}
		if list, lerr := ids(ctx); lerr == nil && slices.Contains(list, id) {
			return &APIError{Status: http.StatusServiceUnavailable, Method: e.Method, Path: e.Path, Attempts: e.Attempts,
				Detail: fmt.Sprintf("the API answered 404 Not Found for %s %s, but %s still holds it: qtail takes this for a transient "+
					"answer, not a deletion. Run the command again", kind, id, parent)}
		}
		return err
	}
	gone := func(why string) error {
		return &APIError{Status: http.StatusNotFound, Method: e.Method, Path: e.Path, Attempts: e.Attempts,
			Detail: fmt.Sprintf("%s %s was deleted: the API answered %d %s for it and %s", kind, id, e.Status, http.StatusText(e.Status), why)}
	}
	if ids == nil {
		if doesNotExist(e) {
			return gone("says it does not exist")
		}
		return err
	}
	list, lerr := ids(ctx)
	if lerr == nil && !slices.Contains(list, id) {
		return gone(fmt.Sprintf("the list of %s, which this API token can read, no longer holds it", parent))
	}
	if StatusCode(lerr) == http.StatusForbidden {
		return &APIError{Status: http.StatusForbidden, Method: e.Method, Path: e.Path, Attempts: e.Attempts,
			Detail: fmt.Sprintf("%s (answered for %s %s); the list of %s is refused too: this API token has no access to %s, or lost it. "+
				"Check the token's role in the Qovery organization", e.Detail, kind, id, parent, parent)}
	}
	return err
}

// getObject reads the object at path into out. An answer of 404 is read
// again up to NotFoundRereads times, Config.NotFoundDelay apart, so that a
// lone 404 neither fails the read nor drops a live object from the state;
// an error that stays is settled by gone (see confirmGone).
func (c *Client) getObject(ctx context.Context, path string, out any, gone func(context.Context, error) error) error {
	err := c.do(ctx, http.MethodGet, path, nil, out)
	for i := 0; i < NotFoundRereads && StatusCode(err) == http.StatusNotFound; i++ {
		if sleep(ctx, c.notFoundDelay) != nil {
			break
		}
		err = c.do(ctx, http.MethodGet, path, nil, out)
	}
	if err != nil {
		return gone(ctx, err)
	}
	return nil
}

// Parent names what an object belongs to, for the calls that must tell a
// deleted object from one the token may not read (see IsNotFound): the
// environment of a service (InEnvironment), or the parent of a variable
// (VariableParent).
type Parent struct {
	scope, id string
}

// InEnvironment names the environment of an application, a container or a
// Helm service.
func InEnvironment(id string) Parent { return Parent{scope: VariableScopeEnvironment, id: id} }

// VariableParent names the parent of a variable: its scope (HELM,
// ENVIRONMENT...) and the id of the service, environment or project.
func VariableParent(scope, id string) Parent { return Parent{scope: scope, id: id} }

// parent returns the first of in, if any.
func parent(in []Parent) (Parent, bool) {
	for _, p := range in {
		if p.id != "" {
			return p, true
		}
	}
	return Parent{}, false
}

// environment returns the environment that in names, "" for none.
func environment(in []Parent) string {
	if p, ok := parent(in); ok && p.scope == VariableScopeEnvironment {
		return p.id
	}
	return ""
}

// Services by their path segment: what they are called, one and several.
var serviceNouns = map[string][2]string{
	"helm":        {"Helm service", "Helm services"},
	"application": {"application", "applications"},
	"container":   {"container", "containers"},
}

// serviceGone settles, with the environment's list of services of that
// kind (segment "helm", "application" or "container"), an answer about a
// service that may have been deleted (see confirmGone).
func (c *Client) serviceGone(ctx context.Context, err error, segment, id string, in []Parent) error {
	noun := serviceNouns[segment]
	envID := environment(in)
	if envID == "" {
		return confirmGone(ctx, err, noun[0], id, "", nil)
	}
	return confirmGone(ctx, err, noun[0], id, "the "+noun[1]+" of environment "+envID, func(ctx context.Context) ([]string, error) {
		items, err := getList[Ref](ctx, c, pathf("/environment/%s/"+segment, envID), nil)
		ids := make([]string, 0, len(items))
		for _, it := range items {
			ids = append(ids, it.ID)
		}
		return ids, err
	})
}
