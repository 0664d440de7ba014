package qovery

import (
	"context"
	"net/http"
	"time"
)

// AnnotationsGroupScopeServices makes a group annotate Kubernetes Services
// (OrganizationAnnotationsGroupScopeEnum SERVICES).
const AnnotationsGroupScopeServices = "SERVICES"

// Annotation is one Kubernetes annotation.
type Annotation struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// AnnotationsGroupRequest creates or replaces an organization annotations
// group. Every field is required (nil lists are sent as []).
type AnnotationsGroupRequest struct {
	Name        string       `json:"name"`
	Annotations []Annotation `json:"annotations"`
	// Scopes are the kinds of Kubernetes objects annotated: DEPLOYMENTS,
	// STATEFUL_SETS, SERVICES, INGRESS, GATEWAY_API_ROUTES, HPA, PODS,
	// SECRETS, JOBS, CRON_JOBS.
	Scopes []string `json:"scopes"`
}

// AnnotationsGroup is an organization annotations group as the API returns
// it. The order of Annotations and Scopes is not significant.
type AnnotationsGroup struct {
	ID          string       `json:"id"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   *time.Time   `json:"updated_at,omitempty"`
	Name        string       `json:"name"`
	Annotations []Annotation `json:"annotations"`
	Scopes      []string     `json:"scopes"`
	// AssociatedItemsCount is set in lists only.
	AssociatedItemsCount *int `json:"associated_items_count,omitempty"`
}

func (r *AnnotationsGroupRequest) normalized() *AnnotationsGroupRequest {
	out := *r
	if out.Annotations == nil {
		out.Annotations = []Annotation{}
	}
	if out.Scopes == nil {
		out.Scopes = []string{}
	}
	return &out
}

// CreateAnnotationsGroup creates an organization annotations group.
func (c *Client) CreateAnnotationsGroup(ctx context.Context, orgID string, req *AnnotationsGroupRequest) (*AnnotationsGroup, error) {
	if req == nil {
		return nil, errNilRequest
	}
	var out AnnotationsGroup
	if err := c.do(ctx, http.MethodPost, pathf("/organization/%s/annotationsGroups", orgID), nil, req.normalized(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetAnnotationsGroup reads one organization annotations group.
func (c *Client) GetAnnotationsGroup(ctx context.Context, orgID, id string) (*AnnotationsGroup, error) {
	var out AnnotationsGroup
	if err := c.do(ctx, http.MethodGet, pathf("/organization/%s/annotationsGroups/%s", orgID, id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListAnnotationsGroups lists the annotations groups of an organization.
func (c *Client) ListAnnotationsGroups(ctx context.Context, orgID string) ([]AnnotationsGroup, error) {
	return getList[AnnotationsGroup](ctx, c, pathf("/organization/%s/annotationsGroups", orgID), nil)
}

// EditAnnotationsGroup replaces an organization annotations group with req.
// Services it is attached to get the change at their next deployment.
func (c *Client) EditAnnotationsGroup(ctx context.Context, orgID, id string, req *AnnotationsGroupRequest) (*AnnotationsGroup, error) {
	if req == nil {
		return nil, errNilRequest
	}
	var out AnnotationsGroup
	if err := c.do(ctx, http.MethodPut, pathf("/organization/%s/annotationsGroups/%s", orgID, id), nil, req.normalized(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteAnnotationsGroup deletes an organization annotations group.
func (c *Client) DeleteAnnotationsGroup(ctx context.Context, orgID, id string) error {
	return c.do(ctx, http.MethodDelete, pathf("/organization/%s/annotationsGroups/%s", orgID, id), nil, nil, nil)
}
