package qoveryapi_test

import (
	"net/http"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
)

// TestVariableOverrides: a key defined on the environment or project is
// refused on the service (409), and overridden with
// POST /variable/{id}/override instead.
func TestVariableOverrides(t *testing.T) {
	w := newWorld(t, qoveryapi.Options{})
	id := w.operator()
	envVar := w.must(http.StatusCreated, http.MethodPost, "/variable", obj{"key": "LOG_LEVEL", "value": "info", "is_secret": false, "variable_scope": "ENVIRONMENT", "variable_parent_id": w.env})
	projSecret := w.must(http.StatusCreated, http.MethodPost, "/variable", obj{"key": "API_KEY", "value": "project-key", "is_secret": true, "variable_scope": "PROJECT", "variable_parent_id": w.project})

	w.wantError(http.StatusConflict, http.MethodPost, "/variable", obj{"key": "LOG_LEVEL", "value": "debug", "is_secret": false, "variable_scope": "HELM", "variable_parent_id": id}, "Variable already exists: LOG_LEVEL")
	w.wantError(http.StatusConflict, http.MethodPost, "/variable", obj{"key": "API_KEY", "value": "k", "is_secret": true, "variable_scope": "HELM", "variable_parent_id": id}, "Variable already exists: API_KEY")

	over := w.must(http.StatusCreated, http.MethodPost, "/variable/"+str(envVar, "id")+"/override",
		obj{"value": "debug", "override_scope": "HELM", "override_parent_id": id, "description": "chatty"})
	if str(over, "key") != "LOG_LEVEL" || str(over, "scope") != "HELM" || str(over, "variable_type") != "OVERRIDE" || str(over, "value") != "debug" ||
		at(over, "is_secret") != false || str(over, "overridden_variable", "id") != str(envVar, "id") || str(over, "overridden_variable", "scope") != "ENVIRONMENT" ||
		str(over, "overridden_variable", "value") != "info" || str(over, "description") != "chatty" || str(over, "service_id") != id {
		t.Errorf("override %v", over)
	}
	secret := w.must(http.StatusCreated, http.MethodPost, "/variable/"+str(projSecret, "id")+"/override",
		obj{"value": "service-key", "override_scope": "HELM", "override_parent_id": id})
	if at(secret, "is_secret") != true || at(secret, "value") != nil || at(secret, "overridden_variable", "value") != nil || str(secret, "variable_type") != "OVERRIDE" {
		t.Errorf("secret override %v", secret)
	}
	resolved := w.srv.ResolvedVariables(id)
	if resolved["LOG_LEVEL"] != "debug" || resolved["API_KEY"] != "service-key" {
		t.Errorf("resolved %v", resolved)
	}
	if w.srv.ResolvedVariables(w.env)["LOG_LEVEL"] != "info" {
		t.Error("the override changed the environment's value")
	}
	// The service's list holds both: the environment's and the override.
	var scopes []string
	for _, v := range items(w.must(http.StatusOK, http.MethodGet, "/variable?parent_id="+id+"&scope=HELM", nil)) {
		if str(v, "key") == "LOG_LEVEL" {
			scopes = append(scopes, str(v, "scope")+"/"+str(v, "variable_type"))
		}
	}
	if len(scopes) != 2 || scopes[0] != "ENVIRONMENT/VALUE" || scopes[1] != "HELM/OVERRIDE" {
		t.Errorf("LOG_LEVEL in the list: %v", scopes)
	}

	// Refusals.
	w.wantError(http.StatusConflict, http.MethodPost, "/variable/"+str(envVar, "id")+"/override",
		obj{"value": "again", "override_scope": "HELM", "override_parent_id": id}, "Variable already exists: LOG_LEVEL")
	w.wantError(http.StatusBadRequest, http.MethodPost, "/variable/"+str(envVar, "id")+"/override",
		obj{"value": "x", "override_scope": "PROJECT", "override_parent_id": w.project}, "override_parent_id")
	w.wantError(http.StatusBadRequest, http.MethodPost, "/variable/"+str(over, "id")+"/override",
		obj{"value": "x", "override_scope": "HELM", "override_parent_id": id}, "is an override")
	w.wantError(http.StatusBadRequest, http.MethodPost, "/variable/"+str(envVar, "id")+"/override",
		obj{"override_scope": "HELM", "override_parent_id": id}, "value")
	w.wantError(http.StatusNotFound, http.MethodPost, "/variable/"+str(envVar, "id")+"/override",
		obj{"value": "x", "override_scope": "HELM", "override_parent_id": w.env}, "")
	w.wantError(http.StatusBadRequest, http.MethodPut, "/variable/"+str(over, "id"), obj{"key": "OTHER"}, "key", "override")

	// Its value is edited like any variable's.
	if v := w.must(http.StatusOK, http.MethodPut, "/variable/"+str(over, "id"), obj{"key": "LOG_LEVEL", "value": "warn"}); str(v, "value") != "warn" || str(v, "variable_type") != "OVERRIDE" {
		t.Errorf("edited override %v", v)
	}
	// Deleting the overridden variable deletes the override.
	w.must(http.StatusNoContent, http.MethodDelete, "/variable/"+str(envVar, "id"), nil)
	w.wantError(w.gone, http.MethodDelete, "/variable/"+str(over, "id"), nil)
	if _, ok := w.srv.ResolvedVariables(id)["LOG_LEVEL"]; ok {
		t.Error("LOG_LEVEL still resolved")
	}
	// With the environment's variable gone, the key is free on the service.
	w.must(http.StatusCreated, http.MethodPost, "/variable", obj{"key": "LOG_LEVEL", "value": "debug", "is_secret": false, "variable_scope": "HELM", "variable_parent_id": id})
}
