package tailnetapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/tailscale/hujson"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

const aclPath = "/api/v2/tailnet/-/acl"

func TestGetPolicyHonoursAccept(t *testing.T) {
	h := newHarness(t, Options{})
	sum := sha256.Sum256([]byte(DefaultPolicy))
	wantETag := `"` + hex.EncodeToString(sum[:]) + `"`

	for _, accept := range []string{"", "application/hujson", "*/*", "text/plain", "application/hujson, application/json"} {
		r := h.do("GET", aclPath, "", map[string]string{"Accept": accept}).want(t, 200)
		if string(r.body) != DefaultPolicy {
			t.Errorf("Accept %q: body is not the stored HuJSON:\n%s", accept, r.body)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/hujson" {
			t.Errorf("Accept %q: Content-Type %q", accept, ct)
		}
		if et := r.header.Get("ETag"); et != wantETag {
			t.Errorf("Accept %q: ETag %q, want %q", accept, et, wantETag)
		}
	}

	r := h.do("GET", aclPath, "", map[string]string{"Accept": "application/json"}).want(t, 200)
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if !json.Valid(r.body) || strings.Contains(string(r.body), "//") {
		t.Errorf("JSON body still has comments or is invalid:\n%s", r.body)
	}
	if et := r.header.Get("ETag"); et != wantETag {
		t.Errorf("JSON ETag %q, want the HuJSON one %q", et, wantETag)
	}
	var p struct {
		Grants []struct {
			Src, Dst, IP []string
		}
	}
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Grants) != 1 || p.Grants[0].Src[0] != "*" || p.Grants[0].Dst[0] != "*" || p.Grants[0].IP[0] != "*" {
		t.Errorf("default policy lacks the allow-all grant: %+v", p.Grants)
	}

	// The Go API agrees with the wire.
	body, etag := h.srv.Policy()
	if string(body) != DefaultPolicy || etag != wantETag {
		t.Errorf("Policy() = %q, %q", body, etag)
	}
}

func TestSetPolicyIfMatch(t *testing.T) {
	h := newHarness(t, Options{})
	_, etag0 := h.srv.Policy()

	r := h.do("POST", aclPath, operatorPolicy, map[string]string{"If-Match": `"0123"`}).want(t, 412)
	if got := string(r.body); got != `{"message":"precondition failed, invalid old hash"}` {
		t.Errorf("412 body %s", got)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("412 Content-Type %q", ct)
	}

	r = h.do("POST", aclPath, operatorPolicy, map[string]string{"If-Match": etag0}).want(t, 200)
	if string(r.body) != operatorPolicy {
		t.Errorf("POST without Accept should echo the HuJSON, got:\n%s", r.body)
	}
	etag1 := r.header.Get("ETag")
	if etag1 == etag0 || !strings.HasPrefix(etag1, `"`) || len(etag1) != 66 {
		t.Errorf("new ETag %q (old %q)", etag1, etag0)
	}
	got, etag := h.srv.Policy()
	if string(got) != operatorPolicy || etag != etag1 {
		t.Errorf("stored policy differs or ETag mismatch: %q vs %q", etag, etag1)
	}

	// The old ETag no longer matches; an unquoted current one does.
	h.do("POST", aclPath, operatorPolicy, map[string]string{"If-Match": etag0}).want(t, 412)
	r = h.do("POST", aclPath, operatorPolicy+"\n", map[string]string{"If-Match": strings.Trim(etag1, `"`), "Accept": "application/json"}).want(t, 200)
	if ct := r.header.Get("Content-Type"); ct != "application/json" || !json.Valid(r.body) {
		t.Errorf("Accept: application/json answer: %q %s", ct, r.body)
	}

	// No If-Match: unconditional.
	h.do("POST", aclPath, DefaultPolicy, nil).want(t, 200)
}

func TestConcurrentConditionalWritesOneWins(t *testing.T) {
	h := newHarness(t, Options{})
	_, etag := h.srv.Policy()
	const n = 8
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := strings.Replace(operatorPolicy, "qtail test policy", "writer "+string(rune('a'+i)), 1)
			statuses <- h.do("POST", aclPath, body, map[string]string{"If-Match": etag}).status
		}()
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[200] != 1 || count[412] != n-1 {
		t.Errorf("statuses %v, want one 200 and %d 412", count, n-1)
	}
}

func TestTSDefaultIfMatch(t *testing.T) {
	h := newHarness(t, Options{})
	h.do("POST", aclPath, operatorPolicy, map[string]string{"If-Match": `"ts-default"`}).want(t, 200)
	h.do("POST", aclPath, operatorPolicy, map[string]string{"If-Match": `"ts-default"`}).want(t, 412)

	// An empty body resets to the default, which "ts-default" matches again.
	r := h.do("POST", aclPath, "", nil).want(t, 200)
	if string(r.body) != DefaultPolicy {
		t.Errorf("reset answered:\n%s", r.body)
	}
	h.do("POST", aclPath, operatorPolicy, map[string]string{"If-Match": "ts-default"}).want(t, 200)

	// A tailnet created with its own initial policy has been edited.
	h2 := newHarness(t, Options{InitialPolicy: []byte(operatorPolicy)})
	h2.do("POST", aclPath, operatorPolicy, map[string]string{"If-Match": `"ts-default"`}).want(t, 412)
}

func TestSetPolicyStrictDecoding(t *testing.T) {
	h := newHarness(t, Options{})
	before, etag := h.srv.Policy()
	cases := []struct {
		name, body, want string
	}{
		{"unknown top-level", `{"grants": [], "nodeVisibilty": "all"}`, `json: unknown field "nodeVisibilty"`},
		{"unknown in tests", `{"tests": [{"src": "tag:a", "dst": ["tag:b:22"]}]}`, `json: unknown field "dst"`},
		{"unknown in grant", `{"grants": [{"src": ["*"], "dst": ["*"], "ip": ["*"], "ports": ["22"]}]}`, `json: unknown field "ports"`},
		{"unknown in autoApprovers", `{"autoApprovers": {"route": {}}}`, `json: unknown field "route"`},
		{"first problem wins", `{"bogus": 1, "grants": {}}`, `json: unknown field "bogus"`},
		{"object for a list", `{"grants": {}}`, `json: cannot unmarshal object into Go struct field ACLPolicy.grants of type []Grant`},
		{"string for a list", `{"grants": [{"src": "*", "dst": ["*"], "ip": ["*"]}]}`, `json: cannot unmarshal string into Go struct field ACLPolicy.grants.src of type []string`},
		{"not an object", `["grants"]`, `json: cannot unmarshal array into Go value of type ACLPolicy`},
		{"syntax", "{\n  \"grants\": [,]\n}", `line 2, column 14: `},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.do("POST", aclPath, c.body, map[string]string{"If-Match": etag}).want(t, 400)
			if msg := r.message(t); !strings.HasPrefix(msg, c.want) {
				t.Errorf("message %q, want prefix %q", msg, c.want)
			}
			// Also refused on the console path, and on validate with 200.
			var e *aclcheck.Error
			if err := h.srv.SetPolicyDirect([]byte(c.body)); !errors.As(err, &e) || !strings.HasPrefix(e.Message, c.want) {
				t.Errorf("SetPolicyDirect: %v", err)
			}
		})
	}
	if after, _ := h.srv.Policy(); string(after) != string(before) {
		t.Errorf("a rejected policy was stored")
	}
}

func TestCaseInsensitiveKeys(t *testing.T) {
	h := newHarness(t, Options{})
	legacy := `{
	// Old casing, as written years ago.
	"ACLs": [{"Action": "accept", "Src": ["*"], "Dst": ["*:*"]}],
	"TagOwners": {"tag:k8s-operator": []},
	"Grants": [{"SRC": ["tag:k8s-operator"], "Dst": ["*"], "IP": ["tcp:443"]}],
}`
	r := h.do("POST", aclPath, legacy, nil).want(t, 200)
	if string(r.body) != legacy {
		t.Errorf("legacy casing not stored byte for byte:\n%s", r.body)
	}
	// The keys API finds the tag owners under "TagOwners".
	h.do("POST", "/api/v2/tailnet/-/keys", `{"keyType":"client","scopes":["devices:core"],"tags":["tag:k8s-operator"]}`, nil).want(t, 200)

	// Reading the policy for other purposes leaves the stored bytes alone
	// (hujson's Standardize rewrites its input in place).
	h.do("GET", aclPath, "", map[string]string{"Accept": "application/json"}).want(t, 200)
	h.do("POST", aclPath+"/validate", `[]`, nil).want(t, 200)
	if body, _ := h.srv.Policy(); string(body) != legacy {
		t.Errorf("stored policy changed:\n%s", body)
	}
}

func TestValidatePolicy(t *testing.T) {
	h := newHarness(t, Options{})
	path := aclPath + "/validate"
	before, _ := h.srv.Policy()

	r := h.do("POST", path, operatorPolicy, nil).want(t, 200)
	if m := r.json(t); len(m) != 0 {
		t.Errorf("valid policy: %s", r.body)
	}

	r = h.do("POST", path, `{"grants": [], "nodeVisibilty": "all"}`, nil).want(t, 200)
	if msg := r.message(t); msg != `json: unknown field "nodeVisibilty"` {
		t.Errorf("rejection message %q", msg)
	}

	// An array is a list of tests for the current policy.
	r = h.do("POST", path, `[]`, nil).want(t, 200)
	if m := r.json(t); len(m) != 0 {
		t.Errorf("empty test list: %s", r.body)
	}
	r = h.do("POST", path, `[{"src": "tag:k8s", "accept": ["tag:k8s:443"], "port": 1}]`, nil).want(t, 200)
	if msg := r.message(t); msg != `json: unknown field "port"` {
		t.Errorf("test list rejection %q", msg)
	}

	// Malformed requests are 400.
	h.do("POST", path, "", nil).want(t, 400)
	h.do("POST", path, `{"grants": [`, nil).want(t, 400)
	h.do("POST", path, `"policy"`, nil).want(t, 400)

	if after, _ := h.srv.Policy(); string(after) != string(before) {
		t.Error("validate changed the policy")
	}
}

func TestWithTestsReplacesCaseInsensitively(t *testing.T) {
	tests, err := hujson.Parse([]byte(`[{"src": "a", "accept": ["b:1"]}]`))
	if err != nil {
		t.Fatal(err)
	}
	arr, ok := tests.Value.(*hujson.Array)
	if !ok {
		t.Fatal("not an array")
	}
	for _, policy := range []string{
		`{"Tests": [{"src": "x", "deny": ["y:2"]}], "grants": []}`,
		"{\n\t\"grants\": [], // trailing comma next\n}",
	} {
		out, err := withTests([]byte(policy), arr)
		if err != nil {
			t.Fatal(err)
		}
		std, err := hujson.Standardize(out)
		if err != nil {
			t.Fatalf("merged policy does not parse: %v\n%s", err, out)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(std, &m); err != nil {
			t.Fatal(err)
		}
		var got []map[string]any
		for k, v := range m {
			if strings.EqualFold(k, "tests") {
				if err := json.Unmarshal(v, &got); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(got) != 1 || got[0]["src"] != "a" || len(m) != 2 {
			t.Errorf("merged %s", out)
		}
	}
}

func TestSetPolicyDirect(t *testing.T) {
	h := newHarness(t, Options{})
	if err := h.srv.SetPolicyDirect([]byte(operatorPolicy)); err != nil {
		t.Fatal(err)
	}
	r := h.do("GET", aclPath, "", nil).want(t, 200)
	body, etag := h.srv.Policy()
	if string(r.body) != operatorPolicy || string(body) != operatorPolicy || r.header.Get("ETag") != etag {
		t.Error("console edit not visible through the API")
	}
	// A console edit moves the ETag: a client holding the old one gets 412.
	h.do("POST", aclPath, DefaultPolicy, map[string]string{"If-Match": `"` + etagOf([]byte(DefaultPolicy)) + `"`}).want(t, 412)
	if err := h.srv.SetPolicyDirect(nil); err != nil {
		t.Fatal(err)
	}
	h.do("POST", aclPath, operatorPolicy, map[string]string{"If-Match": `"ts-default"`}).want(t, 200)
}

func TestEditPolicyDirect(t *testing.T) {
	h := newHarness(t, Options{})
	if err := h.srv.SetPolicyDirect([]byte(operatorPolicy)); err != nil {
		t.Fatal(err)
	}
	_, before := h.srv.Policy()
	// The edit sees the stored file, and its result is stored.
	if err := h.srv.EditPolicyDirect(func(body []byte) ([]byte, error) {
		if string(body) != operatorPolicy {
			t.Errorf("edit read %q", body)
		}
		return append([]byte("// edited by hand\n"), body...), nil
	}); err != nil {
		t.Fatal(err)
	}
	r := h.do("GET", aclPath, "", nil).want(t, 200)
	if string(r.body) != "// edited by hand\n"+operatorPolicy || r.header.Get("ETag") == before {
		t.Errorf("after the edit: ETag %s (before %s), policy %s", r.header.Get("ETag"), before, r.body)
	}
	// An edit that fails, or that the tailnet refuses, changes nothing.
	_, etag := h.srv.Policy()
	failed := errors.New("no")
	if err := h.srv.EditPolicyDirect(func([]byte) ([]byte, error) { return nil, failed }); !errors.Is(err, failed) {
		t.Errorf("failed edit: %v", err)
	}
	var e *aclcheck.Error
	if err := h.srv.EditPolicyDirect(func([]byte) ([]byte, error) { return []byte(`{"grants": [`), nil }); !errors.As(err, &e) {
		t.Errorf("invalid edit: %v", err)
	}
	if _, now := h.srv.Policy(); now != etag {
		t.Error("a refused edit changed the policy file")
	}
}
