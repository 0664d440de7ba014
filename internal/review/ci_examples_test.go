package review

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The CI examples and the guide run the review command; these tests check
// that the YAML is well formed and that every command line they run is the
// command as documented.

const examplesDir = "../../examples/ci"

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

func mapOf(t *testing.T, where string, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: want a mapping, got %T", where, v)
	}
	return m
}

func onlyKeys(t *testing.T, where string, m map[string]any, allowed ...string) {
	t.Helper()
	for k := range m {
		if !slices.Contains(allowed, k) {
			t.Errorf("%s: unknown key %q", where, k)
		}
	}
}

// TestGitHubWorkflows checks the workflows against the parts of GitHub's
// workflow schema they use, and their review command lines.
func TestGitHubWorkflows(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(examplesDir, "github", "*.yml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("workflows %v, %v", files, err)
	}
	reviews := 0
	for _, path := range files {
		name := filepath.Base(path)
		doc := readYAML(t, path)
		onlyKeys(t, name, doc, "name", "run-name", "on", "permissions", "env", "defaults", "concurrency", "jobs")
		if doc["on"] == nil {
			t.Errorf("%s: no triggers (on)", name)
		}
		perms := mapOf(t, name+": permissions", doc["permissions"])
		for scope, level := range perms {
			if !slices.Contains([]any{"read", "write", "none"}, level) {
				t.Errorf("%s: permissions.%s = %v", name, scope, level)
			}
		}
		usesIdentity := strings.Contains(mustRead(t, path), "TAILSCALE_AUDIENCE")
		if usesIdentity && perms["id-token"] != "write" {
			t.Errorf("%s: uses workload identity without permissions id-token: write", name)
		}
		jobs := mapOf(t, name+": jobs", doc["jobs"])
		if len(jobs) == 0 {
			t.Errorf("%s: no jobs", name)
		}
		for jobName, j := range jobs {
			where := name + ": jobs." + jobName
			job := mapOf(t, where, j)
			onlyKeys(t, where, job, "name", "runs-on", "needs", "if", "permissions", "env", "defaults", "strategy", "steps", "timeout-minutes", "concurrency", "outputs", "environment")
			if job["runs-on"] == nil {
				t.Errorf("%s: no runs-on", where)
			}
			if needs, ok := job["needs"].(string); ok && jobs[needs] == nil {
				t.Errorf("%s: needs the unknown job %q", where, needs)
			}
			steps, ok := job["steps"].([]any)
			if !ok || len(steps) == 0 {
				t.Fatalf("%s: no steps", where)
			}
			ids := map[string]bool{}
			for i, s := range steps {
				step := mapOf(t, where, s)
				onlyKeys(t, where, step, "name", "id", "if", "uses", "with", "run", "env", "working-directory", "shell", "continue-on-error", "timeout-minutes")
				uses, hasUses := step["uses"].(string)
				run, hasRun := step["run"].(string)
				if hasUses == hasRun {
					t.Errorf("%s: step %d must have one of uses and run", where, i+1)
				}
				if hasUses && !regexp.MustCompile(`^[\w.-]+/[\w.-]+(/[\w./-]+)?@\S+$`).MatchString(uses) {
					t.Errorf("%s: step %d uses %q: want OWNER/REPO@REF", where, i+1, uses)
				}
				if id, ok := step["id"].(string); ok {
					ids[id] = true
				}
				if cond, ok := step["if"].(string); ok {
					for _, m := range regexp.MustCompile(`steps\.([\w-]+)\.outputs`).FindAllStringSubmatch(cond, -1) {
						if !ids[m[1]] {
							t.Errorf("%s: step %d reads the outputs of step %q, which does not come before it", where, i+1, m[1])
						}
					}
				}
				reviews += checkReviewCommands(t, where, run)
			}
		}
	}
	if reviews < 2 {
		t.Errorf("the workflows run the review %d times, want at least 2", reviews)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAtlantisConfig checks the Atlantis configs and their review command
// lines.
func TestAtlantisConfig(t *testing.T) {
	doc := readYAML(t, filepath.Join(examplesDir, "atlantis", "repos.yaml"))
	onlyKeys(t, "repos.yaml", doc, "repos", "workflows")
	reviews := 0
	repos, _ := doc["repos"].([]any)
	if len(repos) == 0 {
		t.Fatal("repos.yaml: no repos")
	}
	workflows := mapOf(t, "repos.yaml: workflows", doc["workflows"])
	for _, r := range repos {
		repo := mapOf(t, "repos.yaml: repos", r)
		if wf, ok := repo["workflow"].(string); ok && workflows[wf] == nil {
			t.Errorf("repos.yaml: the repo uses the unknown workflow %q", wf)
		}
		hooks, _ := repo["post_workflow_hooks"].([]any)
		for _, h := range hooks {
			hook := mapOf(t, "repos.yaml: post_workflow_hooks", h)
			onlyKeys(t, "repos.yaml: post_workflow_hooks", hook, "run", "description", "commands", "shell", "shellArgs")
			run, _ := hook["run"].(string)
			reviews += checkReviewCommands(t, "repos.yaml: post_workflow_hooks", run)
		}
	}
	for name, w := range workflows {
		where := "repos.yaml: workflows." + name
		for stage, s := range mapOf(t, where, w) {
			if stage != "plan" && stage != "apply" && stage != "policy_check" && stage != "import" && stage != "state_rm" {
				t.Errorf("%s: unknown stage %q", where, stage)
				continue
			}
			steps, _ := mapOf(t, where+"."+stage, s)["steps"].([]any)
			for _, st := range steps {
				switch step := st.(type) {
				case string:
					if !slices.Contains([]string{"init", "plan", "apply", "show", "policy_check", "import", "state_rm"}, step) {
						t.Errorf("%s: unknown built-in step %q", where, step)
					}
				case map[string]any:
					if len(step) != 1 {
						t.Errorf("%s: a step has one key, got %v", where, step)
					}
					if run, ok := step["run"].(string); ok {
						reviews += checkReviewCommands(t, where, run)
					}
				default:
					t.Errorf("%s: a step is %T", where, st)
				}
			}
		}
	}
	if reviews != 2 {
		t.Errorf("the Atlantis config runs the review %d times, want 2", reviews)
	}
	projects := readYAML(t, filepath.Join(examplesDir, "atlantis", "atlantis.yaml"))
	if projects["version"] != 3 {
		t.Errorf("atlantis.yaml: version %v", projects["version"])
	}
	list, _ := projects["projects"].([]any)
	if len(list) == 0 {
		t.Error("atlantis.yaml: no projects")
	}
}

// TestGuideCommands checks the command lines of the guide.
func TestGuideCommands(t *testing.T) {
	guide := mustRead(t, "../../templates/guides/reviewing-plans.md.tmpl")
	firstLine, _, _ := strings.Cut(Usage, "\n")
	synopsis := strings.TrimPrefix(firstLine, "Usage: ")
	if !strings.Contains(guide, synopsis) {
		t.Errorf("the guide does not give the command line %q", synopsis)
	}
	if n := checkReviewCommands(t, "the guide", guide); n < 3 {
		t.Errorf("the guide runs the review %d times, want at least 3", n)
	}
	for _, code := range []string{"| 0 |", "| 1 |", "| 2 |"} {
		if !strings.Contains(guide, code) {
			t.Errorf("the guide does not document the exit code %s", code)
		}
	}
}

// reviewCall finds the review command: the provider binary by its name or
// through a variable, then "review".
var reviewCall = regexp.MustCompile(`(?:\S*terraform-provider-qtail(?:_\S*)?|"\$QTAIL"|\$QTAIL)\s+review\b`)

// checkReviewCommands parses every review command line of a script with
// the command's own flags, and returns how many there are.
func checkReviewCommands(t *testing.T, where, script string) int {
	t.Helper()
	script = strings.ReplaceAll(script, "\\\n", " ")
	n := 0
	for _, line := range strings.Split(script, "\n") {
		loc := reviewCall.FindStringIndex(line)
		if loc == nil || strings.HasPrefix(strings.TrimSpace(line), "#") && !strings.HasPrefix(strings.TrimSpace(line), "#!") {
			continue
		}
		args := shellWords(line[loc[1]:])
		if slices.Contains(args, "[flags]") || strings.HasPrefix(line[loc[1]:], "`") {
			continue // the synopsis, or the command named in a sentence
		}
		n++
		var f flags
		fs := newFlagSet(&f, io.Discard)
		if err := fs.Parse(args); err != nil {
			t.Errorf("%s: %q: %v", where, strings.TrimSpace(line), err)
			continue
		}
		if f.format != "markdown" && f.format != "json" {
			t.Errorf("%s: %q: -format %q", where, strings.TrimSpace(line), f.format)
		}
		if fs.NArg() == 0 {
			t.Errorf("%s: %q: no plan", where, strings.TrimSpace(line))
		}
		for _, a := range fs.Args() {
			if !strings.HasSuffix(a, ".json") && !strings.HasPrefix(a, "$") {
				t.Errorf("%s: %q: %q is not a plan in JSON", where, strings.TrimSpace(line), a)
			}
		}
	}
	return n
}

// shellWords splits the arguments of a command line the way a shell does
// for the simple lines of the examples (quotes, no expansion), up to the
// end of the command (;, &&, ||, |, a redirection or a comment).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == ';' || c == '&' || c == '|' || c == '>' || c == '<' || c == '#' && !inWord:
			if inWord {
				words = append(words, cur.String())
			}
			return words
		case c == '`':
			// The end of an inline code span in Markdown.
			if inWord {
				words = append(words, cur.String())
			}
			return words
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func TestShellWords(t *testing.T) {
	for in, want := range map[string][]string{
		` -o review.md plans/*.json`:                 {"-o", "review.md", "plans/*.json"},
		` "$PLANFILE.json" || [ $? -eq 2 ]`:          {"$PLANFILE.json"},
		` -format json 'a b.json' > out.json # note`: {"-format", "json", "a b.json"},
		` plan.json` + "`, then":                     {"plan.json"},
	} {
		if got := shellWords(in); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
