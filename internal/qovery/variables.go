package qovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Variable scopes (APIVariableScopeEnum) qtail uses.
const (
	VariableScopeHelm        = "HELM"
	VariableScopeApplication = "APPLICATION"
	VariableScopeEnvironment = "ENVIRONMENT"
	VariableScopeProject     = "PROJECT"
	VariableScopeBuiltIn     = "BUILT_IN"
)

// Variable types (APIVariableTypeEnum) qtail looks at.
const (
	// VariableTypeValue is the variable_type of a plain variable or
	// secret.
	VariableTypeValue = "VALUE"
	// VariableTypeOverride is the variable_type of an override: a
	// variable of a lower scope that replaces, for its parent, the value of
	// a variable of the same key of a higher scope (the environment or the
	// project of a service, say).
	VariableTypeOverride = "OVERRIDE"
)

// VariableScopeContainer is the scope of a container's variables.
const VariableScopeContainer = "CONTAINER"

// VariableRequest creates a variable or a secret.
type VariableRequest struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// MountPath makes a file variable; nil for an environment variable.
	MountPath *string `json:"mount_path,omitempty"`
	IsSecret  bool    `json:"is_secret"`
	// VariableScope is HELM, APPLICATION, ENVIRONMENT, PROJECT, ...
	VariableScope string `json:"variable_scope"`
	// VariableParentID is the id of the service, environment or project
	// that VariableScope names.
	VariableParentID          string  `json:"variable_parent_id"`
	Description               *string `json:"description,omitempty"`
	EnableInterpolationInFile *bool   `json:"enable_interpolation_in_file,omitempty"`
	SecretManagerAccessID     *string `json:"secret_manager_access_id,omitempty"`
}

// VariableEditRequest edits a variable. The scope and the parent cannot be
// changed. A nil Value leaves the value as it is.
type VariableEditRequest struct {
	Key                       string  `json:"key"`
	Value                     *string `json:"value,omitempty"`
	Description               *string `json:"description,omitempty"`
	EnableInterpolationInFile *bool   `json:"enable_interpolation_in_file,omitempty"`
	SecretManagerAccessID     *string `json:"secret_manager_access_id,omitempty"`
}

// VariableRef names the variable an alias or an override stands for.
type VariableRef struct {
	ID           string  `json:"id"`
	Key          string  `json:"key"`
	MountPath    *string `json:"mount_path,omitempty"`
	Scope        string  `json:"scope,omitempty"`
	VariableType string  `json:"variable_type,omitempty"`
}

// Variable is a variable as the API returns it.
type Variable struct {
	ID        string     `json:"id"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
	Key       string     `json:"key"`
	// Value is nil for a secret: secret values are never returned.
	Value              *string      `json:"value"`
	MountPath          *string      `json:"mount_path,omitempty"`
	OverriddenVariable *VariableRef `json:"overridden_variable,omitempty"`
	AliasedVariable    *VariableRef `json:"aliased_variable,omitempty"`
	// Scope is where the variable is defined, which for a list may be a
	// scope above the one asked for (ENVIRONMENT, PROJECT, BUILT_IN).
	Scope string `json:"scope"`
	// VariableType is VALUE, ALIAS, OVERRIDE, BUILT_IN, FILE, ...
	VariableType              string  `json:"variable_type"`
	ServiceID                 *string `json:"service_id,omitempty"`
	ServiceName               *string `json:"service_name,omitempty"`
	ServiceType               *string `json:"service_type,omitempty"`
	OwnedBy                   *string `json:"owned_by,omitempty"`
	IsSecret                  bool    `json:"is_secret"`
	Description               *string `json:"description,omitempty"`
	EnableInterpolationInFile *bool   `json:"enable_interpolation_in_file,omitempty"`
	SecretManagerAccessID     *string `json:"secret_manager_access_id,omitempty"`
}

// IsOwn reports whether v is defined on the parent of scope itself: a
// plain variable or secret of that scope, or an override of a variable of
// a higher scope (see CreateVariable). Lists also hold the variables the
// parent inherits and the built-in ones.
func (v *Variable) IsOwn(scope string) bool {
	return v.Scope == scope && (v.VariableType == VariableTypeValue || v.VariableType == VariableTypeOverride)
}

// ListVariables lists every variable visible from parentID, whose scope is
// scope (HELM for a Helm service id): the parent's own variables and those
// inherited from the environment, the project and the built-in ones. Keep
// the parent's own with Variable.IsOwn.
func (c *Client) ListVariables(ctx context.Context, parentID, scope string) ([]Variable, error) {
	q := url.Values{"parent_id": {parentID}, "scope": {scope}}
	return getList[Variable](ctx, c, "/variable", q)
}

// CreateVariable creates a variable.
//
// The API refuses (409) a key that the parent already sees: one of its own,
// or one that its environment or project defines. In the second case this
// creates an override of that variable instead (POST /variable/{id}/
// override), which gives the key the requested value for this parent: its
// VariableType is OVERRIDE. An override keeps the kind of the variable it
// overrides, so when that variable is a secret and the request is not (or
// the reverse), or one is a file and the other not, nothing is created and
// the error says which variable is in the way. A key the parent defines
// itself is a 409 (IsConflict).
//
// When the outcome is ambiguous (IsAmbiguous), the request is not sent
// again blindly: the variable is looked up by key, scope and parent. One
// created by this request (same kind, for a plain variable the same value,
// created after the request was sent) is returned as if the create had
// answered; none, and the create is sent once more; another variable
// holding the key is a 409 *APIError.
//
// The value never appears in an error: the server's messages are returned
// with it blanked out.
func (c *Client) CreateVariable(ctx context.Context, req *VariableRequest) (*Variable, error) {
	if req == nil {
		return nil, errNilRequest
	}
	const path = "/variable"
	create := func(ctx context.Context) (*Variable, error) {
		var out Variable
		if err := c.do(ctx, http.MethodPost, path, req, &out); err != nil {
			return nil, redactValue(err, req.Value, req.IsSecret)
		}
		return &out, nil
	}
	v, err := createSettled(ctx, path, "the variable "+req.Key, create, c.findVariable(req))
	if !IsConflict(err) {
		return v, err
	}
	inherited, lerr := c.inheritedVariable(ctx, req)
	if lerr != nil || inherited == nil {
		return nil, err
	}
	if diff := kindDiff(inherited, req); diff != "" {
		var e *APIError
		errors.As(err, &e)
		return nil, &APIError{Status: http.StatusConflict, Method: http.MethodPost, Path: path, Attempts: e.Attempts, Detail: fmt.Sprintf(
			"%s; %s is defined at the %s scope (variable %s) %s, and an override keeps the kind of the variable it overrides: "+
				"change or delete that variable, or use another key", e.Detail, inherited.Key, inherited.Scope, inherited.ID, diff)}
	}
	return c.CreateVariableOverride(ctx, inherited.ID, &VariableOverrideRequest{
		Value: req.Value, OverrideScope: req.VariableScope, OverrideParentID: req.VariableParentID,
		Description: req.Description, EnableInterpolationInFile: req.EnableInterpolationInFile,
	}, req.IsSecret)
}

// findVariable looks up, after an ambiguous create, the variable that req
// may have made (see createSettled).
func (c *Client) findVariable(req *VariableRequest) lookup[Variable] {
	return func(ctx context.Context, since func(answer) time.Time) (*Variable, string, error) {
		q := url.Values{"parent_id": {req.VariableParentID}, "scope": {req.VariableScope}}
		vars, a, err := getListAnswer[Variable](ctx, c, "/variable", q)
		if err != nil {
			return nil, "", err
		}
		for i := range vars {
			v := &vars[i]
			if !v.IsOwn(req.VariableScope) || v.Key != req.Key {
				continue
			}
			where := fmt.Sprintf("on this %s", req.VariableScope)
			if conflict := checkCreated("a variable", v.Key, v.ID, v.CreatedAt, since(a)); conflict != "" {
				return nil, conflict + " " + where, nil
			}
			if diff := variableDiff(v, req); diff != "" {
				return nil, fmt.Sprintf("a variable %s (%s) exists %s %s", v.Key, v.ID, where, diff), nil
			}
			return v, "", nil
		}
		return nil, "", nil
	}
}

// inheritedVariable returns the variable of req's key that the parent
// inherits from a higher scope, nil when it has its own or inherits none.
// Of the variables of the key it sees, the one to override is a plain one
// (VALUE or FILE, not itself an override), the most specific first.
func (c *Client) inheritedVariable(ctx context.Context, req *VariableRequest) (*Variable, error) {
	vars, err := c.ListVariables(ctx, req.VariableParentID, req.VariableScope)
	if err != nil {
		return nil, err
	}
	var found *Variable
	for i := range vars {
		v := &vars[i]
		if v.Key != req.Key {
			continue
		}
		if v.Scope == req.VariableScope {
			return nil, nil
		}
		if v.Scope == VariableScopeBuiltIn || (v.VariableType != VariableTypeValue && v.VariableType != "FILE") {
			continue
		}
		if found == nil || scopeRank(v.Scope) > scopeRank(found.Scope) {
			found = v
		}
	}
	return found, nil
}

// scopeRank orders the scopes a service inherits from, the most specific
// highest.
func scopeRank(scope string) int {
	switch scope {
	case VariableScopeProject:
		return 1
	case VariableScopeEnvironment:
		return 2
	}
	return 0
}

// VariableOverrideRequest creates an override: a variable of a lower scope
// with the key (and the kind: secret or not, file or not) of a variable of
// a higher scope and its own value.
type VariableOverrideRequest struct {
	Value string `json:"value"`
	// OverrideScope and OverrideParentID name where the override is
	// defined, such as HELM and a Helm service id.
	OverrideScope             string  `json:"override_scope"`
	OverrideParentID          string  `json:"override_parent_id"`
	Description               *string `json:"description,omitempty"`
	EnableInterpolationInFile *bool   `json:"enable_interpolation_in_file,omitempty"`
}

// CreateVariableOverride overrides the variable id of a higher scope for
// the parent that req names. secret says whether the value must be kept
// out of errors whatever its length (the overridden variable's kind).
// Ambiguous outcomes are settled as for CreateVariable.
func (c *Client) CreateVariableOverride(ctx context.Context, id string, req *VariableOverrideRequest, secret bool) (*Variable, error) {
	if req == nil {
		return nil, errNilRequest
	}
	path := pathf("/variable/%s/override", id)
	create := func(ctx context.Context) (*Variable, error) {
		var out Variable
		if err := c.do(ctx, http.MethodPost, path, req, &out); err != nil {
			return nil, redactValue(err, req.Value, secret)
		}
		return &out, nil
	}
	find := func(ctx context.Context, since func(answer) time.Time) (*Variable, string, error) {
		q := url.Values{"parent_id": {req.OverrideParentID}, "scope": {req.OverrideScope}}
		vars, a, err := getListAnswer[Variable](ctx, c, "/variable", q)
		if err != nil {
			return nil, "", err
		}
		for i := range vars {
			v := &vars[i]
			if v.VariableType != VariableTypeOverride || v.Scope != req.OverrideScope || v.OverriddenVariable == nil || v.OverriddenVariable.ID != id {
				continue
			}
			if conflict := checkCreated("an override of", id, v.ID, v.CreatedAt, since(a)); conflict != "" {
				return nil, conflict, nil
			}
			if !v.IsSecret && (v.Value == nil || *v.Value != req.Value) {
				return nil, fmt.Sprintf("an override %s (%s) of variable %s exists with another value", v.Key, v.ID, id), nil
			}
			return v, "", nil
		}
		return nil, "", nil
	}
	return createSettled(ctx, path, "the override of variable "+id, create, find)
}

// variableDiff says how a variable differs from a request in kind or, for
// a plain variable, value, or returns "". It never quotes a value.
func variableDiff(v *Variable, req *VariableRequest) string {
	if diff := kindDiff(v, req); diff != "" {
		return diff
	}
	if !v.IsSecret && (v.Value == nil || *v.Value != req.Value) {
		return "with another value"
	}
	return ""
}

// kindDiff says how a variable differs from a request in kind (secret or
// not, file or not), or returns "".
func kindDiff(v *Variable, req *VariableRequest) string {
	if v.IsSecret != req.IsSecret && v.IsSecret {
		return "as a secret"
	}
	if v.IsSecret != req.IsSecret {
		return "as a plain variable"
	}
	if (v.MountPath == nil) != (req.MountPath == nil) ||
		(v.MountPath != nil && *v.MountPath != *req.MountPath) {
		if v.MountPath == nil {
			return "as an environment variable"
		}
		return "as a file at " + *v.MountPath
	}
	return ""
}

// minRedacted is the shortest plain value blanked out of error messages;
// shorter ones ("1", "yes") would garble the message and hide nothing. A
// secret is blanked out whatever its length.
const minRedacted = 4

// redactValue blanks a variable's value out of an API error: a server may
// quote a rejected request back.
func redactValue(err error, value string, secret bool) error {
	if !secret && len(value) < minRedacted {
		return err
	}
	return redactSecrets(err, value)
}

// redactSecrets blanks secrets (as sent, and as escaped in JSON) out of the
// server's message in an API error.
func redactSecrets(err error, secrets ...string) error {
	var e *APIError
	if !errors.As(err, &e) {
		return err
	}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		e.Detail = strings.ReplaceAll(e.Detail, s, "[value hidden]")
		if quoted, qerr := json.Marshal(s); qerr == nil {
			e.Detail = strings.ReplaceAll(e.Detail, strings.Trim(string(quoted), `"`), "[value hidden]")
		}
	}
	return err
}

// EditVariable edits a variable. As for CreateVariable, the value never
// appears in an error.
func (c *Client) EditVariable(ctx context.Context, id string, req *VariableEditRequest) (*Variable, error) {
	if req == nil {
		return nil, errNilRequest
	}
	var out Variable
	if err := c.do(ctx, http.MethodPut, pathf("/variable/%s", id), req, &out); err != nil {
		if req.Value != nil {
			// An edit does not say whether the variable is a secret:
			// values long enough to hide anything are blanked out.
			err = redactValue(err, *req.Value, false)
		}
		return nil, err
	}
	return &out, nil
}

// DeleteVariable deletes a variable, and its overrides with it. One that is
// already gone is an error for which IsNotFound is true, also when the API
// answers 403 for it, provided in names its parent (VariableParent): the
// parent's list then proves it gone (see IsNotFound).
func (c *Client) DeleteVariable(ctx context.Context, id string, in ...Parent) error {
	err := c.do(ctx, http.MethodDelete, pathf("/variable/%s", id), nil, nil)
	if err == nil {
		return nil
	}
	p, ok := parent(in)
	if !ok {
		return confirmGone(ctx, err, "variable", id, "", nil)
	}
	return confirmGone(ctx, err, "variable", id, fmt.Sprintf("the variables of %s %s", p.scope, p.id), func(ctx context.Context) ([]string, error) {
		vars, err := c.ListVariables(ctx, p.id, p.scope)
		ids := make([]string, 0, len(vars))
		for _, v := range vars {
			ids = append(ids, v.ID)
		}
		return ids, err
	})
}
