package cluster_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// gatedDeployer holds the first deployment until release, then ends the
// deployments with results in turn (nil once they run out).
type gatedDeployer struct {
	mu      sync.Mutex
	results []error
	held    bool
	entered chan struct{}
	gate    chan struct{}
}

func newGatedDeployer(results ...error) *gatedDeployer {
	return &gatedDeployer{results: results, entered: make(chan struct{}), gate: make(chan struct{})}
}

func (d *gatedDeployer) release() { close(d.gate) }

func (d *gatedDeployer) Deploy(ctx context.Context, _ qoveryapi.ServiceSnapshot) error {
	d.mu.Lock()
	hold := !d.held
	d.held = true
	d.mu.Unlock()
	if hold {
		close(d.entered)
		select {
		case <-d.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.results) == 0 {
		return nil
	}
	err := d.results[0]
	d.results = d.results[1:]
	return err
}

func (d *gatedDeployer) Delete(context.Context, qoveryapi.ServiceSnapshot) error { return nil }

// helmFixture serves a fake Qovery API with opts and creates a Helm
// service from Git in it.
func helmFixture(t *testing.T, opts qoveryapi.Options) (*qoveryapi.Server, *qovery.Client, string) {
	t.Helper()
	opts.Token = "token"
	opts.DeployTime = 20 * time.Millisecond
	fake := qoveryapi.New(opts)
	srv := httptest.NewServer(fake.Handler())
	t.Cleanup(func() {
		srv.Close()
		fake.Close()
	})
	q, err := qovery.New(qovery.Config{BaseURL: srv.URL, Token: "token", NotFoundDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	org := fake.SeedOrganization("acme")
	project, err := fake.SeedProject(org, "platform")
	if err != nil {
		t.Fatal(err)
	}
	clusterID, err := fake.SeedCluster(org, "prod", "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	env, err := fake.SeedEnvironment(project, clusterID, "prod")
	if err != nil {
		t.Fatal(err)
	}
	h, err := q.CreateHelm(t.Context(), env, &qovery.HelmRequest{Name: "manifests",
		Source: qovery.HelmSourceRequest{GitRepository: &qovery.GitRepository{URL: "https://github.com/acme/charts.git", Branch: "main", RootPath: "/manifests"}}})
	if err != nil {
		t.Fatal(err)
	}
	return fake, q, h.ID
}

// waitFor polls cond until it holds, failing the test after a long bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never happened", what)
		}
	}
}

// TestDeployHelmQueuesBehindARunningAction: while someone's deployment
// runs, DeployHelm requests its own at once (the API queues it) and
// returns its outcome, a failure here, not the running one's success nor
// the previous final state that the lagging status shows.
func TestDeployHelmQueuesBehindARunningAction(t *testing.T) {
	dep := newGatedDeployer(nil, errors.New("the chart does not render"))
	fake, q, helmID := helmFixture(t, qoveryapi.Options{Deployer: dep})
	if err := fake.Deploy(helmID); err != nil {
		t.Fatal(err)
	}
	<-dep.entered
	done := make(chan error, 1)
	go func() { done <- cluster.DeployHelm(t.Context(), q, helmID, 2*time.Millisecond) }()
	waitFor(t, "the deployment request during the running one", func() bool { return fake.Faults().Count("POST /helm/{helmId}/deploy") == 1 })
	dep.release()
	err := <-done
	var de *qovery.DeploymentError
	if !errors.As(err, &de) || de.State != qovery.StateDeploymentError {
		t.Fatalf("DeployHelm: %v, want the failure of its own deployment", err)
	}
	st, ok := fake.Status(helmID)
	if !ok || de.DeploymentRequestID != st.RequestID || st.RequestsCount != 2 {
		t.Errorf("failed request %s, the service's last %+v", de.DeploymentRequestID, st)
	}
}

// TestDeployHelmAfterAConflict: against the 409 of the API reference
// (ConflictWhileBusy), DeployHelm waits for the running action, whatever
// its outcome, and asks again.
func TestDeployHelmAfterAConflict(t *testing.T) {
	dep := newGatedDeployer(errors.New("someone's deployment failed"))
	fake, q, helmID := helmFixture(t, qoveryapi.Options{Deployer: dep, ConflictWhileBusy: true})
	if err := fake.Deploy(helmID); err != nil {
		t.Fatal(err)
	}
	<-dep.entered
	done := make(chan error, 1)
	go func() { done <- cluster.DeployHelm(t.Context(), q, helmID, 2*time.Millisecond) }()
	waitFor(t, "the refused deployment request", func() bool { return fake.Faults().Count("POST /helm/{helmId}/deploy") == 1 })
	dep.release()
	if err := <-done; err != nil {
		t.Fatalf("DeployHelm: %v", err)
	}
	if n := fake.Faults().Count("POST /helm/{helmId}/deploy"); n != 2 {
		t.Errorf("%d deployment requests, want the refused one and the accepted one", n)
	}
	if st, _ := fake.Status(helmID); st.State != qovery.StateDeployed || st.RequestsCount != 2 {
		t.Errorf("status %+v", st)
	}
}
