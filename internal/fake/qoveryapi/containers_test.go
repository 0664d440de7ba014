package qoveryapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
)

// TestContainers sends back the whole object read, as the console does:
// AcceptUnknownMembers (TestStrictEdits checks the default). It reads the
// outcome of a deployment with waitState (no lag), and checks the 409 of
// the API reference for a redeployment during a deployment
// (ConflictWhileBusy; TestQueuedContainerDeploy checks the default queue).
func TestContainers(t *testing.T) {
	rec := &recorder{}
	w := newWorld(t, qoveryapi.Options{Deployer: rec, AcceptUnknownMembers: true, StatusLag: qoveryapi.NoStatusLag, ConflictWhileBusy: true})
	id, err := w.srv.SeedContainer(w.env, "metrics", "prom/statsd-exporter", "v0.28.0", qoveryapi.Port{Name: "http", InternalPort: 9102})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.srv.SeedContainer(w.env, "billing-api", "x", "1"); err == nil {
		t.Error("a container took the name of an application")
	}
	labels, err := w.srv.SeedLabelsGroup(w.org, "team", qoveryapi.Label{Key: "team", Value: "obs"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.srv.SetWorkloadSettings(id, labels); err != nil {
		t.Fatal(err)
	}
	group := str(w.must(http.StatusCreated, http.MethodPost, "/organization/"+w.org+"/annotationsGroups",
		obj{"name": "expose", "annotations": []obj{{"key": "tailscale.com/expose", "value": "true"}}, "scopes": []string{"SERVICES"}}), "id")

	l := items(w.must(http.StatusOK, http.MethodGet, "/environment/"+w.env+"/container", nil))
	if len(l) != 1 || str(l, 0, "id") != id {
		t.Fatalf("list %v", l)
	}
	c := object(w.must(http.StatusOK, http.MethodGet, "/container/"+id, nil))
	if str(c, "service_type") != "CONTAINER" || str(c, "image_name") != "prom/statsd-exporter" || str(c, "tag") != "v0.28.0" ||
		str(c, "registry", "kind") != "DOCKER_HUB" || c["registry_id"] != nil || str(c, "ports", 0, "id") == "" ||
		str(c, "autoscaling", "service_id") != id || str(c, "labels_groups", 0, "id") != labels {
		t.Fatalf("container %v", c)
	}
	if v := w.must(http.StatusOK, http.MethodGet, "/container/"+id+"/status", nil); str(v, "state") != "DEPLOYED" || str(v, "service_deployment_status") != "UP_TO_DATE" {
		t.Errorf("status %v", v)
	}

	// The answer sent back needs the registry's id, and request shapes.
	raw := clone(c)
	raw["autoscaling"] = editBody(c)["autoscaling"]
	w.wantError(http.StatusBadRequest, http.MethodPut, "/container/"+id, raw, "registry_id", "required")
	raw["registry_id"] = str(c, "registry", "id")
	raw["autoscaling"] = c["autoscaling"]
	w.wantError(http.StatusBadRequest, http.MethodPut, "/container/"+id, raw, "autoscaling", "unknown field")
	for name, tc := range map[string]struct {
		edit  func(obj)
		words []string
	}{
		"no image":          {func(b obj) { delete(b, "image_name") }, []string{"image_name"}},
		"empty tag":         {func(b obj) { b["tag"] = "" }, []string{"tag"}},
		"unknown registry":  {func(b obj) { b["registry_id"] = group }, []string{"registry_id", "not found"}},
		"no groups":         {func(b obj) { delete(b, "annotations_groups") }, []string{"annotations_groups", "required"}},
		"no healthchecks":   {func(b obj) { delete(b, "healthchecks") }, []string{"healthchecks"}},
		"unknown port":      {func(b obj) { b["ports"] = []obj{{"id": group, "internal_port": 80}} }, []string{"ports[0].id", "container"}},
		"autoscaling mode":  {func(b obj) { object(b, "autoscaling")["mode"] = "HPA" }, []string{"autoscaling.mode"}},
		"no name":           {func(b obj) { delete(b, "name") }, []string{"name", "required"}},
		"labels of another": {func(b obj) { b["labels_groups"] = []obj{{"id": w.org}} }, []string{"labels_groups[0].id"}},
	} {
		t.Run(name, func(t *testing.T) {
			body := editBody(c)
			tc.edit(body)
			w.on(t).wantError(http.StatusBadRequest, http.MethodPut, "/container/"+id, body, tc.words...)
		})
	}
	same := object(w.must(http.StatusOK, http.MethodPut, "/container/"+id, editBody(c)))
	for _, k := range []string{"ports", "autoscaling", "labels_groups", "healthchecks", "cpu", "image_name", "tag", "registry"} {
		if fmt.Sprint(same[k]) != fmt.Sprint(c[k]) {
			t.Errorf("%s changed: %v -> %v", k, c[k], same[k])
		}
	}
	if v := w.must(http.StatusOK, http.MethodGet, "/container/"+id+"/status", nil); str(v, "service_deployment_status") != "UP_TO_DATE" {
		t.Errorf("a no-op edit: %v", v)
	}

	// Attach the group, redeploy: the deployer gets a CONTAINER snapshot.
	attach := editBody(c)
	attach["annotations_groups"] = []obj{{"id": group}}
	if v := object(w.must(http.StatusOK, http.MethodPut, "/container/"+id, attach)); str(v, "annotations_groups", 0, "id") != group {
		t.Errorf("attach %v", v["annotations_groups"])
	}
	if v := w.must(http.StatusOK, http.MethodGet, "/container/"+id+"/status", nil); str(v, "service_deployment_status") != "OUT_OF_DATE" {
		t.Errorf("after attach %v", v)
	}
	w.must(http.StatusAccepted, http.MethodPost, "/container/"+id+"/redeploy", nil)
	w.waitState("/container/"+id+"/status", "DEPLOYED")
	snap := rec.lastDeployed(t)
	if snap.Kind != "CONTAINER" || snap.ID != id || snap.Name != "metrics" || !strings.HasPrefix(snap.KubernetesName, "app-z") ||
		snap.Image != "docker.io/prom/statsd-exporter:v0.28.0" || len(snap.Ports) != 1 || len(snap.AnnotationsGroups) != 1 ||
		snap.AnnotationsGroups[0].Annotations[0].Key != "tailscale.com/expose" {
		t.Errorf("snapshot %+v", snap)
	}

	// Deploy takes an image tag, which becomes the container's.
	w.wantError(http.StatusBadRequest, http.MethodPost, "/container/"+id+"/deploy", obj{}, "image_tag")
	w.must(http.StatusAccepted, http.MethodPost, "/container/"+id+"/deploy", obj{"image_tag": "v0.29.0"})
	w.wantError(http.StatusConflict, http.MethodPost, "/container/"+id+"/redeploy", nil, "Operation is in progress")
	w.waitState("/container/"+id+"/status", "DEPLOYED")
	if got := str(w.must(http.StatusOK, http.MethodGet, "/container/"+id, nil), "tag"); got != "v0.29.0" || rec.lastDeployed(t).Image != "docker.io/prom/statsd-exporter:v0.29.0" {
		t.Errorf("tag %q, image %q", got, rec.lastDeployed(t).Image)
	}

	// Console actions reach containers too.
	if err := w.srv.DetachAnnotationsGroup(id, group); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.srv.Container(id); len(got.AnnotationsGroupIDs) != 0 || got.Status.DeploymentStatus != "OUT_OF_DATE" {
		t.Errorf("after detach %+v", got)
	}

	// Container variables have the CONTAINER scope.
	w.must(http.StatusCreated, http.MethodPost, "/variable", obj{"key": "PORT", "value": "9102", "is_secret": false, "variable_scope": "CONTAINER", "variable_parent_id": id})
	var found bool
	for _, v := range items(w.must(http.StatusOK, http.MethodGet, "/variable?parent_id="+id+"&scope=CONTAINER", nil)) {
		if str(v, "key") == "PORT" {
			found = str(v, "service_type") == "CONTAINER" && str(v, "service_id") == id
		}
	}
	if !found {
		t.Error("container variable not listed with its service")
	}

	// Deleted like the other services.
	w.must(http.StatusNoContent, http.MethodDelete, "/container/"+id, nil)
	w.waitGone("/container/" + id)
	if len(w.srv.Containers()) != 0 {
		t.Error("container kept")
	}
}
