// Package retry holds the one retry policy qtail applies to both the Qovery
// and the Tailscale APIs.
//
// The rules:
//
//   - 429 Too Many Requests is retried for every method: the server did not
//     act on the request. Retry-After (seconds or an HTTP date) is honoured,
//     capped by Policy.MaxRetryAfter.
//   - 500, 502, 503 and 504 are retried for idempotent requests (GET, HEAD, PUT,
//     DELETE, OPTIONS, or a request whose context was marked with
//     Idempotent). A plain POST is retried on 503 only, where the server says
//     it did not take the request; after 500, 502 or 504 the outcome of a
//     create is unknown and the response is returned for the caller to look
//     the object up by name.
//   - A 429 or a 503 whose Retry-After asks for a longer wait than
//     Policy.MaxRetryAfter is returned at once, with the NotBeforeHeader
//     saying how long the server asked to wait and until when (see Later).
//   - A connection that could not be opened (dial error) is retried for every
//     method. Any other network error is retried for idempotent requests only;
//     for a create it becomes an *AmbiguousError.
//   - Waits grow exponentially from BaseDelay to MaxDelay with jitter, and
//     stop at once when the context ends.
//   - After MaxAttempts the last response is returned unchanged except for the
//     AttemptsHeader, so that clients can say how many attempts were made.
//
// A create is never sent again blindly after an ambiguous outcome (an
// *AmbiguousError, or a 502 or 504 answer to a POST, see AmbiguousStatus):
// the clients look the object up by its natural key (a name, or for a
// Tailscale key its description and creation time, see ServerTime) and
// send the create once more only when it is not there.
package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// AttemptsHeader is set on a response that the transport returns after more
// than one attempt. Its value is the number of attempts made.
const AttemptsHeader = "X-Qtail-Attempts"

// NotBeforeHeader is set on a 429 or 503 response that the transport
// returns without waiting because its Retry-After asks for more than
// Policy.MaxRetryAfter: the wait the server asked for, in seconds, and the
// time it ends (RFC 3339, UTC), separated by a space. LaterOf reads it.
const NotBeforeHeader = "X-Qtail-Not-Before"

// Later is a wait that a server asked for and that qtail did not make.
type Later struct {
	// Wait is what the server's Retry-After asked for.
	Wait time.Duration
	// At is when the wait ends.
	At time.Time
}

// LaterOf reads the NotBeforeHeader of a response's header.
func LaterOf(h http.Header) (Later, bool) {
	secs, at, ok := strings.Cut(h.Get(NotBeforeHeader), " ")
	if !ok {
		return Later{}, false
	}
	n, err := strconv.ParseInt(secs, 10, 64)
	t, terr := time.Parse(time.RFC3339, at)
	if err != nil || terr != nil || n < 0 {
		return Later{}, false
	}
	return Later{Wait: time.Duration(n) * time.Second, At: t}, true
}

// String says what the server asked for and when to try again, for
// example "the API asked to wait 1 hour before the next request (Retry-After:
// 3600); try again after 2026-03-01 13:00:00 UTC".
func (l Later) String() string {
	return fmt.Sprintf("the API asked to wait %s before the next request (Retry-After: %d); try again after %s",
		HumanWait(l.Wait), int64(l.Wait/time.Second), l.At.UTC().Format("2006-01-02 15:04:05 UTC"))
}

// HumanWait writes d in the largest whole unit that fits: "1 hour",
// "90 minutes", "75 seconds".
func HumanWait(d time.Duration) string {
	unit := func(n int64, name string) string {
		if n == 1 {
			return "1 " + name
		}
		return fmt.Sprintf("%d %ss", n, name)
	}
	// Plain ifs rather than a switch: coverage counts the conditions of an
	// if, not those of a case.
	if d >= time.Hour && d%time.Hour == 0 {
		return unit(int64(d/time.Hour), "hour")
	}
	if d >= time.Minute && d%time.Minute == 0 {
		return unit(int64(d/time.Minute), "minute")
	}
	return unit(int64(d/time.Second), "second")
}

// Policy says how often and how long to retry.
type Policy struct {
	// MaxAttempts is the total number of attempts, the first included.
	MaxAttempts int
	// BaseDelay is the wait before the second attempt, before jitter.
	BaseDelay time.Duration
	// MaxDelay caps the exponential wait.
	MaxDelay time.Duration
	// MaxRetryAfter caps a server's Retry-After. A longer Retry-After is not
	// waited for: the response is returned.
	MaxRetryAfter time.Duration

	// Sleep waits for d or until ctx ends. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter turns a computed wait into the actual one. The default picks a
	// uniform value in [d/2, d].
	Jitter func(d time.Duration) time.Duration
	// OnRetry, when set, is told about every retry before its wait.
	OnRetry func(ctx context.Context, e Event)
}

// Event describes one retry.
type Event struct {
	Method  string
	URL     string
	Attempt int // the attempt that failed, starting at 1
	Status  int // 0 for a network error
	Err     error
	Delay   time.Duration
}

// Default returns the policy qtail uses against real APIs.
func Default() Policy {
	return Policy{
		MaxAttempts:   6,
		BaseDelay:     500 * time.Millisecond,
		MaxDelay:      20 * time.Second,
		MaxRetryAfter: 60 * time.Second,
	}
}

func (p Policy) normalized() Policy {
	d := Default()
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = d.BaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = d.MaxDelay
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = p.BaseDelay
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = d.MaxRetryAfter
	}
	if p.Sleep == nil {
		p.Sleep = Sleep
	}
	if p.Jitter == nil {
		p.Jitter = halfJitter
	}
	return p
}

// Backoff returns the wait after the given failed attempt (1 for the first),
// jitter included.
func (p Policy) Backoff(attempt int) time.Duration {
	p = p.normalized()
	d := p.BaseDelay
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	if d > p.MaxDelay {
		d = p.MaxDelay
	}
	return p.Jitter(d)
}

// Wait sleeps for d using the policy's Sleep.
func (p Policy) Wait(ctx context.Context, d time.Duration) error {
	return p.normalized().Sleep(ctx, d)
}

// Sleep waits for d or until ctx ends, whichever comes first.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func halfJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(d-half)+1))
}

type idempotentKey struct{}

// Idempotent marks the requests made with ctx as safe to repeat even when
// their method is POST, for example a policy write guarded by If-Match: a
// repeat of an applied write fails with 412 instead of applying twice.
func Idempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

func isIdempotent(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	v, _ := req.Context().Value(idempotentKey{}).(bool)
	return v
}

// AmbiguousError reports a network error after a non-idempotent request may
// have reached the server: it may or may not have been applied.
type AmbiguousError struct {
	Method string
	URL    string
	Err    error
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s %s: the connection failed after the request was sent, so it may or may not have been applied: %v", e.Method, e.URL, e.Err)
}

func (e *AmbiguousError) Unwrap() error { return e.Err }

// IsAmbiguous reports whether err is, or wraps, an *AmbiguousError.
func IsAmbiguous(err error) bool {
	var a *AmbiguousError
	return errors.As(err, &a)
}

// AmbiguousStatus reports whether an answer with this status to a
// non-idempotent request leaves its outcome unknown: a 502 or a 504 comes
// from a gateway that may have passed the request on before it failed.
func AmbiguousStatus(status int) bool {
	return status == http.StatusBadGateway || status == http.StatusGatewayTimeout
}

// ServerTime translates the local time t to the server's clock, using the
// Date header of a response that arrived at local time received. The
// estimate is good to about a second: Date counts whole seconds. Without a
// usable Date, t is returned unchanged.
//
// Clients use it to tell an object created by a request sent at t from
// older ones by the creation time the server stamped on it.
func ServerTime(t time.Time, date string, received time.Time) time.Time {
	d, err := http.ParseTime(date)
	if err != nil || received.IsZero() {
		return t
	}
	return t.Add(d.Sub(received))
}

// ExhaustedError reports a network error that persisted through every
// attempt.
type ExhaustedError struct {
	Method   string
	URL      string
	Attempts int
	Err      error
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("%s %s: gave up after %d attempts: %v", e.Method, e.URL, e.Attempts, e.Err)
}

func (e *ExhaustedError) Unwrap() error { return e.Err }

// Transport wraps next (http.DefaultTransport when nil) with the policy.
func (p Policy) Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{p: p.normalized(), next: next}
}

type transport struct {
	p    Policy
	next http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	idem := isIdempotent(req)
	rewindable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 && req.Body != nil && req.Body != http.NoBody {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(ctx)
			r.Body = body
		}
		resp, err := t.next.RoundTrip(r)
		last := attempt >= t.p.MaxAttempts || !rewindable
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			dial := isDialError(err)
			if !idem && !dial {
				return nil, &AmbiguousError{Method: req.Method, URL: req.URL.Redacted(), Err: err}
			}
			if last {
				return nil, &ExhaustedError{Method: req.Method, URL: req.URL.Redacted(), Attempts: attempt, Err: err}
			}
			delay := t.p.Backoff(attempt)
			t.notify(ctx, req, attempt, 0, err, delay)
			if werr := t.p.Sleep(ctx, delay); werr != nil {
				// Report why the retries stopped, and what failed last.
				return nil, fmt.Errorf("%w (last error: %w)", werr, err)
			}
			continue
		}
		delay, retryable := t.classify(resp, attempt, idem)
		if !retryable || last {
			if attempt > 1 {
				resp.Header.Set(AttemptsHeader, strconv.Itoa(attempt))
			}
			return resp, nil
		}
		drain(resp)
		t.notify(ctx, req, attempt, resp.StatusCode, nil, delay)
		if werr := t.p.Sleep(ctx, delay); werr != nil {
			return nil, werr
		}
	}
}

// classify says whether a response is retried and after how long. A
// response whose Retry-After exceeds the bound gets the NotBeforeHeader.
func (t *transport) classify(resp *http.Response, attempt int, idem bool) (time.Duration, bool) {
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		now := time.Now()
		if ra, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), now); ok {
			if ra > t.p.MaxRetryAfter {
				resp.Header.Set(NotBeforeHeader, fmt.Sprintf("%d %s", int64(ra/time.Second), now.Add(ra).UTC().Format(time.RFC3339)))
				return 0, false
			}
			return ra, true
		}
		return t.p.Backoff(attempt), true
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
		return t.p.Backoff(attempt), idem
	}
	return 0, false
}

func (t *transport) notify(ctx context.Context, req *http.Request, attempt, status int, err error, delay time.Duration) {
	if t.p.OnRetry == nil {
		return
	}
	t.p.OnRetry(ctx, Event{Method: req.Method, URL: req.URL.Redacted(), Attempt: attempt, Status: status, Err: err, Delay: delay})
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// ParseRetryAfter reads a Retry-After header: a number of seconds or an HTTP
// date. The result is never negative: a number of seconds too large for a
// time.Duration (about 292 years) is taken as the largest one.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	// The longest wait in seconds that a time.Duration holds.
	const maxRetryAfterSeconds = math.MaxInt64 / int64(time.Second)
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, maxRetryAfterSeconds)) * time.Second, true
	}
	if when, err := http.ParseTime(v); err == nil {
		d := when.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}
