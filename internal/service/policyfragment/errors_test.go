package policyfragment

import (
	"fmt"
	"slices"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/policy"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

func TestTestFailures(t *testing.T) {
	data := []tailnet.ErrorData{
		{User: "carol@example.com", Errors: []string{`address "tag:k8s-billing:443": want: Drop, got: Accept`}},
		{User: "bob@example.com", Warnings: []string{"only a warning"}},
	}
	want := []policy.TestFailure{{Src: "carol@example.com", Errors: data[0].Errors}}
	for _, err := range []error{
		// At plan: /acl/validate answers 200 with the failures.
		fmt.Errorf("checking: %w", &tailnet.ValidationError{Message: "test(s) failed", Data: data}),
		// At apply: the write answers 400.
		&policy.RejectedError{Err: &tailnet.APIError{Status: 400, Message: "test(s) failed", Data: data}},
	} {
		got := testFailures(err)
		if len(got) != 1 || got[0].Src != want[0].Src || !slices.Equal(got[0].Errors, want[0].Errors) {
			t.Errorf("testFailures(%v) = %+v, want %+v", err, got, want)
		}
	}
	if got := testFailures(&tailnet.APIError{Status: 400, Message: `json: unknown field "x"`}); len(got) != 0 {
		t.Errorf("a refusal without tests gives %+v", got)
	}
}

func TestNameFragment(t *testing.T) {
	for key, want := range map[policyfile.Key]string{
		{Kind: policyfile.KindPolicyTest, Name: "carol"}: `qtail_policy_test "carol" (marked // qtail:policy_test:carol)`,
		{Kind: policyfile.KindGrant, Name: "web"}:        `qtail_grant "web"`,
	} {
		if got := nameFragment(key); got != want {
			t.Errorf("nameFragment(%v) = %q, want %q", key, got, want)
		}
	}
}
