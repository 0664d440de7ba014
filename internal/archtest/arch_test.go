package archtest

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/qtail/terraform-provider-qtail"

// Each rule fails on a deliberate violation, and only on it.
func TestViolations(t *testing.T) {
	t.Parallel()
	m := func(p string) string { return module + "/" + p }
	clean := []Package{
		{ImportPath: module, Imports: []string{m("internal/provider")}, Deps: []string{m("internal/provider"), m("internal/conn")}},
		{ImportPath: m("internal/policy"), Deps: []string{"github.com/tailscale/hujson", m("internal/batch"), m("internal/policyfile"), m("internal/retry")}},
		{ImportPath: m("internal/policyfile"), Deps: []string{"github.com/tailscale/hujson"}},
		{ImportPath: m("internal/policyfile/sub"), Imports: []string{m("internal/policyfile")}, Deps: []string{m("internal/policyfile")}},
		{ImportPath: m("internal/batch"), Deps: []string{"context", "sync", "time"}},
		{ImportPath: m("internal/fragment"), Deps: []string{m("internal/policy"), m("internal/policyfile"), "github.com/tailscale/hujson"}},
		{ImportPath: m("internal/service/operator"), Imports: []string{m("internal/cluster"), "github.com/hashicorp/terraform-plugin-framework/resource"}},
		{ImportPath: m("internal/acctest"), Imports: []string{m("internal/fake/sandbox")}, Deps: []string{m("internal/fake/sandbox")}},
		{ImportPath: m("tools/sandbox"), Deps: []string{m("internal/fake/sandbox")}},
		{ImportPath: m("internal/review"), Imports: []string{m("internal/policy"), m("internal/fragment"), "github.com/hashicorp/terraform-json"},
			Deps: []string{m("internal/policy"), m("internal/fragment"), m("internal/policyfile"), m("internal/retry"), m("internal/tailnet"), "github.com/hashicorp/terraform-json"}},
	}
	if v := Violations(module, clean); len(v) != 0 {
		t.Fatalf("violations in a clean tree: %q", v)
	}
	for _, tc := range []struct {
		name string
		pkg  Package
		want string
	}{
		{"a lower package on Terraform", Package{ImportPath: m("internal/tailnet"),
			Deps: []string{"github.com/hashicorp/terraform-plugin-framework/diag"}},
			"internal/tailnet depends on github.com/hashicorp/terraform-plugin-framework/diag: the lower packages know no Terraform"},
		{"a sub-package of a lower package on Terraform", Package{ImportPath: m("internal/policy/sub"),
			Deps: []string{"github.com/hashicorp/terraform-plugin-log/tflog"}},
			"internal/policy/sub depends on github.com/hashicorp/terraform-plugin-log/tflog"},
		{"the policy file editor on Terraform", Package{ImportPath: m("internal/policyfile"),
			Deps: []string{"github.com/hashicorp/terraform-plugin-framework/diag"}},
			"internal/policyfile depends on github.com/hashicorp/terraform-plugin-framework/diag: the lower packages know no Terraform"},
		{"the batching on Terraform", Package{ImportPath: m("internal/batch"),
			Deps: []string{"github.com/hashicorp/terraform-plugin-log/tflog"}},
			"internal/batch depends on github.com/hashicorp/terraform-plugin-log/tflog: the lower packages know no Terraform"},
		{"the policy file editor on the Store", Package{ImportPath: m("internal/policyfile"),
			Deps: []string{"github.com/tailscale/hujson", m("internal/policy")}},
			"internal/policyfile depends on " + module + "/internal/policy: internal/policyfile is a leaf that depends on no other package of the module"},
		{"the batching on a lower package", Package{ImportPath: m("internal/batch"),
			Deps: []string{m("internal/retry")}},
			"internal/batch depends on " + module + "/internal/retry: internal/batch is a leaf"},
		{"a sub-package of the editor on the batching", Package{ImportPath: m("internal/policyfile/sub"),
			Deps: []string{m("internal/policyfile"), m("internal/batch")}},
			"internal/policyfile/sub depends on " + module + "/internal/batch: internal/policyfile is a leaf"},
		{"the fragment descriptions on the framework", Package{ImportPath: m("internal/fragment"),
			Deps: []string{"github.com/hashicorp/terraform-plugin-framework/resource/schema"}},
			"internal/fragment depends on github.com/hashicorp/terraform-plugin-framework/resource/schema: the descriptions of resources are plain Go"},
		{"production code on a fake", Package{ImportPath: m("internal/cluster"), Deps: []string{m("internal/fake/qoveryapi")}},
			"internal/cluster depends on " + module + "/internal/fake/qoveryapi: production code links no test double"},
		{"the provider binary on acctest", Package{ImportPath: module, Deps: []string{m("internal/acctest")}},
			module + " depends on " + module + "/internal/acctest"},
		{"a family on another family", Package{ImportPath: m("internal/service/manifestservice"),
			Imports: []string{m("internal/service/operator")}},
			"internal/service/manifestservice imports " + module + "/internal/service/operator: a resource family imports no other family"},
		{"the plan review on the Terraform plugin framework", Package{ImportPath: m("internal/review"),
			Deps: []string{m("internal/policy"), "github.com/hashicorp/terraform-plugin-framework/diag"}},
			"internal/review depends on github.com/hashicorp/terraform-plugin-framework/diag: the plan review reads plans through terraform-json"},
		{"the plan review on a resource family", Package{ImportPath: m("internal/review"),
			Imports: []string{m("internal/service/policyfragment")}, Deps: []string{m("internal/service/policyfragment"), m("internal/policy")}},
			"internal/review depends on " + module + "/internal/service/policyfragment: the plan review builds on the lower packages and internal/fragment alone"},
		{"the plan review on a package the families share", Package{ImportPath: m("internal/review/sub"),
			Deps: []string{m("internal/review"), m("internal/planned")}},
			"internal/review/sub depends on " + module + "/internal/planned: the plan review builds on the lower packages and internal/fragment alone"},
	} {
		v := Violations(module, append(slices.Clone(clean), tc.pkg))
		if len(v) != 1 || !strings.Contains(v[0], tc.want) {
			t.Errorf("%s: violations %q, want one saying %q", tc.name, v, tc.want)
		}
	}
}

// The repository keeps the rules.
func TestRepositoryImports(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-json=ImportPath,Imports,Deps", module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 || !slices.ContainsFunc(pkgs, func(p Package) bool { return p.ImportPath == module+"/internal/service/operator" }) {
		t.Fatalf("go list found %d packages, not the module's", len(pkgs))
	}
	for _, v := range Violations(module, pkgs) {
		t.Error(v)
	}
}
