package qoveryapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
)

const (
	defaultHelmTimeout = 600
	helmIconURI        = "app://qovery-console/helm"
)

// Request shapes. Pointers tell a missing member from a zero value.

type helmRequestJSON struct {
	Name                      *string                    `json:"name"`
	Description               *string                    `json:"description"`
	TimeoutSec                *int                       `json:"timeout_sec"`
	AutoPreview               *bool                      `json:"auto_preview"`
	AutoDeploy                *bool                      `json:"auto_deploy"`
	Source                    map[string]json.RawMessage `json:"source"`
	Arguments                 *[]string                  `json:"arguments"`
	AllowClusterWideResources *bool                      `json:"allow_cluster_wide_resources"`
	ValuesOverride            *valuesOverrideRequestJSON `json:"values_override"`
	Ports                     *[]helmPortRequestJSON     `json:"ports"`
	IconURI                   *string                    `json:"icon_uri"`
	BlueprintID               *string                    `json:"blueprint_id"`
}

type helmRepositorySourceRequestJSON struct {
	Repository   *string `json:"repository"`
	ChartName    *string `json:"chart_name"`
	ChartVersion *string `json:"chart_version"`
}

type gitRepositoryRequestJSON struct {
	URL        *string `json:"url"`
	Branch     *string `json:"branch"`
	RootPath   *string `json:"root_path"`
	GitTokenID *string `json:"git_token_id"`
	Provider   *string `json:"provider"`
}

type valuesOverrideRequestJSON struct {
	Set       [][]string                   `json:"set"`
	SetString [][]string                   `json:"set_string"`
	SetJSON   [][]string                   `json:"set_json"`
	File      *valuesFileSourceRequestJSON `json:"file"`
}

type valuesFileSourceRequestJSON struct {
	Raw *struct {
		Values *[]struct {
			Name    *string `json:"name"`
			Content *string `json:"content"`
		} `json:"values"`
	} `json:"raw"`
	Git *struct {
		GitRepository *gitRepositoryRequestJSON `json:"git_repository"`
		Paths         *[]string                 `json:"paths"`
	} `json:"git"`
}

type selectorJSON struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type helmPortRequestJSON struct {
	Name             *string         `json:"name"`
	InternalPort     *int            `json:"internal_port"`
	ExternalPort     *int            `json:"external_port"`
	Namespace        *string         `json:"namespace"`
	Protocol         *string         `json:"protocol"`
	IsDefault        *bool           `json:"is_default"`
	ServiceName      *string         `json:"service_name"`
	ServiceSelectors *[]selectorJSON `json:"service_selectors"`
}

// Response shapes.

type helmJSON struct {
	ID                        string             `json:"id"`
	CreatedAt                 time.Time          `json:"created_at"`
	UpdatedAt                 time.Time          `json:"updated_at"`
	Environment               refJSON            `json:"environment"`
	Name                      string             `json:"name"`
	Description               string             `json:"description"`
	TimeoutSec                int                `json:"timeout_sec"`
	AutoPreview               bool               `json:"auto_preview"`
	AutoDeploy                bool               `json:"auto_deploy"`
	Source                    helmSourceJSON     `json:"source"`
	Arguments                 []string           `json:"arguments"`
	AllowClusterWideResources bool               `json:"allow_cluster_wide_resources"`
	ValuesOverride            valuesOverrideJSON `json:"values_override"`
	Ports                     []helmPortJSON     `json:"ports"`
	IconURI                   string             `json:"icon_uri"`
	ServiceType               string             `json:"service_type"`
	BlueprintID               *string            `json:"blueprint_id"`
}

type helmSourceJSON struct {
	Repository *helmSourceRepositoryJSON `json:"repository,omitempty"`
	Git        *helmSourceGitJSON        `json:"git,omitempty"`
}

type helmSourceRepositoryJSON struct {
	ChartName    string `json:"chart_name"`
	ChartVersion string `json:"chart_version"`
	Repository   struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		URL  string `json:"url"`
	} `json:"repository"`
}

type helmSourceGitJSON struct {
	GitRepository gitRepositoryJSON `json:"git_repository"`
}

type gitRepositoryJSON struct {
	Provider                  string     `json:"provider"`
	Owner                     string     `json:"owner"`
	URL                       string     `json:"url"`
	Name                      string     `json:"name"`
	Branch                    string     `json:"branch"`
	RootPath                  string     `json:"root_path"`
	HasAccess                 bool       `json:"has_access"`
	DeployedCommitID          *string    `json:"deployed_commit_id"`
	DeployedCommitDate        *time.Time `json:"deployed_commit_date"`
	DeployedCommitContributor *string    `json:"deployed_commit_contributor"`
	DeployedCommitTag         *string    `json:"deployed_commit_tag"`
	GitTokenID                *string    `json:"git_token_id"`
	GitTokenName              *string    `json:"git_token_name"`
}

type valuesOverrideJSON struct {
	Set       [][2]string           `json:"set"`
	SetString [][2]string           `json:"set_string"`
	SetJSON   [][2]string           `json:"set_json"`
	File      *valuesFileSourceJSON `json:"file"`
}

type valuesFileSourceJSON struct {
	Raw *rawValuesJSON `json:"raw"`
	Git *gitValuesJSON `json:"git"`
}

type rawValuesJSON struct {
	Values []valuesFileJSON `json:"values"`
}

type valuesFileJSON struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

type gitValuesJSON struct {
	GitRepository gitRepositoryJSON `json:"git_repository"`
	Paths         []string          `json:"paths"`
}

type helmPortJSON struct {
	ID               string         `json:"id"`
	PortType         string         `json:"port_type"`
	Name             string         `json:"name,omitempty"`
	InternalPort     int            `json:"internal_port"`
	ExternalPort     *int           `json:"external_port,omitempty"`
	Namespace        string         `json:"namespace,omitempty"`
	Protocol         string         `json:"protocol"`
	IsDefault        bool           `json:"is_default"`
	ServiceName      string         `json:"service_name,omitempty"`
	ServiceSelectors []selectorJSON `json:"service_selectors,omitempty"`
}

// renderGitRepository fills the read-only fields the way the API does:
// provider, owner and name come from the URL.
func renderGitRepository(g GitSource, deployedCommit string) gitRepositoryJSON {
	out := gitRepositoryJSON{Provider: g.Provider, URL: g.URL, Branch: g.Branch, RootPath: g.RootPath, HasAccess: true,
		GitTokenID: cloneStrPtr(g.GitTokenID)}
	if out.RootPath == "" {
		out.RootPath = "/"
	}
	if out.Branch == "" {
		out.Branch = "main"
	}
	if u, err := url.Parse(g.URL); err == nil {
		if out.Provider == "" {
			out.Provider = gitProvider(u.Host)
		}
		parts := strings.Split(strings.Trim(u.Path, "/"), "/")
		if len(parts) >= 2 {
			out.Owner = parts[0]
			out.Name = strings.TrimSuffix(parts[len(parts)-1], ".git")
		}
	}
	if deployedCommit != "" {
		out.DeployedCommitID = &deployedCommit
	}
	return out
}

func gitProvider(host string) string {
	switch {
	case strings.Contains(host, "gitlab"):
		return "GITLAB"
	case strings.Contains(host, "bitbucket"):
		return "BITBUCKET"
	}
	return "GITHUB"
}

func pairs(v [][2]string) [][2]string {
	if v == nil {
		return [][2]string{}
	}
	return append([][2]string{}, v...)
}

func (st *State) renderHelm(h *Helm) helmJSON {
	out := helmJSON{ID: h.ID, CreatedAt: h.CreatedAt, UpdatedAt: h.UpdatedAt, Environment: refJSON{h.EnvironmentID},
		Name: h.Name, Description: h.Description, TimeoutSec: h.TimeoutSec, AutoPreview: h.AutoPreview,
		AutoDeploy: h.AutoDeploy, Arguments: append([]string{}, h.Arguments...),
		AllowClusterWideResources: h.AllowClusterWideResources, IconURI: h.IconURI, ServiceType: kindHelm,
		BlueprintID: cloneStrPtr(h.BlueprintID), Ports: []helmPortJSON{}}
	switch {
	case h.Source.Repository != nil:
		src := &helmSourceRepositoryJSON{ChartName: h.Source.Repository.ChartName, ChartVersion: h.Source.Repository.ChartVersion}
		src.Repository.ID = h.Source.Repository.RepositoryID
		if repo := st.HelmRepositories[h.Source.Repository.RepositoryID]; repo != nil {
			src.Repository.Name, src.Repository.URL = repo.Name, repo.URL
		}
		out.Source.Repository = src
	case h.Source.Git != nil:
		out.Source.Git = &helmSourceGitJSON{GitRepository: renderGitRepository(*h.Source.Git, "")}
	}
	v := h.ValuesOverride
	out.ValuesOverride = valuesOverrideJSON{Set: pairs(v.Set), SetString: pairs(v.SetString), SetJSON: pairs(v.SetJSON)}
	if v.File != nil {
		f := &valuesFileSourceJSON{}
		if v.File.Raw != nil {
			f.Raw = &rawValuesJSON{Values: []valuesFileJSON{}}
			for _, file := range v.File.Raw.Values {
				f.Raw.Values = append(f.Raw.Values, valuesFileJSON(file))
			}
		}
		if v.File.Git != nil {
			f.Git = &gitValuesJSON{GitRepository: renderGitRepository(v.File.Git.Repository, ""), Paths: append([]string{}, v.File.Git.Paths...)}
		}
		out.ValuesOverride.File = f
	}
	for _, p := range h.Ports {
		jp := helmPortJSON{ID: p.ID, PortType: "SERVICE_NAME", Name: p.Name, InternalPort: p.InternalPort,
			ExternalPort: cloneIntPtr(p.ExternalPort), Namespace: p.Namespace, Protocol: p.Protocol, IsDefault: p.IsDefault,
			ServiceName: p.ServiceName}
		if len(p.ServiceSelectors) > 0 {
			jp.PortType = "SERVICE_SELECTORS"
			for _, sel := range p.ServiceSelectors {
				jp.ServiceSelectors = append(jp.ServiceSelectors, selectorJSON(sel))
			}
		}
		out.Ports = append(out.Ports, jp)
	}
	return out
}

// validHelm checks a create or edit request and returns the configuration
// it describes. orgID is the organization of the service's environment.
func (st *State) validHelm(req *helmRequestJSON, orgID string) (*Helm, error) {
	h := &Helm{TimeoutSec: defaultHelmTimeout, IconURI: helmIconURI}
	var err error
	if h.Name, err = requireString("name", req.Name); err != nil {
		return nil, err
	}
	if h.AutoDeploy, err = requireBool("auto_deploy", req.AutoDeploy); err != nil {
		return nil, err
	}
	if req.Source == nil {
		return nil, badRequest("source: required")
	}
	if h.Source, err = st.validHelmSource(req.Source, orgID); err != nil {
		return nil, err
	}
	if req.Arguments == nil {
		return nil, badRequest("arguments: required (send [] for none)")
	}
	h.Arguments = append([]string{}, *req.Arguments...)
	if req.ValuesOverride == nil {
		return nil, badRequest("values_override: required (send {} for none)")
	}
	if h.ValuesOverride, err = validValuesOverride(req.ValuesOverride); err != nil {
		return nil, err
	}
	if req.Description != nil {
		h.Description = *req.Description
	}
	if req.TimeoutSec != nil {
		if *req.TimeoutSec < 0 {
			return nil, badRequest("timeout_sec: must be 0 or more, got %d", *req.TimeoutSec)
		}
		h.TimeoutSec = *req.TimeoutSec
	}
	if req.AutoPreview != nil {
		h.AutoPreview = *req.AutoPreview
	}
	if req.AllowClusterWideResources != nil {
		h.AllowClusterWideResources = *req.AllowClusterWideResources
	}
	if req.IconURI != nil && *req.IconURI != "" {
		h.IconURI = *req.IconURI
	}
	h.BlueprintID = cloneStrPtr(req.BlueprintID)
	if req.Ports != nil {
		for i, p := range *req.Ports {
			port, err := validHelmPort(i, &p)
			if err != nil {
				return nil, err
			}
			h.Ports = append(h.Ports, port)
		}
	}
	return h, nil
}

// validHelmSource reads the request shape of source: exactly one of
// helm_repository or git_repository. The response shape (repository, git)
// is refused.
func (st *State) validHelmSource(src map[string]json.RawMessage, orgID string) (HelmSource, error) {
	var out HelmSource
	set := 0
	for k, v := range src {
		if string(v) == "null" {
			continue
		}
		switch k {
		case "helm_repository":
			set++
			var r helmRepositorySourceRequestJSON
			if err := json.Unmarshal(v, &r); err != nil {
				return out, badRequest("source.helm_repository: %s", jsonMessage(err))
			}
			// (fake) The spec marks these optional; a chart cannot be
			// deployed without them, so they are required here.
			id, err := requireString("source.helm_repository.repository", r.Repository)
			if err != nil {
				return out, err
			}
			repo := st.HelmRepositories[id]
			if repo == nil || repo.OrganizationID != orgID {
				return out, badRequest("source.helm_repository.repository: helm repository %s not found in the organization", id)
			}
			name, err := requireString("source.helm_repository.chart_name", r.ChartName)
			if err != nil {
				return out, err
			}
			version, err := requireString("source.helm_repository.chart_version", r.ChartVersion)
			if err != nil {
				return out, err
			}
			out.Repository = &HelmRepositorySource{RepositoryID: id, ChartName: name, ChartVersion: version}
		case "git_repository":
			set++
			var g gitRepositoryRequestJSON
			if err := json.Unmarshal(v, &g); err != nil {
				return out, badRequest("source.git_repository: %s", jsonMessage(err))
			}
			gs, err := validGitSource("source.git_repository", &g, false)
			if err != nil {
				return out, err
			}
			out.Git = &gs
		default:
			return out, badRequest("source: unknown member %q, want one of helm_repository or git_repository", k)
		}
	}
	if set != 1 {
		return out, badRequest("source: exactly one of helm_repository or git_repository is required")
	}
	return out, nil
}

func validGitSource(field string, g *gitRepositoryRequestJSON, needProvider bool) (GitSource, error) {
	var out GitSource
	u, err := requireString(field+".url", g.URL)
	if err != nil {
		return out, err
	}
	if pu, err := url.Parse(u); err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
		return out, badRequest("%s.url: not a valid repository URL: %q", field, u)
	}
	out.URL = u
	if g.Branch != nil {
		out.Branch = *g.Branch
	}
	out.RootPath = "/"
	if g.RootPath != nil && *g.RootPath != "" {
		out.RootPath = *g.RootPath
	}
	out.GitTokenID = cloneStrPtr(g.GitTokenID)
	if needProvider {
		p, err := requireString(field+".provider", g.Provider)
		if err != nil {
			return out, err
		}
		if err := oneOf(field+".provider", p, "BITBUCKET", "GITHUB", "GITLAB"); err != nil {
			return out, err
		}
		out.Provider = p
	}
	return out, nil
}

func validPairs(field string, in [][]string) ([][2]string, error) {
	var out [][2]string
	for i, kv := range in {
		if len(kv) != 2 {
			return nil, badRequest("%s[%d]: want a [key, value] pair, got %d strings", field, i, len(kv))
		}
		if kv[0] == "" {
			return nil, badRequest("%s[%d]: the key must not be empty", field, i)
		}
		out = append(out, [2]string{kv[0], kv[1]})
	}
	return out, nil
}

func validValuesOverride(v *valuesOverrideRequestJSON) (ValuesOverride, error) {
	var out ValuesOverride
	var err error
	if out.Set, err = validPairs("values_override.set", v.Set); err != nil {
		return out, err
	}
	if out.SetString, err = validPairs("values_override.set_string", v.SetString); err != nil {
		return out, err
	}
	if out.SetJSON, err = validPairs("values_override.set_json", v.SetJSON); err != nil {
		return out, err
	}
	if v.File == nil {
		return out, nil
	}
	out.File = &ValuesFileSource{}
	if raw := v.File.Raw; raw != nil {
		if raw.Values == nil {
			return out, badRequest("values_override.file.raw.values: required")
		}
		out.File.Raw = &RawValues{Values: []ValuesFile{}}
		for i, f := range *raw.Values {
			field := fmt.Sprintf("values_override.file.raw.values[%d]", i)
			name, err := requireString(field+".name", f.Name)
			if err != nil {
				return out, err
			}
			if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
				return out, badRequest("%s.name: must be a plain file name, got %q", field, name)
			}
			if f.Content == nil {
				return out, badRequest("%s.content: required", field)
			}
			out.File.Raw.Values = append(out.File.Raw.Values, ValuesFile{Name: name, Content: *f.Content})
		}
	}
	if git := v.File.Git; git != nil {
		if git.GitRepository == nil {
			return out, badRequest("values_override.file.git.git_repository: required")
		}
		repo, err := validGitSource("values_override.file.git.git_repository", git.GitRepository, true)
		if err != nil {
			return out, err
		}
		if git.Paths == nil {
			return out, badRequest("values_override.file.git.paths: required")
		}
		for i, p := range *git.Paths {
			if !strings.HasPrefix(p, "/") {
				return out, badRequest("values_override.file.git.paths[%d]: must start with /, got %q", i, p)
			}
		}
		out.File.Git = &GitValues{Repository: repo, Paths: append([]string{}, *git.Paths...)}
	}
	return out, nil
}

func validHelmPort(i int, p *helmPortRequestJSON) (HelmPort, error) {
	field := "ports[" + strconv.Itoa(i) + "]"
	var out HelmPort
	if p.InternalPort == nil {
		return out, badRequest("%s.internal_port: required", field)
	}
	if *p.InternalPort < 1 || *p.InternalPort > 65535 {
		return out, badRequest("%s.internal_port: must be between 1 and 65535, got %d", field, *p.InternalPort)
	}
	out.InternalPort = *p.InternalPort
	out.ExternalPort = cloneIntPtr(p.ExternalPort)
	out.Protocol = "HTTP"
	if p.Protocol != nil {
		if err := oneOf(field+".protocol", *p.Protocol, "HTTP", "GRPC"); err != nil {
			return out, err
		}
		out.Protocol = *p.Protocol
	}
	if p.Name != nil {
		out.Name = *p.Name
	}
	if p.Namespace != nil {
		out.Namespace = *p.Namespace
	}
	if p.IsDefault != nil {
		out.IsDefault = *p.IsDefault
	}
	hasName := p.ServiceName != nil && *p.ServiceName != ""
	hasSelectors := p.ServiceSelectors != nil && len(*p.ServiceSelectors) > 0
	if hasName == hasSelectors {
		return out, badRequest("%s: exactly one of service_name or service_selectors is required", field)
	}
	if hasName {
		out.ServiceName = *p.ServiceName
	} else {
		for _, sel := range *p.ServiceSelectors {
			out.ServiceSelectors = append(out.ServiceSelectors, Selector(sel))
		}
	}
	return out, nil
}

// nameTaken reports whether another service of the environment has name
// (case-insensitive).
func (st *State) nameTaken(envID, name, except string) bool {
	for _, h := range st.Helms {
		if h.EnvironmentID == envID && h.ID != except && strings.EqualFold(h.Name, name) {
			return true
		}
	}
	for _, w := range st.workloads() {
		if w.envID == envID && w.id != except && strings.EqualFold(w.name, name) {
			return true
		}
	}
	return false
}

func (s *Server) helm(id string) (*Helm, error) {
	h := s.st.Helms[id]
	if h == nil {
		return nil, s.missing("helm", id)
	}
	return h, nil
}

func toUpdateFilter(r *http.Request) (bool, error) {
	v := r.URL.Query().Get("toUpdate")
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badRequest("toUpdate: want true or false, got %q", v)
	}
	return b, nil
}

func (s *Server) listHelms(r *http.Request) (int, any, error) {
	toUpdate, err := toUpdateFilter(r)
	if err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	envID := r.PathValue("environmentId")
	if s.st.Environments[envID] == nil {
		return 0, nil, notFound("environment", envID)
	}
	var out []helmJSON
	for _, h := range sorted(s.st.Helms, func(h *Helm) uint64 { return h.seq }, func(h *Helm) string { return h.ID }) {
		if h.EnvironmentID == envID && (!toUpdate || h.Status.DeploymentStatus == outOfDate) {
			out = append(out, s.st.renderHelm(h))
		}
	}
	return http.StatusOK, results(out), nil
}

func (s *Server) createHelm(r *http.Request) (int, any, error) {
	var req helmRequestJSON
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	envID := r.PathValue("environmentId")
	if s.st.Environments[envID] == nil {
		return 0, nil, notFound("environment", envID)
	}
	h, err := s.st.validHelm(&req, s.st.environmentOrg(envID))
	if err != nil {
		return 0, nil, err
	}
	if s.st.nameTaken(envID, h.Name, "") {
		return 0, nil, errorf(http.StatusConflict, "a service named %q already exists in this environment", h.Name)
	}
	h.ID, h.EnvironmentID, h.seq = s.newID(), envID, s.st.next()
	h.CreatedAt = now()
	h.UpdatedAt = h.CreatedAt
	for i := range h.Ports {
		h.Ports[i].ID = s.newID()
	}
	h.Status = newServiceStatus()
	s.st.Helms[h.ID] = h
	return http.StatusCreated, s.st.renderHelm(h), nil
}

func (s *Server) getHelm(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := s.helm(r.PathValue("helmId"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.st.renderHelm(h), nil
}

func (s *Server) editHelm(r *http.Request) (int, any, error) {
	var req helmRequestJSON
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := s.helm(r.PathValue("helmId"))
	if err != nil {
		return 0, nil, err
	}
	if h.Status.deleting() {
		return 0, nil, errorf(http.StatusConflict, "Operation is in progress: the service is being deleted")
	}
	next, err := s.st.validHelm(&req, s.st.environmentOrg(h.EnvironmentID))
	if err != nil {
		return 0, nil, err
	}
	if s.st.nameTaken(h.EnvironmentID, next.Name, h.ID) {
		return 0, nil, errorf(http.StatusConflict, "a service named %q already exists in this environment", next.Name)
	}
	s.replaceHelm(h, next)
	return http.StatusOK, s.st.renderHelm(h), nil
}

// replaceHelm applies a new configuration, keeping the ids of unchanged
// ports, and marks the service OUT_OF_DATE when something changed.
func (s *Server) replaceHelm(h, next *Helm) {
	for i := range next.Ports {
		for _, old := range h.Ports {
			if old.Name == next.Ports[i].Name && old.InternalPort == next.Ports[i].InternalPort && old.ServiceName == next.Ports[i].ServiceName {
				next.Ports[i].ID = old.ID
			}
		}
		if next.Ports[i].ID == "" {
			next.Ports[i].ID = s.newID()
		}
	}
	before := s.st.renderHelm(h)
	h.Name, h.Description, h.TimeoutSec, h.AutoPreview, h.AutoDeploy = next.Name, next.Description, next.TimeoutSec, next.AutoPreview, next.AutoDeploy
	h.Source, h.Arguments, h.AllowClusterWideResources = next.Source, next.Arguments, next.AllowClusterWideResources
	h.ValuesOverride, h.Ports, h.IconURI, h.BlueprintID = next.ValuesOverride, next.Ports, next.IconURI, next.BlueprintID
	if !reflect.DeepEqual(before, s.st.renderHelm(h)) {
		h.UpdatedAt = now()
		h.Status.changed()
	}
}

type helmDeployRequestJSON struct {
	ChartVersion              *string `json:"chart_version"`
	GitCommitID               *string `json:"git_commit_id"`
	ValuesOverrideGitCommitID *string `json:"values_override_git_commit_id"`
}

func forceEvent(r *http.Request) error {
	if v := r.URL.Query().Get("forceEvent"); v != "" && v != "DIFF" {
		return badRequest("forceEvent: invalid value %q, must be DIFF", v)
	}
	return nil
}

func (s *Server) deployHelm(r *http.Request) (int, any, error) {
	if err := forceEvent(r); err != nil {
		return 0, nil, err
	}
	var req helmDeployRequestJSON
	if err := decodeOptionalBody(r, &req); err != nil {
		return 0, nil, err
	}
	if req.ChartVersion != nil && *req.ChartVersion != "" && req.GitCommitID != nil && *req.GitCommitID != "" {
		return 0, nil, badRequest("chart_version and git_commit_id are mutually exclusive")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := s.helm(r.PathValue("helmId"))
	if err != nil {
		return 0, nil, err
	}
	version, commit := "", ""
	if req.ChartVersion != nil {
		version = *req.ChartVersion
	}
	if req.GitCommitID != nil {
		commit = *req.GitCommitID
	}
	// The API reference asks for the chart version or the Git commit to
	// deploy, depending on where the chart comes from. (fake) A chart from
	// Git deploys the head of its branch when no commit is given, as the
	// official clients deploy without a body.
	switch {
	case h.Source.Repository != nil && commit != "":
		return 0, nil, badRequest("git_commit_id: the service's chart comes from a helm repository: give chart_version")
	case h.Source.Repository != nil && version == "":
		return 0, nil, badRequest("chart_version: required: give the version of chart %s to deploy", h.Source.Repository.ChartName)
	case h.Source.Git != nil && version != "":
		return 0, nil, badRequest("chart_version: the service's chart does not come from a helm repository: give git_commit_id")
	}
	if h.Status.running() && s.opts.ConflictWhileBusy {
		return 0, nil, errorf(http.StatusConflict, "Operation is in progress: the service is %s", h.Status.State)
	}
	// (fake) Deploying another chart version makes it the service's
	// version, as the console shows afterwards.
	if version != "" && h.Source.Repository.ChartVersion != version {
		h.Source.Repository.ChartVersion = version
		h.UpdatedAt = now()
		h.Status.changed()
	}
	out, err := s.requestDeployment(h.ID, &h.Status, "")
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, out, nil
}

func (s *Server) redeployHelm(r *http.Request) (int, any, error) {
	if err := forceEvent(r); err != nil {
		return 0, nil, err
	}
	return s.redeployService(r)
}
