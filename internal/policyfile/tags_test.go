package policyfile

import (
	"slices"
	"testing"
)

func TestTagOwnedBy(t *testing.T) {
	doc := mustParse(t, []byte(`{
		"tagOwners": {
			"tag:k8s-operator": [],
			"tag:k8s":          ["autogroup:admin", "TAG:K8S-OPERATOR"],
			"tag:billing":      ["group:ops"],
		},
	}`))
	for _, tc := range []struct {
		tag         string
		by          []string
		owned, decl bool
		owners      []string
	}{
		{"tag:k8s", []string{"tag:k8s-operator"}, true, true, []string{"autogroup:admin", "TAG:K8S-OPERATOR"}},
		{"tag:k8s-operator", []string{"tag:k8s-operator"}, true, true, nil},
		{"tag:billing", []string{"tag:k8s-operator"}, false, true, []string{"group:ops"}},
		{"tag:web", []string{"tag:k8s-operator"}, false, false, nil},
	} {
		owned, declared, owners := doc.TagOwnedBy(tc.tag, tc.by)
		if owned != tc.owned || declared != tc.decl || !slices.Equal(owners, tc.owners) {
			t.Errorf("TagOwnedBy(%s, %v) = %v, %v, %v; want %v, %v, %v", tc.tag, tc.by, owned, declared, owners, tc.owned, tc.decl, tc.owners)
		}
	}
}
