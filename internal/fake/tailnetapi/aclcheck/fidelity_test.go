package aclcheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// capture is one recorded answer of Tailscale SaaS to POST /acl.
type capture struct {
	ID          string          `json:"id"`
	Description string          `json:"description"`
	Policy      json.RawMessage `json:"policy"`
	Topology    Topology        `json:"topology"`
	Status      int             `json:"status"`
	Message     *string         `json:"message"`
	Data        []TestResult    `json:"data"`
}

// policyBytes returns the captured policy: a JSON string holding the file,
// or the file as a JSON object.
func (c capture) policyBytes(t *testing.T) []byte {
	t.Helper()
	if len(c.Policy) > 0 && c.Policy[0] == '"' {
		var s string
		if err := json.Unmarshal(c.Policy, &s); err != nil {
			t.Fatalf("%s: policy: %v", c.ID, err)
		}
		return []byte(s)
	}
	return c.Policy
}

// capturesDir finds shared/reference/saas-captures next to the repository
// by walking up from the working directory.
func capturesDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		candidate := filepath.Join(dir, "shared", "reference", "saas-captures")
		if st, err := os.Stat(candidate); err == nil && st.IsDir() {
			return candidate
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("../shared is absent: SaaS captures not available")
		}
		dir = parent
	}
}

func loadCaptures(t *testing.T, names ...string) []capture {
	t.Helper()
	dir := capturesDir(t)
	var out []capture
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var c capture
			if err := json.Unmarshal(line, &c); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out = append(out, c)
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if len(out) == 0 {
		t.Fatal("no captures found")
	}
	return out
}

func percent(n, d int) float64 {
	if d == 0 {
		return 100
	}
	return 100 * float64(n) / float64(d)
}

// TestFidelity runs Check on every SaaS capture and compares the outcome:
// accepted or rejected, and for rejected policies the exact message.
func TestFidelity(t *testing.T) {
	caps := loadCaptures(t, "acl.jsonl", "grant.jsonl", "routes.jsonl", "policytest.jsonl")
	statusOK, rejected, messageOK := 0, 0, 0
	var mismatches []string
	for _, c := range caps {
		got := Check(c.policyBytes(t), c.Topology)
		wantReject := c.Status != 200
		if (got != nil) == wantReject {
			statusOK++
		}
		want := ""
		if c.Message != nil {
			want = *c.Message
		}
		gotMsg := ""
		if got != nil {
			gotMsg = got.Message
		}
		if wantReject {
			rejected++
			if got != nil && got.Message == want {
				messageOK++
			}
		}
		if (got != nil) != wantReject || (wantReject && gotMsg != want) {
			mismatches = append(mismatches, fmt.Sprintf("%s: SaaS %d %q, aclcheck %q", c.ID, c.Status, want, gotMsg))
		}
	}
	summary := fmt.Sprintf("fidelity: status %d/%d (%.1f%%), message %d/%d (%.1f%%)",
		statusOK, len(caps), percent(statusOK, len(caps)), messageOK, rejected, percent(messageOK, rejected))
	t.Log(summary)
	fmt.Println(summary)
	for _, m := range mismatches {
		t.Log("mismatch: " + m)
	}
	if percent(statusOK, len(caps)) < 95 {
		t.Errorf("status agreement %.1f%% is below 95%%", percent(statusOK, len(caps)))
	}
	if percent(messageOK, rejected) < 90 {
		t.Errorf("message agreement %.1f%% is below 90%%", percent(messageOK, rejected))
	}
}

// policytestData is the data aclcheck answers for the policytest captures
// that fail their tests. SaaS's recorded bodies carry the message only, so
// these pin aclcheck's own data in SaaS's phrasing; a capture that records
// data is compared with that instead.
var policytestData = map[string][]TestResult{
	"policytest-accept-fail-autogroup-member-src-wildcard-dst": {
		{User: "autogroup:member", Errors: []string{`address "*:*": tests need a single port, not a list, a range or "*"`}},
	},
	"policytest-accept-fail-group-src-tag-dst": {
		{User: "group:developers", Errors: []string{`address "tag:server:22": want: Accept, got: Drop`}},
	},
	"policytest-accept-fail-port-list-mismatch": {
		{User: "thor@example.org", Errors: []string{`address "webserver:22,3306": tests need a single port, not a list, a range or "*"`}},
	},
	"policytest-accept-fail-tag-src-host-dst": {
		{User: "tag:client", Errors: []string{`address "webserver:443": want: Accept, got: Drop`}},
	},
	"policytest-accept-fail-user-src-cidr-dst": {
		{User: "thor@example.org", Errors: []string{`address "10.0.0.0/8:22": tests need a single address, not a CIDR`}},
	},
	"policytest-allpass-grants-only-tag-src-host-alias-cidr-dst": {
		{User: "tag:client", Errors: []string{`address "internal:22": tests need a single address, not a CIDR`}},
	},
	"policytest-deny-fail-autogroup-member-src-wildcard-dst": {
		{User: "autogroup:member", Errors: []string{`address "*:*": tests need a single port, not a list, a range or "*"`}},
	},
	"policytest-deny-fail-autogroup-self-dst": {
		{User: "thor@example.org", Errors: []string{`address "autogroup:self:22": want: Drop, got: Accept`}},
	},
	"policytest-deny-fail-tag-src-host-dst": {
		{User: "tag:client", Errors: []string{`address "webserver:80": want: Drop, got: Accept`}},
	},
	"policytest-deny-fail-user-src-tag-dst": {
		{User: "thor@example.org", Errors: []string{`address "tag:server:22": want: Drop, got: Accept`}},
	},
	"policytest-dst-unknown-cidr-shape": {
		{User: "thor@example.org", Errors: []string{`address "10.0.0.0/33:443": "10.0.0.0/33": invalid address`}},
	},
	"policytest-dst-unknown-tag": {
		{User: "thor@example.org", Errors: []string{`address "tag:phantom:22": tag not found: "tag:phantom"`}},
	},
	"policytest-dst-unknown-user": {
		{User: "thor@example.org", Errors: []string{`address "odin@example.com:22": want: Accept, got: Drop`}},
	},
	"policytest-malformed-test-missing-accept-and-deny": {
		{User: "thor@example.org", Errors: []string{"accept or deny must be specified"}},
	},
	"policytest-malformed-test-missing-src": {
		{User: "", Errors: []string{"src must be specified"}},
	},
	"policytest-malformed-test-port-negative": {
		{User: "thor@example.org", Errors: []string{`address "webserver:-1": port range "-1": invalid first integer`}},
	},
	"policytest-malformed-test-port-out-of-range": {
		{User: "thor@example.org", Errors: []string{`address "webserver:99999": port range "99999": invalid first integer`}},
	},
	"policytest-mixed-three-entries": {
		{User: "thor@example.org", Errors: []string{`address "webserver:443": want: Accept, got: Drop`}},
		{User: "thor@example.org", Errors: []string{`address "webserver:80": want: Drop, got: Accept`}},
	},
	"policytest-src-unknown-autogroup": {
		{User: "autogroup:bogus", Errors: []string{`src "autogroup:bogus": autogroup not found: "autogroup:bogus"`}},
	},
	"policytest-src-unknown-host": {
		{User: "phantomhost", Errors: []string{`src "phantomhost": invalid address`}},
	},
	"policytest-src-unknown-user-email": {
		{User: "ghost@nowhere.invalid", Errors: []string{`src "ghost@nowhere.invalid": user not found`}},
	},
}

// TestPolicytestData checks the data of every policytest capture that
// failed its tests: one entry per failing test, naming its src, with the
// failures in SaaS's phrasing.
func TestPolicytestData(t *testing.T) {
	caps := loadCaptures(t, "policytest.jsonl")
	seen := 0
	for _, c := range caps {
		if c.Message == nil || *c.Message != testsFailed {
			continue
		}
		seen++
		t.Run(c.ID, func(t *testing.T) {
			got := Check(c.policyBytes(t), c.Topology)
			if got == nil {
				t.Fatalf("accepted; SaaS answered %q", *c.Message)
			}
			want := c.Data
			if want == nil {
				var ok bool
				if want, ok = policytestData[c.ID]; !ok {
					t.Fatalf("no expected data for this capture; aclcheck answered %+v", got.Data)
				}
			}
			if got.Message != testsFailed || !reflect.DeepEqual(got.Data, want) {
				t.Errorf("got %q %+v\nwant %q %+v", got.Message, got.Data, testsFailed, want)
			}
		})
	}
	if seen != len(policytestData) {
		t.Errorf("%d captures failed their tests, %d have expected data", seen, len(policytestData))
	}
}
