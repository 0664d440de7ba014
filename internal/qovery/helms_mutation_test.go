package qovery

import "testing"

func TestHelmDiff(t *testing.T) {
	repo := func(id, name, version string) HelmSource {
		return HelmSource{Repository: &HelmSourceRepository{ChartName: name, ChartVersion: version, Repository: HelmRepositoryRef{ID: id}}}
	}
	git := func(url string) HelmSource {
		return HelmSource{Git: &HelmSourceGit{GitRepository: GitRepository{URL: url}}}
	}
	fromRepo := func(id, name, version string) HelmSourceRequest {
		return HelmSourceRequest{HelmRepository: &HelmRepositorySourceRequest{Repository: id, ChartName: name, ChartVersion: version}}
	}
	fromGit := func(url string) HelmSourceRequest { return HelmSourceRequest{GitRepository: &GitRepository{URL: url}} }
	for _, tc := range []struct {
		name  string
		have  HelmSource
		wide  bool
		req   HelmSourceRequest
		rWide bool
		want  string
	}{
		{"same chart", repo("r", "op", "1.0"), false, fromRepo("r", "op", "1.0"), false, ""},
		{"other repository", repo("r", "op", "1.0"), false, fromRepo("s", "op", "1.0"), false, "chart op 1.0 of repository r"},
		{"other chart", repo("r", "op", "1.0"), false, fromRepo("r", "other", "1.0"), false, "chart op 1.0 of repository r"},
		{"other version", repo("r", "op", "1.0"), false, fromRepo("r", "op", "1.1"), false, "chart op 1.0 of repository r"},
		{"git instead", git("https://g/x"), false, fromRepo("r", "op", "1.0"), false, "a chart from Git"},
		{"same git", git("https://g/x"), true, fromGit("https://g/x"), true, ""},
		{"other git", git("https://g/x"), false, fromGit("https://g/y"), false, "a chart from https://g/x"},
		{"repository instead", repo("r", "op", "1.0"), false, fromGit("https://g/y"), false, "a chart from a Helm repository"},
		{"cluster-wide", repo("r", "op", "1.0"), true, fromRepo("r", "op", "1.0"), false, "allow_cluster_wide_resources true"},
		{"not cluster-wide", git("https://g/x"), false, fromGit("https://g/x"), true, "allow_cluster_wide_resources false"},
	} {
		h := &Helm{Source: tc.have, AllowClusterWideResources: tc.wide}
		req := &HelmRequest{Source: tc.req, AllowClusterWideResources: tc.rWide}
		if got := helmDiff(h, req); got != tc.want {
			t.Errorf("%s: helmDiff = %q, want %q", tc.name, got, tc.want)
		}
	}
}
