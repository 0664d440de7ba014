package review

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/fragment"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// The kinds of findings that explain a change.
const (
	// FindingShadowed: a grant the plans add or change gives no access
	// of its own: another grant already lets its sources reach its
	// destinations on its ports.
	FindingShadowed FindingKind = "shadowed"
	// FindingBeyondInstance: a grant of one configuration (or module
	// instance) reaches a tag that devices of other configurations carry
	// too, such as the services of other regions.
	FindingBeyondInstance FindingKind = "beyond_instance"
	// FindingSharedDestination: a tag or an address that a changed grant
	// reaches is the destination of grants of several configurations.
	FindingSharedDestination FindingKind = "shared_destination"
)

// maxListed keeps the lists of a finding short.
const maxListed = 5

// namedGrant is a grant of the planned policy file and who wrote it.
type namedGrant struct {
	g grantFile
	// name is the fragment (`qtail_grant "x"`), or a description of a
	// grant written by hand.
	name string
	key  policyfile.Key
	// owner is the resource that writes the fragment, when a plan holds
	// it.
	owner *resource
}

// owners maps fragments to the resources of the plans that write them.
func owners(rs []resource) map[policyfile.Key]*resource {
	out := map[policyfile.Key]*resource{}
	for i := range rs {
		r := &rs[i]
		desc, ok := fragment.ByType(r.typ)
		if !ok {
			continue
		}
		for _, v := range []map[string]any{r.after, r.before} {
			if v == nil {
				continue
			}
			if key, _, err := desc.Fragment(desc.PlanValues(v, known)); err == nil && key.Name != "" && out[key] == nil {
				out[key] = r
			}
		}
	}
	return out
}

// plannedGrants lists the grants of the planned policy file, qtail's by
// fragment and the others as written by hand.
func plannedGrants(a *accessReview, file *policyFile, own map[policyfile.Key]*resource) []namedGrant {
	var out []namedGrant
	marked := map[string]int{}
	for _, f := range a.nextDoc.Fragments() {
		if f.Key.Kind != policyfile.KindGrant {
			continue
		}
		var g grantFile
		if json.Unmarshal(f.Value, &g) != nil {
			continue
		}
		marked[grantID(g)]++
		out = append(out, namedGrant{g: g, name: "`" + f.Key.String() + "`", key: f.Key, owner: own[f.Key]})
	}
	for _, g := range file.Grants {
		if marked[grantID(g)] > 0 {
			marked[grantID(g)]--
			continue
		}
		b, _ := json.Marshal(g)
		out = append(out, namedGrant{g: g, name: "a grant written by hand (" + string(b) + ")"})
	}
	return out
}

// explainFindings finds the changed grants that are shadowed by another,
// that reach beyond their configuration, and the destinations they share
// with other configurations.
func explainFindings(a *accessReview, rs []resource, changes []FragmentChange) []Finding {
	file, err := readPolicyFile(a.next)
	if err != nil {
		return nil
	}
	own := owners(rs)
	grants := plannedGrants(a, file, own)
	var out []Finding
	shared := map[string]bool{}
	// pairs are the changed grants found to give the same access as
	// another changed grant: the pair is reported once.
	pairs := map[[2]string]bool{}
	changed := map[string]bool{}
	for _, c := range changes {
		if c.Kind == string(policyfile.KindGrant) && c.After != nil {
			changed[c.Fragment] = true
		}
	}
	for _, c := range changes {
		if c.Kind != string(policyfile.KindGrant) || c.Unknown {
			continue
		}
		var g grantFile
		value := c.After
		if value == nil {
			value = c.Before
		}
		if value == nil || json.Unmarshal(value, &g) != nil {
			continue
		}
		if c.After != nil {
			if f, ok := shadowed(c, g, grants, file.Groups, changed, pairs); ok {
				out = append(out, f)
			}
			out = append(out, beyondInstance(a, c, g, rs)...)
		}
		for _, d := range g.Dst {
			if shared[strings.ToLower(d)] {
				continue
			}
			if f, ok := sharedDestination(d, grants, rs); ok {
				shared[strings.ToLower(d)] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// shadowed reports a changed grant whose access another grant of the
// planned policy file already gives. Two changed grants that give each
// other's access are reported once, as a pair (see pairs).
func shadowed(c FragmentChange, g grantFile, grants []namedGrant, groups map[string][]string, changed map[string]bool, pairs map[[2]string]bool) (Finding, bool) {
	if len(g.Via) > 0 || g.App != nil || len(g.SrcPosture) > 0 || len(g.IP) == 0 {
		return Finding{}, false
	}
	for _, h := range grants {
		// The default allow-all rule has a finding of its own.
		if h.key.String() == c.Fragment || isAllowAll(h.g) || len(h.g.Via) > 0 || len(h.g.SrcPosture) > 0 || !covers(h.g, g, groups) {
			continue
		}
		other := h.key.String()
		if changed[other] && covers(g, h.g, groups) {
			if pairs[[2]string{other, c.Fragment}] {
				continue
			}
			pairs[[2]string{c.Fragment, other}] = true
			return Finding{Kind: FindingShadowed, Severity: SeverityWarning, New: true,
				Message: fmt.Sprintf("`%s` (`%s`) and %s, which the plans also write, give the same access: each lets %s reach %s on %s, "+
					"so either one changes no one's access while the other exists. Keep one, or give each its own destination.",
					c.Fragment, c.Address, h.name, reach(g.Src), reach(g.Dst), code(g.IP))}, true
		}
		return Finding{Kind: FindingShadowed, Severity: SeverityWarning, New: true,
			Message: fmt.Sprintf("`%s` (`%s`) changes no one's access: %s already lets %s reach %s on %s. "+
				"Remove one of them, or narrow the other, so that the policy says once who reaches what.",
				c.Fragment, c.Address, h.name, reach(g.Src), reach(g.Dst), code(g.IP))}, true
	}
	return Finding{}, false
}

// isAllowAll reports whether g is the default allow-all rule.
func isAllowAll(g grantFile) bool {
	return slices.Equal(g.Src, []string{"*"}) && slices.Equal(g.Dst, []string{"*"}) && slices.Equal(g.IP, []string{"*"})
}

// covers reports whether h gives all the access g gives.
func covers(h, g grantFile, groups map[string][]string) bool {
	every := func(of []string, in []string, match func(h, g string) bool) bool {
		return len(of) > 0 && !slices.ContainsFunc(of, func(x string) bool {
			return !slices.ContainsFunc(in, func(y string) bool { return match(y, x) })
		})
	}
	return every(g.Src, h.Src, func(hs, gs string) bool { return srcCovers(hs, gs, groups) }) &&
		every(g.Dst, h.Dst, dstCovers) && every(g.IP, h.IP, ipCovers)
}

func srcCovers(h, g string, groups map[string][]string) bool {
	h, g = strings.ToLower(h), strings.ToLower(g)
	user := strings.Contains(g, "@") && !strings.Contains(g, ":")
	if h == "*" || h == g {
		return true
	}
	if h == "autogroup:member" || h == "autogroup:members" {
		return user || strings.HasPrefix(g, "group:")
	}
	if strings.HasPrefix(h, "group:") && user {
		for name, members := range groups {
			if strings.EqualFold(name, h) && slices.ContainsFunc(members, func(m string) bool { return strings.EqualFold(m, g) }) {
				return true
			}
		}
	}
	return false
}

func dstCovers(h, g string) bool {
	h, g = strings.ToLower(h), strings.ToLower(g)
	if h == "*" || h == g {
		return true
	}
	hp, ok1 := prefixOf(h)
	gp, ok2 := prefixOf(g)
	return ok1 && ok2 && hp.Bits() <= gp.Bits() && hp.Contains(gp.Addr())
}

func prefixOf(s string) (netip.Prefix, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	p, err := netip.ParsePrefix(s)
	return p.Masked(), err == nil
}

// ipCovers reports whether the ip entry h ("*", "tcp:443", "443",
// "tcp:80-90", "tcp:*") covers the entry g.
func ipCovers(h, g string) bool {
	if h == "*" || strings.EqualFold(h, g) {
		return true
	}
	hProto, hPorts := splitIP(h)
	gProto, gPorts := splitIP(g)
	if hProto != "" && hProto != gProto {
		return false
	}
	hLo, hHi, ok1 := portRange(hPorts)
	gLo, gHi, ok2 := portRange(gPorts)
	return ok1 && ok2 && hLo <= gLo && gHi <= hHi
}

func splitIP(ip string) (proto, ports string) {
	i := strings.LastIndexByte(ip, ':')
	return strings.ToLower(ip[:max(i, 0)]), ip[i+1:]
}

func portRange(s string) (lo, hi uint64, ok bool) {
	if s == "*" {
		return 0, 65535, true
	}
	a, b, isRange := strings.Cut(s, "-")
	lo, err := strconv.ParseUint(a, 10, 16)
	if err != nil {
		return 0, 0, false
	}
	hi = lo
	if isRange {
		if hi, err = strconv.ParseUint(b, 10, 16); err != nil {
			return 0, 0, false
		}
	}
	return lo, hi, true
}

// instance is the configuration and module instance of a resource: its
// plan, and its address without the resource itself
// (module.region["us-east-1"]).
func instance(plan, address string) string {
	mod := address[:max(strings.LastIndex(address, "qtail_"), 0)]
	return plan + " " + strings.TrimSuffix(mod, ".")
}

// carrier is a resource of the plans that puts devices with a tag on the
// tailnet.
type carrier struct {
	r    *resource
	what string
}

// carriers returns the resources of the plans whose devices carry tag:
// exposed services, connectors and ProxyGroups by their tags, and the
// proxies of an operator by its default proxy tags.
func carriers(rs []resource, tag string) []carrier {
	var out []carrier
	for i := range rs {
		r := &rs[i]
		if r.after == nil {
			continue
		}
		has := func(attr string) bool {
			return slices.ContainsFunc(stringsOf(r.after[attr]), func(t string) bool { return strings.EqualFold(t, tag) })
		}
		switch r.typ {
		case "qtail_exposed_service", "qtail_connector", "qtail_proxy_group":
			if has("tags") {
				out = append(out, carrier{r, "`" + r.address + "`"})
			}
		case "qtail_operator":
			if has("proxy_default_tags") {
				out = append(out, carrier{r, "the proxies of `" + r.address + "`"})
			}
		}
	}
	return out
}

// beyondInstance reports the tags of a changed grant that devices of
// other configurations or module instances carry too.
func beyondInstance(a *accessReview, c FragmentChange, g grantFile, rs []resource) []Finding {
	var out []Finding
	here := instance(c.Plan, c.Address)
	for _, d := range g.Dst {
		if !strings.HasPrefix(strings.ToLower(d), "tag:") {
			continue
		}
		var mine, others []string
		hosts := map[string]bool{}
		for _, cr := range carriers(rs, d) {
			if h, _ := cr.r.after["hostname"].(string); h != "" {
				hosts[strings.ToLower(h)] = true
			}
			if instance(cr.r.plan, cr.r.address) == here {
				mine = append(mine, cr.what)
				continue
			}
			others = append(others, fmt.Sprintf("%s (`%s`)", cr.what, cr.r.plan))
		}
		// Devices on the tailnet with the tag that no resource of the
		// plans puts there.
		var devices []string
		for _, dev := range a.devices {
			if hosts[strings.ToLower(dev.Hostname)] || !slices.ContainsFunc(dev.Tags, func(t string) bool { return strings.EqualFold(t, d) }) {
				continue
			}
			devices = append(devices, "`"+dev.Hostname+"`")
		}
		if len(others) == 0 && (len(devices) == 0 || len(mine) == 0) {
			continue
		}
		var reached []string
		if len(others) > 0 {
			reached = append(reached, "other configurations or module instances put it on their devices too: "+listed(others))
		}
		if len(devices) > 0 {
			reached = append(reached, "devices of the tailnet that no reviewed plan manages carry it: "+listed(devices))
		}
		out = append(out, Finding{Kind: FindingBeyondInstance, Severity: SeverityWarning, New: true,
			Message: fmt.Sprintf("`%s` (`%s`, `%s`) lets %s reach `%s`, and %s. The grant reaches those too, not only what its own configuration puts on the tailnet; "+
				"if the access is meant for this configuration alone, give its devices a tag of their own and grant that.",
				c.Fragment, c.Address, c.Plan, reach(g.Src), d, strings.Join(reached, "; and "))})
	}
	return out
}

// sharedDestination reports a destination that grants (or devices) of
// several configurations share.
func sharedDestination(d string, grants []namedGrant, rs []resource) (Finding, bool) {
	configs := map[string]bool{}
	var who []string
	for _, h := range grants {
		if !slices.ContainsFunc(h.g.Dst, func(x string) bool { return strings.EqualFold(x, d) }) {
			continue
		}
		if h.owner != nil {
			configs[h.owner.plan] = true
			who = append(who, fmt.Sprintf("%s (`%s`)", h.name, h.owner.plan))
		} else if h.key.Name != "" {
			configs["\x00other"] = true
			who = append(who, h.name+" (another configuration, not reviewed)")
		} else {
			configs["\x00hand"] = true
			who = append(who, h.name)
		}
	}
	var carried []string
	if strings.HasPrefix(strings.ToLower(d), "tag:") {
		for _, cr := range carriers(rs, d) {
			configs[cr.r.plan] = true
			carried = append(carried, fmt.Sprintf("%s (`%s`)", cr.what, cr.r.plan))
		}
	}
	if len(configs) < 2 {
		return Finding{}, false
	}
	msg := fmt.Sprintf("`%s` is shared by several configurations: the grants %s reach it", d, listed(who))
	if len(who) == 0 {
		msg = fmt.Sprintf("`%s` is shared by several configurations", d)
	}
	if len(carried) > 0 {
		msg += ", and " + listed(carried) + " carry it"
	}
	msg += ". Who reaches it is the sum of all of them: review a change to one with the others in mind, and give each configuration's devices a tag of their own if they should not share access."
	return Finding{Kind: FindingSharedDestination, Severity: SeverityWarning, New: true, Message: msg}, true
}

// listed joins the first few of list and counts the rest.
func listed(list []string) string {
	if len(list) <= maxListed {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:maxListed], ", "), len(list)-maxListed)
}
