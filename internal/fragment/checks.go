package fragment

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// NameRE is the form of the name of a grant or a policy test.
var NameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// NameRule says what NameRE requires.
const NameRule = "must start with a letter or a digit, followed by letters, digits, '.', '_' or '-'"

// CheckName checks the name of a grant or a policy test.
func CheckName(s string) error {
	if !NameRE.MatchString(s) {
		return errors.New("names start with a letter or a digit, followed by letters, digits, '.', '_' or '-'")
	}
	return nil
}

// selector returns the check of a source or a destination.
func selector(use policyfile.SelectorUse) func(string) error {
	return func(s string) error { return policyfile.ValidSelector(s, use) }
}

// CheckPosture checks a posture name.
func CheckPosture(s string) error {
	name, ok := strings.CutPrefix(s, "posture:")
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
		return errors.New("postures are named \"posture:NAME\"")
	}
	return nil
}

// CheckAppJSON checks the app value of a grant: a JSON object whose keys
// are capability names {domain}/{path} and whose values are lists of
// objects.
func CheckAppJSON(s string) error {
	var app map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &app); err != nil {
		return fmt.Errorf("app must be a JSON object of capability names to lists of objects: %v", err)
	}
	if len(app) == 0 {
		return errors.New("app must name at least one capability")
	}
	for name, v := range app {
		domain, p, ok := strings.Cut(name, "/")
		if !ok || p == "" || !validDomainName(domain) {
			return fmt.Errorf("capability %q: capability name must have the form {domain}/{path}", name)
		}
		var list []map[string]json.RawMessage
		if err := json.Unmarshal(v, &list); err != nil {
			return fmt.Errorf("capability %q: the value must be a list of JSON objects", name)
		}
	}
	return nil
}

// validDomainName reports whether d is a DNS name: dot-separated labels of
// letters, digits and dashes.
func validDomainName(d string) bool {
	if d == "" {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" {
			return false
		}
		for i := 0; i < len(label); i++ {
			if !isDNSByte(label[i]) {
				return false
			}
		}
	}
	return true
}

func isDNSByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-'
}

// CheckOwner checks a tag owner or an auto approver: a user email, a
// group, an autogroup or a tag.
func CheckOwner(s string) error {
	if err := policyfile.OneListElement(s); err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(s, "tag:"):
		return policyfile.ValidTag(s)
	case strings.HasPrefix(s, "group:"), strings.HasPrefix(s, "autogroup:"):
		return policyfile.ValidSelector(s, policyfile.GrantSrc)
	case strings.Contains(s, "@") && !strings.Contains(s, ":"):
		return policyfile.ValidSelector(s, policyfile.GrantSrc)
	}
	return errors.New("owners and approvers are user emails, group:, autogroup: or tag: names")
}

// CheckProto checks the protocol of a policy test.
func CheckProto(s string) error {
	if s == "" || s == "*" {
		return fmt.Errorf("name one protocol, such as \"tcp\"")
	}
	return policyfile.ValidIPPort(s + ":*")
}

// shellQuote quotes s for a POSIX shell when it needs quotes.
func shellQuote(s string) string {
	if strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
