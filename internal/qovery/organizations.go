package qovery

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// Ref is a reference to another object by its id, as in {"id": "..."}.
type Ref struct {
	ID string `json:"id"`
}

// Organization is a Qovery organization.
type Organization struct {
	ID        string     `json:"id"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
	Name      string     `json:"name"`
	Plan      string     `json:"plan,omitempty"`
}

// Project is a project of an organization.
type Project struct {
	ID           string     `json:"id"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    *time.Time `json:"updated_at,omitempty"`
	Name         string     `json:"name"`
	Description  string     `json:"description,omitempty"`
	Organization Ref        `json:"organization"`
}

// Environment is an environment of a project, bound to one cluster.
type Environment struct {
	ID            string                   `json:"id"`
	CreatedAt     time.Time                `json:"created_at"`
	UpdatedAt     *time.Time               `json:"updated_at,omitempty"`
	Name          string                   `json:"name"`
	Organization  Ref                      `json:"organization"`
	Project       Ref                      `json:"project"`
	Mode          string                   `json:"mode,omitempty"`
	ClusterID     string                   `json:"cluster_id,omitempty"`
	ClusterName   string                   `json:"cluster_name,omitempty"`
	CloudProvider EnvironmentCloudProvider `json:"cloud_provider"`
}

// EnvironmentCloudProvider says where an environment runs.
type EnvironmentCloudProvider struct {
	Provider string `json:"provider,omitempty"`
	Cluster  string `json:"cluster,omitempty"`
}

// Cluster is a Kubernetes cluster of an organization.
type Cluster struct {
	ID            string     `json:"id"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     *time.Time `json:"updated_at,omitempty"`
	Organization  Ref        `json:"organization"`
	Name          string     `json:"name"`
	Description   string     `json:"description,omitempty"`
	Region        string     `json:"region"`
	CloudProvider string     `json:"cloud_provider"`
	Kubernetes    string     `json:"kubernetes,omitempty"`
	Status        string     `json:"status,omitempty"`
	IsDefault     bool       `json:"is_default"`
	Production    bool       `json:"production"`
	Version       string     `json:"version,omitempty"`
}

// ListOrganizations lists the organizations the token can see.
func (c *Client) ListOrganizations(ctx context.Context) ([]Organization, error) {
	return getList[Organization](ctx, c, "/organization", nil)
}

// ListProjects lists the projects of an organization.
func (c *Client) ListProjects(ctx context.Context, orgID string) ([]Project, error) {
	return getList[Project](ctx, c, pathf("/organization/%s/project", orgID), nil)
}

// GetEnvironment reads one environment.
func (c *Client) GetEnvironment(ctx context.Context, id string) (*Environment, error) {
	var out Environment
	if err := c.do(ctx, http.MethodGet, pathf("/environment/%s", id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListEnvironments lists the environments of a project.
func (c *Client) ListEnvironments(ctx context.Context, projectID string) ([]Environment, error) {
	return getList[Environment](ctx, c, pathf("/project/%s/environment", projectID), nil)
}

// ListClusters lists the clusters of an organization.
func (c *Client) ListClusters(ctx context.Context, orgID string) ([]Cluster, error) {
	return getList[Cluster](ctx, c, pathf("/organization/%s/cluster", orgID), nil)
}

// GetCluster finds one cluster of an organization. The API has no
// single-cluster GET, so this scans the list; an absent cluster is a 404
// *APIError (IsNotFound is true).
func (c *Client) GetCluster(ctx context.Context, orgID, id string) (*Cluster, error) {
	path := pathf("/organization/%s/cluster", orgID)
	clusters, err := getList[Cluster](ctx, c, path, nil)
	if err != nil {
		return nil, err
	}
	for i := range clusters {
		if clusters[i].ID == id {
			return &clusters[i], nil
		}
	}
	return nil, &APIError{
		Status: http.StatusNotFound,
		Method: http.MethodGet,
		Path:   path,
		Detail: fmt.Sprintf("cluster %s not found in organization %s", id, orgID),
	}
}
