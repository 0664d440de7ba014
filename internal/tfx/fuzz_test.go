package tfx

import (
	"strings"
	"testing"
)

// FuzzSplitImportID checks the parser of the import IDs made of parts
// joined by "/" (qtail_helm_repository, qtail_exposed_service): it never
// panics, and what it accepts is n non-empty parts that join back into the
// ID; what it refuses is one "Invalid Import ID" error.
func FuzzSplitImportID(f *testing.F) {
	for _, seed := range []struct {
		id string
		n  uint8
	}{
		{"org/repo", 2}, {"3fa85f64-5717-4562-b3fc-2c963f66afa6/6b1d1b2e-4bcb-4a1d-9f3b-1b2c3d4e5f60", 2},
		{"a//b", 2}, {"/a", 2}, {"a/", 2}, {"", 1}, {"a", 1}, {"a/b/c", 2}, {"a/b/c", 3}, {"日本/語", 2},
	} {
		f.Add(seed.id, seed.n)
	}
	f.Fuzz(func(t *testing.T, id string, n uint8) {
		want := int(n%4) + 1
		parts, diags := SplitImportID(id, want, "A/B")
		if diags.HasError() {
			if len(diags) != 1 || diags[0].Summary() != "Invalid Import ID" || !strings.Contains(diags[0].Detail(), "A/B") {
				t.Fatalf("%q: diagnostics %v", id, diags)
			}
			if parts != nil {
				t.Fatalf("%q: refused, with parts %q", id, parts)
			}
			oracle := strings.Count(id, "/") == want-1 && !strings.HasPrefix(id, "/") && !strings.HasSuffix(id, "/") &&
				!strings.Contains(id, "//") && id != ""
			if oracle {
				t.Fatalf("%q refused as %d parts", id, want)
			}
			return
		}
		if len(parts) != want || strings.Join(parts, "/") != id {
			t.Fatalf("%q as %d parts: %q", id, want, parts)
		}
		for _, p := range parts {
			if p == "" || strings.Contains(p, "/") {
				t.Fatalf("%q: part %q", id, p)
			}
		}
	})
}

// FuzzIsUUID compares IsUUID, which the import of the operator and of the
// manifest services checks, with a reading of the UUID's text form: 32
// hexadecimal digits in groups of 8, 4, 4, 4 and 12 joined by dashes.
func FuzzIsUUID(f *testing.F) {
	for _, s := range []string{
		"3fa85f64-5717-4562-b3fc-2c963f66afa6", "3FA85F64-5717-4562-B3FC-2C963F66AFA6", "3fa85f64571745 62b3fc2c963f66afa6",
		"3fa85f64-5717-4562-b3fc-2c963f66afa", "3fa85f64-5717-4562-b3fc-2c963f66afa6\n", "{3fa85f64-5717-4562-b3fc-2c963f66afa6}", "",
		"3fa85f64-5717-4562-b3fc-2c963f66afag",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		oracle := len(s) == 36
		for i := 0; oracle && i < len(s); i++ {
			switch c := s[i]; i {
			case 8, 13, 18, 23:
				oracle = c == '-'
			default:
				oracle = '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
			}
		}
		if got := IsUUID(s); got != oracle {
			t.Fatalf("IsUUID(%q) = %v, want %v", s, got, oracle)
		}
	})
}
