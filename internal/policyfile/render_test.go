package policyfile

import (
	"encoding/json"
	"testing"

	"github.com/tailscale/hujson"
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
		{a: `{"a":1}`, b: `{"a":1}`, want: true},
		{a: "{\"a\": 1, // note\n}", b: "{\"a\": 1, // note\n}", want: true},
		{a: `{"a":"<"}`, b: `{"a":"\u003c"}`, want: true},
		{a: `[1,]`, b: `[1,]`, want: true},
		{a: `[1,,]`, b: `[1,,]`, want: false},
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

// A string literal read without its JSON decoding (plainString) reads as
// hujson reads it, and is written again as hujson writes its value:
// FuzzStringLiteral checks it for any literal that parses, and any value.
func FuzzStringLiteral(f *testing.F) {
	for _, seed := range []string{
		`"group:ops"`, `""`, `"a\"b"`, `"tab\there"`, `"\u0041"`, `"\/"`, `"é"`, `"\u00e9"`,
		`"<script>&"`, `"\ud83d\ude00"`, `"😀"`, "\"\xff\"", `"a\\b"`, `"\n"`, `"tag:web"`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		check := func(lit hujson.Literal) {
			if lit.Kind() != '"' {
				return
			}
			if got, want := literalString(lit), lit.String(); got != want {
				t.Errorf("literalString(%q) = %q, want %q", lit, got, want)
			}
			if got, want := string(appendLiteral(nil, lit)), string(hujson.String(lit.String())); got != want {
				t.Errorf("appendLiteral(%q) = %q, want %q", lit, got, want)
			}
		}
		if v, err := hujson.Parse([]byte(text)); err == nil {
			if lit, ok := v.Value.(hujson.Literal); ok {
				check(lit)
			}
		}
		check(hujson.String(text))
	})
}

func TestPlainString(t *testing.T) {
	for lit, want := range map[string]bool{
		`"group:ops"`: true, `""`: true, `"é"`: true, `"<&>"`: true,
		`"a\"b"`: false, `"\u0041"`: false, "\"\xff\"": false, "\"a\tb\"": false, `"`: false, `x`: false, `"a`: false, `a"`: false, `12`: false,
	} {
		if got := plainString(hujson.Literal(lit)); got != want {
			t.Errorf("plainString(%q) = %v, want %v", lit, got, want)
		}
	}
}

// parseJSON accepts exactly what json.Valid accepts.
func FuzzParseJSON(f *testing.F) {
	for _, seed := range []string{`{"a":[1,2.5e3,true,null,"x"]}`, `{"a":1,}`, "{\"a\":1 // c\n}", `/* c */ 1`, " \t\r\n[] ",
		"\x0c[]", "\u00a0[]", `"\u00"`, `01`, `-0`, `1.`, `"` + "\xff" + `"`, `[1,,2]`, `{"a"}`, ``, `nul`, `"a` + "\t" + `"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, ok := parseJSON(b)
		if want := json.Valid(b); ok != want {
			t.Fatalf("parseJSON(%q) = %v, json.Valid %v", b, ok, want)
		}
	})
}
