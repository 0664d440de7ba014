package qoveryapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Seeding: objects the API lets qtail read but not create.

// SeedOrganization adds an organization and returns its id.
func (s *Server) SeedOrganization(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := &Organization{ID: s.newID(), Name: name, Plan: "TEAM", CreatedAt: now(), seq: s.st.next()}
	s.st.Organizations[o.ID] = o
	return o.ID
}

// SeedProject adds a project to an organization and returns its id. The
// project gets the built-in variable QOVERY_PROJECT_ID.
func (s *Server) SeedProject(orgID, name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Organizations[orgID] == nil {
		return "", fmt.Errorf("organization %s does not exist", orgID)
	}
	p := &Project{ID: s.newID(), OrganizationID: orgID, Name: name, CreatedAt: now(), seq: s.st.next()}
	s.st.Projects[p.ID] = p
	s.addBuiltIn(p.ID, "QOVERY_PROJECT_ID", p.ID)
	return p.ID, nil
}

// SeedCluster adds an AWS cluster to an organization and returns its id.
func (s *Server) SeedCluster(orgID, name, region string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Organizations[orgID] == nil {
		return "", fmt.Errorf("organization %s does not exist", orgID)
	}
	c := &Cluster{ID: s.newID(), OrganizationID: orgID, Name: name, Region: region, CloudProvider: "AWS", CreatedAt: now(), seq: s.st.next()}
	s.st.Clusters[c.ID] = c
	return c.ID, nil
}

// SeedEnvironment adds a production environment to a project, on a cluster
// of the same organization, and returns its id. The environment gets the
// built-in variables QOVERY_ENVIRONMENT_ID and
// QOVERY_KUBERNETES_NAMESPACE_NAME.
func (s *Server) SeedEnvironment(projectID, clusterID, name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.st.Projects[projectID]
	if p == nil {
		return "", fmt.Errorf("project %s does not exist", projectID)
	}
	c := s.st.Clusters[clusterID]
	if c == nil || c.OrganizationID != p.OrganizationID {
		return "", fmt.Errorf("cluster %s does not exist in the project's organization", clusterID)
	}
	e := &Environment{ID: s.newID(), ProjectID: projectID, ClusterID: clusterID, Name: name, Mode: "PRODUCTION", CreatedAt: now(), seq: s.st.next()}
	s.st.Environments[e.ID] = e
	s.addBuiltIn(e.ID, "QOVERY_ENVIRONMENT_ID", e.ID)
	s.addBuiltIn(e.ID, "QOVERY_KUBERNETES_NAMESPACE_NAME", "z"+shortID(e.ID)+"-"+name)
	return e.ID, nil
}

// SeedApplication adds an application, deployed and up to date, to an
// environment and returns its id. Ports get ids; a port without protocol
// is HTTP. The application also has the members a real one has (cpu,
// memory, healthchecks, ...) so that edits must carry them over.
func (s *Server) SeedApplication(envID, name string, ports ...Port) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.seedable(envID, name); err != nil {
		return "", err
	}
	a := &Application{ID: s.newID(), EnvironmentID: envID, Name: name, CreatedAt: now(), seq: s.st.next()}
	a.UpdatedAt = a.CreatedAt
	a.Workload = s.seedWorkload(ports, map[string]string{
		"build_mode":      `"DOCKER"`,
		"dockerfile_path": `"Dockerfile"`,
		"icon_uri":        `"app://qovery-console/application"`,
	})
	a.GitRepository = GitRepository{Provider: "GITHUB", Owner: "acme", Name: name, URL: "https://github.com/acme/" + name + ".git",
		Branch: "main", RootPath: "/", DeployedCommitID: s.commitID()}
	a.Status = s.seededStatus(a.ID)
	s.st.Applications[a.ID] = a
	return a.ID, nil
}

// seedable checks that a service named name can be seeded in an
// environment. The caller holds the lock.
func (s *Server) seedable(envID, name string) error {
	if s.st.Environments[envID] == nil {
		return fmt.Errorf("environment %s does not exist", envID)
	}
	if s.st.nameTaken(envID, name, "") {
		return fmt.Errorf("a service named %q already exists in environment %s", name, envID)
	}
	return nil
}

// seedWorkload returns the shared members of a seeded application or
// container: ports with ids, no storage, a TCP probe on the first port and
// the usual resources; extra adds members (raw JSON). The caller holds the
// lock.
func (s *Server) seedWorkload(ports []Port, extra map[string]string) Workload {
	w := Workload{Ports: s.withPortIDs(ports), Storage: []Storage{}, AnnotationsGroupIDs: []string{}, LabelsGroupIDs: []string{}}
	probe := "null"
	if len(w.Ports) > 0 {
		probe = `{"type":{"tcp":{"port":` + strconv.Itoa(w.Ports[0].InternalPort) + `,"host":null}},"initial_delay_seconds":30,"period_seconds":10,"timeout_seconds":5,"success_threshold":1,"failure_threshold":3}`
	}
	w.Healthchecks = json.RawMessage(`{"readiness_probe":` + probe + `,"liveness_probe":` + probe + `}`)
	w.Extra = map[string]json.RawMessage{
		"description":           json.RawMessage(`""`),
		"cpu":                   json.RawMessage(`500`),
		"memory":                json.RawMessage(`512`),
		"gpu":                   json.RawMessage(`0`),
		"min_running_instances": json.RawMessage(`1`),
		"max_running_instances": json.RawMessage(`1`),
		"auto_preview":          json.RawMessage(`false`),
		"auto_deploy":           json.RawMessage(`true`),
		"arguments":             json.RawMessage(`[]`),
	}
	for k, v := range extra {
		w.Extra[k] = json.RawMessage(v)
	}
	return w
}

// seededStatus is the status of a seeded service: deployed once, up to
// date. The caller holds the lock.
func (s *Server) seededStatus(id string) ServiceStatus {
	t := now()
	return ServiceStatus{State: stateDeployed, DeploymentStatus: upToDate, Action: actionDeploy, Detail: "SUCCESS",
		RequestID: s.newID(), ExecutionID: id + "-1", RequestsCount: 1, LastDeploymentDate: &t,
		Steps: []StatusStep{{Name: stepQueueing, Status: "SUCCESS", Duration: 4 * time.Second}, {Name: stepDeploying, Status: "SUCCESS", Duration: 52 * time.Second}}}
}

func (s *Server) withPortIDs(ports []Port) []Port {
	out := clonePorts(ports)
	for i := range out {
		if out[i].ID == "" {
			out[i].ID = s.newID()
		}
		if out[i].Protocol == "" {
			out[i].Protocol = "HTTP"
		}
	}
	return out
}

// commitID returns a random 40-hex-digit commit id.
func (s *Server) commitID() string {
	return strings.ReplaceAll(s.newID()+s.newID(), "-", "")[:40]
}

func (s *Server) addBuiltIn(parentID, key, value string) {
	t := now()
	v := &Variable{ID: s.newID(), Key: key, Value: value, Scope: scopeBuiltIn, ParentID: parentID, CreatedAt: t, UpdatedAt: t, seq: s.st.next()}
	s.st.Variables[v.ID] = v
}

// Reading. Every reader returns a deep copy.

// Organization returns an organization.
func (s *Server) Organization(id string) (Organization, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.st.Organizations[id]; o != nil {
		return *o, true
	}
	return Organization{}, false
}

// HelmRepository returns an organization Helm repository, secrets
// included.
func (s *Server) HelmRepository(id string) (HelmRepository, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.st.HelmRepositories[id]; r != nil {
		return r.clone(), true
	}
	return HelmRepository{}, false
}

// HelmRepositories returns every Helm repository in creation order.
func (s *Server) HelmRepositories() []HelmRepository {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []HelmRepository
	for _, r := range sorted(s.st.HelmRepositories, func(r *HelmRepository) uint64 { return r.seq }, func(r *HelmRepository) string { return r.ID }) {
		out = append(out, r.clone())
	}
	return out
}

// Helm returns a Helm service.
func (s *Server) Helm(id string) (Helm, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.st.Helms[id]; h != nil {
		return h.clone(), true
	}
	return Helm{}, false
}

// Helms returns every Helm service in creation order.
func (s *Server) Helms() []Helm {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Helm
	for _, h := range sorted(s.st.Helms, func(h *Helm) uint64 { return h.seq }, func(h *Helm) string { return h.ID }) {
		out = append(out, h.clone())
	}
	return out
}

// Application returns an application.
func (s *Server) Application(id string) (Application, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.st.Applications[id]; a != nil {
		return a.clone(), true
	}
	return Application{}, false
}

// Variable returns a variable, secret value included.
func (s *Server) Variable(id string) (Variable, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.st.Variables[id]; v != nil {
		return v.clone(), true
	}
	return Variable{}, false
}

// Variables returns every variable, built-in ones included, in creation
// order.
func (s *Server) Variables() []Variable {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Variable
	for _, v := range sorted(s.st.Variables, func(v *Variable) uint64 { return v.seq }, func(v *Variable) string { return v.ID }) {
		out = append(out, v.clone())
	}
	return out
}

// ResolvedVariables returns the variables a service (or an environment or
// project) sees by key, as a deployment would resolve them.
func (s *Server) ResolvedVariables(parentID string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.resolved(parentID)
}

// AnnotationsGroup returns an annotations group.
func (s *Server) AnnotationsGroup(id string) (AnnotationsGroup, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.st.AnnotationsGroups[id]; g != nil {
		return g.clone(), true
	}
	return AnnotationsGroup{}, false
}

// AnnotationsGroups returns every annotations group in creation order.
func (s *Server) AnnotationsGroups() []AnnotationsGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []AnnotationsGroup
	for _, g := range sorted(s.st.AnnotationsGroups, func(g *AnnotationsGroup) uint64 { return g.seq }, func(g *AnnotationsGroup) string { return g.ID }) {
		out = append(out, g.clone())
	}
	return out
}

// Status returns the current deployment status of a Helm service or an
// application (never the stale one of Options.StatusLag).
func (s *Server) Status(serviceID string) (ServiceStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _, _ := s.st.service(serviceID)
	if st == nil {
		return ServiceStatus{}, false
	}
	return st.clone(), true
}

// Console actions: what a person does by hand. They go through the same
// bookkeeping as the API (OUT_OF_DATE, asynchronous deletion).

// UpdateHelmRepository changes a Helm repository (for example its URL).
func (s *Server) UpdateHelmRepository(id string, fn func(*HelmRepository)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.st.HelmRepositories[id]
	if r == nil {
		return fmt.Errorf("helm repository %s does not exist", id)
	}
	next := r.clone()
	fn(&next)
	next.ID, next.OrganizationID = r.ID, r.OrganizationID
	s.replaceHelmRepository(r, &next)
	return nil
}

// DeleteHelmRepository deletes a Helm repository at once.
func (s *Server) DeleteHelmRepository(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.HelmRepositories[id] == nil {
		return fmt.Errorf("helm repository %s does not exist", id)
	}
	delete(s.st.HelmRepositories, id)
	return nil
}

// UpdateHelm changes a Helm service's configuration; it becomes
// OUT_OF_DATE when something changed.
func (s *Server) UpdateHelm(id string, fn func(*Helm)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.st.Helms[id]
	if h == nil {
		return fmt.Errorf("helm %s does not exist", id)
	}
	next := h.clone()
	fn(&next)
	s.replaceHelm(h, &next)
	return nil
}

// SetHelmChartVersion changes the chart version of a Helm service whose
// chart comes from a Helm repository.
func (s *Server) SetHelmChartVersion(id, version string) error {
	var err error
	uerr := s.UpdateHelm(id, func(h *Helm) {
		if h.Source.Repository == nil {
			err = fmt.Errorf("helm %s does not use a helm repository", id)
			return
		}
		h.Source.Repository.ChartVersion = version
	})
	if uerr != nil {
		return uerr
	}
	return err
}

// SetHelmValues replaces a Helm service's values override.
func (s *Server) SetHelmValues(id string, v ValuesOverride) error {
	return s.UpdateHelm(id, func(h *Helm) { h.ValuesOverride = v.clone() })
}

// SetHelmRawValues replaces the raw values files of a Helm service.
func (s *Server) SetHelmRawValues(id string, files ...ValuesFile) error {
	return s.UpdateHelm(id, func(h *Helm) {
		if h.ValuesOverride.File == nil {
			h.ValuesOverride.File = &ValuesFileSource{}
		}
		h.ValuesOverride.File.Raw = &RawValues{Values: slices.Clone(files)}
	})
}

// SetHelmAllowClusterWideResources changes allow_cluster_wide_resources.
func (s *Server) SetHelmAllowClusterWideResources(id string, allow bool) error {
	return s.UpdateHelm(id, func(h *Helm) { h.AllowClusterWideResources = allow })
}

// DeleteService deletes a Helm service or an application as the API does:
// it goes through DELETE_QUEUED and DELETING, then disappears.
func (s *Server) DeleteService(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _, _ := s.st.service(id)
	if st == nil {
		return fmt.Errorf("service %s does not exist", id)
	}
	if !st.deleting() {
		s.startAction(id, st, actionDelete, "", "")
	}
	return nil
}

// Deploy deploys a Helm service, an application or a container with its
// current configuration, as the console's deploy button does: queued
// behind an action that runs (refused with Options.ConflictWhileBusy, and
// during a deletion).
func (s *Server) Deploy(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _, _ := s.st.service(id)
	if st == nil {
		return fmt.Errorf("service %s does not exist", id)
	}
	if _, err := s.requestDeployment(id, st, ""); err != nil {
		return fmt.Errorf("service %s: %w", id, err)
	}
	return nil
}

// CreateVariable adds a variable to a service, an environment or a project
// (scope HELM, APPLICATION, CONTAINER, ENVIRONMENT or PROJECT) and returns
// its id. Unlike the API it does not refuse a key that a higher scope
// defines.
func (s *Server) CreateVariable(scope, parentID, key, value string, secret bool) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.st.checkParent(scope, parentID); err != nil {
		return "", err
	}
	if s.st.keyTaken(scope, parentID, key, "") {
		return "", fmt.Errorf("variable %s already exists for %s %s", key, scope, parentID)
	}
	t := now()
	v := &Variable{ID: s.newID(), Key: key, Value: value, IsSecret: secret, Scope: scope, ParentID: parentID, CreatedAt: t, UpdatedAt: t, seq: s.st.next()}
	s.st.Variables[v.ID] = v
	s.st.variableChanged(parentID)
	return v.ID, nil
}

// SetVariableValue changes a variable's value.
func (s *Server) SetVariableValue(id, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.st.Variables[id]
	if v == nil {
		return fmt.Errorf("variable %s does not exist", id)
	}
	if v.Value != value {
		v.Value = value
		v.UpdatedAt = now()
		s.st.variableChanged(v.ParentID)
	}
	return nil
}

// DeleteVariable deletes a variable and its overrides.
func (s *Server) DeleteVariable(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.st.Variables[id]
	if v == nil {
		return fmt.Errorf("variable %s does not exist", id)
	}
	s.st.deleteVariable(v)
	return nil
}

// SetAnnotations replaces the annotations of a group.
func (s *Server) SetAnnotations(groupID string, annotations ...Annotation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.st.AnnotationsGroups[groupID]
	if g == nil {
		return fmt.Errorf("annotations group %s does not exist", groupID)
	}
	s.replaceAnnotationsGroup(g, g.Name, slices.Clone(annotations), slices.Clone(g.Scopes))
	return nil
}

// DeleteAnnotationsGroup deletes a group and detaches it from every
// application.
func (s *Server) DeleteAnnotationsGroup(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.AnnotationsGroups[id] == nil {
		return fmt.Errorf("annotations group %s does not exist", id)
	}
	s.removeAnnotationsGroup(id)
	return nil
}

// DetachAnnotationsGroup detaches a group from an application or a
// container.
func (s *Server) DetachAnnotationsGroup(serviceID, groupID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.st.workload(serviceID)
	if !ok {
		return fmt.Errorf("no application or container %s", serviceID)
	}
	if !slices.Contains(w.w.AnnotationsGroupIDs, groupID) {
		return fmt.Errorf("annotations group %s is not attached to %s %s", groupID, strings.ToLower(w.kind), serviceID)
	}
	w.w.AnnotationsGroupIDs = slices.DeleteFunc(w.w.AnnotationsGroupIDs, func(g string) bool { return g == groupID })
	*w.updated = now()
	w.status.changed()
	return nil
}

// AttachAnnotationsGroup attaches a group to an application or a
// container.
func (s *Server) AttachAnnotationsGroup(serviceID, groupID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.st.workload(serviceID)
	if !ok {
		return fmt.Errorf("no application or container %s", serviceID)
	}
	g := s.st.AnnotationsGroups[groupID]
	if g == nil || g.OrganizationID != s.st.environmentOrg(w.envID) {
		return fmt.Errorf("annotations group %s does not exist in the organization of %s %s", groupID, strings.ToLower(w.kind), serviceID)
	}
	if !slices.Contains(w.w.AnnotationsGroupIDs, groupID) {
		w.w.AnnotationsGroupIDs = append(w.w.AnnotationsGroupIDs, groupID)
		*w.updated = now()
		w.status.changed()
	}
	return nil
}

// SetApplicationPorts replaces the ports of an application; ports without
// an id get a new one.
func (s *Server) SetApplicationPorts(appID string, ports ...Port) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.st.Applications[appID]
	if a == nil {
		return fmt.Errorf("application %s does not exist", appID)
	}
	a.Ports = s.withPortIDs(ports)
	a.UpdatedAt = now()
	a.Status.changed()
	return nil
}

// Snapshot renders the service id as the deployer sees it at a
// deployment: what a seeded service, running from the start, runs.
func (s *Server) Snapshot(id string) (ServiceSnapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshot(id, false)
}
