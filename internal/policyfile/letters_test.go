package policyfile

import "testing"

// A tag name starts with an ASCII letter: the ends of both ranges are
// letters, and the characters just outside them are not.
func TestValidTagLetterRanges(t *testing.T) {
	for _, s := range []string{"tag:a", "tag:z", "tag:A", "tag:Z", "tag:a-Z9"} {
		if err := ValidTag(s); err != nil {
			t.Errorf("ValidTag(%q) = %v, want nil", s, err)
		}
	}
	for _, s := range []string{"tag:`x", "tag:{x", "tag:@x", "tag:[x", "tag:x`", "tag:x{", "tag:x@", "tag:x["} {
		if err := ValidTag(s); err == nil {
			t.Errorf("ValidTag(%q) = nil, want an error", s)
		}
	}
}
