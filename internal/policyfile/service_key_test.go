package policyfile

import (
	"strings"
	"testing"
)

func TestValidServiceApproverKey(t *testing.T) {
	for _, tc := range []struct {
		key, err string
	}{
		{"svc:web", ""},
		{"svc:z", ""},
		{"svc:a-z", ""},
		{"svc:0-9", ""},
		{"svc:" + strings.Repeat("a", 63), ""},
		{"tag:web", ""},
		{"tag:", "tag names must not be empty"},
		{"web", "must be a Tailscale Service"},
		{"svc:", "must not be empty"},
		{"svc:" + strings.Repeat("a", 64), "longer than 63 characters"},
		{"svc:-web", "must start and end with a lower-case letter or a digit"},
		{"svc:web-", "must start and end with a lower-case letter or a digit"},
		{"svc:Web", "must start and end with a lower-case letter or a digit"},
		{"svc:{", "must start and end with a lower-case letter or a digit"},
		{"svc:a_b", "can only contain lower-case letters, digits and dashes"},
		{"svc:aBc", "can only contain lower-case letters, digits and dashes"},
	} {
		err := ValidServiceApproverKey(tc.key)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ValidServiceApproverKey(%q) = %v, want %q", tc.key, err, tc.err)
		}
	}
}
