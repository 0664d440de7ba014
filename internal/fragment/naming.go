package fragment

import (
	"fmt"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

func init() { policyfile.SetNaming(naming{}) }

// naming names fragments in the messages of internal/policy by the
// resources that manage them.
type naming struct{}

// Kind is the resource type of the fragments of kind.
func (naming) Kind(kind policyfile.Kind) string {
	if k, ok := ByKind(kind); ok {
		return k.Type
	}
	return string(kind)
}

// ImportHint is the terraform import command and the import block that
// take over the fragment of key.
func (n naming) ImportHint(key policyfile.Key) string {
	typ, id := n.Kind(key.Kind), key.ImportID()
	return fmt.Sprintf("to manage it with Terraform, import it: terraform import %s.NAME %s (or an import block with to = %s.NAME and id = %q), "+
		"then set the value in the configuration", typ, shellQuote(id), typ, id)
}
