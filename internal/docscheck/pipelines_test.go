package docscheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// earlyExitReader matches a pipe into a command that may stop reading
// before its writer is done: grep -q, grep -m N, grep -l and head. Under
// `set -o pipefail` the writer then dies of SIGPIPE at random, and the
// pipeline fails although the match was found.
var earlyExitReader = regexp.MustCompile(`\|\s*(grep(\s+-[A-Za-z]*[qml][A-Za-z]*\b|\s+--quiet\b|\s+--max-count\b|\s+--files-with-matches\b)|head\b)`)

// TestScripts_noEarlyExitReaderInPipelines keeps the scripts that CI and
// the demos run free of that trap: their output is captured whole, then
// matched (a here-string, or grep -m on a file). The CI examples count:
// GitHub runs each run: step with bash -eo pipefail, and qtail-ci.sh sets
// pipefail; every line of their YAML and scripts is scanned.
func TestScripts_noEarlyExitReaderInPipelines(t *testing.T) {
	dir := root(t)
	files := []string{filepath.Join(dir, ".ci", "run"), filepath.Join(dir, "GNUmakefile")}
	scripts, err := filepath.Glob(filepath.Join(dir, "scripts", "*.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) == 0 {
		t.Fatal("no scripts/*.sh found")
	}
	files = append(files, scripts...)
	ci := 0
	err = filepath.WalkDir(filepath.Join(dir, "examples", "ci"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(p) {
		case ".sh", ".yml", ".yaml":
			files = append(files, p)
			ci++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ci < 5 {
		t.Fatalf("found %d scripts and workflows under examples/ci, want at least 5", ci)
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			code := strings.TrimSpace(line)
			if strings.HasPrefix(code, "#") {
				continue
			}
			if earlyExitReader.MatchString(code) {
				rel, _ := filepath.Rel(dir, path)
				t.Errorf("%s:%d pipes into a reader that may exit early (SIGPIPE under pipefail): %s", rel, i+1, code)
			}
		}
	}
}

// The pattern itself: what it must catch and what it must let through.
func TestEarlyExitReaderPattern(t *testing.T) {
	for _, bad := range []string{
		`unzip -l "$z" | grep -q " $bin$"`,
		`ls x | head -n 1`,
		`cmd | grep -m 1 foo`,
		`cmd |grep -qF foo`,
		`cmd | grep --quiet foo`,
		`cmd | grep -lr foo`,
	} {
		if !earlyExitReader.MatchString(bad) {
			t.Errorf("not caught: %s", bad)
		}
	}
	for _, good := range []string{
		`grep -q foo "$file"`,
		`grep -q foo <<<"$listing"`,
		`ls x | wc -l`,
		`cmd | grep -E 'a|b' || true`,
		`grep -m 1 -E 'No changes|Plan:' "$f"`,
		`cmd | sort | grep -v x`,
	} {
		if earlyExitReader.MatchString(good) {
			t.Errorf("wrongly caught: %s", good)
		}
	}
}
