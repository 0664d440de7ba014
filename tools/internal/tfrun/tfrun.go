// Package tfrun is what the tools that drive a real Terraform CLI against
// the sandbox share: the provider built into a work directory, a CLI
// configuration whose dev_overrides point at it, the sandbox served on
// loopback, and Terraform commands run in a root.
package tfrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Terraform returns path, or the terraform binary on PATH when path is "".
func Terraform(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	p, err := exec.LookPath("terraform")
	if err != nil {
		return "", errors.New("terraform is not on PATH; install Terraform >= 1.11 or pass -terraform")
	}
	return p, nil
}

// ModuleRoot finds the directory of go.mod from the working directory up;
// hint says how to run the tool when there is none.
func ModuleRoot(hint string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New(hint)
		}
		dir = parent
	}
}

// BuildProvider builds the provider of the module at root into
// bin/terraform-provider-qtail, with the build tags given.
func BuildProvider(ctx context.Context, root, bin string, tags ...string) error {
	args := []string{"build"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	args = append(args, "-o", filepath.Join(bin, "terraform-provider-qtail"), ".")
	build := exec.CommandContext(ctx, "go", args...)
	build.Dir = root
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the provider: %w", err)
	}
	return nil
}

// WriteCLIConfig writes a Terraform CLI configuration at path whose
// dev_overrides serve each provider source from its directory, and every
// other provider as usual.
func WriteCLIConfig(path string, overrides map[string]string) error {
	sources := make([]string, 0, len(overrides))
	for s := range overrides {
		sources = append(sources, s)
	}
	sort.Strings(sources)
	var b strings.Builder
	b.WriteString("provider_installation {\n  dev_overrides {\n")
	for _, s := range sources {
		fmt.Fprintf(&b, "    %q = %q\n", s, overrides[s])
	}
	b.WriteString("  }\n  direct {}\n}\n")
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// Serve serves h on a loopback port until stop is called; base is its URL,
// without a trailing slash.
func Serve(ctx context.Context, h http.Handler) (base string, stop func(), err error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// Env is the environment of Terraform commands that use the CLI
// configuration rc and the provider settings given, on top of the
// process's own.
func Env(rc string, settings map[string]string) []string {
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+settings[k])
	}
	return env
}

// Run runs terraform in dir and returns its exit code and its output; err
// is for a command that could not run at all.
func Run(ctx context.Context, tf, dir string, env []string, args ...string) (int, []byte, error) {
	cmd := exec.CommandContext(ctx, tf, append([]string{"-chdir=" + dir}, args...)...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), out.Bytes(), nil
	}
	return 0, out.Bytes(), err
}

// Tail returns the last lines of b.
func Tail(b []byte, lines int) string {
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// Calls reads the per-route call counters of the sandbox served at base.
func Calls(ctx context.Context, base string) (map[string]int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/_sandbox/calls", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /_sandbox/calls: %s: %s", resp.Status, body)
	}
	var out map[string]int
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("GET /_sandbox/calls: %w", err)
	}
	return out, nil
}
