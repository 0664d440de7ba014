package tailnet

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/policy"
)

func TestPolicyRoundTripByteForByte(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	c := e.client(Config{})
	body, etag, err := c.GetPolicy(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != tailnetapi.DefaultPolicy {
		t.Errorf("GET body differs from the stored HuJSON")
	}
	if accept := e.rec.last(t, "GET", "/acl").Header.Get("Accept"); accept != "application/hujson" {
		t.Errorf("Accept %q", accept)
	}
	if _, want := e.srv.Policy(); etag != want || !strings.HasPrefix(etag, `"`) {
		t.Errorf("ETag %q, want %q with its quotes", etag, want)
	}

	newETag, err := c.SetPolicy(t.Context(), []byte(operatorPolicy), etag)
	if err != nil {
		t.Fatal(err)
	}
	post := e.rec.last(t, "POST", "/acl")
	if ct := post.Header.Get("Content-Type"); ct != "application/hujson" {
		t.Errorf("Content-Type %q", ct)
	}
	if im := post.Header.Get("If-Match"); im != etag {
		t.Errorf("If-Match %q, want %q", im, etag)
	}
	stored, storedETag := e.srv.Policy()
	if string(stored) != operatorPolicy || newETag != storedETag || newETag == etag {
		t.Errorf("stored %q etag %q, returned %q", stored, storedETag, newETag)
	}
	body, etag2, err := c.GetPolicy(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != operatorPolicy || etag2 != newETag {
		t.Errorf("read back %q %q", body, etag2)
	}

	// An unquoted ETag is sent quoted; none sends no If-Match.
	if _, err := c.SetPolicy(t.Context(), []byte(operatorPolicy), strings.Trim(etag2, `"`)); err != nil {
		t.Fatal(err)
	}
	if im := e.rec.last(t, "POST", "/acl").Header.Get("If-Match"); im != etag2 {
		t.Errorf("If-Match %q, want %q", im, etag2)
	}
	if _, err := c.SetPolicy(t.Context(), []byte(tailnetapi.DefaultPolicy), ""); err != nil {
		t.Fatal(err)
	}
	if im := e.rec.last(t, "POST", "/acl").Header.Values("If-Match"); len(im) != 0 {
		t.Errorf("unconditional write sent If-Match %q", im)
	}

	if _, err := c.SetPolicy(t.Context(), []byte(" \n"), etag); !errors.Is(err, ErrEmptyPolicy) {
		t.Errorf("empty policy: %v", err)
	}
}

func TestSetPolicyPreconditionFailed(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	c := e.client(Config{})
	_, etag, err := c.GetPolicy(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	e.setPolicy(operatorPolicy) // someone edits in the admin console

	_, err = c.SetPolicy(t.Context(), []byte(tailnetapi.DefaultPolicy), etag)
	if !policy.IsPreconditionFailed(err) || IsNotFound(err) {
		t.Fatalf("want a 412, got %v", err)
	}
	ae, _ := AsAPIError(err)
	if ae.Message != "precondition failed, invalid old hash" || ae.Method != "POST" || ae.Path != "/tailscale/api/v2/tailnet/-/acl" {
		t.Errorf("error %+v", ae)
	}
	if got := err.Error(); got != "tailscale API POST /tailscale/api/v2/tailnet/-/acl: precondition failed, invalid old hash (HTTP 412)" {
		t.Errorf("Error() = %q", got)
	}
	if stored, _ := e.srv.Policy(); string(stored) != operatorPolicy {
		t.Error("the console edit was overwritten")
	}
}

func TestConditionalWriteIsRetriedUnconditionalIsNot(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	c := e.client(Config{})
	route := "POST /tailscale/api/v2/tailnet/{tailnet}/acl"

	// 502: the write may or may not have happened. With If-Match a repeat
	// is safe, so it is retried.
	_, etag := e.srv.Policy()
	e.srv.Faults().Add(faults.Rule{Route: route, Status: 502})
	if _, err := c.SetPolicy(t.Context(), []byte(operatorPolicy), etag); err != nil {
		t.Fatalf("conditional write not retried: %v", err)
	}
	if n := e.srv.Faults().Count(route); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}

	// Without If-Match it is not.
	e.srv.Faults().Add(faults.Rule{Route: route, Status: 502})
	_, err := c.SetPolicy(t.Context(), []byte(tailnetapi.DefaultPolicy), "")
	if ae, ok := AsAPIError(err); !ok || ae.Status != 502 || ae.Attempts != 1 {
		t.Errorf("unconditional write: %v", err)
	}
	if n := e.srv.Faults().Count(route); n != 3 {
		t.Errorf("%d attempts in all, want 3", n)
	}
}

func TestValidatePolicy(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	c := e.client(Config{})
	if err := c.ValidatePolicy(t.Context(), []byte(operatorPolicy)); err != nil {
		t.Fatalf("valid policy: %v", err)
	}

	err := c.ValidatePolicy(t.Context(), []byte(`{"grants": [], "nodeVisibilty": "all"}`))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Message != `json: unknown field "nodeVisibilty"` {
		t.Fatalf("want a rejection, got %T %v", err, err)
	}
	if !policy.IsRejected(err) || policy.IsPreconditionFailed(err) {
		t.Error("a rejection must match policy.IsRejected only")
	}
	if got := err.Error(); got != `tailscale API POST /tailscale/api/v2/tailnet/-/acl/validate: policy rejected: json: unknown field "nodeVisibilty"` {
		t.Errorf("Error() = %q", got)
	}

	// Failing tests come back as data.
	e.srv.Faults().Add(faults.Rule{
		Route:  "POST /tailscale/api/v2/tailnet/{tailnet}/acl/validate",
		Status: 200,
		Body:   json.RawMessage(`{"message":"test(s) failed","data":[{"user":"alice@example.com","errors":["address \"2.2.2.2:22\": want: Drop, got: Accept"]}]}`),
	})
	err = c.ValidatePolicy(t.Context(), []byte(operatorPolicy))
	if !errors.As(err, &ve) || len(ve.Data) != 1 || ve.Data[0].User != "alice@example.com" {
		t.Fatalf("test failure: %v", err)
	}
	if !strings.HasSuffix(err.Error(), `test(s) failed: alice@example.com: address "2.2.2.2:22": want: Drop, got: Accept`) {
		t.Errorf("Error() = %q", err)
	}

	// A body that is not HuJSON is a malformed request: an APIError.
	err = c.ValidatePolicy(t.Context(), []byte(`{"grants": [`))
	if ae, ok := AsAPIError(err); !ok || ae.Status != 400 || !strings.HasPrefix(ae.Message, "line 1, column ") {
		t.Errorf("syntax error: %v", err)
	}
	// Nothing was written.
	if stored, _ := e.srv.Policy(); string(stored) != tailnetapi.DefaultPolicy {
		t.Error("validate changed the policy")
	}
}

func TestPolicyBackend(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	b := e.client(Config{}).PolicyBackend()
	snap, err := b.Get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if string(snap.HuJSON) != tailnetapi.DefaultPolicy {
		t.Error("snapshot body")
	}
	if err := b.Validate(t.Context(), []byte(operatorPolicy)); err != nil {
		t.Fatal(err)
	}
	etag, err := b.Set(t.Context(), []byte(operatorPolicy), snap.ETag)
	if err != nil {
		t.Fatal(err)
	}
	if _, want := e.srv.Policy(); etag != want {
		t.Errorf("etag %q, want %q", etag, want)
	}
	if _, err := b.Set(t.Context(), []byte(operatorPolicy), snap.ETag); !policy.IsPreconditionFailed(err) {
		t.Errorf("stale ETag: %v", err)
	}
	if _, err := b.Set(t.Context(), []byte(`{"bogus": []}`), etag); !policy.IsRejected(err) {
		t.Errorf("invalid policy: %v", err)
	}
}
