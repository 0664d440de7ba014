package qoveryapi

import (
	"net/http"
	"time"
)

type refJSON struct {
	ID string `json:"id"`
}

type organizationJSON struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Name      string    `json:"name"`
	Plan      string    `json:"plan"`
}

type projectJSON struct {
	ID                          string    `json:"id"`
	CreatedAt                   time.Time `json:"created_at"`
	UpdatedAt                   time.Time `json:"updated_at"`
	Name                        string    `json:"name"`
	Description                 string    `json:"description"`
	AssociatedEnvironmentsCount int       `json:"associated_environments_count"`
	Organization                refJSON   `json:"organization"`
}

type clusterJSON struct {
	ID            string    `json:"id"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
	Organization  refJSON   `json:"organization"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	Region        string    `json:"region"`
	CloudProvider string    `json:"cloud_provider"`
	Kubernetes    string    `json:"kubernetes"`
	Status        string    `json:"status"`
	IsDefault     bool      `json:"is_default"`
	Production    bool      `json:"production"`
	Version       string    `json:"version"`
	InstanceType  string    `json:"instance_type"`
}

type cloudProviderJSON struct {
	Provider string `json:"provider"`
	Cluster  string `json:"cluster"`
}

type environmentJSON struct {
	ID            string            `json:"id"`
	CreatedAt     time.Time         `json:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at"`
	Name          string            `json:"name"`
	Organization  refJSON           `json:"organization"`
	Project       refJSON           `json:"project"`
	CloudProvider cloudProviderJSON `json:"cloud_provider"`
	Mode          string            `json:"mode"`
	ClusterID     string            `json:"cluster_id"`
	ClusterName   string            `json:"cluster_name"`
	ExpiresAt     *time.Time        `json:"expires_at"`
}

func renderOrganization(o *Organization) organizationJSON {
	return organizationJSON{ID: o.ID, CreatedAt: o.CreatedAt, UpdatedAt: o.CreatedAt, Name: o.Name, Plan: o.Plan}
}

func (st *State) renderProject(p *Project) projectJSON {
	n := 0
	for _, e := range st.Environments {
		if e.ProjectID == p.ID {
			n++
		}
	}
	return projectJSON{ID: p.ID, CreatedAt: p.CreatedAt, UpdatedAt: p.CreatedAt, Name: p.Name, Description: p.Description,
		AssociatedEnvironmentsCount: n, Organization: refJSON{p.OrganizationID}}
}

func renderCluster(c *Cluster) clusterJSON {
	return clusterJSON{ID: c.ID, CreatedAt: c.CreatedAt, UpdatedAt: c.CreatedAt, Organization: refJSON{c.OrganizationID},
		Name: c.Name, Region: c.Region, CloudProvider: c.CloudProvider, Kubernetes: "MANAGED", Status: "DEPLOYED",
		Version: "1.31", InstanceType: "t3a.large"}
}

func (st *State) renderEnvironment(e *Environment) environmentJSON {
	out := environmentJSON{ID: e.ID, CreatedAt: e.CreatedAt, UpdatedAt: e.CreatedAt, Name: e.Name,
		Organization: refJSON{st.environmentOrg(e.ID)}, Project: refJSON{e.ProjectID}, Mode: e.Mode, ClusterID: e.ClusterID}
	if c := st.Clusters[e.ClusterID]; c != nil {
		out.ClusterName = c.Name
		out.CloudProvider = cloudProviderJSON{Provider: c.CloudProvider, Cluster: c.Name}
	}
	return out
}

func (s *Server) org(id string) (*Organization, error) {
	o := s.st.Organizations[id]
	if o == nil {
		return nil, notFound("organization", id)
	}
	return o, nil
}

func (s *Server) listOrganizations(*http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []organizationJSON
	for _, o := range sorted(s.st.Organizations, func(o *Organization) uint64 { return o.seq }, func(o *Organization) string { return o.ID }) {
		out = append(out, renderOrganization(o))
	}
	return http.StatusOK, results(out), nil
}

func (s *Server) listProjects(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	org, err := s.org(r.PathValue("organizationId"))
	if err != nil {
		return 0, nil, err
	}
	var out []projectJSON
	for _, p := range sorted(s.st.Projects, func(p *Project) uint64 { return p.seq }, func(p *Project) string { return p.ID }) {
		if p.OrganizationID == org.ID {
			out = append(out, s.st.renderProject(p))
		}
	}
	return http.StatusOK, results(out), nil
}

func (s *Server) listClusters(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	org, err := s.org(r.PathValue("organizationId"))
	if err != nil {
		return 0, nil, err
	}
	var out []clusterJSON
	for _, c := range sorted(s.st.Clusters, func(c *Cluster) uint64 { return c.seq }, func(c *Cluster) string { return c.ID }) {
		if c.OrganizationID == org.ID {
			out = append(out, renderCluster(c))
		}
	}
	return http.StatusOK, results(out), nil
}

func (s *Server) listEnvironments(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.PathValue("projectId")
	if s.st.Projects[id] == nil {
		return 0, nil, notFound("project", id)
	}
	var out []environmentJSON
	for _, e := range sorted(s.st.Environments, func(e *Environment) uint64 { return e.seq }, func(e *Environment) string { return e.ID }) {
		if e.ProjectID == id {
			out = append(out, s.st.renderEnvironment(e))
		}
	}
	return http.StatusOK, results(out), nil
}

func (s *Server) getEnvironment(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.PathValue("environmentId")
	e := s.st.Environments[id]
	if e == nil {
		return 0, nil, notFound("environment", id)
	}
	return http.StatusOK, s.st.renderEnvironment(e), nil
}
