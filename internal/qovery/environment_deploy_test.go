package qovery_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// handlerTransport serves requests with a handler, in memory, so that a
// test runs in a synctest bubble.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// failNamed fails the deployment of the services it names.
type failNamed map[string]bool

func (f failNamed) Deploy(_ context.Context, s qoveryapi.ServiceSnapshot) error {
	if f[s.Name] {
		return errors.New("back-off restarting failed container")
	}
	return nil
}

func (failNamed) Delete(context.Context, qoveryapi.ServiceSnapshot) error { return nil }

// batchWorld is a fake with an environment of three applications and a
// client that serves it in memory.
type batchWorld struct {
	fake *qoveryapi.Server
	c    *qovery.Client
	env  string
	apps []string
}

func newBatchWorld(t *testing.T, opts qoveryapi.Options, names ...string) *batchWorld {
	t.Helper()
	opts.Token, opts.DeployTime, opts.QueuePerEnvironment = token, 10*time.Second, true
	if opts.Faults == nil {
		opts.Faults = &faults.Set{}
	}
	fake := qoveryapi.New(opts)
	t.Cleanup(fake.Close)
	c, err := qovery.New(qovery.Config{BaseURL: "http://qovery.test", Token: token, NotFoundDelay: time.Millisecond,
		HTTPClient: &http.Client{Transport: retry.Policy{MaxAttempts: 1}.Transport(handlerTransport{fake.Handler()})}})
	if err != nil {
		t.Fatal(err)
	}
	w := &batchWorld{fake: fake, c: c}
	org := fake.SeedOrganization("acme")
	project, err := fake.SeedProject(org, "platform")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := fake.SeedCluster(org, "prod", "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	if w.env, err = fake.SeedEnvironment(project, cl, "prod"); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		id, err := fake.SeedApplication(w.env, name, qoveryapi.Port{Name: "http", InternalPort: 80})
		if err != nil {
			t.Fatal(err)
		}
		w.apps = append(w.apps, id)
	}
	return w
}

// deployAll announces a redeployment of each application, triggers them
// from as many goroutines, a little apart, and waits for each outcome.
func (w *batchWorld) deployAll(t *testing.T) []error {
	t.Helper()
	tickets := make([]*qovery.DeployTicket, len(w.apps))
	for i := range w.apps {
		tickets[i] = w.c.ExpectDeploy("")
	}
	errs := make([]error, len(w.apps))
	var wg sync.WaitGroup
	for i, id := range w.apps {
		wg.Go(func() {
			ctx := t.Context()
			get := func(ctx context.Context) (*qovery.Status, error) { return w.c.GetApplicationStatus(ctx, id) }
			before, err := get(ctx)
			if err != nil {
				errs[i] = err
				return
			}
			// The operations' own calls before the trigger take their
			// time.
			time.Sleep(time.Duration(i) * 300 * time.Millisecond)
			trigger, err := tickets[i].Deploy(ctx, qovery.ServiceDeploy{Kind: qovery.ServiceApplication, ID: id, EnvironmentID: w.env})
			if err != nil {
				errs[i] = err
				return
			}
			_, errs[i] = qovery.WaitForDeployment(ctx, get, qovery.WaitOptions{PollInterval: time.Second, Since: before, Trigger: trigger})
		})
	}
	wg.Wait()
	return errs
}

// TestDeployTicketsMakeOneAction: the redeployments announced together
// make one deploy-services action, and each wait follows it to its own
// service's outcome, in one deployment time.
func TestDeployTicketsMakeOneAction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newBatchWorld(t, qoveryapi.Options{}, "api", "web", "admin")
		for i, err := range w.deployAll(t) {
			if err != nil {
				t.Errorf("%s: %v", w.apps[i], err)
			}
		}
		actions := w.fake.Actions()
		if len(actions) != 1 || len(actions[0].Services) != 3 {
			t.Fatalf("actions %+v, want one of the three applications", actions)
		}
		if n := w.fake.Faults().Count("POST /environment/{environmentId}/service/deploy"); n != 1 {
			t.Errorf("%d deploy-services requests, want 1", n)
		}
		for _, id := range w.apps {
			st, err := w.c.GetApplicationStatus(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if st.State != qovery.StateDeployed || st.DeploymentRequestID == nil || *st.DeploymentRequestID != actions[0].RequestID {
				t.Errorf("%s: %s under %v, want DEPLOYED under the action's request %s", id, st.State, st.DeploymentRequestID, actions[0].RequestID)
			}
		}
	})
}

// TestDeployTicketFailureIsItsOwn: in a batch, the service whose
// deployment fails is the only one whose wait fails.
func TestDeployTicketFailureIsItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newBatchWorld(t, qoveryapi.Options{Deployer: failNamed{"web": true}}, "api", "web", "admin")
		errs := w.deployAll(t)
		var de *qovery.DeploymentError
		if !errors.As(errs[1], &de) || de.ServiceID != w.apps[1] {
			t.Errorf("web: %v, want its deployment error", errs[1])
		}
		for _, i := range []int{0, 2} {
			if errs[i] != nil {
				t.Errorf("%s: %v, want success", w.apps[i], errs[i])
			}
		}
		if n := len(w.fake.Actions()); n != 1 {
			t.Errorf("%d actions, want 1", n)
		}
	})
}

// TestDeployTicketBatchRefused: when the API refuses the batch, each
// service is deployed on its own.
func TestDeployTicketBatchRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		set := &faults.Set{}
		set.Add(faults.Rule{Route: "POST /environment/{environmentId}/service/deploy", Status: http.StatusBadRequest})
		w := newBatchWorld(t, qoveryapi.Options{Faults: set}, "api", "web")
		for i, err := range w.deployAll(t) {
			if err != nil {
				t.Errorf("%s: %v", w.apps[i], err)
			}
		}
		if n := set.Count("POST /application/{applicationId}/redeploy"); n != 2 {
			t.Errorf("%d redeploys, want one per application", n)
		}
	})
}

// TestDeployTicketAlone: a deployment alone uses the service's own action,
// after the quiet period.
func TestDeployTicketAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newBatchWorld(t, qoveryapi.Options{}, "api")
		start := time.Now()
		trigger, err := w.c.ExpectDeploy("").Deploy(t.Context(), qovery.ServiceDeploy{Kind: qovery.ServiceApplication, ID: w.apps[0], EnvironmentID: w.env})
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != qovery.DefaultDeployQuiet {
			t.Errorf("waited %s, want the quiet period", waited)
		}
		if trigger.DeploymentRequestID == nil || w.fake.Faults().Count("POST /application/{applicationId}/redeploy") != 1 {
			t.Errorf("trigger %+v, calls %v", trigger, w.fake.Faults().Calls())
		}
	})
}

// TestDeployWithoutBatching: a negative DeployQuiet deploys every service
// on its own, at once.
func TestDeployWithoutBatching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := qoveryapi.New(qoveryapi.Options{Token: token, DeployTime: time.Second})
		t.Cleanup(fake.Close)
		c, err := qovery.New(qovery.Config{BaseURL: "http://qovery.test", Token: token, DeployQuiet: -1,
			HTTPClient: &http.Client{Transport: handlerTransport{fake.Handler()}}})
		if err != nil {
			t.Fatal(err)
		}
		org := fake.SeedOrganization("acme")
		project, _ := fake.SeedProject(org, "platform")
		cl, _ := fake.SeedCluster(org, "prod", "us-east-1")
		env, err := fake.SeedEnvironment(project, cl, "prod")
		if err != nil {
			t.Fatal(err)
		}
		app, err := fake.SeedApplication(env, "api", qoveryapi.Port{Name: "http", InternalPort: 80})
		if err != nil {
			t.Fatal(err)
		}
		ticket := c.ExpectDeploy("")
		start := time.Now()
		if _, err := ticket.Deploy(t.Context(), qovery.ServiceDeploy{Kind: qovery.ServiceApplication, ID: app, EnvironmentID: env}); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("waited %s", waited)
		}
	})
}

// TestDeployTicketsPerEnvironment: a batch makes one action per
// environment; a service alone in its environment uses its own action.
func TestDeployTicketsPerEnvironment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newBatchWorld(t, qoveryapi.Options{}, "api", "web")
		var project, clusterID string
		w.fake.Do(func(st *qoveryapi.State) {
			project, clusterID = st.Environments[w.env].ProjectID, st.Environments[w.env].ClusterID
		})
		other, err := w.fake.SeedEnvironment(project, clusterID, "staging")
		if err != nil {
			t.Fatal(err)
		}
		lone, err := w.fake.SeedApplication(other, "lone", qoveryapi.Port{Name: "http", InternalPort: 80})
		if err != nil {
			t.Fatal(err)
		}
		services := []qovery.ServiceDeploy{
			{Kind: qovery.ServiceApplication, ID: w.apps[0], EnvironmentID: w.env},
			{Kind: qovery.ServiceApplication, ID: w.apps[1], EnvironmentID: w.env},
			{Kind: qovery.ServiceApplication, ID: lone, EnvironmentID: other},
		}
		tickets := make([]*qovery.DeployTicket, len(services))
		for i := range services {
			tickets[i] = w.c.ExpectDeploy("")
		}
		var wg sync.WaitGroup
		for i, s := range services {
			wg.Go(func() {
				if _, err := tickets[i].Deploy(t.Context(), s); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n := w.fake.Faults().Count("POST /environment/{environmentId}/service/deploy"); n != 1 {
			t.Errorf("%d deploy-services requests, want 1", n)
		}
		if n := w.fake.Faults().Count("POST /application/{applicationId}/redeploy"); n != 1 {
			t.Errorf("%d redeploys, want 1 (the lone one)", n)
		}
	})
}

// TestDeployTicketKeyTakesUpAnnouncement: a deployment announced by key
// (at plan) and taken up by the same key (at apply) is one expected
// deployment: the batch waits for it, and for nothing else.
func TestDeployTicketKeyTakesUpAnnouncement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newBatchWorld(t, qoveryapi.Options{}, "api", "web")
		w.c.ExpectDeploy("exposure:web")
		first := w.c.ExpectDeploy("")
		var wg sync.WaitGroup
		wg.Go(func() {
			if _, err := first.Deploy(t.Context(), qovery.ServiceDeploy{Kind: qovery.ServiceApplication, ID: w.apps[0], EnvironmentID: w.env}); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			time.Sleep(500 * time.Millisecond)
			ticket := w.c.ExpectDeploy("exposure:web")
			time.Sleep(100 * time.Millisecond)
			if _, err := ticket.Deploy(t.Context(), qovery.ServiceDeploy{Kind: qovery.ServiceApplication, ID: w.apps[1], EnvironmentID: w.env}); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		if a := w.fake.Actions(); len(a) != 1 || len(a[0].Services) != 2 {
			t.Errorf("actions %+v, want one of both", a)
		}
	})
}
