package review

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// TargetAccess is who can reach an exposed service, a route or a device,
// port by port, before and after the plans, as Tailscale's /acl/preview
// answers for the current and the planned policy file.
type TargetAccess struct {
	// Kind is "service" (a qtail_exposed_service), "route" (a route of a
	// qtail_connector, or an address a changed grant names) or "device"
	// (a device with a tag a changed grant names).
	Kind string `json:"kind"`
	// Name is the service's hostname, the route or the device.
	Name    string   `json:"name"`
	Address string   `json:"address,omitempty"`
	Plan    string   `json:"plan,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	// IP is the address the previews ask about.
	IP string `json:"ip,omitempty"`
	// Status is "added", "removed", "changed" or "unchanged": what the
	// plan does to the resource itself.
	Status string       `json:"status"`
	Ports  []PortAccess `json:"ports"`
	// Note says what could not be previewed.
	Note string `json:"note,omitempty"`
}

// PortAccess is who can reach one port. Sources are the rules' sources as
// the policy writes them, followed by " via TAG" or " if POSTURE" when the
// rule routes the access or asks for a device posture. After is null when
// Tailscale refuses the planned policy file: who reaches the port after
// the plans is unknown, and so is who gains or loses it.
type PortAccess struct {
	Port     uint16   `json:"port"`
	Declared bool     `json:"declared,omitempty"`
	Before   []string `json:"before"`
	After    []string `json:"after"`
	Gained   []string `json:"gained,omitempty"`
	Lost     []string `json:"lost,omitempty"`
}

// UserAccess is what one user reaches, before and after the plans: the
// destinations of the rules that apply to the user, as /acl/preview lists
// them ("tag:web:tcp:443"). After is null when Tailscale refuses the
// planned policy file, as for a port.
type UserAccess struct {
	User string `json:"user"`
	// Unknown is set when the tailnet does not know the user yet (a user
	// who has not joined it): Tailscale previews no access for them, and
	// Reason says why.
	Unknown bool     `json:"unknown,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Before  []string `json:"before"`
	After   []string `json:"after"`
	Gained  []string `json:"gained,omitempty"`
	Lost    []string `json:"lost,omitempty"`
}

// changed reports whether the access differs.
func (p PortAccess) changed() bool { return len(p.Gained)+len(p.Lost) > 0 }

// accessReview previews the current and the planned policy.
type accessReview struct {
	api             API
	cur, next       []byte
	curDoc, nextDoc *policyfile.Document
	rep             *Report

	cache   map[string]*tailnet.Preview
	refused string // why Tailscale refuses to preview the planned policy
	devices []tailnet.Device
}

// touched is what the changed grants name.
type touched struct {
	ports  []uint16
	tags   []string
	addrs  []string
	users  []string
	groups []string
}

func (t *touched) add(g grantFile) {
	for _, ip := range g.IP {
		t.ports = append(t.ports, portsOf(ip)...)
	}
	for _, d := range g.Dst {
		if strings.HasPrefix(strings.ToLower(d), "tag:") {
			t.tags = append(t.tags, d)
		} else if _, ok := probeAddr(d); ok {
			t.addrs = append(t.addrs, d)
		}
	}
	for _, s := range g.Src {
		if strings.HasPrefix(strings.ToLower(s), "group:") {
			t.groups = append(t.groups, s)
		} else if strings.Contains(s, "@") && !strings.Contains(s, ":") {
			t.users = append(t.users, strings.ToLower(s))
		}
	}
}

// portsOf returns the ports an ip entry of a grant names: a port, or the
// ends of a range; none for "*".
func portsOf(ip string) []uint16 {
	ip = ip[strings.LastIndexByte(ip, ':')+1:]
	var out []uint16
	for _, part := range strings.SplitN(ip, "-", 2) {
		if n, err := strconv.ParseUint(part, 10, 16); err == nil && n > 0 {
			out = append(out, uint16(n))
		}
	}
	return out
}

func (a *accessReview) run(ctx context.Context, rs []resource, changes []FragmentChange) error {
	a.cache = map[string]*tailnet.Preview{}
	var t touched
	for _, c := range changes {
		if c.Kind != string(policyfile.KindGrant) {
			continue
		}
		for _, v := range []json.RawMessage{c.Before, c.After} {
			var g grantFile
			if v != nil && json.Unmarshal(v, &g) == nil {
				t.add(g)
			}
		}
	}
	t.ports = slices.Compact(sortedPorts(t.ports))

	targets := append(exposedServices(rs), connectorRoutes(rs)...)
	for _, addr := range sortedUnique(t.addrs) {
		ip, _ := probeAddr(addr)
		if !slices.ContainsFunc(targets, func(s *service) bool { return s.ip == ip }) {
			targets = append(targets, &service{kind: "route", name: addr, ip: ip, before: true, after: true})
		}
	}
	if err := a.findDevices(ctx, targets, sortedUnique(t.tags)); err != nil {
		return err
	}
	targets = append(targets, a.devicesWithTags(sortedUnique(t.tags), targets)...)

	for _, s := range targets {
		ta, err := a.target(ctx, s, t.ports)
		if err != nil {
			return err
		}
		a.rep.Access = append(a.rep.Access, ta)
	}

	users := map[string]bool{}
	for _, u := range t.users {
		users[u] = true
	}
	for _, doc := range [][]byte{a.cur, a.next} {
		f, err := readPolicyFile(doc)
		if err != nil {
			continue
		}
		for name, members := range f.Groups {
			if slices.ContainsFunc(t.groups, func(g string) bool { return strings.EqualFold(g, name) }) {
				for _, m := range members {
					users[strings.ToLower(m)] = true
				}
			}
		}
	}
	list := names(users)
	if len(list) > maxUsers {
		a.rep.Notes = append(a.rep.Notes, fmt.Sprintf("The changed grants name %d users (directly or through groups); the review previews the first %d.", len(list), maxUsers))
		list = list[:maxUsers]
	}
	for _, u := range list {
		ua, ok, err := a.user(ctx, u)
		if err != nil {
			return err
		}
		if ok {
			a.rep.Users = append(a.rep.Users, ua)
		}
	}
	for _, ta := range a.rep.Access {
		for _, p := range ta.Ports {
			a.rep.AccessChanged = a.rep.AccessChanged || p.changed()
		}
	}
	for _, u := range a.rep.Users {
		a.rep.AccessChanged = a.rep.AccessChanged || len(u.Gained)+len(u.Lost) > 0
	}
	return nil
}

// findDevices lists the tailnet's devices when a service has no address
// in the plan or a changed grant names tags, and gives services their
// device's address.
func (a *accessReview) findDevices(ctx context.Context, targets []*service, tags []string) error {
	need := len(tags) > 0 || slices.ContainsFunc(targets, func(s *service) bool { return !s.ip.IsValid() && s.kind == "service" })
	if !need {
		return nil
	}
	devs, err := a.api.ListDevices(ctx, tailnet.ListDevicesOptions{})
	if err != nil {
		return fmt.Errorf("listing the tailnet's devices: %w", err)
	}
	a.devices = devs
	for _, s := range targets {
		if s.ip.IsValid() || s.kind != "service" || !s.before {
			continue
		}
		for _, d := range devs {
			if strings.EqualFold(d.Hostname, s.name) {
				s.ip = firstIP(d.Addresses)
				break
			}
		}
	}
	return nil
}

// devicesWithTags returns the devices that carry one of tags and are not
// targets already.
func (a *accessReview) devicesWithTags(tags []string, targets []*service) []*service {
	var out []*service
	for _, d := range a.devices {
		ip := firstIP(d.Addresses)
		if !ip.IsValid() || !slices.ContainsFunc(d.Tags, func(t string) bool {
			return slices.ContainsFunc(tags, func(x string) bool { return strings.EqualFold(x, t) })
		}) {
			continue
		}
		if slices.ContainsFunc(targets, func(s *service) bool { return s.ip == ip || strings.EqualFold(s.name, d.Hostname) }) {
			continue
		}
		if len(out) == maxDevices {
			a.rep.Notes = append(a.rep.Notes, fmt.Sprintf("More than %d devices carry the tags the changed grants name; the review previews the first %d.", maxDevices, maxDevices))
			break
		}
		out = append(out, &service{kind: "device", name: d.Hostname, tags: d.Tags, ip: ip, before: true, after: true})
	}
	return out
}

// target previews one service, route or device on its declared ports and
// on the ports of the changed grants.
func (a *accessReview) target(ctx context.Context, s *service, probe []uint16) (TargetAccess, error) {
	ta := TargetAccess{Kind: s.kind, Name: s.name, Address: s.address, Plan: s.plan, Tags: s.tags, Ports: []PortAccess{}}
	if !s.before && s.after {
		ta.Status = "added"
	} else if s.before && !s.after {
		ta.Status = "removed"
	} else if s.changed {
		ta.Status = "changed"
	} else {
		ta.Status = "unchanged"
	}
	ports := slices.Compact(sortedPorts(append(slices.Clone(s.declared), probe...)))
	if !s.ip.IsValid() {
		ta.Note = "its address is known only once its device exists (after apply), so Tailscale cannot be asked who reaches it"
		return ta, nil
	}
	if len(ports) == 0 {
		ta.Note = "no port to ask about: it declares none and the changed grants name none"
		return ta, nil
	}
	ta.IP = s.ip.String()
	for _, port := range ports {
		pa := PortAccess{Port: port, Declared: slices.Contains(s.declared, port), Before: []string{}, After: []string{}}
		ipport := netip.AddrPortFrom(s.ip, port).String()
		if s.before {
			p, err := a.preview(ctx, a.cur, tailnet.PreviewIPPort, ipport)
			if err != nil {
				return ta, err
			}
			pa.Before = sources(p)
		}
		if s.after {
			p, err := a.preview(ctx, a.next, tailnet.PreviewIPPort, ipport)
			if err != nil {
				return ta, err
			}
			if p == nil {
				ta.Note = "Tailscale refuses the planned policy file, so who reaches it after the plans is unknown"
			}
			pa.After = sources(p)
		}
		if pa.After != nil {
			// Who gains and loses is known when who reaches it after
			// the plans is.
			pa.Gained, pa.Lost = difference(pa.After, pa.Before), difference(pa.Before, pa.After)
		}
		if !pa.Declared && len(pa.Before)+len(pa.After) == 0 {
			continue
		}
		ta.Ports = append(ta.Ports, pa)
	}
	return ta, nil
}

// user previews what a user reaches; a user that Tailscale does not know
// is returned Unknown, with the reason.
func (a *accessReview) user(ctx context.Context, login string) (UserAccess, bool, error) {
	ua := UserAccess{User: login, Before: []string{}, After: []string{}}
	before, err := a.preview(ctx, a.cur, tailnet.PreviewUser, login)
	if err != nil {
		return ua, false, err
	}
	if before == nil {
		// The current policy is accepted, so the user is what is refused.
		a.rep.Notes = append(a.rep.Notes, fmt.Sprintf("Tailscale does not preview the user %s (%s): a changed grant names a user the tailnet does not know.", login, a.lastRefusal()))
		ua.Unknown = true
		ua.Reason = fmt.Sprintf("Tailscale does not preview a user who has not joined the tailnet (%s); the grants apply once they join", a.lastRefusal())
		return ua, true, nil
	}
	after, err := a.preview(ctx, a.next, tailnet.PreviewUser, login)
	if err != nil {
		return ua, false, err
	}
	ua.Before, ua.After = destinations(before), destinations(after)
	if after != nil {
		ua.Gained, ua.Lost = difference(ua.After, ua.Before), difference(ua.Before, ua.After)
	}
	return ua, true, nil
}

// preview asks Tailscale, once per policy and question. It returns nil
// (and no error) when Tailscale refuses the question (HTTP 400: a policy
// it does not accept, or a user it does not know).
func (a *accessReview) preview(ctx context.Context, body []byte, typ tailnet.PreviewType, previewFor string) (*tailnet.Preview, error) {
	if bytes.Equal(body, a.next) && bytes.Equal(a.cur, a.next) {
		body = a.cur
	}
	which := "current"
	if !bytes.Equal(body, a.cur) {
		which = "planned"
	}
	k := which + " " + string(typ) + " " + previewFor
	if p, ok := a.cache[k]; ok {
		return p, nil
	}
	p, err := a.api.PreviewPolicy(ctx, body, typ, previewFor)
	if err != nil {
		ae, ok := tailnet.AsAPIError(err)
		if !ok || ae.Status != 400 {
			return nil, fmt.Errorf("asking Tailscale who reaches %s with the %s policy file: %w", previewFor, which, err)
		}
		a.refused = ae.Message
		p = nil
	}
	a.cache[k] = p
	return p, nil
}

func (a *accessReview) lastRefusal() string { return a.refused }

// sources returns the sources of the rules of a preview.
func sources(p *tailnet.Preview) []string {
	if p == nil {
		return nil
	}
	out := []string{}
	for _, m := range p.Matches {
		for _, u := range m.Users {
			out = append(out, u+qualifiers(m))
		}
	}
	return sortedUnique(out)
}

// destinations returns the destinations of the rules of a preview.
func destinations(p *tailnet.Preview) []string {
	if p == nil {
		return nil
	}
	out := []string{}
	for _, m := range p.Matches {
		for _, d := range m.Ports {
			out = append(out, d+qualifiers(m))
		}
	}
	return sortedUnique(out)
}

func qualifiers(m tailnet.RuleMatch) string {
	var q string
	if len(m.Via) > 0 {
		q += " via " + strings.Join(m.Via, ", ")
	}
	if len(m.Postures) > 0 {
		q += " if " + strings.Join(m.Postures, ", ")
	}
	return q
}

// difference returns the elements of a not in b.
func difference(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

func sortedPorts(p []uint16) []uint16 {
	out := slices.Clone(p)
	slices.Sort(out)
	return out
}

// policyFile is the part of a policy file the review reads. encoding/json
// matches member names case-insensitively, as Tailscale does.
type policyFile struct {
	Grants    []grantFile         `json:"grants"`
	Tests     []json.RawMessage   `json:"tests"`
	Groups    map[string][]string `json:"groups"`
	TagOwners map[string][]string `json:"tagOwners"`
}

type grantFile struct {
	Src []string `json:"src"`
	Dst []string `json:"dst"`
	IP  []string `json:"ip"`
	Via []string `json:"via,omitempty"`
	// App and SrcPosture are only told apart: a grant with them gives
	// other access than its src, dst and ip say.
	App        json.RawMessage `json:"app,omitempty"`
	SrcPosture []string        `json:"srcPosture,omitempty"`
}

func readPolicyFile(b []byte) (*policyFile, error) {
	std, err := hujson.Standardize(bytes.Clone(b))
	if err != nil {
		return nil, err
	}
	var f policyFile
	if err := json.Unmarshal(std, &f); err != nil {
		return nil, err
	}
	return &f, nil
}
