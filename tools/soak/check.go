package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// Kinds of findings.
const (
	Lost        = "lost"
	Duplicated  = "duplicated"
	Orphan      = "orphan"
	HandWritten = "hand-written"
)

// Finding is one defect the checker found in the sandbox's state.
type Finding struct {
	Kind   string
	Region string
	What   string
}

func (f Finding) String() string {
	if f.Region == "" {
		return fmt.Sprintf("%s: %s", f.Kind, f.What)
	}
	return fmt.Sprintf("%s: %s: %s", f.Kind, f.Region, f.What)
}

// Expectation is what one region's configuration leaves in the sandbox
// once applied, or, for a region destroyed, what must be gone.
type Expectation struct {
	Region        string
	EnvironmentID string
	// Grants are the grants' names with their ip entries.
	Grants map[string][]string
	// Tests are the policy tests' names.
	Tests []string
	// Devices are the hostnames of the region's devices.
	Devices []string
	// Repositories are the names of the Helm repositories.
	Repositories []string
	// Helms is the number of Helm services in the environment.
	Helms int
	// Exposures are the hostnames of the exposed services by the ID of
	// their application.
	Exposures map[string]string
}

// Snapshot is the sandbox's own state, as the checker reads it.
type Snapshot struct {
	Policy  []byte
	Devices []string // hostnames
	Helms   []Helm
	// Repositories are the names of the organization's Helm
	// repositories.
	Repositories []string
	Groups       []Group
	// Attached are the annotations groups of each application, by ID.
	Attached map[string][]string
	// OAuthClients are the descriptions of the tailnet's OAuth clients.
	OAuthClients []string
}

// Helm is a Helm service of the snapshot.
type Helm struct {
	ID, EnvironmentID, Name, Chart string
}

// Group is an annotations group of the snapshot.
type Group struct {
	ID, Name    string
	Annotations map[string]string
}

// snapshot reads the world's state.
func snapshot(w *sandbox.World) Snapshot {
	var s Snapshot
	s.Policy, _ = w.Tailnet.Policy()
	for _, d := range w.Tailnet.Devices() {
		s.Devices = append(s.Devices, d.Hostname)
	}
	for _, h := range w.Qovery.Helms() {
		chart := ""
		if h.Source.Repository != nil {
			chart = h.Source.Repository.ChartName
		}
		s.Helms = append(s.Helms, Helm{ID: h.ID, EnvironmentID: h.EnvironmentID, Name: h.Name, Chart: chart})
	}
	for _, r := range w.Qovery.HelmRepositories() {
		s.Repositories = append(s.Repositories, r.Name)
	}
	for _, g := range w.Qovery.AnnotationsGroups() {
		anns := map[string]string{}
		for _, a := range g.Annotations {
			anns[a.Key] = a.Value
		}
		s.Groups = append(s.Groups, Group{ID: g.ID, Name: g.Name, Annotations: anns})
	}
	for _, c := range w.Tailnet.OAuthClients() {
		s.OAuthClients = append(s.OAuthClients, c.Description)
	}
	s.Attached = map[string][]string{}
	w.Qovery.Do(func(st *qoveryapi.State) {
		for id, a := range st.Applications {
			s.Attached[id] = slices.Clone(a.AnnotationsGroupIDs)
		}
	})
	return s
}

// Check checks the snapshot: every live region's objects present once and
// as configured (nothing lost, nothing duplicated), nothing left of the
// regions gone (no orphan), and the policy file, once qtail's fragments
// are taken out, equal byte for byte to the hand-written file.
func Check(s Snapshot, live, gone []Expectation, handWritten []byte) []Finding {
	var out []Finding
	add := func(kind, region, format string, args ...any) {
		out = append(out, Finding{Kind: kind, Region: region, What: fmt.Sprintf(format, args...)})
	}
	doc, err := policyfile.Parse(s.Policy)
	if err != nil {
		add(HandWritten, "", "the policy file does not parse: %v", err)
		return out
	}
	frags := doc.Fragments()
	byName := map[string][]policyfile.OwnedFragment{}
	for _, f := range frags {
		byName[string(f.Key.Kind)+":"+f.Key.Name] = append(byName[string(f.Key.Kind)+":"+f.Key.Name], f)
	}
	once := func(region, what string, n int) bool {
		switch {
		case n == 0:
			add(Lost, region, "%s is missing", what)
		case n > 1:
			add(Duplicated, region, "%s is there %d times", what, n)
		default:
			return true
		}
		return false
	}
	count := func(list []string, want string) int {
		n := 0
		for _, x := range list {
			if x == want {
				n++
			}
		}
		return n
	}
	// One fragment per owner: each grant, tag owner and test has an owner
	// of its own.
	owners := map[string][]string{}
	for _, f := range frags {
		if f.Owner != "" && f.Key.Kind != policyfile.KindAutoApprover {
			k := string(f.Key.Kind) + " " + f.Owner
			owners[k] = append(owners[k], f.Key.Name)
		}
	}
	for _, k := range sortedKeys(owners) {
		if names := owners[k]; len(names) > 1 {
			add(Duplicated, "", "the owner of %s marks %d fragments: %v", k, len(names), names)
		}
	}
	groupsByID := map[string]Group{}
	for _, g := range s.Groups {
		groupsByID[g.ID] = g
	}
	for _, e := range live {
		r := e.Region
		names := sortedKeys(e.Grants)
		for _, name := range names {
			fs := byName["grant:"+name]
			if !once(r, fmt.Sprintf("grant %q", name), len(fs)) {
				continue
			}
			var g struct {
				IP []string `json:"ip"`
			}
			if err := json.Unmarshal(fs[0].Value, &g); err != nil || !slices.Equal(g.IP, e.Grants[name]) {
				add(Lost, r, "grant %q has ip %v, its configuration %v", name, g.IP, e.Grants[name])
			}
		}
		for _, name := range e.Tests {
			once(r, fmt.Sprintf("policy test %q", name), len(byName["policy_test:"+name]))
		}
		for _, h := range e.Devices {
			once(r, fmt.Sprintf("device %q", h), count(s.Devices, h))
		}
		for _, name := range e.Repositories {
			once(r, fmt.Sprintf("Helm repository %q", name), count(s.Repositories, name))
		}
		var helms, operators []string
		for _, h := range s.Helms {
			if h.EnvironmentID == e.EnvironmentID {
				helms = append(helms, h.Name)
				if h.Chart == qoveryapi.TailscaleOperatorChart {
					operators = append(operators, h.Name)
				}
			}
		}
		once(r, "the operator's Helm service", len(operators))
		once(r, "the operator's OAuth client", len(containing(s.OAuthClients, r)))
		if len(helms) < e.Helms {
			add(Lost, r, "the environment has %d Helm services %v, the configuration %d", len(helms), helms, e.Helms)
		} else if len(helms) > e.Helms {
			add(Duplicated, r, "the environment has %d Helm services %v, the configuration %d", len(helms), helms, e.Helms)
		}
		for _, app := range sortedKeys(e.Exposures) {
			host := e.Exposures[app]
			name := "tailscale-" + host
			var ids []string
			for _, g := range s.Groups {
				if g.Name == name {
					ids = append(ids, g.ID)
				}
			}
			if !once(r, fmt.Sprintf("annotations group %q", name), len(ids)) {
				continue
			}
			g := groupsByID[ids[0]]
			if g.Annotations["tailscale.com/expose"] != "true" || g.Annotations["tailscale.com/hostname"] != host {
				add(Lost, r, "annotations group %q has the annotations %v", name, g.Annotations)
			}
			once(r, fmt.Sprintf("the attachment of %q to its application", name), count(s.Attached[app], ids[0]))
			for _, id := range s.Attached[app] {
				if id != ids[0] && strings.HasPrefix(groupsByID[id].Name, "tailscale-") {
					add(Duplicated, r, "the application of %q has a second annotations group %q", host, groupsByID[id].Name)
				}
			}
		}
		// What carries the region's name but no configuration asks for.
		for _, f := range frags {
			if strings.Contains(f.Key.Name, r) && !wanted(e, f.Key) {
				add(Orphan, r, "%s %q is in the policy file", f.Key.Kind, f.Key.Name)
			}
		}
		for _, h := range distinct(s.Devices) {
			if strings.Contains(h, r) && !slices.Contains(e.Devices, h) {
				add(Orphan, r, "device %q is on the tailnet", h)
			}
		}
		for _, name := range distinct(s.Repositories) {
			if strings.Contains(name, r) && !slices.Contains(e.Repositories, name) {
				add(Orphan, r, "Helm repository %q is in Qovery", name)
			}
		}
		for _, g := range s.Groups {
			if strings.Contains(g.Name, r) && !slices.Contains(mapValues(e.Exposures, "tailscale-"), g.Name) {
				add(Orphan, r, "annotations group %q is in Qovery", g.Name)
			}
		}
	}
	for _, e := range gone {
		r := e.Region
		for _, f := range frags {
			if strings.Contains(f.Key.Name, r) {
				add(Orphan, r, "%s %q is in the policy file", f.Key.Kind, f.Key.Name)
			}
		}
		for _, h := range distinct(s.Devices) {
			if strings.Contains(h, r) {
				add(Orphan, r, "device %q is on the tailnet", h)
			}
		}
		for _, name := range s.Repositories {
			if strings.Contains(name, r) {
				add(Orphan, r, "Helm repository %q is in Qovery", name)
			}
		}
		for _, g := range s.Groups {
			if strings.Contains(g.Name, r) {
				add(Orphan, r, "annotations group %q is in Qovery", g.Name)
			}
		}
		for _, h := range s.Helms {
			if h.EnvironmentID == e.EnvironmentID {
				add(Orphan, r, "Helm service %q is in the environment", h.Name)
			}
		}
		for _, d := range containing(s.OAuthClients, r) {
			add(Orphan, r, "the OAuth client %q is on the tailnet", d)
		}
		for _, app := range sortedKeys(e.Exposures) {
			for _, id := range s.Attached[app] {
				add(Orphan, r, "the application of %q still has the annotations group %s (%q)", e.Exposures[app], id, groupsByID[id].Name)
			}
		}
	}
	// The hand-written file: the policy without qtail's fragments.
	for _, f := range frags {
		doc.Delete(f.Key)
	}
	if got := doc.Bytes(); !bytes.Equal(got, handWritten) {
		add(HandWritten, "", "the policy file outside qtail's fragments differs from the hand-written file:\n%s", lineDiff(handWritten, got))
	}
	return out
}

// wanted reports whether the fragment is one of the region's
// configuration.
func wanted(e Expectation, k policyfile.Key) bool {
	switch k.Kind {
	case policyfile.KindGrant:
		_, ok := e.Grants[k.Name]
		return ok
	case policyfile.KindPolicyTest:
		return slices.Contains(e.Tests, k.Name)
	}
	return false
}

// lineDiff lists the lines of want missing from got and those of got
// that want lacks, in order.
func lineDiff(want, got []byte) string {
	w := strings.Split(string(want), "\n")
	g := strings.Split(string(got), "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "  - %s\n", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "  + %s\n", l)
		}
	}
	if b.Len() == 0 {
		b.WriteString("  (the same lines, in another order or spacing)\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// containing returns the strings of list that contain sub.
func containing(list []string, sub string) []string {
	var out []string
	for _, x := range list {
		if strings.Contains(x, sub) {
			out = append(out, x)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func mapValues(m map[string]string, prefix string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, prefix+v)
	}
	return out
}

func distinct(list []string) []string {
	out := slices.Clone(list)
	sort.Strings(out)
	return slices.Compact(out)
}
