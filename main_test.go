package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The release build sets the version with -ldflags, as .goreleaser.yml
// does, and the binary reports it.
func TestVersionSetAtBuildTime(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "terraform-provider-qtail")
	build := exec.CommandContext(t.Context(), "go", "build", "-ldflags", "-X main.version=9.8.7", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(t.Context(), bin, "-version").CombinedOutput()
	if err != nil {
		t.Fatalf("-version: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "terraform-provider-qtail 9.8.7" {
		t.Errorf("-version printed %q", got)
	}
}
