package tfx

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

func TestTitleCase(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"read the policy file":                                  "Read the Policy File",
		"store the operator's OAuth client in Qovery":           "Store the Operator's OAuth Client in Qovery",
		"remove the allow-all rule from the policy file":        "Remove the Allow-All Rule From the Policy File",
		"read application 3fa85f64-5717-4562-b3fc-2c963f66afa6": "Read Application 3fa85f64-5717-4562-b3fc-2c963f66afa6",
		"look for devices named tailscale-operator-us-east-1":   "Look for Devices Named tailscale-operator-us-east-1",
		"add tag owner tag:k8s to the policy file":              "Add Tag Owner tag:k8s to the Policy File",
		"waiting for the operator's deletion":                   "Waiting for the Operator's Deletion",
		"the first word is capitalized":                         "The First Word Is Capitalized",
	} {
		if got := TitleCase(in); got != want {
			t.Errorf("TitleCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestImportHint(t *testing.T) {
	t.Parallel()
	got := ImportHint("qtail_grant", "ops to db")
	for _, want := range []string{"import {\n    to = qtail_grant.NAME\n    id = \"ops to db\"\n  }", "terraform import qtail_grant.NAME 'ops to db'"} {
		if !strings.Contains(got, want) {
			t.Errorf("ImportHint lacks %q:\n%s", want, got)
		}
	}
}

// laterError is an API error whose server asked for a longer wait than
// qtail makes.
type laterError struct{ later retry.Later }

func (e laterError) Error() string                   { return "429 Too Many Requests; " + e.later.String() }
func (e laterError) RetryLater() (retry.Later, bool) { return e.later, true }

func TestAPIError_retryLater(t *testing.T) {
	at := time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)
	var diags diag.Diagnostics
	APIError(&diags, "write the policy file", fmt.Errorf("tailscale: %w", laterError{retry.Later{Wait: time.Hour, At: at}}))
	detail := diags[0].Detail()
	for _, want := range []string{"asked it to wait 1 hour", "run Terraform again after 2026-03-01 13:00:00 UTC"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, detail)
		}
	}
	if strings.Contains(detail, "already retried") || strings.Contains(detail, "scope") {
		t.Errorf("detail gives the advice for other errors:\n%s", detail)
	}
}
