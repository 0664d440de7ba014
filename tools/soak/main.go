// Command soak runs several region configurations of qtail against one
// sandbox, in parallel and over many rounds, with random faults, and checks
// after every round, against the sandbox's own state, that nothing was
// lost, duplicated or left behind.
//
// Each region (examples/modules/region with an operator, two exposed
// applications, their grants and policy tests, a connector in every other
// region, and a qtail_grants beside it) is a Terraform root with a state of
// its own; all share one tailnet policy file that starts with hand-written
// content. Every round, all regions at once:
//
//  1. apply, with faults injected (429 with Retry-After, 5xx, answers lost
//     after the server acted, dropped connections, 412 storms on the
//     policy write, latency), then plan;
//  2. undergo a console edit picked at random (a grant's ports changed or a
//     grant removed in the policy file, a policy test removed, an
//     annotation removed, a group detached or deleted, the operator's chart
//     version changed or the connector deleted in Qovery, a device deleted,
//     a connector's routes revoked);
//  3. repair: apply, with faults again; an apply that failed because of a
//     fault is counted and applied once more without faults;
//  4. plan, without faults, which must be empty.
//
// Then the checker reads the sandbox. Some rounds also destroy one region,
// check that nothing of it is left, and re-create it. At the end every
// region is destroyed and the policy file must be the hand-written one,
// byte for byte.
//
//	go run ./tools/soak [-regions 8] [-rounds 0] [-duration 10m] [-seed 1]
//
// The run stops after -rounds rounds (0: no limit) or, once -duration has
// passed, after the round in progress. It prints the seed, the figures, and
// exits with 1 when a check failed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/tools/internal/tfrun"
)

type options struct {
	regions     int
	rounds      int
	duration    time.Duration
	seed        int64
	deployTime  time.Duration
	poll        time.Duration
	parallelism int
	terraform   string
	keep        bool
}

func main() {
	var o options
	flag.IntVar(&o.regions, "regions", len(regionNames), fmt.Sprintf("number of region configurations (1 to %d)", len(regionNames)))
	flag.IntVar(&o.rounds, "rounds", 0, "number of rounds (0: as many as -duration allows)")
	flag.DurationVar(&o.duration, "duration", 10*time.Minute, "no round starts after this much time")
	flag.Int64Var(&o.seed, "seed", 1, "seed of the random choices (faults, console edits, destroys)")
	flag.DurationVar(&o.deployTime, "deploy-time", 300*time.Millisecond, "how long a simulated Qovery deployment takes")
	flag.DurationVar(&o.poll, "poll", 200*time.Millisecond, "the provider's poll interval while it waits")
	flag.IntVar(&o.parallelism, "parallelism", 10, "terraform -parallelism")
	flag.StringVar(&o.terraform, "terraform", "", "terraform binary (default: the one on PATH)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (roots, states, logs)")
	flag.Parse()
	log.SetFlags(0)
	if o.regions < 1 || o.regions > len(regionNames) {
		log.Fatalf("soak: -regions %d: want 1 to %d", o.regions, len(regionNames))
	}
	ok, err := run(o)
	if err != nil {
		log.Fatalf("soak: %v", err)
	}
	if !ok {
		os.Exit(1)
	}
}

// soak is one run.
type soak struct {
	o       options
	tf      string
	env     []string
	world   *sandbox.World
	rng     *rand.Rand
	regions []*region
	hand    []byte
	logs    string
	// recent are the calls by route of the last run of each phase, and
	// seen those of every phase so far: where faults go.
	recent  map[string]map[string]int
	seen    map[string]int
	counter *statusCounter
	// injected are the faults queued for the phase in progress.
	injected []faults.Rule
	fig      figures
}

func run(o options) (bool, error) {
	start := time.Now()
	tf, err := tfrun.Terraform(o.terraform)
	if err != nil {
		return false, err
	}
	root, err := tfrun.ModuleRoot("run soak from inside the qtail module (make soak)")
	if err != nil {
		return false, err
	}
	work, err := os.MkdirTemp("", "qtail-soak-")
	if err != nil {
		return false, err
	}
	if o.keep {
		fmt.Printf("work directory: %s\n", work)
	} else {
		defer func() { _ = os.RemoveAll(work) }()
	}
	ctx := context.Background()
	bin := filepath.Join(work, "bin")
	fmt.Println("building the provider ...")
	if err := tfrun.BuildProvider(ctx, root, bin, "bench"); err != nil {
		return false, err
	}
	rc := filepath.Join(work, "terraformrc")
	if err := tfrun.WriteCLIConfig(rc, map[string]string{"qtail/qtail": bin}); err != nil {
		return false, err
	}
	names := regionNames[:o.regions]
	s := &soak{o: o, tf: tf, rng: rand.New(rand.NewSource(o.seed)), hand: []byte(handWritten(names)), logs: filepath.Join(work, "logs")}
	s.fig.faults = map[string]int{}
	s.fig.answers = map[string]int{}
	s.fig.queued = map[string]int{}
	s.recent = map[string]map[string]int{}
	s.seen = map[string]int{}
	s.world, err = sandbox.New(sandbox.Options{DeployTime: o.deployTime, Regions: names, InitialPolicy: s.hand})
	if err != nil {
		return false, err
	}
	defer s.world.Qovery.Close()
	s.counter = &statusCounter{next: s.world.Handler(), by: map[string]int{}}
	base, stop, err := tfrun.Serve(ctx, s.counter)
	if err != nil {
		return false, err
	}
	defer stop()
	settings := s.world.Env(base)
	settings["QTAIL_BENCH_POLL_INTERVAL"] = o.poll.String()
	s.env = tfrun.Env(rc, settings)
	if err := os.MkdirAll(s.logs, 0o755); err != nil {
		return false, err
	}
	module := filepath.Join(root, "examples", "modules", "region")
	seed := s.world.Seed()
	for i, name := range names {
		r := seedRegion(seed, name, i, filepath.Join(work, "regions", name))
		if err := os.MkdirAll(r.dir, 0o755); err != nil {
			return false, err
		}
		rel, err := filepath.Rel(r.dir, module)
		if err != nil {
			return false, err
		}
		if err := os.WriteFile(filepath.Join(r.dir, "main.tf"), []byte(r.config(seed.OrganizationID, rel)), 0o600); err != nil {
			return false, err
		}
		s.regions = append(s.regions, r)
	}
	fmt.Printf("seed %d; %d regions (%s); %d rounds at most, none started after %s\n", o.seed, len(names), strings.Join(names, ", "), o.rounds, o.duration)

	if err := s.each(ctx, func(r *region) error { return s.must(ctx, r, "get", "get", "-no-color") }); err != nil {
		return false, err
	}
	if err := s.initial(ctx); err != nil {
		return false, err
	}
	for round := 1; o.rounds == 0 || round <= o.rounds; round++ {
		if time.Since(start) >= o.duration {
			break
		}
		if err := s.round(ctx, round); err != nil {
			return false, err
		}
	}
	if err := s.teardown(ctx); err != nil {
		return false, err
	}
	s.fig.wall = time.Since(start)
	s.fig.calls = s.counter.total()
	s.fig.answers = s.counter.snapshot()
	s.fig.print(os.Stdout, o.seed)
	return s.fig.ok(), nil
}

// initial applies every region without faults: the first apply must
// succeed, and the plan after it be empty.
func (s *soak) initial(ctx context.Context) error {
	fmt.Println("round 0: the first apply of every region ...")
	start := time.Now()
	if err := s.each(ctx, func(r *region) error {
		if err := s.must(ctx, r, "r0-apply", applyArgs(s.o.parallelism)...); err != nil {
			return err
		}
		s.fig.inc(&s.fig.applies)
		return s.emptyPlan(ctx, r, "r0-plan")
	}); err != nil {
		return err
	}
	s.check("round 0", s.regions, nil)
	s.learn("initial", s.world.Faults.Calls())
	s.world.Faults.Reset()
	fmt.Printf("round 0 done in %s: %d routes called\n", time.Since(start).Round(time.Second), len(s.seen))
	return nil
}

// round is one round of every region.
func (s *soak) round(ctx context.Context, n int) error {
	start := time.Now()
	s.fig.rounds++
	tag := fmt.Sprintf("r%d", n)
	// 1. Apply under faults, then plan.
	s.inject("apply", 2+s.rng.Intn(5))
	failedApply := make([]bool, len(s.regions))
	if err := s.each(ctx, func(r *region) error {
		ok, err := s.apply(ctx, r, tag+"-apply")
		failedApply[r.index] = !ok
		return err
	}); err != nil {
		return err
	}
	s.clearFaults("apply")
	if err := s.each(ctx, func(r *region) error {
		code, err := s.plan(ctx, r, tag+"-plan")
		if err == nil && code != 0 && !failedApply[r.index] {
			s.fig.fail("%s: %s: the plan after a successful apply is not empty (exit code %d; see %s)", tag, r.name, code, s.logPath(r, tag+"-plan"))
		}
		return err
	}); err != nil {
		return err
	}
	// 2. A console edit in each region.
	edits := make([]consoleEdit, len(s.regions))
	for _, r := range s.regions {
		edits[r.index] = pickEdit(s.rng, r)
	}
	for _, r := range s.regions {
		e := edits[r.index]
		if err := e.do(s.world, r); err != nil {
			s.fig.fail("%s: %s: console edit %s: %v", tag, r.name, e.name, err)
			continue
		}
		s.fig.inc(&s.fig.edits)
		s.fig.mu.Lock()
		s.fig.editKinds = append(s.fig.editKinds, e.name)
		s.fig.mu.Unlock()
	}
	// 3. Repair under faults; a failed repair is applied again without.
	s.inject("repair", 1+s.rng.Intn(4))
	failedRepair := make([]bool, len(s.regions))
	if err := s.each(ctx, func(r *region) error {
		ok, err := s.apply(ctx, r, tag+"-repair")
		failedRepair[r.index] = !ok
		return err
	}); err != nil {
		return err
	}
	s.clearFaults("repair")
	// 4. Converge and plan.
	if err := s.each(ctx, func(r *region) error {
		if failedApply[r.index] || failedRepair[r.index] {
			if failedRepair[r.index] {
				if err := s.must(ctx, r, tag+"-repair-again", applyArgs(s.o.parallelism)...); err != nil {
					s.fig.fail("%s: %s: the apply after a failed repair failed without faults: %v", tag, r.name, err)
					return nil
				}
				s.fig.inc(&s.fig.applies)
			}
			s.fig.inc(&s.fig.converged)
		}
		return s.emptyPlan(ctx, r, tag+"-plan-after-repair")
	}); err != nil {
		return err
	}
	s.check(tag, s.regions, nil)
	// Sometimes one region is destroyed, checked gone, and re-created.
	if s.rng.Intn(3) == 0 {
		if err := s.recreate(ctx, tag, s.regions[s.rng.Intn(len(s.regions))]); err != nil {
			return err
		}
	}
	fmt.Printf("round %d done in %s: edits %s\n", n, time.Since(start).Round(time.Second), editsOf(edits))
	return nil
}

// recreate destroys one region, under faults, checks that nothing of it is
// left, and applies it again.
func (s *soak) recreate(ctx context.Context, tag string, r *region) error {
	tag += "-" + r.name
	s.inject("destroy", 1+s.rng.Intn(3))
	code, out, err := s.tfrun(ctx, r, tag+"-destroy", "destroy", "-auto-approve", "-input=false", "-no-color", fmt.Sprintf("-parallelism=%d", s.o.parallelism))
	s.clearFaults("destroy")
	if err != nil {
		return err
	}
	s.fig.inc(&s.fig.destroys)
	if code != 0 {
		s.fig.inc(&s.fig.failedUnderFaults)
		fmt.Printf("%s: the destroy failed under faults (it is run again; see %s):\n%s\n", tag, s.logPath(r, tag+"-destroy"), indent(errorLines(out)))
		if err := s.must(ctx, r, tag+"-destroy-again", "destroy", "-auto-approve", "-input=false", "-no-color"); err != nil {
			s.fig.fail("%s: the destroy after a failed destroy failed without faults: %v", tag, err)
			return nil
		}
		s.fig.inc(&s.fig.destroys)
		s.fig.inc(&s.fig.converged)
	}
	var live []*region
	for _, x := range s.regions {
		if x != r {
			live = append(live, x)
		}
	}
	s.check(tag+" destroyed", live, []*region{r})
	if err := s.must(ctx, r, tag+"-recreate", applyArgs(s.o.parallelism)...); err != nil {
		s.fig.fail("%s: re-creating the region failed: %v", tag, err)
		return nil
	}
	s.fig.inc(&s.fig.applies)
	s.fig.inc(&s.fig.recreated)
	if err := s.emptyPlan(ctx, r, tag+"-recreate-plan"); err != nil {
		return err
	}
	s.check(tag+" re-created", s.regions, nil)
	return nil
}

// teardown destroys every region without faults; nothing may be left but
// the hand-written policy file.
func (s *soak) teardown(ctx context.Context) error {
	fmt.Println("destroying every region ...")
	if err := s.each(ctx, func(r *region) error {
		if err := s.must(ctx, r, "destroy", "destroy", "-auto-approve", "-input=false", "-no-color", fmt.Sprintf("-parallelism=%d", s.o.parallelism)); err != nil {
			s.fig.fail("%s: the final destroy failed: %v", r.name, err)
			return nil
		}
		s.fig.inc(&s.fig.destroys)
		return nil
	}); err != nil {
		return err
	}
	s.check("after the destroys", nil, s.regions)
	if body, _ := s.world.Tailnet.Policy(); string(body) != string(s.hand) {
		s.fig.record(Finding{Kind: HandWritten, What: "after every region's destroy the policy file is not the hand-written one:\n" + lineDiff(s.hand, body)})
	}
	return nil
}

// check runs the checker on the sandbox's state.
func (s *soak) check(when string, live, gone []*region) {
	var lv, gn []Expectation
	for _, r := range live {
		lv = append(lv, r.expectation())
	}
	for _, r := range gone {
		gn = append(gn, r.expectation())
	}
	s.fig.checks++
	for _, f := range Check(snapshot(s.world), lv, gn, s.hand) {
		fmt.Printf("CHECK FAILED (%s): %s\n", when, f)
		s.fig.record(f)
	}
}

// apply runs an apply under faults: it reports whether it succeeded; a
// failure is counted, not fatal, as long as the next apply converges.
func (s *soak) apply(ctx context.Context, r *region, step string) (bool, error) {
	code, out, err := s.tfrun(ctx, r, step, applyArgs(s.o.parallelism)...)
	if err != nil {
		return false, err
	}
	s.fig.inc(&s.fig.applies)
	if code != 0 {
		s.fig.inc(&s.fig.failedUnderFaults)
		fmt.Printf("%s %s: the apply failed under faults (the next apply must converge; see %s):\n%s\n", step, r.name, s.logPath(r, step), indent(errorLines(out)))
		return false, nil
	}
	return true, nil
}

// plan runs a plan with -detailed-exitcode and returns its exit code.
func (s *soak) plan(ctx context.Context, r *region, step string) (int, error) {
	code, _, err := s.tfrun(ctx, r, step, "plan", "-detailed-exitcode", "-input=false", "-no-color", fmt.Sprintf("-parallelism=%d", s.o.parallelism))
	if err == nil {
		s.fig.inc(&s.fig.plans)
	}
	return code, err
}

// emptyPlan runs a plan that must be empty.
func (s *soak) emptyPlan(ctx context.Context, r *region, step string) error {
	code, err := s.plan(ctx, r, step)
	if err != nil {
		return err
	}
	if code != 0 {
		s.fig.inc(&s.fig.nonEmptyPlans)
		s.fig.fail("%s: %s: the plan is not empty (exit code %d):\n%s", step, r.name, code, indent(planLines(s.logPath(r, step))))
	}
	return nil
}

// must runs a command that must succeed.
func (s *soak) must(ctx context.Context, r *region, step string, args ...string) error {
	code, out, err := s.tfrun(ctx, r, step, args...)
	if err == nil && code != 0 {
		err = fmt.Errorf("terraform %s in %s exited with %d:\n%s", args[0], r.name, code, tfrun.Tail(out, 30))
	}
	return err
}

// tfrun runs one Terraform command in the region's root and keeps its
// output in the logs.
func (s *soak) tfrun(ctx context.Context, r *region, step string, args ...string) (int, []byte, error) {
	code, out, err := tfrun.Run(ctx, s.tf, r.dir, s.env, args...)
	_ = os.WriteFile(s.logPath(r, step), out, 0o600)
	return code, out, err
}

func (s *soak) logPath(r *region, step string) string {
	return filepath.Join(s.logs, r.name+"-"+step+".log")
}

// each runs fn for every region at once and joins the errors.
func (s *soak) each(_ context.Context, fn func(r *region) error) error {
	errs := make([]error, len(s.regions))
	var wg sync.WaitGroup
	for i, r := range s.regions {
		wg.Go(func() { errs[i] = fn(r) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func applyArgs(parallelism int) []string {
	return []string{"apply", "-auto-approve", "-input=false", "-no-color", "-compact-warnings", fmt.Sprintf("-parallelism=%d", parallelism)}
}

// errorLines returns the lines of Terraform's output that say what
// failed.
func errorLines(out []byte) string {
	var keep []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Error: ") || strings.HasPrefix(l, "│ Error: ") {
			keep = append(keep, strings.TrimPrefix(l, "│ "))
		}
	}
	if len(keep) == 0 {
		return tfrun.Tail(out, 6)
	}
	return strings.Join(keep, "\n")
}

// planLines returns what a plan would change, from its log.
func planLines(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "# ") || strings.HasPrefix(t, "Plan:") || strings.HasPrefix(t, "Error:") || strings.HasPrefix(t, "│ Error:") {
			keep = append(keep, t)
		}
	}
	if len(keep) == 0 {
		return tfrun.Tail(b, 10)
	}
	return strings.Join(keep, "\n")
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func editsOf(edits []consoleEdit) string {
	names := make([]string, len(edits))
	for i, e := range edits {
		names[i] = e.name
	}
	return strings.Join(names, ", ")
}
