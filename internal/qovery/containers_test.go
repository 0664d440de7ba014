package qovery_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

func TestContainers(t *testing.T) {
	dep := newSequenced(false)
	f := newFixture(t, qoveryapi.Options{Deployer: dep})
	c := ctx(t)
	id, err := f.fake.SeedContainer(f.env, "metrics", "prom/statsd-exporter", "v0.28.0", qoveryapi.Port{Name: "http", InternalPort: 9102})
	if err != nil {
		t.Fatal(err)
	}
	labels, err := f.fake.SeedLabelsGroup(f.org, "team", qoveryapi.Label{Key: "team", Value: "obs"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.fake.SetWorkloadSettings(id, labels); err != nil {
		t.Fatal(err)
	}
	g := f.group("expose", "tailscale.com/expose", "true")

	list, err := f.c.ListContainers(c, f.env)
	if err != nil || len(list) != 1 || list[0].ID != id {
		t.Fatalf("list %+v %v", list, err)
	}
	before, err := f.c.GetContainer(c, id)
	if err != nil {
		t.Fatal(err)
	}
	if before.Name != "metrics" || before.ServiceType != qovery.ServiceTypeContainer || before.Environment.ID != f.env || before.ImageName != "prom/statsd-exporter" ||
		before.Tag != "v0.28.0" || before.Registry.ID == "" || before.Registry.Kind != "DOCKER_HUB" || len(before.Ports) != 1 || before.Ports[0].InternalPort != 9102 {
		t.Fatalf("container %+v", before)
	}
	st, err := f.c.GetContainerStatus(c, id)
	if err != nil || st.State != qovery.StateDeployed || st.ServiceDeploymentStatus != qovery.UpToDate {
		t.Fatalf("status %+v %v", st, err)
	}

	after, err := f.c.SetContainerAnnotationsGroups(c, id, []string{g})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after.AnnotationsGroupIDs(), []string{g}) {
		t.Errorf("groups %v", after.AnnotationsGroupIDs())
	}
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(f.last(http.MethodPut, "/container/"+id).body, &sent); err != nil {
		t.Fatal(err)
	}
	if string(sent["registry_id"]) != `"`+before.Registry.ID+`"` || string(sent["labels_groups"]) != `[{"id":"`+labels+`"}]` ||
		string(sent["annotations_groups"]) != `[{"id":"`+g+`"}]` {
		t.Errorf("sent registry_id %s, labels_groups %s, annotations_groups %s", sent["registry_id"], sent["labels_groups"], sent["annotations_groups"])
	}
	var scaling map[string]json.RawMessage
	if err := json.Unmarshal(sent["autoscaling"], &scaling); err != nil || scaling["id"] != nil || scaling["service_id"] != nil || scaling["mode"] == nil {
		t.Errorf("autoscaling sent %s", sent["autoscaling"])
	}
	var held, read map[string]json.RawMessage
	if err := json.Unmarshal(after.Raw, &held); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(before.Raw, &read); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ports", "storage", "healthchecks", "autoscaling", "labels_groups", "cpu", "memory", "image_name", "tag", "registry"} {
		if !jsonEqual(t, read[k], held[k]) {
			t.Errorf("%s: %s -> %s", k, read[k], held[k])
		}
	}

	// Attached, the group reaches the cluster at the next deployment.
	st, err = f.c.GetContainerStatus(c, id)
	if err != nil || st.ServiceDeploymentStatus != qovery.OutOfDate {
		t.Fatalf("after attach %+v %v", st, err)
	}
	if _, err := f.c.RedeployContainer(c, id); err != nil {
		t.Fatal(err)
	}
	get := func(ctx context.Context) (*qovery.Status, error) { return f.c.GetContainerStatus(ctx, id) }
	if st, err := qovery.WaitForDeployment(c, get, qovery.WaitOptions{PollInterval: fast.PollInterval, Since: st}); err != nil || st.ServiceDeploymentStatus != qovery.UpToDate {
		t.Fatalf("redeploy %+v %v", st, err)
	}
	st, _ = f.c.GetContainerStatus(c, id)
	if _, err := f.c.DeployContainer(c, id, "v0.29.0"); err != nil {
		t.Fatal(err)
	}
	if body := string(f.last(http.MethodPost, "/container/"+id+"/deploy").body); body != `{"image_tag":"v0.29.0"}` {
		t.Errorf("deploy body %s", body)
	}
	if _, err := qovery.WaitForDeployment(c, get, qovery.WaitOptions{PollInterval: fast.PollInterval, Since: st}); err != nil {
		t.Fatal(err)
	}
	if got, err := f.c.GetContainer(c, id); err != nil || got.Tag != "v0.29.0" {
		t.Errorf("tag %+v %v", got, err)
	}
	// Detach everything.
	if after, err = f.c.SetContainerAnnotationsGroups(c, id, nil); err != nil || len(after.AnnotationsGroups) != 0 {
		t.Errorf("detach %+v %v", after, err)
	}
}
