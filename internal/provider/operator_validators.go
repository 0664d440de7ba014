package provider

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

// chartVersionRE is an exact semantic version, optionally with a
// pre-release and build metadata: what Helm pins a chart to.
var chartVersionRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
	`(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// chartVersionXRangeRE matches a wildcard version part, as in 1.x or 1.102.X.
var chartVersionXRangeRE = regexp.MustCompile(`(^|\.)[xX](\.|$)`)

// chartVersionValidator accepts an exact chart version and refuses
// "latest", ranges and empty strings: an operator upgrade can change CRDs and
// proxy images, so it is a reviewed change.
func chartVersionValidator() validator.String {
	return stringCheck{description: "must be an exact chart version such as 1.102.4", check: func(s string) error {
		switch {
		case strings.TrimSpace(s) == "":
			return fmt.Errorf("the chart version must be pinned to an exact version such as 1.102.4, not empty")
		case strings.EqualFold(strings.TrimSpace(s), "latest"):
			return fmt.Errorf("the chart version must be pinned to an exact version such as 1.102.4: \"latest\" would let an upgrade " +
				"(new CRDs, new proxy images) through without review")
		case strings.ContainsAny(s, "^~<>=*|, ") || chartVersionXRangeRE.MatchString(s):
			return fmt.Errorf("a version range is not a pinned version: give one exact version such as 1.102.4")
		case !chartVersionRE.MatchString(s):
			return fmt.Errorf("not an exact semantic version: expected MAJOR.MINOR.PATCH such as 1.102.4, optionally with a pre-release such as 1.105.0-pre")
		}
		return nil
	}}
}

// extraValuesValidator accepts YAML that does not set a key qtail owns.
func extraValuesValidator() validator.String {
	return stringCheck{description: "must be YAML that does not set the keys qtail owns", check: func(s string) error {
		_, err := manifest.ParseExtraValues(s)
		return err
	}}
}

// chartSemverCore returns the MAJOR.MINOR.PATCH numbers of a version, ok false
// when it has another shape.
func chartSemverCore(v string) (core [3]int, ok bool) {
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return core, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return core, false
		}
		core[i] = n
	}
	return core, true
}

// nearestChartVersions returns up to n versions of available that are
// nearest to want in version order (taken in turn above and below it),
// newest first.
func nearestChartVersions(want string, available []string, n int) []string {
	type version struct {
		s    string
		core [3]int
	}
	w, _ := chartSemverCore(want)
	var below, above []version // below: newest first; above: oldest first
	for _, v := range available {
		c, ok := chartSemverCore(v)
		if !ok {
			continue
		}
		if chartVersionLess(c, w) {
			below = append(below, version{v, c})
		} else {
			above = append(above, version{v, c})
		}
	}
	sort.SliceStable(below, func(i, j int) bool { return chartVersionLess(below[j].core, below[i].core) })
	sort.SliceStable(above, func(i, j int) bool { return chartVersionLess(above[i].core, above[j].core) })
	var picked []version
	for len(picked) < n && (len(above) > 0 || len(below) > 0) {
		if len(above) > 0 {
			picked, above = append(picked, above[0]), above[1:]
		}
		if len(picked) < n && len(below) > 0 {
			picked, below = append(picked, below[0]), below[1:]
		}
	}
	sort.SliceStable(picked, func(i, j int) bool { return chartVersionLess(picked[j].core, picked[i].core) })
	out := make([]string, len(picked))
	for i, v := range picked {
		out[i] = v.s
	}
	return out
}

func chartVersionLess(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
