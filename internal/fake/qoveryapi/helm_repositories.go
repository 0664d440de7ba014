package qoveryapi

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

// Helm repository URLs the fake knows the charts of.
const (
	TailscaleStableURL   = "https://pkgs.tailscale.com/helmcharts"
	TailscaleUnstableURL = "https://pkgs.tailscale.com/unstable/helmcharts"
	// TailscaleOperatorChart is the chart name of the Tailscale operator.
	TailscaleOperatorChart = "tailscale-operator"
	// TailnetManifestsChart is the chart each qtail release publishes in
	// its Helm repository, manifest.ManifestsChartRepositoryURL.
	TailnetManifestsChart = "tailnet-manifests"
)

// Published versions of the operator chart per channel, newest first.
var (
	tailscaleStableVersions   = []string{"1.104.2", "1.104.0", "1.102.4", "1.102.3", "1.102.2", "1.102.1", "1.102.0", "1.100.1", "1.100.0"}
	tailscaleUnstableVersions = []string{"1.105.47", "1.105.23", "1.103.50", "1.103.12"}
	// The tailnet-manifests chart in qtail's Helm repository: the version
	// this tree releases.
	tailnetManifestsVersions = []string{manifest.ManifestsChartVersion}
)

var helmRepositoryKinds = []string{"HTTPS", "OCI_ECR", "OCI_SCALEWAY_CR", "OCI_DOCKER_HUB", "OCI_PUBLIC_ECR", "OCI_GENERIC_CR", "OCI_GITHUB_CR", "OCI_GITLAB_CR"}

// Credential fields of a Helm repository config; the secret ones are never
// returned.
var (
	helmRepositoryPublicConfig = []string{"username", "access_key_id", "region", "scaleway_access_key", "scaleway_project_id", "azure_tenant_id", "azure_subscription_id", "role_arn"}
	helmRepositorySecretConfig = []string{"password", "secret_access_key", "scaleway_secret_key"}
)

// catalog returns the charts a repository publishes, by chart name; nil
// when the fake does not know the repository.
func catalog(kind, url string) map[string][]string {
	if kind != "HTTPS" {
		return nil
	}
	switch strings.TrimRight(strings.ToLower(url), "/") {
	case TailscaleStableURL:
		return map[string][]string{TailscaleOperatorChart: tailscaleStableVersions}
	case TailscaleUnstableURL:
		return map[string][]string{TailscaleOperatorChart: tailscaleUnstableVersions}
	case manifest.ManifestsChartRepositoryURL:
		return map[string][]string{TailnetManifestsChart: tailnetManifestsVersions}
	}
	return nil
}

type helmRepositoryRequestJSON struct {
	Name                *string             `json:"name"`
	Kind                *string             `json:"kind"`
	Description         *string             `json:"description"`
	URL                 *string             `json:"url"`
	SkipTLSVerification *bool               `json:"skip_tls_verification"`
	Config              *map[string]*string `json:"config"`
}

type helmRepositoryJSON struct {
	ID                      string            `json:"id"`
	CreatedAt               time.Time         `json:"created_at"`
	UpdatedAt               time.Time         `json:"updated_at"`
	Name                    string            `json:"name"`
	Kind                    string            `json:"kind"`
	Description             string            `json:"description"`
	URL                     string            `json:"url"`
	SkipTLSVerification     bool              `json:"skip_tls_verification"`
	AssociatedServicesCount int               `json:"associated_services_count"`
	Config                  map[string]string `json:"config"`
}

type helmChartJSON struct {
	ChartName string   `json:"chart_name"`
	Versions  []string `json:"versions"`
}

func (st *State) renderHelmRepository(r *HelmRepository) helmRepositoryJSON {
	out := helmRepositoryJSON{ID: r.ID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Name: r.Name, Kind: r.Kind,
		Description: r.Description, URL: r.URL, SkipTLSVerification: r.SkipTLSVerification, Config: map[string]string{}}
	for _, k := range helmRepositoryPublicConfig {
		if v, ok := r.Config[k]; ok {
			out.Config[k] = v
		}
	}
	for _, h := range st.Helms {
		if h.Source.Repository != nil && h.Source.Repository.RepositoryID == r.ID {
			out.AssociatedServicesCount++
		}
	}
	return out
}

// validHelmRepository checks a create or edit request.
func validHelmRepository(req *helmRepositoryRequestJSON) (*HelmRepository, error) {
	name, err := requireString("name", req.Name)
	if err != nil {
		return nil, err
	}
	kind, err := requireString("kind", req.Kind)
	if err != nil {
		return nil, err
	}
	if err := oneOf("kind", kind, helmRepositoryKinds...); err != nil {
		return nil, err
	}
	skip, err := requireBool("skip_tls_verification", req.SkipTLSVerification)
	if err != nil {
		return nil, err
	}
	if req.Config == nil || *req.Config == nil {
		return nil, badRequest("config: required (send {} when the repository needs no credentials)")
	}
	// (fake) The spec leaves url optional; a repository without one
	// cannot be used, so it is required here.
	url, err := requireString("url", req.URL)
	if err != nil {
		return nil, err
	}
	if kind == "HTTPS" && !strings.HasPrefix(url, "https://") {
		return nil, badRequest("url: a repository of kind HTTPS needs an https:// URL, got %q", url)
	}
	if kind != "HTTPS" && !strings.HasPrefix(url, "oci://") {
		return nil, badRequest("url: a repository of kind %s needs an oci:// URL, got %q", kind, url)
	}
	repo := &HelmRepository{Name: name, Kind: kind, URL: url, SkipTLSVerification: skip, Config: map[string]string{}}
	if req.Description != nil {
		repo.Description = *req.Description
	}
	for k, v := range *req.Config {
		known := slices.Contains(helmRepositoryPublicConfig, k) || slices.Contains(helmRepositorySecretConfig, k)
		if known && v != nil && *v != "" {
			repo.Config[k] = *v
		}
	}
	return repo, nil
}

func (s *Server) helmRepository(orgID, id string) (*HelmRepository, error) {
	if _, err := s.org(orgID); err != nil {
		return nil, err
	}
	r := s.st.HelmRepositories[id]
	if r == nil || r.OrganizationID != orgID {
		return nil, s.missing("helm repository", id)
	}
	return r, nil
}

// checkRepositoryName rejects a name another repository of the org has.
// (fake) The API says names are unique per organization without giving the
// status; 409 is used, as for Helm service names.
func (s *Server) checkRepositoryName(orgID, name, except string) error {
	for _, r := range s.st.HelmRepositories {
		if r.OrganizationID == orgID && r.ID != except && strings.EqualFold(r.Name, name) {
			return errorf(http.StatusConflict, "a helm repository named %q already exists in this organization", name)
		}
	}
	return nil
}

func (s *Server) listHelmRepositories(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	org, err := s.org(r.PathValue("organizationId"))
	if err != nil {
		return 0, nil, err
	}
	var out []helmRepositoryJSON
	for _, repo := range sorted(s.st.HelmRepositories, func(r *HelmRepository) uint64 { return r.seq }, func(r *HelmRepository) string { return r.ID }) {
		if repo.OrganizationID == org.ID {
			out = append(out, s.st.renderHelmRepository(repo))
		}
	}
	return http.StatusOK, results(out), nil
}

func (s *Server) createHelmRepository(r *http.Request) (int, any, error) {
	var req helmRepositoryRequestJSON
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	org, err := s.org(r.PathValue("organizationId"))
	if err != nil {
		return 0, nil, err
	}
	repo, err := validHelmRepository(&req)
	if err != nil {
		return 0, nil, err
	}
	if err := s.checkRepositoryName(org.ID, repo.Name, ""); err != nil {
		return 0, nil, err
	}
	repo.ID, repo.OrganizationID, repo.seq = s.newID(), org.ID, s.st.next()
	repo.CreatedAt = now()
	repo.UpdatedAt = repo.CreatedAt
	s.st.HelmRepositories[repo.ID] = repo
	return http.StatusCreated, s.st.renderHelmRepository(repo), nil
}

func (s *Server) getHelmRepository(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	repo, err := s.helmRepository(r.PathValue("organizationId"), r.PathValue("helmRepositoryId"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.st.renderHelmRepository(repo), nil
}

func (s *Server) editHelmRepository(r *http.Request) (int, any, error) {
	var req helmRepositoryRequestJSON
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	repo, err := s.helmRepository(r.PathValue("organizationId"), r.PathValue("helmRepositoryId"))
	if err != nil {
		return 0, nil, err
	}
	next, err := validHelmRepository(&req)
	if err != nil {
		return 0, nil, err
	}
	if err := s.checkRepositoryName(repo.OrganizationID, next.Name, repo.ID); err != nil {
		return 0, nil, err
	}
	s.replaceHelmRepository(repo, next)
	return http.StatusOK, s.st.renderHelmRepository(repo), nil
}

// replaceHelmRepository applies an edit; the services using the repository
// become OUT_OF_DATE when what they deploy changes.
func (s *Server) replaceHelmRepository(repo, next *HelmRepository) {
	changed := repo.URL != next.URL || repo.Kind != next.Kind || repo.SkipTLSVerification != next.SkipTLSVerification
	repo.Name, repo.Kind, repo.Description, repo.URL = next.Name, next.Kind, next.Description, next.URL
	repo.SkipTLSVerification, repo.Config = next.SkipTLSVerification, next.Config
	repo.UpdatedAt = now()
	if !changed {
		return
	}
	for _, h := range s.st.Helms {
		if h.Source.Repository != nil && h.Source.Repository.RepositoryID == repo.ID {
			h.Status.changed()
		}
	}
}

// deleteHelmRepository deletes a repository. The API reference does not
// say what happens to the services using it, so (fake) the deletion is
// allowed and their next deployment fails.
func (s *Server) deleteHelmRepository(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	repo, err := s.helmRepository(r.PathValue("organizationId"), r.PathValue("helmRepositoryId"))
	if err != nil {
		return 0, nil, err
	}
	delete(s.st.HelmRepositories, repo.ID)
	return http.StatusNoContent, nil, nil
}

func (s *Server) listHelmCharts(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	repo, err := s.helmRepository(r.PathValue("organizationId"), r.PathValue("helmRepositoryId"))
	if err != nil {
		return 0, nil, err
	}
	filter := r.URL.Query().Get("chartName")
	var out []helmChartJSON
	for name, versions := range catalog(repo.Kind, repo.URL) {
		if filter == "" || filter == name {
			out = append(out, helmChartJSON{ChartName: name, Versions: append([]string{}, versions...)})
		}
	}
	return http.StatusOK, results(out), nil
}
