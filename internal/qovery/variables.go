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
	find := func(ctx context.Context, since func(answer) time.Time) (*Variable, string, error) {
		q := url.Values{"parent_id": {req.VariableParentID}, "scope": {req.VariableScope}}
		vars, a, err := getListAnswer[Variable](ctx, c, path, q)
		if err != nil {
			return nil, "", err
		}
		for i := range vars {
			v := &vars[i]
			if v.Scope != req.VariableScope || v.Key != req.Key {
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
	return createSettled(ctx, path, "the variable "+req.Key, create, find)
}

// variableDiff says how a variable differs from a request in kind or, for
// a plain variable, value, or returns "". It never quotes a value.
func variableDiff(v *Variable, req *VariableRequest) string {
	kind := func(secret bool) string {
		if secret {
			return "a secret"
		}
		return "a plain variable"
	}
	switch {
	case v.IsSecret != req.IsSecret:
		return "as " + kind(v.IsSecret)
	case (v.MountPath == nil) != (req.MountPath == nil) ||
		(v.MountPath != nil && *v.MountPath != *req.MountPath):
		if v.MountPath == nil {
			return "as an environment variable"
		}
		return "as a file at " + *v.MountPath
	case !v.IsSecret && (v.Value == nil || *v.Value != req.Value):
		return "with another value"
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

// DeleteVariable deletes a variable.
func (c *Client) DeleteVariable(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, pathf("/variable/%s", id), nil, nil)
}
