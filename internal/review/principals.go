package review

import (
	"fmt"
	"sort"
	"strings"
)

// PrincipalAccess is what one principal (a user, a group, a tag, "*")
// gains and loses with the plans, gathered from the targets' ports and
// the users' previews: "`billing-api-us-east-1` port 8080" for a target,
// the rule's destination ("tag:web:tcp:443") for a user.
type PrincipalAccess struct {
	Principal string   `json:"principal"`
	Gains     []string `json:"gains,omitempty"`
	Loses     []string `json:"loses,omitempty"`
}

// Counts are the headline's numbers, each counted once.
type Counts struct {
	// Targets are the services, routes and devices whose access changes.
	Targets int `json:"targets_touched"`
	// Gaining and Losing count the principals that gain and lose access.
	Gaining int `json:"principals_gaining"`
	Losing  int `json:"principals_losing"`
}

// principals gathers the gained and lost access of the report by
// principal, in order of name, and the headline's counts.
func principals(r *Report) ([]PrincipalAccess, Counts) {
	by := map[string]*PrincipalAccess{}
	get := func(p string) *PrincipalAccess {
		if by[p] == nil {
			by[p] = &PrincipalAccess{Principal: p}
		}
		return by[p]
	}
	targets := map[string]bool{}
	for _, ta := range r.Access {
		for _, p := range ta.Ports {
			what := fmt.Sprintf("`%s` port %d", ta.Name, p.Port)
			for _, s := range p.Gained {
				get(s).Gains = append(get(s).Gains, what)
				targets[ta.Kind+" "+ta.Name] = true
			}
			for _, s := range p.Lost {
				get(s).Loses = append(get(s).Loses, what)
				targets[ta.Kind+" "+ta.Name] = true
			}
		}
	}
	for _, u := range r.Users {
		for _, d := range u.Gained {
			get(u.User).Gains = append(get(u.User).Gains, "`"+d+"`")
		}
		for _, d := range u.Lost {
			get(u.User).Loses = append(get(u.User).Loses, "`"+d+"`")
		}
		// A target without an address is touched through its tags.
		for _, ta := range r.Access {
			if ta.IP != "" || len(ta.Tags) == 0 {
				continue
			}
			for _, d := range append(append([]string{}, u.Gained...), u.Lost...) {
				if _, ok := onTags(d, ta.Tags); ok {
					targets[ta.Kind+" "+ta.Name] = true
				}
			}
		}
	}
	var c Counts
	c.Targets = len(targets)
	out := make([]PrincipalAccess, 0, len(by))
	for _, name := range names(by) {
		p := by[name]
		p.Gains, p.Loses = sortedUnique(p.Gains), sortedUnique(p.Loses)
		if len(p.Gains) > 0 {
			c.Gaining++
		}
		if len(p.Loses) > 0 {
			c.Losing++
		}
		out = append(out, *p)
	}
	sort.SliceStable(out, func(i, j int) bool { return principalRank(out[i].Principal) < principalRank(out[j].Principal) })
	return out, c
}

// principalRank puts the widest principals first: "*", autogroups,
// groups, tags, then users and addresses.
func principalRank(p string) int {
	p = strings.ToLower(p)
	if p == "*" {
		return 0
	}
	if strings.HasPrefix(p, "autogroup:") {
		return 1
	}
	if strings.HasPrefix(p, "group:") {
		return 2
	}
	if strings.HasPrefix(p, "tag:") {
		return 3
	}
	return 4
}
