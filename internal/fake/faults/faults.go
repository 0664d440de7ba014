// Package faults adds latency, injected failures and per-route call counts
// to the fake APIs. Both fakes wrap every route handler with Set.Wrap.
//
// A route is named by its method and pattern as the fake registers it, with
// the fake's prefix, for example "POST /tailscale/api/v2/tailnet/{tailnet}/acl".
package faults

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Rule injects a failure into the next Count calls of the routes it matches.
type Rule struct {
	// Route is "METHOD /pattern" as listed by Calls. An empty method part
	// ("/pattern" alone) matches every method; a trailing "*" matches any
	// route that starts with what comes before it.
	Route string `json:"route"`
	// Status is the HTTP status to answer with instead of calling the
	// route (see AfterHandler). Zero, without Drop, means only Latency
	// applies.
	Status int `json:"status,omitempty"`
	// RetryAfter, when set, is sent as the Retry-After header (seconds).
	RetryAfter int `json:"retry_after,omitempty"`
	// Body is the JSON body sent with Status. When empty a JSON body
	// {"message": "<status text>"} is sent.
	Body json.RawMessage `json:"body,omitempty"`
	// Latency is added before the call (or the injected answer).
	Latency Duration `json:"latency,omitempty"`
	// Count is how many calls the rule applies to. Zero or less means 1.
	Count int `json:"count,omitempty"`
	// AfterHandler runs the route first, so that the call takes effect,
	// and then throws its answer away for the injected one (Status or
	// Drop): the request was applied but its answer was lost, as when a
	// gateway times out (502, 504) or a connection breaks after the
	// server acted. Without it the route is not called.
	AfterHandler bool `json:"after_handler,omitempty"`
	// Drop closes the connection without any answer instead of sending
	// Status, so that the client sees a network error after its request
	// was sent.
	Drop bool `json:"drop,omitempty"`
}

// Duration is a time.Duration that reads and writes as "50ms" in JSON.
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads "50ms" or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*d = Duration(n)
	return nil
}

// Set holds the rules, the global latency and the counters of one fake.
// The zero value is ready to use.
type Set struct {
	mu      sync.Mutex
	latency time.Duration
	rules   []*Rule
	calls   map[string]int
}

// SetLatency adds d to every call.
func (s *Set) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// Add queues rules. Rules apply in the order they were added.
func (s *Set) Add(rules ...Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rules {
		if r.Count <= 0 {
			r.Count = 1
		}
		s.rules = append(s.rules, &r)
	}
}

// Pending returns the rules that still have calls left.
func (s *Set) Pending() []Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Rule, 0, len(s.rules))
	for _, r := range s.rules {
		out = append(out, *r)
	}
	return out
}

// Calls returns a copy of the per-route counters.
func (s *Set) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// Count returns the counter of one route ("METHOD /pattern").
func (s *Set) Count(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[route]
}

// Reset clears rules and counters; the global latency stays.
func (s *Set) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = nil
	s.calls = nil
}

// ResetCalls clears the counters only.
func (s *Set) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
}

// Routes lists the counted routes, sorted.
func (s *Set) Routes() []string {
	calls := s.Calls()
	out := make([]string, 0, len(calls))
	for k := range calls {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (r *Rule) matches(route string) bool {
	want := r.Route
	if strings.HasPrefix(want, "/") {
		// "/pattern": any method.
		if i := strings.IndexByte(route, ' '); i >= 0 {
			route = route[i+1:]
		}
	}
	if strings.HasSuffix(want, "*") {
		return strings.HasPrefix(route, strings.TrimSuffix(want, "*"))
	}
	return route == want
}

// take counts the call and returns the rule to apply, if any.
func (s *Set) take(route string) (time.Duration, *Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[route]++
	latency := s.latency
	for i, r := range s.rules {
		if !r.matches(route) {
			continue
		}
		applied := *r
		r.Count--
		if r.Count <= 0 {
			s.rules = append(s.rules[:i:i], s.rules[i+1:]...)
		}
		return latency + time.Duration(applied.Latency), &applied
	}
	return latency, nil
}

// Wrap returns h wrapped with counting, latency and injected failures for
// the route "METHOD /pattern".
func (s *Set) Wrap(route string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		delay, rule := s.take(route)
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-r.Context().Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		if rule == nil || (rule.Status == 0 && !rule.Drop) {
			h(w, r)
			return
		}
		if rule.AfterHandler {
			h(&discardWriter{header: http.Header{}}, r)
		}
		if rule.Drop {
			// The server closes the connection (or resets the
			// stream) without answering, and logs nothing.
			panic(http.ErrAbortHandler)
		}
		if rule.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(rule.RetryAfter))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rule.Status)
		if len(rule.Body) > 0 {
			_, _ = w.Write(rule.Body)
			return
		}
		b, _ := json.Marshal(map[string]string{"message": http.StatusText(rule.Status)})
		_, _ = w.Write(b)
	}
}

// discardWriter takes the answer of a route whose answer is replaced.
type discardWriter struct {
	header http.Header
}

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
