package exampletest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// make install-local, twice, as after a git pull: each build is a newer
// plain version, which `version = "~> 0.1"` accepts; a root that locked the
// previous build is told to run terraform init -upgrade, which takes the
// new one, and ROOTS runs it.
func TestInstallLocal_rebuildsAreNewVersions(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	plugins := filepath.Join(home, ".terraform.d", "plugins")
	root := filepath.Join(tmp, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	config := "terraform {\n  required_providers {\n    qtail = {\n      source  = \"qtail/qtail\"\n      version = \"~> 0.1\"\n    }\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(root, "main.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	var base []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "TF_") && !strings.HasPrefix(name, "GO") && name != "QTAIL_PLUGIN_DIR" && name != "HOME" && name != "PATH" {
			base = append(base, kv)
		}
	}
	// Terraform looks for its implicit local mirror under HOME, and
	// install-local installs under HOME: a HOME of the test's own, with the
	// Go caches of the caller.
	goEnv, err := exec.CommandContext(t.Context(), "go", "env", "GOPATH", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	dirs := strings.Fields(string(goEnv))
	if len(dirs) != 3 {
		t.Fatalf("go env: %q", goEnv)
	}
	env := append(base, "HOME="+home, "GOPATH="+dirs[0], "GOCACHE="+dirs[1], "GOMODCACHE="+dirs[2],
		"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1",
		"PATH="+filepath.Dir(terraformBinary(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	run := func(env []string, name string, args ...string) (string, error) {
		cmd := exec.CommandContext(t.Context(), name, args...)
		cmd.Dir = repoRoot(t)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	install := func(version string, roots ...string) string {
		t.Helper()
		out, err := run(env, "bash", append([]string{"scripts/install-local.sh", version}, roots...)...)
		if err != nil {
			t.Fatalf("install-local %s: %v\n%s", version, err, out)
		}
		return out
	}
	init := func(args ...string) (string, error) {
		return run(env, terraformBinary(t), append([]string{"-chdir=" + root, "init", "-input=false", "-no-color"}, args...)...)
	}
	locked := func() string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, ".terraform.lock.hcl"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	platform := runtime.GOOS + "_" + runtime.GOARCH

	install("0.1.20260101000000")
	if out, err := init(); err != nil {
		t.Fatalf("terraform init after the first install-local: %v\n%s", err, out)
	}
	if l := locked(); !strings.Contains(l, `version     = "0.1.20260101000000"`) {
		t.Fatalf("the lock file does not hold the first build:\n%s", l)
	}

	// A rebuild: a newer version, the previous build removed, and the
	// message that says what to run.
	out := install("0.1.20260101000100")
	if !strings.Contains(out, "terraform init -upgrade") {
		t.Errorf("install-local does not say to run terraform init -upgrade:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(plugins, "registry.terraform.io", "qtail", "qtail", "0.1.20260101000000")); !os.IsNotExist(err) {
		t.Errorf("the previous local build is still installed (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(plugins, "registry.terraform.io", "qtail", "qtail", "0.1.20260101000100", platform, "terraform-provider-qtail_v0.1.20260101000100")); err != nil {
		t.Errorf("the new build is not installed: %v", err)
	}
	if out, err := init(); err == nil || !strings.Contains(strings.Join(strings.Fields(out), " "), "the previously-selected version 0.1.20260101000000 is no longer available") {
		t.Errorf("a plain terraform init after a rebuild: %v, want the error that install-local names:\n%s", err, out)
	}
	if out, err := init("-upgrade"); err != nil {
		t.Fatalf("terraform init -upgrade after a rebuild: %v\n%s", err, out)
	}
	if l := locked(); !strings.Contains(l, `version     = "0.1.20260101000100"`) {
		t.Fatalf("terraform init -upgrade did not lock the rebuild:\n%s", l)
	}

	// ROOTS: install-local runs terraform init -upgrade itself.
	install("0.1.20260101000200", root)
	if l := locked(); !strings.Contains(l, `version     = "0.1.20260101000200"`) {
		t.Fatalf("make install-local ROOTS=... did not lock the rebuild:\n%s", l)
	}
	if out, err := init("-lockfile=readonly"); err != nil {
		t.Errorf("terraform init -lockfile=readonly after install-local ROOTS=...: %v\n%s", err, out)
	}
}
