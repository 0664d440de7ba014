package cluster

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

func TestProxyGroupProblem(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.manifests(w.env, "ingress", proxyGroupValues("web", manifest.ProxyGroupIngress))
	w.manifests(w.other, "egress", proxyGroupValues("out", manifest.ProxyGroupEgress))
	w.manifests(w.otherEnv, "elsewhere", proxyGroupValues("far", manifest.ProxyGroupIngress))
	for _, tc := range []struct {
		name, want, problem string
	}{
		{"web", manifest.ProxyGroupIngress, ""},
		{"out", manifest.ProxyGroupEgress, ""},
		{"out", manifest.ProxyGroupIngress, `the ProxyGroup out on cluster ` + w.cluster + ` is of type "egress", not "ingress"`},
		{"far", manifest.ProxyGroupIngress, "no Helm service of cluster " + w.cluster + " renders the ProxyGroup far (qtail read the values of all 2 of them)"},
	} {
		if got := ProxyGroupProblem(w.ctx, w.lookup(), tc.name, tc.want); !strings.HasPrefix(got, tc.problem) || (got == "") != (tc.problem == "") {
			t.Errorf("ProxyGroupProblem(%s, %s) = %q, want %q", tc.name, tc.want, got, tc.problem)
		}
	}

	// A service that qtail cannot read may render it.
	w.helm(w.env, "from-git", gitValues())
	if got := ProxyGroupProblem(w.ctx, w.lookup(), "far", manifest.ProxyGroupIngress); got != "" {
		t.Errorf("ProxyGroupProblem with an opaque service = %q, want nothing", got)
	}
	w.Qovery.Faults().Add(faults.Rule{Route: "GET /organization/{organizationId}/project", Status: http.StatusInternalServerError})
	if got := ProxyGroupProblem(w.ctx, w.lookup(), "out", manifest.ProxyGroupIngress); got != "" {
		t.Errorf("ProxyGroupProblem when the services cannot be listed = %q, want nothing", got)
	}
}

func (w *world) proxyGroupType(c *conn.Clients, name, envID, want string) diag.Diagnostics {
	var diags diag.Diagnostics
	CheckProxyGroupType(w.ctx, c, name, envID, want, &diags)
	return diags
}

// A ProxyGroup that the plan declares is checked against the plan on the
// same cluster; one it does not, against what the cluster's Helm services
// render.
func TestCheckProxyGroupType(t *testing.T) {
	t.Parallel()
	at := path.Root("proxy_group")
	t.Run("planned", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		c := w.clients()
		c.Planned().DeclareProxyGroup(w.other, "", "web", manifest.ProxyGroupEgress)
		c.Planned().DeclareProxyGroup(w.otherEnv, w.otherCluster, "far", manifest.ProxyGroupEgress)
		d := w.proxyGroupType(c, "web", w.env, manifest.ProxyGroupIngress)
		if len(d) != 1 || !d.HasError() || d[0].Summary() != "ProxyGroup Not of Type Ingress" || !isOn(d[0], at) ||
			!strings.Contains(d[0].Detail(), `declares the ProxyGroup "web" on cluster `+w.cluster+` (environment `+w.other+`) with type "egress"`) ||
			!strings.Contains(d[0].Detail(), "The operator serves an exposed Service only through a ProxyGroup of type \"ingress\"") {
			t.Errorf("%v, want the planned egress ProxyGroup refused", d)
		}
		if d := w.proxyGroupType(c, "web", w.env, manifest.ProxyGroupEgress); len(d) != 0 {
			t.Errorf("a ProxyGroup of the right type: %v", d)
		}
		// Declared on another cluster only: not this cluster's.
		if d := w.proxyGroupType(c, "far", w.env, manifest.ProxyGroupIngress); len(d) != 0 {
			t.Errorf("a ProxyGroup planned on another cluster: %v", d)
		}
		if d := w.proxyGroupType(c, "web", "no-such-environment", manifest.ProxyGroupIngress); len(d) != 1 || d.HasError() ||
			d[0].Summary() != "ProxyGroup Not Checked" || !strings.Contains(d[0].Detail(), "Make sure that the ProxyGroup web is of type ingress.") {
			t.Errorf("an unreadable environment: %v, want a warning", d)
		}
	})
	t.Run("rendered", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.manifests(w.env, "egress", proxyGroupValues("out", manifest.ProxyGroupEgress))
		c := w.clients()
		if d := w.proxyGroupType(c, "out", w.env, manifest.ProxyGroupEgress); len(d) != 0 {
			t.Errorf("a rendered ProxyGroup of the right type: %v", d)
		}
		d := w.proxyGroupType(c, "out", w.env, manifest.ProxyGroupIngress)
		if len(d) != 1 || d[0].Summary() != "ProxyGroup Not on the Cluster" || !isOn(d[0], at) ||
			!strings.Contains(d[0].Detail(), `In this plan, the ProxyGroup out on cluster `+w.cluster+` is of type "egress", not "ingress".`) {
			t.Errorf("%v, want the rendered egress ProxyGroup refused", d)
		}
		d = w.proxyGroupType(c, "missing", w.env, manifest.ProxyGroupEgress)
		if len(d) != 1 || !d.HasError() || !strings.Contains(d[0].Detail(), "renders the ProxyGroup missing") ||
			!strings.Contains(d[0].Detail(), "The operator sends an egress Service only through a ProxyGroup of type \"egress\"") {
			t.Errorf("%v, want a missing ProxyGroup refused", d)
		}
		if d := w.proxyGroupType(c, "missing", "no-such-environment", manifest.ProxyGroupEgress); len(d) != 0 {
			t.Errorf("an unreadable environment: %v, want nothing", d)
		}
		git := w.helm(w.env, "from-git", gitValues())
		d = w.proxyGroupType(c, "missing", w.env, manifest.ProxyGroupEgress)
		if len(d) != 1 || d.HasError() || d[0].Summary() != "ProxyGroup Not Checked" ||
			!strings.Contains(d[0].Detail(), `qtail cannot tell what "from-git" (`+git+`) render`) {
			t.Errorf("%v, want a warning that names the opaque service", d)
		}
	})
}
