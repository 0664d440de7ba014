package cluster

import (
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// checkOf returns the check function of a tfx.StringCheck validator.
func checkOf(t *testing.T, v validator.String) func(string) error {
	t.Helper()
	c, ok := v.(tfx.StringCheck)
	if !ok {
		t.Fatalf("%T is not a tfx.StringCheck", v)
	}
	return c.Check
}

func TestChartVersionValidator(t *testing.T) {
	t.Parallel()
	check := checkOf(t, ChartVersion())
	for _, ok := range []string{"1.102.4", "0.1.0", "1.105.0-pre", "1.105.0-rc.1+build.7"} {
		if err := check(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for bad, why := range map[string]string{
		"":          "not empty",
		"latest":    `"latest" would let an upgrade`,
		"LATEST":    `"latest" would let an upgrade`,
		"^1.102.0":  "a version range",
		">=1.100":   "a version range",
		"1.102.x":   "a version range",
		"1.102":     "not an exact semantic version",
		"v1.102.4":  "not an exact semantic version",
		"01.102.4":  "not an exact semantic version",
		"1.102.4 ":  "a version range",
		"1.102.4.1": "not an exact semantic version",
	} {
		err := check(bad)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: error %v, want one saying %q", bad, err, why)
		}
	}
}

func TestNearestChartVersions(t *testing.T) {
	t.Parallel()
	published := []string{"1.104.2", "1.104.0", "1.102.4", "1.102.3", "1.102.2", "1.102.1", "1.102.0", "1.100.1", "1.100.0"}
	cases := map[string][]string{
		"1.102.9": {"1.104.2", "1.104.0", "1.102.4", "1.102.3", "1.102.2"},
		"1.103.0": {"1.104.2", "1.104.0", "1.102.4", "1.102.3", "1.102.2"},
		"2.0.0":   {"1.104.2", "1.104.0", "1.102.4", "1.102.3", "1.102.2"},
		"0.9.0":   {"1.102.1", "1.102.0", "1.100.1", "1.100.0"},
		"1.101.0": {"1.102.2", "1.102.1", "1.102.0", "1.100.1", "1.100.0"},
	}
	for want, near := range cases {
		got := NearestVersions(want, published, len(near))
		if !slices.Equal(got, near) {
			t.Errorf("nearest to %s = %v, want %v", want, got, near)
		}
	}
}
