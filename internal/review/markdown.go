package review

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Marker is the first line of the Markdown report, an HTML comment that
// CI uses to find and update its pull request comment.
const Marker = "<!-- qtail-review -->"

// JSON writes the report as indented JSON.
func (r *Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Markdown writes the report for a pull request comment.
func (r *Report) Markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("%s\n## qtail plan review\n\n", Marker)
	w("%s\n\n", r.headline())
	var plans []string
	for _, p := range r.Plans {
		plans = append(plans, fmt.Sprintf("`%s` (%s)", p.Label, plural(p.Fragments, "fragment change", "fragment changes")))
	}
	for _, fp := range r.FailedPlans {
		plans = append(plans, fmt.Sprintf("`%s` (**failed**: %s)", fp.Label, plural(len(fp.Diagnostics), "error", "errors")))
	}
	w("Plans: %s. Tailnet: `%s`.\n", strings.Join(plans, ", "), r.Tailnet)
	if len(r.FailedPlans) > 0 {
		w("\nA plan that failed is not part of the access and policy sections below: its errors are the first findings.\n")
	}

	w("\n### Access\n\n")
	if r.Graph != "" {
		w("```mermaid\n%s```\n\n", r.Graph)
	}
	if len(r.Access) == 0 {
		w("The plans touch no exposed service, route or device.\n")
	} else {
		w("| Target | Port | Before | After | Change |\n|---|---|---|---|---|\n")
		for _, ta := range r.Access {
			name := fmt.Sprintf("`%s` (%s", ta.Name, ta.Kind)
			if ta.Status != "unchanged" {
				name += ", " + ta.Status
			}
			if len(ta.Tags) > 0 {
				name += ", " + code(ta.Tags)
			}
			name += ")"
			if ta.Note != "" || len(ta.Ports) == 0 {
				note := ta.Note
				if note == "" {
					note = "no rule names it on any port asked about"
				}
				w("| %s | | | | %s |\n", cell(name), cell(note))
				continue
			}
			for _, p := range ta.Ports {
				change := "unchanged"
				if p.changed() {
					var parts []string
					if len(p.Gained) > 0 {
						parts = append(parts, "**gained** "+code(p.Gained))
					}
					if len(p.Lost) > 0 {
						parts = append(parts, "**lost** "+code(p.Lost))
					}
					change = strings.Join(parts, "; ")
				}
				w("| %s | %d | %s | %s | %s |\n", cell(name), p.Port, cell(reach(p.Before)), cell(reach(p.After)), cell(change))
			}
		}
	}
	if len(r.Users) > 0 {
		w("\n#### Users\n\nWhat each user named by a changed grant reaches, as the destinations of the rules that apply to them.\n\n")
		w("| User | Gains | Loses | Unchanged |\n|---|---|---|---|\n")
		for _, u := range r.Users {
			if u.Unknown {
				w("| `%s` | %s | | |\n", u.User, cell("not known to the tailnet yet: "+u.Reason))
				continue
			}
			if u.After == nil {
				w("| `%s` | unknown: Tailscale refuses the planned policy file, so what they reach after the plans is unknown | | |\n", u.User)
				continue
			}
			w("| `%s` | %s | %s | %d |\n", u.User, cell(orNone(u.Gained)), cell(orNone(u.Lost)), len(u.Before)-len(u.Lost))
		}
	}

	if len(r.Principals) > 0 {
		w("\n#### Who gains or loses what\n\n| Principal | Gains | Loses |\n|---|---|---|\n")
		for _, p := range r.Principals {
			w("| `%s` | %s | %s |\n", cell(p.Principal), cell(orDash(p.Gains)), cell(orDash(p.Loses)))
		}
	}

	w("\n### Policy tests\n\n")
	if r.Validation.Passed && r.Validation.Tests == 0 {
		w("**Pass**: Tailscale accepts the planned policy file, which has no tests.\n")
	} else if r.Validation.Passed {
		w("**Pass**: Tailscale accepts the planned policy file, and runs its %s: they pass.\n", plural(r.Validation.Tests, "test", "tests"))
	} else {
		w("**Fail**: Tailscale refuses the planned policy file: %s\n", inline(r.Validation.Message))
		for _, f := range r.Validation.Failures {
			for _, e := range f.Errors {
				w("- `%s`: %s\n", f.User, inline(e))
			}
		}
		for _, bt := range r.BrokenTests {
			w("\n%s\n", inline(bt.Message))
		}
	}
	for _, t := range []struct {
		what  string
		names []string
	}{{"added", r.Tests.Added}, {"changed", r.Tests.Changed}, {"removed", r.Tests.Removed}} {
		if len(t.names) > 0 {
			w("\nTests %s by the plans: %s.\n", t.what, code(t.names))
		}
	}

	w("\n### Findings\n\n")
	if len(r.Findings) == 0 {
		w("None.\n")
	}
	for _, f := range r.Findings {
		age := "already the case"
		if f.New {
			age = "new"
		}
		w("- **%s** (%s): %s\n", f.Severity, age, inline(f.Message))
	}

	w("\n### Policy fragments\n\n")
	if len(r.Fragments) == 0 {
		w("The plans change no fragment of the policy file.\n")
	} else {
		w("| Change | Fragment | Resource | Plan |\n|---|---|---|---|\n")
		for _, c := range r.Fragments {
			action := c.Action
			if c.Unknown {
				action += " (known after apply)"
			}
			w("| %s | `%s` | `%s` | `%s` |\n", action, cell(c.Fragment), cell(c.Address), cell(c.Plan))
		}
	}
	if r.PolicyDiff != "" {
		w("\n<details><summary>Policy file diff (%s)</summary>\n\n```diff\n%s```\n\n</details>\n", plural(strings.Count(r.PolicyDiff, "\n"), "line", "lines"), r.PolicyDiff)
	}
	if len(r.Notes) > 0 {
		w("\n### Notes\n\n")
		for _, n := range r.Notes {
			w("- %s\n", inline(n))
		}
	}
	return b.String()
}

// headline sums the report up in one line.
func (r *Report) headline() string {
	var parts []string
	if r.AccessChanged {
		c := r.Counts
		parts = append(parts, fmt.Sprintf("**Access changes**: %s touched, %s gaining, %d losing",
			plural(c.Targets, "service", "services"), plural(c.Gaining, "principal", "principals"), c.Losing))
	} else {
		parts = append(parts, "**No access change**")
	}
	if len(r.FailedPlans) > 0 {
		parts = append(parts, "**"+plural(len(r.FailedPlans), "plan", "plans")+" failed**")
	}
	if r.Validation.Passed {
		parts = append(parts, fmt.Sprintf("policy tests **pass** (%d)", r.Validation.Tests))
	} else {
		parts = append(parts, "policy **refused** by Tailscale")
	}
	parts = append(parts, plural(len(r.Findings), "finding", "findings"))
	return strings.Join(parts, " · ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func code(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = "`" + s + "`"
	}
	return strings.Join(q, ", ")
}

func reach(list []string) string {
	if len(list) == 0 {
		return "no one"
	}
	return code(list)
}

// orDash joins a list whose entries are already formatted.
func orDash(list []string) string {
	if len(list) == 0 {
		return "-"
	}
	return strings.Join(list, ", ")
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "-"
	}
	return code(list)
}

// cell escapes a table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// inline keeps a message on one line.
func inline(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
