package qoveryapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"time"
)

type registryJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	URL  string `json:"url"`
	Kind string `json:"kind"`
}

// renderContainer answers a container. (fake) Of the image's registry the
// answer gives the registry object only, not the optional registry_id
// member, which an edit requires.
func (st *State) renderContainer(c *Container) map[string]any {
	out := make(map[string]any, len(c.Extra)+16)
	st.renderWorkload(out, &c.Workload, c.ID, st.environmentOrg(c.EnvironmentID))
	out["id"] = c.ID
	out["created_at"] = c.CreatedAt
	out["updated_at"] = c.UpdatedAt
	out["name"] = c.Name
	out["environment"] = refJSON{c.EnvironmentID}
	out["service_type"] = kindContainer
	out["maximum_cpu"], out["maximum_memory"], out["maximum_gpu"] = 16000, 16384, 0
	out["image_name"] = c.ImageName
	out["tag"] = c.Tag
	reg := registryJSON{ID: c.RegistryID}
	if r := st.Registries[c.RegistryID]; r != nil {
		reg = registryJSON{ID: r.ID, Name: r.Name, URL: r.URL, Kind: r.Kind}
	}
	out["registry"] = reg
	return out
}

func (s *Server) container(id string) (*Container, error) {
	c := s.st.Containers[id]
	if c == nil {
		return nil, s.missing("container", id)
	}
	return c, nil
}

// editedContainer applies an edit body (ContainerRequest) to a copy of c
// (see editWorkload): name, registry_id, image_name and tag are required.
// The caller holds the lock.
func (s *Server) editedContainer(c *Container, body map[string]json.RawMessage) (*Container, error) {
	next := c.clone()
	orgID := s.st.environmentOrg(c.EnvironmentID)
	var req struct {
		Name       *string `json:"name"`
		RegistryID *string `json:"registry_id"`
		ImageName  *string `json:"image_name"`
		Tag        *string `json:"tag"`
	}
	b, _ := json.Marshal(body)
	if err := json.Unmarshal(b, &req); err != nil {
		return nil, badRequest("%s", jsonMessage(err))
	}
	var err error
	if next.Name, err = requireString("name", req.Name); err != nil {
		return nil, err
	}
	if next.RegistryID, err = requireString("registry_id", req.RegistryID); err != nil {
		return nil, err
	}
	if r := s.st.Registries[next.RegistryID]; r == nil || r.OrganizationID != orgID {
		return nil, badRequest("registry_id: container registry %s not found in the organization", next.RegistryID)
	}
	if next.ImageName, err = requireString("image_name", req.ImageName); err != nil {
		return nil, err
	}
	if next.Tag, err = requireString("tag", req.Tag); err != nil {
		return nil, err
	}
	// "registry" is the answer's object: ignored when sent back.
	w, err := s.editWorkload("container", &c.Workload, body, orgID, "name", "registry_id", "image_name", "tag", "registry")
	if err != nil {
		return nil, err
	}
	next.Workload = w
	return &next, nil
}

// containerConfig is what a deployment of the container renders.
func containerConfig(c *Container) Container {
	out := c.clone()
	out.Status, out.CreatedAt, out.UpdatedAt = ServiceStatus{}, time.Time{}, time.Time{}
	out.Workload = c.config()
	return out
}

// replaceContainer applies an edit and marks the container OUT_OF_DATE
// when its configuration changed.
func (s *Server) replaceContainer(c, next *Container) {
	before := containerConfig(c)
	c.Name, c.Workload = next.Name, next.Workload
	c.RegistryID, c.ImageName, c.Tag = next.RegistryID, next.ImageName, next.Tag
	if !reflect.DeepEqual(before, containerConfig(c)) {
		c.UpdatedAt = now()
		c.Status.changed()
	}
}

func (s *Server) listContainers(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	envID := r.PathValue("environmentId")
	if s.st.Environments[envID] == nil {
		return 0, nil, notFound("environment", envID)
	}
	var out []map[string]any
	for _, c := range sorted(s.st.Containers, func(c *Container) uint64 { return c.seq }, func(c *Container) string { return c.ID }) {
		if c.EnvironmentID == envID {
			out = append(out, s.st.renderContainer(c))
		}
	}
	return http.StatusOK, results(out), nil
}

func (s *Server) getContainer(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.container(r.PathValue("containerId"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.st.renderContainer(c), nil
}

func (s *Server) editContainer(r *http.Request) (int, any, error) {
	return s.editService(r, kindContainer, "containerId", func(id string, body map[string]json.RawMessage) (string, func(), error) {
		c := s.st.Containers[id]
		next, err := s.editedContainer(c, body)
		if err != nil {
			return "", nil, err
		}
		return next.Name, func() { s.replaceContainer(c, next) }, nil
	}, func(id string) map[string]any { return s.st.renderContainer(s.st.Containers[id]) })
}

// deployContainer deploys an image tag (ContainerDeployRequest, image_tag
// required). (fake) The tag becomes the container's tag.
func (s *Server) deployContainer(r *http.Request) (int, any, error) {
	var req struct {
		ImageTag *string `json:"image_tag"`
	}
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	tag, err := requireString("image_tag", req.ImageTag)
	if err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.container(r.PathValue("containerId"))
	if err != nil {
		return 0, nil, err
	}
	if c.Status.running() && s.opts.ConflictWhileBusy {
		return 0, nil, errorf(http.StatusConflict, "Operation is in progress: the service is %s", c.Status.State)
	}
	if c.Tag != tag {
		c.Tag = tag
		c.UpdatedAt = now()
		c.Status.changed()
	}
	out, err := s.requestDeployment(c.ID, &c.Status, "")
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, out, nil
}

// seedRegistry returns the organization's Docker Hub registry, adding it
// the first time. The caller holds the lock.
func (s *Server) seedRegistry(orgID string) string {
	for _, r := range s.st.Registries {
		if r.OrganizationID == orgID && r.Kind == "DOCKER_HUB" {
			return r.ID
		}
	}
	r := &ContainerRegistry{ID: s.newID(), OrganizationID: orgID, Name: "Docker Hub", Kind: "DOCKER_HUB", URL: "https://docker.io", seq: s.st.next()}
	s.st.Registries[r.ID] = r
	return r.ID
}

// SeedContainer adds a container of image:tag from the organization's
// Docker Hub registry (added the first time), deployed and up to date, to
// an environment and returns its id. Ports are as for SeedApplication.
func (s *Server) SeedContainer(envID, name, image, tag string, ports ...Port) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.seedable(envID, name); err != nil {
		return "", err
	}
	registryID := s.seedRegistry(s.st.environmentOrg(envID))
	c := &Container{ID: s.newID(), EnvironmentID: envID, Name: name, RegistryID: registryID, ImageName: image, Tag: tag,
		CreatedAt: now(), seq: s.st.next()}
	c.UpdatedAt = c.CreatedAt
	c.Workload = s.seedWorkload(ports, map[string]string{
		"entrypoint": `""`,
		"icon_uri":   `"app://qovery-console/container"`,
	})
	c.Status = s.seededStatus(c.ID)
	s.st.Containers[c.ID] = c
	return c.ID, nil
}

// Container returns a container.
func (s *Server) Container(id string) (Container, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.st.Containers[id]; c != nil {
		return c.clone(), true
	}
	return Container{}, false
}

// Containers returns every container in creation order.
func (s *Server) Containers() []Container {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Container
	for _, c := range sorted(s.st.Containers, func(c *Container) uint64 { return c.seq }, func(c *Container) string { return c.ID }) {
		out = append(out, c.clone())
	}
	return out
}

// containerSnapshot renders a container for the deployer. The caller holds
// the lock.
func (st *State) containerSnapshot(snap *ServiceSnapshot, c *Container) {
	snap.Name = c.Name
	// (fake) The engine names a container's objects as an application's.
	snap.KubernetesName = "app-z" + shortID(c.ID)
	snap.DeploymentRequestID = c.Status.RequestID
	snap.Ports = clonePorts(c.Ports)
	snap.AnnotationsGroups = st.attachedGroups(c.AnnotationsGroupIDs)
	snap.Image = c.ImageName + ":" + c.Tag
	if r := st.Registries[c.RegistryID]; r != nil {
		snap.Image = fmt.Sprintf("%s/%s:%s", trimScheme(r.URL), c.ImageName, c.Tag)
	}
}
