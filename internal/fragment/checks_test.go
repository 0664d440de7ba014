package fragment

import (
	"strings"
	"testing"
)

func TestFragmentCheckers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		check func(string) error
		in    string
		want  string // "" for valid
	}{
		{"app ok", CheckAppJSON, `{"tailscale.com/cap/kubernetes":[{"impersonate":{"groups":["system:masters"]}}]}`, ""},
		{"app not object", CheckAppJSON, `[1]`, "JSON object"},
		{"app empty", CheckAppJSON, `{}`, "at least one capability"},
		{"app no path", CheckAppJSON, `{"example.com":[{}]}`, "{domain}/{path}"},
		{"app not list of objects", CheckAppJSON, `{"example.com/cap":{"a":1}}`, "list of JSON objects"},
		{"owner email", CheckOwner, "alice@example.com", ""},
		{"owner group", CheckOwner, "group:ops", ""},
		{"owner tag", CheckOwner, "tag:k8s-operator", ""},
		{"owner autogroup", CheckOwner, "autogroup:admin", ""},
		{"owner star", CheckOwner, "*", "owners and approvers are"},
		{"owner ip", CheckOwner, "100.64.0.1", "owners and approvers are"},
		{"owner bad autogroup", CheckOwner, "autogroup:everyone", "unknown autogroup"},
		{"posture", CheckPosture, "posture:latest", ""},
		{"posture bare", CheckPosture, "latest", "posture:NAME"},
		{"proto tcp", CheckProto, "tcp", ""},
		{"proto number", CheckProto, "47", ""},
		{"proto unknown", CheckProto, "quic", "not known"},
		{"proto star", CheckProto, "*", "name one protocol"},
	} {
		err := tc.check(tc.in)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %q: unexpected error %v", tc.name, tc.in, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %q: error %v, want it to contain %q", tc.name, tc.in, err, tc.want)
		}
	}
}
