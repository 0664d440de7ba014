package cluster

import (
	"context"
	"slices"
	"testing"
)

// TestExposure_detachedWithoutOperatorKeepsItsProxy: with no operator
// running, nothing removes the proxy of a Service whose annotations are
// gone, nor lets a deleted application's Service go; the next operator
// cleans both up.
func TestExposure_detachedWithoutOperatorKeepsItsProxy(t *testing.T) {
	w := newExposureWorld(t)
	w.deploy(exposedApp([]string{"SERVICES"}, exposeAnnotations))
	w.wantDevice("billing-api-us-east-1", "tag:k8s")
	if err := w.engine.Delete(context.Background(), w.operator); err != nil {
		t.Fatal(err)
	}
	w.deploy(exposedApp([]string{"SERVICES"}, nil))
	w.wantDevice("billing-api-us-east-1", "tag:k8s")
	if got := w.engine.Leftovers(); len(got) != 1 {
		t.Fatalf("leftovers %q, want the proxy", got)
	}
	w.deploy(w.operator)
	if d := w.devices("billing-api-us-east-1"); len(d) != 0 {
		t.Fatalf("the operator left the proxy: %+v", d)
	}
	if got := w.engine.Leftovers(); len(got) != 0 {
		t.Fatalf("leftovers %q", got)
	}

	w.deploy(exposedApp([]string{"SERVICES"}, exposeAnnotations))
	if err := w.engine.Delete(context.Background(), w.operator); err != nil {
		t.Fatal(err)
	}
	if err := w.engine.Delete(context.Background(), exposedApp([]string{"SERVICES"}, exposeAnnotations)); err != nil {
		t.Fatal(err)
	}
	w.wantDevice("billing-api-us-east-1", "tag:k8s")
	if got, want := w.engine.Stuck(), []string{"Service zdef-prod/app-z1234abcd on cluster " + exposureCluster + " (Terminating)"}; !slices.Equal(got, want) {
		t.Fatalf("stuck %q, want %q", got, want)
	}
	w.deploy(w.operator)
	if d := w.devices("billing-api-us-east-1"); len(d) != 0 || len(w.engine.Stuck()) != 0 {
		t.Fatalf("after the operator's return: devices %+v, stuck %q", d, w.engine.Stuck())
	}
}

// TestExposure_annotationQuirks: "tag:a, tag:b" passes validation but asks
// for " tag:b"; an empty tags annotation is refused; an empty proxy-group
// annotation makes the operator skip the Service. LenientAnnotations keeps
// the earlier reading.
func TestExposure_annotationQuirks(t *testing.T) {
	w := newExposureWorld(t)
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationTags, "tag:k8s, tag:k8s-billing")))
	w.wantNoDevice("billing-api-us-east-1", "ProxyFailed")

	w = newExposureWorld(t)
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationTags, "")))
	w.wantNoDevice("billing-api-us-east-1", `INVALIDSERVICE: invalid tag ""`)

	w = newExposureWorld(t)
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationProxyGroup, "")))
	w.wantNoDevice("billing-api-us-east-1", "annotation tailscale.com/proxy-group is empty")

	w = newExposureWorld(t)
	w.engine.SetCompat(Compat{LenientAnnotations: true})
	w.deploy(exposedApp([]string{"SERVICES"}, withAnnotations(exposeAnnotations, AnnotationTags, "tag:k8s, tag:k8s-billing", AnnotationProxyGroup, "")))
	w.wantDevice("billing-api-us-east-1", "tag:k8s", "tag:k8s-billing")
}
