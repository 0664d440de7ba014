package cluster

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
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
	// One version is the nearest above, then the nearest below; versions
	// of another shape are left out.
	for n, near := range map[int][]string{1: {"1.102.1"}, 2: {"1.102.1", "1.101.9"}, 3: {"1.102.1", "1.101.9"}, 0: {}} {
		got := NearestVersions("1.102.0", []string{"-1.102.0", "1.101.9", "1.102.1", "1.102", "1.102.x", "latest"}, n)
		if !slices.Equal(got, near) {
			t.Errorf("%d nearest to 1.102.0 = %v, want %v", n, got, near)
		}
	}
}

func TestCheckChartPublished(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	stable := w.operatorRepository()
	other, err := w.q.CreateHelmRepository(w.ctx, w.org, &qovery.HelmRepositoryRequest{
		Name: "acme", Kind: qovery.HelmRepositoryKindHTTPS, URL: "https://charts.acme.example"})
	if err != nil {
		t.Fatal(err)
	}
	repoAt, chartAt, versionAt := path.Root("helm_repository_id"), path.Root("chart_name"), path.Root("chart_version")
	check := func(repo, chart, version string, withChartAt bool) ChartCheck {
		c := ChartCheck{OrgID: w.org, RepoID: repo, Chart: chart, Version: version, RepoAt: repoAt, VersionAt: versionAt}
		if withChartAt {
			c.ChartAt = chartAt
		}
		return c
	}
	for _, tc := range []struct {
		name    string
		check   ChartCheck
		summary string
		at      path.Path
		says    []string
	}{
		{"published", check(stable, OperatorChart, "1.102.4", false), "", path.Empty(), nil},
		{"not published", check(stable, OperatorChart, "1.103.0", false), "Chart Version Not Published", versionAt,
			[]string{"does not publish tailscale-operator version 1.103.0. The nearest published versions are: 1.104.2, 1.104.0, 1.102.4, 1.102.3, 1.102.2."}},
		{"another chart", check(stable, ManifestsChart, "0.1.0", false), "Chart Not in the Repository", repoAt,
			[]string{"has no chart tailnet-manifests; it publishes: tailscale-operator. Point the repository ID at a repository that serves the chart, " +
				"such as a repository you publish examples/charts/tailnet-manifests to."}},
		{"another chart named by the user", check(stable, "web", "0.1.0", true), "Chart Not in the Repository", chartAt,
			[]string{"Name one of them in chart_name"}},
		{"no repository", check("00000000-0000-4000-8000-000000000000", OperatorChart, "1.102.4", false), "Helm Repository Not Found", repoAt,
			[]string{"has no Helm repository 00000000-0000-4000-8000-000000000000"}},
		{"a repository that lists no chart", check(other.ID, OperatorChart, "1.102.4", false), "", path.Empty(), nil},
	} {
		var diags diag.Diagnostics
		CheckChartPublished(w.ctx, w.q, tc.check, &diags)
		if tc.summary == "" {
			if len(diags) != 0 {
				t.Errorf("%s: %v, want nothing", tc.name, diags)
			}
			continue
		}
		if len(diags) != 1 || !diags.HasError() || diags[0].Summary() != tc.summary || !isOn(diags[0], tc.at) {
			t.Errorf("%s: %v, want the error %q on %s", tc.name, diags, tc.summary, tc.at)
			continue
		}
		for _, want := range tc.says {
			if !strings.Contains(diags[0].Detail(), want) {
				t.Errorf("%s: %q does not say %q", tc.name, diags[0].Detail(), want)
			}
		}
	}

	w.Qovery.Faults().Add(faults.Rule{Route: "GET /organization/{organizationId}/helmRepository/{helmRepositoryId}/charts", Status: http.StatusBadGateway})
	var diags diag.Diagnostics
	CheckChartPublished(w.ctx, w.q, check(stable, OperatorChart, "9.9.9", false), &diags)
	if len(diags) != 1 || diags.HasError() || diags[0].Summary() != "Chart Version Not Checked" {
		t.Errorf("when the charts cannot be listed: %v, want a warning", diags)
	}
}

func TestChartServedBy(t *testing.T) {
	t.Parallel()
	if got := (ChartCheck{Chart: OperatorChart}).servedBy(); got != "such as Tailscale's "+StableChartsURL {
		t.Errorf("servedBy of the operator chart = %q", got)
	}
}

// What is no MAJOR.MINOR.PATCH version among the published ones is left
// out of the nearest versions.
func TestNearestVersionsSkipsWhatIsNoVersion(t *testing.T) {
	t.Parallel()
	got := NearestVersions("1.2.4", []string{"latest", "1.2", "1.x.0", "1.2.3", "1.3.0", "1.2.3.4"}, 5)
	if !slices.Equal(got, []string{"1.3.0", "1.2.3"}) {
		t.Errorf("NearestVersions = %v, want [1.3.0 1.2.3]", got)
	}
}
