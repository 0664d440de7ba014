package qoveryapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
)

// TestForbiddenAfterDelete: with the option, the routes of deleted objects
// answer 403 as the real API sometimes does; ids never issued, and every
// missing object without the option, answer 404.
func TestForbiddenAfterDelete(t *testing.T) {
	const unknown = "00000000-0000-4000-8000-000000000000"
	for _, forbidden := range []bool{false, true} {
		w := newWorld(t, qoveryapi.Options{ForbiddenAfterDelete: forbidden})
		gone := http.StatusNotFound
		if forbidden {
			gone = http.StatusForbidden
		}
		helm := w.operator()
		repo := str(w.must(http.StatusOK, http.MethodGet, "/helm/"+helm, nil), "source", "repository", "repository", "id")
		group := str(w.must(http.StatusCreated, http.MethodPost, "/organization/"+w.org+"/annotationsGroups",
			obj{"name": "g", "annotations": []obj{}, "scopes": []string{"SERVICES"}}), "id")
		vars := items(w.must(http.StatusOK, http.MethodGet, "/variable?parent_id="+helm+"&scope=HELM", nil))
		variable := str(vars[len(vars)-1], "id")

		w.must(http.StatusNoContent, http.MethodDelete, "/variable/"+variable, nil)
		w.must(http.StatusNoContent, http.MethodDelete, "/organization/"+w.org+"/annotationsGroups/"+group, nil)
		w.must(http.StatusNoContent, http.MethodDelete, "/helm/"+helm, nil)
		deadline := time.Now().Add(5 * time.Second)
		for {
			if status, _ := w.call(http.MethodGet, "/helm/"+helm, nil); status == gone {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the Helm service was never deleted")
			}
			time.Sleep(2 * time.Millisecond)
		}
		w.must(http.StatusNoContent, http.MethodDelete, "/organization/"+w.org+"/helmRepository/"+repo, nil)

		for _, c := range []struct{ method, path string }{
			{http.MethodGet, "/organization/" + w.org + "/helmRepository/" + repo},
			{http.MethodDelete, "/organization/" + w.org + "/helmRepository/" + repo},
			{http.MethodGet, "/organization/" + w.org + "/annotationsGroups/" + group},
			{http.MethodGet, "/helm/" + helm},
			{http.MethodGet, "/helm/" + helm + "/status"},
			{http.MethodDelete, "/helm/" + helm},
			{http.MethodDelete, "/variable/" + variable},
		} {
			w.wantError(gone, c.method, c.path, nil)
		}
		w.wantError(http.StatusNotFound, http.MethodGet, "/helm/"+unknown, nil, "not found")
		w.wantError(http.StatusNotFound, http.MethodGet, "/organization/"+w.org+"/helmRepository/"+unknown, nil, "not found")
		// A deleted object is still absent from the lists.
		if l := items(w.must(http.StatusOK, http.MethodGet, "/organization/"+w.org+"/helmRepository", nil)); len(l) != 0 {
			t.Errorf("list %v", l)
		}
	}
}
