package qovery

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

func TestSameAnnotationsCountsRepeats(t *testing.T) {
	a, b := Annotation{Key: "a", Value: "1"}, Annotation{Key: "b", Value: "2"}
	for _, tc := range []struct {
		name          string
		have, want    []Annotation
		scopes, wantS []string
		same          bool
	}{
		{"same, other order", []Annotation{b, a}, []Annotation{a, b}, []string{"JOBS", "SERVICES"}, []string{"SERVICES", "JOBS"}, true},
		{"a repeat instead of another", []Annotation{a, a}, []Annotation{a, b}, nil, nil, false},
		{"another instead of a repeat", []Annotation{a, b}, []Annotation{a, a}, nil, nil, false},
		{"a repeated scope instead of another", nil, nil, []string{"JOBS", "JOBS"}, []string{"JOBS", "SERVICES"}, false},
		{"another scope instead of a repeat", nil, nil, []string{"JOBS", "SERVICES"}, []string{"JOBS", "JOBS"}, false},
		{"repeats on both sides", []Annotation{a, a}, []Annotation{a, a}, []string{"JOBS", "JOBS"}, []string{"JOBS", "JOBS"}, true},
		{"one more annotation", []Annotation{a, b}, []Annotation{a}, nil, nil, false},
		{"one more scope", nil, nil, []string{"JOBS"}, nil, false},
	} {
		g := &AnnotationsGroup{Annotations: tc.have, Scopes: tc.scopes}
		req := &AnnotationsGroupRequest{Annotations: tc.want, Scopes: tc.wantS}
		if got := sameAnnotations(g, req); got != tc.same {
			t.Errorf("%s: sameAnnotations = %v, want %v", tc.name, got, tc.same)
		}
	}
}

func TestErrorDetail(t *testing.T) {
	long := strings.Repeat("é", 512)
	for _, tc := range []struct{ body, want string }{
		{"", ""},
		{"  \n ", ""},
		{`{"detail":"gone"}`, "gone"},
		{`{"detail":"","message":"from message"}`, "from message"},
		{`{"detail":{"name":["taken"]}}`, `{"name":["taken"]}`},
		{`{"detail":["a","b"]}`, `["a","b"]`},
		{`{"message":"","error":"from error"}`, "from error"},
		{`{"status":500}`, `{"status":500}`},
		{"<html>\n  <b>Bad   gateway</b>\n</html>", "<html> <b>Bad gateway</b> </html>"},
		{long, long},
		{long + "x", long + "…"},
	} {
		if got := errorDetail([]byte(tc.body)); got != tc.want {
			t.Errorf("errorDetail(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

func TestAPIErrorMessage(t *testing.T) {
	later := retry.Later{Wait: time.Hour, At: time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)}
	for _, tc := range []struct {
		err  APIError
		want string
	}{
		{APIError{Status: 404, Method: "GET", Path: "/helm/x"}, "qovery: GET /helm/x: 404 Not Found"},
		{APIError{Status: 599, Method: "GET", Path: "/x", Detail: "odd"}, "qovery: GET /x: 599: odd"},
		{APIError{Status: 503, Method: "GET", Path: "/x", Attempts: 1}, "qovery: GET /x: 503 Service Unavailable"},
		{APIError{Status: 503, Method: "GET", Path: "/x", Attempts: 2}, "qovery: GET /x: 503 Service Unavailable (after 2 attempts)"},
		{APIError{Status: 429, Method: "POST", Path: "/x", Detail: "slow down", Later: &later},
			"qovery: POST /x: 429 Too Many Requests: slow down; the API asked to wait 1 hour before the next request (Retry-After: 3600); try again after 2026-03-01 13:00:00 UTC"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	if l, ok := (&APIError{Later: &later}).RetryLater(); !ok || l != later {
		t.Errorf("RetryLater = %v, %v", l, ok)
	}
	if _, ok := (&APIError{}).RetryLater(); ok {
		t.Error("RetryLater without a wait says ok")
	}
}

// rawServer answers every request with status and body, and records the
// request URIs.
type rawServer struct {
	mu     sync.Mutex
	uris   []string
	status int
	body   string
}

func (s *rawServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.uris = append(s.uris, r.RequestURI)
	s.mu.Unlock()
	w.WriteHeader(s.status)
	_, _ = w.Write([]byte(s.body))
}

func newRawClient(t *testing.T, s *rawServer) *Client {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := New(Config{BaseURL: srv.URL + "/api/", Token: "t", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRequestTargetAndStatusRange(t *testing.T) {
	s := &rawServer{status: 299, body: `{"results":[{"id":"a"}]}`}
	c := newRawClient(t, s)
	type item struct {
		ID string `json:"id"`
	}
	items, err := getList[item](context.Background(), c, "/things", nil)
	if err != nil || len(items) != 1 || items[0].ID != "a" {
		t.Fatalf("a 299 answer: %v %v", items, err)
	}
	if _, err := getList[item](context.Background(), c, "/things", url.Values{"q": {"a b"}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.uris, " "); got != "/api/things /api/things?q=a+b" {
		t.Errorf("request URIs %q", got)
	}
	// An empty 2xx body is no list: an error, not an empty list; null
	// results become [].
	s.body = " \n"
	s.status = 200
	items, err = getList[item](context.Background(), c, "/things", nil)
	if items != nil || err == nil || err.Error() != "qovery: GET /things: the answer is empty (HTTP 200)" {
		t.Errorf("empty answer: %#v %v", items, err)
	}
	s.body = `{"results":null}`
	items, err = getList[item](context.Background(), c, "/things", nil)
	if err != nil || items == nil || len(items) != 0 {
		t.Errorf("null results: %#v %v", items, err)
	}
	s.status, s.body = 300, "no"
	if _, err := getList[item](context.Background(), c, "/things", nil); StatusCode(err) != 300 || !strings.HasSuffix(err.Error(), ": 300 Multiple Choices: no") {
		t.Errorf("status 300: %v", err)
	}
}
