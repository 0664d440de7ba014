package qovery

import (
	"encoding/json"
	"strings"
	"testing"
)

// editBody builds the shared members of an edit request from read and
// returns them as JSON with sorted keys.
func editBody(path string, read []byte, groupIDs []string) (string, error) {
	var w workloadEdit
	if err := readEdit(path, read, &w, &w, groupIDs); err != nil {
		return "", err
	}
	b, err := json.Marshal(&w)
	if err != nil {
		return "", err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return "", err
	}
	b, err = json.Marshal(v)
	return string(b), err
}

// canonicalJSON returns s with sorted keys.
func canonicalJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEditRequestKeepsTheServiceAndReplacesTheGroups(t *testing.T) {
	read := `{"name":"api","labels_groups":[{"id":"l1","name":"x"},{"id":"l2"}],"autoscaling":{"mode":"KEDA","polling_interval_seconds":30,"cooldown_period_seconds":null,"scalers":[` +
		`{"scaler_type":"cron","enabled":true,"role":"PRIMARY","config_json":{"a":1},"config_yaml":"x: 1","trigger_authentication":{"name":"t","config_yaml":"k: v"}},` +
		`{"scaler_type":"cpu","role":"SECONDARY","config_json":null,"trigger_authentication":{"name":"u"}},` +
		`{"scaler_type":"mem","role":"SECONDARY","config_json":{}}]},"annotations_groups":[{"id":"old"}]}`
	got, err := editBody("/application/a", []byte(read), []string{"g1", "g2", "g1"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"annotations_groups":[{"id":"g1"},{"id":"g2"}],"autoscaling":{"mode":"KEDA","polling_interval_seconds":30,"scalers":[` +
		`{"scaler_type":"cron","enabled":true,"role":"PRIMARY","config_json":{"a":1},"config_yaml":"x: 1","trigger_authentication":{"name":"t","config_yaml":"k: v"}},` +
		`{"scaler_type":"cpu","role":"SECONDARY","trigger_authentication":{"name":"u","config_yaml":""}},` +
		`{"scaler_type":"mem","role":"SECONDARY","config_json":{}}]},"labels_groups":[{"id":"l1"},{"id":"l2"}],"name":"api"}`
	if want = canonicalJSON(t, want); got != want {
		t.Errorf("body\n%s\nwant\n%s", got, want)
	}
	for _, tc := range []struct{ read, want string }{
		{`{"name":"api","autoscaling":null}`, `{"annotations_groups":[],"name":"api"}`},
		{`{"name":"api","autoscaling":{"mode":"NONE"}}`, `{"annotations_groups":[],"autoscaling":{"mode":"NONE","scalers":[]},"name":"api"}`},
	} {
		b, err := editBody("/container/c", []byte(tc.read), nil)
		if err != nil || b != canonicalJSON(t, tc.want) {
			t.Errorf("editBody(%s) = %s, %v; want %s", tc.read, b, err, tc.want)
		}
	}
	for _, tc := range []struct{ read, want string }{
		{`[]`, "qovery: GET /container/c: the answer is not a JSON object: json: cannot unmarshal array into Go value of type map[string]json.RawMessage"},
		{`null`, "qovery: GET /container/c: the answer is null"},
		{`{"labels_groups":{}}`, "qovery: GET /container/c: labels_groups: json: cannot unmarshal object into Go value of type []qovery.Ref"},
		{`{"autoscaling":[]}`, "qovery: GET /container/c: autoscaling: json: cannot unmarshal array into Go value of type struct {"},
	} {
		if _, err := editBody("/container/c", []byte(tc.read), nil); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("editBody(%s) error:\n%v\nwant\n%s", tc.read, err, tc.want)
		}
	}
}
