package qovery

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestConfirmGoneAnswers(t *testing.T) {
	listOf := func(ids []string, err error) func(context.Context) ([]string, error) {
		return func(context.Context) ([]string, error) { return ids, err }
	}
	forbidden := &APIError{Status: 403, Method: "GET", Path: "/helm/h", Detail: "no access", Attempts: 2}
	notFound := &APIError{Status: 404, Method: "GET", Path: "/helm/h", Detail: "missing"}
	noSuch := &APIError{Status: 400, Method: "GET", Path: "/helm/h", Detail: "Helm Does Not Exist"}
	invalid := &APIError{Status: 400, Method: "GET", Path: "/helm/h", Detail: "invalid"}
	const parent = "the Helm services of environment e"
	for _, tc := range []struct {
		name   string
		err    error
		ids    func(context.Context) ([]string, error)
		same   bool
		status int
		detail string
	}{
		{"not an API error", errors.New("dial"), listOf(nil, nil), true, 0, ""},
		{"another status", &APIError{Status: 500}, listOf(nil, nil), true, 0, ""},
		{"a 400 about something else", invalid, listOf(nil, nil), true, 0, ""},
		{"404 without a list", notFound, nil, true, 0, ""},
		{"404 the list confirms", notFound, listOf([]string{"x"}, nil), true, 0, ""},
		{"404 the list fails", notFound, listOf([]string{"h"}, errors.New("boom")), true, 0, ""},
		{"404 the list still holds it", notFound, listOf([]string{"x", "h"}, nil), false, 503,
			"the API answered 404 Not Found for Helm service h, but " + parent + " still holds it: qtail takes this for a transient answer, not a deletion. Run the command again"},
		{"403 without a list", forbidden, nil, true, 0, ""},
		{"400 does not exist without a list", noSuch, nil, false, 404,
			"Helm service h was deleted: the API answered 400 Bad Request for it and says it does not exist"},
		{"403 the list no longer holds it", forbidden, listOf([]string{"x"}, nil), false, 404,
			"Helm service h was deleted: the API answered 403 Forbidden for it and the list of " + parent + ", which this API token can read, no longer holds it"},
		{"400 the list no longer holds it", noSuch, listOf(nil, nil), false, 404,
			"Helm service h was deleted: the API answered 400 Bad Request for it and the list of " + parent + ", which this API token can read, no longer holds it"},
		{"403 the list still holds it", forbidden, listOf([]string{"h"}, nil), true, 0, ""},
		{"400 the list still holds it", noSuch, listOf([]string{"h"}, nil), true, 0, ""},
		{"403 the list is refused", forbidden, listOf(nil, &APIError{Status: 403}), false, 403,
			"no access (answered for Helm service h); the list of " + parent + " is refused too: this API token has no access to " + parent + ", or lost it. Check the token's role in the Qovery organization"},
		{"403 the list fails otherwise", forbidden, listOf(nil, &APIError{Status: 500}), true, 0, ""},
	} {
		got := confirmGone(context.Background(), tc.err, "Helm service", "h", parent, tc.ids)
		if tc.same {
			if got != tc.err {
				t.Errorf("%s: %v, want the answer unchanged", tc.name, got)
			}
			continue
		}
		var e *APIError
		if !errors.As(got, &e) || e.Status != tc.status || e.Detail != tc.detail || e.Method != "GET" || e.Path != "/helm/h" {
			t.Errorf("%s: %#v, want %d %q", tc.name, got, tc.status, tc.detail)
			continue
		}
		if orig, ok := tc.err.(*APIError); !ok || e.Attempts != orig.Attempts {
			t.Errorf("%s: attempts %d, want those of %#v", tc.name, e.Attempts, tc.err)
		}
	}
}

func TestCheckCreated(t *testing.T) {
	since := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if got := checkCreated("a variable", "K", "v1", time.Time{}, since); got != "" {
		t.Errorf("no creation time: %q", got)
	}
	if got := checkCreated("a variable", "K", "v1", since, since); got != "" {
		t.Errorf("created at since: %q", got)
	}
	if got, want := checkCreated("a variable", "K", "v1", since.Add(-time.Second), since), "a variable K already exists (v1, created at 2026-03-01T11:59:59Z, before this request)"; got != want {
		t.Errorf("created before: %q, want %q", got, want)
	}
}

func TestParentOf(t *testing.T) {
	if _, ok := parent(nil); ok {
		t.Error("parent of nothing")
	}
	if p, ok := parent([]Parent{{}, InEnvironment("e")}); !ok || p.id != "e" {
		t.Errorf("parent = %+v, %v", p, ok)
	}
	if got := environment([]Parent{VariableParent(VariableScopeProject, "p")}); got != "" {
		t.Errorf("environment of a project parent = %q", got)
	}
	if got := environment([]Parent{InEnvironment("e")}); got != "e" {
		t.Errorf("environment = %q", got)
	}
}

func TestCreateSettledOutcomes(t *testing.T) {
	type obj struct{ id string }
	gateway := &APIError{Status: http.StatusBadGateway, Method: "POST", Path: "/p"}
	for _, tc := range []struct {
		name    string
		creates []error
		found   *obj
		confl   string
		ferr    error
		id      string
		calls   int
		finds   int
		msg     string
	}{
		{"created", []error{nil}, nil, "", nil, "c1", 1, 0, ""},
		{"refused", []error{&APIError{Status: 409, Method: "POST", Path: "/p", Detail: "taken"}}, nil, "", nil, "", 1, 0,
			"qovery: POST /p: 409 Conflict: taken"},
		{"found after a 502", []error{gateway}, &obj{"f"}, "", nil, "f", 1, 1, ""},
		{"another one in the way", []error{gateway}, nil, "taken by x", nil, "", 1, 1,
			"qovery: POST /p: creating the thing: the outcome was unknown (qovery: POST /p: 502 Bad Gateway), and a look-up found another one: qovery: POST /p: 409 Conflict: taken by x"},
		{"look-up failed", []error{gateway}, nil, "", errors.New("boom"), "", 1, 1,
			"qovery: POST /p: creating the thing: the outcome is unknown (qovery: POST /p: 502 Bad Gateway), and looking it up failed (boom); check in the Qovery console whether it exists before trying again"},
		{"sent again", []error{gateway, nil}, nil, "", nil, "c2", 2, 1, ""},
		{"sent again, ambiguous again", []error{gateway, gateway}, nil, "", nil, "", 2, 1,
			"qovery: POST /p: creating the thing: the outcome of the first attempt was unknown (qovery: POST /p: 502 Bad Gateway) and a look-up did not find it, so it was sent once more: qovery: POST /p: 502 Bad Gateway; check in the Qovery console whether it exists before trying again"},
		{"sent again, refused", []error{gateway, &APIError{Status: 400, Method: "POST", Path: "/p", Detail: "bad"}}, nil, "", nil, "", 2, 1,
			"qovery: POST /p: creating the thing: the outcome of the first attempt was unknown (qovery: POST /p: 502 Bad Gateway) and a look-up did not find it, so it was sent once more: qovery: POST /p: 400 Bad Request: bad"},
	} {
		calls, finds := 0, 0
		create := func(context.Context) (*obj, error) {
			err := tc.creates[calls]
			calls++
			if err != nil {
				return nil, err
			}
			return &obj{id: "c" + string(rune('0'+calls))}, nil
		}
		var since time.Time
		before := time.Now()
		find := func(_ context.Context, s func(answer) time.Time) (*obj, string, error) {
			finds++
			since = s(answer{})
			return tc.found, tc.confl, tc.ferr
		}
		got, err := createSettled(context.Background(), "/p", "the thing", create, find)
		if calls != tc.calls || finds != tc.finds {
			t.Errorf("%s: %d creates and %d look-ups, want %d and %d", tc.name, calls, finds, tc.calls, tc.finds)
		}
		if tc.msg != "" {
			if err == nil || err.Error() != tc.msg || got != nil {
				t.Errorf("%s: %v, %v; want the error %q", tc.name, got, err, tc.msg)
			}
			continue
		}
		if err != nil || got == nil || got.id != tc.id {
			t.Errorf("%s: %+v, %v; want %s", tc.name, got, err, tc.id)
		}
		if finds > 0 && (since.Before(before.Add(-createdSlack-time.Second)) || since.After(before.Add(-createdSlack+time.Second))) {
			t.Errorf("%s: look-up since %v, want about 5s before %v", tc.name, since, before)
		}
	}
	// A context that ended is not a reason to look up.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	finds := 0
	_, err := createSettled(ctx, "/p", "the thing", func(context.Context) (*obj, error) { return nil, gateway },
		func(context.Context, func(answer) time.Time) (*obj, string, error) { finds++; return nil, "", nil })
	if err != gateway || finds != 0 {
		t.Errorf("canceled: %v after %d look-ups", err, finds)
	}
}
