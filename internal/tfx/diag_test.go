package tfx

import (
	"strings"
	"testing"
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
