package exposedservice_test

import (
	"fmt"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
)

// Routes of the fake Qovery API, as its call counters name them.
const (
	routeEditApplication     = "PUT /qovery/application/{applicationId}"
	routeRedeployApplication = "POST /qovery/application/{applicationId}/redeploy"
)

// containerID returns the ID of a seeded container ("metrics") of a
// region.
func containerID(t testing.TB, env *acctest.Env, region, name string) string {
	t.Helper()
	id, ok := env.Seed().Regions[region].Containers[name]
	if !ok {
		t.Fatalf("no seeded container %q in %s", name, region)
	}
	return id
}

// containerExposureConfig is a qtail_exposed_service of a container.
func containerExposureConfig(containerID, hostname, extra string) string {
	return fmt.Sprintf(`
resource "qtail_exposed_service" "billing" {
  container_id = %q
  hostname     = %q
  %s
}
`, containerID, hostname, extra)
}
