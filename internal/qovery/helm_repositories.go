package qovery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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

// redact blanks the credentials' secrets out of an API error: a server may
// quote a rejected request back.
func (c *HelmRepositoryConfig) redact(err error) error {
	return redactSecrets(err, c.Password, c.SecretAccessKey, c.ScalewaySecretKey)
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

// CreateHelmRepository creates an organization Helm repository. Names are
// unique in an organization. The credentials' secrets never appear in an
// error.
//
// When the outcome is ambiguous (IsAmbiguous: the connection failed after
// the request was sent, or a gateway answered 502 or 504), the request is
// not sent again blindly: the repository is looked up by name. One created
// by this request (same kind, URL and TLS setting, created after the
// request was sent) is returned as if the create had answered; none, and
// the create is sent once more; another one holding the name is a 409
// *APIError.
func (c *Client) CreateHelmRepository(ctx context.Context, orgID string, req *HelmRepositoryRequest) (*HelmRepository, error) {
	if req == nil {
		return nil, errNilRequest
	}
	path := pathf("/organization/%s/helmRepository", orgID)
	create := func(ctx context.Context) (*HelmRepository, error) {
		var out HelmRepository
		if err := c.do(ctx, http.MethodPost, path, req, &out); err != nil {
			return nil, req.Config.redact(err)
		}
		return &out, nil
	}
	find := func(ctx context.Context, since func(answer) time.Time) (*HelmRepository, string, error) {
		repos, a, err := getListAnswer[HelmRepository](ctx, c, path, nil)
		if err != nil {
			return nil, "", err
		}
		for i := range repos {
			r := &repos[i]
			if !strings.EqualFold(r.Name, req.Name) {
				continue
			}
			if conflict := checkCreated("a Helm repository named", strconv.Quote(r.Name), r.ID, r.CreatedAt, since(a)); conflict != "" {
				return nil, conflict, nil
			}
			if diff := helmRepositoryDiff(r, req); diff != "" {
				return nil, fmt.Sprintf("a Helm repository named %q (%s) exists with %s", r.Name, r.ID, diff), nil
			}
			return r, "", nil
		}
		return nil, "", nil
	}
	return createSettled(ctx, path, fmt.Sprintf("the Helm repository %q", req.Name), create, find)
}

// helmRepositoryDiff says how a repository differs from a request in what
// identifies it, or returns "".
func helmRepositoryDiff(r *HelmRepository, req *HelmRepositoryRequest) string {
	if r.Kind != req.Kind {
		return fmt.Sprintf("kind %s, not %s", r.Kind, req.Kind)
	}
	if strings.TrimRight(r.URL, "/") != strings.TrimRight(req.URL, "/") {
		return fmt.Sprintf("URL %s, not %s", r.URL, req.URL)
	}
	if r.SkipTLSVerification != req.SkipTLSVerification {
		return fmt.Sprintf("skip_tls_verification %t", r.SkipTLSVerification)
	}
	return ""
}

// GetHelmRepository reads one organization Helm repository. A repository
// that was deleted is an error for which IsNotFound is true, also when the
// API answers 403 for it (see IsNotFound).
func (c *Client) GetHelmRepository(ctx context.Context, orgID, id string) (*HelmRepository, error) {
	var out HelmRepository
	gone := func(ctx context.Context, err error) error { return c.helmRepositoryGone(ctx, err, orgID, id) }
	if err := c.getObject(ctx, pathf("/organization/%s/helmRepository/%s", orgID, id), &out, gone); err != nil {
		return nil, err
	}
	return &out, nil
}

// helmRepositoryGone settles a 403 about a repository with the list (see
// confirmGone).
func (c *Client) helmRepositoryGone(ctx context.Context, err error, orgID, id string) error {
	return confirmGone(ctx, err, "Helm repository", id, "the Helm repositories of organization "+orgID, func(ctx context.Context) ([]string, error) {
		repos, err := c.ListHelmRepositories(ctx, orgID)
		ids := make([]string, 0, len(repos))
		for _, r := range repos {
			ids = append(ids, r.ID)
		}
		return ids, err
	})
}

// ListHelmRepositories lists the Helm repositories of an organization.
func (c *Client) ListHelmRepositories(ctx context.Context, orgID string) ([]HelmRepository, error) {
	return getList[HelmRepository](ctx, c, pathf("/organization/%s/helmRepository", orgID), nil)
}

// EditHelmRepository replaces an organization Helm repository with req.
// The credentials' secrets never appear in an error.
func (c *Client) EditHelmRepository(ctx context.Context, orgID, id string, req *HelmRepositoryRequest) (*HelmRepository, error) {
	if req == nil {
		return nil, errNilRequest
	}
	var out HelmRepository
	if err := c.do(ctx, http.MethodPut, pathf("/organization/%s/helmRepository/%s", orgID, id), req, &out); err != nil {
		return nil, req.Config.redact(err)
	}
	return &out, nil
}

// DeleteHelmRepository deletes an organization Helm repository. One that
// is already gone is an error for which IsNotFound is true, also when the
// API answers 403 for it (see IsNotFound).
func (c *Client) DeleteHelmRepository(ctx context.Context, orgID, id string) error {
	if err := c.do(ctx, http.MethodDelete, pathf("/organization/%s/helmRepository/%s", orgID, id), nil, nil); err != nil {
		return c.helmRepositoryGone(ctx, err, orgID, id)
	}
	return nil
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
