package qoveryapi

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"time"
)

var annotationsGroupScopes = []string{"DEPLOYMENTS", "STATEFUL_SETS", "SERVICES", "INGRESS", "GATEWAY_API_ROUTES", "HPA", "PODS", "SECRETS", "JOBS", "CRON_JOBS"}

type annotationsGroupRequestJSON struct {
	Name        *string `json:"name"`
	Annotations *[]struct {
		Key   *string `json:"key"`
		Value *string `json:"value"`
	} `json:"annotations"`
	Scopes *[]string `json:"scopes"`
}

type annotationJSON struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type annotationsGroupJSON struct {
	ID                   string           `json:"id"`
	CreatedAt            time.Time        `json:"created_at"`
	UpdatedAt            time.Time        `json:"updated_at"`
	Name                 string           `json:"name"`
	Annotations          []annotationJSON `json:"annotations"`
	Scopes               []string         `json:"scopes"`
	AssociatedItemsCount *int             `json:"associated_items_count,omitempty"`
}

func renderAnnotationsGroup(g *AnnotationsGroup) annotationsGroupJSON {
	out := annotationsGroupJSON{ID: g.ID, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt, Name: g.Name,
		Annotations: []annotationJSON{}, Scopes: append([]string{}, g.Scopes...)}
	for _, a := range g.Annotations {
		out.Annotations = append(out.Annotations, annotationJSON(a))
	}
	return out
}

func validAnnotationsGroup(req *annotationsGroupRequestJSON) (*AnnotationsGroup, error) {
	name, err := requireString("name", req.Name)
	if err != nil {
		return nil, err
	}
	if req.Annotations == nil {
		return nil, badRequest("annotations: required")
	}
	if req.Scopes == nil {
		return nil, badRequest("scopes: required")
	}
	g := &AnnotationsGroup{Name: name, Annotations: []Annotation{}, Scopes: []string{}}
	for i, a := range *req.Annotations {
		field := fmt.Sprintf("annotations[%d]", i)
		key, err := requireString(field+".key", a.Key)
		if err != nil {
			return nil, err
		}
		if a.Value == nil {
			return nil, badRequest("%s.value: required", field)
		}
		g.Annotations = append(g.Annotations, Annotation{Key: key, Value: *a.Value})
	}
	for i, sc := range *req.Scopes {
		if err := oneOf(fmt.Sprintf("scopes[%d]", i), sc, annotationsGroupScopes...); err != nil {
			return nil, err
		}
		g.Scopes = append(g.Scopes, sc)
	}
	return g, nil
}

func (s *Server) annotationsGroup(orgID, id string) (*AnnotationsGroup, error) {
	if _, err := s.org(orgID); err != nil {
		return nil, err
	}
	g := s.st.AnnotationsGroups[id]
	if g == nil || g.OrganizationID != orgID {
		return nil, s.missing("annotations group", id)
	}
	return g, nil
}

// groupUsers returns the applications and containers the group is
// attached to.
func (st *State) groupUsers(id string) []workloadRef {
	var out []workloadRef
	for _, w := range st.workloads() {
		if slices.Contains(w.w.AnnotationsGroupIDs, id) {
			out = append(out, w)
		}
	}
	return out
}

func (s *Server) listAnnotationsGroups(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	org, err := s.org(r.PathValue("organizationId"))
	if err != nil {
		return 0, nil, err
	}
	var out []annotationsGroupJSON
	for _, g := range sorted(s.st.AnnotationsGroups, func(g *AnnotationsGroup) uint64 { return g.seq }, func(g *AnnotationsGroup) string { return g.ID }) {
		if g.OrganizationID == org.ID {
			j := renderAnnotationsGroup(g)
			n := len(s.st.groupUsers(g.ID))
			j.AssociatedItemsCount = &n
			out = append(out, j)
		}
	}
	return http.StatusOK, results(out), nil
}

func (s *Server) createAnnotationsGroup(r *http.Request) (int, any, error) {
	var req annotationsGroupRequestJSON
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	g, err := validAnnotationsGroup(&req)
	if err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	org, err := s.org(r.PathValue("organizationId"))
	if err != nil {
		return 0, nil, err
	}
	g.ID, g.OrganizationID, g.seq = s.newID(), org.ID, s.st.next()
	g.CreatedAt = now()
	g.UpdatedAt = g.CreatedAt
	s.st.AnnotationsGroups[g.ID] = g
	return http.StatusCreated, renderAnnotationsGroup(g), nil
}

func (s *Server) getAnnotationsGroup(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.annotationsGroup(r.PathValue("organizationId"), r.PathValue("annotationsGroupId"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, renderAnnotationsGroup(g), nil
}

func (s *Server) editAnnotationsGroup(r *http.Request) (int, any, error) {
	var req annotationsGroupRequestJSON
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	next, err := validAnnotationsGroup(&req)
	if err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.annotationsGroup(r.PathValue("organizationId"), r.PathValue("annotationsGroupId"))
	if err != nil {
		return 0, nil, err
	}
	s.replaceAnnotationsGroup(g, next.Name, next.Annotations, next.Scopes)
	return http.StatusOK, renderAnnotationsGroup(g), nil
}

// replaceAnnotationsGroup applies an edit; the services using the group
// become OUT_OF_DATE when its annotations or scopes change.
func (s *Server) replaceAnnotationsGroup(g *AnnotationsGroup, name string, annotations []Annotation, scopes []string) {
	changed := !reflect.DeepEqual(g.Annotations, annotations) || !reflect.DeepEqual(g.Scopes, scopes)
	g.Name, g.Annotations, g.Scopes = name, annotations, scopes
	g.UpdatedAt = now()
	if changed {
		for _, u := range s.st.groupUsers(g.ID) {
			u.status.changed()
		}
	}
}

// deleteAnnotationsGroup deletes a group. The API reference does not say
// what happens to the services it is attached to; (fake) it is detached
// from them, which they get at their next deployment.
func (s *Server) deleteAnnotationsGroup(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.annotationsGroup(r.PathValue("organizationId"), r.PathValue("annotationsGroupId"))
	if err != nil {
		return 0, nil, err
	}
	s.removeAnnotationsGroup(g.ID)
	return http.StatusNoContent, nil, nil
}

func (s *Server) removeAnnotationsGroup(id string) {
	for _, u := range s.st.groupUsers(id) {
		u.w.AnnotationsGroupIDs = slices.DeleteFunc(u.w.AnnotationsGroupIDs, func(g string) bool { return g == id })
		u.status.changed()
	}
	delete(s.st.AnnotationsGroups, id)
}
