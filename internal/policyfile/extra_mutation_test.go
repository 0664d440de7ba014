package policyfile

import (
	"fmt"
	"testing"
)

// The whitespace and comments between values survive every edit byte for
// byte; these tests pin what each helper reads and cuts.

func TestExtraTokensAndLineBreaks(t *testing.T) {
	for _, tc := range []struct {
		in             string
		tokens, breaks string
		indent         string
		indentOK       bool
		head, tail     string
		comment, blank bool
	}{
		{"", "[]", "[]", "", false, "", "", false, false},
		{"  \n\t", "[{0 0 4}]", "[2]", "\t", true, "  ", "\n\t", false, false},
		{"// a\n  ", "[{1 0 5} {0 5 7}]", "[4]", "  ", true, "// a", "\n  ", true, false},
		{"// a", "[{1 0 4}]", "[]", "", false, "// a", "", true, false},
		{"//\n", "[{1 0 3}]", "[2]", "", true, "//", "\n", true, false},
		{"/* x */ ", "[{2 0 7} {0 7 8}]", "[]", "", false, "/* x */ ", "", true, false},
		{"/* x", "[{2 0 4}]", "[]", "", false, "/* x", "", true, false},
		{" /**/", "[{0 0 1} {2 1 5}]", "[]", "", false, " /**/", "", true, false},
		{"/**/\n\t", "[{2 0 4} {0 4 6}]", "[4]", "\t", true, "/**/", "\n\t", true, false},
		{"x", "[{0 0 1}]", "[]", "", false, "x", "", false, false},
		{"\r\n// c\r\n", "[{0 0 2} {1 2 8}]", "[1 7]", "", true, "", "\r\n// c\r\n", true, false},
		{"\n/* a\n b */\n\t// c\n  ", "[{0 0 1} {2 1 11} {0 11 13} {1 13 18} {0 18 20}]", "[0 11 17]", "  ", true, "", "\n/* a\n b */\n\t// c\n  ", true, false},
		{"\n \t x", "[{0 0 4} {0 4 5}]", "[0]", " \t ", true, "", "\n \t x", false, false},
		{"\n\n", "[{0 0 2}]", "[0 1]", "", true, "", "\n\n", false, true},
		{"\n \t\r\n", "[{0 0 5}]", "[0 4]", "", true, "", "\n \t\r\n", false, true},
		{"  \n\n", "[{0 0 4}]", "[2 3]", "", true, "  ", "\n\n", false, true},
		{"// a\n\n", "[{1 0 5} {0 5 6}]", "[4 5]", "", true, "// a", "\n\n", true, true},
		{"\n// c\n", "[{0 0 1} {1 1 6}]", "[0 5]", "", true, "", "\n// c\n", true, false},
		{"\n/*\n\n*/\n", "[{0 0 1} {2 1 7} {0 7 8}]", "[0 7]", "", true, "", "\n/*\n\n*/\n", true, false},
	} {
		e := []byte(tc.in)
		if got := fmt.Sprint(tokens(e)); got != tc.tokens {
			t.Errorf("tokens(%q) = %s, want %s", tc.in, got, tc.tokens)
		}
		if got := fmt.Sprint(lineBreaks(e)); got != tc.breaks {
			t.Errorf("lineBreaks(%q) = %s, want %s", tc.in, got, tc.breaks)
		}
		if ind, ok := lastLineIndent(e); ind != tc.indent || ok != tc.indentOK {
			t.Errorf("lastLineIndent(%q) = %q, %v; want %q, %v", tc.in, ind, ok, tc.indent, tc.indentOK)
		}
		head, tail := splitFirstLine(e)
		if string(head) != tc.head || string(tail) != tc.tail || (tail == nil) != (tc.tail == "") {
			t.Errorf("splitFirstLine(%q) = %q | %q (nil %v), want %q | %q", tc.in, head, tail, tail == nil, tc.head, tc.tail)
		}
		if got := hasComment(e); got != tc.comment {
			t.Errorf("hasComment(%q) = %v", tc.in, got)
		}
		if got := hasBlankLine(e); got != tc.blank {
			t.Errorf("hasBlankLine(%q) = %v", tc.in, got)
		}
	}
}

func TestExtraMarkerLinesCut(t *testing.T) {
	web := Key{Kind: KindGrant, Name: "web"}
	isWeb := func(k Key) bool { return k == web }
	const routes = "// qtail:section:routes"
	for _, tc := range []struct {
		in, drop, dropSection, without string
	}{
		{"\n\t// qtail:grant:web\n\t", "\n\t", "\n\t// qtail:grant:web\n\t", ""},
		{"// qtail:grant:web\n\t", "\n\t", "// qtail:grant:web\n\t", ""},
		{"\r\n\t// qtail:grant:web\r\n\t", "\r\n\t", "\r\n\t// qtail:grant:web\r\n\t", ""},
		{"\n\t// hand\n\t// qtail:grant:web", "\n\t// hand", "\n\t// hand\n\t// qtail:grant:web", "\n\t// hand"},
		{"\n  // qtail:grant:web\n  // qtail:grant:web\n  ", "\n  // qtail:grant:web\n  ", "\n  // qtail:grant:web\n  // qtail:grant:web\n  ", "\n  // qtail:grant:web\n"},
		{"\n\t// qtail:section:routes\n\t", "\n\t// qtail:section:routes\n\t", "\n\t", "\n\t// qtail:section:routes\n"},
		{"\n\t// hand\n\t", "\n\t// hand\n\t", "\n\t// hand\n\t", "\n\t// hand\n"},
		{"\n\t// hand\n", "\n\t// hand\n", "\n\t// hand\n", "\n\t// hand\n"},
		{"\n\t/* qtail:grant:web */\n\t", "\n\t/* qtail:grant:web */\n\t", "\n\t/* qtail:grant:web */\n\t", "\n\t/* qtail:grant:web */"},
		{"\n\t// qtail:grant:web\n\t// hand\n\t", "\n\t// hand\n\t", "\n\t// qtail:grant:web\n\t// hand\n\t", "\n\t// hand\n"},
		{"\r\n\t// hand\r\n\t// qtail:grant:web\r\n\t", "\r\n\t// hand\r\n\t", "\r\n\t// hand\r\n\t// qtail:grant:web\r\n\t", "\r\n\t// hand\r\n"},
		{"\n\t/* c */\r\n\t// qtail:grant:web\r\n\t", "\n\t/* c */\r\n\t", "\n\t/* c */\r\n\t// qtail:grant:web\r\n\t", "\n\t/* c */"},
	} {
		if got := string(dropMarkerLine([]byte(tc.in), isWeb, "")); got != tc.drop {
			t.Errorf("dropMarkerLine(%q, web) = %q, want %q", tc.in, got, tc.drop)
		}
		if got := string(dropMarkerLine([]byte(tc.in), nil, routes)); got != tc.dropSection {
			t.Errorf("dropMarkerLine(%q, routes) = %q, want %q", tc.in, got, tc.dropSection)
		}
		if got := string(withoutMarker([]byte(tc.in), isWeb, "")); got != tc.without {
			t.Errorf("withoutMarker(%q, web) = %q, want %q", tc.in, got, tc.without)
		}
	}
	// The input is never changed in place.
	in := []byte("\n\t// qtail:grant:web\n\t")
	_ = withoutMarker(in, isWeb, "")
	if string(in) != "\n\t// qtail:grant:web\n\t" {
		t.Errorf("withoutMarker changed its input to %q", in)
	}
}

func TestExtraJoinAndConcat(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"// c\n", "\n\t", "// c\n\t"},
		{"// c\r\n", "\r\n\t", "// c\r\n\t"},
		{"// c\r\n", "\n\t", "// c\n\t"},
		{"// c\n", "\t", "// c\n\t"},
		{"/* c */\n", "\n", "/* c */\n\n"},
		{"// c\n ", "\n", "// c\n \n"},
		{"", "\n", "\n"},
		{"\n", "\n", "\n\n"},
		{"// c", "\n", "// c\n"},
	} {
		if got := string(joinExtra([]byte(tc.a), []byte(tc.b))); got != tc.want {
			t.Errorf("joinExtra(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
	if concat() != nil || concat(nil, nil) != nil {
		t.Error("concat of nothing is not nil")
	}
	if got := concat(nil, []byte{}); got == nil || len(got) != 0 {
		t.Errorf("concat of an empty extra = %#v, want present and empty", got)
	}
	if got := string(concat([]byte("a"), nil, []byte("b"))); got != "ab" {
		t.Errorf("concat = %q", got)
	}
}

func TestExtraMarkersOfKind(t *testing.T) {
	e := []byte("// qtail:grant:a\n// qtail:policy_test:t\n// qtail:grant:b\n/* qtail:tag_owner:tag:x */\n")
	if k, ok := lastMarkerOfKind(e, KindGrant); !ok || k != (Key{Kind: KindGrant, Name: "b"}) {
		t.Errorf("lastMarkerOfKind(grant) = %v, %v", k, ok)
	}
	if k, ok := lastMarkerOfKind(e, KindPolicyTest); !ok || k != (Key{Kind: KindPolicyTest, Name: "t"}) {
		t.Errorf("lastMarkerOfKind(policy_test) = %v, %v", k, ok)
	}
	first := []byte("// qtail:grant:a\n// hand\n")
	if k, ok := lastMarkerOfKind(first, KindGrant); !ok || k.Name != "a" {
		t.Errorf("lastMarkerOfKind of the first line = %v, %v", k, ok)
	}
	if k, ok := lastMarkerOfKind(e, KindTagOwner); ok {
		t.Errorf("a block comment is a marker: %v", k)
	}
	if !hasMarkerOfKind(e, KindPolicyTest) || hasMarkerOfKind(e, KindTagOwner) {
		t.Error("hasMarkerOfKind")
	}
	if !isMarkerLine("  // qtail:section:routes\n", nil, "// qtail:section:routes") {
		t.Error("the comment marker is not recognised")
	}
	if isMarkerLine("// qtail:grant:a\n", nil, "") || isMarkerLine("// qtail:grant:a\n", nil, "// qtail:section:routes") {
		t.Error("a marker line is accepted without a predicate")
	}
	if !isMarkerLine("// qtail:grant:a\n", func(k Key) bool { return k.Name == "a" }, "// qtail:section:routes") {
		t.Error("a marker line is refused by its predicate")
	}
}
