package qoveryapi

import (
	"maps"
	"slices"
	"sort"
	"time"
)

// Organization is a seeded organization.
type Organization struct {
	ID        string
	Name      string
	Plan      string
	CreatedAt time.Time
	seq       uint64
}

// Project is a seeded project.
type Project struct {
	ID             string
	OrganizationID string
	Name           string
	Description    string
	CreatedAt      time.Time
	seq            uint64
}

// Cluster is a seeded cluster.
type Cluster struct {
	ID             string
	OrganizationID string
	Name           string
	Region         string
	CloudProvider  string
	CreatedAt      time.Time
	seq            uint64
}

// Environment is a seeded environment, bound to one cluster.
type Environment struct {
	ID        string
	ProjectID string
	ClusterID string
	Name      string
	Mode      string
	CreatedAt time.Time
	seq       uint64
}

// HelmRepository is an organization Helm repository. Config holds every
// credential sent, secrets included; responses show the non-secret ones.
type HelmRepository struct {
	ID                  string
	OrganizationID      string
	Name                string
	Kind                string
	Description         string
	URL                 string
	SkipTLSVerification bool
	Config              map[string]string
	CreatedAt           time.Time
	UpdatedAt           time.Time
	seq                 uint64
}

// HelmSource is where a Helm service's chart comes from: Repository or Git.
type HelmSource struct {
	Repository *HelmRepositorySource
	Git        *GitSource
}

// HelmRepositorySource is a chart of an organization Helm repository.
type HelmRepositorySource struct {
	RepositoryID string
	ChartName    string
	ChartVersion string
}

// GitSource is a chart or values read from a Git repository.
type GitSource struct {
	URL        string
	Branch     string
	RootPath   string
	GitTokenID *string
	// Provider is BITBUCKET, GITHUB or GITLAB (values files only).
	Provider string
}

// ValuesOverride is a Helm service's values_override.
type ValuesOverride struct {
	Set       [][2]string
	SetString [][2]string
	SetJSON   [][2]string
	// File is nil when the service has no values file section.
	File *ValuesFileSource
}

// ValuesFileSource holds the raw and Git values files.
type ValuesFileSource struct {
	// Raw is nil when no raw section was sent.
	Raw *RawValues
	Git *GitValues
}

// RawValues lists inline values files.
type RawValues struct {
	Values []ValuesFile
}

// ValuesFile is one values file.
type ValuesFile struct {
	Name    string
	Content string
}

// GitValues reads values files from Git.
type GitValues struct {
	Repository GitSource
	Paths      []string
}

// HelmPort is a port of a Helm service.
type HelmPort struct {
	ID               string
	Name             string
	InternalPort     int
	ExternalPort     *int
	Namespace        string
	Protocol         string
	IsDefault        bool
	ServiceName      string
	ServiceSelectors []Selector
}

// Selector is a label selector entry.
type Selector struct {
	Key   string
	Value string
}

// Helm is a Helm service.
type Helm struct {
	ID                        string
	EnvironmentID             string
	Name                      string
	Description               string
	TimeoutSec                int
	AutoPreview               bool
	AutoDeploy                bool
	Source                    HelmSource
	Arguments                 []string
	AllowClusterWideResources bool
	ValuesOverride            ValuesOverride
	Ports                     []HelmPort
	IconURI                   string
	BlueprintID               *string
	CreatedAt                 time.Time
	UpdatedAt                 time.Time
	Status                    ServiceStatus
	seq                       uint64
}

// Port is a port of an application.
type Port struct {
	ID                 string
	Name               string
	InternalPort       int
	ExternalPort       *int
	PubliclyAccessible bool
	IsDefault          bool
	// Protocol is HTTP (the default), GRPC, TCP or UDP.
	Protocol string
}

// Storage is a storage entry of an application.
type Storage struct {
	ID         string
	Type       string
	Size       int
	MountPoint string
}

// GitRepository is the Git repository of an application.
type GitRepository struct {
	Provider         string
	Owner            string
	Name             string
	URL              string
	Branch           string
	RootPath         string
	GitTokenID       *string
	DeployedCommitID string
}

// Application is an application: a workload built from a Git repository.
type Application struct {
	ID            string
	EnvironmentID string
	Name          string
	Workload
	GitRepository GitRepository
	CreatedAt     time.Time
	UpdatedAt     time.Time
	Status        ServiceStatus
	seq           uint64
}

// Container is a container service: a workload run from an image of an
// organization container registry.
type Container struct {
	ID            string
	EnvironmentID string
	Name          string
	Workload
	RegistryID string
	ImageName  string
	Tag        string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	Status     ServiceStatus
	seq        uint64
}

// ContainerRegistry is an organization container registry.
type ContainerRegistry struct {
	ID             string
	OrganizationID string
	Name           string
	// Kind is a ContainerRegistryKindEnum value, such as DOCKER_HUB.
	Kind string
	URL  string
	seq  uint64
}

// Variable is a variable or a secret. ParentID is the id of the service,
// environment or project it is defined on; built-in variables have Scope
// BUILT_IN and the object they describe as parent.
type Variable struct {
	ID                        string
	Key                       string
	Value                     string
	IsSecret                  bool
	Scope                     string
	ParentID                  string
	MountPath                 *string
	Description               *string
	EnableInterpolationInFile *bool
	SecretManagerAccessID     *string
	// OverriddenID is the variable of a higher scope that this one
	// overrides, "" for a plain variable.
	OverriddenID string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	seq          uint64
}

// Annotation is one annotation of a group.
type Annotation struct {
	Key   string
	Value string
}

// AnnotationsGroup is an organization annotations group.
type AnnotationsGroup struct {
	ID             string
	OrganizationID string
	Name           string
	Annotations    []Annotation
	Scopes         []string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	seq            uint64
}

// ServiceStatus is the deployment status of a service.
type ServiceStatus struct {
	// State is a StateEnum value: READY, DEPLOYMENT_QUEUED, DEPLOYING,
	// DEPLOYED, DEPLOYMENT_ERROR, DELETE_QUEUED, DELETING, DELETE_ERROR.
	State string
	// DeploymentStatus is NEVER_DEPLOYED, OUT_OF_DATE or UP_TO_DATE.
	DeploymentStatus string
	// Action and Detail are status_details.action and .status.
	Action string
	Detail string
	// RequestID is the last deployment request id, "" for none.
	RequestID string
	// RequestsCount counts the deployment requests.
	RequestsCount int
	// LastDeploymentDate is when the last action was requested.
	LastDeploymentDate *time.Time
	// Message is the reason of an *_ERROR state. The status endpoints
	// show it only with Options.StatusMessages.
	Message string
	// ExecutionID identifies the execution of the last action, "" before
	// the first one.
	ExecutionID string
	// Steps are the steps of the last action so far, in order.
	Steps []StatusStep

	// op identifies the running action; a background step whose op is
	// no longer current does nothing.
	op uint64
	// commit is the Git commit the running application deployment
	// installs, "" for the deployed one.
	commit string
	// config counts configuration changes; deployed is the count the last
	// successful deployment rendered.
	config, deployed uint64
	// lagUntil and lagged make the status endpoint report the previous
	// status for a while after an action (Options.StatusLag).
	lagUntil time.Time
	lagged   *ServiceStatus
	// queued holds the deployments waiting for the running action (see
	// Options.ConflictWhileBusy), in order.
	queued []queuedRequest
	// phase is when the current phase of the action began.
	phase time.Time
}

// StatusStep is one step of an action (steps.details of a status).
type StatusStep struct {
	// Name is DEPLOYMENT_QUEUEING or DEPLOYMENT.
	Name string
	// Status is SUCCESS or ERROR.
	Status   string
	Duration time.Duration
}

// running reports whether an action is queued or in progress.
func (s *ServiceStatus) running() bool {
	switch s.State {
	case stateDeploymentQueued, stateDeploying, stateDeleteQueued, stateDeleting:
		return true
	}
	return false
}

// deleting reports whether the service is being deleted.
func (s *ServiceStatus) deleting() bool {
	return s.State == stateDeleteQueued || s.State == stateDeleting
}

// changed records a configuration change.
func (s *ServiceStatus) changed() {
	s.config++
	if s.DeploymentStatus == upToDate {
		s.DeploymentStatus = outOfDate
	}
}

// State is everything the fake holds. Use it through Server.Do.
type State struct {
	Organizations     map[string]*Organization
	Projects          map[string]*Project
	Clusters          map[string]*Cluster
	Environments      map[string]*Environment
	HelmRepositories  map[string]*HelmRepository
	Helms             map[string]*Helm
	Applications      map[string]*Application
	Containers        map[string]*Container
	Registries        map[string]*ContainerRegistry
	Variables         map[string]*Variable
	AnnotationsGroups map[string]*AnnotationsGroup
	LabelsGroups      map[string]*LabelsGroup

	seq uint64
	// issued holds every id the fake handed out, deleted objects' too.
	issued map[string]bool
}

func newState() *State {
	return &State{
		Organizations:     map[string]*Organization{},
		Projects:          map[string]*Project{},
		Clusters:          map[string]*Cluster{},
		Environments:      map[string]*Environment{},
		HelmRepositories:  map[string]*HelmRepository{},
		Helms:             map[string]*Helm{},
		Applications:      map[string]*Application{},
		Containers:        map[string]*Container{},
		Registries:        map[string]*ContainerRegistry{},
		Variables:         map[string]*Variable{},
		AnnotationsGroups: map[string]*AnnotationsGroup{},
		LabelsGroups:      map[string]*LabelsGroup{},
		issued:            map[string]bool{},
	}
}

func (st *State) next() uint64 {
	st.seq++
	return st.seq
}

// sorted returns the values of m in creation order.
func sorted[T any](m map[string]*T, seq func(*T) uint64, id func(*T) string) []*T {
	out := slices.Collect(maps.Values(m))
	sort.Slice(out, func(i, j int) bool {
		a, b := seq(out[i]), seq(out[j])
		if a != b {
			return a < b
		}
		return id(out[i]) < id(out[j])
	})
	return out
}

// environmentOrg returns the organization id of an environment.
func (st *State) environmentOrg(envID string) string {
	env := st.Environments[envID]
	if env == nil {
		return ""
	}
	if p := st.Projects[env.ProjectID]; p != nil {
		return p.OrganizationID
	}
	return ""
}

// service returns the status, environment and kind of a Helm service, an
// application or a container.
func (st *State) service(id string) (*ServiceStatus, string, string) {
	if h := st.Helms[id]; h != nil {
		return &h.Status, h.EnvironmentID, kindHelm
	}
	if a := st.Applications[id]; a != nil {
		return &a.Status, a.EnvironmentID, kindApplication
	}
	if c := st.Containers[id]; c != nil {
		return &c.Status, c.EnvironmentID, kindContainer
	}
	return nil, "", ""
}

// workloadRef is an application or a container seen as a workload.
type workloadRef struct {
	id, envID, kind, name string
	w                     *Workload
	status                *ServiceStatus
	updated               *time.Time
}

// workloads returns every application and container.
func (st *State) workloads() []workloadRef {
	out := make([]workloadRef, 0, len(st.Applications)+len(st.Containers))
	for _, a := range st.Applications {
		out = append(out, workloadRef{a.ID, a.EnvironmentID, kindApplication, a.Name, &a.Workload, &a.Status, &a.UpdatedAt})
	}
	for _, c := range st.Containers {
		out = append(out, workloadRef{c.ID, c.EnvironmentID, kindContainer, c.Name, &c.Workload, &c.Status, &c.UpdatedAt})
	}
	return out
}

// workload returns the application or container id as a workload, or
// false.
func (st *State) workload(id string) (workloadRef, bool) {
	if a := st.Applications[id]; a != nil {
		return workloadRef{a.ID, a.EnvironmentID, kindApplication, a.Name, &a.Workload, &a.Status, &a.UpdatedAt}, true
	}
	if c := st.Containers[id]; c != nil {
		return workloadRef{c.ID, c.EnvironmentID, kindContainer, c.Name, &c.Workload, &c.Status, &c.UpdatedAt}, true
	}
	return workloadRef{}, false
}

// chain returns the ids whose variables are visible from parentID, most
// specific first: the service, its environment, its project.
func (st *State) chain(parentID string) []string {
	if _, envID, _ := st.service(parentID); envID != "" {
		return append([]string{parentID}, st.chain(envID)...)
	}
	if env := st.Environments[parentID]; env != nil {
		return []string{parentID, env.ProjectID}
	}
	if st.Projects[parentID] != nil {
		return []string{parentID}
	}
	return nil
}

// servicesSeeing returns the statuses of the services that see the
// variables of parentID.
func (st *State) servicesSeeing(parentID string) []*ServiceStatus {
	var out []*ServiceStatus
	for _, h := range st.Helms {
		if slices.Contains(st.chain(h.ID), parentID) {
			out = append(out, &h.Status)
		}
	}
	for _, w := range st.workloads() {
		if slices.Contains(st.chain(w.id), parentID) {
			out = append(out, w.status)
		}
	}
	return out
}

// Deep copies, so that readers never share memory with the server.

func cloneStrPtr(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneIntPtr(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneBoolPtr(p *bool) *bool {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func (g GitSource) clone() GitSource {
	g.GitTokenID = cloneStrPtr(g.GitTokenID)
	return g
}

func (v ValuesOverride) clone() ValuesOverride {
	out := ValuesOverride{
		Set:       slices.Clone(v.Set),
		SetString: slices.Clone(v.SetString),
		SetJSON:   slices.Clone(v.SetJSON),
	}
	if v.File != nil {
		f := &ValuesFileSource{}
		if v.File.Raw != nil {
			f.Raw = &RawValues{Values: slices.Clone(v.File.Raw.Values)}
		}
		if v.File.Git != nil {
			f.Git = &GitValues{Repository: v.File.Git.Repository.clone(), Paths: slices.Clone(v.File.Git.Paths)}
		}
		out.File = f
	}
	return out
}

func (s ServiceStatus) clone() ServiceStatus {
	if s.LastDeploymentDate != nil {
		d := *s.LastDeploymentDate
		s.LastDeploymentDate = &d
	}
	s.Steps = slices.Clone(s.Steps)
	s.queued = slices.Clone(s.queued)
	s.lagged = nil
	return s
}

func (h *Helm) clone() Helm {
	out := *h
	if h.Source.Repository != nil {
		r := *h.Source.Repository
		out.Source.Repository = &r
	}
	if h.Source.Git != nil {
		g := h.Source.Git.clone()
		out.Source.Git = &g
	}
	out.Arguments = slices.Clone(h.Arguments)
	out.ValuesOverride = h.ValuesOverride.clone()
	out.Ports = make([]HelmPort, len(h.Ports))
	for i, p := range h.Ports {
		p.ExternalPort = cloneIntPtr(p.ExternalPort)
		p.ServiceSelectors = slices.Clone(p.ServiceSelectors)
		out.Ports[i] = p
	}
	out.BlueprintID = cloneStrPtr(h.BlueprintID)
	out.Status = h.Status.clone()
	return out
}

func clonePorts(ports []Port) []Port {
	out := make([]Port, len(ports))
	for i, p := range ports {
		p.ExternalPort = cloneIntPtr(p.ExternalPort)
		out[i] = p
	}
	return out
}

func (a *Application) clone() Application {
	out := *a
	out.Workload = a.Workload.clone()
	out.GitRepository.GitTokenID = cloneStrPtr(a.GitRepository.GitTokenID)
	out.Status = a.Status.clone()
	return out
}

func (c *Container) clone() Container {
	out := *c
	out.Workload = c.Workload.clone()
	out.Status = c.Status.clone()
	return out
}

func (v *Variable) clone() Variable {
	out := *v
	out.MountPath = cloneStrPtr(v.MountPath)
	out.Description = cloneStrPtr(v.Description)
	out.EnableInterpolationInFile = cloneBoolPtr(v.EnableInterpolationInFile)
	out.SecretManagerAccessID = cloneStrPtr(v.SecretManagerAccessID)
	return out
}

func (g *AnnotationsGroup) clone() AnnotationsGroup {
	out := *g
	out.Annotations = slices.Clone(g.Annotations)
	out.Scopes = slices.Clone(g.Scopes)
	return out
}

func (r *HelmRepository) clone() HelmRepository {
	out := *r
	out.Config = maps.Clone(r.Config)
	return out
}
