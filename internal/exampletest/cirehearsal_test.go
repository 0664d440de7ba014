package exampletest

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

// lockPlatforms are the platforms that the lock files of the CI examples
// record (examples/ci/qtail-ci.sh lock).
var lockPlatforms = []string{"linux_amd64", "darwin_arm64", "darwin_amd64"}

// The CI examples as a platform team runs them: examples/ci/rehearse.sh
// copies examples/multi-region into a repository of its own, installs qtail
// from release archives only (a filesystem mirror made by qtail-ci.sh,
// lock files for three platforms), plans every root, reviews the plans,
// posts the comment, runs the drift job and the Atlantis steps, against
// the sandbox. Every step that the workflows run is one the rehearsal ran.
func TestCIRehearsal(t *testing.T) {
	t.Parallel()
	w := newWorld(t, handWrittenPolicy)
	dist := releaseArchives(t)
	work := filepath.Join(t.TempDir(), "work")

	env := []string{
		"PATH=" + filepath.Dir(terraformBinary(t)) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"CHECKPOINT_DISABLE=1",
	}
	for _, line := range strings.Split(strings.TrimSpace(w.Exports(w.url)), "\n") {
		env = append(env, strings.TrimPrefix(line, "export "))
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "PATH" || strings.HasPrefix(name, "TF_") || strings.HasPrefix(name, "QOVERY_") ||
			strings.HasPrefix(name, "TAILSCALE_") || strings.HasPrefix(name, "QTAIL") || strings.HasPrefix(name, "GITHUB_") ||
			strings.HasPrefix(name, "RUNNER_") || strings.HasPrefix(name, "GH_") {
			continue
		}
		env = append(env, kv)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(repoRoot(t), "examples", "ci", "rehearse.sh"), dist, work)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start).Round(100 * time.Millisecond)
	if err != nil {
		t.Fatalf("examples/ci/rehearse.sh failed after %s: %v\n%s", took, err, out.String())
	}
	t.Logf("examples/ci/rehearse.sh passed in %s:\n%s", took, lastLine(out.String()))

	ran, err := os.ReadFile(filepath.Join(work, "steps.log"))
	if err != nil {
		t.Fatal(err)
	}
	rehearsed := strings.Fields(string(ran))
	steps := ciSteps(t)
	if len(steps) < 8 {
		t.Fatalf("found %d qtail-ci.sh steps in the workflows, want at least 8: %v", len(steps), steps)
	}
	for _, step := range steps {
		if !slices.Contains(rehearsed, step.name) {
			t.Errorf("%s runs qtail-ci.sh %s, which the rehearsal does not", step.where, step.name)
		}
	}
}

// ciStep is one call of qtail-ci.sh in a workflow.
type ciStep struct{ where, name string }

// ciCall is a call of qtail-ci.sh: its path, then the step.
var ciCall = regexp.MustCompile(`qtail-ci\.sh"?\s+([a-z-]+)`)

// ciSteps returns the qtail-ci.sh steps that the GitHub workflows and the
// Atlantis config of examples/ci run.
func ciSteps(t *testing.T) []ciStep {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "examples", "ci")
	files, err := filepath.Glob(filepath.Join(dir, "github", "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(dir, "atlantis", "repos.yaml"))
	var steps []ciStep
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, script := range shellOf(doc) {
			for _, m := range ciCall.FindAllStringSubmatch(script, -1) {
				steps = append(steps, ciStep{where: filepath.Base(path), name: m[1]})
			}
		}
	}
	return steps
}

// shellOf returns every run: and command: string of a YAML document.
func shellOf(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "run" || k == "command") {
				out = append(out, s)
				continue
			}
			out = append(out, shellOf(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, shellOf(x)...)
		}
	}
	return out
}

// releaseArchives returns a folder that holds release archives of the
// platforms the lock files record, and their SHA256SUMS, named as
// .goreleaser.yml names them. QTAIL_REHEARSAL_DIST points at the dist/ of
// make release-snapshot (a relative path is from the repository's root);
// otherwise the archive of this machine's platform
// is built here, as the release builds it, with a snapshot version
// (LINE.YYYYMMDDhhmmss), and the other platforms' archives hold a
// stand-in: terraform providers lock only hashes them, and nothing runs
// them here.
func releaseArchives(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("QTAIL_REHEARSAL_DIST"); d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(repoRoot(t), d) // dist, from the repository's root
		}
		return d
	}
	checkReleaseNames(t)
	line := manifest.ManifestsChartVersion[:strings.LastIndex(manifest.ManifestsChartVersion, ".")]
	version := line + "." + time.Now().UTC().Format("20060102150405")
	dist := t.TempDir()
	bin := "terraform-provider-qtail_v" + version
	host := runtime.GOOS + "_" + runtime.GOARCH
	built := filepath.Join(t.TempDir(), bin)
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+version, "-o", built, ".")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of the release binary: %v\n%s", err, out)
	}
	hostBinary, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	var sums strings.Builder
	for _, platform := range slices.Sorted(slices.Values(append([]string{host}, lockPlatforms...))) {
		name := fmt.Sprintf("terraform-provider-qtail_%s_%s.zip", version, platform)
		if strings.Contains(sums.String(), name) {
			continue
		}
		content := hostBinary
		if platform != host {
			content = []byte("#!/bin/sh\n# stand-in for the " + platform + " build of qtail " + version + "\nexit 1\n")
		}
		sum := writeZip(t, filepath.Join(dist, name), bin, content)
		fmt.Fprintf(&sums, "%s  %s\n", sum, name)
	}
	if err := os.WriteFile(filepath.Join(dist, "terraform-provider-qtail_"+version+"_SHA256SUMS"), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dist
}

// writeZip writes a zip that holds one executable file, and returns the
// zip's SHA-256.
func writeZip(t *testing.T, path, name string, content []byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	h := &zip.FileHeader{Name: name, Method: zip.Deflate}
	h.SetMode(0o755)
	f, err := zw.CreateHeader(h)
	if err == nil {
		_, err = io.Copy(f, bytes.NewReader(content))
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = os.WriteFile(path, buf.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

// checkReleaseNames fails the test unless .goreleaser.yml names the
// binary, the archives and the checksums file as releaseArchives does, and
// takes the snapshot's version from make release-snapshot.
func checkReleaseNames(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), ".goreleaser.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`project_name: terraform-provider-qtail`,
		`binary: "{{ .ProjectName }}_v{{ .Version }}"`,
		`name_template: "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}"`,
		`name_template: "{{ .ProjectName }}_{{ .Version }}_SHA256SUMS"`,
		`version_template: "{{ .Env.QTAIL_SNAPSHOT_VERSION }}"`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf(".goreleaser.yml does not say %s, which the rehearsal's archives follow", want)
		}
	}
}
