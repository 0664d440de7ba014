// Command benchpolicy measures what qtail's policy fragments cost in API
// calls: it builds the provider, serves the sandbox on loopback with an
// added latency, and runs a real Terraform CLI (through a dev_overrides CLI
// configuration) that applies N grants, then plans again. Around each
// command it reads the sandbox's call counters and prints the policy reads
// and writes next to the floor of one read and one write that a resource
// owning the whole policy file pays.
//
//	go run ./tools/benchpolicy [-n 50,200] [-latency 50ms] [-parallelism 10]
//
// Targets: an apply of N grants makes at most N/8 + 2 policy writes; a plan
// makes at most 2 policy reads, whatever N.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
)

// Routes of the policy file API as the sandbox counts them.
const (
	routeGet      = "GET /tailscale/api/v2/tailnet/{tailnet}/acl"
	routeSet      = "POST /tailscale/api/v2/tailnet/{tailnet}/acl"
	routeValidate = "POST /tailscale/api/v2/tailnet/{tailnet}/acl/validate"
)

func main() {
	sizes := flag.String("n", "50,200", "comma-separated numbers of grants to apply")
	latency := flag.Duration("latency", 50*time.Millisecond, "latency the sandbox adds to every API call")
	parallelism := flag.Int("parallelism", 10, "terraform -parallelism")
	tf := flag.String("terraform", "", "terraform binary (default: the one on PATH)")
	keep := flag.Bool("keep", false, "keep the work directory")
	flag.Parse()

	if err := run(*sizes, *latency, *parallelism, *tf, *keep); err != nil {
		log.SetFlags(0)
		log.Fatalf("benchpolicy: %v", err)
	}
}

// result is what one Terraform command cost.
type result struct {
	n         int
	command   string
	gets      int
	posts     int
	validates int
	wall      time.Duration
	target    string
	ok        bool
}

func run(sizes string, latency time.Duration, parallelism int, tf string, keep bool) error {
	var ns []int
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("-n %q: want positive integers separated by commas", sizes)
		}
		ns = append(ns, n)
	}
	if tf == "" {
		p, err := exec.LookPath("terraform")
		if err != nil {
			return errors.New("terraform is not on PATH; install Terraform >= 1.11 or pass -terraform")
		}
		tf = p
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "qtail-benchpolicy-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Printf("work directory: %s\n", work)
	} else {
		defer func() { _ = os.RemoveAll(work) }()
	}

	ctx := context.Background()
	bin := filepath.Join(work, "bin")
	fmt.Println("building the provider ...")
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, "terraform-provider-qtail"), ".")
	build.Dir = root
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the provider: %w", err)
	}
	rc := filepath.Join(work, "terraformrc")
	rcText := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"qtail/qtail\" = %q\n  }\n  direct {}\n}\n", bin)
	if err := os.WriteFile(rc, []byte(rcText), 0o600); err != nil {
		return err
	}

	var results []result
	for _, n := range ns {
		rs, err := benchOne(ctx, work, tf, rc, n, latency, parallelism)
		if err != nil {
			return fmt.Errorf("with %d grants: %w", n, err)
		}
		results = append(results, rs...)
	}

	fmt.Printf("\nqtail policy fragments: N grants, sandbox latency %s per API call, terraform -parallelism=%d\n", latency, parallelism)
	fmt.Println("floor (a resource that owns the whole policy file): 1 policy read and 1 policy write per apply, 1 read per plan")
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "N\tcommand\tpolicy GETs\tpolicy POSTs\tvalidate POSTs\twall time\t\ttarget\t")
	failed := false
	for _, r := range results {
		verdict := "ok"
		if !r.ok {
			verdict, failed = "MISSED", true
		}
		fmt.Fprintf(w, "%d\t%s\t%d\t%d\t%d\t%.1fs\t\t%s: %s\t\n", r.n, r.command, r.gets, r.posts, r.validates, r.wall.Seconds(), r.target, verdict)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Println("policy GETs and POSTs are GET and POST /api/v2/tailnet/{tailnet}/acl; validate POSTs are the plan-time checks (/acl/validate).")
	if failed {
		return errors.New("a target was missed")
	}
	return nil
}

// benchOne applies n grants to a fresh sandbox, then plans again.
func benchOne(ctx context.Context, work, tf, rc string, n int, latency time.Duration, parallelism int) ([]result, error) {
	world, err := sandbox.New(sandbox.Options{Latency: latency, DeployTime: time.Second})
	if err != nil {
		return nil, err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: world.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()
	base := "http://" + ln.Addr().String()

	dir := filepath.Join(work, fmt.Sprintf("n%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(grantsConfig(n)), 0o600); err != nil {
		return nil, err
	}
	env := os.Environ()
	env = append(env, "TF_CLI_CONFIG_FILE="+rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	for k, v := range world.Env(base) {
		env = append(env, k+"="+v)
	}
	terraform := func(args ...string) (time.Duration, int, error) {
		cmd := exec.CommandContext(ctx, tf, append([]string{"-chdir=" + dir}, args...)...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			return wall, -1, err
		}
		if err := os.WriteFile(filepath.Join(dir, args[0]+".log"), out.Bytes(), 0o600); err != nil {
			return wall, code, err
		}
		return wall, code, nil
	}

	var results []result
	measure := func(command string, args ...string) (result, int, error) {
		before, err := calls(ctx, base)
		if err != nil {
			return result{}, 0, err
		}
		wall, code, err := terraform(args...)
		if err != nil {
			return result{}, code, err
		}
		after, err := calls(ctx, base)
		if err != nil {
			return result{}, code, err
		}
		return result{
			n: n, command: command, wall: wall,
			gets:      after[routeGet] - before[routeGet],
			posts:     after[routeSet] - before[routeSet],
			validates: after[routeValidate] - before[routeValidate],
		}, code, nil
	}

	fmt.Printf("N=%d: terraform apply ...\n", n)
	apply, code, err := measure("apply", "apply", "-auto-approve", "-input=false", "-compact-warnings", fmt.Sprintf("-parallelism=%d", parallelism))
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, fmt.Errorf("terraform apply failed (exit %d); see %s", code, filepath.Join(dir, "apply.log"))
	}
	apply.target = fmt.Sprintf("POSTs <= %d (N/8+2)", n/8+2)
	apply.ok = apply.posts <= n/8+2
	results = append(results, apply)

	body, _ := world.Tailnet.Policy()
	if got := strings.Count(string(body), "// qtail:grant:"); got != n {
		return nil, fmt.Errorf("the policy file holds %d qtail grants after apply, want %d", got, n)
	}

	fmt.Printf("N=%d: terraform plan ...\n", n)
	plan, code, err := measure("plan", "plan", "-input=false", "-detailed-exitcode", "-compact-warnings", fmt.Sprintf("-parallelism=%d", parallelism))
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, fmt.Errorf("the plan after apply is not empty (exit %d); see %s", code, filepath.Join(dir, "plan.log"))
	}
	plan.target = "GETs <= 2"
	plan.ok = plan.gets <= 2
	results = append(results, plan)
	return results, nil
}

// grantsConfig is a configuration of n grants.
func grantsConfig(n int) string {
	var b strings.Builder
	b.WriteString("terraform {\n  required_providers {\n    qtail = {\n      source = \"qtail/qtail\"\n    }\n  }\n}\n\nprovider \"qtail\" {}\n")
	for i := range n {
		fmt.Fprintf(&b, "\nresource \"qtail_grant\" \"g%d\" {\n  name = \"bench-%d\"\n  src  = [\"group:platform-ops\"]\n  dst  = [\"100.64.%d.%d\"]\n  ip   = [\"tcp:443\"]\n}\n",
			i, i, 10+i/250, 1+i%250)
	}
	return b.String()
}

// calls reads the sandbox's per-route call counters.
func calls(ctx context.Context, base string) (map[string]int, error) {
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

// moduleRoot finds the directory of go.mod from the working directory up.
func moduleRoot() (string, error) {
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
			return "", errors.New("run benchpolicy from inside the qtail module (make bench-policy)")
		}
		dir = parent
	}
}
