package tailnetapi

import (
	"bytes"
	"net/http"

	"github.com/tailscale/hujson"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

// previewResponse is the answer of POST /acl/preview.
type previewResponse struct {
	Matches    []aclcheck.PreviewMatch `json:"matches"`
	Type       string                  `json:"type"`
	PreviewFor string                  `json:"previewFor"`
}

// handlePreviewPolicy is POST /tailnet/{tailnet}/acl/preview?type=user|ipport&previewFor=...:
// the rules of the policy in the body (HuJSON or JSON, as /acl takes it)
// that apply to a user or to an address and port, evaluated against the
// tailnet's users and devices, without storing anything.
//
// The body is checked as POST /acl checks it, with the same 400 messages;
// the policy's tests are not run (that is /acl/validate's job). A missing
// or unknown type, or a previewFor that is not a user of the tailnet or an
// IP:PORT, is a 400 too. The rules are listed in the shape of the public
// API ({"matches": [{"users", "ports", "lineNumber", "postures"}], "type",
// "previewFor"}); see aclcheck.PreviewMatch for how ports are written.
func (s *Server) handlePreviewPolicy(w http.ResponseWriter, r *http.Request, p principal) {
	body, ok := readPolicyRequest(w, r, p, "the policy file to preview")
	if !ok {
		return
	}
	if e := checkSyntax(body); e != nil {
		writePolicyError(w, http.StatusBadRequest, e)
		return
	}
	if v, _ := hujson.Parse(bytes.Clone(body)); v.Value.Kind() != '{' {
		writeError(w, http.StatusBadRequest, "request body must be a policy file (a JSON object)")
		return
	}
	pol, e := aclcheck.Parse(bytes.Clone(body))
	if e != nil {
		writePolicyError(w, http.StatusBadRequest, e)
		return
	}
	q := r.URL.Query()
	typ, previewFor := q.Get("type"), q.Get("previewFor")
	s.mu.Lock()
	topo := s.topologyLocked()
	s.mu.Unlock()
	matches, e := pol.Preview(topo, body, typ, previewFor)
	if e != nil {
		writePolicyError(w, http.StatusBadRequest, e)
		return
	}
	writeJSON(w, http.StatusOK, previewResponse{Matches: matches, Type: typ, PreviewFor: previewFor})
}

// readPolicyRequest reads the body of a request that only reads the policy
// (policy_file:read): 403 without the scope, 400 when empty, where want
// says what to send. It reports false when an answer was written.
func readPolicyRequest(w http.ResponseWriter, r *http.Request, p principal, want string) ([]byte, bool) {
	if !p.allows("policy_file:read") {
		permissionDenied(w)
		return nil, false
	}
	body, ok := readBody(w, r)
	if !ok {
		return nil, false
	}
	if len(bytes.TrimSpace(body)) == 0 {
		writeError(w, http.StatusBadRequest, "request body is empty: send "+want)
		return nil, false
	}
	return body, true
}
