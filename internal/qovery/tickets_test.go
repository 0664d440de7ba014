package qovery_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// TestForgottenTicketIsNotWaitedFor: a batch stops waiting for a
// deployment whose ticket is forgotten, and a forgotten ticket that
// deploys after all does so on its own.
func TestForgottenTicketIsNotWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newBatchWorld(t, qoveryapi.Options{}, "api", "web")
		forgotten, kept := w.c.ExpectDeploy(""), w.c.ExpectDeploy("")
		forgotten.Forget()
		forgotten.Forget() // a second time changes nothing
		start := time.Now()
		if _, err := kept.Deploy(t.Context(), qovery.ServiceDeploy{Kind: qovery.ServiceApplication, ID: w.apps[0], EnvironmentID: w.env}); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited >= qovery.DefaultDeployMaxWait {
			t.Errorf("the deployment waited %s for a forgotten one", waited)
		}
		if _, err := forgotten.Deploy(t.Context(), qovery.ServiceDeploy{Kind: qovery.ServiceApplication, ID: w.apps[1], EnvironmentID: w.env}); err != nil {
			t.Fatal(err)
		}
		if n := w.fake.Faults().Count("POST /application/{applicationId}/redeploy"); n != 2 {
			t.Errorf("%d redeploys, want 2: each deployment on its own", n)
		}
		if n := w.fake.Faults().Count("POST /environment/{environmentId}/service/deploy"); n != 0 {
			t.Errorf("%d deploy-services actions, want none", n)
		}
	})
}

func TestNilTicket(t *testing.T) {
	var ticket *qovery.DeployTicket
	ticket.Forget()
	if _, err := ticket.Deploy(t.Context(), qovery.ServiceDeploy{ID: "a1"}); err == nil || err.Error() != "qovery: no deployment ticket for service a1" {
		t.Errorf("Deploy on a nil ticket: %v", err)
	}
}

// TestTicketOutsideAnEnvironmentIsNotWaitedFor: a deployment without an
// environment is triggered on its own at once, and the others do not
// wait for it.
func TestTicketOutsideAnEnvironmentIsNotWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newBatchWorld(t, qoveryapi.Options{}, "api", "web")
		alone, kept := w.c.ExpectDeploy(""), w.c.ExpectDeploy("")
		if _, err := alone.Deploy(t.Context(), qovery.ServiceDeploy{Kind: qovery.ServiceApplication, ID: w.apps[1]}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := kept.Deploy(t.Context(), qovery.ServiceDeploy{Kind: qovery.ServiceApplication, ID: w.apps[0], EnvironmentID: w.env}); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited >= qovery.DefaultDeployMaxWait {
			t.Errorf("the deployment waited %s for one already triggered", waited)
		}
		if n := w.fake.Faults().Count("POST /application/{applicationId}/redeploy"); n != 2 {
			t.Errorf("%d redeploys, want 2", n)
		}
	})
}
