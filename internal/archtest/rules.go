// Package archtest checks which way qtail's imports point (see DESIGN.md):
//
//   - the lower packages (internal/qovery, tailnet, policy, policyfile,
//     batch, manifest, retry) know no Terraform: they import no
//     terraform-plugin-* module;
//   - the leaves (internal/policyfile, the policy file editor,
//     internal/batch, the batching of Terraform's waves, and
//     internal/tfwire, the codec of the protocol's values) depend on no
//     other package of the module;
//   - the descriptions of the fragment resources (internal/fragment) are
//     plain Go: they import no terraform-plugin-* module either;
//   - the provider links no test double: no production package depends on
//     internal/fake/... or internal/acctest;
//   - a resource family (internal/service/NAME) imports no other family:
//     what two families share lives in conn, planned, cluster or tfx;
//   - the plan review (internal/review, the binary's review command, which
//     reads saved plans through terraform-json) stands on the lower
//     packages and the plain descriptions alone: it depends on no
//     terraform-plugin-* module and on no other qtail package (no family,
//     no provider, conn, cluster, planned or tfx).
//
// The rules are a function over the output of go list, tested on
// synthetic violations and run on the repository.
package archtest

import (
	"fmt"
	"slices"
	"strings"
)

// Package is what the rules read of one package listed by go list -json.
type Package struct {
	ImportPath string
	// Imports are the packages it imports, Deps every package it depends
	// on, directly or not (test files excluded).
	Imports []string
	Deps    []string
}

// lowerPackages are the packages that know no Terraform, relative to the
// module.
var lowerPackages = []string{"internal/qovery", "internal/tailnet", "internal/policy", "internal/policyfile", "internal/batch", "internal/manifest", "internal/retry"}

// leafPackages are the packages that depend on no other package of the
// module, relative to it.
var leafPackages = []string{"internal/policyfile", "internal/batch", "internal/tfwire"}

// plainPackages describe Terraform resources in plain Go, without the
// plugin modules, relative to the module.
var plainPackages = []string{"internal/fragment"}

// planReviewers are the production packages that read saved plans beside
// the provider, on the lower packages and the plain descriptions alone.
var planReviewers = []string{"internal/review"}

// reviewBase are the packages the plan review may build on.
var reviewBase = append(slices.Clone(lowerPackages), plainPackages...)

// testOnly are the trees that only tests and the sandbox tools may use.
var testOnly = []string{"internal/fake", "internal/acctest"}

// terraformModules is the prefix of the Terraform plugin modules.
const terraformModules = "github.com/hashicorp/terraform-plugin-"

// Violations returns, sorted, one sentence per import of pkgs that breaks
// the rules of the module whose path is module.
func Violations(module string, pkgs []Package) []string {
	under := func(path, dir string) bool {
		p := module + "/" + dir
		return path == p || strings.HasPrefix(path, p+"/")
	}
	family := func(path string) string {
		rest, ok := strings.CutPrefix(path, module+"/internal/service/")
		if !ok {
			return ""
		}
		name, _, _ := strings.Cut(rest, "/")
		return name
	}
	var out []string
	for _, p := range pkgs {
		for _, rule := range []struct {
			dirs []string
			why  string
		}{{lowerPackages, "the lower packages know no Terraform"}, {plainPackages, "the descriptions of resources are plain Go"}} {
			for _, dir := range rule.dirs {
				if !under(p.ImportPath, dir) {
					continue
				}
				for _, d := range p.Deps {
					if strings.HasPrefix(d, terraformModules) {
						out = append(out, fmt.Sprintf("%s depends on %s: %s", p.ImportPath, d, rule.why))
					}
				}
			}
		}
		for _, leaf := range leafPackages {
			if !under(p.ImportPath, leaf) {
				continue
			}
			for _, d := range p.Deps {
				if strings.HasPrefix(d, module+"/") && !under(d, leaf) {
					out = append(out, fmt.Sprintf("%s depends on %s: %s is a leaf that depends on no other package of the module", p.ImportPath, d, leaf))
				}
			}
		}
		production := !slices.ContainsFunc(testOnly, func(dir string) bool { return under(p.ImportPath, dir) }) &&
			!under(p.ImportPath, "internal/archtest") && !under(p.ImportPath, "tools")
		if production {
			for _, d := range p.Deps {
				for _, dir := range testOnly {
					if under(d, dir) {
						out = append(out, fmt.Sprintf("%s depends on %s: production code links no test double", p.ImportPath, d))
					}
				}
			}
		}
		for _, reviewer := range planReviewers {
			if !under(p.ImportPath, reviewer) {
				continue
			}
			for _, d := range p.Deps {
				ours := d == module || strings.HasPrefix(d, module+"/")
				switch {
				case strings.HasPrefix(d, terraformModules):
					out = append(out, fmt.Sprintf("%s depends on %s: the plan review reads plans through terraform-json "+
						"and knows no Terraform plugin", p.ImportPath, d))
				case ours && !under(d, reviewer) && !slices.ContainsFunc(reviewBase, func(dir string) bool { return under(d, dir) }):
					out = append(out, fmt.Sprintf("%s depends on %s: the plan review builds on the lower packages and internal/fragment alone", p.ImportPath, d))
				}
			}
		}
		if f := family(p.ImportPath); f != "" {
			for _, imp := range p.Imports {
				if g := family(imp); g != "" && g != f {
					out = append(out, fmt.Sprintf("%s imports %s: a resource family imports no other family; "+
						"move what they share to conn, planned, cluster or tfx", p.ImportPath, imp))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
