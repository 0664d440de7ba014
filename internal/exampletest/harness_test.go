package exampletest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
)

// repoRoot is the repository's root, found from this file's location.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// terraformBinary is the Terraform CLI the tests drive: TF_ACC_TERRAFORM_PATH
// (make test sets it), else terraform on PATH. Without one the tests fail:
// they are about what Terraform does with the examples.
func terraformBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p
	}
	p, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal("terraform was not found on PATH; the example tests drive a real Terraform CLI (>= 1.11)")
	}
	return p
}

var provider struct {
	once sync.Once
	// dir is made by TestMain and removed after every test ran.
	dir string
	err error
}

// providerDir builds the provider binary from this tree, once per test
// binary, into a directory that the dev_overrides of every Terraform run
// point at.
func providerDir(t testing.TB) string {
	t.Helper()
	provider.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(provider.dir, "terraform-provider-qtail"), ".")
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			provider.err = fmt.Errorf("go build of the provider: %w\n%s", err, out)
		}
	})
	if provider.err != nil {
		t.Fatal(provider.err)
	}
	return provider.dir
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "qtail-exampletest-provider-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	provider.dir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// world is a sandbox served on loopback for one test.
type world struct {
	*sandbox.World
	url string
}

// newWorld starts a sandbox whose deployments end at once, so that the
// provider finds them over at its first status read.
func newWorld(t testing.TB, policy string) *world {
	t.Helper()
	opts := sandbox.Options{}
	if policy != "" {
		opts.InitialPolicy = []byte(policy)
	}
	w, err := sandbox.New(opts)
	if err != nil {
		t.Fatalf("starting the sandbox: %v", err)
	}
	srv := httptest.NewServer(w.Handler())
	t.Cleanup(srv.Close)
	return &world{World: w, url: srv.URL}
}

// workspace is a copy of examples/modules, examples/multi-region,
// examples/quickstart and examples/homelab, with the layout that their
// relative module sources expect, and the Terraform settings of one test.
type workspace struct {
	t        testing.TB
	examples string
	bin      string
	env      []string
}

// newWorkspace copies the examples a test runs into a temporary directory
// and prepares the environment of its Terraform processes: the provider
// from this tree through dev_overrides and no other installation method
// (nothing is downloaded), the sandbox's credentials, and its seeded IDs in
// TF_VAR_sandbox.
func newWorkspace(t testing.TB, w *world) *workspace {
	t.Helper()
	tmp := t.TempDir()
	examples := filepath.Join(tmp, "examples")
	for _, dir := range []string{"modules", "multi-region", "quickstart", "homelab"} {
		if err := os.CopyFS(filepath.Join(examples, dir), os.DirFS(filepath.Join(repoRoot(t), "examples", dir))); err != nil {
			t.Fatalf("copying examples/%s: %v", dir, err)
		}
	}
	mirror := filepath.Join(tmp, "no-providers")
	if err := os.Mkdir(mirror, 0o755); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(tmp, "terraformrc")
	config := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n  filesystem_mirror {\n    path = %q\n  }\n}\n",
		"qtail/qtail", providerDir(t), mirror)
	if err := os.WriteFile(rc, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	seed, err := json.Marshal(w.Seed())
	if err != nil {
		t.Fatal(err)
	}
	env := []string{
		"TF_CLI_CONFIG_FILE=" + rc,
		"TF_IN_AUTOMATION=1",
		"TF_INPUT=0",
		"CHECKPOINT_DISABLE=1",
		"TF_VAR_sandbox=" + string(seed),
	}
	for k, v := range w.Env(w.url) {
		env = append(env, k+"="+v)
	}
	// The rest of the environment, without what would point Terraform or
	// the provider elsewhere.
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "TF_") || strings.HasPrefix(name, "QOVERY_") || strings.HasPrefix(name, "TAILSCALE_") {
			continue
		}
		env = append(env, kv)
	}
	return &workspace{t: t, examples: examples, bin: terraformBinary(t), env: env}
}

// root is one Terraform root (or module folder) of a workspace.
type root struct {
	ws  *workspace
	dir string
	env []string
}

// root returns the folder rel of the copied examples, with extra
// environment variables for its Terraform processes.
func (ws *workspace) root(rel string, env ...string) *root {
	return &root{ws: ws, dir: filepath.Join(ws.examples, filepath.FromSlash(rel)), env: env}
}

// run runs terraform with args in the root and returns its combined
// output and exit code.
func (r *root) run(ctx context.Context, args ...string) (string, int, error) {
	cmd := exec.CommandContext(ctx, r.ws.bin, args...)
	cmd.Dir = r.dir
	cmd.Env = slices.Concat(r.ws.env, r.env)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), exit.ExitCode(), nil
	}
	if err != nil {
		return out.String(), -1, fmt.Errorf("terraform %s in %s: %w", strings.Join(args, " "), r.dir, err)
	}
	return out.String(), 0, nil
}

// must runs terraform with args and fails the test, with Terraform's
// output, unless it exits 0.
func (r *root) must(args ...string) string {
	r.ws.t.Helper()
	out, code, err := r.run(r.ws.t.Context(), args...)
	if err != nil || code != 0 {
		r.ws.t.Fatalf("terraform %s in %s exited %d (%v):\n%s", strings.Join(args, " "), r.rel(), code, err, out)
	}
	return out
}

func (r *root) rel() string {
	rel, err := filepath.Rel(r.ws.examples, r.dir)
	if err != nil {
		return r.dir
	}
	return "examples/" + filepath.ToSlash(rel)
}

// get installs the root's modules (local paths: nothing is downloaded).
// terraform init is not needed with dev_overrides, and would look for the
// provider in a registry.
func (r *root) get() { r.must("get", "-no-color") }

func (r *root) apply() {
	r.must("apply", "-auto-approve", "-input=false", "-no-color", "-compact-warnings")
}

func (r *root) destroy() {
	r.must("destroy", "-auto-approve", "-input=false", "-no-color", "-compact-warnings")
}

// emptyPlan fails the test unless a plan of the root has no change.
func (r *root) emptyPlan() {
	r.ws.t.Helper()
	if out, err := r.tryPlanEmpty(r.ws.t.Context()); err != nil {
		r.ws.t.Errorf("%v:\n%s", err, out)
	}
}

// outputJSON returns the value of the root's output name as JSON.
func (r *root) outputJSON(name string) string {
	return strings.TrimSpace(r.must("output", "-json", "-no-color", name))
}

// output decodes the root's output name into v.
func (r *root) output(name string, v any) {
	r.ws.t.Helper()
	if err := json.Unmarshal([]byte(r.outputJSON(name)), v); err != nil {
		r.ws.t.Fatalf("output %s of %s: %v", name, r.rel(), err)
	}
}
