package qoveryapi

import (
	"net/http"
	"strconv"
	"time"
)

// Variable scopes (APIVariableScopeEnum).
const (
	scopeApplication     = "APPLICATION"
	scopeBuiltIn         = "BUILT_IN"
	scopeEnvironment     = "ENVIRONMENT"
	scopeProject         = "PROJECT"
	scopeContainer       = "CONTAINER"
	scopeJob             = "JOB"
	scopeHelm            = "HELM"
	scopeTerraform       = "TERRAFORM"
	scopeAgenticWorkflow = "AGENTIC_WORKFLOW"
)

var variableScopes = []string{scopeApplication, scopeBuiltIn, scopeEnvironment, scopeProject, scopeContainer, scopeJob, scopeHelm, scopeTerraform, scopeAgenticWorkflow}

const maxVariableDescription = 255

type variableRequestJSON struct {
	Key                       *string `json:"key"`
	Value                     *string `json:"value"`
	MountPath                 *string `json:"mount_path"`
	IsSecret                  *bool   `json:"is_secret"`
	VariableScope             *string `json:"variable_scope"`
	VariableParentID          *string `json:"variable_parent_id"`
	Description               *string `json:"description"`
	EnableInterpolationInFile *bool   `json:"enable_interpolation_in_file"`
	SecretManagerAccessID     *string `json:"secret_manager_access_id"`
}

type variableEditRequestJSON struct {
	Key                       *string `json:"key"`
	Value                     *string `json:"value"`
	Description               *string `json:"description"`
	EnableInterpolationInFile *bool   `json:"enable_interpolation_in_file"`
	SecretManagerAccessID     *string `json:"secret_manager_access_id"`
}

type variableJSON struct {
	ID                        string    `json:"id"`
	CreatedAt                 time.Time `json:"created_at"`
	UpdatedAt                 time.Time `json:"updated_at"`
	Key                       string    `json:"key"`
	Value                     *string   `json:"value"`
	MountPath                 *string   `json:"mount_path"`
	OverriddenVariable        any       `json:"overridden_variable"`
	AliasedVariable           any       `json:"aliased_variable"`
	Scope                     string    `json:"scope"`
	VariableType              string    `json:"variable_type"`
	ServiceID                 *string   `json:"service_id"`
	ServiceName               *string   `json:"service_name"`
	ServiceType               *string   `json:"service_type"`
	OwnedBy                   *string   `json:"owned_by"`
	IsSecret                  bool      `json:"is_secret"`
	Description               *string   `json:"description"`
	EnableInterpolationInFile *bool     `json:"enable_interpolation_in_file"`
	SecretManagerAccessID     *string   `json:"secret_manager_access_id"`
}

func (st *State) renderVariable(v *Variable) variableJSON {
	out := variableJSON{ID: v.ID, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt, Key: v.Key,
		MountPath: cloneStrPtr(v.MountPath), Scope: v.Scope, VariableType: "VALUE", IsSecret: v.IsSecret,
		Description: cloneStrPtr(v.Description), EnableInterpolationInFile: cloneBoolPtr(v.EnableInterpolationInFile),
		SecretManagerAccessID: cloneStrPtr(v.SecretManagerAccessID)}
	switch {
	case v.Scope == scopeBuiltIn:
		out.VariableType = "BUILT_IN"
	case v.MountPath != nil:
		out.VariableType = "FILE"
	}
	if !v.IsSecret {
		value := v.Value
		out.Value = &value
	}
	if h := st.Helms[v.ParentID]; h != nil && v.Scope == scopeHelm {
		id, name, kind := h.ID, h.Name, kindHelm
		out.ServiceID, out.ServiceName, out.ServiceType = &id, &name, &kind
	}
	if a := st.Applications[v.ParentID]; a != nil && v.Scope == scopeApplication {
		id, name, kind := a.ID, a.Name, kindApplication
		out.ServiceID, out.ServiceName, out.ServiceType = &id, &name, &kind
	}
	return out
}

// checkParent answers 404 when no object of the scope has the id.
func (st *State) checkParent(scope, id string) error {
	var ok bool
	switch scope {
	case scopeHelm:
		ok = st.Helms[id] != nil
	case scopeApplication:
		ok = st.Applications[id] != nil
	case scopeEnvironment:
		ok = st.Environments[id] != nil
	case scopeProject:
		ok = st.Projects[id] != nil
	case scopeBuiltIn:
		return badRequest("variable_scope: BUILT_IN variables are managed by Qovery")
	}
	if !ok {
		return errorf(http.StatusNotFound, "no %s with id %s", scope, id)
	}
	return nil
}

// keyTaken reports whether the parent already defines key in scope.
func (st *State) keyTaken(scope, parentID, key, except string) bool {
	for _, v := range st.Variables {
		if v.ID != except && v.Scope == scope && v.ParentID == parentID && v.Key == key {
			return true
		}
	}
	return false
}

// variableChanged marks the services that see the variables of parentID
// OUT_OF_DATE.
func (st *State) variableChanged(parentID string) {
	for _, s := range st.servicesSeeing(parentID) {
		s.changed()
	}
}

func (s *Server) listVariables(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	parentID, scope := q.Get("parent_id"), q.Get("scope")
	if parentID == "" {
		return 0, nil, badRequest("parent_id: required")
	}
	if scope == "" {
		return 0, nil, badRequest("scope: required")
	}
	if err := oneOf("scope", scope, variableScopes...); err != nil {
		return 0, nil, err
	}
	var secretFilter *bool
	if v := q.Get("is_secret"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return 0, nil, badRequest("is_secret: want true or false, got %q", v)
		}
		secretFilter = &b
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if scope == scopeBuiltIn {
		return 0, nil, badRequest("scope: BUILT_IN is not a parent scope")
	}
	if err := s.st.checkParent(scope, parentID); err != nil {
		return 0, nil, err
	}
	visible := map[string]bool{}
	for _, id := range s.st.chain(parentID) {
		visible[id] = true
	}
	var out []variableJSON
	for _, v := range sorted(s.st.Variables, func(v *Variable) uint64 { return v.seq }, func(v *Variable) string { return v.ID }) {
		if visible[v.ParentID] && (secretFilter == nil || *secretFilter == v.IsSecret) {
			out = append(out, s.st.renderVariable(v))
		}
	}
	return http.StatusOK, results(out), nil
}

func (s *Server) createVariable(r *http.Request) (int, any, error) {
	var req variableRequestJSON
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	key, err := requireString("key", req.Key)
	if err != nil {
		return 0, nil, err
	}
	if req.Value == nil {
		return 0, nil, badRequest("value: required")
	}
	secret, err := requireBool("is_secret", req.IsSecret)
	if err != nil {
		return 0, nil, err
	}
	scope, err := requireString("variable_scope", req.VariableScope)
	if err != nil {
		return 0, nil, err
	}
	if err := oneOf("variable_scope", scope, variableScopes...); err != nil {
		return 0, nil, err
	}
	parentID, err := requireString("variable_parent_id", req.VariableParentID)
	if err != nil {
		return 0, nil, err
	}
	if req.Description != nil && len(*req.Description) > maxVariableDescription {
		return 0, nil, badRequest("description: at most %d characters", maxVariableDescription)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.st.checkParent(scope, parentID); err != nil {
		return 0, nil, err
	}
	if s.st.keyTaken(scope, parentID, key, "") {
		return 0, nil, errorf(http.StatusConflict, "Variable already exists: %s is already defined for this %s", key, scope)
	}
	v := &Variable{ID: s.newID(), Key: key, Value: *req.Value, IsSecret: secret, Scope: scope, ParentID: parentID,
		MountPath: cloneStrPtr(req.MountPath), Description: cloneStrPtr(req.Description),
		EnableInterpolationInFile: cloneBoolPtr(req.EnableInterpolationInFile),
		SecretManagerAccessID:     cloneStrPtr(req.SecretManagerAccessID), seq: s.st.next()}
	v.CreatedAt = now()
	v.UpdatedAt = v.CreatedAt
	s.st.Variables[v.ID] = v
	s.st.variableChanged(parentID)
	return http.StatusCreated, s.st.renderVariable(v), nil
}

func (s *Server) variable(id string) (*Variable, error) {
	v := s.st.Variables[id]
	if v == nil {
		return nil, s.missing("variable", id)
	}
	if v.Scope == scopeBuiltIn {
		return nil, badRequest("variable %s is BUILT_IN: it cannot be edited or deleted", id)
	}
	return v, nil
}

func (s *Server) editVariable(r *http.Request) (int, any, error) {
	var req variableEditRequestJSON
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	key, err := requireString("key", req.Key)
	if err != nil {
		return 0, nil, err
	}
	if req.Description != nil && len(*req.Description) > maxVariableDescription {
		return 0, nil, badRequest("description: at most %d characters", maxVariableDescription)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.variable(r.PathValue("variableId"))
	if err != nil {
		return 0, nil, err
	}
	if s.st.keyTaken(v.Scope, v.ParentID, key, v.ID) {
		return 0, nil, errorf(http.StatusConflict, "Variable already exists: %s is already defined for this %s", key, v.Scope)
	}
	changed := v.Key != key
	v.Key = key
	// (fake) A null or absent value keeps the current one.
	if req.Value != nil && *req.Value != v.Value {
		v.Value = *req.Value
		changed = true
	}
	if req.Description != nil {
		v.Description = cloneStrPtr(req.Description)
	}
	if req.EnableInterpolationInFile != nil {
		v.EnableInterpolationInFile = cloneBoolPtr(req.EnableInterpolationInFile)
	}
	if req.SecretManagerAccessID != nil {
		v.SecretManagerAccessID = cloneStrPtr(req.SecretManagerAccessID)
	}
	v.UpdatedAt = now()
	if changed {
		s.st.variableChanged(v.ParentID)
	}
	return http.StatusOK, s.st.renderVariable(v), nil
}

func (s *Server) deleteVariable(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.variable(r.PathValue("variableId"))
	if err != nil {
		return 0, nil, err
	}
	delete(s.st.Variables, v.ID)
	s.st.variableChanged(v.ParentID)
	return http.StatusNoContent, nil, nil
}
