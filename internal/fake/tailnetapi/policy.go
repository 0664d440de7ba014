package tailnetapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

// DefaultPolicy is the policy file a new tailnet starts with today: the
// grants form, whose first rule allows every connection, plus check-mode
// SSH to one's own devices, with the commented-out examples of the admin
// console. (Older tailnets started with the equivalent
// {"action": "accept", "src": ["*"], "dst": ["*:*"]} in "acls".)
const DefaultPolicy = `// Example/default ACLs for unrestricted connections.
{
	// Declare static groups of users. Use autogroups for all users or users with a specific role.
	// "groups": {
	//   "group:example": ["alice@example.com", "bob@example.com"],
	// },

	// Define the tags which can be applied to devices and by which users.
	// "tagOwners": {
	//   "tag:example": ["autogroup:admin"],
	// },

	// Define grants that govern access for users, groups, autogroups, tags,
	// Tailscale IP addresses, and subnet ranges.
	"grants": [
		// Allow all connections.
		// Comment this section out if you want to define specific restrictions.
		{"src": ["*"], "dst": ["*"], "ip": ["*"]},
	],

	// Define users and devices that can use Tailscale SSH.
	"ssh": [
		// Allow all users to SSH into their own devices in check mode.
		// Comment this section out if you want to define specific restrictions.
		{
			"action": "check",
			"src":    ["autogroup:member"],
			"dst":    ["autogroup:self"],
			"users":  ["autogroup:nonroot", "root"],
		},
	],

	// Test access rules every time they're saved.
	// "tests": [
	//   {
	//     "src": "alice@example.com",
	//     "accept": ["tag:example"],
	//     "deny": ["100.101.102.103:443"],
	//   },
	// ],
}
`

// etagOf returns the unquoted ETag of a policy file.
//
// SaaS is believed to hash the policy after hujson formatting (gitops-pusher
// compares the ETag with sha256(hujson.Format(file))); this fake hashes the
// stored bytes. Clients only ever compare ETags for equality, so either is
// faithful for them.
func etagOf(policy []byte) string {
	sum := sha256.Sum256(policy)
	return hex.EncodeToString(sum[:])
}

// Policy returns the stored policy file and its ETag, quoted as in the ETag
// header.
func (s *Server) Policy() (body []byte, etag string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.policy), `"` + etagOf(s.policy) + `"`
}

// SetPolicyDirect replaces the policy file the way a person does in the
// admin console: validated exactly like POST /acl, without If-Match. An
// empty body restores the default policy. A rejection is an
// *aclcheck.Error with the message and data the API would answer.
func (s *Server) SetPolicyDirect(body []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.storePolicyLocked(body); e != nil {
		return e
	}
	return nil
}

// EditPolicyDirect is SetPolicyDirect of what edit makes of the stored
// policy file, read and replaced at once: a person's edit in the admin
// console that no API write comes between. An error of edit leaves the
// file as it was and is returned.
func (s *Server) EditPolicyDirect(edit func(body []byte) ([]byte, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, err := edit(bytes.Clone(s.policy))
	if err != nil {
		return err
	}
	if e := s.storePolicyLocked(body); e != nil {
		return e
	}
	return nil
}

// storePolicyLocked validates body and stores it; empty resets to the
// default policy.
func (s *Server) storePolicyLocked(body []byte) *aclcheck.Error {
	if len(bytes.TrimSpace(body)) == 0 {
		s.policy = []byte(DefaultPolicy)
		s.policyDefault = true
		return nil
	}
	if e := s.checkPolicyLocked(body); e != nil {
		return e
	}
	s.policy = bytes.Clone(body)
	s.policyDefault = false
	return nil
}

// checkPolicyLocked validates a policy file: HuJSON syntax, strict
// decoding, then the semantic checks and tests of aclcheck against the
// current topology.
func (s *Server) checkPolicyLocked(body []byte) *aclcheck.Error {
	if e := checkSyntax(body); e != nil {
		return e
	}
	// Copies: hujson.Standardize and friends rewrite their input in place,
	// and body may be the stored policy.
	return aclcheck.Check(bytes.Clone(body), s.topologyLocked())
}

// checkSyntax checks what POST /acl checks before the policy's meaning:
// HuJSON syntax, then strict decoding.
func checkSyntax(body []byte) *aclcheck.Error {
	v, err := hujson.Parse(body)
	if err != nil {
		return &aclcheck.Error{Message: parseErrorMessage(err)}
	}
	if msg := strictCheck(v); msg != "" {
		return &aclcheck.Error{Message: msg}
	}
	return nil
}

// parseErrorMessage turns a hujson error into the "line N, column M: ..."
// form the API uses.
func parseErrorMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "hujson: ")
}

// wantsJSON reports whether the Accept header asks for JSON rather than
// HuJSON. Only an explicit application/json (and no application/hujson)
// selects JSON; anything else, or nothing, gets HuJSON.
func wantsJSON(r *http.Request) bool {
	jsonOK := false
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "application/hujson":
			return false
		case "application/json":
			jsonOK = true
		}
	}
	return jsonOK
}

// writePolicy answers 200 with the policy in the Accept-selected format and
// its ETag.
func writePolicy(w http.ResponseWriter, r *http.Request, policy []byte) {
	w.Header().Set("ETag", `"`+etagOf(policy)+`"`)
	if wantsJSON(r) {
		out, err := policyJSON(policy)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "stored policy is not valid HuJSON: "+err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out)
		return
	}
	w.Header().Set("Content-Type", "application/hujson")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(policy)
}

// policyJSON returns the policy as indented standard JSON, comments and
// trailing commas removed.
func policyJSON(policy []byte) ([]byte, error) {
	v, err := hujson.Parse(bytes.Clone(policy))
	if err != nil {
		return nil, err
	}
	v.Minimize()
	var out bytes.Buffer
	if err := json.Indent(&out, v.Pack(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// handleGetPolicy is GET /tailnet/{tailnet}/acl.
func (s *Server) handleGetPolicy(w http.ResponseWriter, r *http.Request, p principal) {
	if !p.allows("policy_file:read") {
		permissionDenied(w)
		return
	}
	s.mu.Lock()
	policy := bytes.Clone(s.policy)
	s.mu.Unlock()
	writePolicy(w, r, policy)
}

// ifMatchOKLocked reports whether an If-Match header value allows the write:
// absent, "*", "ts-default" while the policy is the untouched default, or
// the current ETag (quoted or not).
func (s *Server) ifMatchOKLocked(header string) bool {
	header = strings.TrimSpace(header)
	if header == "" || header == "*" {
		return true
	}
	for _, v := range strings.Split(header, ",") {
		v = strings.Trim(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "W/")), `"`)
		if v == "ts-default" {
			if s.policyDefault {
				return true
			}
			continue
		}
		if v == etagOf(s.policy) {
			return true
		}
	}
	return false
}

// handleSetPolicy is POST /tailnet/{tailnet}/acl: If-Match first, then
// validation, then the write. An empty body restores the default policy.
func (s *Server) handleSetPolicy(w http.ResponseWriter, r *http.Request, p principal) {
	if !p.allows("policy_file") {
		permissionDenied(w)
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	if !s.ifMatchOKLocked(r.Header.Get("If-Match")) {
		s.mu.Unlock()
		writeError(w, http.StatusPreconditionFailed, "precondition failed, invalid old hash")
		return
	}
	if e := s.storePolicyLocked(body); e != nil {
		s.mu.Unlock()
		writePolicyError(w, http.StatusBadRequest, e)
		return
	}
	policy := bytes.Clone(s.policy)
	s.mu.Unlock()
	writePolicy(w, r, policy)
}

// handleValidatePolicy is POST /tailnet/{tailnet}/acl/validate. An object
// body is a policy to validate (its tests included); an array body is a
// list of tests to run against the current policy. The answer is 200 for
// every well-formed request: {} when the policy passes, otherwise
// {"message": ..., "data": [...]}. A body that is not HuJSON, or neither an
// object nor an array, is a malformed request: 400.
func (s *Server) handleValidatePolicy(w http.ResponseWriter, r *http.Request, p principal) {
	body, ok := readPolicyRequest(w, r, p, "a policy file (object) or a list of tests (array)")
	if !ok {
		return
	}
	v, err := hujson.Parse(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, parseErrorMessage(err))
		return
	}
	s.mu.Lock()
	var e *aclcheck.Error
	switch tests := v.Value.(type) {
	case *hujson.Object:
		e = s.checkPolicyLocked(body)
	case *hujson.Array:
		merged, err := withTests(s.policy, tests)
		if err != nil {
			s.mu.Unlock()
			writeError(w, http.StatusInternalServerError, "stored policy is not valid HuJSON: "+err.Error())
			return
		}
		e = s.checkPolicyLocked(merged)
	default:
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, "request body must be a policy file (object) or a list of tests (array)")
		return
	}
	s.mu.Unlock()
	if e != nil {
		writePolicyError(w, http.StatusOK, e)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// withTests returns policy with its "tests" section (matched
// case-insensitively) replaced by tests, or added.
func withTests(policy []byte, tests *hujson.Array) ([]byte, error) {
	v, err := hujson.Parse(bytes.Clone(policy))
	if err != nil {
		return nil, err
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, errNotObject
	}
	val := hujson.Value{Value: tests}
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && strings.EqualFold(lit.String(), "tests") {
			obj.Members[i].Value = val
			return v.Pack(), nil
		}
	}
	obj.Members = append(obj.Members, hujson.ObjectMember{Name: hujson.Value{Value: hujson.String("tests")}, Value: val})
	return v.Pack(), nil
}

// tagOwners returns the tagOwners section of a policy (top-level key
// matched case-insensitively). An unreadable policy has none.
func tagOwners(policy []byte) map[string][]string {
	std, err := hujson.Standardize(bytes.Clone(policy))
	if err != nil {
		return nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(std, &top); err != nil {
		return nil
	}
	for k, raw := range top {
		if strings.EqualFold(k, "tagOwners") {
			var owners map[string][]string
			if err := json.Unmarshal(raw, &owners); err != nil {
				return nil
			}
			return owners
		}
	}
	return nil
}
