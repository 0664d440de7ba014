package tfx

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// apiErrorAdvice is what to do about a failed API call that qtail could
// not retry its way through.
const apiErrorAdvice = "qtail has already retried what can be retried (rate limits, server errors, network failures). " +
	"Check the message above, typically a credential that lacks a scope or permission, or an ID that does not exist, " +
	"then run Terraform again."

// APIError adds an error diagnostic for a failed API call: what qtail was
// doing (action, such as "read the policy file"), the API's own words,
// then what to do.
func APIError(diags *diag.Diagnostics, action string, err error) {
	diags.AddError("Unable to "+TitleCase(action), fmt.Sprintf("qtail could not %s.\n\n%s\n\n%s", action, err, apiErrorAdvice))
}

// titleCaseMinor are the words that stay in lower case inside a title:
// articles, short conjunctions and prepositions of three letters or less.
var titleCaseMinor = map[string]bool{
	"a": true, "an": true, "and": true, "as": true, "at": true, "but": true, "by": true, "for": true,
	"in": true, "of": true, "on": true, "or": true, "the": true, "to": true,
}

// TitleCase writes a diagnostic summary in Title Case: every word but the
// minor ones starts with a capital letter. Words that are not plain lower
// case words (IDs, tags, names with digits or colons) stay as they are.
func TitleCase(s string) string {
	words := strings.Split(s, " ")
	for i, w := range words {
		if w == "" || (i > 0 && titleCaseMinor[w]) || !plainLowerWord(w) {
			continue
		}
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		for j := 1; j < len(r)-1; j++ {
			// allow-all: Allow-All.
			if r[j] == '-' {
				r[j+1] = unicode.ToUpper(r[j+1])
			}
		}
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}

// plainLowerWord reports whether w is made of lower-case letters, with
// apostrophes and inner dashes.
func plainLowerWord(w string) bool {
	for i, c := range w {
		switch {
		case c >= 'a' && c <= 'z':
		case (c == '\'' || c == '-') && i > 0 && i < len(w)-1:
		default:
			return false
		}
	}
	return true
}

// ShellWord quotes s for a POSIX shell when it needs quotes, for the
// commands that diagnostics suggest (terraform import ADDRESS ID).
func ShellWord(s string) string {
	if strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// HCLList renders strings as an HCL list of quoted strings, such as
// ["tag:a", "tag:b"], for messages and the HCL they suggest.
func HCLList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// ImportHint is the two ways to adopt an existing object of resourceType
// with the import ID id, for diagnostics: the import block (Terraform 1.5
// and later, reviewed in a plan) and the terraform import command. Each
// line is indented for a diagnostic's detail.
func ImportHint(resourceType, id string) string {
	return fmt.Sprintf("an import block (then plan and apply):\n\n  import {\n    to = %s.NAME\n    id = %q\n  }\n\n"+
		"or the command:\n\n  terraform import %s.NAME %s", resourceType, id, resourceType, ShellWord(id))
}
