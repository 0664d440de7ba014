package qoveryapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"time"
)

// Members of an application answer that an edit does not take: they are
// ignored when sent back.
var applicationReadOnly = []string{"id", "created_at", "updated_at", "environment", "service_type"}

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

// renderApplication answers an application: the extra members as last sent,
// then the ones the fake models.
func (st *State) renderApplication(a *Application) map[string]any {
	out := make(map[string]any, len(a.Extra)+12)
	for k, v := range a.Extra {
		out[k] = v
	}
	out["id"] = a.ID
	out["created_at"] = a.CreatedAt
	out["updated_at"] = a.UpdatedAt
	out["name"] = a.Name
	out["environment"] = refJSON{a.EnvironmentID}
	out["service_type"] = kindApplication
	ports := []portJSON{}
	for _, p := range a.Ports {
		ports = append(ports, portJSON{ID: p.ID, Name: p.Name, InternalPort: p.InternalPort, ExternalPort: cloneIntPtr(p.ExternalPort),
			PubliclyAccessible: p.PubliclyAccessible, IsDefault: p.IsDefault, Protocol: p.Protocol})
	}
	out["ports"] = ports
	storage := []storageJSON{}
	for _, s := range a.Storage {
		storage = append(storage, storageJSON(s))
	}
	out["storage"] = storage
	if len(a.Healthchecks) > 0 {
		out["healthchecks"] = a.Healthchecks
	} else {
		out["healthchecks"] = map[string]any{}
	}
	groups := []annotationsGroupJSON{}
	for _, id := range a.AnnotationsGroupIDs {
		if g := st.AnnotationsGroups[id]; g != nil {
			groups = append(groups, renderAnnotationsGroup(g))
		}
	}
	out["annotations_groups"] = groups
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

// editedApplication applies an edit body to a copy of a. It is a
// replacement for collections: a port or storage entry without id is
// created, one with an id is updated, one left out is deleted. The caller
// holds the lock.
func (s *Server) editedApplication(a *Application, body map[string]json.RawMessage) (*Application, error) {
	next := a.clone()
	orgID := s.st.environmentOrg(a.EnvironmentID)

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

	hc, ok := body["healthchecks"]
	if !ok || string(hc) == "null" {
		return nil, badRequest("healthchecks: required")
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(hc, &probe); err != nil {
		return nil, badRequest("healthchecks: must be an object with readiness_probe and liveness_probe")
	}
	next.Healthchecks = compact(hc)

	// (fake) The API does not say what an absent annotations_groups means
	// (keep or clear), so an edit without it is refused: clients must
	// always send the field, [] to detach every group.
	rawGroups, ok := body["annotations_groups"]
	if !ok || string(rawGroups) == "null" {
		return nil, badRequest("annotations_groups: required (send [] to detach every group)")
	}
	var groups []struct {
		ID *string `json:"id"`
	}
	if err := json.Unmarshal(rawGroups, &groups); err != nil {
		return nil, badRequest("annotations_groups: %s", jsonMessage(err))
	}
	next.AnnotationsGroupIDs = []string{}
	for i, g := range groups {
		id, err := requireString(fmt.Sprintf("annotations_groups[%d].id", i), g.ID)
		if err != nil {
			return nil, err
		}
		if grp := s.st.AnnotationsGroups[id]; grp == nil || grp.OrganizationID != orgID {
			return nil, badRequest("annotations_groups[%d].id: annotations group %s not found in the organization", i, id)
		}
		if !slices.Contains(next.AnnotationsGroupIDs, id) {
			next.AnnotationsGroupIDs = append(next.AnnotationsGroupIDs, id)
		}
	}

	// (fake) An absent ports or storage list is an empty one: every entry
	// is left out, so every entry is deleted.
	var ports []portRequestJSON
	if raw, ok := body["ports"]; ok {
		if err := json.Unmarshal(raw, &ports); err != nil {
			return nil, badRequest("ports: %s", jsonMessage(err))
		}
	}
	next.Ports = []Port{}
	for i, p := range ports {
		port, err := s.validPort(i, &p, a.Ports)
		if err != nil {
			return nil, err
		}
		next.Ports = append(next.Ports, port)
	}

	var storage []storageRequestJSON
	if raw, ok := body["storage"]; ok {
		if err := json.Unmarshal(raw, &storage); err != nil {
			return nil, badRequest("storage: %s", jsonMessage(err))
		}
	}
	next.Storage = []Storage{}
	for i, st := range storage {
		entry, err := s.validStorage(i, &st, a.Storage)
		if err != nil {
			return nil, err
		}
		next.Storage = append(next.Storage, entry)
	}

	if raw, ok := body["git_repository"]; ok && string(raw) != "null" {
		var g gitRepositoryRequestJSON
		if err := json.Unmarshal(raw, &g); err != nil {
			return nil, badRequest("git_repository: %s", jsonMessage(err))
		}
		src, err := validGitSource("git_repository", &g, false)
		if err != nil {
			return nil, err
		}
		next.GitRepository.URL, next.GitRepository.Branch, next.GitRepository.RootPath = src.URL, src.Branch, src.RootPath
		next.GitRepository.GitTokenID = src.GitTokenID
		if g.Provider != nil && *g.Provider != "" {
			if err := oneOf("git_repository.provider", *g.Provider, "BITBUCKET", "GITHUB", "GITLAB"); err != nil {
				return nil, err
			}
			next.GitRepository.Provider = *g.Provider
		}
	}

	next.Extra = map[string]json.RawMessage{}
	for k, v := range body {
		switch k {
		case "name", "healthchecks", "annotations_groups", "ports", "storage", "git_repository":
			continue
		}
		if slices.Contains(applicationReadOnly, k) {
			continue
		}
		next.Extra[k] = compact(v)
	}
	return &next, nil
}

func (s *Server) validPort(i int, p *portRequestJSON, existing []Port) (Port, error) {
	field := fmt.Sprintf("ports[%d]", i)
	out := Port{Protocol: "HTTP"}
	if p.ID != nil && *p.ID != "" {
		found := false
		for _, e := range existing {
			found = found || e.ID == *p.ID
		}
		if !found {
			return out, badRequest("%s.id: port %s is not a port of this application (send no id to create one)", field, *p.ID)
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

func (s *Server) validStorage(i int, p *storageRequestJSON, existing []Storage) (Storage, error) {
	field := fmt.Sprintf("storage[%d]", i)
	var out Storage
	if p.ID != nil && *p.ID != "" {
		found := false
		for _, e := range existing {
			found = found || e.ID == *p.ID
		}
		if !found {
			return out, badRequest("%s.id: storage %s is not a storage of this application (send no id to create one)", field, *p.ID)
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

// applicationConfig is what a deployment of the application renders, with
// JSON members in a canonical form so that key order and spacing do not
// count as changes.
func applicationConfig(a *Application) Application {
	c := a.clone()
	c.Status, c.CreatedAt, c.UpdatedAt = ServiceStatus{}, time.Time{}, time.Time{}
	c.GitRepository.DeployedCommitID = ""
	c.Healthchecks = canonical(c.Healthchecks)
	for k, v := range c.Extra {
		c.Extra[k] = canonical(v)
	}
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
	body, err := decodeObject(r)
	if err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.application(r.PathValue("applicationId"))
	if err != nil {
		return 0, nil, err
	}
	if a.Status.deleting() {
		return 0, nil, errorf(http.StatusConflict, "Operation is in progress: the service is being deleted")
	}
	next, err := s.editedApplication(a, body)
	if err != nil {
		return 0, nil, err
	}
	if s.st.nameTaken(a.EnvironmentID, next.Name, a.ID) {
		return 0, nil, errorf(http.StatusConflict, "a service named %q already exists in this environment", next.Name)
	}
	s.replaceApplication(a, next)
	return http.StatusOK, s.st.renderApplication(a), nil
}

// replaceApplication applies an edit and marks the application OUT_OF_DATE
// when its configuration changed.
func (s *Server) replaceApplication(a, next *Application) {
	before := applicationConfig(a)
	a.Name, a.Ports, a.Storage, a.Healthchecks = next.Name, next.Ports, next.Storage, next.Healthchecks
	a.AnnotationsGroupIDs, a.Extra = next.AnnotationsGroupIDs, next.Extra
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
	if err := inProgress(&a.Status); err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, s.startAction(a.ID, &a.Status, actionDeploy, commit), nil
}
