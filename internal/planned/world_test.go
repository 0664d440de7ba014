package planned

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestClaimHostname(t *testing.T) {
	w := New()
	if other, conflict := w.ClaimHostname("billing-api", "app-1"); conflict {
		t.Fatalf("first claim conflicts with %s", other)
	}
	if _, conflict := w.ClaimHostname("billing-api", "app-1"); conflict {
		t.Error("the same owner planned twice conflicts with itself")
	}
	if other, conflict := w.ClaimHostname("Billing-API", "app-2"); !conflict || other != "app-1" {
		t.Errorf("a second owner of the hostname (in other case): conflict %v with %q, want a conflict with app-1", conflict, other)
	}
	// Objects and hostnames are claimed apart.
	obj := ObjectName("Connector", "billing-api", "c1")
	if obj != "Connector billing-api on cluster c1" {
		t.Errorf("ObjectName = %q", obj)
	}
	if _, conflict := w.ClaimObject(obj, "environment e1"); conflict {
		t.Error("an object conflicts with a hostname")
	}
	if other, conflict := w.ClaimObject(ObjectName("Connector", "BILLING-API", "c1"), "environment e2"); !conflict || other != "environment e1" {
		t.Errorf("a second claim of the object: conflict %v with %q", conflict, other)
	}
}

func TestReleaseAndFailedOperators(t *testing.T) {
	w := New()
	w.Release("group-1", "", "device-1")
	if !w.Released("group-1") || !w.Released("device-1") || w.Released("") || w.Released("other") {
		t.Error("released set is wrong")
	}
	w.AddFailedOperator("helm-1", "")
	if !w.FailedOperator("helm-1") || w.FailedOperator("") || w.FailedOperator("helm-2") {
		t.Error("failed operators are wrong")
	}
	if w.OperatorPlannedOn("c1") {
		t.Error("an operator planned on an empty plan")
	}
	w.PlanOperator("c1", Operator{ClientID: "kClient"})
	if !w.OperatorPlannedOn("c1") || w.OperatorPlannedOn("c2") {
		t.Error("planned operators are wrong")
	}
	if op, ok := w.PlannedOperator("c1"); !ok || op.ClientID != "kClient" {
		t.Errorf("planned operator of c1 = %+v, %v", op, ok)
	}
	if _, ok := w.PlannedOperator("c2"); ok {
		t.Error("an operator planned on c2")
	}
}

func TestProxyGroups(t *testing.T) {
	w := New()
	w.DeclareProxyGroup("env-b", "", "ingress", "egress")
	w.DeclareProxyGroup("env-a", "c1", "ingress", "ingress")
	w.DeclareProxyGroup("env-b", "", "ingress", "ingress") // planned again
	w.DeclareProxyGroup("env-a", "c1", "other", "egress")
	got := w.ProxyGroupsNamed("ingress")
	want := []ProxyGroup{{"env-a", "ingress", "ingress"}, {"env-b", "ingress", "ingress"}}
	if !slices.Equal(got, want) {
		t.Errorf("ProxyGroupsNamed = %v, want %v", got, want)
	}

	reads := 0
	read := func(_ context.Context, env string) (string, error) {
		reads++
		if env == "env-x" {
			return "", errors.New("boom")
		}
		return "cluster-of-" + env, nil
	}
	ctx := context.Background()
	if c, err := w.ClusterOf(ctx, "env-a", read); err != nil || c != "c1" || reads != 0 {
		t.Errorf("a declared environment's cluster: %q, %v after %d reads", c, err, reads)
	}
	for range 2 {
		if c, err := w.ClusterOf(ctx, "env-b", read); err != nil || c != "cluster-of-env-b" {
			t.Errorf("ClusterOf(env-b) = %q, %v", c, err)
		}
	}
	if reads != 1 {
		t.Errorf("%d reads of one environment, want 1", reads)
	}
	if _, err := w.ClusterOf(ctx, "env-x", read); err == nil {
		t.Error("a failed read is no error")
	}
}

func TestRefreshed(t *testing.T) {
	w := New()
	if _, seen := w.Refreshed("helm-1"); seen {
		t.Error("a service seen before any refresh")
	}
	ids := []string{"d1", "d2"}
	w.RecordRefresh("helm-1", ids)
	ids[0] = "changed"
	got, seen := w.Refreshed("helm-1")
	if !seen || !slices.Equal(got, []string{"d1", "d2"}) {
		t.Errorf("Refreshed = %v, %v", got, seen)
	}
	w.RecordRefresh("helm-2", nil)
	if got, seen := w.Refreshed("helm-2"); !seen || len(got) != 0 {
		t.Errorf("a service without devices: %v, %v", got, seen)
	}
}

func TestDeletesInProgress(t *testing.T) {
	w := New()
	if w.Deleting("g1") || w.DeletesInProgress() != 0 {
		t.Fatal("an empty world has deletes in progress")
	}
	done1 := w.StartDelete("g1")
	done2 := w.StartDelete("h1")
	if !w.Deleting("g1") || !w.Deleting("h1") || w.DeletesInProgress() != 2 {
		t.Fatal("the started deletes are not in progress")
	}
	done1()
	done1()
	if w.Deleting("g1") || !w.Deleting("h1") || w.DeletesInProgress() != 1 {
		t.Fatal("a finished delete is still in progress, or finishing twice counted twice")
	}
	done2()
	if w.DeletesInProgress() != 0 {
		t.Fatal("deletes left in progress")
	}
}
