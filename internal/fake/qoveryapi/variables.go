package qoveryapi

import (
	"net/http"
	"slices"
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

// variableOverrideJSON describes the variable an override overrides.
type variableOverrideJSON struct {
	ID           string  `json:"id"`
	Key          string  `json:"key"`
	Value        *string `json:"value"`
	MountPath    *string `json:"mount_path"`
	Scope        string  `json:"scope"`
	VariableType string  `json:"variable_type"`
}

// variableType is the variable_type of a variable.
func variableType(v *Variable) string {
	switch {
	case v.Scope == scopeBuiltIn:
		return "BUILT_IN"
	case v.OverriddenID != "":
		return "OVERRIDE"
	case v.MountPath != nil:
		return "FILE"
	}
	return "VALUE"
}

// shownValue is the value of a variable as answers show it: nil for a
// secret.
func shownValue(v *Variable) *string {
	if v.IsSecret {
		return nil
	}
	value := v.Value
	return &value
}

func (st *State) renderVariable(v *Variable) variableJSON {
	out := variableJSON{ID: v.ID, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt, Key: v.Key,
		MountPath: cloneStrPtr(v.MountPath), Scope: v.Scope, VariableType: variableType(v), IsSecret: v.IsSecret,
		Description: cloneStrPtr(v.Description), EnableInterpolationInFile: cloneBoolPtr(v.EnableInterpolationInFile),
		SecretManagerAccessID: cloneStrPtr(v.SecretManagerAccessID), Value: shownValue(v)}
	if o := st.Variables[v.OverriddenID]; o != nil {
		out.OverriddenVariable = variableOverrideJSON{ID: o.ID, Key: o.Key, Value: shownValue(o), MountPath: cloneStrPtr(o.MountPath),
			Scope: o.Scope, VariableType: variableType(o)}
	}
	if h := st.Helms[v.ParentID]; h != nil && v.Scope == scopeHelm {
		id, name, kind := h.ID, h.Name, kindHelm
		out.ServiceID, out.ServiceName, out.ServiceType = &id, &name, &kind
	}
	if w, ok := st.workload(v.ParentID); ok && v.Scope == w.kind {
		id, name, kind := w.id, w.name, w.kind
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
	case scopeContainer:
		ok = st.Containers[id] != nil
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

// keyAbove returns the variable of key defined on a parent of parentID
// (its environment or project; built-in ones aside), nil for none.
func (st *State) keyAbove(parentID, key string) *Variable {
	chain := st.chain(parentID)
	if len(chain) < 2 {
		return nil
	}
	for _, v := range st.Variables {
		if v.Key == key && v.Scope != scopeBuiltIn && slices.Contains(chain[1:], v.ParentID) {
			return v
		}
	}
	return nil
}

// variableExists is the answer to a key the parent already sees: the
// API's 409 "Variable already exists".
func variableExists(key string) error {
	return errorf(http.StatusConflict, "Variable already exists: %s", key)
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

// validPlacement reads where a request puts a variable, from its members
// prefix+"scope" and prefix+"parent_id", and checks its description.
func validPlacement(prefix string, scope, parentID, description *string) (string, string, error) {
	sc, err := requireString(prefix+"scope", scope)
	if err != nil {
		return "", "", err
	}
	if err := oneOf(prefix+"scope", sc, variableScopes...); err != nil {
		return "", "", err
	}
	parent, err := requireString(prefix+"parent_id", parentID)
	if err != nil {
		return "", "", err
	}
	if description != nil && len(*description) > maxVariableDescription {
		return "", "", badRequest("description: at most %d characters", maxVariableDescription)
	}
	return sc, parent, nil
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
	scope, parentID, err := validPlacement("variable_", req.VariableScope, req.VariableParentID, req.Description)
	if err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.st.checkParent(scope, parentID); err != nil {
		return 0, nil, err
	}
	// A key the parent already sees, its own or one of its environment
	// or project, is refused: a variable of a higher scope is overridden
	// with POST /variable/{id}/override instead.
	if s.st.keyTaken(scope, parentID, key, "") || s.st.keyAbove(parentID, key) != nil {
		return 0, nil, variableExists(key)
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
	if v.OverriddenID != "" && key != v.Key {
		return 0, nil, badRequest("key: the key of an override cannot be changed")
	}
	if key != v.Key && (s.st.keyTaken(v.Scope, v.ParentID, key, v.ID) || s.st.keyAbove(v.ParentID, key) != nil) {
		return 0, nil, variableExists(key)
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
	s.st.deleteVariable(v)
	return http.StatusNoContent, nil, nil
}

// deleteVariable deletes a variable and its overrides, as the API does.
func (st *State) deleteVariable(v *Variable) {
	for _, o := range st.Variables {
		if o.OverriddenID == v.ID {
			st.deleteVariable(o)
		}
	}
	delete(st.Variables, v.ID)
	st.variableChanged(v.ParentID)
}

type variableOverrideRequestJSON struct {
	Value                     *string `json:"value"`
	OverrideScope             *string `json:"override_scope"`
	OverrideParentID          *string `json:"override_parent_id"`
	Description               *string `json:"description"`
	EnableInterpolationInFile *bool   `json:"enable_interpolation_in_file"`
}

// createVariableOverride creates, on a lower scope, a variable of the same
// key (and kind: secret or not, file or not) as a variable of a higher
// scope, with its own value.
func (s *Server) createVariableOverride(r *http.Request) (int, any, error) {
	var req variableOverrideRequestJSON
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if req.Value == nil {
		return 0, nil, badRequest("value: required")
	}
	scope, parentID, err := validPlacement("override_", req.OverrideScope, req.OverrideParentID, req.Description)
	if err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	target, err := s.variable(r.PathValue("variableId"))
	if err != nil {
		return 0, nil, err
	}
	if err := s.st.checkParent(scope, parentID); err != nil {
		return 0, nil, err
	}
	// (fake) Only a plain variable (VALUE or FILE) is overridden.
	if target.OverriddenID != "" {
		return 0, nil, badRequest("variable %s is an override: override the variable it overrides, %s", target.ID, target.OverriddenID)
	}
	if chain := s.st.chain(parentID); len(chain) < 2 || !slices.Contains(chain[1:], target.ParentID) {
		return 0, nil, badRequest("override_parent_id: an override is created on a scope below the variable's (%s %s)", target.Scope, target.ParentID)
	}
	if s.st.keyTaken(scope, parentID, target.Key, "") {
		return 0, nil, variableExists(target.Key)
	}
	v := &Variable{ID: s.newID(), Key: target.Key, Value: *req.Value, IsSecret: target.IsSecret, Scope: scope, ParentID: parentID,
		MountPath: cloneStrPtr(target.MountPath), Description: cloneStrPtr(req.Description),
		EnableInterpolationInFile: cloneBoolPtr(req.EnableInterpolationInFile), OverriddenID: target.ID, seq: s.st.next()}
	v.CreatedAt = now()
	v.UpdatedAt = v.CreatedAt
	s.st.Variables[v.ID] = v
	s.st.variableChanged(parentID)
	return http.StatusCreated, s.st.renderVariable(v), nil
}
