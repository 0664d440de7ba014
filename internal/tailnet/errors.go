package tailnet

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	tailscale "tailscale.com/client/tailscale/v2"

	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// ErrorData is one entry of the data array of an API error: the source of
// a failing policy test and what failed.
type ErrorData struct {
	User     string   `json:"user"`
	Errors   []string `json:"errors,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// APIError is an error answer of the Tailscale API.
type APIError struct {
	// Status is the HTTP status.
	Status int
	// Method and Path are the request's, e.g. "POST" and
	// "/api/v2/tailnet/-/acl".
	Method, Path string
	// Message is the server's message, e.g.
	// "precondition failed, invalid old hash".
	Message string
	// Data lists failing policy tests, when the server sent any.
	Data []ErrorData
	// Attempts is the number of attempts the retry transport made; 1 when
	// the request was not retried.
	Attempts int
	// Later is set when the server asked for a longer wait (Retry-After)
	// than qtail makes: how long, and until when.
	Later *retry.Later
}

// RetryLater returns the wait the server asked for and qtail did not make.
func (e *APIError) RetryLater() (retry.Later, bool) {
	if e.Later == nil {
		return retry.Later{}, false
	}
	return *e.Later, true
}

// HTTPStatus returns the HTTP status, by which policy.IsPreconditionFailed
// and policy.IsRejected classify the answer.
func (e *APIError) HTTPStatus() int { return e.Status }

// Error returns the server's message with the failing tests, the status
// and the number of attempts, e.g.
//
//	tailscale API POST /api/v2/tailnet/-/acl: test(s) failed: alice@example.com: address "2.2.2.2:22": want: Drop, got: Accept (HTTP 400)
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("tailscale API ")
	if e.Method != "" || e.Path != "" {
		b.WriteString(strings.TrimSpace(e.Method + " " + e.Path))
		b.WriteString(": ")
	}
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	b.WriteString(msg)
	writeData(&b, e.Data)
	fmt.Fprintf(&b, " (HTTP %d", e.Status)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, ", after %d attempts", e.Attempts)
	}
	b.WriteString(")")
	if e.Later != nil {
		b.WriteString("; " + e.Later.String())
	}
	return b.String()
}

// writeData appends the failing tests: ": src: error; src: error".
func writeData(b *strings.Builder, data []ErrorData) {
	var parts []string
	for _, d := range data {
		who := d.User
		if who == "" {
			who = "(no source)"
		}
		for _, e := range d.Errors {
			parts = append(parts, who+": "+e)
		}
		for _, w := range d.Warnings {
			parts = append(parts, who+" (warning): "+w)
		}
	}
	if len(parts) > 0 {
		b.WriteString(": ")
		b.WriteString(strings.Join(parts, "; "))
	}
}

// ValidationError is a policy that POST /acl/validate rejected. The
// endpoint answers 200 with a message and the failing tests, so there is no
// HTTP status to report.
type ValidationError struct {
	// Method and Path are the validate request's.
	Method, Path string
	// Message is the server's message, e.g. `json: unknown field "x"` or
	// "test(s) failed".
	Message string
	// Data lists failing policy tests.
	Data []ErrorData
}

// Error returns the message with the failing tests.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("tailscale API ")
	if e.Method != "" || e.Path != "" {
		b.WriteString(strings.TrimSpace(e.Method + " " + e.Path))
		b.WriteString(": ")
	}
	b.WriteString("policy rejected: ")
	b.WriteString(e.Message)
	writeData(&b, e.Data)
	return b.String()
}

// Unwrap makes a validation rejection match policy.ErrRejected, like the
// 400 a write of the same policy would get.
func (e *ValidationError) Unwrap() error { return policy.ErrRejected }

// IsNotFound reports whether err is an API answer with status 404.
func IsNotFound(err error) bool {
	e, ok := AsAPIError(err)
	return ok && e.Status == http.StatusNotFound
}

// AsAPIError finds an *APIError in err's chain, or converts client v2's
// tailscale.APIError (for calls made through API()).
func AsAPIError(err error) (*APIError, bool) {
	var e *APIError
	if errors.As(err, &e) {
		return e, true
	}
	var v2 tailscale.APIError
	if errors.As(err, &v2) {
		return fromV2Error(v2), true
	}
	return nil, false
}

func fromV2Error(v2 tailscale.APIError) *APIError {
	e := &APIError{Status: v2.Status, Message: v2.Message, Attempts: 1}
	for _, d := range v2.Data {
		e.Data = append(e.Data, ErrorData{User: d.User, Errors: d.Errors})
	}
	return e
}

// convertError turns the outcome of a client v2 call (err, nil on
// success) into an *APIError when the server answered with a status other
// than 2xx. The recorded exchange gives the exact request, the attempts
// and the raw body, so that a body that client v2 could not decode (not
// JSON, or data entries that are strings) still yields the server's
// message, and a 3xx that client v2 takes for a success with nothing
// decoded is an error too.
func convertError(err error, ex *exchange, method, path string) error {
	var e *APIError
	if errors.As(err, &e) {
		return e // a failed OAuth token request
	}
	if ex.status != 0 && !ok2xx(ex.status) {
		return newAPIError(ex.method, ex.path, ex.status, ex.header, ex.body)
	}
	if err == nil {
		return nil
	}
	return fmt.Errorf("tailscale API %s %s: %w", method, path, err)
}

// errorWire is the API's error body.
type errorWire struct {
	Message string            `json:"message"`
	Data    []json.RawMessage `json:"data"`
}

// decodeErrorBody reads {"message": ..., "data": [...]}. Data entries are
// objects {user, errors, warnings}; a plain string entry is kept as an
// error without a source. ok is false when the body is not such JSON.
func decodeErrorBody(body []byte) (msg string, data []ErrorData, ok bool) {
	var w errorWire
	if err := json.Unmarshal(body, &w); err != nil {
		return "", nil, false
	}
	for _, raw := range w.Data {
		var d ErrorData
		if err := json.Unmarshal(raw, &d); err == nil {
			data = append(data, d)
			continue
		}
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			data = append(data, ErrorData{Errors: []string{s}})
		}
	}
	return w.Message, data, true
}

// newAPIError builds the error of a response with an error status.
func newAPIError(method, path string, status int, header http.Header, body []byte) *APIError {
	e := &APIError{Status: status, Method: method, Path: path, Attempts: attemptsOf(header)}
	if later, ok := retry.LaterOf(header); ok {
		e.Later = &later
	}
	if msg, data, ok := decodeErrorBody(body); ok {
		e.Message, e.Data = msg, data
	} else {
		e.Message = snippet(body)
	}
	return e
}
