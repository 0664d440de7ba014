package policyfragment

import (
	"encoding/json"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/fragment"
)

func TestBlamedPathNamesTheElementTheRejectionQuotes(t *testing.T) {
	grant := json.RawMessage(`{"src":["group:ops","tag:db"],"dst":["tag:db"],"ip":["*"],"srcPosture":["posture:latest"]}`)
	for _, tc := range []struct {
		value   json.RawMessage
		kind    *fragment.Kind
		message string
		want    path.Path
		ok      bool
	}{
		{grant, fragment.Grant, `src=tag not found: "tag:db"`, path.Root("src").AtListIndex(1), true},
		{grant, fragment.Grant, `group not found: "group:ops"`, path.Root("src").AtListIndex(0), true},
		{grant, fragment.Grant, `posture not found: "posture:latest"`, path.Root("src_posture").AtListIndex(0), true},
		{grant, fragment.Grant, `"autogroup:nobody" is unknown`, path.Empty(), false},
		{json.RawMessage(`{"src":"alice@example.com","accept":["tag:db:22"]}`), fragment.PolicyTest, `user not found: "alice@example.com"`, path.Root("src"), true},
		{json.RawMessage(`["group:ops","tag:unowned"]`), fragment.AutoApprover, `autoApprovers.routes["10.0.0.0/8"]: tag not found: "tag:unowned"`,
			path.Root("approvers").AtListIndex(1), true},
		{json.RawMessage(`["group:ops"]`), fragment.TagOwner, `tag not found: "tag:other"`, path.Empty(), false},
		{json.RawMessage(`not json`), fragment.Grant, `"x"`, path.Empty(), false},
	} {
		got, ok := blamedPath(tc.kind, tc.value, tc.message)
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("blamedPath(%s, %s, %q) = %s, %v; want %s, %v", tc.kind.Type, tc.value, tc.message, got, ok, tc.want, tc.ok)
		}
	}
}
