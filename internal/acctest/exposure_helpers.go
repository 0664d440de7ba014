package acctest

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

// Routes of the fake Qovery API, as its call counters name them.
const (
	RouteEditApplication        = "PUT /qovery/application/{applicationId}"
	RouteRedeployApplication    = "POST /qovery/application/{applicationId}/redeploy"
	RouteCreateAnnotationsGroup = "POST /qovery/organization/{organizationId}/annotationsGroups"
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

// ContainerID returns the ID of a seeded container ("metrics") of a
// region.
func (e *Env) ContainerID(t testing.TB, region, name string) string {
	t.Helper()
	id, ok := e.Seed().Regions[region].Containers[name]
	if !ok {
		t.Fatalf("no seeded container %q in %s", name, region)
	}
	return id
}

// ContainerExposureConfig is a qtail_exposed_service of a container.
func ContainerExposureConfig(containerID, hostname, extra string) string {
	return fmt.Sprintf(`
resource "qtail_exposed_service" "billing" {
  container_id = %q
  hostname     = %q
  %s
}
`, containerID, hostname, extra)
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
