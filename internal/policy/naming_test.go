package policy_test

// The messages of the package name fragments as qtail's resources do:
// the tests read them as people do, with the naming of internal/fragment
// installed.
import _ "github.com/qtail/terraform-provider-qtail/internal/fragment"
