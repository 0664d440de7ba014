package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// figures are what the run counts.
type figures struct {
	mu sync.Mutex
	// rounds after round 0; checks of the sandbox's state.
	rounds, checks                             int
	applies, plans, destroys, edits, recreated int
	// failedUnderFaults counts the applies and destroys that failed while
	// faults were injected; converged, those whose next run, without
	// faults, succeeded.
	failedUnderFaults, converged int
	// nonEmptyPlans counts the plans that had to be empty and were not.
	nonEmptyPlans int
	// faults counts the injected faults that requests met, by kind;
	// queued, those queued.
	faults, queued map[string]int
	editKinds      []string
	// answers counts the answers that call for a retry by API and status;
	// calls, every API call.
	answers map[string]int
	calls   int
	// findings are the checker's; failures, the other failed checks.
	findings []Finding
	failures []string
	wall     time.Duration
}

// inc adds one to the counter n.
func (f *figures) inc(n *int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	*n++
}

func (f *figures) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Println("FAILED: " + msg)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, msg)
}

func (f *figures) record(x Finding) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.findings = append(f.findings, x)
}

// ok reports whether every check passed.
func (f *figures) ok() bool { return len(f.findings) == 0 && len(f.failures) == 0 }

func (f *figures) print(w io.Writer, seed int64) {
	byKind := map[string]int{}
	for _, x := range f.findings {
		byKind[x.Kind]++
	}
	edits := map[string]int{}
	for _, e := range f.editKinds {
		edits[e]++
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nsoak figures (seed %d)\n", seed)
	fmt.Fprintf(tw, "rounds\t%d (after round 0)\n", f.rounds)
	fmt.Fprintf(tw, "applies\t%d\n", f.applies)
	fmt.Fprintf(tw, "plans\t%d\n", f.plans)
	fmt.Fprintf(tw, "destroys\t%d (%d regions destroyed and re-created during the rounds)\n", f.destroys, f.recreated)
	fmt.Fprintf(tw, "console edits\t%d (%s)\n", f.edits, countsLine(edits))
	fmt.Fprintf(tw, "faults injected (met / queued)\t%s\n", faultsLine(f.faults, f.queued))
	fmt.Fprintf(tw, "sandbox API calls\t%d\n", f.calls)
	fmt.Fprintf(tw, "answers calling for a retry\t%s\n", countsLine(f.answers))
	fmt.Fprintf(tw, "applies failed under faults\t%d, converged on the next apply: %d\n", f.failedUnderFaults, f.converged)
	fmt.Fprintf(tw, "plans not empty after a repair\t%d\n", f.nonEmptyPlans)
	fmt.Fprintf(tw, "checks of the sandbox\t%d\n", f.checks)
	fmt.Fprintf(tw, "lost / duplicated / orphaned\t%d / %d / %d\n", byKind[Lost], byKind[Duplicated], byKind[Orphan])
	fmt.Fprintf(tw, "hand-written policy changed\t%d\n", byKind[HandWritten])
	fmt.Fprintf(tw, "other failures\t%d\n", len(f.failures))
	fmt.Fprintf(tw, "wall time\t%s\n", f.wall.Round(time.Second))
	_ = tw.Flush()
	verdict := "PASS"
	if !f.ok() {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "soak: %s\n", verdict)
}

func countsLine(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range sortedCounts(m) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func faultsLine(met, queued map[string]int) string {
	if len(queued) == 0 {
		return "none"
	}
	kinds := make([]string, 0, len(queued))
	for k := range queued {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s: %d / %d", k, met[k], queued[k]))
	}
	return strings.Join(parts, ", ")
}
