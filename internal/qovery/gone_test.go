package qovery_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// deletedServices makes a Helm service, an application and a container,
// deletes the three and waits for the deletions to end.
func (f *fixture) deletedServices() (helm, app, container string) {
	f.t.Helper()
	c := ctx(f.t)
	h := f.operator()
	ctr, err := f.fake.SeedContainer(f.env, "metrics", "prom/statsd-exporter", "v0.28.0", qoveryapi.Port{Name: "http", InternalPort: 9102})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, id := range []string{h.ID, f.app, ctr} {
		if err := f.fake.DeleteService(id); err != nil {
			f.t.Fatal(err)
		}
	}
	for _, get := range []func(context.Context) (*qovery.Status, error){
		func(ctx context.Context) (*qovery.Status, error) { return f.c.GetHelmStatus(ctx, h.ID) },
		func(ctx context.Context) (*qovery.Status, error) { return f.c.GetApplicationStatus(ctx, f.app) },
		func(ctx context.Context) (*qovery.Status, error) { return f.c.GetContainerStatus(ctx, ctr) },
	} {
		if err := qovery.WaitForDeletion(c, get, fast); err != nil {
			f.t.Fatal(err)
		}
	}
	return h.ID, f.app, ctr
}

// TestDeletedServicesAreGone: whatever the API answers for a deleted
// service (403, 400 "does not exist", 404), the client reports it gone
// once the environment's list proves it.
func TestDeletedServicesAreGone(t *testing.T) {
	for _, mode := range []struct {
		name   string
		answer qoveryapi.DeletedAnswer
		status int
	}{
		{"403", qoveryapi.DeletedForbidden, http.StatusForbidden},
		{"400 does not exist", qoveryapi.DeletedDoesNotExist, http.StatusBadRequest},
		{"404", qoveryapi.DeletedNotFound, http.StatusNotFound},
	} {
		t.Run(mode.name, func(t *testing.T) {
			f := newFixture(t, qoveryapi.Options{AfterDelete: mode.answer})
			c := ctx(t)
			helm, app, container := f.deletedServices()
			in := qovery.InEnvironment(f.env)
			gets := map[string]func(...qovery.Parent) error{
				"helm":        func(in ...qovery.Parent) error { _, err := f.c.GetHelm(c, helm, in...); return err },
				"delete helm": func(in ...qovery.Parent) error { return f.c.DeleteHelm(c, helm, in...) },
				"application": func(in ...qovery.Parent) error { _, err := f.c.GetApplication(c, app, in...); return err },
				"container":   func(in ...qovery.Parent) error { _, err := f.c.GetContainer(c, container, in...); return err },
			}
			for name, get := range gets {
				err := get(in)
				if !qovery.IsNotFound(err) {
					t.Errorf("%s with its environment: %v", name, err)
				}
				if mode.status != http.StatusNotFound && !strings.Contains(err.Error(), "was deleted") {
					t.Errorf("%s: %v does not say how it is known", name, err)
				}
				// Without the environment: a 400 that says the object does
				// not exist is taken at its word, a 403 is not.
				err = get()
				switch mode.status {
				case http.StatusForbidden:
					if qovery.StatusCode(err) != http.StatusForbidden || qovery.IsNotFound(err) {
						t.Errorf("%s without its environment: %v", name, err)
					}
				default:
					if !qovery.IsNotFound(err) {
						t.Errorf("%s without its environment: %v", name, err)
					}
				}
			}
		})
	}
}

// TestForbiddenServiceIsNotGone: a 403 from a token that lost access (the
// environment's list is refused too), or for a service the list still
// holds, is never taken for "gone".
func TestForbiddenServiceIsNotGone(t *testing.T) {
	f := newFixture(t, qoveryapi.Options{})
	c := ctx(t)
	in := qovery.InEnvironment(f.env)
	h := f.operator()
	ctr, err := f.fake.SeedContainer(f.env, "metrics", "prom/statsd-exporter", "v0.28.0")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := json.RawMessage(`{"status":403,"detail":"forbidden"}`)

	// The token lost access to the environment: the list is refused.
	for _, tc := range []struct {
		name, route, list string
		get               func() error
	}{
		{"helm", "GET /helm/{helmId}", "GET /environment/{environmentId}/helm", func() error { _, err := f.c.GetHelm(c, h.ID, in); return err }},
		{"delete helm", "DELETE /helm/{helmId}", "GET /environment/{environmentId}/helm", func() error { return f.c.DeleteHelm(c, h.ID, in) }},
		{"application", "GET /application/{applicationId}", "GET /environment/{environmentId}/application", func() error { _, err := f.c.GetApplication(c, f.app, in); return err }},
		{"container", "GET /container/{containerId}", "GET /environment/{environmentId}/container", func() error { _, err := f.c.GetContainer(c, ctr, in); return err }},
	} {
		f.fake.Faults().Add(faults.Rule{Route: tc.route, Status: 403, Body: forbidden}, faults.Rule{Route: tc.list, Status: 403, Body: forbidden})
		err := tc.get()
		if qovery.StatusCode(err) != http.StatusForbidden || qovery.IsNotFound(err) ||
			!strings.Contains(err.Error(), "API token has no access to the") || !strings.Contains(err.Error(), "environment "+f.env) {
			t.Errorf("%s, list refused: %v", tc.name, err)
		}
		// The list holds it: the 403 is about the object itself.
		f.fake.Faults().Add(faults.Rule{Route: tc.route, Status: 403, Body: forbidden})
		if err := tc.get(); qovery.StatusCode(err) != http.StatusForbidden || qovery.IsNotFound(err) {
			t.Errorf("%s, still listed: %v", tc.name, err)
		}
	}
	// A 400 "does not exist" for an object the list still holds is
	// reported as is.
	f.fake.Faults().Add(faults.Rule{Route: "GET /helm/{helmId}", Status: 400, Body: json.RawMessage(`{"status":400,"detail":"helm does not exist"}`)})
	if _, err := f.c.GetHelm(c, h.ID, in); qovery.StatusCode(err) != http.StatusBadRequest {
		t.Errorf("400 for a listed service: %v", err)
	}
	// Another error of the list leaves the answer as it was.
	f.fake.Faults().Add(faults.Rule{Route: "GET /helm/{helmId}", Status: 403, Body: forbidden},
		faults.Rule{Route: "GET /environment/{environmentId}/helm", Status: 500, Count: 3})
	if _, err := f.c.GetHelm(c, h.ID, in); qovery.StatusCode(err) != http.StatusForbidden || strings.Contains(err.Error(), "no access") {
		t.Errorf("list failing: %v", err)
	}
	// A live service reads normally with its environment named.
	if got, err := f.c.GetHelm(c, h.ID, in); err != nil || got.ID != h.ID {
		t.Errorf("live: %+v %v", got, err)
	}
}

// TestDeletedOrganizationObjects: Helm repositories and annotations groups
// answer 400 "does not exist" in that mode; the organization's list
// proves them gone as for a 403.
func TestDeletedOrganizationObjects(t *testing.T) {
	f := newFixture(t, qoveryapi.Options{AfterDelete: qoveryapi.DeletedDoesNotExist})
	c := ctx(t)
	repo := f.repo(qoveryapi.TailscaleStableURL)
	group := f.group("g", "k", "v")
	if err := f.c.DeleteHelmRepository(c, f.org, repo.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.c.DeleteAnnotationsGroup(c, f.org, group); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.GetHelmRepository(c, f.org, repo.ID); !qovery.IsNotFound(err) || !strings.Contains(err.Error(), "400 Bad Request") {
		t.Errorf("repository: %v", err)
	}
	if err := f.c.DeleteAnnotationsGroup(c, f.org, group); !qovery.IsNotFound(err) {
		t.Errorf("group: %v", err)
	}
}

// TestWaitForDeletionModes: the wait for a deletion ends on 403, 400 "does
// not exist" and 404 alike.
func TestWaitForDeletionModes(t *testing.T) {
	for _, answer := range []qoveryapi.DeletedAnswer{qoveryapi.DeletedForbidden, qoveryapi.DeletedDoesNotExist, qoveryapi.DeletedNotFound} {
		f := newFixture(t, qoveryapi.Options{AfterDelete: answer})
		c := ctx(t)
		if err := f.fake.DeleteService(f.app); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(c, 3*time.Second)
		err := qovery.WaitForDeletion(short, func(ctx context.Context) (*qovery.Application, error) { return f.c.GetApplication(ctx, f.app) }, fast)
		cancel()
		if err != nil {
			t.Errorf("mode %d: %v", answer, err)
		}
	}
}

// TestSingleNotFoundIsNoProof: a lone 404, as the API may answer right
// after a create, is read again: the object is returned and nothing
// fails. A 404 that lasts for a service that its environment still lists
// is a transient answer, never "gone" (Terraform would forget a live
// operator); without the list, or when the list agrees, a lasting 404 is
// gone.
func TestSingleNotFoundIsNoProof(t *testing.T) {
	f := newFixture(t, qoveryapi.Options{})
	c := ctx(t)
	h := f.operator()
	in := qovery.InEnvironment(f.env)
	notFound := json.RawMessage(`{"status":404,"detail":"not found"}`)
	reads := func() int { return f.fake.Faults().Count("GET /helm/{helmId}") }
	for _, in := range [][]qovery.Parent{{in}, nil} {
		f.fake.Faults().Add(faults.Rule{Route: "GET /helm/{helmId}", Status: 404, Body: notFound, Count: 1})
		n := reads()
		if got, err := f.c.GetHelm(c, h.ID, in...); err != nil || got.ID != h.ID || reads() != n+2 {
			t.Errorf("one 404 (parent %v): %+v %v after %d reads", in, got, err, reads()-n)
		}
	}
	f.fake.Faults().Add(faults.Rule{Route: "GET /helm/{helmId}", Status: 404, Body: notFound, Count: qovery.NotFoundRereads + 1})
	_, err := f.c.GetHelm(c, h.ID, in)
	if err == nil || qovery.IsNotFound(err) || !strings.Contains(err.Error(), "transient") {
		t.Fatalf("a lasting 404 for a listed service: %v", err)
	}
	if got, err := f.c.GetHelm(c, h.ID, in); err != nil || got.ID != h.ID {
		t.Fatalf("the next read: %+v %v", got, err)
	}
	// Without the environment, nothing can contradict a lasting 404.
	f.fake.Faults().Add(faults.Rule{Route: "GET /helm/{helmId}", Status: 404, Body: notFound, Count: qovery.NotFoundRereads + 1})
	if _, err := f.c.GetHelm(c, h.ID); !qovery.IsNotFound(err) {
		t.Errorf("a lasting 404 without the environment: %v", err)
	}
}

// TestStatusNotFoundIsReadAgain: a lone 404 for a service's status (read
// by every refresh of a Helm service) does not fail the read.
func TestStatusNotFoundIsReadAgain(t *testing.T) {
	f := newFixture(t, qoveryapi.Options{})
	c := ctx(t)
	h := f.operator()
	f.fake.Faults().Add(faults.Rule{Route: "GET /helm/{helmId}/status", Status: 404, Body: json.RawMessage(`{"status":404,"detail":"not found"}`), Count: 1})
	if st, err := f.c.GetHelmStatus(c, h.ID); err != nil || st.ID != h.ID {
		t.Errorf("one 404: %+v %v", st, err)
	}
	f.fake.Faults().Add(faults.Rule{Route: "GET /helm/{helmId}/status", Status: 404, Body: json.RawMessage(`{"status":404,"detail":"not found"}`),
		Count: qovery.NotFoundRereads + 1})
	if _, err := f.c.GetHelmStatus(c, h.ID); !qovery.IsNotFound(err) {
		t.Errorf("a lasting 404: %v", err)
	}
}
