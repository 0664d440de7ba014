package acctest

import (
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

// Calls returns how many calls the world's APIs got on one route.
func (e *Env) Calls(route string) int {
	return e.Faults.Count(route)
}

// ApplicationID returns the id of a seeded application ("billing-api",
// "web" or "worker") in a seeded region.
func (e *Env) ApplicationID(t testing.TB, region, name string) string {
	t.Helper()
	r, ok := e.Seed().Regions[region]
	if !ok {
		t.Fatalf("no seeded region %q", region)
	}
	id, ok := r.Applications[name]
	if !ok {
		t.Fatalf("no seeded application %q in %s", name, region)
	}
	return id
}

// DevicesNamed returns the tailnet's devices with this hostname
// (case-insensitive).
func (e *Env) DevicesNamed(hostname string) []tailnetapi.Device {
	var out []tailnetapi.Device
	for _, d := range e.Tailnet.Devices() {
		if strings.EqualFold(d.Hostname, hostname) {
			out = append(out, d)
		}
	}
	return out
}

// MutatingRoutes lists the routes of calls (as Faults.Calls counts them)
// that change something in Qovery or the tailnet: every method but GET,
// without the policy validations and the OAuth token exchanges, which
// change nothing.
func MutatingRoutes(calls map[string]int) []string {
	var out []string
	for route, n := range calls {
		if n > 0 && !strings.HasPrefix(route, "GET ") && !strings.Contains(route, "/acl/validate") && !strings.Contains(route, "/oauth/token") {
			out = append(out, route)
		}
	}
	sort.Strings(out)
	return out
}

// CreationMutations applies config in a clean run and returns the routes
// that its creation called to change something (MutatingRoutes), for the
// tests that interrupt an apply at each of them. It fails the test when
// there are fewer than three: what (such as "the exposure's creation")
// would prove nothing.
func (e *Env) CreationMutations(t *testing.T, config, what string) []string {
	t.Helper()
	e.Faults.ResetCalls()
	var calls map[string]int
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.Factories(),
		Steps: []resource.TestStep{{
			Config: config,
			// The calls of the creation, before the test's destroy.
			Check: func(*terraform.State) error { calls = e.Faults.Calls(); return nil },
		}},
	})
	out := MutatingRoutes(calls)
	if len(out) < 3 {
		t.Fatalf("%s made %d mutating calls (%v): the test would prove nothing", what, len(out), out)
	}
	return out
}
