package fragment

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// Entry returns the entry that the values make, as qtail writes it: a
// JSON array for a list entry, or a JSON object with one member per
// attribute that is not null. ok is false while a value is unknown, or
// when a required one is missing (as after an import) or invalid.
func (k *Kind) Entry(v Values) (json.RawMessage, bool) {
	if k.Keyed() {
		ss, ok := v[k.ListAttr].([]string)
		if !ok {
			return nil, false
		}
		out, err := policyfile.ListEntry(ss).JSON()
		return out, err == nil
	}
	m := make(map[string]any, len(k.Attrs))
	for _, a := range k.Content() {
		val := v[a.Name]
		if val == nil {
			if a.Required {
				return nil, false
			}
			continue
		}
		member, ok := entryValue(a.Type, val)
		if !ok {
			return nil, false
		}
		m[a.Member] = member
	}
	out, err := json.Marshal(m)
	return out, err == nil
}

// entryValue is the member of an entry that holds val, a value of type t.
func entryValue(t Type, val any) (any, bool) {
	switch t {
	case String:
		s, ok := val.(string)
		return s, ok
	case Bool:
		b, ok := val.(bool)
		return b, ok
	case List:
		ss, ok := val.([]string)
		return ss, ok
	case JSON:
		s, ok := val.(string)
		if !ok || !json.Valid([]byte(s)) {
			return nil, false
		}
		return json.RawMessage(s), true
	}
	return nil, false
}

// Decode returns the values of the attributes that the entry of key, in
// its standardized value, makes. Each problem is a sentence that says
// what of the entry cannot be read and what to do; the attribute it
// concerns is null.
func (k *Kind) Decode(key policyfile.Key, value json.RawMessage) (Values, []string) {
	v := k.keyValues(key)
	if k.Keyed() {
		var ss []string
		if err := json.Unmarshal(value, &ss); err != nil {
			return v, []string{fmt.Sprintf("The value of %s in the policy file is not a list of strings: %s. "+
				"Correct it in the policy file.", Where(key), value)}
		}
		v[k.ListAttr] = nonNil(ss)
		return v, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(value, &raw); err != nil {
		return v, []string{fmt.Errorf("the entry of %s in the policy file is not a JSON object: %w", key, err).Error() +
			". Correct it in the policy file."}
	}
	// Tailscale reads member names case-insensitively.
	members := make(map[string]json.RawMessage, len(raw))
	for name, m := range raw {
		members[strings.ToLower(name)] = m
	}
	var problems []string
	for _, a := range k.Content() {
		name, m, ok := take(members, append([]string{a.Member}, a.Aliases...))
		if !ok {
			continue
		}
		val, problem := decodeMember(a.Type, name, m)
		if problem != "" {
			problems = append(problems, problem)
			continue
		}
		v[a.Name] = val
	}
	return v, problems
}

// take returns the first of names that members holds, and its value.
func take(members map[string]json.RawMessage, names []string) (string, json.RawMessage, bool) {
	for _, n := range names {
		if m, ok := members[strings.ToLower(n)]; ok {
			return n, m, true
		}
	}
	return "", nil, false
}

// decodeMember reads the member name of an entry as a value of type t;
// problem says why it cannot.
func decodeMember(t Type, name string, m json.RawMessage) (val any, problem string) {
	var err error
	what := ""
	switch t {
	case List:
		var ss []string
		err, what = json.Unmarshal(m, &ss), "a list of strings"
		val = nonNil(ss)
	case String:
		var s string
		err, what = json.Unmarshal(m, &s), "a string"
		val = s
	case Bool:
		var b bool
		err, what = json.Unmarshal(m, &b), "a boolean"
		val = b
	case JSON:
		if c, cerr := policyfile.Canonicalize(m); cerr == nil {
			m = c
		}
		return string(m), ""
	}
	if err != nil {
		return nil, fmt.Sprintf("%q in the policy file is not %s: %s. Correct it in the policy file.", name, what, m)
	}
	return val, ""
}

// nonNil returns ss, or an empty list for nil: an entry's list is never
// null.
func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// Where names the entry of key the way the policy file shows it.
func Where(key policyfile.Key) string {
	switch {
	case key.Kind == policyfile.KindTagOwner:
		return fmt.Sprintf("tagOwners[%q]", key.Name)
	case key.Kind == policyfile.KindAutoApprover && key.Name == policyfile.ExitNodeName:
		return "autoApprovers.exitNode"
	case key.Kind == policyfile.KindAutoApprover && strings.HasPrefix(key.Name, policyfile.ServicePrefix):
		return fmt.Sprintf("autoApprovers.services[%q]", strings.TrimPrefix(key.Name, policyfile.ServicePrefix))
	case key.Kind == policyfile.KindAutoApprover:
		return fmt.Sprintf("autoApprovers.routes[%q]", strings.TrimPrefix(key.Name, policyfile.RoutePrefix))
	}
	return "marked " + key.Marker()
}

// Claimant describes the resource that writes key, for the message of a
// duplicate claim: its type and the attributes of its key that are set,
// such as `the qtail_grant with name = "web"`.
func (k *Kind) Claimant(key policyfile.Key) string {
	v := k.keyValues(key)
	var parts []string
	for _, a := range k.Attrs {
		if !a.Replaces {
			continue
		}
		switch val := v[a.Name].(type) {
		case string:
			parts = append(parts, fmt.Sprintf("%s = %q", a.Name, val))
		case bool:
			if val {
				parts = append(parts, fmt.Sprintf("%s = true", a.Name))
			}
		}
	}
	return fmt.Sprintf("the %s with %s", k.Type, strings.Join(parts, " and "))
}

// PlanValues returns the values of the attributes that make the key and
// the entry of a fragment (see Fragment) in a value of a JSON plan or
// state (`terraform show -json`: strings, bools, lists as []any, null as
// nil), with the attributes for which unknown reports true known only
// after apply. A value of the wrong type makes its attribute incomplete.
// The other attributes (id, marker, an owner drawn at apply) are left
// out: what a plan writes is the entry of its key, whoever owns it.
func (k *Kind) PlanValues(m map[string]any, unknown func(name string) bool) Values {
	v := make(Values, len(k.Attrs))
	for _, a := range k.Attrs {
		switch {
		case !a.Replaces && a.Member == "" && a.Name != k.ListAttr:
			continue
		case unknown(a.Name):
			v[a.Name] = Unknown
		default:
			v[a.Name] = planValue(a.Type, m[a.Name])
		}
	}
	return v
}

// planValue is the plain value of the JSON plan value j of type t.
func planValue(t Type, j any) any {
	if j == nil {
		return nil
	}
	switch t {
	case Bool:
		if b, ok := j.(bool); ok {
			return b
		}
	case List:
		raw, ok := j.([]any)
		if !ok {
			return invalid
		}
		out := make([]string, 0, len(raw))
		for _, e := range raw {
			s, ok := e.(string)
			if !ok {
				return invalid
			}
			out = append(out, s)
		}
		return out
	default:
		if s, ok := j.(string); ok {
			return s
		}
	}
	return invalid
}
