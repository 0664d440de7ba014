package qovery

import (
	"context"
	"fmt"
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
//
// When the outcome is ambiguous (IsAmbiguous), the request is not sent
// again blindly: the group is looked up by name in the organization. The
// API does not make names unique, so only a group that this request can
// have created counts: same name, annotations and scopes, attached to
// nothing, and created after the request was sent (the newest if there
// are several). It is returned as if the create had answered; none, and
// the create is sent once more.
func (c *Client) CreateAnnotationsGroup(ctx context.Context, orgID string, req *AnnotationsGroupRequest) (*AnnotationsGroup, error) {
	if req == nil {
		return nil, errNilRequest
	}
	body := req.normalized()
	path := pathf("/organization/%s/annotationsGroups", orgID)
	create := func(ctx context.Context) (*AnnotationsGroup, error) {
		var out AnnotationsGroup
		if err := c.do(ctx, http.MethodPost, path, body, &out); err != nil {
			return nil, err
		}
		return &out, nil
	}
	find := func(ctx context.Context, since func(answer) time.Time) (*AnnotationsGroup, string, error) {
		groups, a, err := getListAnswer[AnnotationsGroup](ctx, c, path, nil)
		if err != nil {
			return nil, "", err
		}
		var best *AnnotationsGroup
		for i := range groups {
			g := &groups[i]
			if g.Name != body.Name || g.CreatedAt.Before(since(a)) || !sameAnnotations(g, body) ||
				(g.AssociatedItemsCount != nil && *g.AssociatedItemsCount > 0) {
				continue
			}
			if best == nil || g.CreatedAt.After(best.CreatedAt) {
				best = g
			}
		}
		if best != nil {
			// The list adds a count that a create does not answer.
			best.AssociatedItemsCount = nil
		}
		return best, "", nil
	}
	return createSettled(ctx, path, fmt.Sprintf("the annotations group %q", body.Name), create, find)
}

// sameAnnotations reports whether a group holds exactly the annotations
// and scopes of req, in any order.
func sameAnnotations(g *AnnotationsGroup, req *AnnotationsGroupRequest) bool {
	if len(g.Annotations) != len(req.Annotations) || len(g.Scopes) != len(req.Scopes) {
		return false
	}
	want := make(map[Annotation]int, len(req.Annotations))
	for _, a := range req.Annotations {
		want[a]++
	}
	for _, a := range g.Annotations {
		if want[a] == 0 {
			return false
		}
		want[a]--
	}
	scopes := make(map[string]int, len(req.Scopes))
	for _, sc := range req.Scopes {
		scopes[sc]++
	}
	for _, sc := range g.Scopes {
		if scopes[sc] == 0 {
			return false
		}
		scopes[sc]--
	}
	return true
}

// GetAnnotationsGroup reads one organization annotations group. A group
// that was deleted is an error for which IsNotFound is true, also when the
// API answers 403 for it (see IsNotFound).
func (c *Client) GetAnnotationsGroup(ctx context.Context, orgID, id string) (*AnnotationsGroup, error) {
	var out AnnotationsGroup
	gone := func(ctx context.Context, err error) error { return c.annotationsGroupGone(ctx, err, orgID, id) }
	if err := c.getObject(ctx, pathf("/organization/%s/annotationsGroups/%s", orgID, id), &out, gone); err != nil {
		return nil, err
	}
	return &out, nil
}

// annotationsGroupGone settles a 403 about a group with the list (see
// confirmGone).
func (c *Client) annotationsGroupGone(ctx context.Context, err error, orgID, id string) error {
	return confirmGone(ctx, err, "annotations group", id, "the annotations groups of organization "+orgID, func(ctx context.Context) ([]string, error) {
		groups, err := c.ListAnnotationsGroups(ctx, orgID)
		ids := make([]string, 0, len(groups))
		for _, g := range groups {
			ids = append(ids, g.ID)
		}
		return ids, err
	})
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
	if err := c.do(ctx, http.MethodPut, pathf("/organization/%s/annotationsGroups/%s", orgID, id), req.normalized(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteAnnotationsGroup deletes an organization annotations group. One
// that is already gone is an error for which IsNotFound is true, also when
// the API answers 403 for it (see IsNotFound).
func (c *Client) DeleteAnnotationsGroup(ctx context.Context, orgID, id string) error {
	if err := c.do(ctx, http.MethodDelete, pathf("/organization/%s/annotationsGroups/%s", orgID, id), nil, nil); err != nil {
		return c.annotationsGroupGone(ctx, err, orgID, id)
	}
	return nil
}
