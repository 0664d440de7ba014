package qovery

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/batch"
)

// Kinds of services in a ServiceDeploy.
const (
	ServiceHelm        = "helm"
	ServiceApplication = "application"
	ServiceContainer   = "container"
)

// ServiceDeploy is the deployment of one service with its current
// configuration.
type ServiceDeploy struct {
	// Kind is ServiceHelm, ServiceApplication or ServiceContainer.
	Kind string
	ID   string
	// EnvironmentID is the service's environment.
	EnvironmentID string
	// Helm is what a Helm service deploys (Helm.DeployRequest): its pinned
	// chart version, or nil for a chart from Git (the head of its
	// branch).
	Helm *HelmDeployRequest
}

// DeployAllRequest is the body of the environment's deploy-services action
// (deployAllServices): the services to deploy, each at a version, or, when
// the version is empty, at the one it runs (only for a service deployed
// before).
type DeployAllRequest struct {
	Applications []DeployAllApplication `json:"applications,omitempty"`
	Containers   []DeployAllContainer   `json:"containers,omitempty"`
	Helms        []DeployAllHelm        `json:"helms,omitempty"`
}

// DeployAllApplication is an application of a DeployAllRequest.
type DeployAllApplication struct {
	ApplicationID string `json:"application_id"`
	// GitCommitID is the commit to deploy, "" for the deployed one.
	GitCommitID string `json:"git_commit_id,omitempty"`
}

// DeployAllContainer is a container of a DeployAllRequest.
type DeployAllContainer struct {
	ID string `json:"id"`
	// ImageTag is the tag to deploy, "" for the deployed one.
	ImageTag string `json:"image_tag,omitempty"`
}

// DeployAllHelm is a Helm service of a DeployAllRequest.
type DeployAllHelm struct {
	ID                        string `json:"id"`
	ChartVersion              string `json:"chart_version,omitempty"`
	GitCommitID               string `json:"git_commit_id,omitempty"`
	ValuesOverrideGitCommitID string `json:"values_override_git_commit_id,omitempty"`
}

// EnvironmentStatus is the status of an environment, as the environment's
// actions answer it.
type EnvironmentStatus struct {
	ID                  string     `json:"id"`
	State               string     `json:"state"`
	LastDeploymentDate  *time.Time `json:"last_deployment_date"`
	LastDeploymentState string     `json:"last_deployment_state"`
	LastDeploymentID    *string    `json:"last_deployment_id"`
	// DeploymentRequestID is the request of the action just triggered,
	// which the status of each of its services carries.
	DeploymentRequestID *string `json:"deployment_request_id"`
	// DeploymentStatus is NEVER_DEPLOYED, UP_TO_DATE or OUT_OF_DATE.
	DeploymentStatus string `json:"deployment_status,omitempty"`
	Origin           string `json:"origin,omitempty"`
}

// Add adds s to the request.
func (r *DeployAllRequest) Add(s ServiceDeploy) {
	switch s.Kind {
	case ServiceApplication:
		r.Applications = append(r.Applications, DeployAllApplication{ApplicationID: s.ID})
	case ServiceContainer:
		r.Containers = append(r.Containers, DeployAllContainer{ID: s.ID})
	default:
		h := DeployAllHelm{ID: s.ID}
		if s.Helm != nil {
			h.ChartVersion, h.GitCommitID, h.ValuesOverrideGitCommitID = s.Helm.ChartVersion, s.Helm.GitCommitID, s.Helm.ValuesOverrideGitCommitID
		}
		r.Helms = append(r.Helms, h)
	}
}

// DeployServices deploys several services of the environment envID in one
// action (deployAllServices). The API answers 202 with the environment's
// status, whose deployment_request_id the services' statuses carry, or 409
// while the environment runs another action and does not queue.
func (c *Client) DeployServices(ctx context.Context, envID string, req DeployAllRequest) (*EnvironmentStatus, error) {
	var out EnvironmentStatus
	if err := c.do(ctx, http.MethodPost, pathf("/environment/%s/service/deploy", envID), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeployService triggers the deployment of one service on its own, with
// the service's own action (deployHelm, redeployApplication,
// redeployContainer), and returns the answer: the status of the request.
func (c *Client) DeployService(ctx context.Context, s ServiceDeploy) (*Status, error) {
	switch s.Kind {
	case ServiceApplication:
		return c.RedeployApplication(ctx, s.ID)
	case ServiceContainer:
		return c.RedeployContainer(ctx, s.ID)
	}
	if s.Helm == nil {
		return c.action(ctx, pathf("/helm/%s/deploy", s.ID), nil)
	}
	return c.action(ctx, pathf("/helm/%s/deploy", s.ID), s.Helm)
}

// DefaultDeployQuiet is how long a deployment waits for the other
// deployments after the latest one: as long as the first wave of the
// policy writes.
const DefaultDeployQuiet = 25 * time.Millisecond

// DefaultDeployMaxWait bounds the wait of a deployment for its batch.
const DefaultDeployMaxWait = 2 * time.Second

// deployTriggerTimeout bounds the requests of a batch, which belongs to no
// operation of its own.
const deployTriggerTimeout = 2 * time.Minute

// triggered is the answer of a batch to one of its deployments: the status
// that names its request, or alone when it is to be triggered on its own
// (alone in its environment, or in a batch the API refused).
type triggered struct {
	status *Status
	alone  bool
}

// deployBatches gathers the deployments that Terraform's operations ask
// for at about the same time, and triggers those of each environment with
// one deploy-services action of the environment: an environment runs one
// action at a time, so deployments triggered one by one would queue
// behind each other. The deployments of every environment are gathered
// together, so that an operation is announced (ExpectDeploy) before it
// knows its environment.
type deployBatches struct {
	c     *Client
	quiet time.Duration
	g     *batch.Gatherer[ServiceDeploy, triggered]

	mu   sync.Mutex
	next uint64
}

func newDeployBatches(c *Client, cfg Config) *deployBatches {
	b := &deployBatches{c: c, quiet: cfg.DeployQuiet}
	if b.quiet == 0 {
		b.quiet = DefaultDeployQuiet
	}
	maxWait := cfg.DeployMaxWait
	if maxWait <= 0 {
		maxWait = DefaultDeployMaxWait
	}
	opts := batch.GathererOptions[ServiceDeploy]{Quiet: b.quiet, MaxWait: maxWait}
	if on := cfg.OnDeployBatch; on != nil {
		opts.OnBatch = func(services []ServiceDeploy, info batch.BatchInfo) { on(services, info) }
	}
	b.g = batch.NewGatherer(opts, b.trigger)
	return b
}

// trigger deploys a batch, with one action per environment. A service
// alone in its environment, and every service of an environment whose
// action the API refuses, are left to their callers, which trigger them on
// their own: a refused service then fails alone.
func (b *deployBatches) trigger(services []ServiceDeploy) []triggered {
	out := make([]triggered, len(services))
	byEnv := map[string][]int{}
	var envs []string
	for i, s := range services {
		if _, ok := byEnv[s.EnvironmentID]; !ok {
			envs = append(envs, s.EnvironmentID)
		}
		byEnv[s.EnvironmentID] = append(byEnv[s.EnvironmentID], i)
	}
	var wg sync.WaitGroup
	for _, envID := range envs {
		idx := byEnv[envID]
		if len(idx) < 2 || envID == "" {
			for _, i := range idx {
				out[i].alone = true
			}
			continue
		}
		wg.Go(func() {
			var req DeployAllRequest
			for _, i := range idx {
				req.Add(services[i])
			}
			ctx, cancel := context.WithTimeout(context.Background(), deployTriggerTimeout)
			defer cancel()
			env, err := b.c.DeployServices(ctx, envID, req)
			for _, i := range idx {
				if err != nil {
					out[i].alone = true
					continue
				}
				out[i].status = &Status{ID: services[i].ID, State: StateDeploymentQueued, DeploymentRequestID: env.DeploymentRequestID,
					LastDeploymentDate: env.LastDeploymentDate}
			}
		})
	}
	wg.Wait()
	return out
}

// DeployTicket is a deployment on its way: the other deployments that
// Terraform's operations ask for at about the same time wait for it, and
// those of its environment are triggered with it in one action (see
// ExpectDeploy).
type DeployTicket struct {
	c    *Client
	key  string
	mu   sync.Mutex
	used bool
}

// ExpectDeploy returns the ticket of a deployment that the caller is
// about to trigger: from now on, and for at most Config.DeployMaxWait, a
// batch waits for it. The caller triggers it with Deploy, or says with
// Forget that it will not come. key names the deployment, so that an
// operation announced early (by the plan that Terraform makes of a
// resource just before it applies it) takes up its announcement, renewed;
// "" names a new one.
func (c *Client) ExpectDeploy(key string) *DeployTicket {
	b := c.deploys
	if key == "" {
		b.mu.Lock()
		b.next++
		key = "#" + strconv.FormatUint(b.next, 10)
		b.mu.Unlock()
	}
	if b.quiet >= 0 {
		b.g.Expect(key)
	}
	return &DeployTicket{c: c, key: key}
}

// Forget says that the ticket's deployment will not be triggered (or was,
// which makes it a no-op).
func (t *DeployTicket) Forget() {
	if t == nil {
		return
	}
	t.mu.Lock()
	used := t.used
	t.used = true
	t.mu.Unlock()
	if !used && t.c.deploys.quiet >= 0 {
		t.c.deploys.g.Forget(t.key)
	}
}

// Deploy triggers the deployment of s and returns the status that names
// its request, for WaitOptions.Trigger: the deployments of s's environment
// asked for at about the same time are triggered together, in one
// deploy-services action (DeployServices), and each service's status then
// carries its deployment_request_id. A deployment alone in its
// environment, one of a batch that the API refused (so that a refused
// service fails alone), a ticket used already (a new attempt) and a
// client that gathers nothing (Config.DeployQuiet) are triggered on their
// own (DeployService).
func (t *DeployTicket) Deploy(ctx context.Context, s ServiceDeploy) (*Status, error) {
	if t == nil {
		return nil, fmt.Errorf("qovery: no deployment ticket for service %s", s.ID)
	}
	t.mu.Lock()
	used := t.used
	t.used = true
	t.mu.Unlock()
	if used || t.c.deploys.quiet < 0 || s.EnvironmentID == "" {
		if !used && t.c.deploys.quiet >= 0 {
			t.c.deploys.g.Forget(t.key)
		}
		return t.c.DeployService(ctx, s)
	}
	res, _, err := t.c.deploys.g.Do(ctx, t.key, s)
	if err != nil {
		return nil, err
	}
	if res.alone {
		return t.c.DeployService(ctx, s)
	}
	return res.status, nil
}
