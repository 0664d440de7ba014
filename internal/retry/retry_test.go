package retry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a Policy.Sleep that records the waits instead of sleeping.
type recorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.waits = append(r.waits, d)
	r.mu.Unlock()
	return ctx.Err()
}

func (r *recorder) all() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.waits...)
}

// testPolicy returns a policy with exact (unjittered) waits and a recorder.
func testPolicy() (Policy, *recorder) {
	rec := &recorder{}
	return Policy{
		MaxAttempts:   4,
		BaseDelay:     100 * time.Millisecond,
		MaxDelay:      time.Second,
		MaxRetryAfter: 30 * time.Second,
		Sleep:         rec.sleep,
		Jitter:        func(d time.Duration) time.Duration { return d },
	}, rec
}

// script serves the statuses in order, one per call, then 200 "ok". Each
// call's body is recorded.
type script struct {
	mu       sync.Mutex
	statuses []int
	header   http.Header
	calls    int
	bodies   []string
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(body))
	n := s.calls
	s.calls++
	s.mu.Unlock()
	if n < len(s.statuses) {
		for k, vs := range s.header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(s.statuses[n])
		_, _ = fmt.Fprintf(w, "attempt %d", n+1)
		return
	}
	_, _ = io.WriteString(w, "ok")
}

func (s *script) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func client(p Policy) *http.Client {
	return &http.Client{Transport: p.Transport(&http.Transport{DisableKeepAlives: true})}
}

// reply is a response read in full.
type reply struct {
	StatusCode int
	Header     http.Header
	Body       string
}

// send makes one request through c and reads and closes the answer.
func send(t *testing.T, c *http.Client, ctx context.Context, method, url, body string) (*reply, error) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, c, req)
}

func do(t *testing.T, c *http.Client, req *http.Request) (*reply, error) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &reply{StatusCode: resp.StatusCode, Header: resp.Header, Body: string(b)}, nil
}

var allMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

func TestTooManyRequestsRetriedForEveryMethod(t *testing.T) {
	for _, method := range allMethods {
		t.Run(method, func(t *testing.T) {
			s := &script{statuses: []int{429, 429}}
			srv := serve(t, s)
			p, rec := testPolicy()
			resp, err := send(t, client(p), context.Background(), method, srv.URL, "payload")
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || s.count() != 3 {
				t.Fatalf("status %d after %d calls, want 200 after 3", resp.StatusCode, s.count())
			}
			if got := resp.Header.Get(AttemptsHeader); got != "3" {
				t.Errorf("%s = %q, want 3", AttemptsHeader, got)
			}
			// Without Retry-After the exponential backoff applies.
			want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}
			if got := rec.all(); !equalDurations(got, want) {
				t.Errorf("waits %v, want %v", got, want)
			}
		})
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			s := &script{statuses: []int{429}, header: http.Header{"Retry-After": {"7"}}}
			srv := serve(t, s)
			p, rec := testPolicy()
			resp, err := send(t, client(p), context.Background(), method, srv.URL, "x")
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got := rec.all(); !equalDurations(got, []time.Duration{7 * time.Second}) {
				t.Errorf("waits %v, want exactly the server's 7s (no jitter)", got)
			}
		})
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	when := time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)
	s := &script{statuses: []int{429}, header: http.Header{"Retry-After": {when}}}
	srv := serve(t, s)
	p, rec := testPolicy()
	resp, err := send(t, client(p), context.Background(), http.MethodGet, srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	waits := rec.all()
	if len(waits) != 1 {
		t.Fatalf("waits %v, want one", waits)
	}
	// The date has a one-second resolution and some time passes in between.
	if waits[0] < 17*time.Second || waits[0] > 20*time.Second {
		t.Errorf("wait %v, want about 20s", waits[0])
	}
}

func TestRetryAfterAboveCapIsReturnedNotWaited(t *testing.T) {
	for _, status := range []int{429, 503} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			s := &script{statuses: []int{status, status}, header: http.Header{"Retry-After": {"31"}}}
			srv := serve(t, s)
			p, rec := testPolicy()
			resp, err := send(t, client(p), context.Background(), http.MethodGet, srv.URL, "")
			if err != nil {
				t.Fatal(err)
			}
			body := resp.Body
			if resp.StatusCode != status || s.count() != 1 {
				t.Fatalf("status %d after %d calls, want %d after 1", resp.StatusCode, s.count(), status)
			}
			if body != "attempt 1" {
				t.Errorf("body %q, want the server's body intact", body)
			}
			if resp.Header.Get("Retry-After") != "31" {
				t.Errorf("Retry-After not passed through: %q", resp.Header.Get("Retry-After"))
			}
			later, ok := LaterOf(resp.Header)
			if until := time.Until(later.At); !ok || later.Wait != 31*time.Second || until < 29*time.Second || until > 31*time.Second {
				t.Errorf("LaterOf = %+v, %v; want a 31s wait ending in about 31s", later, ok)
			}
			if resp.Header.Get(AttemptsHeader) != "" {
				t.Errorf("%s set on a first attempt", AttemptsHeader)
			}
			if len(rec.all()) != 0 {
				t.Errorf("waited %v", rec.all())
			}
		})
	}
}

func TestRetryAfterAtCapIsWaited(t *testing.T) {
	s := &script{statuses: []int{429}, header: http.Header{"Retry-After": {"30"}}}
	srv := serve(t, s)
	p, rec := testPolicy()
	resp, err := send(t, client(p), context.Background(), http.MethodPost, srv.URL, "x")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !equalDurations(rec.all(), []time.Duration{30 * time.Second}) {
		t.Fatalf("status %d, waits %v", resp.StatusCode, rec.all())
	}
}

func TestGatewayErrorsRetriedForIdempotentMethods(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions} {
		for _, status := range []int{500, 502, 503, 504} {
			t.Run(fmt.Sprintf("%s %d", method, status), func(t *testing.T) {
				s := &script{statuses: []int{status}}
				srv := serve(t, s)
				p, _ := testPolicy()
				resp, err := send(t, client(p), context.Background(), method, srv.URL, "")
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != 200 || s.count() != 2 {
					t.Fatalf("status %d after %d calls, want 200 after 2", resp.StatusCode, s.count())
				}
			})
		}
	}
}

func TestPostRetriedOn503Only(t *testing.T) {
	cases := []struct {
		status  int
		retried bool
	}{
		{503, true},
		{429, true},
		{502, false},
		{504, false},
		{500, false},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			s := &script{statuses: []int{tc.status}}
			srv := serve(t, s)
			p, rec := testPolicy()
			resp, err := send(t, client(p), context.Background(), http.MethodPost, srv.URL, "create")
			if err != nil {
				t.Fatal(err)
			}
			body := resp.Body
			if tc.retried {
				if resp.StatusCode != 200 || s.count() != 2 {
					t.Fatalf("status %d after %d calls, want 200 after 2", resp.StatusCode, s.count())
				}
				return
			}
			if resp.StatusCode != tc.status || s.count() != 1 || len(rec.all()) != 0 {
				t.Fatalf("status %d after %d calls (waits %v), want %d after 1", resp.StatusCode, s.count(), rec.all(), tc.status)
			}
			if body != "attempt 1" {
				t.Errorf("body %q, want the server's body", body)
			}
		})
	}
}

func TestIdempotentPostRetriedOnGatewayErrors(t *testing.T) {
	for _, status := range []int{500, 502, 504} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			s := &script{statuses: []int{status, status}}
			srv := serve(t, s)
			p, _ := testPolicy()
			resp, err := send(t, client(p), Idempotent(context.Background()), http.MethodPost, srv.URL, "guarded")
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || s.count() != 3 {
				t.Fatalf("status %d after %d calls, want 200 after 3", resp.StatusCode, s.count())
			}
		})
	}
}

func TestOtherStatusesNotRetried(t *testing.T) {
	for _, status := range []int{400, 401, 404, 409, 412, 501} {
		s := &script{statuses: []int{status}}
		srv := serve(t, s)
		p, _ := testPolicy()
		resp, err := send(t, client(p), context.Background(), http.MethodGet, srv.URL, "")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != status || s.count() != 1 {
			t.Errorf("%d: status %d after %d calls", status, resp.StatusCode, s.count())
		}
	}
}

// closedPort returns a loopback address on which nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr + "/"
}

func TestDialErrorRetriedForEveryMethod(t *testing.T) {
	url := closedPort(t)
	for _, method := range allMethods {
		t.Run(method, func(t *testing.T) {
			p, rec := testPolicy()
			resp, err := send(t, client(p), context.Background(), method, url, "body")
			if resp != nil {
				t.Fatalf("got a response: %d", resp.StatusCode)
			}
			var ex *ExhaustedError
			if !errors.As(err, &ex) {
				t.Fatalf("error %v (%T), want *ExhaustedError", err, err)
			}
			if ex.Attempts != p.MaxAttempts || ex.Method != method {
				t.Errorf("ExhaustedError %+v, want %d attempts of %s", ex, p.MaxAttempts, method)
			}
			var op *net.OpError
			if !errors.As(err, &op) || op.Op != "dial" {
				t.Errorf("the dial error is not wrapped: %v", err)
			}
			if IsAmbiguous(err) {
				t.Error("a dial error is never ambiguous")
			}
			if got := len(rec.all()); got != p.MaxAttempts-1 {
				t.Errorf("%d waits, want %d", got, p.MaxAttempts-1)
			}
		})
	}
}

// hangUp closes the connection without answering for the first n calls, then
// answers 200. It counts the requests it received.
type hangUp struct {
	n     int32
	calls atomic.Int32
}

func (h *hangUp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.ReadAll(r.Body)
	if h.calls.Add(1) <= h.n {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		_ = conn.Close()
		return
	}
	_, _ = io.WriteString(w, "ok")
}

func TestNetworkErrorAfterPostIsAmbiguous(t *testing.T) {
	h := &hangUp{n: 100}
	srv := serve(t, h)
	p, rec := testPolicy()
	resp, err := send(t, client(p), context.Background(), http.MethodPost, srv.URL, "create me")
	if resp != nil {
		t.Fatalf("got a response: %d", resp.StatusCode)
	}
	if !IsAmbiguous(err) {
		t.Fatalf("error %v (%T), want *AmbiguousError", err, err)
	}
	var amb *AmbiguousError
	if !errors.As(err, &amb) || amb.Method != http.MethodPost || amb.Err == nil {
		t.Errorf("AmbiguousError %+v", amb)
	}
	if h.calls.Load() != 1 || len(rec.all()) != 0 {
		t.Errorf("%d calls and waits %v, want exactly one call and no wait", h.calls.Load(), rec.all())
	}
	if !strings.Contains(err.Error(), "may or may not have been applied") {
		t.Errorf("message %q does not say the outcome is unknown", err)
	}
}

func TestNetworkErrorRetriedWhenIdempotent(t *testing.T) {
	cases := []struct {
		name   string
		method string
		ctx    context.Context
	}{
		{"GET", http.MethodGet, context.Background()},
		{"PUT", http.MethodPut, context.Background()},
		{"DELETE", http.MethodDelete, context.Background()},
		{"idempotent POST", http.MethodPost, Idempotent(context.Background())},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &hangUp{n: 2}
			srv := serve(t, h)
			p, rec := testPolicy()
			resp, err := send(t, client(p), tc.ctx, tc.method, srv.URL, "same body")
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || h.calls.Load() != 3 || len(rec.all()) != 2 {
				t.Fatalf("status %d after %d calls and waits %v", resp.StatusCode, h.calls.Load(), rec.all())
			}
			if resp.Header.Get(AttemptsHeader) != "3" {
				t.Errorf("%s = %q", AttemptsHeader, resp.Header.Get(AttemptsHeader))
			}
		})
	}
}

func TestExhaustionReturnsLastResponse(t *testing.T) {
	s := &script{statuses: []int{503, 503, 503, 503, 503, 503}}
	srv := serve(t, s)
	p, rec := testPolicy()
	resp, err := send(t, client(p), context.Background(), http.MethodGet, srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	body := resp.Body
	if resp.StatusCode != 503 || s.count() != p.MaxAttempts {
		t.Fatalf("status %d after %d calls, want 503 after %d", resp.StatusCode, s.count(), p.MaxAttempts)
	}
	if body != fmt.Sprintf("attempt %d", p.MaxAttempts) {
		t.Errorf("body %q, want the last response's body", body)
	}
	if got := resp.Header.Get(AttemptsHeader); got != strconv.Itoa(p.MaxAttempts) {
		t.Errorf("%s = %q, want %d", AttemptsHeader, got, p.MaxAttempts)
	}
	if len(rec.all()) != p.MaxAttempts-1 {
		t.Errorf("waits %v", rec.all())
	}
}

func TestExhaustionOnNetworkErrors(t *testing.T) {
	h := &hangUp{n: 100}
	srv := serve(t, h)
	p, _ := testPolicy()
	resp, err := send(t, client(p), context.Background(), http.MethodGet, srv.URL, "")
	if resp != nil {
		t.Fatalf("got a response: %d", resp.StatusCode)
	}
	var ex *ExhaustedError
	if !errors.As(err, &ex) || ex.Attempts != p.MaxAttempts {
		t.Fatalf("error %v, want *ExhaustedError after %d attempts", err, p.MaxAttempts)
	}
	if int(h.calls.Load()) != p.MaxAttempts {
		t.Errorf("%d calls", h.calls.Load())
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("gave up after %d attempts", p.MaxAttempts)) {
		t.Errorf("message %q", err)
	}
}

func TestBackoffGrowsExponentiallyAndIsCapped(t *testing.T) {
	p := Policy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, Jitter: func(d time.Duration) time.Duration { return d }}
	ms := time.Millisecond
	want := []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second, time.Second}
	for i, w := range want {
		if got := p.Backoff(i + 1); got != w {
			t.Errorf("Backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
	// Large attempt numbers neither overflow nor exceed the cap.
	if got := p.Backoff(1000); got != time.Second {
		t.Errorf("Backoff(1000) = %v", got)
	}

	// The transport waits exactly these.
	s := &script{statuses: []int{503, 503, 503, 503, 503}}
	srv := serve(t, s)
	tp, rec := testPolicy()
	tp.MaxAttempts = 6
	tp.BaseDelay = 300 * time.Millisecond
	resp, err := send(t, client(tp), context.Background(), http.MethodGet, srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	wantWaits := []time.Duration{300 * time.Millisecond, 600 * time.Millisecond, time.Second, time.Second, time.Second}
	if got := rec.all(); !equalDurations(got, wantWaits) {
		t.Errorf("waits %v, want %v", got, wantWaits)
	}
}

func TestBackoffIsJittered(t *testing.T) {
	p := Policy{BaseDelay: time.Second, MaxDelay: 8 * time.Second}
	for attempt, full := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second, 9: 8 * time.Second} {
		seen := map[time.Duration]bool{}
		for range 200 {
			d := p.Backoff(attempt)
			if d < full/2 || d > full {
				t.Fatalf("Backoff(%d) = %v, want within [%v, %v]", attempt, d, full/2, full)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("Backoff(%d) gave only %d distinct values in 200 draws", attempt, len(seen))
		}
	}
	// A custom Jitter is applied to the computed wait.
	p.Jitter = func(d time.Duration) time.Duration { return d / 4 }
	if got := p.Backoff(3); got != time.Second {
		t.Errorf("custom jitter: Backoff(3) = %v, want 1s", got)
	}
}

func TestContextCancellationStopsTheWait(t *testing.T) {
	cases := []struct {
		name    string
		handler http.Handler
		method  string
	}{
		{"response", &script{statuses: []int{503, 503}}, http.MethodGet},
		{"network error", &hangUp{n: 100}, http.MethodGet},
		{"retry-after", &script{statuses: []int{429}, header: http.Header{"Retry-After": {"25"}}}, http.MethodPost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, tc.handler)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p := Policy{
				MaxAttempts:   5,
				BaseDelay:     time.Hour,
				MaxDelay:      time.Hour,
				MaxRetryAfter: time.Minute,
				// The real Sleep; cancel as soon as the first wait starts.
				OnRetry: func(context.Context, Event) { cancel() },
			}
			start := time.Now()
			resp, err := send(t, client(p), ctx, tc.method, srv.URL, "x")
			if resp != nil {
				t.Fatalf("got a response: %d", resp.StatusCode)
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", err)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("returned after %v", el)
			}
		})
	}
}

func TestContextDeadlineDuringRequest(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	srv := serve(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	p, rec := testPolicy()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	resp, err := send(t, client(p), ctx, http.MethodGet, srv.URL, "")
	if resp != nil {
		t.Fatalf("got a response: %d", resp.StatusCode)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want a deadline error", err)
	}
	if len(rec.all()) != 0 {
		t.Errorf("retried after the context ended: waits %v", rec.all())
	}
}

func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a cancelled context = %v", err)
	}
	if err := Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep(0) on a cancelled context = %v", err)
	}
	if time.Since(start) > time.Second {
		t.Error("Sleep did not return at once")
	}
	rec := &recorder{}
	if err := (Policy{Sleep: rec.sleep}).Wait(context.Background(), 3*time.Second); err != nil || !equalDurations(rec.all(), []time.Duration{3 * time.Second}) {
		t.Errorf("Wait used %v, err %v", rec.all(), err)
	}
}

func TestRequestBodyResentIntact(t *testing.T) {
	payload := `{"name":"tailscale-operator","values":"` + strings.Repeat("x", 100<<10) + `"}`
	cases := []struct {
		name   string
		method string
		h      *script
	}{
		{"POST after 503", http.MethodPost, &script{statuses: []int{503, 429, 503}}},
		{"PUT after 502", http.MethodPut, &script{statuses: []int{502, 504}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, tc.h)
			p, _ := testPolicy()
			resp, err := send(t, client(p), context.Background(), tc.method, srv.URL, payload)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || resp.Body != "ok" {
				t.Fatalf("status %d %q", resp.StatusCode, resp.Body)
			}
			s := tc.h
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.calls != len(s.statuses)+1 {
				t.Fatalf("%d calls", s.calls)
			}
			for i, b := range s.bodies {
				if b != payload {
					t.Errorf("attempt %d received %d bytes, want the %d-byte body", i+1, len(b), len(payload))
				}
			}
		})
	}
}

func TestBodyWithoutGetBodyIsNotRetried(t *testing.T) {
	s := &script{statuses: []int{503}}
	srv := serve(t, s)
	p, _ := testPolicy()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPut, srv.URL, io.NopCloser(bytes.NewBufferString("once")))
	if err != nil {
		t.Fatal(err)
	}
	req.GetBody = nil
	resp, err := do(t, client(p), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 503 || s.count() != 1 {
		t.Fatalf("status %d after %d calls: a body that cannot be re-read must not be retried", resp.StatusCode, s.count())
	}
}

func TestOnRetryEvents(t *testing.T) {
	s := &script{statuses: []int{503, 429}}
	srv := serve(t, s)
	p, _ := testPolicy()
	var events []Event
	p.OnRetry = func(_ context.Context, e Event) { events = append(events, e) }
	resp, err := send(t, client(p), context.Background(), http.MethodDelete, srv.URL+"/x?token=abc", "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if len(events) != 2 {
		t.Fatalf("events %+v", events)
	}
	if events[0].Attempt != 1 || events[0].Status != 503 || events[0].Method != http.MethodDelete || events[0].Delay != 100*time.Millisecond {
		t.Errorf("first event %+v", events[0])
	}
	if events[1].Attempt != 2 || events[1].Status != 429 || events[1].Delay != 200*time.Millisecond {
		t.Errorf("second event %+v", events[1])
	}
	if !strings.HasSuffix(events[0].URL, "/x?token=abc") {
		t.Errorf("event URL %q", events[0].URL)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 8, 20, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"12", 12 * time.Second, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"1.5", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
	}
	for _, tc := range cases {
		got, ok := ParseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDefaultsApplied(t *testing.T) {
	d := Default()
	if d.MaxAttempts < 2 || d.BaseDelay <= 0 || d.MaxDelay < d.BaseDelay || d.MaxRetryAfter <= 0 {
		t.Fatalf("Default() = %+v", d)
	}
	// A zero policy behaves like the default one.
	p := Policy{Jitter: func(d time.Duration) time.Duration { return d }}
	if got := p.Backoff(1); got != d.BaseDelay {
		t.Errorf("zero policy Backoff(1) = %v, want %v", got, d.BaseDelay)
	}
	s := &script{statuses: []int{503, 503, 503, 503, 503, 503, 503, 503}}
	srv := serve(t, s)
	rec := &recorder{}
	resp, err := send(t, client(Policy{Sleep: rec.sleep}), context.Background(), http.MethodGet, srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 503 {
		t.Fatalf("status %d, want the last 503", resp.StatusCode)
	}
	if s.count() != d.MaxAttempts {
		t.Errorf("%d calls, want the default %d", s.count(), d.MaxAttempts)
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAmbiguousStatus(t *testing.T) {
	for status, want := range map[int]bool{502: true, 504: true, 500: false, 503: false, 429: false, 409: false, 201: false} {
		if got := AmbiguousStatus(status); got != want {
			t.Errorf("AmbiguousStatus(%d) = %v, want %v", status, got, want)
		}
	}
}

func TestServerTime(t *testing.T) {
	local := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	received := local.Add(3 * time.Second)
	// The server's clock is 90 s ahead of ours.
	date := received.Add(90 * time.Second).Format(http.TimeFormat)
	if got, want := ServerTime(local, date, received), local.Add(90*time.Second); !got.Equal(want) {
		t.Errorf("ServerTime = %v, want %v", got, want)
	}
	// Behind by an hour.
	date = received.Add(-time.Hour).Format(http.TimeFormat)
	if got, want := ServerTime(local, date, received), local.Add(-time.Hour); !got.Equal(want) {
		t.Errorf("ServerTime = %v, want %v", got, want)
	}
	for _, bad := range []string{"", "yesterday"} {
		if got := ServerTime(local, bad, received); !got.Equal(local) {
			t.Errorf("Date %q: %v, want the local time unchanged", bad, got)
		}
	}
	if got := ServerTime(local, date, time.Time{}); !got.Equal(local) {
		t.Errorf("no receipt time: %v", got)
	}
}

func TestLaterSaysHowLongAndUntilWhen(t *testing.T) {
	at := time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set(NotBeforeHeader, "3600 "+at.Format(time.RFC3339))
	later, ok := LaterOf(h)
	if !ok || later.Wait != time.Hour || !later.At.Equal(at) {
		t.Fatalf("LaterOf = %+v, %v", later, ok)
	}
	if got, want := later.String(), "the API asked to wait 1 hour before the next request (Retry-After: 3600); try again after 2026-03-01 13:00:00 UTC"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for d, want := range map[time.Duration]string{
		2 * time.Hour: "2 hours", 90 * time.Minute: "90 minutes", time.Minute: "1 minute",
		75 * time.Second: "75 seconds", time.Second: "1 second",
	} {
		if got := HumanWait(d); got != want {
			t.Errorf("HumanWait(%v) = %q, want %q", d, got, want)
		}
	}
	for _, bad := range []string{"", "3600", "x 2026-03-01T13:00:00Z", "-1 2026-03-01T13:00:00Z", "3600 yesterday"} {
		h.Set(NotBeforeHeader, bad)
		if _, ok := LaterOf(h); ok {
			t.Errorf("LaterOf(%q) ok", bad)
		}
	}
}
