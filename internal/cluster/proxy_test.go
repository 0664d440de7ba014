package cluster

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

func TestScopeGranted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scopes []string
		want   bool
	}{
		{[]string{"devices:core", "services"}, true},
		{[]string{"all"}, true},
		{[]string{"devices:core", "auth_keys"}, false},
		{[]string{"services:read"}, false},
		{nil, false},
	} {
		if got := ScopeGranted(tc.scopes, "services"); got != tc.want {
			t.Errorf("ScopeGranted(%v, services) = %v, want %v", tc.scopes, got, tc.want)
		}
	}
}

// Blocked asks at the first poll and every pollEvery polls after, and
// answers with the last reason in between.
func TestBlocked(t *testing.T) {
	t.Parallel()
	asked := 0
	answers := []string{"", "no ProxyGroup", ""}
	blocked := Blocked(func(context.Context) string {
		why := answers[asked]
		asked++
		return why
	})
	var got []string
	for range 2*pollEvery + 1 {
		got = append(got, blocked(t.Context()))
	}
	if asked != 3 {
		t.Errorf("asked %d times in %d polls, want 3", asked, len(got))
	}
	for i, why := range got {
		want := answers[i/pollEvery]
		if why != want {
			t.Fatalf("poll %d answered %q, want %q", i, why, want)
		}
	}
}

// operatorWithClient creates the operator of the first cluster with an
// OAuth client of these scopes, whose ID is a plain variable that qtail
// reads. It returns the client's ID.
func (w *world) operatorWithClient(scopes []string, values string) string {
	w.t.Helper()
	id, _ := w.Tailnet.SeedOAuthClient("", "", scopes, []string{"tag:k8s-operator"})
	w.clientIDVariable(w.operator(w.env, values), id, false)
	return id
}

func (w *world) ingressScope(c *conn.Clients) diag.Diagnostics {
	var diags diag.Diagnostics
	CheckIngressScope(w.ctx, c, NewLookup(c.QoveryOrNil(), w.environment(w.env)), path.Root("type"), "the ingress ProxyGroup web", &diags)
	return diags
}

func TestCheckIngressScope(t *testing.T) {
	t.Parallel()
	t.Run("unknown client", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operator(w.env, "")
		d := w.ingressScope(w.clients())
		if len(d) != 1 || d.HasError() || d[0].Summary() != "OAuth Client Scopes Not Checked" ||
			!strings.Contains(d[0].Detail(), "through the ingress ProxyGroup web with it: make sure it has the services scope") {
			t.Errorf("diagnostics %v, want a warning", d)
		}
	})
	t.Run("without the scope", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		id := w.operatorWithClient([]string{"devices:core", "auth_keys"}, "")
		d := w.ingressScope(w.clients())
		if len(d) != 1 || !d.HasError() || d[0].Summary() != "Operator's OAuth Client Lacks the Services Scope" ||
			!strings.Contains(d[0].Detail(), "uses the OAuth client "+id+`, whose scopes are ["devices:core", "auth_keys"]`) ||
			!strings.Contains(d[0].Detail(), `the scopes ["devices:core", "auth_keys", "services"]`) {
			t.Errorf("diagnostics %v, want an error", d)
		}
		if !isOn(d[0], path.Root("type")) {
			t.Errorf("error %v, want it on type", d[0])
		}
	})
	t.Run("with the scope", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operatorWithClient([]string{"all"}, "")
		if d := w.ingressScope(w.clients()); len(d) != 0 {
			t.Errorf("diagnostics %v, want none", d)
		}
	})
	t.Run("no Tailscale client", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operator(w.env, "")
		c := conn.New("test", conn.Options{})
		if d := w.ingressScope(c); len(d) != 0 {
			t.Errorf("diagnostics %v, want none", d)
		}
	})
}

func TestCheckExposure(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.operator(w.env, w.operatorValues(manifest.OperatorValues{}, map[string]any{"proxyConfig": map[string]any{"defaultProxyClass": "small"}}))
	c := w.clients()
	var viaGroup, own diag.Diagnostics
	CheckExposure(w.ctx, c, NewLookup(c.QoveryOrNil(), w.environment(w.env)), "ingress", "", &viaGroup)
	if len(viaGroup) != 1 || viaGroup[0].Summary() != "OAuth Client Scopes Not Checked" ||
		!isOn(viaGroup[0], path.Root("proxy_group")) {
		t.Errorf("through a ProxyGroup: %v, want the scope check on proxy_group", viaGroup)
	}
	CheckExposure(w.ctx, c, NewLookup(c.QoveryOrNil(), w.environment(w.env)), "", "", &own)
	if len(own) != 1 || own[0].Summary() != "ProxyClass Not on the Cluster" || !isOn(own[0], path.Root("proxy_class")) ||
		!strings.Contains(own[0].Detail(), "the operator's default") || !strings.Contains(own[0].Detail(), "for the exposed Service") {
		t.Errorf("with a proxy of its own: %v, want the operator's default ProxyClass checked on proxy_class", own)
	}
}

func TestProxyCannotAppear(t *testing.T) {
	t.Parallel()
	t.Run("the ProxyClass is missing", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operator(w.env, "")
		why := ProxyCannotAppear(w.ctx, w.clients(), w.env, []string{"tag:k8s"}, "small", false)
		if !strings.Contains(why, "no Helm service of cluster "+w.cluster+" renders the ProxyClass small, so the operator waits for it") {
			t.Errorf("ProxyCannotAppear = %q", why)
		}
	})
	t.Run("the client cannot mint the tags", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		id := w.operatorWithClient(OperatorOAuthScopes, "")
		w.tagOwners(map[string][]string{"tag:k8s-operator": {}, "tag:k8s": {"tag:k8s-operator"}})
		c := w.clients()
		why := ProxyCannotAppear(w.ctx, c, w.env, []string{"tag:k8s", "tag:web"}, "", true)
		if !strings.Contains(why, "with its OAuth client "+id) || !strings.Contains(why, `does not let those tags own ["tag:web"]`) {
			t.Errorf("ProxyCannotAppear = %q", why)
		}
		if why := ProxyCannotAppear(w.ctx, c, w.env, []string{"tag:k8s"}, "", true); why != "" {
			t.Errorf("ProxyCannotAppear for owned tags = %q, want nothing", why)
		}
		if why := ProxyCannotAppear(w.ctx, c, w.env, nil, "", true); why != "" {
			t.Errorf("ProxyCannotAppear without tags = %q, want nothing", why)
		}
		if why := ProxyCannotAppear(w.ctx, c, "no-such-environment", []string{"tag:web"}, "", true); why != "" {
			t.Errorf("ProxyCannotAppear for an unreadable environment = %q, want nothing", why)
		}
	})
	t.Run("the client is unknown", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operator(w.env, "")
		if why := ProxyCannotAppear(w.ctx, w.clients(), w.env, []string{"tag:web"}, "", true); why != "" {
			t.Errorf("ProxyCannotAppear = %q, want nothing: qtail cannot tell", why)
		}
	})
	t.Run("an application's proxy", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operatorWithClient(OperatorOAuthScopes, w.operatorValues(manifest.OperatorValues{ProxyDefaultTags: []string{"tag:proxies"}}, nil))
		w.tagOwners(map[string][]string{"tag:k8s-operator": {}})
		c := w.clients()
		if why := ApplicationProxyCannotAppear(w.ctx, c, w.app, nil, ""); !strings.Contains(why, `does not let those tags own ["tag:proxies"]`) {
			t.Errorf("ApplicationProxyCannotAppear without tags = %q, want the operator's proxy tags refused", why)
		}
		if why := ApplicationProxyCannotAppear(w.ctx, c, w.app, []string{"tag:k8s-operator"}, ""); why != "" {
			t.Errorf("ApplicationProxyCannotAppear = %q, want nothing", why)
		}
		if why := ApplicationProxyCannotAppear(w.ctx, c, "no-such-application", nil, ""); why != "" {
			t.Errorf("ApplicationProxyCannotAppear for an unreadable application = %q", why)
		}
	})
}

// putService creates a Tailscale Service as the operator does.
func (w *world) putService(name string) {
	w.t.Helper()
	r := httptest.NewRequestWithContext(w.ctx, http.MethodPut, "/tailscale/api/v2/tailnet/-/vip-services/"+name, strings.NewReader(`{"ports": ["tcp:443"]}`))
	r.SetBasicAuth(testAPIKey, "")
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		w.t.Fatalf("creating the Service %s: %d %s", name, rec.Code, rec.Body)
	}
}

func TestAwaitExposureService(t *testing.T) {
	t.Parallel()
	t.Run("there", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operatorWithClient(OperatorOAuthScopes, "")
		w.manifests(w.env, "proxies", proxyGroupValues("ingress", manifest.ProxyGroupIngress))
		w.putService("svc:billing")
		s, err := AwaitExposureService(w.ctx, w.clients(), w.tn, w.app, "ingress", "billing")
		if err != nil || s == nil || s.Name != "svc:billing" {
			t.Fatalf("AwaitExposureService = %+v, %v", s, err)
		}
	})
	t.Run("it appears after two polls", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operatorWithClient(OperatorOAuthScopes, "")
		w.manifests(w.env, "proxies", proxyGroupValues("ingress", manifest.ProxyGroupIngress))
		w.putService("svc:billing")
		w.Tailnet.Faults().Add(faults.Rule{Route: "GET /api/v2/tailnet/{tailnet}/vip-services/{name}", Status: http.StatusNotFound, Count: 2})
		s, err := AwaitExposureService(w.ctx, w.clients(), w.tn, w.app, "ingress", "billing")
		if err != nil || s == nil || s.Name != "svc:billing" {
			t.Fatalf("AwaitExposureService = %+v, %v; want the Service found at the third look", s, err)
		}
	})
	t.Run("the client lacks the scope", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		id := w.operatorWithClient([]string{"devices:core", "auth_keys"}, "")
		w.manifests(w.env, "proxies", proxyGroupValues("ingress", manifest.ProxyGroupIngress))
		_, err := AwaitExposureService(w.ctx, w.clients(), w.tn, w.app, "ingress", "billing")
		if err == nil || !strings.Contains(err.Error(), "with its OAuth client "+id+", which lacks the services scope") {
			t.Fatalf("AwaitExposureService = %v", err)
		}
	})
	t.Run("the ProxyGroup is of another type", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operatorWithClient(OperatorOAuthScopes, "")
		w.manifests(w.other, "proxies", proxyGroupValues("ingress", manifest.ProxyGroupEgress))
		_, err := AwaitExposureService(w.ctx, w.clients(), w.tn, w.app, "ingress", "billing")
		if err == nil || errors.Is(err, ErrTimedOut) || !strings.Contains(err.Error(), `the ProxyGroup ingress on cluster `+w.cluster+` is of type "egress", not "ingress"`) {
			t.Fatalf("AwaitExposureService = %v", err)
		}
	})
	t.Run("the lookup fails", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.operatorWithClient(OperatorOAuthScopes, "")
		w.manifests(w.env, "proxies", proxyGroupValues("ingress", manifest.ProxyGroupIngress))
		w.putService("svc:billing")
		w.Tailnet.Faults().Add(faults.Rule{Route: "GET /api/v2/tailnet/{tailnet}/vip-services/{name}", Status: http.StatusInternalServerError})
		s, err := AwaitExposureService(w.ctx, w.clients(), w.tn, w.app, "ingress", "billing")
		if err == nil || s != nil || !strings.HasPrefix(err.Error(), "looking for the Tailscale Service svc:billing: ") {
			t.Fatalf("AwaitExposureService = %+v, %v; want the lookup's error", s, err)
		}
	})
	t.Run("the deadline has passed", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.manifests(w.env, "proxies", proxyGroupValues("ingress", manifest.ProxyGroupIngress))
		ctx, cancel := context.WithCancel(w.ctx)
		cancel()
		_, err := AwaitExposureService(ctx, w.clients(), w.tn, w.app, "ingress", "billing")
		if !errors.Is(err, ErrTimedOut) || !strings.Contains(err.Error(), "waiting for the operator to create the Tailscale Service svc:billing") {
			t.Fatalf("AwaitExposureService = %v, want a timeout", err)
		}
	})
}
