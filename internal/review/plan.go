package review

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/qtail/terraform-provider-qtail/internal/fragment"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// Plan is one saved Terraform plan to review, as `terraform show -json`
// writes it: typically one per region root.
type Plan struct {
	// Label names the plan in the report, e.g. its file name.
	Label string
	Plan  *tfjson.Plan
}

// parsePlan reads b, the JSON of `terraform show -json PLANFILE` in the
// file path.
func parsePlan(path string, b []byte) (Plan, error) {
	var p tfjson.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return Plan{}, fmt.Errorf("%s is not the JSON of a Terraform plan (write it with `terraform show -json PLANFILE > %s`): %w", path, filepath.Base(path), err)
	}
	return Plan{Label: filepath.Base(path), Plan: &p}, nil
}

// resource is one qtail resource of a plan: its values before (nil when
// it is created) and after (nil when it is deleted) the plan.
type resource struct {
	plan    string
	address string
	typ     string
	actions tfjson.Actions
	before  map[string]any
	after   map[string]any
	unknown map[string]any // after_unknown
}

// changed reports whether the plan changes the resource.
func (r resource) changed() bool { return !r.actions.NoOp() && !r.actions.Read() }

// unknownAttr reports whether an attribute of the planned value is only
// known after apply.
func (r resource) unknownAttr(name string) bool { return containsTrue(r.unknown[name]) }

func containsTrue(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case []any:
		return slices.ContainsFunc(t, containsTrue)
	case map[string]any:
		for _, e := range t {
			if containsTrue(e) {
				return true
			}
		}
	}
	return false
}

// resources returns the managed qtail resources of the plans, in order.
func resources(plans []Plan) []resource {
	var out []resource
	for _, p := range plans {
		if p.Plan == nil {
			continue
		}
		for _, rc := range p.Plan.ResourceChanges {
			if rc == nil || rc.Change == nil || rc.Mode != tfjson.ManagedResourceMode || !strings.HasPrefix(rc.Type, "qtail_") || rc.DeposedKey != "" {
				continue
			}
			r := resource{plan: p.Label, address: rc.Address, typ: rc.Type, actions: rc.Change.Actions}
			r.before, _ = rc.Change.Before.(map[string]any)
			r.after, _ = rc.Change.After.(map[string]any)
			r.unknown, _ = rc.Change.AfterUnknown.(map[string]any)
			if rc.Change.Actions.Delete() && !rc.Change.Actions.Replace() {
				r.after = nil
			}
			if rc.Change.Actions.Create() && !rc.Change.Actions.Replace() {
				r.before = nil
			}
			out = append(out, r)
		}
	}
	return out
}

// FragmentChange is one fragment of the policy file that a plan adds,
// changes or removes.
type FragmentChange struct {
	Plan    string `json:"plan"`
	Address string `json:"address"`
	// Fragment names it the way the resource does: qtail_grant "web".
	Fragment string `json:"fragment"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	// Action is "added", "changed" or "removed".
	Action string `json:"action"`
	// Before and After are the entry in canonical JSON; absent when the
	// fragment is added, removed, or not known until apply.
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
	// Unknown is set when the planned entry depends on values known only
	// after apply: it is not part of the planned policy.
	Unknown bool `json:"unknown,omitempty"`
}

// fragmentChanges returns the fragment changes of the qtail resources and
// the mutations that make the planned policy: removals first, then the
// additions and changes, in the order of the plans.
func fragmentChanges(rs []resource, allowAllPresent bool) ([]FragmentChange, []policyfile.Mutation, []string) {
	var changes []FragmentChange
	var deletes, puts []policyfile.Mutation
	var notes []string
	for _, r := range rs {
		desc, ok := fragment.ByType(r.typ)
		if !ok || !r.changed() {
			continue
		}
		kind := desc.Kind
		if kind == policyfile.KindAllowAll {
			if r.after != nil && r.before == nil && allowAllPresent {
				deletes = append(deletes, policyfile.Mutation{Key: policyfile.AllowAllKey(), Delete: true})
				changes = append(changes, FragmentChange{Plan: r.plan, Address: r.address, Fragment: "the default allow-all rule", Kind: string(kind), Name: "default", Action: "removed"})
			} else if r.after == nil {
				notes = append(notes, fmt.Sprintf("%s is destroyed: that changes nothing in the policy file (qtail never writes the allow-all rule back).", r.address))
			}
			continue
		}
		c := FragmentChange{Plan: r.plan, Address: r.address, Kind: string(kind)}
		var oldKey, newKey policyfile.Key
		var oldVal, newVal json.RawMessage
		oldErr, newErr := errAbsent, errAbsent
		if r.before != nil {
			oldKey, oldVal, oldErr = desc.Fragment(desc.PlanValues(r.before, known))
		}
		if r.after != nil {
			newKey, newVal, newErr = desc.Fragment(desc.PlanValues(r.after, r.unknownAttr))
		}
		if oldErr == nil {
			c.Before = canonical(oldVal)
		}
		if newErr == nil {
			c.After = canonical(newVal)
		}
		if r.after == nil {
			c.Action = "removed"
		} else if r.before == nil {
			c.Action = "added"
		} else {
			c.Action = "changed"
		}
		key := newKey
		if r.after == nil || newKey.Name == "" {
			key = oldKey
		}
		c.Fragment, c.Name = key.String(), key.Name
		if r.after != nil && newErr != nil {
			c.Unknown = true
			if key.Name == "" {
				c.Fragment = r.address
			}
			what := "leaves it out"
			if r.before != nil {
				what = "keeps its current entry"
			}
			notes = append(notes, fmt.Sprintf("%s (%s): its entry depends on values known only after apply, so the planned policy below %s.", c.Fragment, r.address, what))
			changes = append(changes, c)
			continue
		}
		if r.before != nil && oldErr == nil && (r.after == nil || oldKey != newKey) {
			deletes = append(deletes, policyfile.Mutation{Key: oldKey, Delete: true})
		}
		if r.after != nil && newErr == nil {
			puts = append(puts, policyfile.Mutation{Key: newKey, Value: newVal, Overwrite: r.before != nil})
		}
		changes = append(changes, c)
	}
	return changes, append(deletes, puts...), notes
}

// errAbsent stands for a value a change does not have (the before of a
// creation, the after of a removal).
var errAbsent = errors.New("absent")

// known says that no value of a prior state is unknown.
func known(string) bool { return false }

func canonical(v json.RawMessage) json.RawMessage {
	c, err := policyfile.Canonicalize(v)
	if err != nil {
		return v
	}
	return c
}

// service is an exposed service (or, for a connector, one of its routes)
// whose access the review previews.
type service struct {
	kind     string // "service", "route" or "device"
	name     string // the hostname, the route, the device
	address  string // the Terraform address, empty for a device found by tag
	plan     string
	tags     []string
	declared []uint16 // ports the service declares
	// ip is the address previews ask about.
	ip            netip.Addr
	before, after bool // exists before and after the plan
	changed       bool
}

// exposedServices returns the qtail_exposed_service resources of the
// plans, with what the plan knows of their devices.
func exposedServices(rs []resource) []*service {
	var out []*service
	for _, r := range rs {
		if r.typ != "qtail_exposed_service" {
			continue
		}
		s := &service{kind: "service", address: r.address, plan: r.plan, before: r.before != nil, after: r.after != nil, changed: r.changed()}
		for _, v := range []map[string]any{r.after, r.before} {
			if v == nil {
				continue
			}
			if s.name == "" {
				s.name, _ = v["hostname"].(string)
			}
			if s.tags == nil {
				s.tags = stringsOf(v["tags"])
			}
			for _, p := range listOf(v["ports"]) {
				if m, ok := p.(map[string]any); ok {
					if n, ok := number(m["internal_port"]); ok && n > 0 && n < 65536 && !slices.Contains(s.declared, uint16(n)) {
						s.declared = append(s.declared, uint16(n))
					}
				}
			}
			if !s.ip.IsValid() {
				s.ip = firstIP(stringsOf(v["tailnet_ips"]))
			}
		}
		slices.Sort(s.declared)
		out = append(out, s)
	}
	return out
}

// connectorRoutes returns the subnet routes of the qtail_connector
// resources the plans change.
func connectorRoutes(rs []resource) []*service {
	var out []*service
	for _, r := range rs {
		if r.typ != "qtail_connector" || !r.changed() {
			continue
		}
		before, after := stringsOf(r.before["subnet_routes"]), stringsOf(r.after["subnet_routes"])
		for _, cidr := range union(before, after) {
			ip, ok := probeAddr(cidr)
			if !ok {
				continue
			}
			out = append(out, &service{
				kind: "route", name: cidr, address: r.address, plan: r.plan, ip: ip,
				before: slices.Contains(before, cidr), after: slices.Contains(after, cidr),
			})
		}
	}
	return out
}

// probeAddr is the address that stands for a route or an address in a
// preview: the address itself, or the first host of the network.
func probeAddr(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a, true
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Addr{}, false
	}
	a := p.Masked().Addr()
	if n := a.Next(); p.Contains(n) {
		a = n
	}
	return a, true
}

func firstIP(ss []string) netip.Addr {
	var v6 netip.Addr
	for _, s := range ss {
		a, err := netip.ParseAddr(s)
		if err != nil {
			continue
		}
		if a.Is4() {
			return a
		}
		if !v6.IsValid() {
			v6 = a
		}
	}
	return v6
}

func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}

// stringsOf returns the strings of a list or set value.
func stringsOf(v any) []string {
	var out []string
	for _, e := range listOf(v) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func number(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// union returns the elements of a then those of b not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
