// Package docscheck holds the checks that the generated docs and the
// examples work where users read and paste them: on the Terraform Registry,
// and in a fresh root module that pins qtail with a version constraint.
package docscheck

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// root is the repository's top folder.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// markdownLink matches the target of a Markdown link or image.
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// The Registry shows each page of docs/ on its own URL, so a relative link
// to another file leads nowhere there: links are absolute, or anchors in
// the same page.
func TestDocs_linksWorkOnTheRegistry(t *testing.T) {
	docs := filepath.Join(root(t), "docs")
	var bad []string
	err := filepath.WalkDir(docs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range markdownLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				rel, _ := filepath.Rel(docs, p)
				bad = append(bad, fmt.Sprintf("docs/%s:%d: %s", rel, i+1, target))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("links that do not work on the Terraform Registry (use https://registry.terraform.io/providers/qtail/qtail/latest/docs/...):\n%s",
			strings.Join(bad, "\n"))
	}
}

// chartVersion is the provider's version: the tailnet-manifests chart's,
// which follows it.
func chartVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), "examples", "charts", "tailnet-manifests", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^version:\s*(\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("Chart.yaml has no version")
	}
	return string(m[1])
}

// exampleRoots lists the folders of examples/ that are root modules or
// modules: every folder holding .tf files, except the chart and the test
// fixtures of modules.
func exampleRoots(t *testing.T) []string {
	t.Helper()
	ex := filepath.Join(root(t), "examples")
	seen := map[string]bool{}
	var dirs []string
	err := filepath.WalkDir(ex, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "tests" || d.Name() == "charts" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".tf") && !seen[filepath.Dir(p)] {
			seen[filepath.Dir(p)] = true
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

var qtailRequirement = regexp.MustCompile(`(?s)qtail\s*=\s*\{[^}]*source\s*=\s*"qtail/qtail"[^}]*version\s*=\s*"[^"]+"`)

// Every example, pasted into a fresh folder, pins qtail with a version
// constraint, installs the provider of this version from a local mirror
// (as from the Registry: no dev_overrides) and passes terraform validate.
func TestExamples_pinQtailAndValidate(t *testing.T) {
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal("terraform is not on PATH: the examples are validated with a real Terraform CLI")
	}
	version := chartVersion(t)
	mirror := t.TempDir()
	platform := runtime.GOOS + "_" + runtime.GOARCH
	bin := filepath.Join(mirror, "registry.terraform.io", "qtail", "qtail", version, platform, "terraform-provider-qtail_v"+version)
	build := exec.CommandContext(t.Context(), "go", "build", "-ldflags", "-X main.version="+version, "-o", bin, ".")
	build.Dir = root(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cli := filepath.Join(t.TempDir(), "terraformrc")
	conf := fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path    = %q\n    include = [\"registry.terraform.io/qtail/qtail\"]\n  }\n}\n", mirror)
	if err := os.WriteFile(cli, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ex := filepath.Join(root(t), "examples")
	for _, dir := range exampleRoots(t) {
		rel, _ := filepath.Rel(ex, dir)
		t.Run(rel, func(t *testing.T) {
			var all bytes.Buffer
			files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				all.Write(b)
			}
			if !qtailRequirement.Match(all.Bytes()) {
				t.Errorf("examples/%s declares no required_providers entry for qtail/qtail with a version constraint", rel)
			}
			// A copy, so that nothing is written into the repository; the
			// modules the example calls are found at the same relative
			// paths from the copy of examples/.
			work := filepath.Join(t.TempDir(), "examples")
			if err := os.CopyFS(work, os.DirFS(ex)); err != nil {
				t.Fatal(err)
			}
			wd := filepath.Join(work, rel)
			for _, args := range [][]string{{"init", "-backend=false", "-input=false", "-no-color"}, {"validate", "-no-color"}} {
				cmd := exec.CommandContext(t.Context(), tf, args...)
				cmd.Dir = wd
				cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+cli, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("terraform %s in examples/%s: %v\n%s", args[0], rel, err, out)
				}
			}
		})
	}
}
