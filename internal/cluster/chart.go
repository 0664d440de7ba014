package cluster

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// chartVersionRE is an exact semantic version, optionally with a
// pre-release and build metadata: what Helm pins a chart to.
var chartVersionRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// chartVersionXRangeRE matches a wildcard version part, as in 1.x or 1.102.X.
var chartVersionXRangeRE = regexp.MustCompile(`(^|\.)[xX](\.|$)`)

// ChartVersion accepts an exact chart version and refuses "latest", ranges
// and empty strings: an upgrade of the operator can change CRDs and proxy
// images, so it is a reviewed change.
func ChartVersion() validator.String {
	return tfx.StringCheck{Rule: "must be an exact chart version such as 1.102.4", Check: func(s string) error {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("the chart version must be pinned to an exact version such as 1.102.4, not empty")
		}
		switch {
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

// semverCore returns the MAJOR.MINOR.PATCH numbers of a version, ok false
// when it has another shape.
func semverCore(v string) (core [3]int, ok bool) {
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

// NearestVersions returns up to n versions of available that are nearest
// to want in version order (taken in turn above and below it), newest
// first.
func NearestVersions(want string, available []string, n int) []string {
	type version struct {
		s    string
		core [3]int
	}
	w, _ := semverCore(want)
	var below, above []version // below: newest first; above: oldest first
	for _, v := range available {
		c, ok := semverCore(v)
		if !ok {
			continue
		}
		if versionLess(c, w) {
			below = append(below, version{v, c})
		} else {
			above = append(above, version{v, c})
		}
	}
	sort.SliceStable(below, func(i, j int) bool { return versionLess(below[j].core, below[i].core) })
	sort.SliceStable(above, func(i, j int) bool { return versionLess(above[i].core, above[j].core) })
	var picked []version
	for len(picked) < n && (len(above) > 0 || len(below) > 0) {
		if len(above) > 0 {
			picked, above = append(picked, above[0]), above[1:]
		}
		if len(picked) < n && len(below) > 0 {
			picked, below = append(picked, below[0]), below[1:]
		}
	}
	sort.SliceStable(picked, func(i, j int) bool { return versionLess(picked[j].core, picked[i].core) })
	out := make([]string, len(picked))
	for i, v := range picked {
		out[i] = v.s
	}
	return out
}

func versionLess(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// ChartCheck names a chart version to look for in an organization's Helm
// repository, and the attributes that hold the repository, the chart's
// name (ChartAt, empty when qtail names the chart) and the version.
type ChartCheck struct {
	OrgID, RepoID, Chart, Version string
	RepoAt, ChartAt, VersionAt    path.Path
}

// servedBy completes "Point the repository ID at a repository that serves
// the chart, ...".
func (c ChartCheck) servedBy() string {
	if c.Chart == OperatorChart {
		return "such as Tailscale's " + StableChartsURL
	}
	return "such as a repository you publish examples/charts/" + ManifestsChart + " to"
}

// CheckChartPublished checks that a Helm repository publishes a chart at a
// version. A repository that lists no chart at all (Qovery cannot read its
// index) is not checked.
func CheckChartPublished(ctx context.Context, q *qovery.Client, c ChartCheck, diags *diag.Diagnostics) {
	charts, err := q.ListHelmCharts(ctx, c.OrgID, c.RepoID, c.Chart)
	if qovery.IsNotFound(err) {
		diags.AddAttributeError(c.RepoAt, "Helm Repository Not Found",
			fmt.Sprintf("The organization %s has no Helm repository %s. Check the repository ID, for example "+
				"qtail_helm_repository.NAME.id.", c.OrgID, c.RepoID))
		return
	}
	if err != nil {
		diags.AddWarning("Chart Version Not Checked", fmt.Sprintf("qtail could not list the charts of the Helm repository %s: %v. "+
			"Nothing needs to be done: a version that the repository does not publish makes the deployment fail instead.", c.RepoID, err))
		return
	}
	var versions []string
	found := false
	for _, ch := range charts {
		if ch.ChartName == c.Chart {
			found = true
			versions = append(versions, ch.Versions...)
		}
	}
	if !found {
		all, err := q.ListHelmCharts(ctx, c.OrgID, c.RepoID, "")
		if err != nil || len(all) == 0 {
			tflog.Debug(ctx, "the Helm repository lists no chart; the chart version is not checked", map[string]any{"helm_repository_id": c.RepoID})
			return
		}
		names := make([]string, 0, len(all))
		for _, ch := range all {
			names = append(names, ch.ChartName)
		}
		at, fix := c.RepoAt, "Point the repository ID at a repository that serves the chart, "+c.servedBy()+"."
		// A ChartAt left unset is path.Path{}, which is not equal to
		// path.Empty(): ask whether it names an attribute.
		if len(c.ChartAt.Steps()) > 0 {
			at, fix = c.ChartAt, "Name one of them in chart_name, or point the repository ID at a repository that serves the chart, "+c.servedBy()+"."
		}
		diags.AddAttributeError(at, "Chart Not in the Repository",
			fmt.Sprintf("The Helm repository %s has no chart %s; it publishes: %s. %s", c.RepoID, c.Chart, strings.Join(names, ", "), fix))
		return
	}
	if slices.Contains(versions, c.Version) {
		return
	}
	diags.AddAttributeError(c.VersionAt, "Chart Version Not Published",
		fmt.Sprintf("The Helm repository %s does not publish %s version %s. The nearest published versions are: %s. "+
			"Pin one of the published versions in chart_version.",
			c.RepoID, c.Chart, c.Version, strings.Join(NearestVersions(c.Version, versions, 5), ", ")))
}
