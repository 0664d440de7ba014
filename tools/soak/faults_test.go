package main

import (
	"math/rand"
	"net/http"
	"slices"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
)

func TestPickFaults(t *testing.T) {
	calls := map[string]int{
		"GET /qovery/application/{applicationId}":         40,
		"POST /qovery/environment/{environmentId}/helm":   1,
		"DELETE /tailscale/api/v2/device/{deviceId}":      2,
		"GET /tailscale/api/v2/tailnet/{tailnet}/acl":     30,
		"POST /tailscale/api/v2/tailnet/{tailnet}/acl":    5,
		"POST /qovery/application/{applicationId}/deploy": 3,
	}
	allowed := map[string]bool{policyWrite: true, "/tailscale/*": true, "/qovery/*": true}
	for r := range calls {
		allowed[r] = true
		allowed[wildcard(r)] = true
	}
	kinds := map[string]bool{}
	rules := pickFaults(rand.New(rand.NewSource(1)), 200, calls)
	if len(rules) != 200 {
		t.Fatalf("%d rules, want 200", len(rules))
	}
	for _, r := range rules {
		k := kindOf(r)
		kinds[k] = true
		if !allowed[r.Route] {
			t.Errorf("%s on %q, a route that was not called", k, r.Route)
		}
		limit := map[string]int{fault429: 2, fault5xx: 2, faultLost: 1, faultDrop: 1, fault412: 5, faultLatency: 20}[k]
		if n := max(r.Count, 1); n > limit {
			t.Errorf("%s on %s for %d calls, more than %d", k, r.Route, n, limit)
		}
		if (k == faultLost || k == faultDrop) && r.Route[:4] == "GET " {
			t.Errorf("%s on a read: %s", k, r.Route)
		}
		if k == fault429 && (r.Status != http.StatusTooManyRequests || r.RetryAfter == 0) {
			t.Errorf("429 rule %+v", r)
		}
	}
	for _, k := range []string{fault429, fault5xx, faultLost, faultDrop, fault412, faultLatency} {
		if !kinds[k] {
			t.Errorf("no fault of kind %s in 200", k)
		}
	}
	// The same seed, the same faults.
	if again := pickFaults(rand.New(rand.NewSource(1)), 200, calls); !slices.EqualFunc(rules, again, func(a, b faults.Rule) bool { return a.Route == b.Route && a.Count == b.Count && a.Status == b.Status }) {
		t.Error("the same seed picked other faults")
	}
	if got := wildcard("POST /qovery/environment/{environmentId}/helm"); got != "POST /qovery/*" {
		t.Errorf("wildcard = %q", got)
	}
}
