package qovery

import (
	"context"
	"net/http"
	"net/url"
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

// VariableTypeValue is the variable_type of a plain variable or secret.
const VariableTypeValue = "VALUE"

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

// ListVariables lists every variable visible from parentID, whose scope is
// scope (HELM for a Helm service id): the parent's own variables and those
// inherited from the environment, the project and the built-in ones. Filter
// on Scope and VariableType to keep the parent's own.
func (c *Client) ListVariables(ctx context.Context, parentID, scope string) ([]Variable, error) {
	q := url.Values{"parent_id": {parentID}, "scope": {scope}}
	return getList[Variable](ctx, c, "/variable", q)
}

// CreateVariable creates a variable. A key already defined on the same
// parent and scope answers 409 (IsConflict).
func (c *Client) CreateVariable(ctx context.Context, req *VariableRequest) (*Variable, error) {
	if req == nil {
		return nil, errNilRequest
	}
	var out Variable
	if err := c.do(ctx, http.MethodPost, "/variable", nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// EditVariable edits a variable.
func (c *Client) EditVariable(ctx context.Context, id string, req *VariableEditRequest) (*Variable, error) {
	if req == nil {
		return nil, errNilRequest
	}
	var out Variable
	if err := c.do(ctx, http.MethodPut, pathf("/variable/%s", id), nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteVariable deletes a variable.
func (c *Client) DeleteVariable(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, pathf("/variable/%s", id), nil, nil, nil)
}
