package qoveryapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
)

// TestDeletedObjects: the routes of deleted objects answer 403 by default,
// as the real API does; 400 "<kind> does not exist" or 404 in the other
// modes. Ids never issued answer 404 whatever the mode.
func TestDeletedObjects(t *testing.T) {
	const unknown = "00000000-0000-4000-8000-000000000000"
	for _, mode := range []struct {
		name   string
		answer qoveryapi.DeletedAnswer
		status int
		detail func(kind string) string
	}{
		{"default", qoveryapi.DeletedForbidden, http.StatusForbidden, func(string) string { return "forbidden" }},
		{"does not exist", qoveryapi.DeletedDoesNotExist, http.StatusBadRequest, func(kind string) string { return kind + " does not exist" }},
		{"not found", qoveryapi.DeletedNotFound, http.StatusNotFound, func(string) string { return "not found" }},
	} {
		t.Run(mode.name, func(t *testing.T) {
			w := newWorld(t, qoveryapi.Options{AfterDelete: mode.answer})
			container, err := w.srv.SeedContainer(w.env, "metrics", "prom/statsd-exporter", "v0.28.0", qoveryapi.Port{Name: "http", InternalPort: 9102})
			if err != nil {
				t.Fatal(err)
			}
			helm := w.operator()
			repo := str(w.must(http.StatusOK, http.MethodGet, "/helm/"+helm, nil), "source", "repository", "repository", "id")
			group := str(w.must(http.StatusCreated, http.MethodPost, "/organization/"+w.org+"/annotationsGroups",
				obj{"name": "g", "annotations": []obj{}, "scopes": []string{"SERVICES"}}), "id")
			vars := items(w.must(http.StatusOK, http.MethodGet, "/variable?parent_id="+helm+"&scope=HELM", nil))
			variable := str(vars[len(vars)-1], "id")

			w.must(http.StatusNoContent, http.MethodDelete, "/variable/"+variable, nil)
			w.must(http.StatusNoContent, http.MethodDelete, "/organization/"+w.org+"/annotationsGroups/"+group, nil)
			for _, svc := range []string{"/helm/" + helm, "/application/" + w.app, "/container/" + container} {
				w.must(http.StatusNoContent, http.MethodDelete, svc, nil)
			}
			for _, svc := range []string{"/helm/" + helm, "/application/" + w.app, "/container/" + container} {
				deadline := time.Now().Add(5 * time.Second)
				for {
					if status, _ := w.call(http.MethodGet, svc, nil); status == mode.status {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s was never deleted", svc)
					}
					time.Sleep(2 * time.Millisecond)
				}
			}
			w.must(http.StatusNoContent, http.MethodDelete, "/organization/"+w.org+"/helmRepository/"+repo, nil)

			for _, c := range []struct{ kind, method, path string }{
				{"helm repository", http.MethodGet, "/organization/" + w.org + "/helmRepository/" + repo},
				{"helm repository", http.MethodDelete, "/organization/" + w.org + "/helmRepository/" + repo},
				{"annotations group", http.MethodGet, "/organization/" + w.org + "/annotationsGroups/" + group},
				{"helm", http.MethodGet, "/helm/" + helm},
				{"helm", http.MethodGet, "/helm/" + helm + "/status"},
				{"helm", http.MethodDelete, "/helm/" + helm},
				{"application", http.MethodGet, "/application/" + w.app},
				{"application", http.MethodPost, "/application/" + w.app + "/redeploy"},
				{"container", http.MethodGet, "/container/" + container},
				{"container", http.MethodGet, "/container/" + container + "/status"},
				{"container", http.MethodPut, "/container/" + container},
				{"variable", http.MethodDelete, "/variable/" + variable},
				{"variable", http.MethodPost, "/variable/" + variable + "/override"},
			} {
				body := any(nil)
				switch c.method {
				case http.MethodPut:
					body = obj{"name": "metrics"}
				case http.MethodPost:
					body = obj{"value": "v", "override_scope": "HELM", "override_parent_id": unknown}
				}
				w.wantError(mode.status, c.method, c.path, body, mode.detail(c.kind))
			}
			w.wantError(http.StatusNotFound, http.MethodGet, "/helm/"+unknown, nil, "not found")
			w.wantError(http.StatusNotFound, http.MethodGet, "/container/"+unknown, nil, "not found")
			w.wantError(http.StatusNotFound, http.MethodGet, "/organization/"+w.org+"/helmRepository/"+unknown, nil, "not found")
			// A deleted object is absent from the lists.
			if l := items(w.must(http.StatusOK, http.MethodGet, "/organization/"+w.org+"/helmRepository", nil)); len(l) != 0 {
				t.Errorf("repositories %v", l)
			}
			for _, kind := range []string{"helm", "application", "container"} {
				if l := items(w.must(http.StatusOK, http.MethodGet, "/environment/"+w.env+"/"+kind, nil)); len(l) != 0 {
					t.Errorf("%s list %v", kind, l)
				}
			}
		})
	}
}

// TestDeletedAnswerByKind: AfterDeleteOf sets the answer of one kind.
func TestDeletedAnswerByKind(t *testing.T) {
	w := newWorld(t, qoveryapi.Options{AfterDeleteOf: map[string]qoveryapi.DeletedAnswer{"helm": qoveryapi.DeletedDoesNotExist}})
	helm := w.operator()
	w.must(http.StatusNoContent, http.MethodDelete, "/helm/"+helm, nil)
	w.must(http.StatusNoContent, http.MethodDelete, "/application/"+w.app, nil)
	deadline := time.Now().Add(5 * time.Second)
	for {
		s1, _ := w.call(http.MethodGet, "/helm/"+helm, nil)
		s2, _ := w.call(http.MethodGet, "/application/"+w.app, nil)
		if s1 == http.StatusBadRequest && s2 == http.StatusForbidden {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("helm answers %d, application %d", s1, s2)
		}
		time.Sleep(2 * time.Millisecond)
	}
	w.wantError(http.StatusBadRequest, http.MethodGet, "/helm/"+helm, nil, "helm does not exist")
}
