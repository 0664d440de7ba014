package policyfile

import (
	"encoding/json"
	"testing"
)

func TestSameJSON(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		nilA bool
		want bool
	}{
		{a: `{"b": 1, "a": [true]}`, b: `{"a":[true],"b":1}`, want: true},
		{a: `{"a": [true, false]}`, b: `{"a": [false, true]}`, want: false},
		{a: "{\n\t\"a\": 1, // note\n}", b: `{"a":1}`, want: true},
		{a: `{"a":`, b: `{"a":`, want: false},
		{nilA: true, b: `{}`, want: false},
	} {
		var a json.RawMessage
		if !tc.nilA {
			a = json.RawMessage(tc.a)
		}
		if got := SameJSON(a, json.RawMessage(tc.b)); got != tc.want {
			t.Errorf("SameJSON(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	if !SameJSON(nil, nil) {
		t.Error("nil and nil differ")
	}
}
