package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
)

// Standard output holds only export lines, so that `make sandbox >
// sandbox.env; source sandbox.env` runs nothing else; -env-file gets the
// same lines.
func TestAnnounce_stdoutIsOnlyExports(t *testing.T) {
	world, err := sandbox.New(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(t.TempDir(), "sandbox.env")
	var stdout, stderr bytes.Buffer
	if err := announce(&stdout, &stderr, world, "http://127.0.0.1:1", "", envFile); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) < 10 {
		t.Fatalf("stdout has %d lines:\n%s", len(lines), stdout.String())
	}
	for _, line := range lines {
		if !strings.HasPrefix(line, "export ") {
			t.Errorf("stdout has a line that is not an export: %q", line)
		}
	}
	for _, want := range []string{"export QTAIL_SANDBOX_ENVIRONMENT_ID_US_EAST_1=", "export QTAIL_SANDBOX_ENVIRONMENT_ID_EU_WEST_3="} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %s", want)
		}
	}
	if !strings.Contains(stderr.String(), "# qtail sandbox on http://127.0.0.1:1") || !strings.Contains(stderr.String(), "seeded IDs") {
		t.Errorf("stderr does not say what the sandbox serves:\n%s", stderr.String())
	}
	file, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(file) != stdout.String() {
		t.Errorf("-env-file holds\n%s\nwant what stdout holds\n%s", file, stdout.String())
	}
}
