package qovery

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"
)

// Helm repository kinds (HelmRepositoryKindEnum).
const (
	HelmRepositoryKindHTTPS = "HTTPS"
)

// HelmRepositoryRequest creates or replaces an organization Helm
// repository. Every field is sent on an edit.
type HelmRepositoryRequest struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Description string `json:"description,omitempty"`
	// URL must start with https:// for the HTTPS kind and oci:// for the
	// OCI kinds.
	URL                 string               `json:"url,omitempty"`
	SkipTLSVerification bool                 `json:"skip_tls_verification"`
	Config              HelmRepositoryConfig `json:"config"`
}

// HelmRepositoryConfig holds a Helm repository's credentials. It is sent as
// {} for a public HTTPS repository. Responses carry the non-secret fields
// only: Password, SecretAccessKey and ScalewaySecretKey are never returned.
type HelmRepositoryConfig struct {
	Username            string `json:"username,omitempty"`
	Password            string `json:"password,omitempty"`
	AccessKeyID         string `json:"access_key_id,omitempty"`
	SecretAccessKey     string `json:"secret_access_key,omitempty"`
	Region              string `json:"region,omitempty"`
	ScalewayAccessKey   string `json:"scaleway_access_key,omitempty"`
	ScalewaySecretKey   string `json:"scaleway_secret_key,omitempty"`
	ScalewayProjectID   string `json:"scaleway_project_id,omitempty"`
	AzureTenantID       string `json:"azure_tenant_id,omitempty"`
	AzureSubscriptionID string `json:"azure_subscription_id,omitempty"`
	RoleARN             string `json:"role_arn,omitempty"`
}

// HelmRepository is an organization Helm repository as the API returns it.
type HelmRepository struct {
	ID                      string               `json:"id"`
	CreatedAt               time.Time            `json:"created_at"`
	UpdatedAt               *time.Time           `json:"updated_at,omitempty"`
	Name                    string               `json:"name"`
	Kind                    string               `json:"kind"`
	Description             string               `json:"description,omitempty"`
	URL                     string               `json:"url,omitempty"`
	SkipTLSVerification     bool                 `json:"skip_tls_verification"`
	AssociatedServicesCount int                  `json:"associated_services_count"`
	Config                  HelmRepositoryConfig `json:"config"`
}

// HelmChart is a chart of a Helm repository and its published versions.
type HelmChart struct {
	ChartName string   `json:"chart_name"`
	Versions  []string `json:"versions"`
}

var errNilRequest = errors.New("qovery: a request body is required")

// CreateHelmRepository creates an organization Helm repository.
func (c *Client) CreateHelmRepository(ctx context.Context, orgID string, req *HelmRepositoryRequest) (*HelmRepository, error) {
	if req == nil {
		return nil, errNilRequest
	}
	var out HelmRepository
	if err := c.do(ctx, http.MethodPost, pathf("/organization/%s/helmRepository", orgID), nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetHelmRepository reads one organization Helm repository.
func (c *Client) GetHelmRepository(ctx context.Context, orgID, id string) (*HelmRepository, error) {
	var out HelmRepository
	if err := c.do(ctx, http.MethodGet, pathf("/organization/%s/helmRepository/%s", orgID, id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListHelmRepositories lists the Helm repositories of an organization.
func (c *Client) ListHelmRepositories(ctx context.Context, orgID string) ([]HelmRepository, error) {
	return getList[HelmRepository](ctx, c, pathf("/organization/%s/helmRepository", orgID), nil)
}

// EditHelmRepository replaces an organization Helm repository with req.
func (c *Client) EditHelmRepository(ctx context.Context, orgID, id string, req *HelmRepositoryRequest) (*HelmRepository, error) {
	if req == nil {
		return nil, errNilRequest
	}
	var out HelmRepository
	if err := c.do(ctx, http.MethodPut, pathf("/organization/%s/helmRepository/%s", orgID, id), nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteHelmRepository deletes an organization Helm repository.
func (c *Client) DeleteHelmRepository(ctx context.Context, orgID, id string) error {
	return c.do(ctx, http.MethodDelete, pathf("/organization/%s/helmRepository/%s", orgID, id), nil, nil, nil)
}

// ListHelmCharts lists the charts of a Helm repository with their versions;
// a non-empty chartName keeps that chart only.
func (c *Client) ListHelmCharts(ctx context.Context, orgID, repoID, chartName string) ([]HelmChart, error) {
	var q url.Values
	if chartName != "" {
		q = url.Values{"chartName": {chartName}}
	}
	return getList[HelmChart](ctx, c, pathf("/organization/%s/helmRepository/%s/charts", orgID, repoID), q)
}
