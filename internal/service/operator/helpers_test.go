package operator_test

import (
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// Routes of the fakes that the operator tests count.
const (
	routeCreateHelm = "POST /qovery/environment/{environmentId}/helm"
	routeDeployHelm = "POST /qovery/helm/{helmId}/deploy"
	routeCreateKey  = "POST /tailscale/api/v2/tailnet/{tailnet}/keys"
)

// oauthClient reads an OAuth client's metadata through the keys API.
func oauthClient(t testing.TB, env *acctest.Env, id string) *tailnet.Key {
	t.Helper()
	k, err := env.TailnetClient(t).GetKey(acctest.Background(t), id)
	if err != nil {
		t.Fatalf("reading the OAuth client %s: %v", id, err)
	}
	return k
}
