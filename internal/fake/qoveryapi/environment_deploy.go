package qoveryapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Action is one deployment request that the fake ran or runs: the action
// of one service, or of several for the environment's deploy-services
// action. Server.Actions lists them.
type Action struct {
	EnvironmentID string
	// RequestID is the deployment_request_id the services' statuses carry.
	RequestID string
	// Kind is DEPLOY or DELETE.
	Kind string
	// Services are the ids of the services it deploys, in the order they
	// started.
	Services []string
	// RequestedAt is when it was requested.
	RequestedAt time.Time
}

// Actions returns the deployment requests made so far, oldest first.
func (s *Server) Actions() []Action {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Action, len(s.actions))
	for i, a := range s.actions {
		out[i] = a
		out[i].Services = slices.Clone(a.Services)
	}
	return out
}

// recordAction records that service id starts under the deployment
// request reqID of envID. The caller holds the lock.
func (s *Server) recordAction(envID, reqID, kind, id string) {
	for i := len(s.actions) - 1; i >= 0; i-- {
		if a := &s.actions[i]; a.RequestID == reqID {
			if !slices.Contains(a.Services, id) {
				a.Services = append(a.Services, id)
			}
			return
		}
	}
	s.actions = append(s.actions, Action{EnvironmentID: envID, RequestID: reqID, Kind: kind, Services: []string{id}, RequestedAt: now()})
}

// The environment's queue (Options.QueuePerEnvironment): an environment
// runs one deployment request at a time, the services of one request
// together; the others wait in the order they were made.
type environmentQueue struct {
	// holder is the request that runs, "" for none; held counts its
	// services that still run.
	holder string
	held   int
	// line holds the requests waiting, oldest first, and waiting how many
	// of their services wait.
	line    []string
	waiting map[string]int
}

// enlist puts the request reqID of a service of envID in the
// environment's line, unless it is there or runs. The caller holds the
// lock.
func (s *Server) enlist(envID, reqID string) {
	if !s.opts.QueuePerEnvironment || envID == "" {
		return
	}
	q := s.envQueue(envID)
	q.waiting[reqID]++
	if q.holder != reqID && !slices.Contains(q.line, reqID) {
		q.line = append(q.line, reqID)
	}
}

// envQueue returns the queue of envID. The caller holds the lock.
func (s *Server) envQueue(envID string) *environmentQueue {
	q := s.envQueues[envID]
	if q == nil {
		q = &environmentQueue{waiting: map[string]int{}}
		s.envQueues[envID] = q
	}
	return q
}

// acquire waits until the environment envID runs the request reqID of the
// action op of service id, and reports whether it does: false when ctx
// ends or the action is no longer the service's. The caller holds the
// lock, which the wait releases.
func (s *Server) acquire(ctx context.Context, envID, reqID, id string, op uint64) bool {
	q := s.envQueue(envID)
	for {
		if ctx.Err() != nil || s.current(id, op) == nil {
			s.leaveLine(q, reqID)
			return false
		}
		if q.holder == reqID || (q.holder == "" && len(q.line) > 0 && q.line[0] == reqID) {
			if q.holder == "" {
				q.holder, q.line = reqID, q.line[1:]
			}
			q.held++
			if q.waiting[reqID]--; q.waiting[reqID] <= 0 {
				delete(q.waiting, reqID)
			}
			return true
		}
		s.envCond.Wait()
	}
}

// leaveLine withdraws one waiting service of reqID; the request leaves
// the line with its last one. The caller holds the lock.
func (s *Server) leaveLine(q *environmentQueue, reqID string) {
	if q.waiting[reqID]--; q.waiting[reqID] > 0 {
		return
	}
	delete(q.waiting, reqID)
	if q.holder != reqID {
		q.line = slices.DeleteFunc(q.line, func(r string) bool { return r == reqID })
	}
	s.envCond.Broadcast()
}

// release ends one service of the running request of envID; the next
// request starts after its last one. The caller holds the lock.
func (s *Server) release(envID string) {
	q := s.envQueue(envID)
	if q.held--; q.held <= 0 {
		q.held = 0
		if q.waiting[q.holder] == 0 {
			q.holder = ""
		}
		s.envCond.Broadcast()
	}
}

type deployAllApplicationJSON struct {
	ApplicationID *string `json:"application_id"`
	GitCommitID   *string `json:"git_commit_id"`
}

type deployAllContainerJSON struct {
	ID       *string `json:"id"`
	ImageTag *string `json:"image_tag"`
}

type deployAllHelmJSON struct {
	ID                        *string `json:"id"`
	ChartVersion              *string `json:"chart_version"`
	GitCommitID               *string `json:"git_commit_id"`
	ValuesOverrideGitCommitID *string `json:"values_override_git_commit_id"`
}

// deployAllRequestJSON is a DeployAllRequest.
type deployAllRequestJSON struct {
	Applications []deployAllApplicationJSON `json:"applications"`
	Containers   []deployAllContainerJSON   `json:"containers"`
	Helms        []deployAllHelmJSON        `json:"helms"`
	Jobs         []json.RawMessage          `json:"jobs"`
	Databases    []json.RawMessage          `json:"databases"`
	Terraforms   []json.RawMessage          `json:"terraforms"`
}

// environmentStatusJSON is an EnvironmentStatus.
type environmentStatusJSON struct {
	ID                               string     `json:"id"`
	State                            string     `json:"state"`
	LastDeploymentDate               *time.Time `json:"last_deployment_date"`
	LastDeploymentState              string     `json:"last_deployment_state"`
	LastDeploymentID                 *string    `json:"last_deployment_id"`
	TotalDeploymentDurationInSeconds *int       `json:"total_deployment_duration_in_seconds"`
	Origin                           string     `json:"origin"`
	TriggeredBy                      *string    `json:"triggered_by"`
	DeploymentStatus                 string     `json:"deployment_status"`
	DeploymentRequestID              *string    `json:"deployment_request_id"`
	Metrics                          []any      `json:"metrics"`
}

// batchService is one service of a deploy-services request, checked.
type batchService struct {
	id     string
	st     *ServiceStatus
	commit string
	// apply makes the version it deploys the service's.
	apply func()
}

// deployServices answers POST /environment/{environmentId}/service/deploy
// (deployAllServices): the services deploy in one request, whose
// deployment_request_id each service's status carries; one that runs an
// action already has the request queued behind it, as a deployment of its
// own would be. (fake) A request that names no service, a service twice,
// one of another environment, or jobs, databases or Terraform services
// (which the fake does not hold) is refused with 400; a service the fake
// never issued answers 404.
func (s *Server) deployServices(r *http.Request) (int, any, error) {
	envID := r.PathValue("environmentId")
	var req deployAllRequestJSON
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if len(req.Jobs)+len(req.Databases)+len(req.Terraforms) > 0 {
		return 0, nil, badRequest("jobs, databases and terraforms: the environment has none")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Environments[envID] == nil {
		return 0, nil, s.missing("environment", envID)
	}
	var services []batchService
	seen := map[string]bool{}
	add := func(field string, id *string, kind string) (*ServiceStatus, string, error) {
		if id == nil || *id == "" {
			return nil, "", badRequest("%s: required", field)
		}
		if seen[*id] {
			return nil, "", badRequest("%s: service %s is named twice", field, *id)
		}
		seen[*id] = true
		st, sEnv, sKind := s.st.service(*id)
		if st == nil || sKind != kind {
			return nil, "", s.missing(strings.ToLower(kind), *id)
		}
		if sEnv != envID {
			return nil, "", badRequest("%s: service %s is not in environment %s", field, *id, envID)
		}
		return st, *id, nil
	}
	for _, a := range req.Applications {
		st, id, err := add("applications.application_id", a.ApplicationID, kindApplication)
		if err != nil {
			return 0, nil, err
		}
		commit := ""
		if a.GitCommitID != nil {
			commit = *a.GitCommitID
		}
		if commit == "" && s.st.Applications[id].GitRepository.DeployedCommitID == "" && st.DeploymentStatus == neverDeployed {
			return 0, nil, badRequest("applications.git_commit_id: required: application %s was never deployed", id)
		}
		services = append(services, batchService{id: id, st: st, commit: commit})
	}
	for _, c := range req.Containers {
		st, id, err := add("containers.id", c.ID, kindContainer)
		if err != nil {
			return 0, nil, err
		}
		b := batchService{id: id, st: st}
		if c.ImageTag != nil && *c.ImageTag != "" {
			tag, ctr := *c.ImageTag, s.st.Containers[id]
			b.apply = func() {
				if ctr.Tag != tag {
					ctr.Tag, ctr.UpdatedAt = tag, now()
					ctr.Status.changed()
				}
			}
		} else if st.DeploymentStatus == neverDeployed {
			return 0, nil, badRequest("containers.image_tag: required: container %s was never deployed", id)
		}
		services = append(services, b)
	}
	for _, hr := range req.Helms {
		st, id, err := add("helms.id", hr.ID, kindHelm)
		if err != nil {
			return 0, nil, err
		}
		h := s.st.Helms[id]
		version, commit := "", ""
		if hr.ChartVersion != nil {
			version = *hr.ChartVersion
		}
		if hr.GitCommitID != nil {
			commit = *hr.GitCommitID
		}
		switch {
		case version != "" && commit != "":
			return 0, nil, badRequest("helms: chart_version and git_commit_id are mutually exclusive")
		case h.Source.Repository != nil && commit != "":
			return 0, nil, badRequest("helms.git_commit_id: the chart of helm %s comes from a helm repository: give chart_version", id)
		case h.Source.Git != nil && version != "":
			return 0, nil, badRequest("helms.chart_version: the chart of helm %s does not come from a helm repository", id)
		}
		b := batchService{id: id, st: st}
		if version != "" {
			b.apply = func() {
				if h.Source.Repository.ChartVersion != version {
					h.Source.Repository.ChartVersion, h.UpdatedAt = version, now()
					h.Status.changed()
				}
			}
		}
		services = append(services, b)
	}
	if len(services) == 0 {
		return 0, nil, badRequest("no service to deploy: give applications, containers or helms")
	}
	for _, b := range services {
		if b.st.deleting() || (b.st.running() && s.opts.ConflictWhileBusy) {
			return 0, nil, errorf(http.StatusConflict, "Operation is in progress: the service %s is %s", b.id, b.st.State)
		}
	}
	reqID := s.newID()
	at := now()
	for _, b := range services {
		if b.apply != nil {
			b.apply()
		}
		if b.st.running() {
			b.st.queued = append(b.st.queued, queuedRequest{id: reqID, commit: b.commit, at: at})
			continue
		}
		s.startAction(b.id, b.st, actionDeploy, b.commit, reqID)
	}
	out := environmentStatusJSON{ID: envID, State: stateDeploymentQueued, LastDeploymentDate: &at, LastDeploymentState: stateDeploymentQueued,
		Origin: "API", DeploymentStatus: outOfDate, Metrics: nil}
	if !s.opts.NullDeploymentIDs {
		rid := reqID
		out.DeploymentRequestID, out.LastDeploymentID = &rid, &rid
	}
	triggeredBy := fakeAuditing.TriggeredBy
	out.TriggeredBy = &triggeredBy
	return http.StatusAccepted, out, nil
}
