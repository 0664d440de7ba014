package policyfile

import (
	"slices"
	"testing"
)

func TestDeclaredNames(t *testing.T) {
	doc, err := Parse([]byte(`{
  // Hand-written.
  "groups": {"group:platform-ops": ["alice@example.com"], "group:oncall": []},
  "tagOwners": {
    // qtail:tag_owner:tag:k8s
    "tag:k8s": ["tag:k8s-operator"],
    "tag:k8s-operator": [],
  },
  "grants": [],
}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.DeclaredNames("tagOwners"); !slices.Equal(got, []string{"tag:k8s", "tag:k8s-operator"}) {
		t.Errorf("tagOwners: %q", got)
	}
	if got := doc.DeclaredNames("groups"); !slices.Equal(got, []string{"group:platform-ops", "group:oncall"}) {
		t.Errorf("groups: %q", got)
	}
	for _, section := range []string{"hosts", "grants"} {
		if got := doc.DeclaredNames(section); got != nil {
			t.Errorf("%s: %q, want none", section, got)
		}
	}
}

func TestNearest(t *testing.T) {
	known := []string{"tag:k8s", "tag:k8s-operator", "tag:k8s-billing", "tag:k8s-billing-us-east-1", "tag:k8s-billing-eu-west-3", "tag:web"}
	for _, tc := range []struct {
		name string
		n    int
		want []string
	}{
		{"tag:k8s-biling", 3, []string{"tag:k8s-billing"}},
		{"tag:K8S-Billing", 3, []string{"tag:k8s-billing", "tag:k8s-billing-eu-west-3", "tag:k8s-billing-us-east-1"}},
		{"tag:k8s-billing-us-east1", 3, []string{"tag:k8s-billing-us-east-1"}},
		{"tag:k8s-billing", 3, []string{"tag:k8s-billing-eu-west-3", "tag:k8s-billing-us-east-1"}},
		{"tag:k8s-billing", 1, []string{"tag:k8s-billing-eu-west-3"}},
		{"tag:database", 3, nil},
		{"tag:wbe", 3, []string{"tag:web"}},
	} {
		if got := Nearest(tc.name, known, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Nearest(%q, %d) = %q, want %q", tc.name, tc.n, got, tc.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"kitten", "sitting", 3}, {"tag:web", "tag:wbe", 2}, {"same", "same", 0},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// Names within a typo come first, nearest first, then the names that
// extend the name, shortest extension first, whatever the order of known.
func TestNearestOrdersTyposBeforeExtensions(t *testing.T) {
	known := []string{"tag:web-frontend", "tag:web-eu", "tag:wbe", "tag:wep"}
	want := []string{"tag:wep", "tag:wbe", "tag:web-eu", "tag:web-frontend"}
	if got := Nearest("tag:web", known, 4); !slices.Equal(got, want) {
		t.Errorf("Nearest = %q, want %q", got, want)
	}
}
