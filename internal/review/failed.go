package review

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// FailedPlan is a plan that Terraform could not make, read from its
// machine-readable log (`terraform plan -json > PLAN.failed.json`): CI
// reviews it with the plans that succeeded, so that a pull request whose
// policy Tailscale refuses still gets a review that says why.
type FailedPlan struct {
	Label string `json:"label"`
	// Diagnostics are the plan's errors, in the order Terraform gave them.
	Diagnostics []PlanDiagnostic `json:"diagnostics"`
}

// PlanDiagnostic is one error of a failed plan.
type PlanDiagnostic struct {
	Summary string `json:"summary"`
	Detail  string `json:"detail,omitempty"`
	// Address is the resource the error is about, when Terraform says.
	Address string `json:"address,omitempty"`
	// Where is the file and line of the configuration.
	Where string `json:"where,omitempty"`
}

// logLine is one line of Terraform's machine-readable log.
type logLine struct {
	Level      string `json:"@level"`
	Type       string `json:"type"`
	Diagnostic *struct {
		Severity string `json:"severity"`
		Summary  string `json:"summary"`
		Detail   string `json:"detail"`
		Address  string `json:"address"`
		Range    *struct {
			Filename string `json:"filename"`
			Start    struct {
				Line int `json:"line"`
			} `json:"start"`
		} `json:"range"`
	} `json:"diagnostic"`
}

// isPlanLog reports whether b is Terraform's machine-readable log rather
// than the JSON of a plan: its first line is an object with "@level".
func isPlanLog(b []byte) bool {
	first, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	var l map[string]json.RawMessage
	if json.Unmarshal(first, &l) != nil {
		return false
	}
	_, ok := l["@level"]
	return ok
}

// readPlanLog reads the errors of a failed plan from its log.
func readPlanLog(path string, b []byte) (FailedPlan, error) {
	fp := FailedPlan{Label: filepath.Base(path), Diagnostics: []PlanDiagnostic{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	// A line holds a whole diagnostic, whose detail may be long (a
	// policy file, say): longer than the scanner's default limit.
	sc.Buffer(nil, 16*1024*1024)
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "diagnostic" || l.Diagnostic == nil || l.Diagnostic.Severity != "error" {
			continue
		}
		d := PlanDiagnostic{Summary: l.Diagnostic.Summary, Detail: l.Diagnostic.Detail, Address: l.Diagnostic.Address}
		if r := l.Diagnostic.Range; r != nil && r.Filename != "" {
			d.Where = fmt.Sprintf("%s line %d", r.Filename, r.Start.Line)
		}
		fp.Diagnostics = append(fp.Diagnostics, d)
	}
	if err := sc.Err(); err != nil {
		return fp, fmt.Errorf("reading the log of a failed plan %s: %w", path, err)
	}
	return fp, nil
}

// ReadInput reads one input of the review: the JSON of a plan (`terraform
// show -json PLANFILE`), or the machine-readable log of a plan that failed
// (`terraform plan -json`), which gives a FailedPlan instead.
func ReadInput(path string) (Plan, *FailedPlan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Plan{}, nil, err
	}
	return parseInput(path, b)
}

// parseInput reads b, the input of the review in the file path.
func parseInput(path string, b []byte) (Plan, *FailedPlan, error) {
	if isPlanLog(b) {
		fp, err := readPlanLog(path, b)
		if err != nil {
			return Plan{}, nil, err
		}
		return Plan{}, &fp, nil
	}
	p, err := parsePlan(path, b)
	return p, nil, err
}

// AddFailedPlans reports plans that Terraform could not make: each error
// is a finding (Tailscale's refusal, with the test it names and the
// fragments that break it, as the provider's diagnostic says), and the
// review's exit code is 1.
func (r *Report) AddFailedPlans(failed []FailedPlan) {
	for _, fp := range failed {
		r.FailedPlans = append(r.FailedPlans, fp)
		if len(fp.Diagnostics) == 0 {
			r.Findings = append(r.Findings, Finding{Kind: FindingPlanFailed, Severity: SeverityError, New: true,
				Message: fmt.Sprintf("The plan `%s` failed without an error in its log: see the plan job's output.", fp.Label)})
		}
		for _, d := range fp.Diagnostics {
			var b strings.Builder
			fmt.Fprintf(&b, "The plan `%s` failed", fp.Label)
			if d.Address != "" {
				fmt.Fprintf(&b, " on `%s`", d.Address)
			}
			if d.Where != "" {
				fmt.Fprintf(&b, " (%s)", d.Where)
			}
			fmt.Fprintf(&b, ": %s.", strings.TrimSuffix(d.Summary, "."))
			if d.Detail != "" {
				b.WriteString(" " + d.Detail)
			}
			r.Findings = append(r.Findings, Finding{Kind: FindingPlanFailed, Severity: SeverityError, New: true, Message: b.String()})
		}
	}
	sort.SliceStable(r.Findings, func(i, j int) bool { return r.Findings[i].Severity.rank() < r.Findings[j].Severity.rank() })
}
