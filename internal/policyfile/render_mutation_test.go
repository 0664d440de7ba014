package policyfile

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

func TestDetectStyle(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      style
	}{
		{"tabs, trailing commas", "{\n\t\"a\": [\n\t\t1,\n\t],\n}\n", style{"\t", "\n", true}},
		{"four spaces, no trailing commas", "{\n    \"a\": [\n        1\n    ]\n}", style{"    ", "\n", false}},
		{"two spaces, CRLF", "{\r\n  \"a\": 1,\r\n}\r\n", style{"  ", "\r\n", true}},
		{"widths 4 and 6", "{\n    \"a\": 1,\n      \"b\": 2,\n}", style{"  ", "\n", true}},
		{"as many tabs as spaces", "{\n\t\"a\": 1,\n  \"b\": 2,\n}", style{"\t", "\n", true}},
		{"one with and one without", "{\n\t\"a\": [\n\t\t1\n\t],\n}", style{"\t", "\n", true}},
		{"two without, one with", "{\n\t\"a\": [\n\t\t1\n\t],\n\t\"b\": [\n\t\t1\n\t],\n\t\"c\": {\n\t\t\"d\": 1,\n\t}\n}", style{"\t", "\n", false}},
		{"one line", "{\"a\": [1]}", style{"\t", "\n", true}},
		{"spaces then a tab", "{\n  \t\"a\": 1,\n    \"b\": 2,\n}", style{"  ", "\n", true}},
	} {
		root, err := hujson.Parse([]byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		if got := detectStyle([]byte(tc.src), &root); got != tc.want {
			t.Errorf("%s: detectStyle = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if gcd(12, 18) != 6 || gcd(0, 4) != 4 || gcd(4, 0) != 4 {
		t.Error("gcd")
	}
}

func TestLayoutInlineUpToMaxInline(t *testing.T) {
	st := style{unit: "\t", nl: "\n", trailing: true}
	render := func(src string, s style, ind string, expand bool) string {
		v, err := hujson.Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		tree := hujson.Value{Value: s.layout(&v, ind, expand, nil)}
		text := tree.Pack()
		// The tree is the one that hujson.Parse makes of its text.
		parsed, err := hujson.Parse(text)
		if err != nil {
			t.Fatalf("layout(%s) wrote %q: %v", src, text, err)
		}
		if !sameTree(tree, parsed) {
			t.Errorf("layout(%s): the tree is not the one Parse makes of %q:\n%#v\n%#v", src, text, tree, parsed)
		}
		return string(text)
	}
	fits := `["` + strings.Repeat("x", maxInline-4) + `"]`
	if got := render(fits, st, "", false); got != fits {
		t.Errorf("%d bytes are not kept on one line: %q", len(fits), got)
	}
	// An object of one member: `{"k": "` and `"}` take 9 bytes.
	if obj := `{"k": "` + strings.Repeat("x", maxInline-9) + `"}`; render(obj, st, "", false) != obj {
		t.Errorf("the object of %d bytes is not kept on one line", len(obj))
	}
	long := `["` + strings.Repeat("x", maxInline-3) + `"]`
	if got, want := render(long, st, "\t", false), "[\n\t\t\""+strings.Repeat("x", maxInline-3)+"\",\n\t]"; got != want {
		t.Errorf("%d bytes: %q, want %q", len(long), got, want)
	}
	for _, tc := range []struct {
		src    string
		st     style
		expand bool
		want   string
	}{
		{`[1,2]`, st, false, "[1, 2]"},
		{`{"b":1,"a":[1, 2]}`, st, false, `{"b": 1, "a": [1, 2]}`},
		{`[1,2]`, st, true, "[\n\t1,\n\t2,\n]"},
		{`[1,2]`, style{"  ", "\r\n", false}, true, "[\r\n  1,\r\n  2\r\n]"},
		{`{"b":1,"a":{}}`, style{"  ", "\n", false}, true, "{\n  \"b\": 1,\n  \"a\": {}\n}"},
		{`{"b":1,"a":[]}`, st, true, "{\n\t\"b\": 1,\n\t\"a\": [],\n}"},
		{`[]`, st, true, "[]"},
		{`{}`, st, true, "{}"},
		{`"s"`, st, true, `"s"`},
		{`"a\u0041"`, st, false, `"aA"`},
		{`[[1, [2,{"x":{}}]], {"a\"b":[]}]`, st, false, `[[1, [2, {"x": {}}]], {"a\"b": []}]`},
		{`{"a":{"b":[1,2],"c":"` + strings.Repeat("y", maxInline) + `"}}`, style{"  ", "\n", true}, true,
			"{\n  \"a\": {\n    \"b\": [1, 2],\n    \"c\": \"" + strings.Repeat("y", maxInline) + "\",\n  },\n}"},
	} {
		if got := render(tc.src, tc.st, "", tc.expand); got != tc.want {
			t.Errorf("layout(%s, %+v, expand %v) = %q, want %q", tc.src, tc.st, tc.expand, got, tc.want)
		}
	}
}

func TestFormatFragmentOrder(t *testing.T) {
	st := style{unit: "\t", nl: "\n", trailing: true}
	for _, tc := range []struct {
		kind Kind
		src  string
		want string
	}{
		{KindGrant, `{"x":1,"via":["v"],"IP":["*"],"dst":["d"],"srcPosture":["p"],"app":{},"Src":["s"]}`,
			"{\n\t\t\"Src\": [\"s\"],\n\t\t\"dst\": [\"d\"],\n\t\t\"IP\": [\"*\"],\n\t\t\"app\": {},\n\t\t\"via\": [\"v\"],\n\t\t\"srcPosture\": [\"p\"],\n\t\t\"x\": 1,\n\t}"},
		{KindPolicyTest, `{"deny":[],"accept":["a:1"],"srcPostureAttrs":{},"proto":"tcp","src":"s"}`,
			"{\n\t\t\"src\": \"s\",\n\t\t\"proto\": \"tcp\",\n\t\t\"srcPostureAttrs\": {},\n\t\t\"accept\": [\"a:1\"],\n\t\t\"deny\": [],\n\t}"},
		{KindTagOwner, `["b","a"]`, `["b", "a"]`},
	} {
		v, err := hujson.Parse([]byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		out := st.formatFragment(tc.kind, &v, "\t")
		if got := string(out.Pack()); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.kind, got, tc.want)
		}
	}
}

func TestSameJSONForms(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		nilA bool
		nilB bool
		same bool
	}{
		{`{"a":1,"b":[1,2]}`, `{ "b": [1, 2], /* c */ "a": 1 }`, false, false, true},
		{`{"a":1}`, `{"a":2}`, false, false, false},
		{`[1,2]`, `[2,1]`, false, false, false},
		{``, ``, true, true, true},
		{`1`, ``, false, true, false},
		{``, `1`, true, false, false},
		{`{`, `{`, false, false, false},
		{`1`, `{`, false, false, false},
		{`"\u0041"`, `"A"`, false, false, true},
	} {
		var a, b []byte
		if !tc.nilA {
			a = []byte(tc.a)
		}
		if !tc.nilB {
			b = []byte(tc.b)
		}
		if got := SameJSON(a, b); got != tc.same {
			t.Errorf("SameJSON(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
	if _, err := Canonicalize([]byte(`{`)); err == nil || !strings.HasPrefix(err.Error(), "policy: ") {
		t.Errorf("Canonicalize error %v", err)
	}
	if got, _ := Canonicalize([]byte(`{"b":[1, {"d":1,"c":2}],"a":"x"}`)); string(got) != `{"a":"x","b":[1,{"c":2,"d":1}]}` {
		t.Errorf("Canonicalize = %s", got)
	}
}

// sameTree reports whether a and b are the same tree, offsets aside: the
// same extras (nil and empty told apart: an empty AfterExtra is a
// trailing comma), literals and composites.
func sameTree(a, b hujson.Value) bool {
	if !sameExtra(a.BeforeExtra, b.BeforeExtra) || !sameExtra(a.AfterExtra, b.AfterExtra) {
		return false
	}
	switch x := a.Value.(type) {
	case hujson.Literal:
		y, ok := b.Value.(hujson.Literal)
		return ok && string(x) == string(y)
	case *hujson.Array:
		y, ok := b.Value.(*hujson.Array)
		if !ok || len(x.Elements) != len(y.Elements) || !sameExtra(x.AfterExtra, y.AfterExtra) {
			return false
		}
		for i := range x.Elements {
			if !sameTree(x.Elements[i], y.Elements[i]) {
				return false
			}
		}
		return true
	case *hujson.Object:
		y, ok := b.Value.(*hujson.Object)
		if !ok || len(x.Members) != len(y.Members) || !sameExtra(x.AfterExtra, y.AfterExtra) {
			return false
		}
		for i := range x.Members {
			if !sameTree(x.Members[i].Name, y.Members[i].Name) || !sameTree(x.Members[i].Value, y.Members[i].Value) {
				return false
			}
		}
		return true
	}
	return false
}

func sameExtra(a, b hujson.Extra) bool {
	return (a == nil) == (b == nil) && string(a) == string(b)
}

// Whatever fragment value it is given, formatFragment returns the tree
// that hujson.Parse makes of its text, and does not change the value.
func FuzzLayout(f *testing.F) {
	for _, seed := range []string{
		`{"src":["group:ops"],"dst":["tag:web"],"ip":["tcp:443"]}`, `["b","a"]`, `{}`, `[]`,
		`{"x":1,"via":["v"],"IP":["*"],"dst":["d"],"srcPosture":["p"],"app":{"a/b":[{"c":[1,2.5,true,null]}]},"Src":["s"]}`,
		`{"src":"s","proto":"tcp","accept":["a:1"],"deny":[]}`, `{"a\"b":"\u0041\n"}`,
		`["` + strings.Repeat("x", maxInline) + `"]`,
	} {
		f.Add(seed, uint8(0))
	}
	styles := []style{{"\t", "\n", true}, {"  ", "\r\n", false}, {"    ", "\n", false}, {" ", "\n", true}}
	kinds := []Kind{KindGrant, KindPolicyTest, KindTagOwner, KindAutoApprover}
	f.Fuzz(func(t *testing.T, src string, pick uint8) {
		v, err := hujson.Parse([]byte(src))
		if err != nil {
			return
		}
		before := string(v.Pack())
		st, kind := styles[int(pick)%len(styles)], kinds[int(pick/4)%len(kinds)]
		ind := strings.Repeat(st.unit, int(pick/16)%3)
		tree := st.formatFragment(kind, &v, ind)
		text := tree.Pack()
		parsed, err := hujson.Parse(text)
		if err != nil {
			t.Fatalf("formatFragment(%s) wrote %q: %v", src, text, err)
		}
		if !sameTree(tree, parsed) {
			t.Fatalf("formatFragment(%s): the tree is not the one Parse makes of %q", src, text)
		}
		if got := string(v.Pack()); got != before {
			t.Fatalf("formatFragment changed its value: %q, was %q", got, before)
		}
		if !SameJSON(json.RawMessage(before), json.RawMessage(text)) {
			t.Fatalf("formatFragment(%s) wrote another value: %q", src, text)
		}
	})
}
