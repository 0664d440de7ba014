// Command benchpolicy measures what qtail's policy fragments cost next to a
// resource that owns the whole policy file. For each N it serves a fresh
// sandbox on loopback with an added latency, and runs a real Terraform CLI
// (through a dev_overrides CLI configuration) for each configuration:
//
//   - qtail: a plan that adds N qtail_grant, the apply, a plan with
//     nothing to change, and a plan with the port of one grant changed;
//   - qtail, the same N grants in one qtail_grants;
//   - whole file (with -whole-file-provider): the same N grants in one
//     tailscale_acl of the official Tailscale provider, built outside this
//     repository, against a sandbox of its own;
//   - Terraform alone: N terraform_data, which call no API;
//   - a provider alone: N noop_grant of tools/benchpolicy/noop, a
//     terraform-plugin-framework provider that calls no API: the cost of
//     any design with one resource per grant; and one noop_grants of N
//     grants, the cost of the shape of a qtail_grants.
//
// Around each command it reads the sandbox's call counters and prints the
// policy reads, writes and validations and the wall time, next to the
// floor for resources applied one by one: Terraform starts at most
// -parallelism operations at once, so N creations come in ceil(N/p) waves,
// each needing one validation at plan and one write at apply. It prints the
// ratios to the whole-file resource, checks the targets, and prints the
// histogram of the batches qtail made, read from its debug log in a second
// qtail run that is not timed (debug logging costs time of its own).
//
//	go run ./tools/benchpolicy [-n 120,1000] [-latency 50ms] [-parallelism 10]
//	    [-whole-file-provider PATH] [-repeat 3] [-cpu-hogs 2] [-pprof DIR]
//	go run ./tools/benchpolicy -sets-only -n 1000,10000 [-whole-file-provider PATH]
//	go run ./tools/benchpolicy -concurrent 16 [-per-config 25] [-latency 50ms]
//
// -concurrent R measures R configurations, each with a state of its own,
// applying and then destroying their grants at once on one policy file,
// with qtail_grant and with qtail_grants: the writes next to their floor,
// the 412 answers, the wall time, the grants kept and the hand-written
// content kept.
//
// -sets-only prints, per 1,000 grants, the wall time, the CPU time of the
// provider processes and that of Terraform itself: at large N, Terraform's
// conversion of a literal map of grants to the schema's type grows faster
// than N (a typed variable of the same map costs the same), while the
// provider's part stays linear.
//
// -repeat K (3 by default) measures qtail_grants and the whole file K
// times, one after the other, and prints each command's median run: one
// run of a second can fall on a moment when the machine is busy.
//
// -cpu-hogs runs that many busy processes beside the benchmark, to measure
// on a loaded machine. -pprof builds the provider with CPU profiling and
// writes one profile per provider process into DIR/CONFIG-N-STEP-COMMAND.
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
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tailscale/hujson"

	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/tools/internal/tfrun"
)

// Routes of the policy file API as the sandbox counts them.
const (
	routeGet      = "GET /tailscale/api/v2/tailnet/{tailnet}/acl"
	routeSet      = "POST /tailscale/api/v2/tailnet/{tailnet}/acl"
	routeValidate = "POST /tailscale/api/v2/tailnet/{tailnet}/acl/validate"
)

// burnFlag makes the command a CPU hog for -cpu-hogs.
const burnFlag = "-burn-cpu"

type options struct {
	sizes       []int
	latency     time.Duration
	parallelism int
	terraform   string
	wholeFile   string
	hogs        int
	pprof       string
	setsOnly    bool
	noReference bool
	// repeat is how many times qtail_grants and the whole file are
	// measured, one after the other; each command's figures are those of
	// its median run.
	repeat int
	keep   bool
	// concurrent and perConfig: with concurrent > 0, the benchmark is
	// that many configurations of perConfig grants at once on one policy.
	concurrent, perConfig int
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == burnFlag {
		burn()
	}
	var o options
	sizes := flag.String("n", "120,1000", "comma-separated numbers of grants")
	flag.DurationVar(&o.latency, "latency", 50*time.Millisecond, "latency the sandbox adds to every API call")
	flag.IntVar(&o.parallelism, "parallelism", 10, "terraform -parallelism")
	flag.StringVar(&o.terraform, "terraform", "", "terraform binary (default: the one on PATH)")
	flag.StringVar(&o.wholeFile, "whole-file-provider", "", "a terraform-provider-tailscale binary, to measure its tailscale_acl in the same run")
	flag.IntVar(&o.hogs, "cpu-hogs", 0, "busy processes to run beside the benchmark (a loaded machine)")
	flag.StringVar(&o.pprof, "pprof", "", "directory for CPU profiles of the qtail provider processes")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory")
	flag.IntVar(&o.concurrent, "concurrent", 0, "instead: this many configurations applying, then destroying, at once on one policy")
	flag.IntVar(&o.perConfig, "per-config", 25, "with -concurrent: the grants of each configuration")
	flag.BoolVar(&o.noReference, "no-framework-reference", false, "with -sets-only: leave out noop_grants, which takes many minutes at N = 10,000")
	flag.IntVar(&o.repeat, "repeat", 3, "measure qtail_grants and the whole file this many times, alternately, and keep each command's median")
	flag.BoolVar(&o.setsOnly, "sets-only", false, "measure only the resources that hold every grant (qtail_grants, noop_grants, the whole file), for large N")
	flag.Parse()
	log.SetFlags(0)
	if o.repeat < 1 {
		log.Fatalf("benchpolicy: -repeat %d: want at least 1", o.repeat)
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			log.Fatalf("benchpolicy: -n %q: want positive integers separated by commas", *sizes)
		}
		o.sizes = append(o.sizes, n)
	}
	if err := run(o); err != nil {
		log.Fatalf("benchpolicy: %v", err)
	}
}

// burn keeps one CPU busy until the process is killed.
func burn() {
	runtime.GOMAXPROCS(1)
	x := 0
	for {
		x++
	}
}

// result is what one Terraform command cost.
type result struct {
	gets, posts, validates int
	wall                   time.Duration
	batches                []batch
	// lines is the number of lines of the command's output.
	lines int
	// peak is the largest peak resident memory of a provider process
	// the command started, in bytes (0: not measured).
	peak int64
	// cpu is the CPU time of the provider processes the command started,
	// tfCPU that of Terraform itself.
	cpu, tfCPU time.Duration
}

// batch is one batch of qtail's policy Store, from its debug log.
type batch struct {
	kind   string // write or validate
	size   int
	wait   time.Duration
	reason string
}

// run is the whole benchmark.
func run(o options) error {
	if o.terraform == "" {
		p, err := exec.LookPath("terraform")
		if err != nil {
			return errors.New("terraform is not on PATH; install Terraform >= 1.11 or pass -terraform")
		}
		o.terraform = p
	}
	root, err := tfrun.ModuleRoot("run benchpolicy from inside the qtail module (make bench-policy)")
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "qtail-benchpolicy-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Printf("work directory: %s\n", work)
	} else {
		defer func() { _ = os.RemoveAll(work) }()
	}
	ctx := context.Background()
	b := &bench{o: o, work: work}
	if err := b.setup(ctx, root); err != nil {
		return err
	}
	if o.hogs > 0 {
		stop, err := startHogs(o.hogs)
		if err != nil {
			return err
		}
		defer stop()
	}
	if o.concurrent > 0 {
		if o.perConfig <= 0 {
			return errors.New("-per-config must be positive")
		}
		return b.concurrent(ctx, o.concurrent, o.perConfig)
	}
	failed := false
	for _, n := range o.sizes {
		r, err := b.one(ctx, n)
		if err != nil {
			return fmt.Errorf("with %d grants: %w", n, err)
		}
		write := r.print
		if o.setsOnly {
			write = r.printSets
		}
		if !write(os.Stdout) {
			failed = true
		}
	}
	if failed {
		return errors.New("a target was missed")
	}
	return nil
}

// startHogs starts busy processes and returns what stops them.
func startHogs(n int) (func(), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var procs []*exec.Cmd
	stop := func() {
		for _, p := range procs {
			_ = p.Process.Kill()
			_ = p.Wait()
		}
	}
	for range n {
		p := exec.CommandContext(context.Background(), self, burnFlag)
		if err := p.Start(); err != nil {
			stop()
			return nil, err
		}
		procs = append(procs, p)
	}
	fmt.Printf("%d CPU hog(s) running beside the benchmark (%d CPUs)\n", n, runtime.NumCPU())
	return stop, nil
}

// bench holds what the runs share.
type bench struct {
	o    options
	work string
	rc   string // the Terraform CLI configuration
}

// setup builds the provider and writes the CLI configuration.
func (b *bench) setup(ctx context.Context, root string) error {
	bin := filepath.Join(b.work, "bin")
	fmt.Println("building the provider ...")
	args := []string{"build", "-o", filepath.Join(bin, "terraform-provider-qtail")}
	if b.o.pprof != "" {
		if err := os.MkdirAll(b.o.pprof, 0o755); err != nil {
			return err
		}
		args = append(args, "-tags", "pprof")
	}
	build := exec.CommandContext(ctx, "go", append(args, ".")...)
	build.Dir = root
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the provider: %w", err)
	}
	noop := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, "terraform-provider-noop"), "./tools/benchpolicy/noop")
	noop.Dir = root
	noop.Stdout, noop.Stderr = os.Stdout, os.Stderr
	if err := noop.Run(); err != nil {
		return fmt.Errorf("building the no-op provider: %w", err)
	}
	overrides := fmt.Sprintf("    \"qtail/qtail\" = %q\n    \"qtail/noop\" = %q\n", bin, bin)
	if b.o.wholeFile != "" {
		abs, err := filepath.Abs(b.o.wholeFile)
		if err != nil {
			return err
		}
		if filepath.Base(abs) != "terraform-provider-tailscale" {
			return fmt.Errorf("-whole-file-provider %s: the binary must be named terraform-provider-tailscale", abs)
		}
		overrides += fmt.Sprintf("    \"tailscale/tailscale\" = %q\n", filepath.Dir(abs))
	}
	b.rc = filepath.Join(b.work, "terraformrc")
	rc := "provider_installation {\n  dev_overrides {\n" + overrides + "  }\n  direct {}\n}\n"
	return os.WriteFile(b.rc, []byte(rc), 0o600)
}

// report is what one N measured.
type report struct {
	o                       options
	n                       int
	planAdd, apply, planNop result
	// set is the same N grants in one qtail_grants.
	set   [steps]result
	whole *[steps]result // plan adding, apply, plan with no change, plan of one port
	alone [steps]result
	// plugin is N noop_grant: a resource of a framework provider that
	// calls no API; pluginSet is one noop_grants of N grants.
	plugin, pluginSet [steps]result
	// onePort is qtail_grant's plan of one changed port.
	onePort result
}

// steps is the number of Terraform commands of each configuration.
const steps = 4

// commands are the Terraform commands of each configuration.
var commands = [steps]string{"plan adding N", "apply", "plan, no change", "plan, one port changed"}

// one measures N grants.
func (b *bench) one(ctx context.Context, n int) (*report, error) {
	r := &report{o: b.o, n: n}
	if b.o.setsOnly {
		return b.sets(ctx, r)
	}
	fmt.Printf("N=%d: terraform alone ...\n", n)
	alone, err := b.sequence(ctx, n, "alone", aloneConfig, false, false)
	if err != nil {
		return nil, err
	}
	r.alone = alone
	fmt.Printf("N=%d: a provider that calls no API ...\n", n)
	if r.plugin, err = b.sequence(ctx, n, "plugin", pluginConfig, false, false); err != nil {
		return nil, err
	}
	fmt.Printf("N=%d: qtail ...\n", n)
	q, err := b.sequence(ctx, n, "qtail", grantsConfig, true, false)
	if err != nil {
		return nil, err
	}
	fmt.Printf("N=%d: one resource of a provider that calls no API ...\n", n)
	if r.pluginSet, err = b.sequence(ctx, n, "plugin-set", pluginSetConfig, false, false); err != nil {
		return nil, err
	}
	if err := b.setAndWhole(ctx, r); err != nil {
		return nil, err
	}
	// The batches are read from the provider's debug log, which costs
	// time of its own: a second run, not timed, logs them.
	fmt.Printf("N=%d: qtail again, logging its batches ...\n", n)
	logged, err := b.sequence(ctx, n, "qtail-log", grantsConfig, true, true)
	if err != nil {
		return nil, err
	}
	for i := range q {
		q[i].batches = logged[i].batches
	}
	r.planAdd, r.apply, r.planNop, r.onePort = q[0], q[1], q[2], q[3]
	return r, nil
}

// setAndWhole measures the N grants in one qtail_grants and, with
// -whole-file-provider, in one tailscale_acl, -repeat times each, one
// after the other so that a change in the machine's load falls on both,
// and keeps each command's median run.
func (b *bench) setAndWhole(ctx context.Context, r *report) error {
	n := r.n
	var sets, wholes [][steps]result
	for i := range b.o.repeat {
		round := ""
		if b.o.repeat > 1 {
			round = fmt.Sprintf(" (%d of %d)", i+1, b.o.repeat)
		}
		fmt.Printf("N=%d: qtail_grants%s ...\n", n, round)
		set, err := b.sequence(ctx, n, fmt.Sprintf("qtail-set-%d", i), grantSetConfig, true, false)
		if err != nil {
			return err
		}
		sets = append(sets, set)
		if b.o.wholeFile != "" {
			fmt.Printf("N=%d: whole file%s ...\n", n, round)
			w, err := b.sequence(ctx, n, fmt.Sprintf("whole-%d", i), wholeFileConfig, false, false)
			if err != nil {
				return err
			}
			wholes = append(wholes, w)
		}
	}
	r.set = medianRuns(sets)
	if len(wholes) > 0 {
		w := medianRuns(wholes)
		r.whole = &w
	}
	return nil
}

// medianRuns returns, for each command, its figures in the run whose wall
// time is the median of the runs (the lower median for an even count).
func medianRuns(runs [][steps]result) [steps]result {
	var out [steps]result
	for step := range out {
		col := make([]result, len(runs))
		for i, run := range runs {
			col[i] = run[step]
		}
		sort.Slice(col, func(i, j int) bool { return col[i].wall < col[j].wall })
		out[step] = col[(len(col)-1)/2]
	}
	return out
}

// sequence plans, applies and plans again the configuration of n grants
// in a fresh sandbox, then plans it with the port of one grant changed.
// With logBatches, qtail's debug log records its batches (and is not
// profiled).
func (b *bench) sequence(ctx context.Context, n int, name string, configOf func(n int, changed bool) (string, error), qtail, logBatches bool) ([steps]result, error) {
	var out [steps]result
	config, err := configOf(n, false)
	if err != nil {
		return out, err
	}
	changed, err := configOf(n, true)
	if err != nil {
		return out, err
	}
	world, err := sandbox.New(sandbox.Options{Latency: b.o.latency, DeployTime: time.Second})
	if err != nil {
		return out, err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return out, err
	}
	srv := &http.Server{Handler: world.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()
	base := "http://" + ln.Addr().String()

	dir := filepath.Join(b.work, fmt.Sprintf("n%d", n), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return out, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o600); err != nil {
		return out, err
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+b.rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	for k, v := range world.Env(base) {
		env = append(env, k+"="+v)
	}
	switch {
	case logBatches:
		// The Store's debug records, and none of the SDK's.
		env = append(env, "TF_LOG_PROVIDER=DEBUG", "TF_LOG_SDK=OFF", "TF_LOG_SDK_FRAMEWORK=OFF", "TF_LOG_SDK_PROTO=OFF")
	}
	p := fmt.Sprintf("-parallelism=%d", b.o.parallelism)
	commands := [steps][]string{
		{"plan", "-input=false", "-lock=false", p},
		{"apply", "-auto-approve", "-input=false", p},
		{"plan", "-input=false", "-detailed-exitcode", p},
		{"plan", "-input=false", "-lock=false", "-detailed-exitcode", p},
	}
	for i, args := range commands {
		if i == steps-1 {
			if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(changed), 0o600); err != nil {
				return out, err
			}
		}
		logFile := filepath.Join(dir, fmt.Sprintf("%d-%s.tflog", i, args[0]))
		cmdEnv := env
		if logBatches {
			cmdEnv = append(slicesClone(env), "TF_LOG_PATH="+logFile)
		}
		if qtail && !logBatches && b.o.pprof != "" {
			// One directory of profiles per configuration and command.
			prof, err := filepath.Abs(filepath.Join(b.o.pprof, fmt.Sprintf("%s-%d-%d-%s", name, n, i, args[0])))
			if err != nil {
				return out, err
			}
			if err := os.MkdirAll(prof, 0o755); err != nil {
				return out, err
			}
			cmdEnv = append(slicesClone(env), "QTAIL_CPUPROFILE_DIR="+prof)
		}
		before, err := tfrun.Calls(ctx, base)
		if err != nil {
			return out, err
		}
		start := time.Now()
		code, output, peak, cpu, tfCPU, err := terraformPeak(ctx, b.o.terraform, dir, cmdEnv, args)
		wall := time.Since(start)
		if err != nil {
			return out, err
		}
		name := fmt.Sprintf("%d-%s.log", i, args[0])
		if err := os.WriteFile(filepath.Join(dir, name), output, 0o600); err != nil {
			return out, err
		}
		if want := map[bool]int{false: 0, true: 2}[i == steps-1]; code != want {
			return out, fmt.Errorf("terraform %s exited with %d:\n%s", args[0], code, tfrun.Tail(output, 40))
		}
		after, err := tfrun.Calls(ctx, base)
		if err != nil {
			return out, err
		}
		out[i] = result{
			gets: after[routeGet] - before[routeGet], posts: after[routeSet] - before[routeSet],
			validates: after[routeValidate] - before[routeValidate], wall: wall,
			lines: bytes.Count(output, []byte("\n")), peak: peak, cpu: cpu, tfCPU: tfCPU,
		}
		if logBatches {
			if out[i].batches, err = readBatches(logFile); err != nil {
				return out, err
			}
		}
	}
	if qtail {
		body, _ := world.Tailnet.Policy()
		if got := strings.Count(string(body), "// qtail:grant:"); got != n {
			return out, fmt.Errorf("the policy file holds %d qtail grants after apply, want %d", got, n)
		}
	}
	return out, nil
}

// mib formats a memory size, or "-" when it was not measured.
func mib(b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// terraform runs one command and returns its exit code and output.
func terraform(ctx context.Context, tf, dir string, env, args []string) (int, []byte, error) {
	code, out, _, _, _, err := terraformPeak(ctx, tf, dir, env, args)
	return code, out, err
}

// terraformPeak runs one command and returns its exit code, its output,
// the peak resident memory, in bytes, of the largest provider process it
// started (0 where it cannot be read), the CPU time of its provider
// processes, and Terraform's own.
func terraformPeak(ctx context.Context, tf, dir string, env, args []string) (int, []byte, int64, time.Duration, time.Duration, error) {
	cmd := exec.CommandContext(ctx, tf, append([]string{"-chdir=" + dir}, args...)...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return 0, nil, 0, 0, 0, err
	}
	w := watchPeak(cmd.Process.Pid)
	err := cmd.Wait()
	peak, cpu := w.peak()
	// The usage of the process waited for: Terraform's own, without the
	// providers it started and reaped.
	tfCPU := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), out.Bytes(), peak, cpu, tfCPU, nil
	}
	return 0, out.Bytes(), peak, cpu, tfCPU, err
}

var fieldRE = regexp.MustCompile(`(\w+)=("(?:[^"\\]|\\.)*"|\S+)`)

// readBatches reads the batch records of the provider's debug log.
func readBatches(path string) ([]batch, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []batch
	for _, line := range strings.Split(string(data), "\n") {
		i := strings.Index(line, "policy batch:")
		if i < 0 {
			continue
		}
		f := map[string]string{}
		for _, m := range fieldRE.FindAllStringSubmatch(line[i:], -1) {
			f[m[1]] = strings.Trim(m[2], `"`)
		}
		size, _ := strconv.Atoi(f["size"])
		wait, _ := strconv.Atoi(f["wait_ms"])
		out = append(out, batch{kind: f["batch"], size: size, wait: time.Duration(wait) * time.Millisecond, reason: f["reason"]})
	}
	return out, nil
}

// sets measures, for -sets-only, one resource of N grants: qtail_grants,
// the framework provider that calls no API, and the whole file.
func (b *bench) sets(ctx context.Context, r *report) (*report, error) {
	n := r.n
	var err error
	if !b.o.noReference {
		fmt.Printf("N=%d: one resource of a provider that calls no API ...\n", n)
		if r.pluginSet, err = b.sequence(ctx, n, "plugin-set", pluginSetConfig, false, false); err != nil {
			return nil, err
		}
	}
	if err := b.setAndWhole(ctx, r); err != nil {
		return nil, err
	}
	return r, nil
}

// printSets writes the report of -sets-only and reports whether every
// target was met.
func (r *report) printSets(w io.Writer) bool {
	fmt.Fprintf(w, "\nN = %d grants in one resource, %s per API call\n", r.n, r.o.latency)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "command\tresource\tpolicy reads\twrites\tvalidations\twall\tper 1,000 grants: wall\tprovider CPU\tTerraform CPU\tprovider peak memory\t")
	per := func(d time.Duration) float64 { return d.Seconds() * 1000 / float64(r.n) }
	row := func(cmd, who string, res result) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.2fs\t%.3fs\t%.3fs\t%.3fs\t%s\t\n", cmd, who, res.gets, res.posts, res.validates, res.wall.Seconds(),
			per(res.wall), per(res.cpu), per(res.tfCPU), mib(res.peak))
	}
	for i, cmd := range commands {
		cmd = strings.Replace(cmd, "N", strconv.Itoa(r.n), 1)
		row(cmd, fmt.Sprintf("1 qtail_grants of %d", r.n), r.set[i])
		if r.whole != nil {
			row("", "tailscale_acl (whole file)", r.whole[i])
		}
		if !r.o.noReference {
			row("", "1 noop_grants (framework provider, no API)", r.pluginSet[i])
		}
	}
	_ = tw.Flush()
	ok := r.set[0].validates <= 1 && r.set[1].posts <= 1
	fmt.Fprintf(w, "  qtail_grants: %d validation(s) at plan, %d write(s) at apply\n", r.set[0].validates, r.set[1].posts)
	if r.whole != nil {
		for i, cmd := range commands {
			fmt.Fprintf(w, "  ratio to the whole file, %s: %.2fx\n", strings.Replace(cmd, "N", strconv.Itoa(r.n), 1), r.set[i].wall.Seconds()/r.whole[i].wall.Seconds())
		}
	}
	return ok
}

// print writes the report and reports whether every target was met.
//
// The targets: for qtail_grant, resources applied one by one, the policy
// calls stay at the floor (ceil(N/p) validations at plan, ceil(N/p)+2
// writes at apply); for qtail_grants, one resource holding the N grants,
// the wall times stay close to the whole-file resource (up to N = 200:
// apply within 2.5x, plan with no change within 1.5x; at N >= 1,000:
// apply within 15 s, plan with no change within 2 s).
func (r *report) print(w io.Writer) bool {
	n, p, lat := r.n, r.o.parallelism, r.o.latency
	waves := (n + p - 1) / p
	load := "quiet machine"
	if r.o.hogs > 0 {
		load = fmt.Sprintf("%d CPU hog(s) beside", r.o.hogs)
	}
	fmt.Fprintf(w, "\nN = %d grants, %s per API call, -parallelism=%d, %s\n", n, lat, p, load)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "command\tresource\tpolicy reads\twrites\tvalidations\twall\toutput lines\tprovider peak memory\t")
	row := func(cmd, who string, res result) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.2fs\t%d\t%s\t\n", cmd, who, res.gets, res.posts, res.validates, res.wall.Seconds(), res.lines, mib(res.peak))
	}
	q := [steps]result{r.planAdd, r.apply, r.planNop, r.onePort}
	for i, cmd := range commands {
		cmd = strings.Replace(cmd, "N", strconv.Itoa(n), 1)
		row(cmd, fmt.Sprintf("%d qtail_grant", n), q[i])
		row("", fmt.Sprintf("1 qtail_grants of %d", n), r.set[i])
		if r.whole != nil {
			row("", "tailscale_acl (whole file)", r.whole[i])
		}
		fmt.Fprintf(tw, "\tnoop_grant (framework provider, no API)\t-\t-\t-\t%.2fs\t%d\t%s\t\n", r.plugin[i].wall.Seconds(), r.plugin[i].lines, mib(r.plugin[i].peak))
		fmt.Fprintf(tw, "\t1 noop_grants (framework provider, no API)\t-\t-\t-\t%.2fs\t%d\t%s\t\n", r.pluginSet[i].wall.Seconds(), r.pluginSet[i].lines, mib(r.pluginSet[i].peak))
		fmt.Fprintf(tw, "\tterraform_data (no API)\t-\t-\t-\t%.2fs\t%d\t-\t\n", r.alone[i].wall.Seconds(), r.alone[i].lines)
	}
	_ = tw.Flush()

	floor := func(i, calls int) time.Duration { return r.alone[i].wall + time.Duration(calls)*lat }
	fmt.Fprintf(w, "qtail_grant's floor (%d waves of resources applied one by one): plan adding N = Terraform alone + 1 read + %d validations = %.2fs; "+
		"apply = Terraform alone + 1 read + %d writes = %.2fs (+ %d validations and a read if its plan is counted, as `terraform apply` does: %.2fs); "+
		"plan with no change = Terraform alone + 1 read = %.2fs\n",
		waves, waves, floor(0, 1+waves).Seconds(), waves, floor(1, 1+waves).Seconds(), waves, (floor(1, 1+waves) + time.Duration(1+waves)*lat).Seconds(),
		floor(2, 1).Seconds())

	// The same floor above a provider of the same framework that calls
	// no API: what any resource-per-grant design costs.
	pfloor := [3]time.Duration{
		r.plugin[0].wall + time.Duration(1+waves)*lat,
		r.plugin[1].wall + time.Duration(2+2*waves)*lat,
		r.plugin[2].wall + lat,
	}
	fmt.Fprintf(w, "qtail_grant's floor above noop_grant (same calls, a framework provider's own cost): plan adding N %.2fs, apply %.2fs, "+
		"plan with no change %.2fs; qtail_grant is at %.2fx, %.2fx and %.2fx of it\n",
		pfloor[0].Seconds(), pfloor[1].Seconds(), pfloor[2].Seconds(),
		r.planAdd.wall.Seconds()/pfloor[0].Seconds(), r.apply.wall.Seconds()/pfloor[1].Seconds(), r.planNop.wall.Seconds()/pfloor[2].Seconds())

	// The same above one resource of the same shape that calls no API.
	sfloor := [3]time.Duration{r.pluginSet[0].wall + 2*lat, r.pluginSet[1].wall + 4*lat, r.pluginSet[2].wall + lat}
	fmt.Fprintf(w, "qtail_grants' floor above noop_grants (1 read and 1 validation at plan, the same plus 1 write at apply): plan adding N %.2fs, "+
		"apply %.2fs, plan with no change %.2fs; qtail_grants is at %.2fx, %.2fx and %.2fx of it\n",
		sfloor[0].Seconds(), sfloor[1].Seconds(), sfloor[2].Seconds(),
		r.set[0].wall.Seconds()/sfloor[0].Seconds(), r.set[1].wall.Seconds()/sfloor[1].Seconds(), r.set[2].wall.Seconds()/sfloor[2].Seconds())

	ok := true
	check := func(what string, good bool) {
		verdict := "ok"
		if !good {
			verdict, ok = "MISSED", false
		}
		fmt.Fprintf(w, "  target %-78s %s\n", what+":", verdict)
	}
	check(fmt.Sprintf("qtail_grant, plan adding N: validations %d <= ceil(N/p) = %d", r.planAdd.validates, waves), r.planAdd.validates <= waves)
	check(fmt.Sprintf("qtail_grant, apply: writes %d <= ceil(N/p)+2 = %d", r.apply.posts, waves+2), r.apply.posts <= waves+2)
	check(fmt.Sprintf("qtail_grants, plan adding N: validations %d <= 1", r.set[0].validates), r.set[0].validates <= 1)
	check(fmt.Sprintf("qtail_grants, apply: writes %d <= 1", r.set[1].posts), r.set[1].posts <= 1)
	if r.whole != nil {
		ratio := func(res [steps]result, i int) float64 { return res[i].wall.Seconds() / r.whole[i].wall.Seconds() }
		fmt.Fprintf(w, "  ratio to the whole file, qtail_grant:  plan adding N %.2fx, apply %.2fx, plan with no change %.2fx, plan of one port %.2fx\n",
			ratio(q, 0), ratio(q, 1), ratio(q, 2), ratio(q, 3))
		fmt.Fprintf(w, "  ratio to the whole file, qtail_grants: plan adding N %.2fx, apply %.2fx, plan with no change %.2fx, plan of one port %.2fx\n",
			ratio(r.set, 0), ratio(r.set, 1), ratio(r.set, 2), ratio(r.set, 3))
		if n <= 200 {
			check(fmt.Sprintf("qtail_grants, apply within 2.5x of the whole file (%.2fx)", ratio(r.set, 1)), ratio(r.set, 1) <= 2.5)
			check(fmt.Sprintf("qtail_grants, plan with no change within 1.5x of the whole file (%.2fx)", ratio(r.set, 2)), ratio(r.set, 2) <= 1.5)
		} else {
			for i, cmd := range commands {
				check(fmt.Sprintf("qtail_grants, %s within 1.5x of the whole file (%.2fx)", strings.Replace(cmd, "N", strconv.Itoa(n), 1), ratio(r.set, i)), ratio(r.set, i) <= 1.5)
			}
		}
	}
	if n >= 1000 {
		check(fmt.Sprintf("qtail_grants, apply within 15s (%.1fs)", r.set[1].wall.Seconds()), r.set[1].wall <= 15*time.Second)
		check(fmt.Sprintf("qtail_grants, plan with no change within 2s (%.1fs)", r.set[2].wall.Seconds()), r.set[2].wall <= 2*time.Second)
	}
	for i, cmd := range commands[:3] {
		histogram(w, strings.Replace(cmd, "N", strconv.Itoa(n), 1), q[i].batches)
	}
	return ok
}

// histogram prints the sizes, waits and reasons of the batches of one
// command.
func histogram(w io.Writer, cmd string, batches []batch) {
	kinds := map[string][]batch{}
	for _, b := range batches {
		kinds[b.kind] = append(kinds[b.kind], b)
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		bs := kinds[k]
		sizes := map[int]int{}
		reasons := map[string]int{}
		bounds := []time.Duration{10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond}
		waits := make([]int, len(bounds)+1)
		var total time.Duration
		for _, b := range bs {
			sizes[b.size]++
			reasons[b.reason]++
			total += b.wait
			i := sort.Search(len(bounds), func(i int) bool { return b.wait < bounds[i] })
			waits[i]++
		}
		fmt.Fprintf(w, "  %s: %d %s batches; sizes %s; waits %s (total %.2fs); started when %s\n",
			cmd, len(bs), k, countsOf(sizes), waitBuckets(bounds, waits), total.Seconds(), reasonsOf(reasons))
	}
}

func countsOf(m map[int]int) string {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(keys)))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d x%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func waitBuckets(bounds []time.Duration, counts []int) string {
	var parts []string
	lo := time.Duration(0)
	for i, c := range counts {
		label := fmt.Sprintf(">=%dms", lo.Milliseconds())
		if i < len(bounds) {
			label = fmt.Sprintf("%d-%dms", lo.Milliseconds(), bounds[i].Milliseconds())
			lo = bounds[i]
		}
		if c > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", label, c))
		}
	}
	return strings.Join(parts, ", ")
}

func reasonsOf(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

const header = "terraform {\n  required_providers {\n%s  }\n}\n"

// grantsConfig is a configuration of n qtail_grant.
func grantsConfig(n int, changed bool) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, header, "    qtail = {\n      source = \"qtail/qtail\"\n    }\n")
	b.WriteString("\nprovider \"qtail\" {}\n")
	for i := range n {
		g := grant(i, changed)
		fmt.Fprintf(&b, "\nresource \"qtail_grant\" \"g%d\" {\n  name = \"bench-%d\"\n  src  = [%q]\n  dst  = [%q]\n  ip   = [%q]\n}\n",
			i, i, g.Src[0], g.Dst[0], g.IP[0])
	}
	return b.String(), nil
}

// grantSetConfig is a configuration of one qtail_grants holding n grants:
// the same grants as grantsConfig, with the same names.
func grantSetConfig(n int, changed bool) (string, error) {
	return setConfig("qtail", "qtail_grants", n, changed), nil
}

// setConfig is one resource of type typ of provider name (qtail/name)
// holding n grants in its map grants.
func setConfig(name, typ string, n int, changed bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, header, fmt.Sprintf("    %s = {\n      source = \"qtail/%s\"\n    }\n", name, name))
	fmt.Fprintf(&b, "\nprovider %q {}\n\nresource %q \"bench\" {\n  grants = {\n", name, typ)
	for i := range n {
		g := grant(i, changed)
		fmt.Fprintf(&b, "    \"bench-%d\" = { src = [%q], dst = [%q], ip = [%q] }\n", i, g.Src[0], g.Dst[0], g.IP[0])
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// pluginConfig is a configuration of n noop_grant, with the grants'
// attributes.
func pluginConfig(n int, changed bool) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, header, "    noop = {\n      source = \"qtail/noop\"\n    }\n")
	for i := range n {
		g := grant(i, changed)
		fmt.Fprintf(&b, "\nresource \"noop_grant\" \"g%d\" {\n  name = \"bench-%d\"\n  src  = [%q]\n  dst  = [%q]\n  ip   = [%q]\n}\n",
			i, i, g.Src[0], g.Dst[0], g.IP[0])
	}
	return b.String(), nil
}

// pluginSetConfig is one noop_grants holding n grants.
func pluginSetConfig(n int, changed bool) (string, error) {
	return setConfig("noop", "noop_grants", n, changed), nil
}

// aloneConfig is a configuration of n terraform_data, which call no API.
func aloneConfig(n int, changed bool) (string, error) {
	var b strings.Builder
	for i := range n {
		g := grant(i, changed)
		fmt.Fprintf(&b, "resource \"terraform_data\" \"g%d\" {\n  input = { src = [%q], dst = [%q], ip = [%q] }\n}\n\n", i, g.Src[0], g.Dst[0], g.IP[0])
	}
	return b.String(), nil
}

// wholeFileConfig is one tailscale_acl holding the sandbox's policy and n
// grants: the same file as qtail's after its apply, without the markers.
func wholeFileConfig(n int, changed bool) (string, error) {
	std, err := hujson.Standardize([]byte(sandbox.DefaultPolicy))
	if err != nil {
		return "", err
	}
	var file map[string]any
	if err := json.Unmarshal(std, &file); err != nil {
		return "", err
	}
	grants, _ := file["grants"].([]any)
	for i := range n {
		grants = append(grants, grant(i, changed))
	}
	file["grants"] = grants
	body, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, header, "    tailscale = {\n      source = \"tailscale/tailscale\"\n    }\n")
	b.WriteString("\nprovider \"tailscale\" {}\n\nresource \"tailscale_acl\" \"policy\" {\n  overwrite_existing_content = true\n  acl = <<-EOT\n")
	for _, line := range strings.Split(string(body), "\n") {
		b.WriteString("    " + line + "\n")
	}
	b.WriteString("  EOT\n}\n")
	return b.String(), nil
}

// benchGrant is one grant of the benchmark.
type benchGrant struct {
	Src []string `json:"src"`
	Dst []string `json:"dst"`
	IP  []string `json:"ip"`
}

// grant is the grant i; with changed, the first grant has another port.
func grant(i int, changed bool) benchGrant {
	port := "tcp:443"
	if changed && i == 0 {
		port = "tcp:8443"
	}
	return benchGrant{
		Src: []string{"group:platform-ops"},
		Dst: []string{fmt.Sprintf("100.64.%d.%d", 10+i/250, 1+i%250)},
		IP:  []string{port},
	}
}
