package cluster

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

func TestTagOwnerResourceName(t *testing.T) {
	t.Parallel()
	for tag, want := range map[string]string{
		"tag:k8s-web":     "k8s_web",
		"tag:K8s.Web_1":   "k8s_web_1",
		"k8s":             "k8s",
		"tag:prod:db-eu1": "prod_db_eu1",
		// The ends of the ranges of letters and digits, and the
		// characters next to them.
		"tag:az09":   "az09",
		"tag:`{/:@[": "______",
	} {
		if got := TagOwnerResourceName(tag); got != want {
			t.Errorf("TagOwnerResourceName(%q) = %q, want %q", tag, got, want)
		}
	}
}

func TestUnownedTags(t *testing.T) {
	t.Parallel()
	doc, err := policyfile.Parse([]byte(`{"tagOwners": {
		"tag:k8s-operator": [],
		"tag:k8s": ["tag:k8s-operator"],
		"tag:db": ["group:dba"],
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := unownedTags(doc, []string{"tag:k8s-operator", "tag:k8s", "tag:db", "tag:web"}, []string{"tag:k8s-operator"})
	if !slices.Equal(got, []string{"tag:db", "tag:web"}) {
		t.Errorf("unownedTags = %v, want the tag owned by another and the undeclared one", got)
	}
}

// tagsCheck runs CheckOperatorOwnsTags for tags on the first cluster.
func (w *world) tagsCheck(c *conn.Clients, check TagsCheck) diag.Diagnostics {
	var diags diag.Diagnostics
	CheckOperatorOwnsTags(w.ctx, c, NewLookup(c.QoveryOrNil(), w.environment(w.env)), check, &diags)
	return diags
}

func TestCheckOperatorOwnsTags(t *testing.T) {
	t.Parallel()
	proxy := TagsCheck{At: path.Root("tags"), Device: "proxy", Resource: "exposure"}
	withTags := func(c TagsCheck, tags ...string) TagsCheck { c.Tags = tags; return c }
	operator := func(w *world) string {
		return w.operator(w.env, w.operatorValues(manifest.OperatorValues{DefaultTags: []string{"tag:k8s-operator"}}, nil))
	}

	t.Run("nothing to check", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		operator(w)
		if d := w.tagsCheck(w.clients(), proxy); len(d) != 0 {
			t.Errorf("no tags: %v", d)
		}
		c := conn.New("test", conn.Options{})
		c.ConfigureQovery(conn.Setting{Value: testToken}, conn.Setting{Value: "http://127.0.0.1:1/qovery"})
		if d := w.tagsCheck(c, withTags(proxy, "tag:web")); len(d) != 0 {
			t.Errorf("no Tailscale client: %v", d)
		}
	})
	t.Run("no operator", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		if d := w.tagsCheck(w.clients(), withTags(proxy, "tag:web")); len(d) != 0 {
			t.Errorf("a cluster without an operator: %v, want nothing (the plan says so on its own)", d)
		}
	})
	t.Run("undeclared", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		helm := operator(w)
		w.tagOwners(map[string][]string{"tag:k8s-operator": {}, "tag:k8s": {"tag:k8s-operator"}})
		d := w.tagsCheck(w.clients(), withTags(proxy, "tag:k8s", "tag:k8s-web"))
		if len(d) != 1 || !d.HasError() || d[0].Summary() != "Tag Not Owned by the Operator" {
			t.Fatalf("diagnostics %v, want one error for tag:k8s-web", d)
		}
		if !isOn(d[0], path.Root("tags")) {
			t.Errorf("error %v, want it on tags", d[0])
		}
		if strings.Contains(d[0].Detail(), "did you mean") {
			t.Errorf("%q suggests a tag, but tagOwners declares none near tag:k8s-web", d[0].Detail())
		}
		for _, want := range []string{
			"tag:k8s-web is not declared in tagOwners, so the operator's tag tag:k8s-operator does not own it",
			"the operator Helm service tailscale-operator (" + helm + ")",
			"The operator mints the proxy's auth key with its OAuth client",
			"no proxy device would appear",
			"resource \"qtail_tag_owner\" \"k8s_web\" {\n    tag    = \"tag:k8s-web\"\n    owners = [\"tag:k8s-operator\"]\n  }",
			"tags = [qtail_tag_owner.k8s_web.tag]",
		} {
			if !strings.Contains(d[0].Detail(), want) {
				t.Errorf("%q does not say %q", d[0].Detail(), want)
			}
		}
	})
	t.Run("a typo of a declared tag", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		operator(w)
		w.tagOwners(map[string][]string{"tag:k8s-operator": {}, "tag:k8s-billing-us-east-1": {"tag:k8s-operator"}})
		d := w.tagsCheck(w.clients(), withTags(proxy, "tag:k8s-billing-us-east1"))
		if len(d) != 1 || !strings.Contains(d[0].Detail(), "tag:k8s-billing-us-east1 is not declared in tagOwners, so the operator's tag "+
			"tag:k8s-operator does not own it; did you mean tag:k8s-billing-us-east-1, which tagOwners declares?") ||
			!strings.Contains(d[0].Detail(), "If the tag is new, declare it with a qtail_tag_owner in the configuration that manages this tailnet's tag owners") {
			t.Errorf("diagnostics %v", d)
		}
	})
	t.Run("owned by another", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		operator(w)
		w.tagOwners(map[string][]string{"tag:k8s-operator": {}, "tag:dba": {}, "tag:db": {"tag:dba", "tag:k8s"}, "tag:k8s": {}})
		d := w.tagsCheck(w.clients(), TagsCheck{Tags: []string{"tag:db"}, At: path.Root("tags"), Device: "connector", Resource: "connector", Replicas: true})
		if len(d) != 1 || !strings.Contains(d[0].Detail(), "tag:db is owned by [tag:dba, tag:k8s] in tagOwners, not by the operator's tag tag:k8s-operator") ||
			!strings.Contains(d[0].Detail(), "the connector's auth keys") || !strings.Contains(d[0].Detail(), "planned before this connector") {
			t.Errorf("diagnostics %v", d)
		}
	})
	t.Run("owned", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		operator(w)
		w.tagOwners(map[string][]string{"tag:k8s-operator": {}, "tag:web": {"tag:k8s-operator"}})
		c := w.clients()
		if d := w.tagsCheck(c, withTags(proxy, "tag:k8s-operator", "tag:web")); len(d) != 0 {
			t.Errorf("tags the operator owns: %v", d)
		}
		if !OperatorCanApply(w.ctx, c, NewLookup(c.QoveryOrNil(), w.environment(w.env)), []string{"tag:web"}) {
			t.Error("OperatorCanApply = false for a tag the operator owns")
		}
		if OperatorCanApply(w.ctx, c, NewLookup(c.QoveryOrNil(), w.environment(w.env)), []string{"tag:web", "tag:db"}) {
			t.Error("OperatorCanApply = true for an undeclared tag")
		}
	})
	t.Run("the client's tags", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		helm := operator(w)
		id, _ := w.Tailnet.SeedOAuthClient("", "", OperatorOAuthScopes, []string{"tag:ops"})
		w.clientIDVariable(helm, id, false)
		w.tagOwners(map[string][]string{"tag:ops": {}, "tag:k8s-operator": {}, "tag:web": {"tag:k8s-operator"}})
		d := w.tagsCheck(w.clients(), withTags(proxy, "tag:web"))
		if len(d) != 1 || !strings.Contains(d[0].Detail(), "tag:web is owned by [tag:k8s-operator] in tagOwners, not by the OAuth client's tag tag:ops") ||
			!strings.Contains(d[0].Detail(), "its OAuth client "+id+", tagged [\"tag:ops\"]") || !strings.Contains(d[0].Detail(), `owners = ["tag:ops"]`) {
			t.Errorf("diagnostics %v", d)
		}
	})
	t.Run("lookup fails", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		operator(w)
		w.Qovery.Faults().Add(faults.Rule{Route: "GET /organization/{organizationId}/project", Status: http.StatusInternalServerError})
		d := w.tagsCheck(w.clients(), withTags(proxy, "tag:web"))
		if len(d) != 2 || d[0].Severity() != diag.SeverityWarning || d[0].Summary() != "Operator Lookup Failed" ||
			!strings.Contains(d[0].Detail(), "checks the tags against the default operator tag tag:k8s-operator") ||
			d[1].Summary() != "Tag Not Owned by the Operator" {
			t.Errorf("diagnostics %v, want the lookup's warning, then the check against the default tag", d)
		}
	})
	t.Run("policy unreadable", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		operator(w)
		w.Tailnet.Faults().Add(faults.Rule{Route: "GET /api/v2/tailnet/{tailnet}/acl", Status: http.StatusForbidden, Count: 2})
		c := w.clients()
		d := w.tagsCheck(c, withTags(proxy, "tag:web"))
		if len(d) == 0 || d.HasError() || d[0].Summary() != "Tags Not Checked" {
			t.Errorf("diagnostics %v, want a warning that the tags are not checked", d)
		}
		if OperatorCanApply(w.ctx, c, NewLookup(c.QoveryOrNil(), w.environment(w.env)), nil) {
			t.Error("OperatorCanApply = true without the policy")
		}
	})
}
