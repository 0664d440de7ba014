// Package aclcheck validates a tailnet policy file the way Tailscale SaaS
// does for the parts qtail writes, and evaluates its tests.
//
// Check is what the fake API runs on POST /acl: it decodes the HuJSON
// strictly, applies SaaS's validation rules with SaaS's messages, then
// runs the policy's tests against a topology of users and devices. Parse
// gives a Policy to query: tag ownership, route auto-approval and access.
package aclcheck

// TestResult is one entry of the data array of a failed policy: the source
// of a failing test and what failed.
type TestResult struct {
	User     string   `json:"user"`
	Errors   []string `json:"errors,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Error is a rejected policy: the message and data SaaS would answer with.
type Error struct {
	Message string       `json:"message"`
	Data    []TestResult `json:"data,omitempty"`
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// testsFailed is SaaS's message for a policy whose tests fail.
const testsFailed = "test(s) failed"

// Check validates policy (HuJSON or JSON) against topo and runs its tests.
// It returns nil when SaaS would accept the policy.
func Check(policy []byte, topo Topology) *Error {
	p, err := Parse(policy)
	if err != nil {
		return err
	}
	if failed := p.runTests(topo); len(failed) > 0 {
		return &Error{Message: testsFailed, Data: failed}
	}
	return nil
}
