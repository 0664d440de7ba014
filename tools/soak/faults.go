package main

import (
	"math/rand"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
)

// policyWrite is the route of the policy file's writes.
const policyWrite = "POST /tailscale/api/v2/tailnet/{tailnet}/acl"

// Kinds of injected faults, as the figures name them.
const (
	fault429     = "429 with Retry-After"
	fault5xx     = "5xx"
	faultLost    = "answer lost after the server acted (502/504)"
	faultDrop    = "connection dropped after the server acted"
	fault412     = "412 on the policy write"
	faultLatency = "latency"
)

// pickFaults picks n rules at random, each on a route of calls (what the
// same phase called the last time), or on every call of the route's method
// to the route's API, with counts that qtail's bounded retries can absorb:
// at most 2 calls for 429 and 5xx (6 attempts), 5 for 412 (10 writes), 1
// for a lost answer. The answers lost go to the writes.
func pickFaults(rng *rand.Rand, n int, calls map[string]int) []faults.Rule {
	routes := sortedCounts(calls)
	var writes []string
	for _, r := range routes {
		if !strings.HasPrefix(r, "GET ") {
			writes = append(writes, r)
		}
	}
	if len(writes) == 0 {
		writes = []string{"POST /qovery/*", "POST /tailscale/*"}
	}
	if len(routes) == 0 {
		routes = []string{"GET /qovery/*", "GET /tailscale/*"}
	}
	pick := func(list []string) string {
		r := list[rng.Intn(len(list))]
		if rng.Intn(2) == 0 {
			return wildcard(r)
		}
		return r
	}
	var out []faults.Rule
	for range n {
		switch rng.Intn(6) {
		case 0:
			out = append(out, faults.Rule{Route: pick(routes), Status: http.StatusTooManyRequests, RetryAfter: 1, Count: 1 + rng.Intn(2)})
		case 1:
			statuses := []int{500, 502, 503, 504}
			out = append(out, faults.Rule{Route: pick(routes), Status: statuses[rng.Intn(len(statuses))], Count: 1 + rng.Intn(2)})
		case 2:
			statuses := []int{502, 504}
			out = append(out, faults.Rule{Route: pick(writes), Status: statuses[rng.Intn(len(statuses))], AfterHandler: true})
		case 3:
			out = append(out, faults.Rule{Route: pick(writes), Drop: true, AfterHandler: true})
		case 4:
			out = append(out, faults.Rule{Route: policyWrite, Status: http.StatusPreconditionFailed, Count: 2 + rng.Intn(4)})
		default:
			prefixes := []string{"/tailscale/*", "/qovery/*"}
			out = append(out, faults.Rule{Route: prefixes[rng.Intn(len(prefixes))], Latency: faults.Duration(time.Duration(100+rng.Intn(900)) * time.Millisecond), Count: 5 + rng.Intn(16)})
		}
	}
	return out
}

// wildcard is the route that matches every call of route's method to
// route's API: "POST /qovery/*" for "POST /qovery/environment/{id}/helm".
func wildcard(route string) string {
	method, path, _ := strings.Cut(route, " ")
	api, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return method + " /" + api + "/*"
}

// kindOf names the kind of an injected rule.
func kindOf(r faults.Rule) string {
	switch {
	case r.Drop:
		return faultDrop
	case r.AfterHandler:
		return faultLost
	case r.Status == http.StatusTooManyRequests:
		return fault429
	case r.Status == http.StatusPreconditionFailed:
		return fault412
	case r.Status >= 500:
		return fault5xx
	}
	return faultLatency
}

// inject queues n random faults for the phase that follows, on what the
// same phase called the last time (what any phase called, the first
// time).
func (s *soak) inject(phase string, n int) {
	calls := s.recent[phase]
	if len(calls) == 0 {
		calls = s.seen
	}
	rules := pickFaults(s.rng, n, calls)
	s.injected = rules
	s.world.Faults.Add(rules...)
}

// clearFaults drops the faults left over from the phase and counts those
// the phase met.
func (s *soak) clearFaults(phase string) {
	left := map[string]int{}
	for _, r := range s.world.Faults.Pending() {
		left[kindOf(r)] += r.Count
	}
	s.learn(phase, s.world.Faults.Calls())
	s.world.Faults.Reset()
	for _, r := range s.injected {
		n := r.Count
		if n <= 0 {
			n = 1
		}
		k := kindOf(r)
		// The calls of the rule that no request met.
		rest := min(n, left[k])
		left[k] -= rest
		s.fig.faults[k] += n - rest
		s.fig.queued[k] += n
	}
	s.injected = nil
}

// learn keeps the routes a phase called, for the faults of the same
// phase in the next round.
func (s *soak) learn(phase string, calls map[string]int) {
	s.recent[phase] = calls
	for route, n := range calls {
		s.seen[route] += n
	}
}

// statusCounter counts the sandbox's API calls and the answers that call
// for a retry: 429, 412 and 5xx by API and status, and the connections
// dropped.
type statusCounter struct {
	next  http.Handler
	mu    sync.Mutex
	by    map[string]int
	calls int
}

func (c *statusCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0]
	if api != "qovery" && api != "tailscale" {
		c.next.ServeHTTP(w, r)
		return
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				c.count(api + " dropped")
			}
			panic(v)
		}
	}()
	c.next.ServeHTTP(rec, r)
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	if rec.status == http.StatusTooManyRequests || rec.status == http.StatusPreconditionFailed || rec.status >= 500 {
		c.count(api + " " + strconv.Itoa(rec.status))
	}
}

func (c *statusCounter) count(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.by[key]++
}

func (c *statusCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// snapshot returns the counts by API and status.
func (c *statusCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.by))
	for k, v := range c.by {
		out[k] = v
	}
	return out
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// Flush lets the answers that stream still flush.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func sortedCounts(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
