package main

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
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

func TestQuietLogsOnlyWhenTerraformLogsNothing(t *testing.T) {
	for _, tc := range []struct {
		environ []string
		quiet   bool
	}{
		{[]string{"HOME=/root", "PATH=/bin"}, true},
		{[]string{"HOME=/root", "TF_LOG=DEBUG"}, false},
		{[]string{"TF_LOG_PROVIDER=TRACE"}, false},
		{[]string{"TF_LOG_PATH=/tmp/tf.log"}, false},
		{[]string{"TF_VAR_x=1", "TF_CLI_CONFIG_FILE=rc"}, true},
	} {
		set := map[string]string{}
		quietLogs(tc.environ, func(k, v string) error { set[k] = v; return nil })
		if tc.quiet != (len(set) == len(sdkLogVariables)) || (!tc.quiet && len(set) > 0) {
			t.Errorf("environment %v: set %v, want quiet = %v", tc.environ, set, tc.quiet)
		}
		for k, v := range set {
			if v != "OFF" {
				t.Errorf("%s=%s, want OFF", k, v)
			}
		}
	}
}

func TestTuneGCLeavesAGOGCVariableAlone(t *testing.T) {
	restore := debug.SetGCPercent(100)
	defer debug.SetGCPercent(restore)
	tuneGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != providerGCPercent {
		t.Errorf("without GOGC the collector's target is %d, want %d", got, providerGCPercent)
	}
	tuneGC(func(name string) string {
		if name == "GOGC" {
			return "50"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set the collector's target became %d, want it left at 100", got)
	}
}
