package tfwire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// grantsType is the type of a qtail_grants: the samples' type.
var grantsType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{
	"grants": tftypes.Map{ElementType: tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"app": tftypes.String, "dst": tftypes.List{ElementType: tftypes.String}, "ip": tftypes.List{ElementType: tftypes.String},
		"src": tftypes.List{ElementType: tftypes.String}, "src_posture": tftypes.List{ElementType: tftypes.String},
		"via": tftypes.List{ElementType: tftypes.String}, "enabled": tftypes.Bool,
	}}},
	"id":       tftypes.String,
	"owners":   tftypes.Map{ElementType: tftypes.String},
	"unmarked": tftypes.List{ElementType: tftypes.String},
}}

// tftypesOf is the tftypes value of the wire value v of type typ.
func tftypesOf(t testing.TB, v any, typ tftypes.Type) tftypes.Value {
	t.Helper()
	switch x := v.(type) {
	case nil:
		return tftypes.NewValue(typ, nil)
	case Unknown:
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	case string, bool:
		return tftypes.NewValue(typ, x)
	case []any:
		l, ok := typ.(tftypes.List)
		if !ok {
			t.Fatalf("a list for %s", typ)
		}
		elems := make([]tftypes.Value, len(x))
		for i, e := range x {
			elems[i] = tftypesOf(t, e, l.ElementType)
		}
		return tftypes.NewValue(typ, elems)
	case map[string]any:
		vals := make(map[string]tftypes.Value, len(x))
		for k, e := range x {
			var et tftypes.Type
			if m, ok := typ.(tftypes.Map); ok {
				et = m.ElementType
			} else if o, ok := typ.(tftypes.Object); ok {
				et = o.AttributeTypes[k]
			} else {
				t.Fatalf("a map for %s", typ)
			}
			vals[k] = tftypesOf(t, e, et)
		}
		return tftypes.NewValue(typ, vals)
	}
	t.Fatalf("%T is not a wire value", v)
	return tftypes.Value{}
}

// wireSamples are values of qtail_grants' type, with every form the
// codec meets: nulls and unknowns at each level, empty and long lists
// and maps, and strings of each length class (the 32-bit one only when
// huge: a fuzz target mutates its seeds byte by byte).
func wireSamples(huge bool) map[string]any {
	longest := strings.Repeat("é", 200)
	if huge {
		longest = strings.Repeat("é", 40000)
	}
	grant := func(dst string) map[string]any {
		return map[string]any{"src": []any{"group:ops"}, "dst": []any{dst}, "ip": []any{"tcp:443"}, "app": nil, "via": nil, "src_posture": nil, "enabled": false}
	}
	many := map[string]any{}
	owners := map[string]any{}
	for i := range 40 {
		name := fmt.Sprint("g", i)
		many[name] = grant(fmt.Sprint("100.64.0.", i))
		owners[name] = fmt.Sprintf("owner%05d", i)
	}
	long := map[string]any{"src": []any{strings.Repeat("a", 31), strings.Repeat("b", 32), strings.Repeat("c", 255), strings.Repeat("d", 256), longest},
		"dst": []any{"*"}, "ip": make([]any, 0), "app": `{"example.com/cap":[{"x":1}]}`, "via": []any{"tag:a", "tag:b", "tag:c", "tag:d", "tag:e", "tag:f", "tag:g", "tag:h", "tag:i", "tag:j", "tag:k", "tag:l", "tag:m", "tag:n", "tag:o", "tag:p", "tag:q"}, "src_posture": []any{"posture:x"}, "enabled": true}
	return map[string]any{
		"null":    nil,
		"unknown": Unknown{},
		"configuration": map[string]any{"grants": map[string]any{"ops": grant("tag:web"), "nulls": map[string]any{"src": nil, "dst": nil, "ip": nil, "app": nil, "via": nil, "src_posture": nil, "enabled": nil}},
			"id": nil, "owners": nil, "unmarked": nil},
		"plan": map[string]any{"grants": many, "id": "g0,g1", "owners": map[string]any{"g0": "p7mv2rt4ha", "g1": Unknown{}}, "unmarked": []any{}},
		"state": map[string]any{"grants": map[string]any{"long": long, "ops": grant("tag:web")}, "id": "long,ops",
			"owners": owners, "unmarked": []any{"ops"}},
		"unknown parts": map[string]any{"grants": map[string]any{"u": map[string]any{"src": Unknown{}, "dst": []any{Unknown{}}, "ip": nil, "app": Unknown{}, "via": nil, "src_posture": nil, "enabled": Unknown{}}, "n": Unknown{}},
			"id": Unknown{}, "owners": Unknown{}, "unmarked": Unknown{}},
		"many grants": map[string]any{"grants": many, "id": nil, "owners": map[string]any{}, "unmarked": nil},
	}
}

// The codec reads what tftypes writes and writes what tftypes reads, for
// every sample: the same values both ways.
func TestWireAgreesWithTftypes(t *testing.T) {
	typ := grantsType
	for name, sample := range wireSamples(true) {
		t.Run(name, func(t *testing.T) {
			want := tftypesOf(t, sample, typ)
			theirs, err := want.MarshalMsgPack(typ) //nolint:staticcheck // the reference encoding
			if err != nil {
				t.Fatal(err)
			}
			read, err := Decode(theirs, typ)
			if err != nil {
				t.Fatalf("Decode of tftypes' encoding: %v", err)
			}
			if got := tftypesOf(t, read, typ); !got.Equal(want) {
				t.Errorf("Decode read\n%s\nwant\n%s", got, want)
			}
			ours, err := Encode(sample, typ)
			if err != nil {
				t.Fatal(err)
			}
			back, err := tftypes.ValueFromMsgPack(ours, typ) //nolint:staticcheck // the reference decoding
			if err != nil {
				t.Fatalf("tftypes cannot read Encode's bytes: %v", err)
			}
			if !back.Equal(want) {
				t.Errorf("Encode wrote\n%s\nwant\n%s", back, want)
			}
			if !strings.Contains(name, "many") && len(ours) != len(theirs) {
				t.Errorf("Encode wrote %d bytes, tftypes %d", len(ours), len(theirs))
			}
		})
	}
}

// What the codec does not read or write is an error (the fast path then
// leaves the request to the framework), never a wrong value.
func TestWireRefuses(t *testing.T) {
	typ := grantsType
	mapType := typ.AttributeTypes["grants"]
	good, err := Encode(wireSamples(false)["configuration"], typ)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		b   []byte
		typ tftypes.Type
	}{
		"empty":                    {nil, typ},
		"truncated":                {good[:len(good)-3], typ},
		"trailing bytes":           {append(append([]byte{}, good...), 0xc0), typ},
		"a number for a string":    {[]byte{0x2a}, tftypes.String},
		"a number type":            {[]byte{0x2a}, tftypes.Number},
		"a set type":               {[]byte{0x90}, tftypes.Set{ElementType: tftypes.String}},
		"an array for a map":       {[]byte{0x90}, mapType},
		"a map for a list":         {[]byte{0x80}, tftypes.List{ElementType: tftypes.String}},
		"a string for a bool":      {[]byte{0xa1, 'x'}, tftypes.Bool},
		"an object short of one":   {[]byte{0x81, 0xa2, 'i', 'd', 0xc0}, typ},
		"an unknown attribute":     {append([]byte{0x84, 0xa1, 'x', 0xc0}, good[1:]...), typ},
		"a key twice":              {[]byte{0x82, 0xa1, 'a', 0xc0, 0xa1, 'a', 0xc0}, tftypes.Map{ElementType: tftypes.String}},
		"a string that is not UTF": {[]byte{0xa1, 0xff}, tftypes.String},
		"a huge declared length":   {[]byte{0xdd, 0xff, 0xff, 0xff, 0xff}, tftypes.List{ElementType: tftypes.String}},
		"a truncated extension":    {[]byte{0xc7, 0x05, 0x00}, tftypes.String},
		"a truncated str16":        {[]byte{0xda, 0x00}, tftypes.String},
	} {
		if v, err := Decode(tc.b, tc.typ); err == nil || !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: Decode = %v, %v; want an ErrUnsupported", name, v, err)
		}
	}
	for name, tc := range map[string]struct {
		v   any
		typ tftypes.Type
	}{
		"a number":                {42, tftypes.String},
		"a string for a bool":     {"x", tftypes.Bool},
		"a string for a list":     {"x", tftypes.List{ElementType: tftypes.String}},
		"a list for a map":        {[]any{}, mapType},
		"a number type":           {map[string]any{}, tftypes.Number},
		"an object short of one":  {map[string]any{"id": nil}, typ},
		"an object with an extra": {map[string]any{"id": nil, "grants": nil, "owners": nil, "unmarked": nil, "x": nil}, typ},
		"a bad element":           {[]any{1}, tftypes.List{ElementType: tftypes.String}},
		"a bad map value":         {map[string]any{"k": 1}, tftypes.Map{ElementType: tftypes.String}},
	} {
		if b, err := Encode(tc.v, tc.typ); err == nil || !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: Encode = %x, %v; want an ErrUnsupported", name, b, err)
		}
	}
}

// Whatever the codec reads, tftypes reads as the same value; and what it
// writes of it, tftypes reads back as that value.
func FuzzWire(f *testing.F) {
	typ := grantsType
	for _, sample := range wireSamples(false) {
		b, err := Encode(sample, typ)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode(b, typ)
		if err != nil {
			return
		}
		want, err := tftypes.ValueFromMsgPack(b, typ) //nolint:staticcheck // the reference decoding
		if err != nil {
			t.Fatalf("Decode read %x, which tftypes refuses: %v", b, err)
		}
		if got := tftypesOf(t, v, typ); !got.Equal(want) {
			t.Fatalf("Decode read %x as\n%s\ntftypes as\n%s", b, got, want)
		}
		again, err := Encode(v, typ)
		if err != nil {
			t.Fatalf("Encode of what Decode read: %v", err)
		}
		back, err := tftypes.ValueFromMsgPack(again, typ) //nolint:staticcheck // the reference decoding
		if err != nil || !back.Equal(want) {
			t.Fatalf("Encode wrote %x, which tftypes reads as %v, %v", again, back, err)
		}
	})
}

// jsonCases are states as Terraform stores them, with what tftypes
// forgives: attributes left out or unknown to the type, strings written
// as numbers or bools.
func jsonCases(t testing.TB) map[string][]byte {
	out := map[string][]byte{
		"a missing attribute":   []byte(`{"grants": {"a": {"src": ["*"], "dst": ["*"]}}, "id": "a"}`),
		"an unknown attribute":  []byte(`{"grants": null, "id": "x", "owners": {}, "unmarked": [], "timeouts": {"create": "1m"}}`),
		"numbers and bools":     []byte(`{"grants": {"n": {"src": [1, 2.50, true], "dst": ["*"], "enabled": false, "app": 1e3}}, "id": 7}`),
		"null elements":         []byte(`{"grants": {"n": {"src": [null], "dst": null}}, "owners": {"n": null}, "unmarked": [null]}`),
		"escapes":               []byte(`{"id": "a\u00e9\"\\\n", "unmarked": ["\ud83d\ude00"]}`),
		"an empty object":       []byte(`{}`),
		"null":                  []byte(`null`),
		"an empty grant name":   []byte(`{"grants": {"": {}}}`),
		"white space around it": []byte(" \n{\"id\": \"a\"}\n "),
	}
	for name, sample := range wireSamples(false) {
		if !FullyKnown(sample) {
			continue
		}
		b, err := json.Marshal(sample)
		if err != nil {
			t.Fatal(err)
		}
		out["sample "+name] = b
	}
	return out
}

// FromJSON reads a stored state as tftypes reads it.
func TestFromJSONAgreesWithTftypes(t *testing.T) {
	for name, b := range jsonCases(t) {
		t.Run(name, func(t *testing.T) {
			want, err := tftypes.ValueFromJSONWithOpts(b, grantsType, tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}) //nolint:staticcheck // the reference decoding
			if err != nil {
				t.Fatalf("tftypes: %v", err)
			}
			got, err := FromJSON(b, grantsType)
			if err != nil {
				t.Fatalf("FromJSON: %v", err)
			}
			if g := tftypesOf(t, got, grantsType); !g.Equal(want) {
				t.Errorf("FromJSON read\n%s\nwant\n%s", g, want)
			}
		})
	}
}

// What FromJSON does not read is an ErrUnsupported.
func TestFromJSONRefuses(t *testing.T) {
	for name, b := range map[string]string{
		"not JSON":             `{"id": `,
		"data after the value": `{"id": "a"} {}`,
		"a list for a map":     `{"grants": []}`,
		"an object for a list": `{"unmarked": {}}`,
		"a string for a bool":  `{"grants": {"a": {"enabled": "true"}}}`,
		"a list for a string":  `{"id": ["a"]}`,
		"a string for a grant": `{"grants": {"a": "x"}}`,
		"a number type":        `1`,
		// Terraform never writes a name twice, nor a name with an
		// escape; encoding/json would keep the last value of a name,
		// where tftypes reads every one.
		"a key twice":         `{"id": "a", "id": "b"}`,
		"a grant key twice":   `{"grants": {"a": {"src": ["1"]}, "a": {"src": ["2"]}}}`,
		"an attribute twice":  `{"grants": {"a": {"enabled": [], "enabled": null}}}`,
		"a name with escapes": `{"grants": {"\u0061": {}}}`,
		"a name with a quote": `{"owners": {"a\"b": "x", "a": "y"}}`,
	} {
		typ := tftypes.Type(grantsType)
		if name == "a number type" {
			typ = tftypes.Number
		}
		if v, err := FromJSON([]byte(b), typ); err == nil || !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: FromJSON = %v, %v; want an ErrUnsupported", name, v, err)
		}
	}
}

// Whatever FromJSON reads, tftypes reads as the same value.
func FuzzFromJSON(f *testing.F) {
	for _, b := range jsonCases(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := FromJSON(b, grantsType)
		if err != nil {
			return
		}
		want, err := tftypes.ValueFromJSONWithOpts(b, grantsType, tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}) //nolint:staticcheck // the reference decoding
		if err != nil {
			t.Fatalf("FromJSON read %q, which tftypes refuses: %v", b, err)
		}
		if g := tftypesOf(t, got, grantsType); !g.Equal(want) {
			t.Fatalf("FromJSON read %q as\n%s\ntftypes as\n%s", b, g, want)
		}
	})
}

// benchState is the state of a qtail_grants of n grants, encoded.
func benchState(b *testing.B, n int) []byte {
	grants, owners := map[string]any{}, map[string]any{}
	for i := range n {
		name := fmt.Sprint("bench-", i)
		grants[name] = map[string]any{"src": []any{"group:platform-ops"}, "dst": []any{fmt.Sprintf("100.64.%d.%d", 10+i/250, 1+i%250)},
			"ip": []any{"tcp:443"}, "app": nil, "via": nil, "src_posture": nil, "enabled": nil}
		owners[name] = fmt.Sprintf("o%09d", i)
	}
	out, err := Encode(map[string]any{"grants": grants, "id": "x", "owners": owners, "unmarked": []any{}}, grantsType)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// Reading the JSON state of a thousand grants, with tfwire and with
// tftypes.
func BenchmarkFromJSON(b *testing.B) {
	v, err := Decode(benchState(b, 1000), grantsType)
	if err != nil {
		b.Fatal(err)
	}
	state, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("tfwire", func(b *testing.B) {
		for b.Loop() {
			if _, err := FromJSON(state, grantsType); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tftypes", func(b *testing.B) {
		for b.Loop() {
			if _, err := tftypes.ValueFromJSONWithOpts(state, grantsType, tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}); err != nil { //nolint:staticcheck // the reference decoding
				b.Fatal(err)
			}
		}
	})
}

// Reading the state of a thousand grants, with tfwire and with tftypes.
func BenchmarkDecode(b *testing.B) {
	state := benchState(b, 1000)
	b.Run("tfwire", func(b *testing.B) {
		for b.Loop() {
			if _, err := Decode(state, grantsType); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tftypes", func(b *testing.B) {
		for b.Loop() {
			if _, err := tftypes.ValueFromMsgPack(state, grantsType); err != nil { //nolint:staticcheck // the reference decoding
				b.Fatal(err)
			}
		}
	})
}
