package qovery

import (
	"context"
	"encoding/json"
	"time"
)

// ServicePort is a port of an application.
type ServicePort struct {
	ID                 string `json:"id"`
	Name               string `json:"name,omitempty"`
	InternalPort       int    `json:"internal_port"`
	ExternalPort       *int   `json:"external_port,omitempty"`
	PubliclyAccessible bool   `json:"publicly_accessible"`
	IsDefault          bool   `json:"is_default,omitempty"`
	// Protocol is HTTP, GRPC, TCP or UDP.
	Protocol string `json:"protocol"`
}

// Workload holds what applications and containers share, as the API
// returns them, reduced to the fields qtail reads. Raw keeps the whole body
// so that an edit can send back every field, known here or not.
type Workload struct {
	ID          string     `json:"id"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   *time.Time `json:"updated_at,omitempty"`
	Name        string     `json:"name"`
	Environment Ref        `json:"environment"`
	ServiceType string     `json:"service_type,omitempty"`
	// Ports is empty when the service declares none, in which case
	// Qovery creates no Kubernetes Service for it.
	Ports []ServicePort `json:"ports"`
	// AnnotationsGroups are the attached groups, as full objects.
	AnnotationsGroups []AnnotationsGroup `json:"annotations_groups"`
	// Raw is the JSON object the API returned.
	Raw json.RawMessage `json:"-"`
}

// AnnotationsGroupIDs returns the ids of the attached annotations groups.
func (w *Workload) AnnotationsGroupIDs() []string {
	ids := make([]string, 0, len(w.AnnotationsGroups))
	for _, g := range w.AnnotationsGroups {
		ids = append(ids, g.ID)
	}
	return ids
}

// keepRaw decodes b into v and keeps a copy of b in raw.
func keepRaw(b []byte, v any, raw *json.RawMessage) error {
	if err := json.Unmarshal(b, v); err != nil {
		return err
	}
	*raw = append(json.RawMessage(nil), b...)
	return nil
}

// Application is an application (a service built from a Git repository)
// as the API returns it.
type Application struct {
	Workload
	GitRepository *GitRepository `json:"git_repository,omitempty"`
}

// UnmarshalJSON decodes an application and keeps the body in Raw.
func (a *Application) UnmarshalJSON(b []byte) error {
	type plain Application
	return keepRaw(b, (*plain)(a), &a.Raw)
}

// GetApplication reads one application. An application that was deleted
// is an error for which IsNotFound is true, also when the API answers 403
// for it, provided in names its environment (see GetHelm).
func (c *Client) GetApplication(ctx context.Context, id string, in ...Parent) (*Application, error) {
	return getService[Application](ctx, c, "application", id, in)
}

// ListApplications lists the applications of an environment.
func (c *Client) ListApplications(ctx context.Context, envID string) ([]Application, error) {
	return getList[Application](ctx, c, pathf("/environment/%s/application", envID), nil)
}

// SetApplicationAnnotationsGroups attaches exactly the annotations groups
// groupIDs to an application (none detaches them all) and returns the
// application as edited.
//
// The API has no attach endpoint and its edit replaces collections: a port
// or a storage entry left out of the body is deleted. So this reads the
// application and sends its ApplicationEditRequest built from what it
// read: every member the request defines, with those whose request shape
// differs from the answer's rebuilt (git_repository as provider, url,
// branch, root_path and git_token_id, autoscaling without the answer's
// ids and dates, labels_groups as [{"id": ...}]), and none of the answer's
// read-only members. annotations_groups is always sent explicitly as
// [{"id": ...}], [] included, because the API does not say what an absent
// member means.
func (c *Client) SetApplicationAnnotationsGroups(ctx context.Context, appID string, groupIDs []string) (*Application, error) {
	app, err := c.GetApplication(ctx, appID)
	if err != nil {
		return nil, err
	}
	path := pathf("/application/%s", appID)
	var req applicationEdit
	if err := readEdit(path, app.Raw, &req, &req.workloadEdit, groupIDs); err != nil {
		return nil, err
	}
	req.GitRepository = nil
	if app.GitRepository != nil {
		g := app.GitRepository.requestFields(true)
		req.GitRepository = &g
	}
	return putEdit[Application](ctx, c, path, &req)
}
