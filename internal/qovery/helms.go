package qovery

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ServiceTypeHelm is the service_type of a Helm service.
const ServiceTypeHelm = "HELM"

// GitRepository is a Git repository. Responses fill every field; requests
// send only URL, Branch, RootPath and GitTokenID (and Provider for a values
// file), the other fields being read-only and omitted when empty.
type GitRepository struct {
	// Provider is BITBUCKET, GITHUB or GITLAB.
	Provider                  string     `json:"provider,omitempty"`
	Owner                     string     `json:"owner,omitempty"`
	URL                       string     `json:"url"`
	Name                      string     `json:"name,omitempty"`
	Branch                    string     `json:"branch,omitempty"`
	RootPath                  string     `json:"root_path,omitempty"`
	HasAccess                 *bool      `json:"has_access,omitempty"`
	DeployedCommitID          *string    `json:"deployed_commit_id,omitempty"`
	DeployedCommitDate        *time.Time `json:"deployed_commit_date,omitempty"`
	DeployedCommitContributor *string    `json:"deployed_commit_contributor,omitempty"`
	DeployedCommitTag         *string    `json:"deployed_commit_tag,omitempty"`
	GitTokenID                *string    `json:"git_token_id,omitempty"`
	GitTokenName              *string    `json:"git_token_name,omitempty"`
}

// requestFields returns the fields a request may carry; withProvider keeps
// the provider, which values files need and Helm sources do not take.
func (g *GitRepository) requestFields(withProvider bool) GitRepository {
	out := GitRepository{URL: g.URL, Branch: g.Branch, RootPath: g.RootPath, GitTokenID: cloneString(g.GitTokenID)}
	if withProvider {
		out.Provider = g.Provider
	}
	return out
}

// HelmRequest creates a Helm service or replaces one (an edit sends every
// field again; Helm.ToRequest builds it from a GET).
type HelmRequest struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// TimeoutSec defaults to 600 on the server.
	TimeoutSec *int `json:"timeout_sec,omitempty"`
	// AutoPreview nil inherits the environment's setting.
	AutoPreview *bool             `json:"auto_preview,omitempty"`
	AutoDeploy  bool              `json:"auto_deploy"`
	Source      HelmSourceRequest `json:"source"`
	// Arguments are extra helm command line arguments. Always sent (nil as
	// []).
	Arguments                 []string           `json:"arguments"`
	AllowClusterWideResources bool               `json:"allow_cluster_wide_resources"`
	ValuesOverride            HelmValuesOverride `json:"values_override"`
	// Ports is always sent (nil as []).
	Ports       []HelmPortRequest `json:"ports"`
	IconURI     string            `json:"icon_uri,omitempty"`
	BlueprintID *string           `json:"blueprint_id,omitempty"`
}

// HelmSourceRequest is the request shape of a Helm service's source: set
// exactly one field. Responses use another shape, HelmSource.
type HelmSourceRequest struct {
	HelmRepository *HelmRepositorySourceRequest `json:"helm_repository,omitempty"`
	// GitRepository takes URL, Branch, RootPath and GitTokenID.
	GitRepository *GitRepository `json:"git_repository,omitempty"`
}

// HelmRepositorySourceRequest names a chart of an organization Helm
// repository.
type HelmRepositorySourceRequest struct {
	// Repository is the Helm repository id.
	Repository   string `json:"repository"`
	ChartName    string `json:"chart_name"`
	ChartVersion string `json:"chart_version"`
}

// HelmValuesOverride overrides chart values. The same shape is used in
// requests and responses.
type HelmValuesOverride struct {
	// Set, SetString and SetJSON are helm's --set, --set-string and
	// --set-json, as [key, value] pairs (SetJSON values are JSON text).
	Set       [][2]string `json:"set,omitempty"`
	SetString [][2]string `json:"set_string,omitempty"`
	SetJSON   [][2]string `json:"set_json,omitempty"`
	// File holds values files; nil for none.
	File *HelmValuesFile `json:"file,omitempty"`
}

// HelmValuesFile holds values files given inline (Raw) or read from Git.
type HelmValuesFile struct {
	Raw *HelmRawValues `json:"raw,omitempty"`
	Git *HelmGitValues `json:"git,omitempty"`
}

// HelmRawValues lists inline values files. At deploy time every
// "qovery.env.NAME" in their content is replaced by the value of the
// variable NAME visible to the service.
type HelmRawValues struct {
	Values []HelmRawValuesFile `json:"values"`
}

// HelmRawValuesFile is one inline values file; Name is a plain file name
// such as "override.yaml".
type HelmRawValuesFile struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// HelmGitValues reads values files from a Git repository. In a request the
// repository needs URL and Provider; Paths start with "/".
type HelmGitValues struct {
	GitRepository GitRepository `json:"git_repository"`
	Paths         []string      `json:"paths"`
}

// ServiceSelector is a Kubernetes label selector entry of a Helm port.
type ServiceSelector struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// HelmPortRequest exposes a port of a Kubernetes Service the chart renders,
// named by ServiceName or found by ServiceSelectors (set one).
type HelmPortRequest struct {
	Name         string `json:"name,omitempty"`
	InternalPort int    `json:"internal_port"`
	ExternalPort *int   `json:"external_port,omitempty"`
	Namespace    string `json:"namespace,omitempty"`
	// Protocol is HTTP (the default) or GRPC.
	Protocol         string            `json:"protocol,omitempty"`
	IsDefault        bool              `json:"is_default,omitempty"`
	ServiceName      string            `json:"service_name,omitempty"`
	ServiceSelectors []ServiceSelector `json:"service_selectors,omitempty"`
}

// HelmPort is a port of a Helm service as the API returns it. PortType is
// SERVICE_NAME or SERVICE_SELECTORS.
type HelmPort struct {
	ID               string            `json:"id"`
	PortType         string            `json:"port_type"`
	Name             string            `json:"name,omitempty"`
	InternalPort     int               `json:"internal_port"`
	ExternalPort     *int              `json:"external_port,omitempty"`
	Namespace        string            `json:"namespace,omitempty"`
	Protocol         string            `json:"protocol"`
	IsDefault        bool              `json:"is_default"`
	ServiceName      string            `json:"service_name,omitempty"`
	ServiceSelectors []ServiceSelector `json:"service_selectors,omitempty"`
}

// Helm is a Helm service as the API returns it.
type Helm struct {
	ID                        string             `json:"id"`
	CreatedAt                 time.Time          `json:"created_at"`
	UpdatedAt                 *time.Time         `json:"updated_at,omitempty"`
	Environment               Ref                `json:"environment"`
	Name                      string             `json:"name"`
	Description               string             `json:"description,omitempty"`
	TimeoutSec                int                `json:"timeout_sec"`
	AutoPreview               bool               `json:"auto_preview"`
	AutoDeploy                bool               `json:"auto_deploy"`
	Source                    HelmSource         `json:"source"`
	Arguments                 []string           `json:"arguments"`
	AllowClusterWideResources bool               `json:"allow_cluster_wide_resources"`
	ValuesOverride            HelmValuesOverride `json:"values_override"`
	Ports                     []HelmPort         `json:"ports"`
	IconURI                   string             `json:"icon_uri"`
	ServiceType               string             `json:"service_type"`
	BlueprintID               *string            `json:"blueprint_id,omitempty"`
}

// HelmSource is the response shape of a Helm service's source: one of
// Repository or Git is set.
type HelmSource struct {
	Repository *HelmSourceRepository `json:"repository,omitempty"`
	Git        *HelmSourceGit        `json:"git,omitempty"`
}

// HelmSourceRepository is a chart from an organization Helm repository.
type HelmSourceRepository struct {
	ChartName    string            `json:"chart_name"`
	ChartVersion string            `json:"chart_version"`
	Repository   HelmRepositoryRef `json:"repository"`
}

// HelmRepositoryRef names the Helm repository of a HelmSourceRepository.
type HelmRepositoryRef struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
}

// HelmSourceGit is a chart from a Git repository.
type HelmSourceGit struct {
	GitRepository GitRepository `json:"git_repository"`
}

// ToRequest translates a Helm service read from the API into the request
// that would leave it unchanged, ready to be modified and sent to EditHelm:
// source.repository{chart_name, chart_version, repository{id}} becomes
// source.helm_repository{repository, chart_name, chart_version},
// source.git.git_repository becomes source.git_repository{url, branch,
// root_path, git_token_id}, and read-only fields are dropped.
func (h *Helm) ToRequest() HelmRequest {
	timeout := h.TimeoutSec
	autoPreview := h.AutoPreview
	req := HelmRequest{
		Name:                      h.Name,
		Description:               h.Description,
		TimeoutSec:                &timeout,
		AutoPreview:               &autoPreview,
		AutoDeploy:                h.AutoDeploy,
		Arguments:                 append([]string{}, h.Arguments...),
		AllowClusterWideResources: h.AllowClusterWideResources,
		ValuesOverride:            h.ValuesOverride.clone(),
		Ports:                     make([]HelmPortRequest, 0, len(h.Ports)),
		IconURI:                   h.IconURI,
		BlueprintID:               cloneString(h.BlueprintID),
	}
	if r := h.Source.Repository; r != nil {
		req.Source.HelmRepository = &HelmRepositorySourceRequest{
			Repository:   r.Repository.ID,
			ChartName:    r.ChartName,
			ChartVersion: r.ChartVersion,
		}
	} else if h.Source.Git != nil {
		g := h.Source.Git.GitRepository.requestFields(false)
		req.Source.GitRepository = &g
	}
	if f := req.ValuesOverride.File; f != nil && f.Git != nil {
		f.Git.GitRepository = f.Git.GitRepository.requestFields(true)
	}
	for _, p := range h.Ports {
		req.Ports = append(req.Ports, HelmPortRequest{
			Name:             p.Name,
			InternalPort:     p.InternalPort,
			ExternalPort:     cloneInt(p.ExternalPort),
			Namespace:        p.Namespace,
			Protocol:         p.Protocol,
			IsDefault:        p.IsDefault,
			ServiceName:      p.ServiceName,
			ServiceSelectors: append([]ServiceSelector(nil), p.ServiceSelectors...),
		})
	}
	return req
}

// clone returns a deep copy.
func (v HelmValuesOverride) clone() HelmValuesOverride {
	out := HelmValuesOverride{
		Set:       append([][2]string(nil), v.Set...),
		SetString: append([][2]string(nil), v.SetString...),
		SetJSON:   append([][2]string(nil), v.SetJSON...),
	}
	if v.File != nil {
		f := &HelmValuesFile{}
		if v.File.Raw != nil {
			f.Raw = &HelmRawValues{Values: append([]HelmRawValuesFile{}, v.File.Raw.Values...)}
		}
		if v.File.Git != nil {
			g := *v.File.Git
			g.Paths = append([]string{}, g.Paths...)
			f.Git = &g
		}
		out.File = f
	}
	return out
}

func cloneString(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// normalized returns a copy whose always-sent lists are never null.
func (r *HelmRequest) normalized() *HelmRequest {
	out := *r
	if out.Arguments == nil {
		out.Arguments = []string{}
	}
	if out.Ports == nil {
		out.Ports = []HelmPortRequest{}
	}
	return &out
}

// CreateHelm creates a Helm service in an environment. A name already used
// in the environment (compared case-insensitively) answers 409
// (IsConflict).
//
// When the outcome is ambiguous (IsAmbiguous), the request is not sent
// again blindly: the service is looked up by name in the environment. One
// created by this request (same chart and cluster-wide setting, created
// after the request was sent) is returned as if the create had answered;
// none, and the create is sent once more; another service holding the name
// is a 409 *APIError.
func (c *Client) CreateHelm(ctx context.Context, envID string, req *HelmRequest) (*Helm, error) {
	if req == nil {
		return nil, errNilRequest
	}
	body := req.normalized()
	path := pathf("/environment/%s/helm", envID)
	create := func(ctx context.Context) (*Helm, error) {
		var out Helm
		if err := c.do(ctx, http.MethodPost, path, body, &out); err != nil {
			return nil, err
		}
		return &out, nil
	}
	find := func(ctx context.Context, since func(answer) time.Time) (*Helm, string, error) {
		helms, a, err := getListAnswer[Helm](ctx, c, path, nil)
		if err != nil {
			return nil, "", err
		}
		for i := range helms {
			h := &helms[i]
			if !strings.EqualFold(h.Name, body.Name) {
				continue
			}
			if conflict := checkCreated("a service named", strconv.Quote(h.Name), h.ID, h.CreatedAt, since(a)); conflict != "" {
				return nil, conflict + " in this environment", nil
			}
			if diff := helmDiff(h, body); diff != "" {
				return nil, fmt.Sprintf("a service named %q (%s) exists in this environment with %s", h.Name, h.ID, diff), nil
			}
			return h, "", nil
		}
		return nil, "", nil
	}
	return createSettled(ctx, path, fmt.Sprintf("the Helm service %q", body.Name), create, find)
}

// helmDiff says how a Helm service differs from a request in what
// identifies it (the chart and the cluster-wide setting), or returns "".
// Values are not compared: the server may store them reformatted.
func helmDiff(h *Helm, req *HelmRequest) string {
	src := req.Source
	if src.HelmRepository != nil {
		r := h.Source.Repository
		if r == nil {
			return "a chart from Git"
		}
		want := src.HelmRepository
		if r.Repository.ID != want.Repository || r.ChartName != want.ChartName || r.ChartVersion != want.ChartVersion {
			return fmt.Sprintf("chart %s %s of repository %s", r.ChartName, r.ChartVersion, r.Repository.ID)
		}
	} else if src.GitRepository != nil {
		g := h.Source.Git
		if g == nil {
			return "a chart from a Helm repository"
		}
		if g.GitRepository.URL != src.GitRepository.URL {
			return "a chart from " + g.GitRepository.URL
		}
	}
	if h.AllowClusterWideResources != req.AllowClusterWideResources {
		return fmt.Sprintf("allow_cluster_wide_resources %t", h.AllowClusterWideResources)
	}
	return ""
}

// GetHelm reads one Helm service. A service that was deleted is an error
// for which IsNotFound is true, also when the API answers 403 for it,
// provided in names its environment: the environment's list then proves it
// gone (see IsNotFound). Without in, a 403 is reported as is.
func (c *Client) GetHelm(ctx context.Context, id string, in ...Parent) (*Helm, error) {
	return getService[Helm](ctx, c, "helm", id, in)
}

// ListHelms lists the Helm services of an environment.
func (c *Client) ListHelms(ctx context.Context, envID string) ([]Helm, error) {
	return getList[Helm](ctx, c, pathf("/environment/%s/helm", envID), nil)
}

// EditHelm replaces a Helm service's configuration with req. The change
// reaches the cluster at the next deployment.
func (c *Client) EditHelm(ctx context.Context, id string, req *HelmRequest) (*Helm, error) {
	if req == nil {
		return nil, errNilRequest
	}
	var out Helm
	if err := c.do(ctx, http.MethodPut, pathf("/helm/%s", id), req.normalized(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteHelm asks for a Helm service's deletion. The deletion runs
// afterwards: the status goes through DELETE_QUEUED and DELETING, then
// every read answers as for a deleted object (see WaitForDeletion). One
// already gone is an error for which IsNotFound is true, with the same
// proviso as GetHelm.
func (c *Client) DeleteHelm(ctx context.Context, id string, in ...Parent) error {
	if err := c.do(ctx, http.MethodDelete, pathf("/helm/%s", id), nil, nil); err != nil {
		return c.serviceGone(ctx, err, "helm", id, in)
	}
	return nil
}
