package cluster

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/planned"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// Without an operator on the cluster, the lookup gives the chart's
// defaults; the operator's values file overrides them.
func TestLookupOperator(t *testing.T) {
	t.Parallel()
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.manifests(w.env, "proxies", proxyGroupValues("ingress", manifest.ProxyGroupIngress))
		op, err := w.lookup().Operator(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if op.HelmID != "" || op.Planned || !slices.Equal(op.Tags, []string{DefaultOperatorTag}) || !slices.Equal(op.ProxyTags, []string{DefaultProxyTag}) {
			t.Errorf("operator of an empty cluster = %+v, want the chart's defaults", op)
		}
	})
	t.Run("values", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		values := w.operatorValues(manifest.OperatorValues{Hostname: "ts-operator", DefaultTags: []string{"tag:ops"},
			ProxyDefaultTags: []string{"tag:proxies", "tag:k8s"}}, map[string]any{"proxyConfig": map[string]any{"defaultProxyClass": "small"}})
		// The operator runs in another environment of the same cluster.
		id := w.operator(w.other, values)
		op, err := w.lookup().Operator(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if op.HelmID != id || op.Name != "tailscale-operator" || op.Hostname != "ts-operator" || !slices.Equal(op.Tags, []string{"tag:ops"}) ||
			!slices.Equal(op.ProxyTags, []string{"tag:proxies", "tag:k8s"}) || op.DefaultProxyClass != "small" {
			t.Errorf("operator = %+v", op)
		}
		tags, err := EnvironmentProxyTags(w.ctx, w.q, w.env)
		if err != nil || !slices.Equal(tags, []string{"tag:proxies", "tag:k8s"}) {
			t.Errorf("EnvironmentProxyTags = %v, %v; want the operator's proxy tags", tags, err)
		}
	})
	t.Run("values without tags", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operator(w.env, "operatorConfig:\n  hostname: ts-operator\n")
		op, err := FindOperator(w.ctx, w.q, w.environment(w.env))
		if err != nil {
			t.Fatal(err)
		}
		if op.Hostname != "ts-operator" || !slices.Equal(op.Tags, []string{DefaultOperatorTag}) || !slices.Equal(op.ProxyTags, []string{DefaultProxyTag}) {
			t.Errorf("operator whose values set no tags = %+v, want the chart's default tags", op)
		}
	})
	t.Run("another cluster's", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operator(w.otherEnv, w.operatorValues(manifest.OperatorValues{DefaultTags: []string{"tag:ops"}}, nil))
		op, err := w.lookup().Operator(w.ctx)
		if err != nil || op.HelmID != "" {
			t.Errorf("the operator of another cluster was taken for this one's: %+v, %v", op, err)
		}
		tags, err := EnvironmentProxyTags(w.ctx, w.q, w.env)
		if err != nil || !slices.Equal(tags, manifest.ChartDefaultProxyTags) {
			t.Errorf("EnvironmentProxyTags = %v, %v; want the chart's", tags, err)
		}
	})
	t.Run("unreadable values", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		id := w.operator(w.env, "operatorConfig: [\n")
		op, err := w.lookup().Operator(w.ctx)
		if err != nil || op.HelmID != id || !slices.Equal(op.Tags, []string{DefaultOperatorTag}) {
			t.Errorf("operator with a values file that is no YAML = %+v, %v; want it found with the default tags", op, err)
		}
	})
	t.Run("planned", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operator(w.env, w.operatorValues(manifest.OperatorValues{DefaultTags: []string{"tag:old"}}, nil))
		plan := planned.New()
		plan.PlanOperator(w.cluster, planned.Operator{ClientID: "k123",
			Values: w.operatorValues(manifest.OperatorValues{DefaultTags: []string{"tag:new"}, ProxyDefaultTags: []string{"tag:new-proxies"}}, nil)})
		op, err := w.lookup().UsePlan(plan).Operator(w.ctx)
		if err != nil || !op.Planned || op.ClientID != "k123" || op.CreatesClient || !slices.Equal(op.Tags, []string{"tag:new"}) ||
			!slices.Equal(op.ProxyTags, []string{"tag:new-proxies"}) {
			t.Errorf("operator the plan changes = %+v, %v; want the plan's values over Qovery's", op, err)
		}
		// A plan that does not know the values yet keeps Qovery's.
		plan.PlanOperator(w.cluster, planned.Operator{CreatesClient: true})
		op, _ = w.lookup().UsePlan(plan).Operator(w.ctx)
		if !op.Planned || !op.CreatesClient || !slices.Equal(op.Tags, []string{"tag:old"}) || op.ChartVersion != "1.102.4" {
			t.Errorf("operator planned with unknown values = %+v, want Qovery's tags and chart version", op)
		}
		plan.PlanOperator(w.cluster, planned.Operator{ChartVersion: "1.100.0"})
		if op, _ = w.lookup().UsePlan(plan).Operator(w.ctx); op.ChartVersion != "1.100.0" {
			t.Errorf("operator planned at another chart version = %+v, want the plan's version", op)
		}
	})
	t.Run("list fails", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operator(w.env, "")
		w.Qovery.Faults().Add(faults.Rule{Route: "GET /environment/{environmentId}/helm", Status: http.StatusInternalServerError})
		op, err := w.lookup().Operator(w.ctx)
		if err == nil || op.HelmID != "" || !slices.Equal(op.Tags, []string{DefaultOperatorTag}) {
			t.Errorf("Operator when listing fails = %+v, %v; want the error and the defaults", op, err)
		}
		if _, err := EnvironmentProxyTags(w.ctx, w.q, w.env); err != nil {
			t.Errorf("the fault outlived its one call: %v", err)
		}
		w.Qovery.Faults().Add(faults.Rule{Route: "GET /environment/{environmentId}", Status: http.StatusForbidden})
		if _, err := EnvironmentProxyTags(w.ctx, w.q, w.env); err == nil {
			t.Error("EnvironmentProxyTags without its environment gave no error")
		}
	})
}

// The Helm services of a cluster are those of every environment on it, in
// every project, listed once per lookup.
func TestLookupHelmsListsTheClusterOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.manifests(w.env, "a", "manifests: []\n")
	b := w.manifests(w.other, "b", "manifests: []\n")
	w.manifests(w.otherEnv, "c", "manifests: []\n")
	project := w.must(w.Qovery.SeedProject(w.org, "data"))
	d := w.manifests(w.must(w.Qovery.SeedEnvironment(project, w.cluster, "data-us-east-1")), "d", "manifests: []\n")

	l := w.lookup()
	for range 3 {
		helms, err := l.Helms(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range helms {
			ids = append(ids, h.ID)
		}
		slices.Sort(ids)
		want := []string{a, b, d}
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Fatalf("Helms = %v, want %v (not the other cluster's)", ids, want)
		}
		if _, err := l.Operator(w.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := w.Qovery.Faults().Count("GET /organization/{organizationId}/project"); n != 1 {
		t.Errorf("the projects were listed %d times, want once", n)
	}
}

func TestOperatorDescribe(t *testing.T) {
	t.Parallel()
	env := &qovery.Environment{ClusterID: "c1"}
	for _, tc := range []struct {
		op   Operator
		want string
	}{
		{Operator{Planned: true}, "the operator that this plan installs on cluster c1"},
		{Operator{}, "no operator Helm service found on cluster c1 yet, so the default tag is assumed"},
		{Operator{HelmID: "h1", Name: "tailscale", Planned: true}, "the operator Helm service tailscale (h1) on cluster c1"},
	} {
		if got := tc.op.Describe(env); got != tc.want {
			t.Errorf("Describe(%+v) = %q, want %q", tc.op, got, tc.want)
		}
	}
}

func TestIsOperatorDevice(t *testing.T) {
	t.Parallel()
	op := Operator{Hostname: "ts-operator", Tags: []string{"tag:k8s-operator", "tag:ops"}, ProxyTags: []string{"tag:k8s", "tag:ops"}}
	for _, tc := range []struct {
		hostname string
		tags     []string
		want     bool
	}{
		{"TS-Operator", nil, true},
		{"other", []string{"tag:k8s-operator"}, true},
		{"other", nil, false},
		{"other", []string{"tag:k8s"}, false},
		// A tag the proxies carry too says nothing.
		{"other", []string{"tag:k8s-operator", "tag:ops"}, false},
		{"other", []string{"tag:k8s-operator", "tag:db"}, false},
	} {
		if got := op.IsOperatorDevice(tc.hostname, tc.tags); got != tc.want {
			t.Errorf("IsOperatorDevice(%q, %v) = %v, want %v", tc.hostname, tc.tags, got, tc.want)
		}
	}
	if (Operator{Tags: []string{DefaultOperatorTag}}).IsOperatorDevice("tailscale-operator", nil) {
		t.Error("without a hostname in the values, an untagged device is taken for the operator")
	}
}

// The OAuth client of an operator: the one the plan creates, the one it
// names, or the one of the plain variable of the operator's Helm service,
// read through the keys API when qtail may.
func TestLookupOAuthClient(t *testing.T) {
	t.Parallel()
	t.Run("created by the plan", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		plan := planned.New()
		plan.PlanOperator(w.cluster, planned.Operator{CreatesClient: true,
			Values: w.operatorValues(manifest.OperatorValues{DefaultTags: []string{"tag:ops"}}, nil)})
		c := w.lookup().UsePlan(plan).OAuthClient(w.ctx, w.tn)
		if !c.Known || c.ID != "" || !slices.Equal(c.Tags, []string{"tag:ops"}) || !slices.Equal(c.Scopes, OperatorOAuthScopes) {
			t.Errorf("client = %+v", c)
		}
		if d := c.describe(); d != "the OAuth client qtail creates for it, tagged [\"tag:ops\"]" {
			t.Errorf("describe = %q", d)
		}
	})
	t.Run("named by the plan", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		id, _ := w.Tailnet.SeedOAuthClient("", "", []string{"devices:core", "auth_keys"}, []string{"tag:k8s-operator"})
		plan := planned.New()
		plan.PlanOperator(w.cluster, planned.Operator{ClientID: id})
		l := w.lookup().UsePlan(plan)
		c := l.OAuthClient(w.ctx, w.tn)
		if !c.Known || c.ID != id || !slices.Equal(c.Tags, []string{"tag:k8s-operator"}) || !slices.Equal(c.Scopes, []string{"devices:core", "auth_keys"}) {
			t.Errorf("client = %+v", c)
		}
		if d := c.describe(); d != "its OAuth client "+id+", tagged [\"tag:k8s-operator\"]" {
			t.Errorf("describe = %q", d)
		}
		// Looked up once.
		const getKey = "GET /api/v2/tailnet/{tailnet}/keys/{id}"
		if again := l.OAuthClient(w.ctx, w.tn); again.ID != id || w.Tailnet.Faults().Count(getKey) != 1 {
			t.Errorf("the key was read %d times, want once", w.Tailnet.Faults().Count(getKey))
		}
	})
	t.Run("from the plain variable", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		id, _ := w.Tailnet.SeedOAuthClient("", "", OperatorOAuthScopes, []string{"tag:ops"})
		helm := w.operator(w.env, "")
		w.clientIDVariable(helm, id, false)
		if c := w.lookup().OAuthClient(w.ctx, w.tn); !c.Known || c.ID != id || !slices.Equal(c.Tags, []string{"tag:ops"}) {
			t.Errorf("client = %+v", c)
		}
		// Without a tailnet client, the ID alone.
		if c := w.lookup().OAuthClient(w.ctx, nil); c.Known || c.ID != id || !slices.Equal(c.Tags, []string{DefaultOperatorTag}) {
			t.Errorf("client not read = %+v", c)
		}
	})
	t.Run("secret", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		id, _ := w.Tailnet.SeedOAuthClient("", "", OperatorOAuthScopes, []string{"tag:ops"})
		helm := w.operator(w.env, w.operatorValues(manifest.OperatorValues{DefaultTags: []string{"tag:k8s-operator"}}, nil))
		w.clientIDVariable(helm, id, true)
		c := w.lookup().OAuthClient(w.ctx, w.tn)
		if c.Known || c.ID != "" || !slices.Equal(c.Tags, []string{"tag:k8s-operator"}) {
			t.Errorf("client of a secret ID = %+v, want unknown, tagged like the operator", c)
		}
		if d := c.describe(); !strings.Contains(d, "which qtail could not read and takes to be tagged like the operator") {
			t.Errorf("describe = %q", d)
		}
	})
	t.Run("missing key", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		helm := w.operator(w.env, "")
		w.clientIDVariable(helm, "kGONE", false)
		if c := w.lookup().OAuthClient(w.ctx, w.tn); c.Known || c.ID != "kGONE" {
			t.Errorf("client whose key is gone = %+v, want its ID, unknown", c)
		}
	})
	t.Run("variables unreadable", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		helm := w.operator(w.env, "")
		w.clientIDVariable(helm, "k1", false)
		w.Qovery.Faults().Add(faults.Rule{Route: "GET /variable", Status: http.StatusInternalServerError})
		if c := w.lookup().OAuthClient(w.ctx, w.tn); c.Known || c.ID != "" {
			t.Errorf("client when the variables cannot be read = %+v", c)
		}
	})
}
