package qoveryapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Service kinds in a ServiceSnapshot.
const (
	kindHelm        = "HELM"
	kindApplication = "APPLICATION"
	kindContainer   = "CONTAINER"
)

const (
	stateReady            = "READY"
	stateDeploymentQueued = "DEPLOYMENT_QUEUED"
	stateDeploying        = "DEPLOYING"
	stateDeployed         = "DEPLOYED"
	stateDeploymentError  = "DEPLOYMENT_ERROR"
	stateDeleteQueued     = "DELETE_QUEUED"
	stateDeleting         = "DELETING"
	stateDeleteError      = "DELETE_ERROR"

	neverDeployed = "NEVER_DEPLOYED"
	outOfDate     = "OUT_OF_DATE"
	upToDate      = "UP_TO_DATE"

	actionDeploy = "DEPLOY"
	actionDelete = "DELETE"
)

// ServiceSnapshot is what the deployment engine renders for a service: its
// configuration with every variable resolved. Deployers receive it.
type ServiceSnapshot struct {
	// Kind is HELM, APPLICATION or CONTAINER.
	Kind string
	ID   string
	Name string
	// DeploymentRequestID identifies the deployment or deletion.
	DeploymentRequestID string

	EnvironmentID   string
	EnvironmentName string
	ProjectID       string
	OrganizationID  string
	ClusterID       string
	ClusterName     string
	Region          string
	// Namespace is the Kubernetes namespace of the environment, in the
	// engine's form "z<first 8 hex digits of the environment id>-<name>".
	Namespace string
	// KubernetesName is the name of the service's Kubernetes objects
	// ("app-z<first 8 hex digits of the id>" for an application).
	KubernetesName string

	// Variables are the variables visible to the service by key, the
	// most specific scope winning (service, environment, project,
	// built-in), secrets included.
	Variables map[string]string

	// Helm services only. The chart comes from RepositoryURL (a Helm
	// repository) or GitURL (a Git repository).
	ChartName                 string
	ChartVersion              string
	RepositoryURL             string
	GitURL                    string
	GitBranch                 string
	GitRootPath               string
	AllowClusterWideResources bool
	Arguments                 []string
	// ValuesFiles are the raw values files with every qovery.env.NAME
	// replaced by the variable's value.
	ValuesFiles []ValuesFile
	Set         [][2]string
	SetString   [][2]string
	SetJSON     [][2]string

	// Applications and containers.
	Ports             []Port
	AnnotationsGroups []AnnotationsGroup
	// GitCommitID is an application's commit.
	GitCommitID string
	// Image is a container's image, as registry/name:tag.
	Image string
}

func newServiceStatus() ServiceStatus {
	return ServiceStatus{State: stateReady, DeploymentStatus: neverDeployed, Action: actionDeploy, Detail: "NEVER"}
}

// visible is the status the status endpoint shows: the previous one while
// Options.StatusLag runs after an action.
func (s *ServiceStatus) visible() *ServiceStatus {
	if s.lagged != nil && time.Now().Before(s.lagUntil) {
		return s.lagged
	}
	return s
}

type statusDetailsJSON struct {
	Action    string `json:"action"`
	Status    string `json:"status"`
	SubAction string `json:"sub_action"`
}

type stepJSON struct {
	StepName    string `json:"step_name"`
	Status      string `json:"status"`
	DurationSec int    `json:"duration_sec"`
}

type stepsJSON struct {
	// TotalDurationSec is null while the action runs.
	TotalDurationSec          *int       `json:"total_duration_sec"`
	TotalComputingDurationSec int        `json:"total_computing_duration_sec"`
	Details                   []stepJSON `json:"details"`
}

type statusJSON struct {
	ID                      string            `json:"id"`
	State                   string            `json:"state"`
	ServiceDeploymentStatus string            `json:"service_deployment_status"`
	LastDeploymentDate      *time.Time        `json:"last_deployment_date"`
	IsPartLastDeployment    bool              `json:"is_part_last_deployment"`
	Steps                   *stepsJSON        `json:"steps,omitempty"`
	ExecutionID             string            `json:"execution_id,omitempty"`
	StatusDetails           statusDetailsJSON `json:"status_details"`
	DeploymentRequestID     *string           `json:"deployment_request_id"`
	DeploymentRequestsCount int               `json:"deployment_requests_count"`
	// Message is not in the API reference, which defines no reason on a
	// status. (fake) With Options.StatusMessages it carries the reason of
	// an *_ERROR state.
	Message string `json:"message,omitempty"`
}

func seconds(d time.Duration) int { return int(d.Round(time.Second) / time.Second) }

// renderStatus answers the status of service id. The caller holds the
// lock.
func (s *Server) renderStatus(id string, st *ServiceStatus) statusJSON {
	out := statusJSON{ID: id, State: st.State, ServiceDeploymentStatus: st.DeploymentStatus,
		IsPartLastDeployment: st.RequestsCount > 0, DeploymentRequestsCount: st.RequestsCount,
		StatusDetails: statusDetailsJSON{Action: st.Action, Status: st.Detail, SubAction: "NONE"}}
	if st.LastDeploymentDate != nil {
		d := *st.LastDeploymentDate
		out.LastDeploymentDate = &d
	}
	if st.RequestID != "" && !s.opts.NullDeploymentIDs {
		id := st.RequestID
		out.DeploymentRequestID = &id
		out.ExecutionID = st.ExecutionID
	}
	if st.RequestsCount > 0 {
		steps := &stepsJSON{Details: []stepJSON{}}
		var total, computing time.Duration
		for _, step := range st.Steps {
			steps.Details = append(steps.Details, stepJSON{StepName: step.Name, Status: step.Status, DurationSec: seconds(step.Duration)})
			total += step.Duration
			if step.Name != stepQueueing {
				computing += step.Duration
			}
		}
		if !st.running() {
			t := seconds(total)
			steps.TotalDurationSec = &t
		}
		steps.TotalComputingDurationSec = seconds(computing)
		out.Steps = steps
	}
	if s.opts.StatusMessages && strings.HasSuffix(st.State, "_ERROR") {
		out.Message = st.Message
	}
	return out
}

// Steps of an action (ServiceStepMetricNameEnum).
const (
	stepQueueing  = "DEPLOYMENT_QUEUEING"
	stepDeploying = "DEPLOYMENT"
)

// endStep records the end of the current phase of an action. The caller
// holds the lock.
func (st *ServiceStatus) endStep(name, status string) {
	t := now()
	st.Steps = append(st.Steps, StatusStep{Name: name, Status: status, Duration: t.Sub(st.phase)})
	st.phase = t
}

// requestDeployment deploys a service with its current configuration
// (commit is the Git commit an application deployment installs, "" for
// the deployed one). While another action runs, the deployment is queued
// behind it, as the real API does, and the answer is the queued request's
// status; with Options.ConflictWhileBusy, and always during a deletion,
// it is refused with 409. The caller holds the lock.
func (s *Server) requestDeployment(id string, st *ServiceStatus, commit string) (statusJSON, error) {
	if st.running() {
		if s.opts.ConflictWhileBusy || st.deleting() {
			return statusJSON{}, errorf(http.StatusConflict, "Operation is in progress: the service is %s", st.State)
		}
		q := queuedRequest{id: s.newID(), commit: commit, at: now()}
		st.queued = append(st.queued, q)
		return s.renderQueued(id, st, q), nil
	}
	return s.startAction(id, st, actionDeploy, commit, ""), nil
}

// queuedRequest is a deployment waiting for the running action of its
// service.
type queuedRequest struct {
	// id is the deployment_request_id the deployment runs under.
	id string
	// commit is the Git commit an application deployment installs, "" for
	// the deployed one.
	commit string
	// at is when it was requested.
	at time.Time
}

// renderQueued answers the status of a deployment just queued: its own
// request, queued, while the status endpoint still shows the running
// action. The caller holds the lock.
func (s *Server) renderQueued(id string, st *ServiceStatus, q queuedRequest) statusJSON {
	at := q.at
	out := statusJSON{ID: id, State: stateDeploymentQueued, ServiceDeploymentStatus: st.DeploymentStatus,
		LastDeploymentDate: &at, IsPartLastDeployment: true, DeploymentRequestsCount: st.RequestsCount + len(st.queued),
		StatusDetails: statusDetailsJSON{Action: actionDeploy, Status: "QUEUED", SubAction: "NONE"}}
	if !s.opts.NullDeploymentIDs {
		rid := q.id
		if s.opts.FrozenDeploymentIDs && st.RequestID != "" {
			rid = st.RequestID
		}
		out.DeploymentRequestID = &rid
	}
	return out
}

// decodeOptionalBody is decodeBody that accepts an empty body.
func decodeOptionalBody(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return badRequest("reading the request body: %v", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil
	}
	r.Body = io.NopCloser(strings.NewReader(string(b)))
	return decodeBody(r, v)
}

// startAction queues a deployment (action DEPLOY) or a deletion (DELETE)
// of a service and returns its new status. commit is the Git commit an
// application deployment installs ("" keeps the deployed one); requestID
// is the deployment request the action runs under, "" for a new one. A
// deletion drops the queued deployments. The caller holds the lock.
func (s *Server) startAction(id string, st *ServiceStatus, action, commit, requestID string) statusJSON {
	prev := st.clone()
	s.ops++
	op := s.ops
	t := now()
	st.op = op
	st.commit = commit
	st.RequestsCount++
	if st.RequestID == "" || !s.opts.FrozenDeploymentIDs {
		if requestID == "" {
			requestID = s.newID()
		}
		st.RequestID = requestID
		st.ExecutionID = fmt.Sprintf("%s-%d", id, st.RequestsCount)
	}
	st.LastDeploymentDate = &t
	st.phase, st.Steps = t, nil
	st.Message = ""
	st.Action, st.Detail = action, "QUEUED"
	st.State = stateDeploymentQueued
	if action == actionDelete {
		st.State = stateDeleteQueued
		st.queued = nil
	}
	st.lagged = nil
	if lag := s.opts.statusLag(); lag > 0 {
		st.lagged, st.lagUntil = &prev, t.Add(lag)
	}
	if !s.closed {
		s.wg.Add(1)
		go s.run(s.ctx, id, op, action)
	}
	return s.renderStatus(id, st)
}

// current returns the status of service id if op is still its action. The
// caller holds the lock.
func (s *Server) current(id string, op uint64) *ServiceStatus {
	st, _, _ := s.st.service(id)
	if st == nil || st.op != op {
		return nil
	}
	return st
}

// run drives one action through its phases.
func (s *Server) run(ctx context.Context, id string, op uint64, action string) {
	defer s.wg.Done()
	queued := s.opts.DeployTime / 4
	if !pause(ctx, queued) {
		return
	}
	s.mu.Lock()
	st := s.current(id, op)
	if st == nil {
		s.mu.Unlock()
		return
	}
	st.endStep(stepQueueing, "SUCCESS")
	st.Detail = "ONGOING"
	st.State = stateDeploying
	if action == actionDelete {
		st.State = stateDeleting
	}
	s.mu.Unlock()

	if !pause(ctx, s.opts.DeployTime-queued) {
		return
	}

	s.mu.Lock()
	st = s.current(id, op)
	if st == nil {
		s.mu.Unlock()
		return
	}
	snap, err := s.snapshot(id, action == actionDeploy)
	config := st.config
	deployer := s.deployer
	s.mu.Unlock()

	if err == nil && deployer != nil {
		if action == actionDelete {
			err = deployer.Delete(ctx, snap)
		} else {
			err = deployer.Deploy(ctx, snap)
		}
	}
	if ctx.Err() != nil {
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	st = s.current(id, op)
	if st == nil {
		return
	}
	if err != nil {
		st.endStep(stepDeploying, "ERROR")
	} else {
		st.endStep(stepDeploying, "SUCCESS")
	}
	switch {
	case action == actionDelete && err == nil:
		s.remove(id)
		return
	case action == actionDelete:
		st.State, st.Detail, st.Message = stateDeleteError, "ERROR", err.Error()
	case err != nil:
		st.State, st.Detail, st.Message = stateDeploymentError, "ERROR", err.Error()
	default:
		st.State, st.Detail = stateDeployed, "SUCCESS"
		st.deployed = config
		st.DeploymentStatus = upToDate
		if config != st.config {
			st.DeploymentStatus = outOfDate
		}
		if a := s.st.Applications[id]; a != nil && snap.GitCommitID != "" {
			a.GitRepository.DeployedCommitID = snap.GitCommitID
		}
	}
	if len(st.queued) > 0 && !s.closed {
		s.wg.Add(1)
		go s.dequeue(s.ctx, id, op)
	}
}

// dequeue starts the next queued deployment of a service a moment after
// the action op ended, unless another action began meanwhile.
func (s *Server) dequeue(ctx context.Context, id string, op uint64) {
	defer s.wg.Done()
	if !pause(ctx, s.opts.DeployTime/4) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.current(id, op)
	if st == nil || len(st.queued) == 0 || st.running() {
		return
	}
	q := st.queued[0]
	st.queued = st.queued[1:]
	s.startAction(id, st, actionDeploy, q.commit, q.id)
}

// pause waits d and reports whether ctx is still alive.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// remove deletes a service and its variables for good. The caller holds
// the lock.
func (s *Server) remove(id string) {
	delete(s.st.Helms, id)
	delete(s.st.Applications, id)
	delete(s.st.Containers, id)
	for vid, v := range s.st.Variables {
		if v.ParentID == id {
			delete(s.st.Variables, vid)
		}
	}
}

// resolved returns the variables visible from parentID by key, the most
// specific scope winning. The caller holds the lock.
func (st *State) resolved(parentID string) map[string]string {
	out := map[string]string{}
	chain := st.chain(parentID)
	for i := len(chain) - 1; i >= 0; i-- {
		// Built-in ones first, so that a user variable of the same
		// level shadows them.
		for _, builtIn := range []bool{true, false} {
			for _, v := range st.Variables {
				if v.ParentID == chain[i] && (v.Scope == scopeBuiltIn) == builtIn {
					out[v.Key] = v.Value
				}
			}
		}
	}
	return out
}

// engineError is a deployment failure worded as the engine words it.
type engineError string

func (e engineError) Error() string { return string(e) }

// envReference is "qovery.env." followed by a variable name, as the engine
// matches it in values files.
var envReference = regexp.MustCompile(`qovery\.env\.([A-Za-z0-9_.]*)`)

// substitute replaces every qovery.env.NAME in a values file verbatim, as
// the engine does; an unknown or built-in name fails the deployment.
func substitute(file ValuesFile, vars map[string]string, strict bool) (ValuesFile, error) {
	var err error
	file.Content = envReference.ReplaceAllStringFunc(file.Content, func(m string) string {
		name := strings.TrimPrefix(m, "qovery.env.")
		if strings.HasPrefix(name, "QOVERY_") {
			if err == nil && strict {
				err = engineError(fmt.Sprintf("Invalid variable %s in values file %s: built-in variables cannot be referenced, create an alias of %s instead", m, file.Name, name))
			}
			return m
		}
		v, ok := vars[name]
		if !ok {
			if err == nil && strict {
				err = engineError(fmt.Sprintf("Invalid variable %s in values file %s: the variable %s does not exist", m, file.Name, name))
			}
			return m
		}
		return v
	})
	return file, err
}

// tailscaleClusterKinds are cluster-wide objects the operator chart renders.
const tailscaleClusterKinds = "CustomResourceDefinition, ClusterRole, ClusterRoleBinding, IngressClass"

// snapshot renders a service for the deployer. strict makes the problems
// the engine would refuse (unknown variables, missing chart or version,
// cluster-wide resources not allowed) errors; a deletion is not strict.
// The caller holds the lock.
func (s *Server) snapshot(id string, strict bool) (ServiceSnapshot, error) {
	st := s.st
	_, envID, kind := st.service(id)
	snap := ServiceSnapshot{Kind: kind, ID: id, EnvironmentID: envID, Variables: st.resolved(id)}
	if env := st.Environments[envID]; env != nil {
		snap.EnvironmentName, snap.ProjectID, snap.ClusterID = env.Name, env.ProjectID, env.ClusterID
		snap.OrganizationID = st.environmentOrg(envID)
		snap.Namespace = "z" + shortID(env.ID) + "-" + env.Name
		if c := st.Clusters[env.ClusterID]; c != nil {
			snap.ClusterName, snap.Region = c.Name, c.Region
		}
	}
	if h := st.Helms[id]; h != nil {
		snap.DeploymentRequestID = h.Status.RequestID
		return snap, s.helmSnapshot(&snap, h, strict)
	}
	if c := st.Containers[id]; c != nil {
		st.containerSnapshot(&snap, c)
		return snap, nil
	}
	a := st.Applications[id]
	if a == nil {
		return snap, fmt.Errorf("service %s does not exist", id)
	}
	snap.Name = a.Name
	snap.KubernetesName = "app-z" + shortID(a.ID)
	snap.DeploymentRequestID = a.Status.RequestID
	snap.Ports = clonePorts(a.Ports)
	snap.AnnotationsGroups = st.attachedGroups(a.AnnotationsGroupIDs)
	snap.GitCommitID = a.GitRepository.DeployedCommitID
	if a.Status.commit != "" {
		snap.GitCommitID = a.Status.commit
	}
	return snap, nil
}

// attachedGroups returns copies of the annotations groups ids names.
func (st *State) attachedGroups(ids []string) []AnnotationsGroup {
	var out []AnnotationsGroup
	for _, gid := range ids {
		if g := st.AnnotationsGroups[gid]; g != nil {
			out = append(out, g.clone())
		}
	}
	return out
}

// trimScheme drops the scheme of a URL.
func trimScheme(u string) string {
	if _, rest, ok := strings.Cut(u, "://"); ok {
		return rest
	}
	return u
}

func (s *Server) helmSnapshot(snap *ServiceSnapshot, h *Helm, strict bool) error {
	snap.Name = h.Name
	snap.KubernetesName = h.Name
	snap.AllowClusterWideResources = h.AllowClusterWideResources
	snap.Arguments = slices.Clone(h.Arguments)
	snap.Set, snap.SetString, snap.SetJSON = slices.Clone(h.ValuesOverride.Set), slices.Clone(h.ValuesOverride.SetString), slices.Clone(h.ValuesOverride.SetJSON)
	var errs []error
	fail := func(err error) {
		if strict {
			errs = append(errs, err)
		}
	}
	switch {
	case h.Source.Repository != nil:
		src := h.Source.Repository
		snap.ChartName, snap.ChartVersion = src.ChartName, src.ChartVersion
		repo := s.st.HelmRepositories[src.RepositoryID]
		if repo == nil {
			fail(fmt.Errorf("helm repository %s does not exist", src.RepositoryID))
			break
		}
		snap.RepositoryURL = repo.URL
		if charts := catalog(repo.Kind, repo.URL); charts != nil {
			versions, ok := charts[src.ChartName]
			switch {
			case !ok:
				fail(fmt.Errorf("chart %s not found in helm repository %s", src.ChartName, repo.URL))
			case !slices.Contains(versions, src.ChartVersion):
				fail(fmt.Errorf("chart %s version %s not found in helm repository %s", src.ChartName, src.ChartVersion, repo.URL))
			case src.ChartName == TailscaleOperatorChart && !h.AllowClusterWideResources:
				fail(fmt.Errorf("the chart renders cluster-wide resources (%s) but allow_cluster_wide_resources is false", tailscaleClusterKinds))
			}
		}
	case h.Source.Git != nil:
		snap.GitURL, snap.GitBranch, snap.GitRootPath = h.Source.Git.URL, h.Source.Git.Branch, h.Source.Git.RootPath
	}
	if f := h.ValuesOverride.File; f != nil && f.Raw != nil {
		for _, file := range f.Raw.Values {
			out, err := substitute(file, snap.Variables, strict)
			if err != nil {
				fail(err)
			}
			snap.ValuesFiles = append(snap.ValuesFiles, out)
		}
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// shortID is the first 8 hex digits of an id.
func shortID(id string) string {
	id = strings.ReplaceAll(id, "-", "")
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
