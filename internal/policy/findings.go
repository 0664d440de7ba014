package policy

import (
	"strings"

	"github.com/tailscale/hujson"
)

// HasAllowAll reports whether the policy still holds the default rule that
// lets every device reach every other one: the grant
// {"src": ["*"], "dst": ["*"], "ip": ["*"]} or the ACL
// {"action": "accept", "src": ["*"], "dst": ["*:*"]}, with any key casing
// and order (and the legacy ACL keys "users" and "ports").
func HasAllowAll(d *Document) bool {
	root, ok := d.root.Value.(*hujson.Object)
	if !ok {
		return false
	}
	for i := range root.Members {
		m := &root.Members[i]
		arr, ok := m.Value.Value.(*hujson.Array)
		if !ok {
			continue
		}
		var match func(map[string]string) bool
		switch strings.ToLower(memberName(m)) {
		case "grants":
			match = func(f map[string]string) bool {
				return len(f) == 3 && f["src"] == `["*"]` && f["dst"] == `["*"]` && f["ip"] == `["*"]`
			}
		case "acls":
			match = func(f map[string]string) bool {
				return len(f) == 3 && f["action"] == `"accept"` && f["src"] == `["*"]` && f["dst"] == `["*:*"]`
			}
		default:
			continue
		}
		for j := range arr.Elements {
			if f, ok := ruleFields(&arr.Elements[j]); ok && match(f) {
				return true
			}
		}
	}
	return false
}

// ruleFields returns the members of a rule by lower-case name (legacy
// "users" and "ports" read as "src" and "dst"), in canonical JSON. ok is
// false when v is not an object or names a field twice.
func ruleFields(v *hujson.Value) (map[string]string, bool) {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, false
	}
	f := make(map[string]string, len(obj.Members))
	for i := range obj.Members {
		name := strings.ToLower(memberName(&obj.Members[i]))
		switch name {
		case "users":
			name = "src"
		case "ports":
			name = "dst"
		}
		if _, dup := f[name]; dup {
			return nil, false
		}
		f[name] = string(canonical(&obj.Members[i].Value))
	}
	return f, true
}
