package manifestservice_test

import (
	"context"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// deployManifestService creates a Helm service of the seeded Region
// environment whose raw values file is values (CreateManifestService),
// deploys it and waits for the deployment, as a person does for objects
// that qtail does not manage (a ProxyClass, say). It returns the service's
// ID.
func deployManifestService(t testing.TB, env *acctest.Env, name, values string) string {
	t.Helper()
	id := env.CreateManifestService(t, name, values)
	ctx := acctest.Background(t)
	q := env.QoveryClient(t)
	before, err := q.GetHelmStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.DeployHelm(ctx, id, nil); err != nil {
		t.Fatalf("deploying the Helm service %s: %v", name, err)
	}
	get := func(ctx context.Context) (*qovery.Status, error) { return q.GetHelmStatus(ctx, id) }
	if _, err := qovery.WaitForDeployment(ctx, get, qovery.WaitOptions{PollInterval: 5 * time.Millisecond, Since: before}); err != nil {
		t.Fatalf("deployment of the Helm service %s: %v", name, err)
	}
	return id
}
