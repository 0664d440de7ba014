package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func serve(s *Set, route string) *httptest.Server {
	h := s.Wrap(route, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	return httptest.NewServer(h)
}

type answer struct {
	StatusCode int
	Header     http.Header
	Body       *bytes.Reader
}

func get(t *testing.T, url string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{StatusCode: resp.StatusCode, Header: resp.Header, Body: bytes.NewReader(b)}
}

func TestRuleAppliesToTheNextNCallsThenStops(t *testing.T) {
	var s Set
	srv := serve(&s, "GET /x/{id}")
	defer srv.Close()
	s.Add(Rule{Route: "GET /x/{id}", Status: 503, RetryAfter: 2, Count: 2})

	for i := 0; i < 2; i++ {
		resp := get(t, srv.URL)
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "2" {
			t.Fatalf("call %d: status %d Retry-After %q, want 503 and 2", i, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		var body map[string]string
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body["message"] == "" {
			t.Fatalf("call %d: injected body is not JSON with a message: %v %v", i, body, err)
		}
	}
	if resp := get(t, srv.URL); resp.StatusCode != 200 {
		t.Fatalf("third call: status %d, want the route's own 200", resp.StatusCode)
	}
	if got := s.Count("GET /x/{id}"); got != 3 {
		t.Fatalf("counter = %d, want 3 (injected calls count too)", got)
	}
	if len(s.Pending()) != 0 {
		t.Fatalf("rule still pending: %+v", s.Pending())
	}
}

func TestRouteMatching(t *testing.T) {
	cases := []struct {
		rule, route string
		want        bool
	}{
		{"POST /t/acl", "POST /t/acl", true},
		{"POST /t/acl", "GET /t/acl", false},
		{"/t/acl", "GET /t/acl", true},
		{"/t/acl", "POST /t/acl", true},
		{"POST /t/*", "POST /t/acl/validate", true},
		{"POST /t/*", "GET /t/acl", false},
		{"/t/*", "DELETE /t/keys/{id}", true},
	}
	for _, c := range cases {
		r := Rule{Route: c.rule}
		if got := r.matches(c.route); got != c.want {
			t.Errorf("rule %q on %q = %v, want %v", c.rule, c.route, got, c.want)
		}
	}
}

func TestCustomBodyAndLatency(t *testing.T) {
	var s Set
	srv := serve(&s, "GET /y")
	defer srv.Close()
	s.Add(Rule{Route: "GET /y", Status: 412, Body: json.RawMessage(`{"message":"precondition failed, invalid old hash"}`)})
	resp := get(t, srv.URL)
	var body map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 412 || body["message"] != "precondition failed, invalid old hash" {
		t.Fatalf("got %d %v", resp.StatusCode, body)
	}

}

// TestLatencyHoldsTheCallUntilTheClientGivesUp: with an hour of latency
// the route is not reached before the client's context ends.
func TestLatencyHoldsTheCallUntilTheClientGivesUp(t *testing.T) {
	var s Set
	var calls atomic.Int32
	srv := countingServer(&s, "POST /slow", &calls)
	defer srv.Close()
	s.SetLatency(time.Hour)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		_ = resp.Body.Close()
		t.Fatalf("answered %d through an hour of latency", resp.StatusCode)
	}
	if !errors.Is(err, context.DeadlineExceeded) || calls.Load() != 0 {
		t.Fatalf("err %v, %d calls; want the client's deadline and no call", err, calls.Load())
	}
}

func TestDurationJSON(t *testing.T) {
	var r Rule
	if err := json.Unmarshal([]byte(`{"route":"/a","latency":"50ms"}`), &r); err != nil {
		t.Fatal(err)
	}
	if time.Duration(r.Latency) != 50*time.Millisecond {
		t.Fatalf("latency = %v", time.Duration(r.Latency))
	}
	b, err := json.Marshal(r.Latency)
	if err != nil || string(b) != `"50ms"` {
		t.Fatalf("marshal = %s %v", b, err)
	}
	if err := json.Unmarshal([]byte(`{"latency":"soon"}`), &r); err == nil {
		t.Fatal("a bad duration was accepted")
	}
}

func TestResetClearsRulesAndCounters(t *testing.T) {
	var s Set
	s.Add(Rule{Route: "/a", Status: 500})
	s.take("GET /a")
	s.Add(Rule{Route: "/a", Status: 500})
	s.Reset()
	if len(s.Pending()) != 0 || len(s.Calls()) != 0 {
		t.Fatalf("after Reset: pending %v calls %v", s.Pending(), s.Calls())
	}
}

// countingServer serves a route that counts its calls and answers 201.
func countingServer(s *Set, route string, calls *atomic.Int32) *httptest.Server {
	h := s.Wrap(route, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		calls.Add(1)
		w.Header().Set("Location", "/x/1")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"1"}`))
	})
	return httptest.NewServer(h)
}

// posted is the answer to a POST, its body read.
type posted struct {
	status int
	header http.Header
	body   []byte
}

func post(t *testing.T, url string) (posted, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return posted{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return posted{status: resp.StatusCode, header: resp.Header, body: b}, err
}

func TestAfterHandlerAppliesTheCallThenReplacesItsAnswer(t *testing.T) {
	var s Set
	var calls atomic.Int32
	srv := countingServer(&s, "POST /x", &calls)
	defer srv.Close()

	// Without AfterHandler the route is not called.
	s.Add(Rule{Route: "POST /x", Status: 502})
	resp, err := post(t, srv.URL)
	if err != nil || resp.status != 502 || calls.Load() != 0 {
		t.Fatalf("plain rule: %v %v, %d calls", resp, err, calls.Load())
	}

	s.Add(Rule{Route: "POST /x", Status: 504, AfterHandler: true, Body: json.RawMessage(`{"message":"upstream timed out"}`)})
	resp, err = post(t, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if resp.status != 504 || string(resp.body) != `{"message":"upstream timed out"}` || calls.Load() != 1 {
		t.Fatalf("got %d %s with %d calls, want the injected 504 after one call", resp.status, resp.body, calls.Load())
	}
	if resp.header.Get("Location") != "" {
		t.Errorf("a header of the discarded answer leaked: %v", resp.header)
	}
	if resp, err := post(t, srv.URL); err != nil || resp.status != 201 || calls.Load() != 2 {
		t.Fatalf("next call: %v %v, %d calls", resp, err, calls.Load())
	}
}

func TestDropClosesTheConnectionWithoutAnAnswer(t *testing.T) {
	var s Set
	var calls atomic.Int32
	srv := countingServer(&s, "POST /x", &calls)
	defer srv.Close()

	s.Add(Rule{Route: "POST /x", Drop: true})
	if resp, err := post(t, srv.URL); err == nil {
		t.Fatalf("dropped call answered %d", resp.status)
	}
	if calls.Load() != 0 {
		t.Fatalf("%d calls, want the route not called", calls.Load())
	}

	// The request applied, then the connection lost.
	s.Add(Rule{Route: "POST /x", Drop: true, AfterHandler: true})
	if resp, err := post(t, srv.URL); err == nil {
		t.Fatalf("dropped call answered %d", resp.status)
	}
	if calls.Load() != 1 {
		t.Fatalf("%d calls, want the route called once", calls.Load())
	}
	if got := s.Count("POST /x"); got != 2 {
		t.Errorf("counter %d, want 2", got)
	}
	if resp, err := post(t, srv.URL); err != nil || resp.status != 201 {
		t.Fatalf("next call: %v %v", resp, err)
	}
}

func TestRuleJSONNamesTheModes(t *testing.T) {
	var r Rule
	if err := json.Unmarshal([]byte(`{"route":"POST /a","status":502,"after_handler":true,"drop":true}`), &r); err != nil {
		t.Fatal(err)
	}
	if !r.AfterHandler || !r.Drop || r.Status != 502 {
		t.Fatalf("decoded %+v", r)
	}
}
