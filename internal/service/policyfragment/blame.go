package policyfragment

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/fragment"
)

// blamedPath returns the attribute, and the element of a list, whose value
// a rejection message quotes: Tailscale names the selector, tag or owner it
// refuses ("tag not found: \"tag:billing\""), and the error belongs on the
// attribute that holds it. value is the entry of kind k as qtail writes
// it: an object, whose members are held by the attributes k describes, or
// a list, held by k's list attribute. ok is false when the message quotes
// none of the entry's values.
func blamedPath(k *fragment.Kind, value json.RawMessage, message string) (path.Path, bool) {
	quoted := func(s string) bool { return s != "" && strings.Contains(message, strconv.Quote(s)) }
	if k.Keyed() {
		var list []string
		if json.Unmarshal(value, &list) != nil {
			return path.Empty(), false
		}
		for i, s := range list {
			if quoted(s) {
				return path.Root(k.ListAttr).AtListIndex(i), true
			}
		}
		return path.Empty(), false
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(value, &members) != nil {
		return path.Empty(), false
	}
	// The message names one value; look in the order the attributes are
	// documented, sources first, so that a tag in src and dst is blamed
	// on src, as Tailscale's "src=" prefix does.
	for _, a := range k.Content() {
		raw, ok := members[a.Member]
		if !ok {
			continue
		}
		var one string
		if json.Unmarshal(raw, &one) == nil {
			if quoted(one) {
				return path.Root(a.Name), true
			}
			continue
		}
		var list []string
		if json.Unmarshal(raw, &list) != nil {
			continue
		}
		for i, s := range list {
			if quoted(s) {
				return path.Root(a.Name).AtListIndex(i), true
			}
		}
	}
	return path.Empty(), false
}
