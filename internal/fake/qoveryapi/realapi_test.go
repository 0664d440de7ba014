package qoveryapi_test

import (
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
)

// TestDefaultStatusLag: by default the status endpoint keeps answering
// the previous status for DefaultStatusLag after a trigger, as the real
// API does; the trigger's own answer is fresh.
func TestDefaultStatusLag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newMemWorld(t, qoveryapi.Options{})
		status := "/application/" + w.app + "/status"
		before := w.must(http.StatusOK, http.MethodGet, status, nil)
		v := w.must(http.StatusAccepted, http.MethodPost, "/application/"+w.app+"/redeploy", nil)
		if str(v, "state") != "DEPLOYMENT_QUEUED" || str(v, "deployment_request_id") == str(before, "deployment_request_id") {
			t.Fatalf("202 %v", v)
		}
		time.Sleep(qoveryapi.DefaultStatusLag - time.Nanosecond)
		stale := w.must(http.StatusOK, http.MethodGet, status, nil)
		if str(stale, "state") != "DEPLOYED" || str(stale, "deployment_request_id") != str(before, "deployment_request_id") ||
			str(stale, "last_deployment_date") != str(before, "last_deployment_date") {
			t.Errorf("during the lag %v, want %v", stale, before)
		}
		time.Sleep(time.Nanosecond)
		fresh := w.must(http.StatusOK, http.MethodGet, status, nil)
		if str(fresh, "deployment_request_id") != str(v, "deployment_request_id") {
			t.Errorf("after the lag %v", fresh)
		}
	})
	// NoStatusLag turns it off.
	synctest.Test(t, func(t *testing.T) {
		w := newMemWorld(t, qoveryapi.Options{StatusLag: qoveryapi.NoStatusLag, DeployTime: time.Second})
		v := w.must(http.StatusAccepted, http.MethodPost, "/application/"+w.app+"/redeploy", nil)
		now := w.must(http.StatusOK, http.MethodGet, "/application/"+w.app+"/status", nil)
		if str(now, "state") != "DEPLOYMENT_QUEUED" || str(now, "deployment_request_id") != str(v, "deployment_request_id") {
			t.Errorf("without lag %v", now)
		}
	})
}

// TestQueuedDeploymentsByDefault: a deployment requested during another
// one is queued (202), for applications and containers as for Helm
// services (TestQueuedActions), and runs under the request id that its
// answer gave; with ConflictWhileBusy it is refused with 409.
func TestQueuedDeploymentsByDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newMemWorld(t, qoveryapi.Options{})
		ctr, err := w.srv.SeedContainer(w.env, "metrics", "prom/statsd-exporter", "v0.28.0", qoveryapi.Port{Name: "http", InternalPort: 9102})
		if err != nil {
			t.Fatal(err)
		}
		for _, svc := range []struct{ path, kind string }{{"/application/" + w.app, "APPLICATION"}, {"/container/" + ctr, "CONTAINER"}} {
			first := w.must(http.StatusAccepted, http.MethodPost, svc.path+"/redeploy", nil)
			queued := w.must(http.StatusAccepted, http.MethodPost, svc.path+"/redeploy", nil)
			id := str(queued, "deployment_request_id")
			if str(queued, "state") != "DEPLOYMENT_QUEUED" || id == "" || id == str(first, "deployment_request_id") {
				t.Errorf("%s: queued answer %v", svc.kind, queued)
			}
			q := list(w.must(http.StatusOK, http.MethodGet, "/service/"+str(queued, "id")+"/deploymentQueue", nil), "results")
			if len(q) != 1 || str(q, 0, "identifier", "deployment_request_id") != id || str(q, 0, "identifier", "service_type") != svc.kind {
				t.Errorf("%s: queue %v", svc.kind, q)
			}
			time.Sleep(time.Minute)
			v := w.must(http.StatusOK, http.MethodGet, svc.path+"/status", nil)
			if str(v, "state") != "DEPLOYED" || str(v, "deployment_request_id") != id {
				t.Errorf("%s: after both %v, want the queued request %s DEPLOYED", svc.kind, v, id)
			}
		}
		if q := list(w.must(http.StatusOK, http.MethodGet, "/environment/"+w.env+"/deploymentQueue", nil), "results"); len(q) != 0 {
			t.Errorf("environment queue at the end %v", q)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		w := newMemWorld(t, qoveryapi.Options{ConflictWhileBusy: true})
		w.must(http.StatusAccepted, http.MethodPost, "/application/"+w.app+"/redeploy", nil)
		w.wantError(http.StatusConflict, http.MethodPost, "/application/"+w.app+"/redeploy", nil, "Operation is in progress")
	})
}

// editRequest keeps of an object read the members of its edit request,
// groups as references.
func editRequest(read obj, members ...string) obj {
	out := obj{}
	for k, v := range read {
		if slices.Contains(members, k) {
			out[k] = v
		}
	}
	for _, k := range []string{"annotations_groups", "labels_groups"} {
		ids := []obj{}
		for _, g := range list(read, k) {
			ids = append(ids, obj{"id": str(g, "id")})
		}
		out[k] = ids
	}
	if g, ok := read["git_repository"].(obj); ok {
		out["git_repository"] = obj{"provider": g["provider"], "url": g["url"], "branch": g["branch"], "root_path": g["root_path"]}
	}
	return out
}

// TestStrictEdits: by default an edit of an application or a container
// with a member that its request does not define (at the top, or in an
// item of a list) is refused with 400 and the API's error body; with
// AcceptUnknownMembers it is ignored.
func TestStrictEdits(t *testing.T) {
	w := newWorld(t, qoveryapi.Options{})
	ctr, err := w.srv.SeedContainer(w.env, "metrics", "prom/statsd-exporter", "v0.28.0", qoveryapi.Port{Name: "http", InternalPort: 9102})
	if err != nil {
		t.Fatal(err)
	}
	app := "/application/" + w.app
	read := object(w.must(http.StatusOK, http.MethodGet, app, nil))
	good := editRequest(read, "name", "ports", "storage", "healthchecks")
	w.must(http.StatusOK, http.MethodPut, app, good)
	for _, member := range []string{"id", "created_at", "environment", "service_type"} {
		bad := clone(good)
		bad[member] = read[member]
		w.wantError(http.StatusBadRequest, http.MethodPut, app, bad, member, "ApplicationEditRequest")
	}
	bad := clone(good)
	bad["annotations_groups"] = []obj{{"id": "x", "name": "expose"}}
	w.wantError(http.StatusBadRequest, http.MethodPut, app, bad, "annotations_groups[0]", "name")
	bad = clone(good)
	port := clone(object(list(read, "ports")[0]))
	port["created_at"] = "2026-01-01T00:00:00Z"
	bad["ports"] = []obj{port}
	w.wantError(http.StatusBadRequest, http.MethodPut, app, bad, "ports[0]", "created_at")

	path := "/container/" + ctr
	cread := object(w.must(http.StatusOK, http.MethodGet, path, nil))
	cgood := editRequest(cread, "name", "ports", "storage", "healthchecks", "image_name", "tag")
	cgood["registry_id"] = str(cread, "registry", "id")
	w.must(http.StatusOK, http.MethodPut, path, cgood)
	cbad := clone(cgood)
	cbad["registry"] = cread["registry"]
	w.wantError(http.StatusBadRequest, http.MethodPut, path, cbad, "registry", "ContainerRequest")

	lenient := newWorld(t, qoveryapi.Options{AcceptUnknownMembers: true})
	lread := object(lenient.must(http.StatusOK, http.MethodGet, "/application/"+lenient.app, nil))
	lbody := editRequest(lread, "name", "ports", "storage", "healthchecks")
	lbody["id"], lbody["created_at"] = lread["id"], lread["created_at"]
	lenient.must(http.StatusOK, http.MethodPut, "/application/"+lenient.app, lbody)
}
