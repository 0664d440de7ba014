package policyfile

import (
	"strings"
	"testing"
)

func TestOwnersAreShortLowerCaseWords(t *testing.T) {
	for s, ok := range map[string]bool{
		"": false, "a": true, "z": true, "0": true, "9": true, "k3x9q2mfa7": true,
		strings.Repeat("a", 32): true, strings.Repeat("a", 33): false,
		"A": false, "a-b": false, "a b": false, "`": false, "{": false, "/": false, ":": false,
	} {
		if got := validOwner(s); got != ok {
			t.Errorf("validOwner(%q) = %v, want %v", s, got, ok)
		}
	}
	seen := map[string]bool{}
	for range 50 {
		o := NewOwner()
		if len(o) != ownerLen || !validOwner(o) || strings.ContainsAny(o, "ilo01") {
			t.Fatalf("NewOwner() = %q", o)
		}
		seen[o] = true
	}
	if len(seen) < 50 {
		t.Errorf("NewOwner repeated itself: %d distinct of 50", len(seen))
	}
}

func TestKeyTexts(t *testing.T) {
	owned := Key{Kind: KindAutoApprover, Name: "route:10.0.0.0/8", Owner: "k3x9q2mfa7"}
	for _, tc := range []struct {
		key                     Key
		marker, importID, entry string
		stringForm              string
	}{
		{owned, "// qtail:auto_approver:route:10.0.0.0/8#k3x9q2mfa7", "route:10.0.0.0/8#k3x9q2mfa7", "10.0.0.0/8", `qtail_auto_approver "route:10.0.0.0/8"`},
		{ExitNodeKey(), "// qtail:auto_approver:exitNode", "exitNode", "exitNode", `qtail_auto_approver "exitNode"`},
		{Key{Kind: KindTagOwner, Name: "tag:db"}, "// qtail:tag_owner:tag:db", "tag:db", "tag:db", `qtail_tag_owner "tag:db"`},
		{AllowAllKey(), "// qtail:allow_all:default", "default", "default", `qtail_allow_all_removal "default"`},
	} {
		k := tc.key
		if k.Marker() != tc.marker || k.ImportID() != tc.importID || k.entryKey() != tc.entry || k.String() != tc.stringForm {
			t.Errorf("%#v: %q %q %q %q", k, k.Marker(), k.ImportID(), k.entryKey(), k.String())
		}
	}
	if owned.List() != RouteKey("10.0.0.0/8") || !owned.Owned() || RouteKey("10.0.0.0/8").Owned() {
		t.Error("List and Owned")
	}
	for kind, keyed := range map[Kind]bool{KindTagOwner: true, KindAutoApprover: true, KindGrant: false, KindPolicyTest: false, KindAllowAll: false} {
		if kind.keyed() != keyed || !kind.valid() {
			t.Errorf("%s: keyed %v valid %v", kind, kind.keyed(), kind.valid())
		}
	}
	if Kind("section").valid() || Kind("").valid() {
		t.Error("an unknown kind is valid")
	}
}

func TestKeyValidation(t *testing.T) {
	for _, tc := range []struct {
		key  Key
		want string
	}{
		{Key{Kind: KindGrant, Name: "web"}, ""},
		{Key{Kind: "nope", Name: "web"}, `policy: unknown fragment kind "nope"`},
		{Key{Kind: KindGrant}, "policy: grant name must not be empty"},
		{Key{Kind: KindGrant, Name: "a b"}, `policy: grant name "a b" must not contain spaces or control characters`},
		{Key{Kind: KindGrant, Name: "a\u2028b"}, `policy: grant name "a\u2028b" must not contain spaces or control characters`},
		{Key{Kind: KindGrant, Name: "a\x7fb"}, `policy: grant name "a\x7fb" must not contain spaces or control characters`},
		{Key{Kind: KindGrant, Name: "web", Owner: "abc"}, ""},
		{Key{Kind: KindTagOwner, Name: "tag:web", Owner: "abc"}, ""},
		{Key{Kind: KindPolicyTest, Name: "web", Owner: "abc"}, ""},
		{Key{Kind: KindGrant, Name: "web", Owner: "a#b"}, `policy: grant "web" cannot have the owner "a#b": owners are 1 to 32 lower-case letters and digits, and the allow-all rule has none`},
		{Key{Kind: KindAllowAll, Name: "default", Owner: "abc"}, `policy: allow_all "default" cannot have the owner "abc": owners are 1 to 32 lower-case letters and digits, and the allow-all rule has none`},
		{Key{Kind: KindAutoApprover, Name: "exitNode", Owner: "ABC"}, `policy: auto_approver "exitNode" cannot have the owner "ABC": owners are 1 to 32 lower-case letters and digits, and the allow-all rule has none`},
		{Key{Kind: KindAutoApprover, Name: "exitNode", Owner: "abc"}, ""},
		{Key{Kind: KindAutoApprover, Name: "route:10.0.0.0/8"}, ""},
		{Key{Kind: KindAutoApprover, Name: "10.0.0.0/8"}, `policy: auto approver "10.0.0.0/8" must be "exitNode" or "route:" followed by a CIDR`},
	} {
		err := tc.key.Validate()
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.want {
				t.Errorf("%#v: %q, want %q", tc.key, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("%#v: valid, want %q", tc.key, tc.want)
		}
	}
	if err := (Key{Kind: KindAutoApprover, Name: "route:nope"}).Validate(); err == nil || !strings.HasPrefix(err.Error(), `policy: auto approver "route:nope": `) {
		t.Errorf("bad CIDR: %v", err)
	}
	if err := (Key{Kind: KindTagOwner, Name: "db"}).Validate(); err == nil || !strings.HasPrefix(err.Error(), `policy: tag owner "db": `) {
		t.Errorf("bad tag: %v", err)
	}
}

func TestParseMarkerOwners(t *testing.T) {
	for s, want := range map[string]Key{
		"// qtail:auto_approver:exitNode#abc":       {Kind: KindAutoApprover, Name: "exitNode", Owner: "abc"},
		"qtail:auto_approver:route:10.0.0.0/8#k3x9": {Kind: KindAutoApprover, Name: "route:10.0.0.0/8", Owner: "k3x9"},
		"  //   qtail:grant:a#b  \n":                {Kind: KindGrant, Name: "a", Owner: "b"},
		"// qtail:tag_owner:tag:web#p7mv2rt4ha":     {Kind: KindTagOwner, Name: "tag:web", Owner: "p7mv2rt4ha"},
		"// qtail:grant:web":                        {Kind: KindGrant, Name: "web"},
		"// qtail:auto_approver:route:10.0.0.0/8":   {Kind: KindAutoApprover, Name: "route:10.0.0.0/8"},
	} {
		if got, ok := parseMarker(s); !ok || got != want {
			t.Errorf("parseMarker(%q) = %#v, %v; want %#v", s, got, ok, want)
		}
	}
	for _, s := range []string{
		"// qtail:auto_approver:exitNode#ABC", "// qtail:auto_approver:exitNode#", "// qtail:auto_approver:route:",
		"// qtail:auto_approver:route:#abc", "// qtail:auto_approver:other", "// qtail:grant:", "// qtail:grant",
		"// qtail:nope:x", "// qtail:allow_all:default", "// other:grant:x", "// qtail:grant:a b",
		"// qtail:grant:web#", "// qtail:grant:#abc", "// qtail:grant:web#ABC",
	} {
		if k, ok := parseMarker(s); ok {
			t.Errorf("parseMarker(%q) = %#v, want no marker", s, k)
		}
	}
}
