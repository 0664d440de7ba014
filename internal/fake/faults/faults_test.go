package faults

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
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

	s.SetLatency(30 * time.Millisecond)
	start := time.Now()
	get(t, srv.URL)
	if elapsed := time.Since(start); elapsed < 30*time.Millisecond {
		t.Fatalf("latency not applied: call took %v", elapsed)
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
