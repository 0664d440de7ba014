package qoveryapi_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
)

// TestDeployServices: the environment's deploy-services action answers 202
// with the environment's status, deploys every service it names under
// one deployment_request_id, and counts as one action.
func TestDeployServices(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newMemWorld(t, qoveryapi.Options{DeployTime: 10 * time.Second, QueuePerEnvironment: true})
		second, err := w.srv.SeedApplication(w.env, "web", qoveryapi.Port{Name: "http", InternalPort: 80})
		if err != nil {
			t.Fatal(err)
		}
		ctr, err := w.srv.SeedContainer(w.env, "metrics", "prom/statsd-exporter", "v0.28.0", qoveryapi.Port{Name: "http", InternalPort: 9102})
		if err != nil {
			t.Fatal(err)
		}
		helm := w.operator()
		start := time.Now()
		v := w.must(http.StatusAccepted, http.MethodPost, "/environment/"+w.env+"/service/deploy", obj{
			"applications": []obj{{"application_id": w.app}, {"application_id": second}},
			"containers":   []obj{{"id": ctr}},
			"helms":        []obj{{"id": helm, "chart_version": "1.102.4"}},
		})
		req := str(v, "deployment_request_id")
		if str(v, "id") != w.env || str(v, "state") != "DEPLOYMENT_QUEUED" || req == "" || str(v, "last_deployment_date") == "" {
			t.Fatalf("202 %v", v)
		}
		paths := []string{"/application/" + w.app, "/application/" + second, "/container/" + ctr, "/helm/" + helm}
		time.Sleep(qoveryapi.DefaultStatusLag)
		for _, p := range paths {
			s := w.must(http.StatusOK, http.MethodGet, p+"/status", nil)
			if str(s, "state") != "DEPLOYMENT_QUEUED" || str(s, "deployment_request_id") != req {
				t.Errorf("%s: status %v, want DEPLOYMENT_QUEUED under %s", p, s, req)
			}
		}
		synctest.Wait()
		time.Sleep(10*time.Second - qoveryapi.DefaultStatusLag)
		synctest.Wait()
		for _, p := range paths {
			s := w.must(http.StatusOK, http.MethodGet, p+"/status", nil)
			if str(s, "state") != "DEPLOYED" || str(s, "deployment_request_id") != req || str(s, "service_deployment_status") != "UP_TO_DATE" {
				t.Errorf("%s: status %v, want DEPLOYED under %s", p, s, req)
			}
		}
		if took := time.Since(start); took != 10*time.Second {
			t.Errorf("the action took %s, want one deployment time", took)
		}
		actions := w.srv.Actions()
		if len(actions) != 1 || actions[0].RequestID != req || len(actions[0].Services) != 4 || actions[0].EnvironmentID != w.env {
			t.Errorf("actions %+v, want one of the four services", actions)
		}
	})
}

// TestDeployServicesRefused: the checks of the request, each a 4xx that
// starts nothing.
func TestDeployServicesRefused(t *testing.T) {
	w := newWorld(t, qoveryapi.Options{})
	path := "/environment/" + w.env + "/service/deploy"
	other, err := w.srv.SeedEnvironment(w.project, w.cluster, "other")
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := w.srv.SeedApplication(other, "elsewhere", qoveryapi.Port{Name: "http", InternalPort: 80})
	if err != nil {
		t.Fatal(err)
	}
	w.wantError(http.StatusBadRequest, http.MethodPost, path, nil, "body")
	w.wantError(http.StatusBadRequest, http.MethodPost, path, obj{}, "no service")
	w.wantError(http.StatusBadRequest, http.MethodPost, path, obj{"applications": []obj{{}}}, "application_id")
	w.wantError(http.StatusBadRequest, http.MethodPost, path, obj{"applications": []obj{{"application_id": w.app}, {"application_id": w.app}}}, "twice")
	w.wantError(http.StatusBadRequest, http.MethodPost, path, obj{"applications": []obj{{"application_id": elsewhere}}}, "not in environment")
	w.wantError(http.StatusNotFound, http.MethodPost, path, obj{"helms": []obj{{"id": "00000000-0000-4000-8000-000000000000"}}})
	w.wantError(http.StatusNotFound, http.MethodPost, "/environment/00000000-0000-4000-8000-000000000000/service/deploy", obj{"applications": []obj{{"application_id": w.app}}})
	if a := w.srv.Actions(); len(a) != 0 {
		t.Errorf("refused requests started %+v", a)
	}
}

// TestEnvironmentQueue: with QueuePerEnvironment, an environment runs one
// deployment request at a time; the deployments of two services triggered
// one by one run one after another, and another environment is not held.
func TestEnvironmentQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newMemWorld(t, qoveryapi.Options{DeployTime: 10 * time.Second, QueuePerEnvironment: true, StatusLag: qoveryapi.NoStatusLag})
		second, err := w.srv.SeedApplication(w.env, "web", qoveryapi.Port{Name: "http", InternalPort: 80})
		if err != nil {
			t.Fatal(err)
		}
		other, err := w.srv.SeedEnvironment(w.project, w.cluster, "other")
		if err != nil {
			t.Fatal(err)
		}
		elsewhere, err := w.srv.SeedApplication(other, "elsewhere", qoveryapi.Port{Name: "http", InternalPort: 80})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{w.app, second, elsewhere} {
			w.must(http.StatusAccepted, http.MethodPost, "/application/"+id+"/redeploy", nil)
		}
		state := func(id string) string {
			return str(w.must(http.StatusOK, http.MethodGet, "/application/"+id+"/status", nil), "state")
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if a, b, c := state(w.app), state(second), state(elsewhere); a != "DEPLOYING" || b != "DEPLOYMENT_QUEUED" || c != "DEPLOYING" {
			t.Errorf("at 5s: %s, %s, %s; want the first and the other environment's deploying, the second queued", a, b, c)
		}
		q := list(w.must(http.StatusOK, http.MethodGet, "/environment/"+w.env+"/deploymentQueue", nil), "results")
		if len(q) != 1 || str(q, 0, "stages", 0, "services", 0, "identifier", "service_id") != second {
			t.Errorf("environment queue at 5s %v, want the second's request", q)
		}
		if q := list(w.must(http.StatusOK, http.MethodGet, "/service/"+second+"/deploymentQueue", nil), "results"); len(q) != 1 {
			t.Errorf("the second's queue at 5s %v, want its request", q)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if a, b, c := state(w.app), state(second), state(elsewhere); a != "DEPLOYED" || b != "DEPLOYMENT_QUEUED" || c != "DEPLOYED" {
			t.Errorf("at 10s: %s, %s, %s; want the second still queued (its own queueing step follows)", a, b, c)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if b := state(second); b != "DEPLOYED" {
			t.Errorf("at 20s: the second is %s, want DEPLOYED", b)
		}
		if n := len(w.srv.Actions()); n != 3 {
			t.Errorf("%d actions, want 3", n)
		}
	})
}
