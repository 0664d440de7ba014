package review

import (
	"fmt"
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

// ciScript is the script that every shell step of the CI examples runs.
const ciScript = examplesDir + "/qtail-ci.sh"

// ciCall is one run: step of the GitHub workflows: a call of qtail-ci.sh,
// and nothing else, so that no shell of the YAML goes untested (the
// rehearsal, examples/ci/rehearse.sh, runs every step).
var ciCall = regexp.MustCompile(`^bash ci/qtail-ci\.sh ([a-z-]+)( [^;&|<>` + "`" + `$]*| "[^"]*")*$`)

// ciSteps are the steps that qtail-ci.sh has.
func ciSteps(t *testing.T) []string {
	t.Helper()
	var steps []string
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z-]+)\) cmd_`).FindAllStringSubmatch(mustRead(t, ciScript), -1) {
		steps = append(steps, m[1])
	}
	if len(steps) < 10 {
		t.Fatalf("%s has %d steps: %v", ciScript, len(steps), steps)
	}
	return steps
}

// TestGitHubWorkflows checks the workflows against the parts of GitHub's
// workflow schema they use, that each of their shell steps is one step of
// qtail-ci.sh, and that each job holds only the permissions it needs.
func TestGitHubWorkflows(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(examplesDir, "github", "*.yml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("workflows %v, %v", files, err)
	}
	known := ciSteps(t)
	reviews, forkWorkflows := 0, 0
	for _, path := range files {
		name := filepath.Base(path)
		doc := readYAML(t, path)
		onlyKeys(t, name, doc, "name", "run-name", "on", "permissions", "env", "defaults", "concurrency", "jobs")
		if doc["on"] == nil {
			t.Errorf("%s: no triggers (on)", name)
		}
		// The workflow grants nothing: each job asks for its own.
		if perms := mapOf(t, name+": permissions", doc["permissions"]); len(perms) != 0 {
			t.Errorf("%s: permissions %v for every job; grant them per job", name, perms)
		}
		on := mapOf(t, name+": on", doc["on"])
		for _, event := range []string{"pull_request", "pull_request_target"} {
			if trigger, ok := on[event]; ok {
				paths, _ := mapOf(t, name+": on."+event, trigger)["paths"].([]any)
				for _, want := range []string{"regions/**", "modules/**", "ci/qtail-ci.sh"} {
					if !slices.Contains(paths, any(want)) {
						t.Errorf("%s: on.%s.paths lacks %q: a change there changes the plans", name, event, want)
					}
				}
			}
		}
		_, target := on["pull_request_target"]
		workflowEnv, _ := doc["env"].(map[string]any)
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
			perms := map[string]any{}
			if job["permissions"] != nil {
				perms = mapOf(t, where+": permissions", job["permissions"])
			}
			for scope, level := range perms {
				if !slices.Contains([]any{"read", "write", "none"}, level) {
					t.Errorf("%s: permissions.%s = %v", where, scope, level)
				}
			}
			jobEnv, _ := job["env"].(map[string]any)
			_, identity := jobEnv["TAILSCALE_AUDIENCE"]
			if _, ok := workflowEnv["TAILSCALE_AUDIENCE"]; ok {
				t.Errorf("%s: TAILSCALE_AUDIENCE is set for every job; set it on the jobs that exchange a token", name)
			}
			if identity != (perms["id-token"] == "write") {
				t.Errorf("%s: uses workload identity %t, permissions id-token: %v; want write exactly where a token is exchanged", where, identity, perms["id-token"])
			}
			steps, ok := job["steps"].([]any)
			if !ok || len(steps) == 0 {
				t.Fatalf("%s: no steps", where)
			}
			ids := map[string]bool{}
			var ran []string
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
				if target && strings.HasPrefix(uses, "actions/checkout@") && step["with"] != nil {
					t.Errorf("%s: a pull_request_target job checks out %v: it must run the base branch only, never the pull request's code", where, step["with"])
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
				if !hasRun {
					continue
				}
				m := ciCall.FindStringSubmatch(strings.TrimSpace(run))
				if m == nil {
					t.Errorf("%s: step %d runs %q: want one call of bash ci/qtail-ci.sh STEP, which the rehearsal runs", where, i+1, run)
					continue
				}
				if !slices.Contains(known, m[1]) {
					t.Errorf("%s: step %d runs qtail-ci.sh %s, which is not a step of %s", where, i+1, m[1], ciScript)
				}
				ran = append(ran, m[1])
				if m[1] == "review" || m[1] == "drift" {
					reviews++
				}
			}
			// The job that posts is the only one that may write on the pull
			// request, and it runs nothing of the pull request.
			posts := slices.Contains(ran, "comment")
			if posts != (perms["pull-requests"] == "write") {
				t.Errorf("%s: posts the comment %t, permissions pull-requests: %v; want write exactly on the job that posts", where, posts, perms["pull-requests"])
			}
			if posts && !target {
				checkout := mapOf(t, where+": steps[0]", steps[0])
				with, _ := checkout["with"].(map[string]any)
				if !strings.HasPrefix(fmt.Sprint(checkout["uses"]), "actions/checkout@") || with["ref"] != "${{ github.event.pull_request.base.sha }}" {
					t.Errorf("%s: posts the comment but does not check out the base branch first", where)
				}
			}
			// Forks get no identity token: the jobs that need one are not
			// run for them, and a pull_request_target job tells them why.
			if identity && on["pull_request"] != nil && job["if"] != "github.event.pull_request.head.repo.full_name == github.repository" {
				t.Errorf("%s: runs for pull requests from forks, which get no identity token; want if: github.event.pull_request.head.repo.full_name == github.repository", where)
			}
			if target {
				if identity || job["if"] != "github.event.pull_request.head.repo.full_name != github.repository" || !slices.Contains(ran, "fork-notice") {
					t.Errorf("%s: a pull_request_target job must run for forks only, with no identity, and post the fork notice", where)
				}
				forkWorkflows++
			}
			if strategy, ok := job["strategy"].(map[string]any); ok {
				checkEveryRoot(t, where, mapOf(t, where+": strategy", strategy)["matrix"])
			}
		}
	}
	if reviews < 2 {
		t.Errorf("the workflows run the review %d times, want at least 2", reviews)
	}
	if forkWorkflows != 1 {
		t.Errorf("%d pull_request_target jobs tell forks why they are not reviewed, want 1", forkWorkflows)
	}
	drift := mustRead(t, filepath.Join(examplesDir, "github", "qtail-drift.yml"))
	if !strings.Contains(drift, "vars.TAILSCALE_DRIFT_CLIENT_ID") || !strings.Contains(drift, "ref:refs/heads/main") || strings.Contains(drift, "TAILSCALE_PLAN_") {
		t.Error("qtail-drift.yml: the drift job needs an identity of its own, whose subject is ref:refs/heads/main")
	}
	if n := checkReviewCommands(t, ciScript, mustRead(t, ciScript)); n < 2 {
		t.Errorf("%s runs the review %d times, want at least 2", ciScript, n)
	}
}

// checkEveryRoot fails the test unless a matrix plans every root of
// examples/multi-region, the platform root included.
func checkEveryRoot(t *testing.T, where string, matrix any) {
	t.Helper()
	roots, _ := mapOf(t, where+": strategy.matrix", matrix)["root"].([]any)
	dirs, err := os.ReadDir("../../examples/multi-region")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if d.IsDir() && !slices.Contains(roots, any(d.Name())) {
			t.Errorf("%s: the matrix does not plan the root %s (matrix.root %v)", where, d.Name(), roots)
		}
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
	known := ciSteps(t)
	// Atlantis's shell steps are calls of qtail-ci.sh too; the review is
	// run by its atlantis-project and atlantis-review steps.
	atlantisCall := regexp.MustCompile(`^bash "\$(?:DIR|\(git rev-parse --show-toplevel\))/ci/qtail-ci\.sh" ([a-z-]+)( \S+)*$`)
	checkRun := func(where, run string) {
		m := atlantisCall.FindStringSubmatch(strings.TrimSpace(run))
		if m == nil {
			t.Errorf("%s: runs %q: want one call of ci/qtail-ci.sh STEP, which the rehearsal runs", where, run)
			return
		}
		if !slices.Contains(known, m[1]) {
			t.Errorf("%s: runs qtail-ci.sh %s, which is not a step of %s", where, m[1], ciScript)
		}
		if strings.HasPrefix(m[1], "atlantis-") {
			reviews++
		}
	}
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
			checkRun("repos.yaml: post_workflow_hooks", run)
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
						checkRun(where, run)
					}
					if env, ok := step["env"].(map[string]any); ok {
						onlyKeys(t, where+": env", env, "name", "command", "value")
						if command, ok := env["command"].(string); ok {
							checkRun(where+": env", command)
						}
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
	// The comment goes to the base repository's pull request.
	if script := mustRead(t, ciScript); strings.Contains(script, "HEAD_REPO_") || !strings.Contains(script, `QTAIL_COMMENT_REPO="$BASE_REPO_OWNER/$BASE_REPO_NAME"`) {
		t.Errorf("%s: the Atlantis hook must comment on BASE_REPO_OWNER/BASE_REPO_NAME", ciScript)
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
var reviewCall = regexp.MustCompile(`(?:\S*terraform-provider-qtail(?:_\S*)?|"\$(?:QTAIL|qtail)"|\$QTAIL)\s+review\b`)

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
