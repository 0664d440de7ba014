package qovery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// States (StateEnum) qtail looks at.
const (
	StateReady            = "READY"
	StateDeploymentQueued = "DEPLOYMENT_QUEUED"
	StateDeploying        = "DEPLOYING"
	StateDeployed         = "DEPLOYED"
	StateDeploymentError  = "DEPLOYMENT_ERROR"
	StateDeleteQueued     = "DELETE_QUEUED"
	StateDeleting         = "DELETING"
	StateDeleted          = "DELETED"
	StateDeleteError      = "DELETE_ERROR"
	StateCanceled         = "CANCELED"
	// StateRecap is in the API's StateEnum without a documented meaning.
	// The official provider takes it for an unexpected state, neither
	// success nor failure; so does WaitForDeployment (see RecapReads).
	StateRecap = "RECAP"
)

// Service deployment statuses: whether the running version matches the
// configuration.
const (
	NeverDeployed = "NEVER_DEPLOYED"
	OutOfDate     = "OUT_OF_DATE"
	UpToDate      = "UP_TO_DATE"
)

// Status is the deployment status of a service.
type Status struct {
	ID    string `json:"id"`
	State string `json:"state"`
	// ServiceDeploymentStatus is NEVER_DEPLOYED, OUT_OF_DATE or UP_TO_DATE.
	ServiceDeploymentStatus string        `json:"service_deployment_status"`
	LastDeploymentDate      *time.Time    `json:"last_deployment_date,omitempty"`
	IsPartLastDeployment    bool          `json:"is_part_last_deployment"`
	StatusDetails           StatusDetails `json:"status_details"`
	// Steps are the steps of the last action, when the API gives them.
	Steps *Steps `json:"steps,omitempty"`
	// DeploymentRequestID is required but nullable in the API reference,
	// which does not say what it identifies: the waits do not rely on it
	// alone (see WaitOptions).
	DeploymentRequestID     *string `json:"deployment_request_id"`
	DeploymentRequestsCount int     `json:"deployment_requests_count"`
	// ExecutionID identifies the execution of the last action; the
	// console shows its logs (see ConsoleDeploymentURL).
	ExecutionID string `json:"execution_id,omitempty"`
	// Message is not part of the API's Status, which gives no reason for
	// a failure (the console's deployment logs do). A server that sends a
	// "message" member fills it.
	Message string `json:"message,omitempty"`
}

// Steps are the steps of an action (ServiceStepMetrics).
type Steps struct {
	// TotalDurationSec is nil while the action runs.
	TotalDurationSec          *int   `json:"total_duration_sec"`
	TotalComputingDurationSec int    `json:"total_computing_duration_sec"`
	Details                   []Step `json:"details"`
}

// Step is one step of an action.
type Step struct {
	// StepName is REGISTRY_CREATE_REPOSITORY, GIT_CLONE, BUILD_QUEUEING,
	// BUILD, DEPLOYMENT_QUEUEING, DEPLOYMENT, ROUTER_DEPLOYMENT,
	// MIRROR_IMAGE or EXECUTING.
	StepName string `json:"step_name"`
	// Status is SUCCESS, ERROR, CANCEL or SKIP.
	Status      string `json:"status"`
	DurationSec int    `json:"duration_sec"`
}

// FailedStep returns the first step that ended in ERROR (or was
// canceled), nil when there is none or the status has no steps.
func (s *Status) FailedStep() *Step {
	if s == nil || s.Steps == nil {
		return nil
	}
	for i := range s.Steps.Details {
		if st := &s.Steps.Details[i]; st.Status == "ERROR" || st.Status == "CANCEL" {
			return st
		}
	}
	return nil
}

// StatusDetails says what the last action was and how it went.
type StatusDetails struct {
	// Action is DEPLOY, DELETE, RESTART, STOP or UNKNOWN.
	Action string `json:"action"`
	// Status is QUEUED, ONGOING, SUCCESS, ERROR, EXECUTING, CANCELED,
	// CANCELING or NEVER.
	Status    string `json:"status"`
	SubAction string `json:"sub_action,omitempty"`
}

// HelmDeployRequest is the optional body of a Helm deployment.
// ChartVersion and GitCommitID are mutually exclusive.
type HelmDeployRequest struct {
	ChartVersion              string `json:"chart_version,omitempty"`
	GitCommitID               string `json:"git_commit_id,omitempty"`
	ValuesOverrideGitCommitID string `json:"values_override_git_commit_id,omitempty"`
}

type deployRequest struct {
	GitCommitID string `json:"git_commit_id"`
}

type containerDeployRequest struct {
	ImageTag string `json:"image_tag"`
}

func (c *Client) action(ctx context.Context, path string, body any) (*Status, error) {
	var out Status
	if err := c.do(ctx, http.MethodPost, path, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeployHelm deploys a Helm service. The API asks for the chart version
// to deploy (for a chart from a Helm repository) or the Git commit (for a
// chart from Git); when req is nil, the service is read and its pinned
// chart version is sent, and a chart from Git is deployed at the head of
// its branch (no body). The API answers 202 with the new status, or 409
// while another action on the service runs.
func (c *Client) DeployHelm(ctx context.Context, id string, req *HelmDeployRequest) (*Status, error) {
	if req == nil {
		h, err := c.GetHelm(ctx, id)
		if err != nil {
			return nil, err
		}
		if req = h.DeployRequest(); req == nil {
			return c.action(ctx, pathf("/helm/%s/deploy", id), nil)
		}
	}
	return c.action(ctx, pathf("/helm/%s/deploy", id), req)
}

// DeployRequest returns the request that deploys the service as
// configured: its pinned chart version, or nil for a chart from Git (the
// head of its branch).
func (h *Helm) DeployRequest() *HelmDeployRequest {
	if r := h.Source.Repository; r != nil {
		return &HelmDeployRequest{ChartVersion: r.ChartVersion}
	}
	return nil
}

// RedeployHelm redeploys a Helm service with its current configuration.
func (c *Client) RedeployHelm(ctx context.Context, id string) (*Status, error) {
	return c.action(ctx, pathf("/helm/%s/redeploy", id), nil)
}

// status reads the deployment status of the service at path. A 404 is
// read again before it is believed, as for the service itself (see
// getObject).
func (c *Client) status(ctx context.Context, path string) (*Status, error) {
	var out Status
	// A 404 that stays is the answer: a status has no parent to confirm
	// it with. (A named function, not a literal in the if: coverage
	// counts nothing after a function literal on the if's line.)
	asIs := func(_ context.Context, err error) error { return err }
	if err := c.getObject(ctx, path, &out, asIs); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetHelmStatus reads the deployment status of a Helm service.
func (c *Client) GetHelmStatus(ctx context.Context, id string) (*Status, error) {
	return c.status(ctx, pathf("/helm/%s/status", id))
}

// DeployApplication deploys an application at a Git commit (for the running
// one, GitRepository.DeployedCommitID).
func (c *Client) DeployApplication(ctx context.Context, id, gitCommitID string) (*Status, error) {
	return c.action(ctx, pathf("/application/%s/deploy", id), deployRequest{GitCommitID: gitCommitID})
}

// RedeployApplication redeploys an application with its current
// configuration, which applies changed annotations groups.
func (c *Client) RedeployApplication(ctx context.Context, id string) (*Status, error) {
	return c.action(ctx, pathf("/application/%s/redeploy", id), nil)
}

// GetApplicationStatus reads the deployment status of an application.
func (c *Client) GetApplicationStatus(ctx context.Context, id string) (*Status, error) {
	return c.status(ctx, pathf("/application/%s/status", id))
}

// DeployContainer deploys a container at an image tag (for the running
// one, Container.Tag).
func (c *Client) DeployContainer(ctx context.Context, id, imageTag string) (*Status, error) {
	return c.action(ctx, pathf("/container/%s/deploy", id), containerDeployRequest{ImageTag: imageTag})
}

// RedeployContainer redeploys a container with its current configuration,
// which applies changed annotations groups.
func (c *Client) RedeployContainer(ctx context.Context, id string) (*Status, error) {
	return c.action(ctx, pathf("/container/%s/redeploy", id), nil)
}

// GetContainerStatus reads the deployment status of a container.
func (c *Client) GetContainerStatus(ctx context.Context, id string) (*Status, error) {
	return c.status(ctx, pathf("/container/%s/status", id))
}

// ConsoleURL is the Qovery console.
const ConsoleURL = "https://console.qovery.com"

// ConsoleDeploymentURL returns the page of the Qovery console that shows a
// service's deployments, or with an executionID (Status.ExecutionID) the
// logs of that deployment. The console names every kind of service the
// same way: /organization/ORG/project/PROJECT/environment/ENV/service/
// SERVICE/deployments[/logs/EXECUTION].
func ConsoleDeploymentURL(orgID, projectID, envID, serviceID, executionID string) string {
	u := ConsoleURL + pathf("/organization/%s/project/%s/environment/%s/service/%s/deployments", orgID, projectID, envID, serviceID)
	if executionID != "" {
		u += pathf("/logs/%s", executionID)
	}
	return u
}

// IsFinalState reports whether a state ends an action: anything but a
// queued or running state (*_QUEUED, QUEUED, *ING, WAITING_*). RECAP is
// final here, but WaitForDeployment does not take it for an outcome (see
// RecapReads).
func IsFinalState(state string) bool {
	// Plain ifs rather than a switch, here and in the rest of the
	// package: coverage counts the conditions of an if, not those of a
	// case, and mutation testing goes by coverage.
	if state == "" || state == "QUEUED" || strings.HasSuffix(state, "_QUEUED") {
		return false
	}
	return !strings.HasSuffix(state, "ING") && !strings.HasPrefix(state, "WAITING_")
}

// DefaultPollInterval is how often the waits read a status by default.
const DefaultPollInterval = 5 * time.Second

// DefaultMaxStale is how long, by default, a final state that looks like
// the one read before an action is taken for the previous outcome.
const DefaultMaxStale = 30 * time.Second

// WaitOptions tunes WaitForDeployment and WaitForDeletion.
type WaitOptions struct {
	// PollInterval is the time between two reads, DefaultPollInterval
	// when zero.
	PollInterval time.Duration
	// Since is the status read just before the action was triggered. For
	// a few seconds after an action the API may still report the final
	// state of the previous one, so a final state counts as the action's
	// outcome only once it shows that a new action ran:
	//   - a deployment_request_id or execution_id other than Since's
	//     (when both statuses carry one: the API may leave them null, or
	//     keep them from one action to the next),
	//   - a last_deployment_date later than Since's,
	//   - or, when Since's state was final, a running state (queued,
	//     deploying...) read since the wait began.
	// A final state that shows none of these stops being taken for the
	// previous outcome MaxStale after the wait began. Nil takes the first
	// final state.
	//
	// When an action runs at the trigger and the new one is queued behind
	// it (the API may answer 202 rather than 409), the running action's end
	// is told from the queued one's only if Since was read while it ran,
	// or Trigger tells.
	Since *Status
	// Trigger is the answer of the request that triggered the action (202
	// and a status: the action's own, queued or started). When it carries
	// a deployment_request_id other than Since's, only a status with that
	// id is the action's (a status without an id falls back to the rules
	// of Since), so neither the previous action's final state nor the end
	// of an action it was queued behind is taken for its outcome. Without
	// a usable id, its last_deployment_date, when it is later than
	// Since's and the status has one, tells: a status of an earlier date
	// is not the action's.
	Trigger *Status
	// MaxStale bounds how long a final state that looks like Since's is
	// treated as the previous outcome, DefaultMaxStale when zero.
	MaxStale time.Duration
	// Progress, when set, is told the state read at each poll that does
	// not end the wait.
	Progress func(state string)
}

func (o WaitOptions) interval() time.Duration {
	if o.PollInterval <= 0 {
		return DefaultPollInterval
	}
	return o.PollInterval
}

// tracker tells the statuses of the triggered action from stale ones, over
// the reads of one wait (see WaitOptions.Since and WaitOptions.Trigger).
type tracker struct {
	since *Status
	// request is the triggered action's deployment_request_id, "" when
	// the trigger's answer does not tell it from Since's.
	request string
	// requested is the trigger's last_deployment_date, nil when unknown.
	requested *time.Time
	start     time.Time
	max       time.Duration
	// running is set once a running state was read after a final Since.
	running bool
}

func (o WaitOptions) tracker() *tracker {
	t := &tracker{since: o.Since, start: time.Now(), max: o.MaxStale}
	if t.max <= 0 {
		t.max = DefaultMaxStale
	}
	if tr := o.Trigger; tr != nil {
		if id := tr.DeploymentRequestID; id != nil && *id != "" &&
			(o.Since == nil || o.Since.DeploymentRequestID == nil || *o.Since.DeploymentRequestID != *id) {
			t.request = *id
		}
		// A date no later than Since's tells nothing (the answer may be
		// the status as it was).
		if d := tr.LastDeploymentDate; d != nil && (o.Since == nil || o.Since.LastDeploymentDate == nil || d.After(*o.Since.LastDeploymentDate)) {
			t.requested = d
		}
	}
	return t
}

// fresh reports whether s, a status read during the wait, describes the
// triggered action.
func (t *tracker) fresh(s *Status) bool {
	if t.request != "" && s.DeploymentRequestID != nil {
		return *s.DeploymentRequestID == t.request
	}
	if t.requested != nil && s.LastDeploymentDate != nil {
		return !s.LastDeploymentDate.Before(*t.requested)
	}
	prev := t.since
	if prev == nil {
		return true
	}
	if !IsFinalState(s.State) && IsFinalState(prev.State) {
		t.running = true
	}
	if prev.DeploymentRequestID != nil && s.DeploymentRequestID != nil && *prev.DeploymentRequestID != *s.DeploymentRequestID {
		return true
	}
	if prev.ExecutionID != "" && s.ExecutionID != "" && prev.ExecutionID != s.ExecutionID {
		return true
	}
	if s.LastDeploymentDate != nil && (prev.LastDeploymentDate == nil || s.LastDeploymentDate.After(*prev.LastDeploymentDate)) {
		return true
	}
	return t.running || time.Since(t.start) >= t.max
}

// DeploymentError is a deployment or deletion that ended in failure.
type DeploymentError struct {
	// ServiceID is the status id (the service's).
	ServiceID string
	// State is the final state, such as DEPLOYMENT_ERROR.
	State string
	// DeploymentRequestID identifies the failed request, when known.
	DeploymentRequestID string
	// ExecutionID identifies the failed execution, when known: the
	// console shows its logs (ConsoleDeploymentURL).
	ExecutionID string
	// FailedStep is the step that failed, such as DEPLOYMENT or BUILD,
	// when the status says.
	FailedStep string
	// Reason is the server's explanation, when it gives one. The API's
	// Status has none: the reason is in the deployment logs.
	Reason string
}

func (e *DeploymentError) Error() string {
	msg := fmt.Sprintf("qovery: service %s ended in %s", e.ServiceID, e.State)
	if e.State == StateRecap {
		msg += ", a state the API does not document as a success or a failure"
	}
	var about []string
	if e.FailedStep != "" {
		about = append(about, "failed step "+e.FailedStep)
	}
	if e.DeploymentRequestID != "" {
		about = append(about, "deployment request "+e.DeploymentRequestID)
	}
	if e.ExecutionID != "" {
		about = append(about, "execution "+e.ExecutionID)
	}
	if len(about) > 0 {
		msg += " (" + strings.Join(about, ", ") + ")"
	}
	if e.Reason != "" {
		return msg + ": " + e.Reason
	}
	return msg + "; the API gives no reason: see the deployment logs in the Qovery console"
}

// Failure returns the failure that s describes, for a status in a final
// *_ERROR or CANCELED state.
func (s *Status) Failure() *DeploymentError { return newDeploymentError(s) }

func newDeploymentError(s *Status) *DeploymentError {
	e := &DeploymentError{ServiceID: s.ID, State: s.State, ExecutionID: s.ExecutionID, Reason: s.Message}
	if s.DeploymentRequestID != nil {
		e.DeploymentRequestID = *s.DeploymentRequestID
	}
	if step := s.FailedStep(); step != nil {
		e.FailedStep = step.StepName
	}
	return e
}

// RecapReads is how many reads in a row of the triggered action in the
// RECAP state end a wait as a failure. RECAP has no documented meaning:
// the official provider treats it as unexpected (its environment wait
// fails on it, and its service wait re-checks a final state other than
// the one it waits for a few times before failing). qtail does the same
// rather than take it for a success: it reads RECAP as not final yet, in
// case it is a passing state, and fails if it stays.
const RecapReads = 5

// WaitForDeployment reads the status with get until the triggered action
// reaches a final state (see IsFinalState, WaitOptions.Since and
// WaitOptions.Trigger) and returns that status. A final *_ERROR or
// CANCELED state is returned along with a *DeploymentError, and so is a
// RECAP state read RecapReads times in a row; other final states
// (DEPLOYED, STOPPED, ...) are returned with no error. The wait ends with
// the context.
func WaitForDeployment(ctx context.Context, get func(context.Context) (*Status, error), opts WaitOptions) (*Status, error) {
	t := opts.tracker()
	var last *Status
	recaps := 0
	for {
		s, err := get(ctx)
		if err != nil {
			return last, err
		}
		if s == nil {
			return last, errors.New("qovery: the status read returned nothing")
		}
		last = s
		fresh := t.fresh(s)
		if fresh && s.State == StateRecap {
			if recaps++; recaps >= RecapReads {
				return s, newDeploymentError(s)
			}
		} else {
			recaps = 0
		}
		if fresh && IsFinalState(s.State) && s.State != StateRecap {
			if strings.HasSuffix(s.State, "_ERROR") || s.State == StateCanceled {
				return s, newDeploymentError(s)
			}
			return s, nil
		}
		if opts.Progress != nil {
			opts.Progress(s.State)
		}
		if err := sleep(ctx, opts.interval()); err != nil {
			return last, fmt.Errorf("qovery: waiting for service %s to finish its deployment (last state %s): %w", s.ID, s.State, err)
		}
	}
}

// WaitForDeletion reads with get (a status read or a GET of the service)
// until it answers as for a deleted object, which means the deletion is
// over: 404, 403, or 400 saying the object does not exist. When get
// returns a *Status, a DELETE_ERROR state ends the wait with a
// *DeploymentError. The first opts, if any, applies.
//
// It is meant to follow a deletion the API accepted from the same token,
// so a 403 also ends the wait: the API answers 403 for deleted objects, and
// the token could reach this one a moment ago.
func WaitForDeletion[T any](ctx context.Context, get func(context.Context) (T, error), opts ...WaitOptions) error {
	var o WaitOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	t := o.tracker()
	for {
		v, err := get(ctx)
		var e *APIError
		if errors.As(err, &e) && (e.Status == http.StatusNotFound || e.Status == http.StatusForbidden || doesNotExist(e)) {
			return nil
		}
		if err != nil {
			return err
		}
		if s, ok := any(v).(*Status); ok && s != nil && t.fresh(s) && s.State == StateDeleteError {
			return newDeploymentError(s)
		}
		if err := sleep(ctx, o.interval()); err != nil {
			return fmt.Errorf("qovery: waiting for a deletion to finish: %w", err)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
