package policy

import (
	"slices"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

const explainBefore = `{
	"groups": {"group:billing": ["carol@example.com"], "group:ops": ["alice@example.com"]},
	"hosts": {"phone": "100.64.0.3"},
	"grants": [
		// qtail:grant:ops-phone
		{"src": ["group:ops"], "dst": ["phone"], "ip": ["tcp:443"]},
		{"src": ["dave@example.com"], "dst": ["tag:k8s-billing"], "ip": ["*"]},
	],
	"tests": [
		// qtail:policy_test:carol-not-billing
		{"src": "carol@example.com", "deny": ["tag:k8s-billing:443"]},
		{"src": "alice@example.com", "accept": ["100.64.0.3:443"]},
		{"src": "dave@example.com", "deny": ["tag:k8s-billing:22"]},
	],
}`

func explainDocs(t *testing.T, muts ...policyfile.Mutation) (cur, next *policyfile.Document, changed []policyfile.Key) {
	t.Helper()
	cur = mustParse(t, []byte(explainBefore))
	next = cur.Clone()
	for _, m := range muts {
		if err := next.Apply(m); err != nil {
			t.Fatal(err)
		}
		changed = append(changed, m.Key)
	}
	return cur, next, changed
}

func TestExplainTests(t *testing.T) {
	grant := func(name string) policyfile.Key { return policyfile.Key{Kind: policyfile.KindGrant, Name: name} }
	name := func(k policyfile.Key) string { return k.String() }

	t.Run("a planned grant breaks a qtail test's deny", func(t *testing.T) {
		cur, next, changed := explainDocs(t,
			policyfile.Mutation{Key: grant("billing-all"), Value: raw(`{"src":["group:billing"],"dst":["tag:k8s-billing"],"ip":["tcp:443"]}`)},
			policyfile.Mutation{Key: grant("unrelated"), Value: raw(`{"src":["group:billing"],"dst":["tag:web"],"ip":["tcp:443"]}`)})
		got := ExplainTests(cur, next, changed, []TestFailure{{Src: "carol@example.com", Errors: []string{`address "tag:k8s-billing:443": want: Drop, got: Accept`}}})
		if len(got) != 1 {
			t.Fatalf("got %d explanations, want 1", len(got))
		}
		f := got[0]
		if f.Key != (policyfile.Key{Kind: policyfile.KindPolicyTest, Name: "carol-not-billing"}) || f.Hand() {
			t.Errorf("test %v (hand %t), want the qtail test carol-not-billing", f.Key, f.Hand())
		}
		if !slices.Equal(f.Culprits, []policyfile.Key{grant("billing-all")}) {
			t.Errorf("culprits %v, want billing-all alone", f.Culprits)
		}
		msg := f.Explain(name)
		for _, want := range []string{`policy_test "carol-not-billing"`, "must not reach tag:k8s-billing:443", `grant "billing-all"`} {
			if !strings.Contains(msg, want) {
				t.Errorf("%q does not say %q", msg, want)
			}
		}
	})

	t.Run("two addresses of one test, broken by one grant, are one explanation", func(t *testing.T) {
		cur, next, changed := explainDocs(t,
			policyfile.Mutation{Key: grant("billing-all"), Value: raw(`{"src":["group:billing"],"dst":["tag:k8s-billing"],"ip":["*"]}`)})
		if err := next.Apply(policyfile.Mutation{Key: policyfile.Key{Kind: policyfile.KindPolicyTest, Name: "carol-not-billing"},
			Value: raw(`{"src":"carol@example.com","deny":["tag:k8s-billing:443","tag:k8s-billing:8080"]}`), Overwrite: true}); err != nil {
			t.Fatal(err)
		}
		got := ExplainTests(cur, next, changed, []TestFailure{{Src: "carol@example.com", Errors: []string{
			`address "tag:k8s-billing:443": want: Drop, got: Accept`, `address "tag:k8s-billing:8080": want: Drop, got: Accept`}}})
		if len(got) != 1 || !slices.Equal(got[0].Addresses, []string{"tag:k8s-billing:443", "tag:k8s-billing:8080"}) {
			t.Fatalf("got %+v, want one explanation of both addresses", got)
		}
		if msg := got[0].Explain(name); !strings.Contains(msg, "must not reach tag:k8s-billing:443, tag:k8s-billing:8080, and with the change it does") {
			t.Errorf("%q does not name both addresses", msg)
		}
	})

	t.Run("a narrowed grant breaks a hand-written accept", func(t *testing.T) {
		cur, next, changed := explainDocs(t,
			policyfile.Mutation{Key: grant("ops-phone"), Value: raw(`{"src":["group:ops"],"dst":["phone"],"ip":["tcp:8443"]}`), Overwrite: true})
		got := ExplainTests(cur, next, changed, []TestFailure{{Src: "alice@example.com", Errors: []string{`address "100.64.0.3:443": want: Accept, got: Drop`}}})
		f := got[0]
		if !f.Hand() || !strings.Contains(string(f.Entry), `"accept":["100.64.0.3:443"]`) {
			t.Errorf("want the hand-written test quoted, got key %v entry %s", f.Key, f.Entry)
		}
		if !slices.Equal(f.Culprits, []policyfile.Key{grant("ops-phone")}) {
			t.Errorf("culprits %v, want ops-phone", f.Culprits)
		}
		msg := f.Explain(name)
		for _, want := range []string{"written by hand in the policy file (not qtail's)", `{"accept":["100.64.0.3:443"],"src":"alice@example.com"}`, "take that access away", `grant "ops-phone"`} {
			if !strings.Contains(msg, want) {
				t.Errorf("%q does not say %q", msg, want)
			}
		}
	})

	t.Run("a removed grant breaks an accept", func(t *testing.T) {
		cur, next, changed := explainDocs(t, policyfile.Mutation{Key: grant("ops-phone"), Delete: true})
		got := ExplainTests(cur, next, changed, []TestFailure{{Src: "alice@example.com", Errors: []string{`address "100.64.0.3:443": want: Accept, got: Drop`}}})
		if !slices.Equal(got[0].Culprits, []policyfile.Key{grant("ops-phone")}) {
			t.Errorf("culprits %v, want ops-phone", got[0].Culprits)
		}
	})

	t.Run("no change explains it: the grants that reach are named", func(t *testing.T) {
		cur, next, changed := explainDocs(t)
		got := ExplainTests(cur, next, changed, []TestFailure{{Src: "dave@example.com", Errors: []string{`address "tag:k8s-billing:22": want: Drop, got: Accept`}}})
		f := got[0]
		if len(f.Culprits) != 0 || len(f.Reaching) != 1 || !strings.Contains(f.Reaching[0], "written by hand") {
			t.Errorf("culprits %v reaching %v, want the hand-written grant reaching", f.Culprits, f.Reaching)
		}
	})

	t.Run("another kind of error", func(t *testing.T) {
		cur, next, changed := explainDocs(t)
		got := ExplainTests(cur, next, changed, []TestFailure{{Src: "ghost@example.com", Errors: []string{`src "ghost@example.com": user not found`}}})
		if got[0].Entry != nil || got[0].Address != "" {
			t.Errorf("got %+v, want no test and no address", got[0])
		}
		if msg := got[0].Explain(name); !strings.Contains(msg, "user not found") {
			t.Errorf("%q does not give Tailscale's error", msg)
		}
	})
}

func TestPortMatches(t *testing.T) {
	for _, tc := range []struct {
		ip, port string
		want     bool
	}{
		{"*", "22", true}, {"tcp:443", "443", true}, {"443", "443", true}, {"tcp:443", "22", false},
		{"tcp:80-90", "85", true}, {"tcp:80-90", "91", false}, {"tcp:*", "1", true}, {"tcp:443", "*", true},
	} {
		if got := portMatches(tc.ip, tc.port); got != tc.want {
			t.Errorf("portMatches(%q, %q) = %t, want %t", tc.ip, tc.port, got, tc.want)
		}
	}
}
