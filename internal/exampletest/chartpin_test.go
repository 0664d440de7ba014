package exampletest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

// The resources that deploy the tailnet-manifests chart.
var manifestResources = map[string]bool{"qtail_connector": true, "qtail_proxy_group": true, "qtail_egress_service": true}

// Every example and module that deploys a connector, a ProxyGroup or an
// egress Service takes the tailnet-manifests chart from qtail's Helm
// repository, pinned to the version this tree releases (the version in the
// chart's Chart.yaml, see internal/manifest), never from a Git branch.
func TestExamples_pinTheManifestsChart(t *testing.T) {
	examples := filepath.Join(repoRoot(t), "examples")
	dirs := map[string][]*hclsyntax.Body{}
	err := filepath.WalkDir(examples, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || filepath.Ext(p) != ".tf" {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, diags := hclsyntax.ParseConfig(src, p, hcl.InitialPos)
		if diags.HasErrors() {
			t.Errorf("%s does not parse: %s", p, diags.Error())
			return nil
		}
		body, ok := f.Body.(*hclsyntax.Body)
		if !ok {
			t.Errorf("%s: the native syntax parser returned a %T", p, f.Body)
			return nil
		}
		dirs[filepath.Dir(p)] = append(dirs[filepath.Dir(p)], body)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pins := 0
	for dir, bodies := range dirs {
		m := moduleOf(bodies)
		rel, _ := filepath.Rel(repoRoot(t), dir)
		for _, r := range m.resources {
			if r.Labels[0] == "qtail_helm_repository" {
				if a, ok := r.Body.Attributes["url"]; ok {
					if url, _ := m.str(a.Expr); strings.Contains(url, "qtail") && url != manifest.ManifestsChartRepositoryURL {
						t.Errorf("%s: qtail_helm_repository.%s has url %q, want qtail's Helm repository %s",
							rel, r.Labels[1], url, manifest.ManifestsChartRepositoryURL)
					}
				}
			}
			if !manifestResources[r.Labels[0]] {
				continue
			}
			where := rel + ": " + r.Labels[0] + "." + r.Labels[1]
			chart, ok := r.Body.Attributes["chart"]
			if !ok {
				t.Errorf("%s has no chart", where)
				continue
			}
			obj := m.object(chart.Expr)
			if obj == nil {
				t.Errorf("%s: chart is not an object this test can read", where)
				continue
			}
			if _, ok := obj["git_repository"]; ok {
				t.Errorf("%s takes the chart from a Git repository; take it from qtail's Helm repository (%s), pinned to %s",
					where, manifest.ManifestsChartRepositoryURL, manifest.ManifestsChartVersion)
				continue
			}
			helm := m.object(obj["helm_repository"])
			if helm == nil {
				t.Errorf("%s: chart has no helm_repository object", where)
				continue
			}
			if v, ok := m.str(helm["chart_version"]); !ok || v != manifest.ManifestsChartVersion {
				t.Errorf("%s pins the tailnet-manifests chart at %q, want %s (examples/charts/tailnet-manifests/Chart.yaml)",
					where, v, manifest.ManifestsChartVersion)
			}
			if name, ok := helm["chart_name"]; ok {
				if v, _ := m.str(name); v != "tailnet-manifests" {
					t.Errorf("%s: chart_name is %q, want tailnet-manifests", where, v)
				}
			}
			if url, ok := m.repositoryURL(helm["repository_id"]); ok && url != manifest.ManifestsChartRepositoryURL {
				t.Errorf("%s takes the chart from the Helm repository %s, want %s", where, url, manifest.ManifestsChartRepositoryURL)
			}
			pins++
		}
	}
	// examples/homelab, the connector's, the ProxyGroup's (three) and the
	// egress Service's (two) resource examples, the region module's two.
	if pins < 9 {
		t.Errorf("found %d pins of the tailnet-manifests chart in examples/, want at least 9: the test no longer reads them", pins)
	}
}

// module is what the test reads of the .tf files of one folder.
type module struct {
	resources []*hclsyntax.Block
	locals    map[string]hclsyntax.Expression
	defaults  map[string]hclsyntax.Expression
}

func moduleOf(bodies []*hclsyntax.Body) *module {
	m := &module{locals: map[string]hclsyntax.Expression{}, defaults: map[string]hclsyntax.Expression{}}
	for _, b := range bodies {
		for _, blk := range b.Blocks {
			switch blk.Type {
			case "resource":
				m.resources = append(m.resources, blk)
			case "locals":
				for name, a := range blk.Body.Attributes {
					m.locals[name] = a.Expr
				}
			case "variable":
				if a, ok := blk.Body.Attributes["default"]; ok {
					m.defaults[blk.Labels[0]] = a.Expr
				}
			}
		}
	}
	return m
}

// resolve follows local.NAME and var.NAME (to its default) references.
func (m *module) resolve(e hclsyntax.Expression) hclsyntax.Expression {
	for range 8 {
		s, ok := e.(*hclsyntax.ScopeTraversalExpr)
		if !ok || len(s.Traversal) != 2 {
			return e
		}
		attr, ok := s.Traversal[1].(hcl.TraverseAttr)
		if !ok {
			return e
		}
		var next hclsyntax.Expression
		switch s.Traversal.RootName() {
		case "local":
			next = m.locals[attr.Name]
		case "var":
			next = m.defaults[attr.Name]
		}
		if next == nil {
			return e
		}
		e = next
	}
	return e
}

// object returns the items of an object constructor, by key.
func (m *module) object(e hclsyntax.Expression) map[string]hclsyntax.Expression {
	if e == nil {
		return nil
	}
	o, ok := m.resolve(e).(*hclsyntax.ObjectConsExpr)
	if !ok {
		return nil
	}
	items := map[string]hclsyntax.Expression{}
	for _, it := range o.Items {
		k, diags := it.KeyExpr.Value(nil)
		if diags.HasErrors() || k.Type() != cty.String {
			continue
		}
		items[k.AsString()] = it.ValueExpr
	}
	return items
}

// str returns the value of a constant string expression.
func (m *module) str(e hclsyntax.Expression) (string, bool) {
	if e == nil {
		return "", false
	}
	v, diags := m.resolve(e).Value(nil)
	if diags.HasErrors() || v.Type() != cty.String || v.IsNull() {
		return "", false
	}
	return v.AsString(), true
}

// repositoryURL returns the url of the qtail_helm_repository that
// repository_id refers to, when it is one of the same folder.
func (m *module) repositoryURL(e hclsyntax.Expression) (string, bool) {
	s, ok := e.(*hclsyntax.ScopeTraversalExpr)
	if !ok || s.Traversal.RootName() != "qtail_helm_repository" || len(s.Traversal) < 2 {
		return "", false
	}
	name, ok := s.Traversal[1].(hcl.TraverseAttr)
	if !ok {
		return "", false
	}
	for _, r := range m.resources {
		if r.Labels[0] == "qtail_helm_repository" && r.Labels[1] == name.Name {
			if a, ok := r.Body.Attributes["url"]; ok {
				return m.str(a.Expr)
			}
			return "", true
		}
	}
	return "", false
}
