package qovery

import (
	"context"
	"errors"
	"testing"
)

func strp(s string) *string { return &s }

func TestVariableIsOwn(t *testing.T) {
	for _, tc := range []struct {
		v   Variable
		own bool
	}{
		{Variable{Scope: VariableScopeHelm, VariableType: VariableTypeValue}, true},
		{Variable{Scope: VariableScopeHelm, VariableType: VariableTypeOverride}, true},
		{Variable{Scope: VariableScopeHelm, VariableType: "ALIAS"}, false},
		{Variable{Scope: VariableScopeHelm, VariableType: "FILE"}, false},
		{Variable{Scope: VariableScopeEnvironment, VariableType: VariableTypeValue}, false},
		{Variable{Scope: VariableScopeEnvironment, VariableType: VariableTypeOverride}, false},
	} {
		if got := tc.v.IsOwn(VariableScopeHelm); got != tc.own {
			t.Errorf("%+v.IsOwn(HELM) = %v, want %v", tc.v, got, tc.own)
		}
	}
}

func TestVariableKindAndValueDiff(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    Variable
		req  VariableRequest
		want string
	}{
		{"same plain value", Variable{Value: strp("x")}, VariableRequest{Value: "x"}, ""},
		{"other plain value", Variable{Value: strp("x")}, VariableRequest{Value: "y"}, "with another value"},
		{"plain without value", Variable{}, VariableRequest{Value: ""}, "with another value"},
		{"secret, value unknown", Variable{IsSecret: true}, VariableRequest{IsSecret: true, Value: "s"}, ""},
		{"a secret in the way", Variable{IsSecret: true}, VariableRequest{Value: "s"}, "as a secret"},
		{"a plain one in the way", Variable{Value: strp("s")}, VariableRequest{IsSecret: true, Value: "s"}, "as a plain variable"},
		{"an environment variable in the way", Variable{Value: strp("s")}, VariableRequest{Value: "s", MountPath: strp("/f")}, "as an environment variable"},
		{"a file in the way", Variable{Value: strp("s"), MountPath: strp("/f")}, VariableRequest{Value: "s"}, "as a file at /f"},
		{"a file elsewhere", Variable{Value: strp("s"), MountPath: strp("/f")}, VariableRequest{Value: "s", MountPath: strp("/g")}, "as a file at /f"},
		{"the same file", Variable{Value: strp("s"), MountPath: strp("/f")}, VariableRequest{Value: "s", MountPath: strp("/f")}, ""},
	} {
		if got := variableDiff(&tc.v, &tc.req); got != tc.want {
			t.Errorf("%s: variableDiff = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRedactValue(t *testing.T) {
	apiErr := func(detail string) error { return &APIError{Status: 400, Detail: detail} }
	for _, tc := range []struct {
		detail, value string
		secret        bool
		want          string
	}{
		{"bad value abc", "abc", false, "bad value abc"},
		{"bad value abcd", "abcd", false, "bad value [value hidden]"},
		{"bad value ab", "ab", true, "bad value [value hidden]"},
		{`bad value "a\"b\\c"`, `a"b\c`, true, `bad value "[value hidden]"`},
		{"bad value", "", true, "bad value"},
	} {
		err := redactValue(apiErr(tc.detail), tc.value, tc.secret)
		var e *APIError
		if !errors.As(err, &e) || e.Detail != tc.want {
			t.Errorf("redactValue(%q, %q, %v) = %v, want detail %q", tc.detail, tc.value, tc.secret, err, tc.want)
		}
	}
	plain := errors.New("dial tcp: secret-value")
	if got := redactValue(plain, "secret-value", true); got != plain {
		t.Errorf("a non-API error is changed: %v", got)
	}
}

func TestInheritedVariableIsTheMostSpecific(t *testing.T) {
	s := &rawServer{status: 200, body: `{"results":[
		{"id":"p","key":"K","scope":"PROJECT","variable_type":"VALUE"},
		{"id":"e","key":"K","scope":"ENVIRONMENT","variable_type":"VALUE"},
		{"id":"e2","key":"K","scope":"ENVIRONMENT","variable_type":"VALUE"},
		{"id":"p2","key":"K","scope":"PROJECT","variable_type":"FILE"},
		{"id":"b","key":"K","scope":"BUILT_IN","variable_type":"VALUE"},
		{"id":"a","key":"K","scope":"ENVIRONMENT","variable_type":"ALIAS"},
		{"id":"o","key":"OTHER","scope":"HELM","variable_type":"VALUE"}]}`}
	c := newRawClient(t, s)
	req := &VariableRequest{Key: "K", VariableScope: VariableScopeHelm, VariableParentID: "h"}
	v, err := c.inheritedVariable(context.Background(), req)
	if err != nil || v == nil || v.ID != "e" {
		t.Fatalf("inheritedVariable = %+v, %v; want the environment's first", v, err)
	}
	s.body = `{"results":[{"id":"b","key":"K","scope":"BUILT_IN","variable_type":"VALUE"},{"id":"p2","key":"K","scope":"PROJECT","variable_type":"FILE"},{"id":"a","key":"K","scope":"ENVIRONMENT","variable_type":"ALIAS"}]}`
	if v, err := c.inheritedVariable(context.Background(), req); err != nil || v == nil || v.ID != "p2" {
		t.Fatalf("inheritedVariable = %+v, %v; want the project's file", v, err)
	}
	s.body = `{"results":[{"id":"e","key":"K","scope":"ENVIRONMENT","variable_type":"VALUE"},{"id":"h","key":"K","scope":"HELM","variable_type":"OVERRIDE"}]}`
	if v, err := c.inheritedVariable(context.Background(), req); err != nil || v != nil {
		t.Fatalf("inheritedVariable with an own one = %+v, %v; want none", v, err)
	}
	if got := s.uris[0]; got != "/api/variable?parent_id=h&scope=HELM" {
		t.Errorf("list URI %q", got)
	}
	if scopeRank(VariableScopeEnvironment) <= scopeRank(VariableScopeProject) || scopeRank(VariableScopeProject) <= scopeRank(VariableScopeBuiltIn) {
		t.Error("scopeRank does not order ENVIRONMENT > PROJECT > others")
	}
}
