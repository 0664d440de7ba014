package policyfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tailscale/hujson"
)

// Canonicalize returns the canonical form of a JSON or HuJSON value, the
// form in which qtail compares fragments: no comments, whitespace or
// trailing commas, object members sorted by name, strings re-escaped the
// same way, numbers and array order as written.
func Canonicalize(b []byte) (json.RawMessage, error) {
	v, err := hujson.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return canonical(&v), nil
}

// SameJSON reports whether a and b are the same JSON value in canonical
// form. A nil value equals only nil, and a value that does not parse
// equals nothing.
func SameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if bytes.Equal(a, b) && json.Valid(a) {
		// The same bytes, which parse: the same value, without the cost
		// of two canonical forms (a plan compares a thousand grants).
		return true
	}
	ca, err := Canonicalize(a)
	if err != nil {
		return false
	}
	cb, err := Canonicalize(b)
	if err != nil {
		return false
	}
	return bytes.Equal(ca, cb)
}

func canonical(v *hujson.Value) json.RawMessage {
	return appendCanonical(nil, v)
}

func appendCanonical(b []byte, v *hujson.Value) []byte {
	switch t := v.Value.(type) {
	case hujson.Literal:
		return appendLiteral(b, t)
	case *hujson.Array:
		b = append(b, '[')
		for i := range t.Elements {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCanonical(b, &t.Elements[i])
		}
		return append(b, ']')
	case *hujson.Object:
		order := make([]int, len(t.Members))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(i, j int) int {
			return strings.Compare(memberName(&t.Members[i]), memberName(&t.Members[j]))
		})
		b = append(b, '{')
		for n, i := range order {
			if n > 0 {
				b = append(b, ',')
			}
			b = append(b, hujson.String(memberName(&t.Members[i]))...)
			b = append(b, ':')
			b = appendCanonical(b, &t.Members[i].Value)
		}
		return append(b, '}')
	}
	return b
}

// appendLiteral writes a literal, re-escaping strings so that equal strings
// are written equally.
func appendLiteral(b []byte, lit hujson.Literal) []byte {
	if plainString(lit) {
		return append(b, lit...)
	}
	if lit.Kind() == '"' {
		return append(b, hujson.String(lit.String())...)
	}
	return append(b, lit...)
}

func memberName(m *hujson.ObjectMember) string {
	if lit, ok := m.Name.Value.(hujson.Literal); ok {
		return literalString(lit)
	}
	return ""
}

// literalString is lit.String() without its JSON decoding where there is
// nothing to decode: a policy file holds thousands of names and
// selectors, nearly all of them plain.
func literalString(lit hujson.Literal) string {
	if plainString(lit) {
		return string(lit[1 : len(lit)-1])
	}
	return lit.String()
}

// plainString reports whether lit is a string literal whose bytes between
// the quotes are its value, written as hujson.String writes it: no escape,
// no control character, valid UTF-8.
func plainString(lit hujson.Literal) bool {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return false
	}
	inner := lit[1 : len(lit)-1]
	for _, c := range inner {
		if c < ' ' || c == '\\' || c == '"' {
			return false
		}
	}
	return utf8.Valid(inner)
}

// style is how the document is laid out, as far as new text must match it.
type style struct {
	unit     string // one level of indentation
	nl       string // line ending
	trailing bool   // trailing comma after the last entry of a multi-line composite
}

// detectStyle reads the indentation unit, line ending and trailing-comma
// habit of the document. Ties and documents without evidence get tabs and
// trailing commas, the layout of Tailscale's default policy file.
func detectStyle(src []byte, root *hujson.Value) style {
	st := style{unit: "\t", nl: "\n", trailing: true}
	if bytes.Contains(src, []byte("\r\n")) {
		st.nl = "\r\n"
	}
	var tabs, spaced int
	var widths []int
	var withComma, without int
	note := func(e hujson.Extra) {
		ws, ok := lastLineIndent(e)
		if !ok || ws == "" {
			return
		}
		if ws[0] == '\t' {
			tabs++
			return
		}
		if n := len(ws) - len(strings.TrimLeft(ws, " ")); n > 0 {
			spaced++
			widths = append(widths, n)
		}
	}
	for v := range root.All() {
		note(v.BeforeExtra)
		var closing hujson.Extra
		var last *hujson.Value
		switch t := v.Value.(type) {
		case *hujson.Array:
			closing = t.AfterExtra
			if n := len(t.Elements); n > 0 {
				last = &t.Elements[n-1]
			}
		case *hujson.Object:
			closing = t.AfterExtra
			if n := len(t.Members); n > 0 {
				last = &t.Members[n-1].Value
			}
		default:
			continue
		}
		note(closing)
		if last != nil && bytes.IndexByte(closing, '\n') >= 0 {
			if last.AfterExtra != nil {
				withComma++
			} else {
				without++
			}
		}
	}
	if spaced > tabs {
		g := 0
		for _, w := range widths {
			g = gcd(g, w)
		}
		st.unit = strings.Repeat(" ", g)
	}
	st.trailing = withComma >= without
	return st
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// maxInline is the longest composite, in bytes, that qtail writes on one
// line.
const maxInline = 100

// memberOrder is the order in which qtail writes the members of a grant or
// a test: the order of the Tailscale documentation, then any other member
// in the order given.
var memberOrder = map[Kind][]string{
	KindGrant:      {"src", "dst", "ip", "app", "via", "srcPosture"},
	KindPolicyTest: {"src", "proto", "srcPostureAttrs", "accept", "deny"},
}

// ordered returns the members of the object v in the written order of
// kind, without changing v.
func ordered(kind Kind, obj *hujson.Object) []hujson.ObjectMember {
	order := memberOrder[kind]
	rank := func(m *hujson.ObjectMember) int {
		name := memberName(m)
		for i, o := range order {
			if strings.EqualFold(o, name) {
				return i
			}
		}
		return len(order)
	}
	members := slices.Clone(obj.Members)
	slices.SortStableFunc(members, func(a, b hujson.ObjectMember) int {
		return rank(&a) - rank(&b)
	})
	return members
}

// inline writes v on one line: `{"src": ["a", "b"], "ip": ["*"]}`.
func inline(b []byte, v *hujson.Value) []byte {
	switch t := v.Value.(type) {
	case hujson.Literal:
		return appendLiteral(b, t)
	case *hujson.Array:
		b = append(b, '[')
		for i := range t.Elements {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = inline(b, &t.Elements[i])
		}
		return append(b, ']')
	case *hujson.Object:
		b = append(b, '{')
		for i := range t.Members {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, hujson.String(memberName(&t.Members[i]))...)
			b = append(b, ": "...)
			b = inline(b, &t.Members[i].Value)
		}
		return append(b, '}')
	}
	return b
}

// layout lays v out for a position indented by ind, as the tree that
// hujson.Parse makes of the text (without offsets): a composite stays on
// one line when it fits in maxInline bytes, unless expand is set;
// otherwise each entry takes a line of its own, one level deeper. members,
// when set, are the members of the object v in the order to write them.
func (st style) layout(v *hujson.Value, ind string, expand bool, members []hujson.ObjectMember) hujson.ValueTrimmed {
	if !expand && len(inline(nil, v)) <= maxInline {
		return oneLine(v)
	}
	inner := ind + st.unit
	switch t := v.Value.(type) {
	case *hujson.Array:
		if len(t.Elements) == 0 {
			return &hujson.Array{}
		}
		arr := &hujson.Array{Elements: make([]hujson.Value, len(t.Elements)), AfterExtra: hujson.Extra(st.nl + ind)}
		for i := range t.Elements {
			arr.Elements[i] = hujson.Value{BeforeExtra: hujson.Extra(st.nl + inner), Value: st.layout(&t.Elements[i], inner, false, nil)}
		}
		st.endEntries(&arr.Elements[len(arr.Elements)-1])
		return arr
	case *hujson.Object:
		if members == nil {
			members = t.Members
		}
		if len(members) == 0 {
			return &hujson.Object{}
		}
		obj := &hujson.Object{Members: make([]hujson.ObjectMember, len(members)), AfterExtra: hujson.Extra(st.nl + ind)}
		for i := range members {
			obj.Members[i] = hujson.ObjectMember{
				Name:  hujson.Value{BeforeExtra: hujson.Extra(st.nl + inner), Value: hujson.String(memberName(&members[i]))},
				Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: st.layout(&members[i].Value, inner, false, nil)},
			}
		}
		st.endEntries(&obj.Members[len(obj.Members)-1].Value)
		return obj
	}
	return oneLine(v)
}

// endEntries marks the last entry of a composite laid out one entry per
// line with the trailing comma, when the style has one: an empty but
// present AfterExtra.
func (st style) endEntries(last *hujson.Value) {
	if st.trailing {
		last.AfterExtra = hujson.Extra{}
	}
}

// oneLine is v as inline writes it, as the tree hujson.Parse makes of that
// text.
func oneLine(v *hujson.Value) hujson.ValueTrimmed {
	switch t := v.Value.(type) {
	case *hujson.Array:
		arr := &hujson.Array{}
		if len(t.Elements) > 0 {
			arr.Elements = make([]hujson.Value, len(t.Elements))
		}
		for i := range t.Elements {
			arr.Elements[i] = hujson.Value{BeforeExtra: separator(i), Value: oneLine(&t.Elements[i])}
		}
		return arr
	case *hujson.Object:
		obj := &hujson.Object{}
		if len(t.Members) > 0 {
			obj.Members = make([]hujson.ObjectMember, len(t.Members))
		}
		for i := range t.Members {
			obj.Members[i] = hujson.ObjectMember{
				Name:  hujson.Value{BeforeExtra: separator(i), Value: hujson.String(memberName(&t.Members[i]))},
				Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: oneLine(&t.Members[i].Value)},
			}
		}
		return obj
	}
	lit, _ := v.Value.(hujson.Literal)
	return hujson.Literal(appendLiteral(nil, lit))
}

// separator is the extra before entry i of a composite on one line: the
// space after the comma of the entry before.
func separator(i int) hujson.Extra {
	if i == 0 {
		return nil
	}
	return hujson.Extra(" ")
}

// formatFragment lays out a fragment value for a position indented by ind
// and returns it as a tree to insert. Grants and tests are always written
// one member per line, in the order of memberOrder; keyed values (lists
// of owners or approvers) on one line when they fit. v is not changed.
func (st style) formatFragment(kind Kind, v *hujson.Value, ind string) hujson.Value {
	var members []hujson.ObjectMember
	if obj, ok := v.Value.(*hujson.Object); ok && !kind.keyed() {
		members = ordered(kind, obj)
	}
	return hujson.Value{Value: st.layout(v, ind, !kind.keyed(), members)}
}

// cloneValue is a deep copy of v that, unlike hujson's Clone, keeps an
// empty but present AfterExtra, which is how a trailing comma is recorded.
func cloneValue(v hujson.Value) hujson.Value {
	v.BeforeExtra = cloneExtra(v.BeforeExtra)
	v.AfterExtra = cloneExtra(v.AfterExtra)
	switch t := v.Value.(type) {
	case hujson.Literal:
		v.Value = hujson.Literal(bytes.Clone(t))
	case *hujson.Array:
		a := &hujson.Array{Elements: make([]hujson.Value, len(t.Elements)), AfterExtra: cloneExtra(t.AfterExtra)}
		for i := range t.Elements {
			a.Elements[i] = cloneValue(t.Elements[i])
		}
		v.Value = a
	case *hujson.Object:
		o := &hujson.Object{Members: make([]hujson.ObjectMember, len(t.Members)), AfterExtra: cloneExtra(t.AfterExtra)}
		for i := range t.Members {
			o.Members[i] = hujson.ObjectMember{Name: cloneValue(t.Members[i].Name), Value: cloneValue(t.Members[i].Value)}
		}
		v.Value = o
	}
	return v
}

func cloneExtra(e hujson.Extra) hujson.Extra {
	if e == nil {
		return nil
	}
	return append(hujson.Extra{}, e...)
}
