package qovery

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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

// Application is an application as the API returns it, reduced to the fields
// qtail reads. Raw keeps the whole body so that an edit can send back every
// field, known here or not.
type Application struct {
	ID          string     `json:"id"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   *time.Time `json:"updated_at,omitempty"`
	Name        string     `json:"name"`
	Environment Ref        `json:"environment"`
	ServiceType string     `json:"service_type,omitempty"`
	// Ports is empty when the application declares none, in which case
	// Qovery creates no Kubernetes Service for it.
	Ports []ServicePort `json:"ports"`
	// AnnotationsGroups are the attached groups, as full objects.
	AnnotationsGroups []AnnotationsGroup `json:"annotations_groups"`
	GitRepository     *GitRepository     `json:"git_repository,omitempty"`
	// Raw is the JSON object the API returned.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes an application and keeps the body in Raw.
func (a *Application) UnmarshalJSON(b []byte) error {
	type plain Application
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*a = Application(p)
	a.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// AnnotationsGroupIDs returns the ids of the attached annotations groups.
func (a *Application) AnnotationsGroupIDs() []string {
	ids := make([]string, 0, len(a.AnnotationsGroups))
	for _, g := range a.AnnotationsGroups {
		ids = append(ids, g.ID)
	}
	return ids
}

// GetApplication reads one application.
func (c *Client) GetApplication(ctx context.Context, id string) (*Application, error) {
	var out Application
	if err := c.do(ctx, http.MethodGet, pathf("/application/%s", id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
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
// application and sends the body it read back unchanged except for
// annotations_groups, which is always sent explicitly as [{"id": ...}], []
// included, because the API does not say what an absent field means.
func (c *Client) SetApplicationAnnotationsGroups(ctx context.Context, appID string, groupIDs []string) (*Application, error) {
	app, err := c.GetApplication(ctx, appID)
	if err != nil {
		return nil, err
	}
	path := pathf("/application/%s", appID)
	var body map[string]json.RawMessage
	if err := json.Unmarshal(app.Raw, &body); err != nil {
		return nil, fmt.Errorf("qovery: GET %s: the application is not a JSON object: %w", path, err)
	}
	if body == nil {
		return nil, fmt.Errorf("qovery: GET %s: the application is null", path)
	}
	refs := make([]Ref, 0, len(groupIDs))
	seen := make(map[string]bool, len(groupIDs))
	for _, id := range groupIDs {
		if !seen[id] {
			seen[id] = true
			refs = append(refs, Ref{ID: id})
		}
	}
	groups, err := json.Marshal(refs)
	if err != nil {
		return nil, fmt.Errorf("qovery: PUT %s: encoding annotations_groups: %w", path, err)
	}
	body["annotations_groups"] = groups
	edited, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("qovery: PUT %s: encoding the request: %w", path, err)
	}
	var out Application
	if err := c.do(ctx, http.MethodPut, path, json.RawMessage(edited), &out); err != nil {
		return nil, err
	}
	return &out, nil
}
