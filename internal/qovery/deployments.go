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
	// DeploymentRequestID identifies the last deployment request; nil
	// before the first one.
	DeploymentRequestID     *string `json:"deployment_request_id"`
	DeploymentRequestsCount int     `json:"deployment_requests_count"`
	ExecutionID             string  `json:"execution_id,omitempty"`
	// Message is why a deployment failed. The API reference defines no
	// reason field on a status (the console reads deployment logs); qtail's
	// fake API fills this optional field on *_ERROR states, and a server
	// that does not send it leaves it empty.
	Message string `json:"message,omitempty"`
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

func (c *Client) action(ctx context.Context, path string, body any) (*Status, error) {
	var out Status
	if err := c.do(ctx, http.MethodPost, path, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeployHelm deploys a Helm service; req may be nil. The API answers 202
// with the new status, or 409 while another action on the service runs.
func (c *Client) DeployHelm(ctx context.Context, id string, req *HelmDeployRequest) (*Status, error) {
	if req == nil {
		return c.action(ctx, pathf("/helm/%s/deploy", id), nil)
	}
	return c.action(ctx, pathf("/helm/%s/deploy", id), req)
}

// RedeployHelm redeploys a Helm service with its current configuration.
func (c *Client) RedeployHelm(ctx context.Context, id string) (*Status, error) {
	return c.action(ctx, pathf("/helm/%s/redeploy", id), nil)
}

// GetHelmStatus reads the deployment status of a Helm service.
func (c *Client) GetHelmStatus(ctx context.Context, id string) (*Status, error) {
	var out Status
	if err := c.do(ctx, http.MethodGet, pathf("/helm/%s/status", id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
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
	var out Status
	if err := c.do(ctx, http.MethodGet, pathf("/application/%s/status", id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// IsFinalState reports whether a state ends an action: anything but a
// queued or running state (*_QUEUED, QUEUED, *ING, WAITING_*).
func IsFinalState(state string) bool {
	switch {
	case state == "":
		return false
	case state == "QUEUED", strings.HasSuffix(state, "_QUEUED"):
		return false
	case strings.HasSuffix(state, "ING"), strings.HasPrefix(state, "WAITING_"):
		return false
	}
	return true
}

// DefaultPollInterval is how often the waits read a status by default.
const DefaultPollInterval = 5 * time.Second

// WaitOptions tunes WaitForDeployment and WaitForDeletion.
type WaitOptions struct {
	// PollInterval is the time between two reads, DefaultPollInterval
	// when zero.
	PollInterval time.Duration
	// Since is the status read just before the action was triggered. For
	// a few seconds after an action the API may still report the final
	// state of the previous deployment; a status that carries Since's
	// deployment request id (or, when neither has one, Since's last
	// deployment date) is that stale state and is not taken as the
	// outcome. Nil takes the first final state.
	Since *Status
}

func (o WaitOptions) interval() time.Duration {
	if o.PollInterval <= 0 {
		return DefaultPollInterval
	}
	return o.PollInterval
}

// stale reports whether s still describes the deployment of o.Since.
func (o WaitOptions) stale(s *Status) bool {
	prev := o.Since
	if prev == nil {
		return false
	}
	switch {
	case prev.DeploymentRequestID != nil && s.DeploymentRequestID != nil:
		return *prev.DeploymentRequestID == *s.DeploymentRequestID
	case prev.DeploymentRequestID != nil:
		// The request id never goes back to null: an older answer.
		return true
	case s.DeploymentRequestID != nil:
		return false
	}
	if prev.LastDeploymentDate == nil || s.LastDeploymentDate == nil {
		return prev.LastDeploymentDate == nil && s.LastDeploymentDate == nil && prev.State == s.State
	}
	return !s.LastDeploymentDate.After(*prev.LastDeploymentDate)
}

// DeploymentError is a deployment or deletion that ended in failure.
type DeploymentError struct {
	// ServiceID is the status id (the service's).
	ServiceID string
	// State is the final state, such as DEPLOYMENT_ERROR.
	State string
	// DeploymentRequestID identifies the failed request, when known.
	DeploymentRequestID string
	// Reason is the server's explanation, when it gives one.
	Reason string
}

func (e *DeploymentError) Error() string {
	msg := fmt.Sprintf("qovery: service %s ended in %s", e.ServiceID, e.State)
	if e.DeploymentRequestID != "" {
		msg += " (deployment request " + e.DeploymentRequestID + ")"
	}
	if e.Reason != "" {
		return msg + ": " + e.Reason
	}
	return msg + " with no reason given"
}

func newDeploymentError(s *Status) *DeploymentError {
	e := &DeploymentError{ServiceID: s.ID, State: s.State, Reason: s.Message}
	if s.DeploymentRequestID != nil {
		e.DeploymentRequestID = *s.DeploymentRequestID
	}
	return e
}

// WaitForDeployment reads the status with get until the triggered action
// reaches a final state (see IsFinalState and WaitOptions.Since) and
// returns that status. A final *_ERROR or CANCELED state is returned along
// with a *DeploymentError carrying the reason; other final states (DEPLOYED,
// STOPPED, ...) are returned with no error. The wait ends with the context.
func WaitForDeployment(ctx context.Context, get func(context.Context) (*Status, error), opts WaitOptions) (*Status, error) {
	var last *Status
	for {
		s, err := get(ctx)
		if err != nil {
			return last, err
		}
		if s == nil {
			return last, errors.New("qovery: the status read returned nothing")
		}
		last = s
		if IsFinalState(s.State) && !opts.stale(s) {
			if strings.HasSuffix(s.State, "_ERROR") || s.State == StateCanceled {
				return s, newDeploymentError(s)
			}
			return s, nil
		}
		if err := sleep(ctx, opts.interval()); err != nil {
			return last, fmt.Errorf("qovery: waiting for service %s to finish its deployment (last state %s): %w", s.ID, s.State, err)
		}
	}
}

// WaitForDeletion reads with get (a status read or a GET of the service)
// until it answers 404, which means the deletion is over. When get returns
// a *Status, a DELETE_ERROR state ends the wait with a *DeploymentError.
// The first opts, if any, applies.
//
// It is meant to follow a deletion the API accepted from the same token,
// so a 403 also ends the wait: the API answers 403 for some deleted
// objects, and the token could reach this one a moment ago.
func WaitForDeletion[T any](ctx context.Context, get func(context.Context) (T, error), opts ...WaitOptions) error {
	var o WaitOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	for {
		v, err := get(ctx)
		if IsNotFound(err) || StatusCode(err) == http.StatusForbidden {
			return nil
		}
		if err != nil {
			return err
		}
		if s, ok := any(v).(*Status); ok && s != nil && s.State == StateDeleteError && !o.stale(s) {
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
