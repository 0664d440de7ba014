package review

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// FindingKind says what a finding is about.
type FindingKind string

// The kinds of findings.
const (
	// FindingAllowAll: the planned policy still has the default rule
	// that lets every device reach every other one.
	FindingAllowAll FindingKind = "allow_all"
	// FindingBroadGrant: a grant from "*" or autogroup:member to a tag.
	FindingBroadGrant FindingKind = "broad_grant"
	// FindingTagWithoutOwner: a tag is used (by a grant, a test, a
	// service or a connector) but tagOwners does not declare it.
	FindingTagWithoutOwner FindingKind = "tag_without_owner"
	// FindingServiceWithoutGrant: no rule lets anyone reach an exposed
	// service.
	FindingServiceWithoutGrant FindingKind = "service_without_grant"
	// FindingConflict: a fragment change that cannot be made, or two
	// that write the same fragment differently.
	FindingConflict FindingKind = "conflict"
	// FindingBrokenTest: a test of the policy file fails with the plans;
	// the message names the test and the fragments that break it.
	FindingBrokenTest FindingKind = "broken_test"
	// FindingPlanFailed: a plan failed (Tailscale refused its policy
	// change, say) and only its log was reviewed; the message gives its
	// error, on the resource Terraform names.
	FindingPlanFailed FindingKind = "plan_failed"
	// FindingFunnel: nodeAttrs give the funnel attribute to the devices
	// of operators and their proxies (see policyfile.FunnelToProxies).
	FindingFunnel FindingKind = "funnel"
)

// Severity ranks findings.
type Severity string

// The severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

func (s Severity) rank() int {
	if s == SeverityError {
		return 0
	}
	return 1
}

// Finding is something a reviewer should look at.
type Finding struct {
	Kind     FindingKind `json:"kind"`
	Severity Severity    `json:"severity"`
	Message  string      `json:"message"`
	// New is true when the plans bring it; false when it is already the
	// case today.
	New bool `json:"new"`
}

// findings looks at the planned policy and resources, and marks what is
// new compared with the current ones.
func findings(a *accessReview, rs []resource) []Finding {
	var out []Finding
	if policyfile.HasAllowAll(a.nextDoc) {
		out = append(out, Finding{Kind: FindingAllowAll, Severity: SeverityWarning, New: !policyfile.HasAllowAll(a.curDoc),
			Message: "The policy file keeps the default allow-all rule (src \"*\", dst \"*\"): every device reaches every service, whatever the grants say. " +
				"Remove it with a qtail_allow_all_removal that depends on the grants."})
	}
	if targets := policyfile.FunnelToProxies(a.nextDoc); len(targets) > 0 {
		cur := policyfile.FunnelToProxies(a.curDoc)
		out = append(out, Finding{Kind: FindingFunnel, Severity: SeverityWarning, New: !slices.Equal(cur, targets),
			Message: fmt.Sprintf("The policy file gives the funnel node attribute to %s, tags of the operators and their proxies: a "+
				"proxy that a tailscale.com/funnel annotation reaches is published on the public internet, outside the grants. "+
				"Remove those targets from nodeAttrs unless a service is meant to be public.", strings.Join(targets, ", "))})
	}
	curFile, _ := readPolicyFile(a.cur)
	nextFile, _ := readPolicyFile(a.next)
	if curFile == nil {
		curFile = &policyFile{}
	}
	if nextFile == nil {
		nextFile = &policyFile{}
	}

	owned := map[string]string{}
	for _, f := range a.nextDoc.Fragments() {
		if f.Key.Kind == policyfile.KindGrant {
			var g grantFile
			if json.Unmarshal(f.Value, &g) == nil {
				owned[grantID(g)] = f.Key.String()
			}
		}
	}
	curBroad := map[string]bool{}
	for _, g := range curFile.Grants {
		if broad(g) {
			curBroad[grantID(g)] = true
		}
	}
	for _, g := range nextFile.Grants {
		if !broad(g) {
			continue
		}
		name := "a grant written by hand"
		if n := owned[grantID(g)]; n != "" {
			name = "`" + n + "`"
		}
		out = append(out, Finding{Kind: FindingBroadGrant, Severity: SeverityWarning, New: !curBroad[grantID(g)],
			Message: fmt.Sprintf("%s lets %s reach %s: every member of the tailnet (or every device) gets in. Name the group that needs the access instead.",
				name, reach(g.Src), reach(g.Dst))})
	}

	curUses, nextUses := tagUses(curFile, rs, false), tagUses(nextFile, rs, true)
	curMissing := missingOwners(curFile, curUses)
	for _, tag := range names(nextUses) {
		if hasOwner(nextFile, tag) {
			continue
		}
		out = append(out, Finding{Kind: FindingTagWithoutOwner, Severity: SeverityError, New: !curMissing[strings.ToLower(tag)],
			Message: fmt.Sprintf("`%s` is used by %s but tagOwners does not declare it: Tailscale refuses a policy that uses it, and the operator cannot tag a device with it. Add a qtail_tag_owner.",
				tag, strings.Join(sortedUnique(nextUses[tag]), ", "))})
	}

	for _, ta := range a.rep.Access {
		if ta.Kind != "service" || ta.Status == "removed" || ta.IP == "" || len(ta.Ports) == 0 {
			continue
		}
		if slices.ContainsFunc(ta.Ports, func(p PortAccess) bool { return len(p.After) > 0 || p.After == nil }) {
			continue
		}
		hadGrant := slices.ContainsFunc(ta.Ports, func(p PortAccess) bool { return len(p.Before) > 0 })
		out = append(out, Finding{Kind: FindingServiceWithoutGrant, Severity: SeverityWarning, New: hadGrant || ta.Status == "added",
			Message: fmt.Sprintf("No rule lets anyone reach `%s` (%s) on its ports: it is on the tailnet but unreachable. Add a qtail_grant to its tags, or remove the exposure.", ta.Name, ta.Address)})
	}
	return out
}

// broad reports whether a grant lets everyone, or every member, reach a
// tag.
func broad(g grantFile) bool {
	wide := slices.ContainsFunc(g.Src, func(s string) bool {
		s = strings.ToLower(s)
		return s == "*" || s == "autogroup:member" || s == "autogroup:members"
	})
	return wide && slices.ContainsFunc(g.Dst, func(d string) bool { return strings.HasPrefix(strings.ToLower(d), "tag:") })
}

// grantID identifies a grant by what it allows.
func grantID(g grantFile) string {
	b, _ := json.Marshal(g)
	return string(b)
}

// tagUses maps each tag to what uses it: the policy's grants and tests,
// and the qtail resources that tag devices (their values after the plans
// with after, before them otherwise).
func tagUses(f *policyFile, rs []resource, after bool) map[string][]string {
	uses := map[string][]string{}
	add := func(tag, by string) {
		if strings.HasPrefix(strings.ToLower(tag), "tag:") {
			uses[tag] = append(uses[tag], by)
		}
	}
	for _, g := range f.Grants {
		for _, s := range slices.Concat(g.Src, g.Dst, g.Via) {
			add(s, "a grant")
		}
	}
	for _, raw := range f.Tests {
		var t struct {
			Src    string   `json:"src"`
			Accept []string `json:"accept"`
			Deny   []string `json:"deny"`
		}
		if json.Unmarshal(raw, &t) != nil {
			continue
		}
		add(t.Src, "a test")
		for _, d := range slices.Concat(t.Accept, t.Deny) {
			// The destination without its port.
			add(d[:max(strings.LastIndexByte(d, ':'), 0)], "a test")
		}
	}
	for _, r := range rs {
		v := r.before
		if after {
			v = r.after
		}
		if v == nil {
			continue
		}
		switch r.typ {
		case "qtail_exposed_service", "qtail_connector", "qtail_proxy_group":
			for _, t := range stringsOf(v["tags"]) {
				add(t, r.address)
			}
		case "qtail_operator":
			for _, attr := range []string{"default_tags", "proxy_default_tags"} {
				for _, t := range stringsOf(v[attr]) {
					add(t, r.address)
				}
			}
		}
	}
	return uses
}

func hasOwner(f *policyFile, tag string) bool {
	for t := range f.TagOwners {
		if strings.EqualFold(t, tag) {
			return true
		}
	}
	return false
}

func missingOwners(f *policyFile, uses map[string][]string) map[string]bool {
	out := map[string]bool{}
	for tag := range uses {
		if !hasOwner(f, tag) {
			out[strings.ToLower(tag)] = true
		}
	}
	return out
}
