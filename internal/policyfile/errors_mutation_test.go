package policyfile

import "testing"

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
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() =\n%s\nwant\n%s", got, tc.want)
		}
	}
}
