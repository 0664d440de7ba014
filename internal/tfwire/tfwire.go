// Package tfwire reads and writes the values of the Terraform plugin
// protocol straight from and to their MessagePack encoding, as plain Go
// values. tftypes builds a typed Value, with its attribute path, for every
// element of a value: for a map of a thousand grants that is most of the
// provider's work in a plan (see policyfragment.GrantsFastPath). The
// values are:
//
//   - nil for null, Unknown for an unknown value;
//   - string and bool;
//   - []any for a list;
//   - map[string]any for a map or an object.
//
// Only strings, bools, lists, maps and objects are read and written.
// Anything else (a number, a set, a dynamic value, an attribute the type
// does not have) is an ErrUnsupported, and the caller then reads the value
// another way.
package tfwire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Unknown is the value of an unknown value.
type Unknown struct{}

// ErrUnsupported is the error of a value that tfwire does not read or
// write.
var ErrUnsupported = errors.New("not a value tfwire reads or writes")

// Decode reads the MessagePack encoding b of a value of type typ.
func Decode(b []byte, typ tftypes.Type) (any, error) {
	r := wireReader{b: b}
	v, err := r.value(typ)
	if err != nil {
		return nil, err
	}
	if r.off != len(b) {
		return nil, fmt.Errorf("%w: %d bytes after the value", ErrUnsupported, len(b)-r.off)
	}
	return v, nil
}

// wireReader reads MessagePack from b at off.
type wireReader struct {
	b   []byte
	off int
	// names are the attribute names read so far: an object type's names
	// come back with each of its values, and are kept once.
	names map[string]string
}

// take returns the next n bytes.
func (r *wireReader) take(n int) ([]byte, error) {
	if n < 0 || len(r.b)-r.off < n {
		return nil, fmt.Errorf("%w: truncated", ErrUnsupported)
	}
	out := r.b[r.off : r.off+n]
	r.off += n
	return out, nil
}

// size reads a big-endian length of n bytes (1, 2 or 4).
func (r *wireReader) size(n int) (int, error) {
	b, err := r.take(n)
	if err != nil {
		return 0, err
	}
	switch n {
	case 1:
		return int(b[0]), nil
	case 2:
		return int(binary.BigEndian.Uint16(b)), nil
	}
	return int(binary.BigEndian.Uint32(b)), nil
}

// extension skips the extension whose code is c (cty writes an unknown
// value as one, and every reader takes any extension for one) and reports
// whether there was one.
func (r *wireReader) extension(c byte) (bool, error) {
	var data, lenBytes int
	if c >= 0xd4 && c <= 0xd8 {
		data = 1 << (c - 0xd4) // fixext 1, 2, 4, 8, 16
	} else if c >= 0xc7 && c <= 0xc9 {
		lenBytes = 1 << (c - 0xc7) // ext 8, 16, 32
	} else {
		return false, nil
	}
	r.off++
	if lenBytes > 0 {
		n, err := r.size(lenBytes)
		if err != nil {
			return false, err
		}
		data = n
	}
	_, err := r.take(1 + data) // the extension's type, then its data
	return true, err
}

// length reads the header of a string, an array or a map: the number of
// bytes or entries that follow. fix is the first code of the fixed form,
// fixMax its number of values, and wide the codes of the 8-bit (0 when it
// has none), 16-bit and 32-bit forms.
func (r *wireReader) length(fix byte, fixMax byte, wide [3]byte, what string) (int, error) {
	b, err := r.take(1)
	if err != nil {
		return 0, err
	}
	c := b[0]
	if c >= fix && c-fix < fixMax {
		return int(c - fix), nil
	}
	for i, w := range wide {
		if w != 0 && c == w {
			return r.size(1 << i)
		}
	}
	return 0, fmt.Errorf("%w: 0x%02x where %s was expected", ErrUnsupported, c, what)
}

func (r *wireReader) str() (string, error) {
	b, err := r.strBytes()
	return string(b), err
}

// strBytes reads a string, and returns its bytes.
func (r *wireReader) strBytes() ([]byte, error) {
	n, err := r.length(0xa0, 32, [3]byte{0xd9, 0xda, 0xdb}, "a string")
	if err != nil {
		return nil, err
	}
	b, err := r.take(n)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%w: a string that is not UTF-8", ErrUnsupported)
	}
	return b, nil
}

// name reads the name of an attribute.
func (r *wireReader) name() (string, error) {
	b, err := r.strBytes()
	if err != nil {
		return "", err
	}
	if name, ok := r.names[string(b)]; ok {
		return name, nil
	}
	if r.names == nil {
		r.names = map[string]string{}
	}
	name := string(b)
	r.names[name] = name
	return name, nil
}

// value reads one value of type typ.
func (r *wireReader) value(typ tftypes.Type) (any, error) {
	if r.off >= len(r.b) {
		return nil, fmt.Errorf("%w: truncated", ErrUnsupported)
	}
	c := r.b[r.off]
	if ext, err := r.extension(c); ext || err != nil {
		return Unknown{}, err
	}
	if c == 0xc0 {
		r.off++
		return nil, nil
	}
	if typ.Is(tftypes.String) {
		return r.str()
	}
	if typ.Is(tftypes.Bool) {
		r.off++
		if c == 0xc2 || c == 0xc3 {
			return c == 0xc3, nil
		}
		return nil, fmt.Errorf("%w: 0x%02x where a bool was expected", ErrUnsupported, c)
	}
	if l, ok := typ.(tftypes.List); ok {
		n, err := r.length(0x90, 16, [3]byte{0, 0xdc, 0xdd}, "an array")
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, min(n, len(r.b)-r.off))
		for range n {
			e, err := r.value(l.ElementType)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	var elem tftypes.Type
	var attrs map[string]tftypes.Type
	if m, ok := typ.(tftypes.Map); ok {
		elem = m.ElementType
	} else if o, ok := typ.(tftypes.Object); ok && len(o.OptionalAttributes) == 0 {
		attrs = o.AttributeTypes
	} else {
		return nil, fmt.Errorf("%w: the type %s", ErrUnsupported, typ)
	}
	n, err := r.length(0x80, 16, [3]byte{0, 0xde, 0xdf}, "a map")
	if err != nil {
		return nil, err
	}
	if attrs != nil && n != len(attrs) {
		return nil, fmt.Errorf("%w: an object of %d attributes, not %d", ErrUnsupported, n, len(attrs))
	}
	out := make(map[string]any, min(n, len(r.b)-r.off))
	for range n {
		read := r.str
		if attrs != nil {
			read = r.name
		}
		k, err := read()
		if err != nil {
			return nil, err
		}
		t := elem
		if attrs != nil {
			if t = attrs[k]; t == nil {
				return nil, fmt.Errorf("%w: no attribute %q", ErrUnsupported, k)
			}
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%w: the key %q twice", ErrUnsupported, k)
		}
		if out[k], err = r.value(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Encode writes the value v of type typ in MessagePack, as tftypes
// writes it: an object's attributes sorted by name, every one of them
// present.
func Encode(v any, typ tftypes.Type) ([]byte, error) {
	return appendWire(nil, v, typ)
}

func appendWire(b []byte, v any, typ tftypes.Type) ([]byte, error) {
	if v == nil {
		return append(b, 0xc0), nil
	}
	if _, ok := v.(Unknown); ok {
		return append(b, 0xd4, 0, 0), nil
	}
	if typ.Is(tftypes.String) {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%w: %T for a string", ErrUnsupported, v)
		}
		return appendWireString(b, s), nil
	}
	if typ.Is(tftypes.Bool) {
		x, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%w: %T for a bool", ErrUnsupported, v)
		}
		if x {
			return append(b, 0xc3), nil
		}
		return append(b, 0xc2), nil
	}
	if l, ok := typ.(tftypes.List); ok {
		elems, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%w: %T for a list", ErrUnsupported, v)
		}
		b = appendWireHeader(b, len(elems), 0x90, 16, 0xdc)
		var err error
		for _, e := range elems {
			if b, err = appendWire(b, e, l.ElementType); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: %T for %s", ErrUnsupported, v, typ)
	}
	var keys []string
	var elem func(string) tftypes.Type
	if mt, ok := typ.(tftypes.Map); ok {
		keys = make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		elem = func(string) tftypes.Type { return mt.ElementType }
	} else if o, ok := typ.(tftypes.Object); ok && len(o.OptionalAttributes) == 0 {
		keys = make([]string, 0, len(o.AttributeTypes))
		for k := range o.AttributeTypes {
			if _, ok := m[k]; !ok {
				return nil, fmt.Errorf("%w: no value for the attribute %q", ErrUnsupported, k)
			}
			keys = append(keys, k)
		}
		if len(keys) != len(m) {
			return nil, fmt.Errorf("%w: values for attributes that %s does not have", ErrUnsupported, typ)
		}
		elem = func(k string) tftypes.Type { return o.AttributeTypes[k] }
	} else {
		return nil, fmt.Errorf("%w: the type %s", ErrUnsupported, typ)
	}
	slices.Sort(keys)
	b = appendWireHeader(b, len(keys), 0x80, 16, 0xde)
	var err error
	for _, k := range keys {
		b = appendWireString(b, k)
		if b, err = appendWire(b, m[k], elem(k)); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// appendWireHeader writes the header of an array or a map of n entries:
// the fixed form (from fix, up to fixMax entries), or the 16-bit form
// (code wide16) or the 32-bit one (the next code).
func appendWireHeader(b []byte, n int, fix byte, fixMax int, wide16 byte) []byte {
	if n < fixMax {
		return append(b, fix+byte(n))
	}
	if n <= 0xffff {
		return binary.BigEndian.AppendUint16(append(b, wide16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, wide16+1), uint32(n))
}

// appendWireString writes s in the shortest string form.
func appendWireString(b []byte, s string) []byte {
	n := len(s)
	if n < 32 {
		b = append(b, 0xa0+byte(n))
	} else if n <= 0xff {
		b = append(b, 0xd9, byte(n))
	} else if n <= 0xffff {
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	} else {
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

// FullyKnown reports whether the value v holds no unknown value.
func FullyKnown(v any) bool {
	switch t := v.(type) {
	case Unknown:
		return false
	case []any:
		for _, e := range t {
			if !FullyKnown(e) {
				return false
			}
		}
	case map[string]any:
		for _, e := range t {
			if !FullyKnown(e) {
				return false
			}
		}
	}
	return true
}

// Strings reads a list of known strings: nil when null.
func Strings(v any) ([]string, bool) {
	if v == nil {
		return nil, true
	}
	elems, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// FromJSON reads the JSON encoding b of a value of type typ, as Terraform
// stores a state, the way tftypes reads it with IgnoreUndefinedAttributes:
// an attribute the type lacks is left out, one the JSON lacks is null, and
// a string may be written as a JSON number or bool. The JSON holds no
// unknown value.
func FromJSON(b []byte, typ tftypes.Type) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the value", ErrUnsupported)
	}
	if repeatedKey(b) {
		// encoding/json keeps the last value of a name, where tftypes
		// reads every one: Terraform never writes a name twice.
		return nil, fmt.Errorf("%w: a name twice in an object, or a name with an escape", ErrUnsupported)
	}
	return fromJSON(v, typ)
}

// repeatedKey reports whether an object of the valid JSON b has a name
// twice, or a name with an escape sequence (which could spell another name
// differently).
func repeatedKey(b []byte) bool {
	type object struct {
		obj  bool
		keys [][]byte
		// many holds the names of an object of many names (a map of
		// grants), where a search of keys would take quadratic time.
		many map[string]struct{}
	}
	const few = 16
	var stack []object
	keyNext := false
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			n := len(stack)
			if n < cap(stack) {
				stack = stack[:n+1]
				stack[n].keys, stack[n].many = stack[n].keys[:0], nil
			} else {
				stack = append(stack, object{})
			}
			stack[n].obj = b[i] == '{'
			keyNext = stack[n].obj
		case '}', ']':
			stack = stack[:len(stack)-1]
			keyNext = false
		case ',':
			keyNext = stack[len(stack)-1].obj
		case '"':
			j, escaped := i+1, false
			for b[j] != '"' {
				if b[j] == '\\' {
					escaped = true
					j++
				}
				j++
			}
			if keyNext {
				if escaped {
					return true
				}
				top := &stack[len(stack)-1]
				key := b[i+1 : j]
				if top.many != nil {
					if _, seen := top.many[string(key)]; seen {
						return true
					}
					top.many[string(key)] = struct{}{}
				} else {
					for _, k := range top.keys {
						if bytes.Equal(k, key) {
							return true
						}
					}
					if top.keys = append(top.keys, key); len(top.keys) > few {
						top.many = make(map[string]struct{}, 2*few)
						for _, k := range top.keys {
							top.many[string(k)] = struct{}{}
						}
					}
				}
				keyNext = false
			}
			i = j
		}
	}
	return false
}

// fromJSON converts the JSON value v, as encoding/json decodes it with
// UseNumber, to the value of type typ.
func fromJSON(v any, typ tftypes.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	if typ.Is(tftypes.String) {
		if s, ok := v.(string); ok {
			return s, nil
		}
		if n, ok := v.(json.Number); ok {
			return string(n), nil
		}
		if x, ok := v.(bool); ok {
			return strconv.FormatBool(x), nil
		}
		return nil, fmt.Errorf("%w: %T for a string", ErrUnsupported, v)
	}
	if typ.Is(tftypes.Bool) {
		if x, ok := v.(bool); ok {
			return x, nil
		}
		return nil, fmt.Errorf("%w: %T for a bool", ErrUnsupported, v)
	}
	if l, ok := typ.(tftypes.List); ok {
		elems, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%w: %T for a list", ErrUnsupported, v)
		}
		out := make([]any, len(elems))
		for i, e := range elems {
			var err error
			if out[i], err = fromJSON(e, l.ElementType); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: %T for %s", ErrUnsupported, v, typ)
	}
	if mt, ok := typ.(tftypes.Map); ok {
		out := make(map[string]any, len(m))
		for k, e := range m {
			var err error
			if out[k], err = fromJSON(e, mt.ElementType); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	o, ok := typ.(tftypes.Object)
	if !ok || len(o.OptionalAttributes) > 0 {
		return nil, fmt.Errorf("%w: the type %s", ErrUnsupported, typ)
	}
	out := make(map[string]any, len(o.AttributeTypes))
	for k, at := range o.AttributeTypes {
		var err error
		if out[k], err = fromJSON(m[k], at); err != nil {
			return nil, err
		}
	}
	return out, nil
}
