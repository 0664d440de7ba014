package retry

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

func exact(d time.Duration) time.Duration { return d }

func TestLaterOfZeroWait(t *testing.T) {
	at := time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set(NotBeforeHeader, "0 "+at.Format(time.RFC3339))
	later, ok := LaterOf(h)
	if !ok || later.Wait != 0 || !later.At.Equal(at) {
		t.Fatalf("LaterOf(%q) = %+v, %v; want a zero wait until %v", h.Get(NotBeforeHeader), later, ok, at)
	}
}

func TestZeroMaxDelayTakesTheDefaultCap(t *testing.T) {
	// Only BaseDelay is set: the cap is the default 20 s, not BaseDelay.
	p := Policy{BaseDelay: time.Second, Jitter: exact}
	if got, want := p.Backoff(10), Default().MaxDelay; got != want {
		t.Errorf("Backoff(10) = %v, want the default cap %v", got, want)
	}
	if got := p.Backoff(3); got != 4*time.Second {
		t.Errorf("Backoff(3) = %v, want 4s", got)
	}
}

func TestZeroMaxRetryAfterTakesTheDefault(t *testing.T) {
	// A Retry-After of 5 s is within the default bound of 60 s, so a policy
	// that leaves MaxRetryAfter unset waits for it and tries again.
	s := &script{statuses: []int{429}, header: http.Header{"Retry-After": {"5"}}}
	srv := serve(t, s)
	rec := &recorder{}
	resp, err := send(t, client(Policy{Sleep: rec.sleep, Jitter: exact}), context.Background(), http.MethodGet, srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Body != "ok" || s.count() != 2 {
		t.Fatalf("status %d body %q after %d calls, want 200 \"ok\" after 2", resp.StatusCode, resp.Body, s.count())
	}
	if w := rec.all(); !equalDurations(w, []time.Duration{5 * time.Second}) {
		t.Errorf("waits %v, want [5s]", w)
	}
	if resp.Header.Get(NotBeforeHeader) != "" {
		t.Errorf("%s = %q on a response that was waited for", NotBeforeHeader, resp.Header.Get(NotBeforeHeader))
	}
}

func TestBackoffWithACapNearTheLargestDuration(t *testing.T) {
	// Doubling a wait that already reached the cap would wrap around.
	huge := time.Duration(1 << 62)
	p := Policy{BaseDelay: huge, MaxDelay: huge, Jitter: exact}
	for attempt := 1; attempt <= 4; attempt++ {
		if got := p.Backoff(attempt); got != huge {
			t.Errorf("Backoff(%d) = %v, want the cap %v", attempt, got, huge)
		}
	}
}

func TestDefaultJitterOfTheSmallestWaits(t *testing.T) {
	// One nanosecond cannot be halved: it is waited as is.
	one := Policy{BaseDelay: 1, MaxDelay: 1}
	for i := 0; i < 200; i++ {
		if got := one.Backoff(1); got != 1 {
			t.Fatalf("Backoff of 1ns = %v, want 1ns", got)
		}
	}
	// A wait d is jittered uniformly within [d/2, d], both ends included.
	for _, d := range []time.Duration{2, 4} {
		p := Policy{BaseDelay: d, MaxDelay: d}
		seen := map[time.Duration]int{}
		for i := 0; i < 400; i++ {
			got := p.Backoff(1)
			if got < d/2 || got > d {
				t.Fatalf("Backoff of %v = %v, outside [%v, %v]", d, got, d/2, d)
			}
			seen[got]++
		}
		for v := d / 2; v <= d; v++ {
			if seen[v] == 0 {
				t.Errorf("jitter of %v never gave %v in 400 draws: %v", d, v, seen)
			}
		}
	}
}

func TestTransportOverTheDefaultTransport(t *testing.T) {
	s := &script{statuses: []int{503}}
	srv := serve(t, s)
	p, rec := testPolicy()
	resp, err := send(t, &http.Client{Transport: p.Transport(nil)}, context.Background(), http.MethodGet, srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Body != "ok" || s.count() != 2 || len(rec.all()) != 1 {
		t.Fatalf("status %d body %q after %d calls and waits %v", resp.StatusCode, resp.Body, s.count(), rec.all())
	}
}

func TestSleepWaitsAndNoWaitReportsTheContext(t *testing.T) {
	start := time.Now()
	if err := Sleep(context.Background(), 30*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Errorf("Sleep(30ms) returned after %v", took)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 50 {
		if err := Sleep(ctx, 0); err != context.Canceled {
			t.Fatalf("Sleep(0) on a cancelled context = %v, want context.Canceled every time", err)
		}
		if err := Sleep(ctx, -time.Second); err != context.Canceled {
			t.Fatalf("Sleep(-1s) on a cancelled context = %v", err)
		}
	}
	if err := Sleep(context.Background(), 0); err != nil {
		t.Errorf("Sleep(0) = %v", err)
	}
}

func TestMaxDelayBelowBaseDelayIsRaisedToIt(t *testing.T) {
	// A cap below the first wait would shrink every wait under BaseDelay:
	// the cap is raised to BaseDelay instead.
	p := Policy{BaseDelay: 2 * time.Second, MaxDelay: time.Second, Jitter: exact}
	for attempt := 1; attempt <= 3; attempt++ {
		if got := p.Backoff(attempt); got != 2*time.Second {
			t.Errorf("Backoff(%d) = %v, want BaseDelay 2s", attempt, got)
		}
	}
}

// failingRoundTripper fails every request with err.
type failingRoundTripper struct{ err error }

func (f failingRoundTripper) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

func TestAmbiguousErrorUnwrapsTheNetworkError(t *testing.T) {
	cause := errors.New("connection reset by peer")
	p, _ := testPolicy()
	c := &http.Client{Transport: p.Transport(failingRoundTripper{err: cause})}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://api.test/things", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if resp != nil {
		_ = resp.Body.Close()
		t.Fatalf("got a response: %d", resp.StatusCode)
	}
	if !IsAmbiguous(err) || !errors.Is(err, cause) {
		t.Fatalf("error %v: want an *AmbiguousError wrapping %v", err, cause)
	}
}

func TestBodyThatCannotBeReadAgainStopsTheRetries(t *testing.T) {
	s := &script{statuses: []int{503}}
	srv := serve(t, s)
	p, rec := testPolicy()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPut, srv.URL, strings.NewReader("body"))
	if err != nil {
		t.Fatal(err)
	}
	gone := errors.New("body source closed")
	req.GetBody = func() (io.ReadCloser, error) { return nil, gone }
	resp, err := client(p).Do(req)
	if resp != nil {
		_ = resp.Body.Close()
		t.Fatalf("got a response: %d", resp.StatusCode)
	}
	if !errors.Is(err, gone) {
		t.Fatalf("error %v, want the GetBody error %v", err, gone)
	}
	if s.count() != 1 || len(rec.all()) != 1 {
		t.Errorf("%d calls and waits %v, want one call and one wait before the failed re-read", s.count(), rec.all())
	}
}

func TestRetryAfterBeyondADuration(t *testing.T) {
	// Seconds that overflow a time.Duration, or even an int64, are the
	// longest wait, not a negative one.
	longest := time.Duration(math.MaxInt64/int64(time.Second)) * time.Second
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{"9223372036", "10000000000", "99999999999999999999"} {
		if d, ok := ParseRetryAfter(v, now); !ok || d != longest {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v", v, d, ok, longest)
		}
	}
	if d, ok := ParseRetryAfter("9223372035", now); !ok || d != 9223372035*time.Second {
		t.Errorf("ParseRetryAfter(9223372035) = %v, %v", d, ok)
	}
	for _, v := range []string{"-1", "-99999999999999999999"} {
		if d, ok := ParseRetryAfter(v, now); ok {
			t.Errorf("ParseRetryAfter(%q) = %v, ok", v, d)
		}
	}
	// Such an answer is returned at once with the wait it asked for.
	s := &script{statuses: []int{429}, header: http.Header{"Retry-After": {"10000000000"}}}
	srv := serve(t, s)
	p, rec := testPolicy()
	resp, err := send(t, client(p), context.Background(), http.MethodGet, srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	later, ok := LaterOf(resp.Header)
	if resp.StatusCode != 429 || s.count() != 1 || len(rec.all()) != 0 || !ok || later.Wait != longest {
		t.Errorf("status %d after %d calls and waits %v, later %+v %v; want the 429 at once with the longest wait", resp.StatusCode, s.count(), rec.all(), later, ok)
	}
}
