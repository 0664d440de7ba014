package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// TestFailure is one failing test as Tailscale reports it in the data of
// a refusal: the test's src and its errors, such as
// `address "tag:web:443": want: Drop, got: Accept`.
type TestFailure struct {
	Src    string
	Errors []string
}

// FailedTest explains one error of a failing test: which test of the
// refused policy file it is, and which of the changes break it.
type FailedTest struct {
	// Src is the test's source, and Error what Tailscale says of it.
	Src   string `json:"src"`
	Error string `json:"error"`
	// Address is the destination that fails, and Want the verdict the
	// test asks for there ("Accept" or "Drop"); both empty for another
	// kind of error (an unknown user, say). Addresses are all the
	// destinations of the test that fail for the same reason, Address
	// first.
	Address   string   `json:"address,omitempty"`
	Addresses []string `json:"addresses,omitempty"`
	Want      string   `json:"want,omitempty"`
	// Key is the qtail_policy_test fragment of the test; zero when the
	// test is written by hand in the policy file (or was not found).
	Key policyfile.Key `json:"-"`
	// Entry is the test as the policy file holds it, in canonical JSON;
	// nil when no test of the file matches the error.
	Entry json.RawMessage `json:"entry,omitempty"`
	// Culprits are the changed grants that cause the failure: for a test
	// that wants Drop, the grants the changes add or widen that let Src
	// reach Address; for one that wants Accept, the grants that did and
	// that the changes remove or narrow.
	Culprits []policyfile.Key `json:"-"`
	// Reaching, for a test that wants Drop and no change explains, names
	// the grants of the planned policy file that let Src reach Address:
	// qtail's by key, the others quoted.
	Reaching []string `json:"reaching,omitempty"`
}

// Hand reports whether the test is in the policy file but not qtail's.
func (f FailedTest) Hand() bool { return f.Entry != nil && f.Key.Name == "" }

// verdictError is the error Tailscale gives a test whose verdict differs.
var verdictError = regexp.MustCompile(`^address "(.*)": want: (Accept|Drop), got: (Accept|Drop)$`)

// ExplainTests matches the failures that Tailscale reports for next, the
// refused policy file, to its tests, and finds the grants among changed
// (the fragments the refused changes write or remove) that break them,
// by comparing who reaches what in cur, the policy file before the
// changes, and in next. The evaluation is qtail's own and a best effort:
// it reads sources, groups, hosts and ports, not which device carries
// which tag.
func ExplainTests(cur, next *policyfile.Document, changed []policyfile.Key, failures []TestFailure) []FailedTest {
	curFile, nextFile := readReach(cur), readReach(next)
	tests := testsOf(next)
	var out []FailedTest
	for _, fl := range failures {
		for _, e := range fl.Errors {
			f := FailedTest{Src: fl.Src, Error: e}
			if m := verdictError.FindStringSubmatch(e); m != nil {
				f.Address, f.Want = m[1], m[2]
				f.Addresses = []string{f.Address}
			}
			f.Key, f.Entry = tests.find(f.Src, f.Address, f.Want)
			if f.Address != "" {
				f.Culprits = culprits(cur, next, curFile, nextFile, changed, f)
				if len(f.Culprits) == 0 && f.Want == "Drop" {
					f.Reaching = reaching(next, nextFile, f)
				}
			}
			out = merge(out, f)
		}
	}
	return out
}

// merge adds f to out, or its address to the explanation of the same
// test that fails the same way for the same changes.
func merge(out []FailedTest, f FailedTest) []FailedTest {
	for i, o := range out {
		if f.Address != "" && o.Address != "" && o.Src == f.Src && o.Want == f.Want && o.Key == f.Key &&
			string(o.Entry) == string(f.Entry) && slices.Equal(o.Culprits, f.Culprits) && slices.Equal(o.Reaching, f.Reaching) {
			out[i].Addresses = append(out[i].Addresses, f.Address)
			out[i].Error += "; " + f.Error
			return out
		}
	}
	return append(out, f)
}

// Explain says in a sentence or two which test fails and which changes
// break it; name names a fragment (its resource, say).
func (f FailedTest) Explain(name func(policyfile.Key) string) string {
	var b strings.Builder
	what := fmt.Sprintf("the test of %q", f.Src)
	if f.Key.Name != "" {
		what = name(f.Key)
	} else if f.Hand() {
		what = "the test " + string(f.Entry) + ", written by hand in the policy file (not qtail's)"
	}
	addrs := strings.Join(f.Addresses, ", ")
	switch f.Want {
	case "Drop":
		fmt.Fprintf(&b, "The change breaks %s: its deny says that %s must not reach %s, and with the change it does.", what, f.Src, addrs)
	case "Accept":
		fmt.Fprintf(&b, "The change breaks %s: its accept says that %s reaches %s, and with the change it does not.", what, f.Src, addrs)
	default:
		fmt.Fprintf(&b, "Tailscale refuses %s: %s.", what, f.Error)
	}
	names := func(keys []policyfile.Key) string {
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = name(k)
		}
		return strings.Join(out, ", ")
	}
	if len(f.Culprits) > 0 && f.Want == "Drop" {
		fmt.Fprintf(&b, " The planned grants that let it: %s.", names(f.Culprits))
	} else if len(f.Culprits) > 0 {
		fmt.Fprintf(&b, " The planned changes that take that access away: %s.", names(f.Culprits))
	} else if len(f.Reaching) > 0 {
		fmt.Fprintf(&b, " No grant the changes write reaches it on its own; the grants that do: %s.", strings.Join(f.Reaching, ", "))
	}
	return b.String()
}

// ExplainTests is ExplainTests for muts on top of the changes planned so
// far: the grants they change, and those the plan changed before them,
// are the suspects. It returns nil when the policy file cannot be read.
func (p *Planner) ExplainTests(ctx context.Context, muts []policyfile.Mutation, failures []TestFailure) []FailedTest {
	if len(failures) == 0 {
		return nil
	}
	next, before, _, err := p.plannedCopy(ctx)
	if err != nil {
		return nil
	}
	cur, err := policyfile.Parse(before)
	if err != nil {
		return nil
	}
	for _, m := range muts {
		_ = next.Apply(m)
	}
	var changed []policyfile.Key
	for _, m := range append(p.Planned(), muts...) {
		changed = append(changed, m.Key)
	}
	return ExplainTests(cur, next, changed, failures)
}

// reachFile is what the evaluation reads of a policy file.
type reachFile struct {
	Grants []json.RawMessage   `json:"grants"`
	Tests  []json.RawMessage   `json:"tests"`
	Groups map[string][]string `json:"groups"`
	Hosts  map[string]string   `json:"hosts"`
	// groups and hosts are Groups and Hosts by lower-case names, groups
	// with lower-case members.
	groups map[string][]string
	hosts  map[string]string
}

type grantEntry struct {
	Src []string `json:"src"`
	Dst []string `json:"dst"`
	IP  []string `json:"ip"`
}

type testEntry struct {
	Src    string   `json:"src"`
	Accept []string `json:"accept"`
	Deny   []string `json:"deny"`
}

func readReach(doc *policyfile.Document) *reachFile {
	f := &reachFile{}
	if doc != nil {
		if std, err := hujson.Standardize(bytes.Clone(doc.Bytes())); err == nil {
			_ = json.Unmarshal(std, f)
		}
	}
	f.groups, f.hosts = map[string][]string{}, map[string]string{}
	for g, members := range f.Groups {
		for _, m := range members {
			f.groups[strings.ToLower(g)] = append(f.groups[strings.ToLower(g)], strings.ToLower(m))
		}
	}
	for h, a := range f.Hosts {
		f.hosts[strings.ToLower(h)] = a
	}
	return f
}

// tests are the tests of a policy file, each with its fragment key when
// it is qtail's.
type tests []struct {
	key   policyfile.Key
	entry json.RawMessage
	t     testEntry
}

func testsOf(doc *policyfile.Document) tests {
	var out tests
	if doc == nil {
		return out
	}
	marked := map[string]policyfile.Key{}
	for _, fr := range doc.Fragments() {
		if fr.Key.Kind == policyfile.KindPolicyTest {
			marked[string(fr.Value)] = fr.Key
		}
	}
	for _, raw := range readReach(doc).Tests {
		c, err := policyfile.Canonicalize(raw)
		if err != nil {
			continue
		}
		var t testEntry
		if json.Unmarshal(c, &t) != nil {
			continue
		}
		out = append(out, struct {
			key   policyfile.Key
			entry json.RawMessage
			t     testEntry
		}{marked[string(c)], c, t})
	}
	return out
}

// find returns the test of src that wants want at address (any test of
// src when the error names no address), qtail's first.
func (ts tests) find(src, address, want string) (policyfile.Key, json.RawMessage) {
	var hand json.RawMessage
	for _, t := range ts {
		if !strings.EqualFold(t.t.Src, src) {
			continue
		}
		list := slices.Concat(t.t.Accept, t.t.Deny)
		switch want {
		case "Accept":
			list = t.t.Accept
		case "Drop":
			list = t.t.Deny
		}
		if address != "" && !slices.Contains(list, address) {
			continue
		}
		if t.key.Name != "" {
			return t.key, t.entry
		}
		if hand == nil {
			hand = t.entry
		}
	}
	return policyfile.Key{}, hand
}

// culprits returns the changed grants whose change explains f.
func culprits(cur, next *policyfile.Document, curFile, nextFile *reachFile, changed []policyfile.Key, f FailedTest) []policyfile.Key {
	var out []policyfile.Key
	for _, k := range changed {
		if k.Kind != policyfile.KindGrant || slices.Contains(out, k) {
			continue
		}
		before := curFile.reaches(cur.Get(k), f.Src, f.Address)
		after := nextFile.reaches(next.Get(k), f.Src, f.Address)
		if f.Want == "Drop" && after && !before || f.Want == "Accept" && before && !after {
			out = append(out, k)
		}
	}
	return out
}

// reaching names the grants of next that let f.Src reach f.Address.
func reaching(next *policyfile.Document, file *reachFile, f FailedTest) []string {
	marked := map[string]policyfile.Key{}
	for _, fr := range next.Fragments() {
		if fr.Key.Kind == policyfile.KindGrant {
			marked[string(fr.Value)] = fr.Key
		}
	}
	var out []string
	for _, raw := range file.Grants {
		c, err := policyfile.Canonicalize(raw)
		if err != nil || !file.grantReaches(c, f.Src, f.Address) {
			continue
		}
		if k, ok := marked[string(c)]; ok {
			out = append(out, k.String())
		} else {
			out = append(out, "a grant written by hand, "+string(c))
		}
	}
	return out
}

func (f *reachFile) reaches(fr policyfile.Fragment, src, address string) bool {
	return fr.Found && f.grantReaches(fr.Value, src, address)
}

// grantReaches reports whether the grant lets src reach address
// ("host:port").
func (f *reachFile) grantReaches(value json.RawMessage, src, address string) bool {
	var g grantEntry
	if json.Unmarshal(value, &g) != nil {
		return false
	}
	i := strings.LastIndexByte(address, ':')
	if i < 0 {
		return false
	}
	host, port := address[:i], address[i+1:]
	return slices.ContainsFunc(g.Src, func(s string) bool { return f.srcMatches(s, src) }) &&
		slices.ContainsFunc(g.Dst, func(d string) bool { return f.dstMatches(d, host) }) &&
		slices.ContainsFunc(g.IP, func(ip string) bool { return portMatches(ip, port) })
}

func (f *reachFile) srcMatches(entry, src string) bool {
	e, s := strings.ToLower(entry), strings.ToLower(src)
	isUser := strings.Contains(s, "@") && !strings.Contains(s, ":")
	if e == "*" || e == s {
		return true
	}
	if e == "autogroup:member" || e == "autogroup:members" {
		return isUser || strings.HasPrefix(s, "group:")
	}
	return strings.HasPrefix(e, "group:") && isUser && slices.Contains(f.groups[e], s)
}

func (f *reachFile) dstMatches(entry, host string) bool {
	e, h := strings.ToLower(entry), strings.ToLower(host)
	if e == "*" || e == h {
		return true
	}
	hp, ok1 := f.prefix(h)
	ep, ok2 := f.prefix(e)
	return ok1 && ok2 && ep.Bits() <= hp.Bits() && ep.Contains(hp.Addr())
}

// prefix resolves an address, a network or a host alias.
func (f *reachFile) prefix(s string) (netip.Prefix, bool) {
	if a, ok := f.hosts[s]; ok {
		s = a
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	p, err := netip.ParsePrefix(s)
	return p.Masked(), err == nil
}

// portMatches reports whether an ip entry of a grant ("*", "443",
// "tcp:443", "tcp:80-90", "tcp:*") covers port; a port that is not a
// number is covered by any entry.
func portMatches(ip, port string) bool {
	if i := strings.LastIndexByte(ip, ':'); i >= 0 {
		ip = ip[i+1:]
	}
	if ip == "*" {
		return true
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return true
	}
	lo, hi, isRange := strings.Cut(ip, "-")
	a, err := strconv.ParseUint(lo, 10, 16)
	if err != nil {
		return false
	}
	b := a
	if isRange {
		if b, err = strconv.ParseUint(hi, 10, 16); err != nil {
			return false
		}
	}
	return a <= n && n <= b
}

// ExplainTests is ExplainTests for a write of muts that Tailscale refused:
// the policy file as the Store last read it, before and with muts, whose
// grants are the suspects. It returns nil when the policy file cannot be
// read.
func (s *Store) ExplainTests(ctx context.Context, muts []policyfile.Mutation, failures []TestFailure) []FailedTest {
	if len(failures) == 0 {
		return nil
	}
	c, err := s.get(ctx, false)
	if err != nil {
		return nil
	}
	cur, err := c.document()
	if err != nil {
		return nil
	}
	next := cur.Clone()
	changed := make([]policyfile.Key, 0, len(muts))
	for _, m := range muts {
		_ = next.Apply(m)
		changed = append(changed, m.Key)
	}
	return ExplainTests(cur, next, changed, failures)
}
