package fragment

import (
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// FuzzImportKey checks the import IDs of every fragment kind: an ID is
// parsed without panicking; one that is accepted names a valid key of the
// kind, formats back to the same ID (the id attribute that Read keeps,
// Key.ImportID, or AllowAllID for the allow-all removal), and its key is
// the one that its key attributes make again.
func FuzzImportKey(f *testing.F) {
	for _, id := range []string{
		"web", "ops-to-billing", "a.b_c-d", "-web", "web space", "",
		"tag:k8s", "tag:k8s-billing", "tag:", "tag:1a", "tag:a_b",
		"route:10.20.0.0/16", "route:10.20.0.1/16", "route:fd7a:115c:a1e0:b1a::/64", "route:FD7A::/64", "route:0.0.0.0/0",
		"route:10.20.0.0/16#p7mv2rt4ha", "route:10.20.0.0/16#", "route:10.20.0.0/16#UPPER", "route:10.20.0.0/16#a#b",
		"exitNode", "exitNode#k3x9q2mfa7", "exitnode", "service:svc:billing-api", "service:tag:k8s#abc", "service:svc:",
		"service:", "route:", AllowAllID, "allow_all ", "default",
	} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		for _, k := range Kinds() {
			key, err := k.ImportKey(id)
			if err != nil {
				if err.Error() == "" {
					t.Fatalf("%s: the error for %q says nothing", k.Type, id)
				}
				continue
			}
			if key.Kind != k.Kind {
				t.Fatalf("%s: %q gives a key of kind %s", k.Type, id, key.Kind)
			}
			if err := key.Validate(); err != nil {
				t.Fatalf("%s: %q gives the invalid key %+v: %v", k.Type, id, key, err)
			}
			formatted := key.ImportID()
			if k.Kind == policyfile.KindAllowAll {
				formatted = AllowAllID
			}
			if formatted != id {
				t.Fatalf("%s: %q formats back as %q", k.Type, id, formatted)
			}
			again, ok := k.Key(k.KeyValues(key))
			if !ok || again != key {
				t.Fatalf("%s: the attributes of the key of %q make %+v (%v), not %+v", k.Type, id, again, ok, key)
			}
		}
	})
}
