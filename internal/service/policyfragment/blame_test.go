package policyfragment

import (
	"encoding/json"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
)

func TestBlamedPathNamesTheElementTheRejectionQuotes(t *testing.T) {
	grant := json.RawMessage(`{"src":["group:ops","tag:db"],"dst":["tag:db"],"ip":["*"],"srcPosture":["posture:latest"]}`)
	for _, tc := range []struct {
		value    json.RawMessage
		listAttr string
		message  string
		want     path.Path
		ok       bool
	}{
		{grant, "", `src=tag not found: "tag:db"`, path.Root("src").AtListIndex(1), true},
		{grant, "", `group not found: "group:ops"`, path.Root("src").AtListIndex(0), true},
		{grant, "", `posture not found: "posture:latest"`, path.Root("src_posture").AtListIndex(0), true},
		{grant, "", `"autogroup:nobody" is unknown`, path.Empty(), false},
		{json.RawMessage(`{"src":"alice@example.com","accept":["tag:db:22"]}`), "", `user not found: "alice@example.com"`, path.Root("src"), true},
		{json.RawMessage(`["group:ops","tag:unowned"]`), "approvers", `autoApprovers.routes["10.0.0.0/8"]: tag not found: "tag:unowned"`,
			path.Root("approvers").AtListIndex(1), true},
		{json.RawMessage(`["group:ops"]`), "owners", `tag not found: "tag:other"`, path.Empty(), false},
		{json.RawMessage(`not json`), "", `"x"`, path.Empty(), false},
	} {
		got, ok := blamedPath(tc.value, tc.listAttr, tc.message)
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("blamedPath(%s, %q, %q) = %s, %v; want %s, %v", tc.value, tc.listAttr, tc.message, got, ok, tc.want, tc.ok)
		}
	}
}
