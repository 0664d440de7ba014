package policy

import (
	"errors"
	"testing"
)

func TestErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&UnmanagedConflictError{Key: Key{Kind: KindTagOwner, Name: "tag:db"}, Existing: raw(`["a@b.c"]`)},
			`tagOwners["tag:db"] already exists in the policy file with a different value, ["a@b.c"], and is not managed by qtail; to manage it with Terraform, import it: terraform import qtail_tag_owner.NAME 'tag:db' (or an import block with to = qtail_tag_owner.NAME and id = "tag:db"), then set the value in the configuration; or remove it from the policy file by hand`},
		{&UnmanagedConflictError{Key: ExitNodeKey(), Existing: raw(`["tag:x"]`)},
			`autoApprovers.exitNode already exists in the policy file with a different value, ["tag:x"], and is not managed by qtail; to manage it with Terraform, import it: terraform import qtail_auto_approver.NAME exitNode (or an import block with to = qtail_auto_approver.NAME and id = "exitNode"), then set the value in the configuration; or remove it from the policy file by hand`},
		{&UnmanagedConflictError{Key: RouteKey("10.0.0.0/8"), Existing: raw(`[]`)},
			`autoApprovers.routes["10.0.0.0/8"] already exists in the policy file with a different value, [], and is not managed by qtail; to manage it with Terraform, import it: terraform import qtail_auto_approver.NAME 'route:10.0.0.0/8' (or an import block with to = qtail_auto_approver.NAME and id = "route:10.0.0.0/8"), then set the value in the configuration; or remove it from the policy file by hand`},
		{&ContentionError{Attempts: 3, Err: errors.New("412")},
			"policy: gave up after 3 attempts to write the policy file: it kept changing underneath (each write was refused with HTTP 412 because the file had changed since it was read; last error: 412); nothing was written, run the apply again"},
		{&RejectedError{Keys: []Key{{Kind: KindGrant, Name: "a"}, {Kind: KindPolicyTest, Name: "b"}}, Err: errors.New("bad")},
			`policy: the server rejected the policy file with qtail_grant "a", qtail_policy_test "b": bad`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() =\n%s\nwant\n%s", got, tc.want)
		}
	}
}
