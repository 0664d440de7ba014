package tailnetapi

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// This file is the first pass of policy validation: strict decoding, as
// SaaS does it with encoding/json and DisallowUnknownFields. Field names
// match case-insensitively ("ACLs", "TagOwners" are fine), an unknown field
// anywhere in a known structure is rejected with `json: unknown field "x"`,
// and a value of the wrong JSON kind (an object where a list belongs, ...)
// is rejected with a message in the shape of encoding/json's. The first
// problem in document order wins. Semantic checks (tags, selectors, ports,
// tests) belong to aclcheck, which runs afterwards.

var errNotObject = errors.New("policy file is not a JSON object")

// shapeKind is the JSON kind a schema node expects.
type shapeKind int

const (
	anyShape    shapeKind = iota // anything, not checked further
	structShape                  // object with known fields
	mapShape                     // object with free keys, values of elem
	listShape                    // array of elem
	stringShape
	boolShape
)

// shape is one node of the policy schema.
type shape struct {
	kind   shapeKind
	goType string            // for messages, e.g. "[]string"
	fields map[string]*shape // structShape, by canonical name
	elem   *shape            // mapShape, listShape
}

func str() *shape     { return &shape{kind: stringShape, goType: "string"} }
func boolean() *shape { return &shape{kind: boolShape, goType: "bool"} }
func anything() *shape {
	return &shape{kind: anyShape}
}
func strs() *shape { return &shape{kind: listShape, goType: "[]string", elem: str()} }
func listOf(elem *shape) *shape {
	return &shape{kind: listShape, goType: "[]" + elem.goType, elem: elem}
}
func mapOf(elem *shape) *shape {
	return &shape{kind: mapShape, goType: "map[string]" + elem.goType, elem: elem}
}
func object(goType string, fields map[string]*shape) *shape {
	return &shape{kind: structShape, goType: goType, fields: fields}
}

// policySchema is the policy file as SaaS decodes it. Sections whose inner
// shape qtail never writes and that vary between releases (derpMap,
// attrConfig, externalTailnets, nodeVisibility, app capabilities) are only
// checked at the top level.
var policySchema = object("ACLPolicy", map[string]*shape{
	"acls": listOf(object("ACL", map[string]*shape{
		"action":     str(),
		"proto":      anything(),
		"src":        strs(),
		"dst":        strs(),
		"users":      strs(), // legacy alias of src
		"ports":      strs(), // legacy alias of dst
		"srcPosture": strs(),
	})),
	"grants": listOf(object("Grant", map[string]*shape{
		"src":        strs(),
		"dst":        strs(),
		"ip":         strs(),
		"app":        anything(),
		"via":        strs(),
		"srcPosture": strs(),
	})),
	"groups":    mapOf(strs()),
	"hosts":     mapOf(str()),
	"tagOwners": mapOf(strs()),
	"autoApprovers": object("AutoApprovers", map[string]*shape{
		"routes":   mapOf(strs()),
		"exitNode": strs(),
		"services": mapOf(strs()),
	}),
	"ipsets":            mapOf(strs()),
	"postures":          mapOf(strs()),
	"defaultSrcPosture": strs(),
	"nodeAttrs": listOf(object("NodeAttrGrant", map[string]*shape{
		"target": strs(),
		"attr":   strs(),
		"app":    anything(),
		"ipPool": strs(),
	})),
	"ssh": listOf(object("SSHRule", map[string]*shape{
		"action":          str(),
		"src":             strs(),
		"dst":             strs(),
		"users":           strs(),
		"checkPeriod":     str(),
		"acceptEnv":       strs(),
		"recorder":        strs(),
		"enforceRecorder": boolean(),
		"srcPosture":      strs(),
	})),
	"tests": listOf(object("ACLTest", map[string]*shape{
		"src":             str(),
		"user":            str(), // legacy alias of src
		"proto":           anything(),
		"accept":          strs(),
		"allow":           strs(), // legacy alias of accept
		"deny":            strs(),
		"srcPostureAttrs": anything(),
	})),
	"sshTests": listOf(object("SSHTest", map[string]*shape{
		"src":    str(),
		"dst":    strs(),
		"accept": strs(),
		"check":  strs(),
		"deny":   strs(),
	})),
	"derpMap":             anything(),
	"disableIPv4":         boolean(),
	"oneCGNATRoute":       str(),
	"randomizeClientPort": boolean(),
	"externalTailnets":    anything(),
	"attrConfig":          anything(),
	"nodeVisibility":      anything(),
})

// strictCheck returns the first strict-decoding problem of a parsed
// policy, or "".
func strictCheck(v hujson.Value) string {
	if _, ok := v.Value.(*hujson.Object); !ok {
		return fmt.Sprintf("json: cannot unmarshal %s into Go value of type %s", kindName(v.Value), policySchema.goType)
	}
	return walk(v.Value, policySchema, policySchema.goType, "")
}

// walk checks v against sh. owner is the Go struct type that holds the
// current field and path the dotted field path, both for messages.
func walk(v hujson.ValueTrimmed, sh *shape, owner, path string) string {
	if lit, ok := v.(hujson.Literal); ok && lit.Kind() == 'n' {
		return "" // null decodes into anything
	}
	mismatch := func() string {
		if path == "" {
			return fmt.Sprintf("json: cannot unmarshal %s into Go value of type %s", kindName(v), sh.goType)
		}
		return fmt.Sprintf("json: cannot unmarshal %s into Go struct field %s.%s of type %s", kindName(v), owner, path, sh.goType)
	}
	switch sh.kind {
	case anyShape:
		return ""
	case stringShape:
		if lit, ok := v.(hujson.Literal); !ok || lit.Kind() != '"' {
			return mismatch()
		}
	case boolShape:
		if lit, ok := v.(hujson.Literal); !ok || (lit.Kind() != 't' && lit.Kind() != 'f') {
			return mismatch()
		}
	case listShape:
		arr, ok := v.(*hujson.Array)
		if !ok {
			return mismatch()
		}
		for _, e := range arr.Elements {
			if msg := walk(e.Value, sh.elem, owner, path); msg != "" {
				return msg
			}
		}
	case mapShape:
		obj, ok := v.(*hujson.Object)
		if !ok {
			return mismatch()
		}
		for _, m := range obj.Members {
			if msg := walk(m.Value.Value, sh.elem, owner, path); msg != "" {
				return msg
			}
		}
	case structShape:
		obj, ok := v.(*hujson.Object)
		if !ok {
			return mismatch()
		}
		for _, m := range obj.Members {
			name := memberName(m)
			canonical, field := lookupField(sh, name)
			if field == nil {
				return fmt.Sprintf("json: unknown field %q", name)
			}
			fieldPath := canonical
			if path != "" {
				fieldPath = path + "." + canonical
			}
			if msg := walk(m.Value.Value, field, owner, fieldPath); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// lookupField finds a struct field by name, case-insensitively as
// encoding/json does.
func lookupField(sh *shape, name string) (string, *shape) {
	if f, ok := sh.fields[name]; ok {
		return name, f
	}
	for canonical, f := range sh.fields {
		if strings.EqualFold(canonical, name) {
			return canonical, f
		}
	}
	return "", nil
}

// memberName is the unquoted name of an object member.
func memberName(m hujson.ObjectMember) string {
	if lit, ok := m.Name.Value.(hujson.Literal); ok {
		return lit.String()
	}
	return ""
}

// kindName names a JSON value's kind the way encoding/json's errors do.
func kindName(v hujson.ValueTrimmed) string {
	switch v.Kind() {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "bool"
	default:
		return "null"
	}
}
