package policy

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

func TestPlannerAndStoreExplainTests(t *testing.T) {
	ctx := context.Background()
	grant := func(name string) policyfile.Key { return policyfile.Key{Kind: policyfile.KindGrant, Name: name} }
	billing := policyfile.Mutation{Key: grant("billing-all"), Value: raw(`{"src":["group:billing"],"dst":["tag:k8s-billing"],"ip":["tcp:443"]}`)}
	unrelated := policyfile.Mutation{Key: grant("unrelated"), Value: raw(`{"src":["group:billing"],"dst":["tag:web"],"ip":["tcp:443"]}`)}
	failures := []TestFailure{{Src: "carol@example.com", Errors: []string{`address "tag:k8s-billing:443": want: Drop, got: Accept`}}}
	carol := policyfile.Key{Kind: policyfile.KindPolicyTest, Name: "carol-not-billing"}

	// The Planner suspects the changes planned before too.
	p := NewPlanner(NewStore(newMemBackend(explainBefore), StoreOptions{}))
	if got := p.ExplainTests(ctx, []policyfile.Mutation{unrelated}, nil); got != nil {
		t.Errorf("Planner.ExplainTests without failures = %+v", got)
	}
	p.Record(billing)
	got := p.ExplainTests(ctx, []policyfile.Mutation{unrelated}, failures)
	if len(got) != 1 || got[0].Key != carol || !slices.Equal(got[0].Culprits, []policyfile.Key{grant("billing-all")}) {
		t.Errorf("Planner.ExplainTests = %+v, want carol-not-billing broken by the planned billing-all", got)
	}

	// The Store suspects the refused changes, on top of its copy.
	s := NewStore(newMemBackend(explainBefore), StoreOptions{})
	if got := s.ExplainTests(ctx, []policyfile.Mutation{billing}, nil); got != nil {
		t.Errorf("Store.ExplainTests without failures = %+v", got)
	}
	got = s.ExplainTests(ctx, []policyfile.Mutation{billing, unrelated}, failures)
	if len(got) != 1 || got[0].Key != carol || !slices.Equal(got[0].Culprits, []policyfile.Key{grant("billing-all")}) {
		t.Errorf("Store.ExplainTests = %+v, want carol-not-billing broken by billing-all", got)
	}
	if got := s.ExplainTests(ctx, []policyfile.Mutation{unrelated}, failures); len(got) != 1 || len(got[0].Culprits) != 0 {
		t.Errorf("Store.ExplainTests of an unrelated change = %+v, want no culprit", got)
	}
}

const reachPolicy = `{
	"groups": {"group:ops": ["alice@example.com"]},
	"grants": [
		// qtail:grant:ops-net
		{"src": ["autogroup:member"], "dst": ["10.0.0.0/8"], "ip": ["tcp:22"]},
	],
	"tests": [
		{"src": "alice@example.com", "deny": ["10.1.2.3:80"]},
		{"src": "alice@example.com", "deny": ["10.1.2.3:22"]},
		{"src": 5, "deny": ["10.1.2.3:22"]},
	],
}`

func TestExplainTestsFindsTheTestOfTheAddress(t *testing.T) {
	doc := mustParse(t, []byte(reachPolicy))
	got := ExplainTests(doc, doc, nil, []TestFailure{{Src: "alice@example.com", Errors: []string{`address "10.1.2.3:22": want: Drop, got: Accept`}}})
	if len(got) != 1 {
		t.Fatalf("got %+v, want one explanation", got)
	}
	f := got[0]
	// The second test of alice is the one that names the address; the
	// test with a numeric src is not one.
	if !strings.Contains(string(f.Entry), `"deny":["10.1.2.3:22"]`) || !strings.Contains(string(f.Entry), "alice") {
		t.Errorf("entry %s, want the test of alice that denies 10.1.2.3:22", f.Entry)
	}
	// No change explains it: qtail's grant that reaches it (a network
	// that holds the address, autogroup:member for a user) is named.
	want := policyfile.Key{Kind: policyfile.KindGrant, Name: "ops-net"}.String()
	if !slices.Equal(f.Reaching, []string{want}) {
		t.Errorf("reaching %q, want %q", f.Reaching, want)
	}
	if msg := f.Explain(func(k policyfile.Key) string { return k.String() }); !strings.Contains(msg, "the grants that do: "+want) {
		t.Errorf("%q does not name the grant that reaches", msg)
	}
}

func TestExplainTestsWithoutDocuments(t *testing.T) {
	got := ExplainTests(nil, nil, nil, []TestFailure{{Src: "ghost@example.com", Errors: []string{`src "ghost@example.com": user not found`}}})
	if len(got) != 1 || got[0].Entry != nil || got[0].Error != `src "ghost@example.com": user not found` {
		t.Errorf("got %+v, want the error alone", got)
	}
}

func TestCulpritsAreGrantsNamedOnce(t *testing.T) {
	cur := mustParse(t, []byte(explainBefore))
	next := cur.Clone()
	billing := policyfile.Key{Kind: policyfile.KindGrant, Name: "billing-all"}
	if err := next.Apply(policyfile.Mutation{Key: billing, Value: raw(`{"src":["group:billing"],"dst":["tag:k8s-billing"],"ip":["*"]}`)}); err != nil {
		t.Fatal(err)
	}
	test := policyfile.Key{Kind: policyfile.KindPolicyTest, Name: "carol-not-billing"}
	f := FailedTest{Src: "carol@example.com", Address: "tag:k8s-billing:443", Want: "Drop"}
	got := culprits(cur, next, readReach(cur), readReach(next), []policyfile.Key{test, billing, billing}, f)
	if !slices.Equal(got, []policyfile.Key{billing}) {
		t.Errorf("culprits = %v, want billing-all once", got)
	}
}

func TestGrantReaches(t *testing.T) {
	f := readReach(mustParse(t, []byte(reachPolicy)))
	for _, tc := range []struct {
		grant, src, address string
		want                bool
	}{
		{`{"src":["*"],"dst":["*"],"ip":["*"]}`, "alice@example.com", ":443", true},
		{`{"src":["*"],"dst":["*"],"ip":["*"]}`, "alice@example.com", "no-port", false},
		{`{"src":"*","dst":["*"],"ip":["*"]}`, "alice@example.com", "10.1.2.3:22", false},
		{`{"src":["autogroup:member"],"dst":["10.0.0.0/8"],"ip":["22"]}`, "alice@example.com", "10.1.2.3:22", true},
		{`{"src":["autogroup:member"],"dst":["10.0.0.0/8"],"ip":["22"]}`, "alice@example.com", "10.1.2.3:23", false},
		{`{"src":["autogroup:member"],"dst":["10.0.0.0/8"],"ip":["22"]}`, "tag:web", "10.1.2.3:22", false},
		{`{"src":["autogroup:member"],"dst":["10.0.0.0/8"],"ip":["22"]}`, "group:ops", "10.1.2.3:22", true},
		{`{"src":["group:ops"],"dst":["10.0.0.0/8"],"ip":["22"]}`, "alice@example.com", "10.1.2.3:22", true},
		{`{"src":["group:ops"],"dst":["10.0.0.0/8"],"ip":["22"]}`, "bob@example.com", "10.1.2.3:22", false},
		{`{"src":["*"],"dst":["10.0.0.0/8"],"ip":["22"]}`, "alice@example.com", "10.1.2.3/8:22", true},
		{`{"src":["*"],"dst":["10.0.0.0/8"],"ip":["22"]}`, "alice@example.com", "192.168.0.1:22", false},
		{`{"src":["*"],"dst":["10.0.0.0/8"],"ip":["22"]}`, "alice@example.com", "tag:web:22", false},
	} {
		if got := f.grantReaches(raw(tc.grant), tc.src, tc.address); got != tc.want {
			t.Errorf("grantReaches(%s, %q, %q) = %t, want %t", tc.grant, tc.src, tc.address, got, tc.want)
		}
	}
}

func TestPortMatchesOddEntries(t *testing.T) {
	for _, tc := range []struct {
		ip, port string
		want     bool
	}{
		{":443", "443", true}, {"tcp:http", "80", false}, {"tcp:80-x", "85", false}, {"tcp:80-90", "80", true}, {"tcp:80-90", "90", true}, {"tcp:80-90", "79", false},
	} {
		if got := portMatches(tc.ip, tc.port); got != tc.want {
			t.Errorf("portMatches(%q, %q) = %t, want %t", tc.ip, tc.port, got, tc.want)
		}
	}
}

func TestExplainNamesNoGrantWhenNoneReaches(t *testing.T) {
	f := FailedTest{Src: "ghost@example.com", Error: `src "ghost@example.com": user not found`}
	if msg := f.Explain(func(k policyfile.Key) string { return k.String() }); strings.Contains(msg, "the grants that do") {
		t.Errorf("%q names grants that reach, though none does", msg)
	}
}
