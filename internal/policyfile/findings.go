package policyfile

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
		for j := range arr.Elements {
			if isAllowAll(memberName(m), &arr.Elements[j]) {
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

// isAllowAll reports whether v, an element of the section named section
// (any casing), is the default allow-all rule.
func isAllowAll(section string, v *hujson.Value) bool {
	f, ok := ruleFields(v)
	if !ok || len(f) != 3 {
		return false
	}
	switch strings.ToLower(section) {
	case "grants":
		return f["src"] == `["*"]` && f["dst"] == `["*"]` && f["ip"] == `["*"]`
	case "acls":
		return f["action"] == `"accept"` && f["src"] == `["*"]` && f["dst"] == `["*:*"]`
	}
	return false
}

// removeAllowAll removes every default allow-all rule (grants and acls
// forms) and returns how many it removed. The comments around a removed
// rule stay, and so does everything else.
func removeAllowAll(d *Document) int {
	root, ok := d.root.Value.(*hujson.Object)
	if !ok {
		return 0
	}
	removed := 0
	for i := range root.Members {
		m := &root.Members[i]
		name := memberName(m)
		if _, ok := m.Value.Value.(*hujson.Array); !ok {
			continue
		}
		ind, _ := lastLineIndent(m.Name.BeforeExtra)
		c := newContainer(&m.Value, ind)
		for j := c.len() - 1; j >= 0; j-- {
			if isAllowAll(name, c.value(j)) {
				d.remove(c, j, AllowAllKey())
				removed++
			}
		}
	}
	return removed
}
