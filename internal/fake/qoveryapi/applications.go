package qoveryapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"time"
)

type portJSON struct {
	ID                 string `json:"id"`
	Name               string `json:"name"`
	InternalPort       int    `json:"internal_port"`
	ExternalPort       *int   `json:"external_port"`
	PubliclyAccessible bool   `json:"publicly_accessible"`
	IsDefault          bool   `json:"is_default"`
	Protocol           string `json:"protocol"`
}

type portRequestJSON struct {
	ID                 *string `json:"id"`
	Name               *string `json:"name"`
	InternalPort       *int    `json:"internal_port"`
	ExternalPort       *int    `json:"external_port"`
	PubliclyAccessible *bool   `json:"publicly_accessible"`
	IsDefault          *bool   `json:"is_default"`
	Protocol           *string `json:"protocol"`
}

type storageJSON struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	Size       int    `json:"size"`
	MountPoint string `json:"mount_point"`
}

type storageRequestJSON struct {
	ID         *string `json:"id"`
	Type       *string `json:"type"`
	Size       *int    `json:"size"`
	MountPoint *string `json:"mount_point"`
}

// renderApplication answers an application.
func (st *State) renderApplication(a *Application) map[string]any {
	out := make(map[string]any, len(a.Extra)+14)
	st.renderWorkload(out, &a.Workload, a.ID, st.environmentOrg(a.EnvironmentID))
	out["id"] = a.ID
	out["created_at"] = a.CreatedAt
	out["updated_at"] = a.UpdatedAt
	out["name"] = a.Name
	out["environment"] = refJSON{a.EnvironmentID}
	out["service_type"] = kindApplication
	out["maximum_cpu"], out["maximum_memory"], out["maximun_gpu"] = 16000, 16384, 0
	g := a.GitRepository
	repo := renderGitRepository(GitSource{URL: g.URL, Branch: g.Branch, RootPath: g.RootPath, GitTokenID: g.GitTokenID, Provider: g.Provider}, g.DeployedCommitID)
	if g.Owner != "" {
		repo.Owner = g.Owner
	}
	if g.Name != "" {
		repo.Name = g.Name
	}
	out["git_repository"] = repo
	return out
}

func (s *Server) application(id string) (*Application, error) {
	a := s.st.Applications[id]
	if a == nil {
		return nil, s.missing("application", id)
	}
	return a, nil
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// editedApplication applies an edit body to a copy of a (see
// editWorkload). git_repository must be in request shape. The caller holds
// the lock.
func (s *Server) editedApplication(a *Application, body map[string]json.RawMessage) (*Application, error) {
	next := a.clone()
	if raw, ok := body["name"]; ok {
		var name *string
		if err := json.Unmarshal(raw, &name); err != nil {
			return nil, badRequest("name: %s", jsonMessage(err))
		}
		if _, err := requireString("name", name); err != nil {
			return nil, err
		}
		next.Name = *name
	}
	if raw, ok := body["git_repository"]; ok && string(raw) != "null" {
		src, err := validGitRepositoryRequest(raw)
		if err != nil {
			return nil, err
		}
		next.GitRepository.URL, next.GitRepository.Branch, next.GitRepository.RootPath = src.URL, src.Branch, src.RootPath
		next.GitRepository.GitTokenID, next.GitRepository.Provider = src.GitTokenID, src.Provider
	}
	w, err := s.editWorkload("application", &a.Workload, body, s.st.environmentOrg(a.EnvironmentID), "name", "git_repository")
	if err != nil {
		return nil, err
	}
	next.Workload = w
	return &next, nil
}

func (s *Server) validPort(kind string, i int, p *portRequestJSON, existing []Port) (Port, error) {
	field := fmt.Sprintf("ports[%d]", i)
	out := Port{Protocol: "HTTP"}
	if p.ID != nil && *p.ID != "" {
		found := false
		for _, e := range existing {
			found = found || e.ID == *p.ID
		}
		if !found {
			return out, badRequest("%s.id: port %s is not a port of this %s (send no id to create one)", field, *p.ID, kind)
		}
		out.ID = *p.ID
	} else {
		out.ID = s.newID()
	}
	if p.InternalPort == nil {
		return out, badRequest("%s.internal_port: required", field)
	}
	if *p.InternalPort < 1 || *p.InternalPort > 65535 {
		return out, badRequest("%s.internal_port: must be between 1 and 65535, got %d", field, *p.InternalPort)
	}
	out.InternalPort = *p.InternalPort
	out.ExternalPort = cloneIntPtr(p.ExternalPort)
	if p.Name != nil {
		out.Name = *p.Name
	}
	if p.PubliclyAccessible != nil {
		out.PubliclyAccessible = *p.PubliclyAccessible
	}
	if p.IsDefault != nil {
		out.IsDefault = *p.IsDefault
	}
	if p.Protocol != nil {
		if err := oneOf(field+".protocol", *p.Protocol, "HTTP", "GRPC", "TCP", "UDP"); err != nil {
			return out, err
		}
		out.Protocol = *p.Protocol
	}
	return out, nil
}

func (s *Server) validStorage(kind string, i int, p *storageRequestJSON, existing []Storage) (Storage, error) {
	field := fmt.Sprintf("storage[%d]", i)
	var out Storage
	if p.ID != nil && *p.ID != "" {
		found := false
		for _, e := range existing {
			found = found || e.ID == *p.ID
		}
		if !found {
			return out, badRequest("%s.id: storage %s is not a storage of this %s (send no id to create one)", field, *p.ID, kind)
		}
		out.ID = *p.ID
	} else {
		out.ID = s.newID()
	}
	typ, err := requireString(field+".type", p.Type)
	if err != nil {
		return out, err
	}
	if err := oneOf(field+".type", typ, "FAST_SSD"); err != nil {
		return out, err
	}
	out.Type = typ
	if p.Size == nil {
		return out, badRequest("%s.size: required", field)
	}
	if *p.Size < 4 {
		return out, badRequest("%s.size: at least 4 (GB), got %d", field, *p.Size)
	}
	out.Size = *p.Size
	if out.MountPoint, err = requireString(field+".mount_point", p.MountPoint); err != nil {
		return out, err
	}
	return out, nil
}

// applicationConfig is what a deployment of the application renders.
func applicationConfig(a *Application) Application {
	c := a.clone()
	c.Status, c.CreatedAt, c.UpdatedAt = ServiceStatus{}, time.Time{}, time.Time{}
	c.GitRepository.DeployedCommitID = ""
	c.Workload = a.config()
	return c
}

// canonical re-encodes a JSON value with sorted keys and no spacing.
func canonical(raw json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

func (s *Server) listApplications(r *http.Request) (int, any, error) {
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
	var out []map[string]any
	for _, a := range sorted(s.st.Applications, func(a *Application) uint64 { return a.seq }, func(a *Application) string { return a.ID }) {
		if a.EnvironmentID == envID && (!toUpdate || a.Status.DeploymentStatus == outOfDate) {
			out = append(out, s.st.renderApplication(a))
		}
	}
	return http.StatusOK, results(out), nil
}

func (s *Server) getApplication(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.application(r.PathValue("applicationId"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.st.renderApplication(a), nil
}

func (s *Server) editApplication(r *http.Request) (int, any, error) {
	return s.editService(r, kindApplication, "applicationId", func(id string, body map[string]json.RawMessage) (string, func(), error) {
		a := s.st.Applications[id]
		next, err := s.editedApplication(a, body)
		if err != nil {
			return "", nil, err
		}
		return next.Name, func() { s.replaceApplication(a, next) }, nil
	}, func(id string) map[string]any { return s.st.renderApplication(s.st.Applications[id]) })
}

// replaceApplication applies an edit and marks the application OUT_OF_DATE
// when its configuration changed.
func (s *Server) replaceApplication(a, next *Application) {
	before := applicationConfig(a)
	a.Name, a.Workload = next.Name, next.Workload
	a.GitRepository.URL, a.GitRepository.Branch, a.GitRepository.RootPath = next.GitRepository.URL, next.GitRepository.Branch, next.GitRepository.RootPath
	a.GitRepository.GitTokenID, a.GitRepository.Provider = next.GitRepository.GitTokenID, next.GitRepository.Provider
	if !reflect.DeepEqual(before, applicationConfig(a)) {
		a.UpdatedAt = now()
		a.Status.changed()
	}
}

func (s *Server) deployApplication(r *http.Request) (int, any, error) {
	var req struct {
		GitCommitID *string `json:"git_commit_id"`
	}
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	commit, err := requireString("git_commit_id", req.GitCommitID)
	if err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.application(r.PathValue("applicationId"))
	if err != nil {
		return 0, nil, err
	}
	out, err := s.requestDeployment(a.ID, &a.Status, commit)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, out, nil
}
