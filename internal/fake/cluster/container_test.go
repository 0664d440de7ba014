package cluster

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// exposedContainer is exposedApp for a container.
func exposedContainer(annotations map[string]string) qoveryapi.ServiceSnapshot {
	snap := exposedApp([]string{"SERVICES"}, annotations)
	snap.Kind, snap.ID, snap.Name, snap.KubernetesName = "CONTAINER", "container-1", "metrics", "app-z5678abcd"
	snap.Image = "docker.io/prom/statsd-exporter:v0.28.0"
	return snap
}

// TestExposure_container: a container whose Service carries the
// annotations gets a proxy device exactly as an application does, and
// loses it when deleted.
func TestExposure_container(t *testing.T) {
	w := newExposureWorld(t)
	w.deploy(exposedContainer(withAnnotations(exposeAnnotations, AnnotationHostname, "metrics-us-east-1")))
	w.wantDevice("metrics-us-east-1", "tag:k8s")
	if p := w.engine.Proxies(); len(p) != 1 || p[0].ApplicationID != "container-1" {
		t.Fatalf("proxies %+v", p)
	}
	// Without the expose annotation the proxy goes.
	w.deploy(exposedContainer(map[string]string{AnnotationHostname: "metrics-us-east-1"}))
	w.wantNoDevice("metrics-us-east-1", "")
	// Deleted, the container takes its proxy along.
	w.deploy(exposedContainer(withAnnotations(exposeAnnotations, AnnotationHostname, "metrics-us-east-1")))
	w.wantDevice("metrics-us-east-1", "tag:k8s")
	if err := w.engine.Delete(context.Background(), exposedContainer(nil)); err != nil {
		t.Fatal(err)
	}
	w.wantNoDevice("metrics-us-east-1", "")
}

// TestExposure_containerThroughTheAPI: the fake Qovery API deploys a
// container that qtail's client attached a group to; the cluster runs its
// proxy.
func TestExposure_containerThroughTheAPI(t *testing.T) {
	ts := tailnetapi.New(tailnetapi.Options{InitialPolicy: []byte(exposurePolicy), MagicDNSSuffix: "tail1234.ts.net"})
	w := &exposureWorld{t: t, tailnet: ts, engine: New(ts)}
	q := qoveryapi.New(qoveryapi.Options{Deployer: w.engine, DeployTime: 10 * time.Millisecond})
	t.Cleanup(q.Close)
	srv := httptest.NewServer(q.Handler())
	t.Cleanup(srv.Close)
	org := q.SeedOrganization("acme")
	project, err := q.SeedProject(org, "p")
	if err != nil {
		t.Fatal(err)
	}
	clusterID, err := q.SeedCluster(org, "prod", "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	env, err := q.SeedEnvironment(project, clusterID, "prod")
	if err != nil {
		t.Fatal(err)
	}
	// An operator runs on the cluster.
	id, secret := ts.SeedOAuthClient("", "", []string{"devices:core", "auth_keys"}, []string{"tag:k8s-operator"})
	w.deploy(qoveryapi.ServiceSnapshot{
		Kind: "HELM", ID: "helm-1", Name: "tailscale-operator", ClusterID: clusterID, Namespace: "zabc-prod",
		ChartName: OperatorChart, AllowClusterWideResources: true,
		ValuesFiles: []qoveryapi.ValuesFile{{Name: "values.yaml", Content: fmt.Sprintf("oauth:\n  clientId: %s\n  clientSecret: %s\n", id, secret)}},
	})
	ctr, err := q.SeedContainer(env, "metrics", "prom/statsd-exporter", "v0.28.0", qoveryapi.Port{Name: "http", InternalPort: 9102})
	if err != nil {
		t.Fatal(err)
	}
	c, err := qovery.New(qovery.Config{BaseURL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g, err := c.CreateAnnotationsGroup(ctx, org, &qovery.AnnotationsGroupRequest{Name: "expose-metrics", Scopes: []string{"SERVICES"},
		Annotations: []qovery.Annotation{{Key: AnnotationExpose, Value: "true"}, {Key: AnnotationHostname, Value: "metrics-prod"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetContainerAnnotationsGroups(ctx, ctr, []string{g.ID}); err != nil {
		t.Fatal(err)
	}
	before, err := c.GetContainerStatus(ctx, ctr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RedeployContainer(ctx, ctr); err != nil {
		t.Fatal(err)
	}
	get := func(ctx context.Context) (*qovery.Status, error) { return c.GetContainerStatus(ctx, ctr) }
	if _, err := qovery.WaitForDeployment(ctx, get, qovery.WaitOptions{PollInterval: 5 * time.Millisecond, Since: before}); err != nil {
		t.Fatal(err)
	}
	w.wantDevice("metrics-prod", "tag:k8s")
}
