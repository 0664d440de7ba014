package cluster

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/planned"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// annotationsGroup creates an organization annotations group with these
// annotations (key, value pairs) and returns its ID.
func (w *world) annotationsGroup(name string, kv ...string) string {
	w.t.Helper()
	var list []qovery.Annotation
	for i := 0; i+1 < len(kv); i += 2 {
		list = append(list, qovery.Annotation{Key: kv[i], Value: kv[i+1]})
	}
	g, err := w.q.CreateAnnotationsGroup(w.ctx, w.org, &qovery.AnnotationsGroupRequest{Name: name, Annotations: list,
		Scopes: []string{qovery.AnnotationsGroupScopeServices}})
	if err != nil {
		w.t.Fatal(err)
	}
	return g.ID
}

// expose attaches the annotations groups to the application appID.
func (w *world) expose(appID string, groups ...string) {
	w.t.Helper()
	if _, err := w.q.SetApplicationAnnotationsGroups(w.ctx, appID, groups); err != nil {
		w.t.Fatal(err)
	}
}

// dependentsValues is a manifests values file with a Connector, a
// ProxyGroup and an egress Service.
const dependentsValues = `manifests:
  - apiVersion: tailscale.com/v1alpha1
    kind: Connector
    metadata:
      name: homelab
  - apiVersion: tailscale.com/v1alpha1
    kind: ProxyGroup
    metadata:
      name: web
  - apiVersion: v1
    kind: Service
    metadata:
      name: db-egress
`

func whats(deps []Dependent) []string {
	out := make([]string, len(deps))
	for i, d := range deps {
		out[i] = d.What
	}
	return out
}

// The dependents of an operator are the exposures and the manifest
// services of every environment on its cluster, sorted by what they are;
// the operator itself, objects of another kind and the objects of other
// clusters are not.
func TestDependents(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	exposed := w.annotationsGroup("billing", manifest.AnnotationExpose, "true", manifest.AnnotationHostname, "billing")
	off := w.annotationsGroup("off", manifest.AnnotationHostname, "off", manifest.AnnotationExpose, "false")
	plain := w.annotationsGroup("plain", "example.com/team", "billing")
	w.expose(w.app, off, exposed, plain)

	container, err := w.Qovery.SeedContainer(w.other, "ledger", "ghcr.io/acme/ledger", "1.0")
	if err != nil {
		t.Fatal(err)
	}
	ledger := w.annotationsGroup("ledger", manifest.AnnotationExpose, "true")
	if _, err := w.q.SetContainerAnnotationsGroups(w.ctx, container, []string{ledger}); err != nil {
		t.Fatal(err)
	}
	proxies := w.manifests(w.env, "proxies", dependentsValues)
	w.manifests(w.env, "classes", proxyClassValues("small", "      statefulSet: {}\n"))
	w.helm(w.env, "from-git", qovery.HelmValuesOverride{})
	// An operator whose values file is named like qtail's manifests file
	// is still the operator.
	w.operatorWithFile(w.other, manifest.ManifestsFileName, dependentsValues)

	far, err := w.Qovery.SeedApplication(w.otherEnv, "far")
	if err != nil {
		t.Fatal(err)
	}
	w.expose(far, w.annotationsGroup("far", manifest.AnnotationExpose, "true"))
	w.manifests(w.otherEnv, "far-proxies", dependentsValues)

	deps, err := Dependents(w.ctx, w.q, w.environment(w.env))
	if err != nil {
		t.Fatal(err)
	}
	want := []Dependent{
		{ID: proxies, What: "the Connector homelab, ProxyGroup web, Service db-egress of the Helm service proxies (" + proxies + ")"},
		{ID: exposed, What: "the exposure of application billing-api (" + w.app + ") at the hostname \"billing\" (annotations group " + exposed + ")"},
		{ID: ledger, What: "the exposure of container ledger (" + container + ") at the hostname \"\" (annotations group " + ledger + ")"},
	}
	if !slices.Equal(deps, want) {
		t.Errorf("Dependents =\n%q\nwant\n%q", whats(deps), whats(want))
	}
}

// operatorWithFile creates, in the environment envID, the Helm service of
// an operator with one raw values file, and returns its ID.
func (w *world) operatorWithFile(envID, file, content string) string {
	w.t.Helper()
	h, err := w.q.CreateHelm(w.ctx, envID, &qovery.HelmRequest{
		Name: "tailscale-operator",
		Source: qovery.HelmSourceRequest{HelmRepository: &qovery.HelmRepositorySourceRequest{
			Repository: w.operatorRepository(), ChartName: OperatorChart, ChartVersion: "1.102.4"}},
		AllowClusterWideResources: true,
		ValuesOverride: qovery.HelmValuesOverride{File: &qovery.HelmValuesFile{Raw: &qovery.HelmRawValues{
			Values: []qovery.HelmRawValuesFile{{Name: file, Content: content}}}}},
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return h.ID
}

// Each listing that fails fails Dependents.
func TestDependentsListFails(t *testing.T) {
	t.Parallel()
	for _, route := range []string{
		"GET /organization/{organizationId}/project",
		"GET /project/{projectId}/environment",
		"GET /environment/{environmentId}/application",
		"GET /environment/{environmentId}/container",
		"GET /environment/{environmentId}/helm",
	} {
		t.Run(route, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			env := w.environment(w.env)
			w.Qovery.Faults().Add(faults.Rule{Route: route, Status: http.StatusInternalServerError})
			if deps, err := Dependents(w.ctx, w.q, env); err == nil || deps != nil {
				t.Errorf("Dependents = %v, %v; want the error of %s", deps, err, route)
			}
		})
	}
}

// awaitPoll and awaitGrace are the poll interval and grace of the waits
// of these tests, on the clock of their synctest bubble.
const (
	awaitPoll  = time.Second
	awaitGrace = 3 * time.Second
	// awaitDeadline ends the waits that would go on, between two polls.
	awaitDeadline = 10*awaitGrace + awaitPoll/2
)

func TestAwaitDependents(t *testing.T) {
	t.Parallel()
	t.Run("none", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			start := time.Now()
			deps, err := AwaitDependents(w.ctx, w.q, w.environment(w.env), planned.New(), awaitPoll, awaitGrace)
			if deps != nil || err != nil || time.Since(start) != 0 {
				t.Errorf("AwaitDependents = %v, %v after %s; want nothing at once", deps, err, time.Since(start))
			}
		})
	})
	t.Run("grace", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			id := w.manifests(w.env, "proxies", dependentsValues)
			start := time.Now()
			deps, err := AwaitDependents(w.ctx, w.q, w.environment(w.env), planned.New(), awaitPoll, awaitGrace)
			if err != nil || len(deps) != 1 || deps[0].ID != id {
				t.Fatalf("AwaitDependents = %v, %v; want the Helm service", deps, err)
			}
			if took := time.Since(start); took != awaitGrace {
				t.Errorf("AwaitDependents returned after %s, want the grace, %s", took, awaitGrace)
			}
		})
	})
	t.Run("grace after the last change", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			keep := w.manifests(w.env, "proxies", dependentsValues)
			w.expose(w.app, w.annotationsGroup("billing", manifest.AnnotationExpose, "true"))
			go func() {
				time.Sleep(awaitGrace - awaitPoll/2)
				w.expose(w.app)
			}()
			start := time.Now()
			deps, err := AwaitDependents(w.ctx, w.q, w.environment(w.env), planned.New(), awaitPoll, awaitGrace)
			if err != nil || len(deps) != 1 || deps[0].ID != keep {
				t.Fatalf("AwaitDependents = %v, %v; want the Helm service left", deps, err)
			}
			// The poll at the grace sees the change, and gives the grace
			// again from there.
			if took, want := time.Since(start), 2*awaitGrace; took != want {
				t.Errorf("AwaitDependents returned after %s, want %s", took, want)
			}
		})
	})
	t.Run("deleting", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			group := w.annotationsGroup("billing", manifest.AnnotationExpose, "true")
			w.expose(w.app, group)
			plan := planned.New()
			done := plan.StartDelete(group)
			go func() {
				time.Sleep(time.Minute - awaitPoll/2)
				w.expose(w.app)
				done()
			}()
			start := time.Now()
			deps, err := AwaitDependents(w.ctx, w.q, w.environment(w.env), plan, awaitPoll, awaitGrace)
			if deps != nil || err != nil {
				t.Errorf("AwaitDependents = %v, %v; want nothing left", deps, err)
			}
			if took := time.Since(start); took != time.Minute {
				t.Errorf("AwaitDependents returned after %s, want the minute the deletion took", took)
			}
		})
	})
	t.Run("deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			id := w.manifests(w.env, "proxies", dependentsValues)
			plan := planned.New()
			plan.StartDelete(id)
			ctx, cancel := context.WithTimeout(w.ctx, awaitDeadline)
			defer cancel()
			start := time.Now()
			deps, err := AwaitDependents(ctx, w.q, w.environment(w.env), plan, awaitPoll, awaitGrace)
			if err != nil || len(deps) != 1 || deps[0].ID != id {
				t.Errorf("AwaitDependents = %v, %v; want the Helm service still being deleted", deps, err)
			}
			if took := time.Since(start); took != awaitDeadline {
				t.Errorf("AwaitDependents returned after %s, want the deadline", took)
			}
		})
	})
	t.Run("list fails", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			w.manifests(w.env, "proxies", dependentsValues)
			env := w.environment(w.env)
			w.Qovery.Faults().Add(faults.Rule{Route: "GET /organization/{organizationId}/project", Status: http.StatusInternalServerError})
			if deps, err := AwaitDependents(w.ctx, w.q, env, planned.New(), awaitPoll, awaitGrace); err == nil || deps != nil {
				t.Errorf("AwaitDependents = %v, %v; want the error", deps, err)
			}
		})
	})
}

func TestAwaitOperator(t *testing.T) {
	t.Parallel()
	t.Run("running", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			id := w.operator(w.other, "")
			start := time.Now()
			op, err := AwaitOperator(w.ctx, w.q, w.environment(w.env), planned.New(), awaitPoll, awaitGrace)
			if err != nil || op.HelmID != id || time.Since(start) != 0 {
				t.Errorf("AwaitOperator = %+v, %v after %s; want the operator at once", op, err, time.Since(start))
			}
		})
	})
	t.Run("none", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			start := time.Now()
			op, err := AwaitOperator(w.ctx, w.q, w.environment(w.env), planned.New(), awaitPoll, awaitGrace)
			if !errors.Is(err, ErrNoOperator) || op.HelmID != "" {
				t.Errorf("AwaitOperator = %+v, %v; want ErrNoOperator", op, err)
			}
			if took := time.Since(start); took != awaitGrace {
				t.Errorf("AwaitOperator gave up after %s, want the grace, %s", took, awaitGrace)
			}
		})
	})
	t.Run("appears within the grace", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			ids := make(chan string, 1)
			go func() {
				time.Sleep(awaitGrace - awaitPoll/2)
				ids <- w.operator(w.env, "")
			}()
			op, err := AwaitOperator(w.ctx, w.q, w.environment(w.env), planned.New(), awaitPoll, awaitGrace)
			if id := <-ids; err != nil || op.HelmID != id {
				t.Errorf("AwaitOperator = %+v, %v; want the operator %s", op, err, id)
			}
		})
	})
	t.Run("planned and deployed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			plan := planned.New()
			plan.PlanOperator(w.cluster, planned.Operator{})
			id := w.operator(w.env, "")
			if err := w.Qovery.Deploy(id); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			op, err := AwaitOperator(w.ctx, w.q, w.environment(w.env), plan, awaitPoll, awaitGrace)
			if err != nil || op.HelmID != id {
				t.Errorf("AwaitOperator = %+v, %v; want the deployed operator", op, err)
			}
			if took := time.Since(start); took < deployTime || took > deployTime+awaitPoll {
				t.Errorf("AwaitOperator returned after %s, want the %s of the deployment", took, deployTime)
			}
		})
	})
	t.Run("planned and failed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			plan := planned.New()
			plan.PlanOperator(w.cluster, planned.Operator{})
			id := w.operator(w.env, "")
			w.deployer.failing(id, "image pull failed")
			if err := w.Qovery.Deploy(id); err != nil {
				t.Fatal(err)
			}
			op, err := AwaitOperator(w.ctx, w.q, w.environment(w.env), plan, awaitPoll, awaitGrace)
			want := "the deployment of the operator's Helm service tailscale-operator (" + id + ") failed"
			if err == nil || err.Error() != want || op.HelmID != id {
				t.Errorf("AwaitOperator = %+v, %v; want %q", op, err, want)
			}
		})
	})
	t.Run("planned and not deployed in time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			plan := planned.New()
			plan.PlanOperator(w.cluster, planned.Operator{})
			id := w.operator(w.env, "")
			ctx, cancel := context.WithTimeout(w.ctx, awaitDeadline)
			defer cancel()
			op, err := AwaitOperator(ctx, w.q, w.environment(w.env), plan, awaitPoll, awaitGrace)
			want := "the operator's Helm service tailscale-operator (" + id + ") was not deployed in time: context deadline exceeded"
			if err == nil || err.Error() != want || !errors.Is(err, context.DeadlineExceeded) || op.HelmID != id {
				t.Errorf("AwaitOperator = %+v, %v; want %q", op, err, want)
			}
		})
	})
	t.Run("planned and never created", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			plan := planned.New()
			plan.PlanOperator(w.cluster, planned.Operator{})
			ctx, cancel := context.WithTimeout(w.ctx, awaitDeadline)
			defer cancel()
			start := time.Now()
			_, err := AwaitOperator(ctx, w.q, w.environment(w.env), plan, awaitPoll, awaitGrace)
			if !errors.Is(err, ErrNoOperator) {
				t.Errorf("AwaitOperator: %v, want ErrNoOperator", err)
			}
			if took := time.Since(start); took != awaitDeadline {
				t.Errorf("AwaitOperator gave up after %s, want the deadline: the planned operator is waited for", took)
			}
		})
	})
	t.Run("list fails", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t)
			env := w.environment(w.env)
			w.Qovery.Faults().Add(faults.Rule{Route: "GET /organization/{organizationId}/project", Status: http.StatusInternalServerError})
			if _, err := AwaitOperator(w.ctx, w.q, env, planned.New(), awaitPoll, awaitGrace); err == nil || errors.Is(err, ErrNoOperator) {
				t.Errorf("AwaitOperator: %v, want the listing's error", err)
			}
		})
	})
}

func TestOperatorNamed(t *testing.T) {
	t.Parallel()
	env := &qovery.Environment{ID: "env-1", ClusterID: "cluster-1"}
	helms := []qovery.Helm{
		{ID: "h-manifests", Name: "proxies", Source: qovery.HelmSource{Git: &qovery.HelmSourceGit{}}},
		{ID: "h-other", Name: "redis", Source: qovery.HelmSource{Repository: &qovery.HelmSourceRepository{ChartName: "redis"}}},
		{ID: "h-operator", Name: "tailscale-operator", Source: qovery.HelmSource{Repository: &qovery.HelmSourceRepository{ChartName: OperatorChart}}},
	}
	for id, want := range map[string]string{
		"h-operator":  "",
		"h-other":     "the Helm service redis (h-other) does not install the tailscale-operator chart",
		"h-manifests": "the Helm service proxies (h-manifests) does not install the tailscale-operator chart",
		"h-missing":   "no Helm service h-missing runs on cluster cluster-1, where environment env-1 runs",
	} {
		if got := OperatorNamed(helms, env, id); got != want {
			t.Errorf("OperatorNamed(%s) = %q, want %q", id, got, want)
		}
	}
	if got := OperatorNamed(nil, env, "h-operator"); !strings.HasPrefix(got, "no Helm service h-operator") {
		t.Errorf("OperatorNamed among none = %q", got)
	}
}
