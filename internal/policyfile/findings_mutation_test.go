package policyfile

import (
	"encoding/json"
	"testing"
)

func TestAllowAllForms(t *testing.T) {
	for _, tc := range []struct {
		src   string
		found bool
	}{
		{`{"grants": [{"src": ["*"], "dst": ["*"], "ip": ["*"]}]}`, true},
		{`{"Grants": [{"IP": ["*"], "Dst": ["*"], "SRC": ["*"]}]}`, true},
		{`{"grants": [{"src": ["*"], "dst": ["*"], "ip": ["*"], "via": ["tag:x"]}]}`, false},
		{`{"grants": [{"src": ["*"], "dst": ["*"]}]}`, false},
		{`{"grants": [{"src": ["*"], "dst": ["*"], "ip": ["tcp:22"]}]}`, false},
		{`{"grants": [{"src": ["*"], "dst": ["tag:x"], "ip": ["*"]}]}`, false},
		{`{"grants": [{"src": ["tag:x"], "dst": ["*"], "ip": ["*"]}]}`, false},
		{`{"grants": ["*"]}`, false},
		{`{"acls": [{"action": "accept", "src": ["*"], "dst": ["*:*"]}]}`, true},
		{`{"ACLs": [{"Action": "accept", "users": ["*"], "ports": ["*:*"]}]}`, true},
		{`{"acls": [{"action": "accept", "src": ["*"], "users": ["*"], "dst": ["*:*"]}]}`, false},
		{`{"acls": [{"action": "drop", "src": ["*"], "dst": ["*:*"]}]}`, false},
		{`{"acls": [{"action": "accept", "src": ["*"], "dst": ["*:22"]}]}`, false},
		{`{"acls": [{"action": "accept", "src": ["group:x"], "dst": ["*:*"]}]}`, false},
		{`{"tests": [{"src": ["*"], "dst": ["*"], "ip": ["*"]}]}`, false},
		{`{"grants": {"src": ["*"], "dst": ["*"], "ip": ["*"]}}`, false},
		{`[]`, false},
	} {
		d, err := Parse([]byte(tc.src))
		if err != nil {
			if tc.src == `[]` {
				continue
			}
			t.Fatal(err)
		}
		if got := HasAllowAll(d); got != tc.found {
			t.Errorf("HasAllowAll(%s) = %v, want %v", tc.src, got, tc.found)
		}
	}
}

func TestRemoveAllowAllCountsAndKeepsTheRest(t *testing.T) {
	src := "{\n\t\"groups\": {},\n\t\"grants\": [\n\t\t{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"*\"]},\n\t\t{\"src\": [\"a@b.c\"], \"dst\": [\"*\"], \"ip\": [\"*\"]},\n\t\t// everyone\n\t\t{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"*\"]},\n\t],\n\t\"acls\": [\n\t\t{\"action\": \"accept\", \"src\": [\"*\"], \"dst\": [\"*:*\"]},\n\t],\n}\n"
	d := mustParse(t, []byte(src))
	if n := removeAllowAll(d); n != 3 {
		t.Errorf("removeAllowAll = %d, want 3", n)
	}
	want := "{\n\t\"groups\": {},\n\t\"grants\": [\n\t\t{\"src\": [\"a@b.c\"], \"dst\": [\"*\"], \"ip\": [\"*\"]},\n\t\t// everyone\n\t],\n\t\"acls\": [],\n}\n"
	if got := string(d.Bytes()); got != want {
		t.Errorf("after removeAllowAll:\n%q\nwant\n%q", got, want)
	}
	if n := removeAllowAll(d); n != 0 || HasAllowAll(d) {
		t.Errorf("a second removeAllowAll removed %d", n)
	}
	if d.Delete(AllowAllKey()) {
		t.Error("Delete(allow all) reported a removal from a file without one")
	}
}

func TestEntriesJSON(t *testing.T) {
	proto := "tcp"
	for _, tc := range []struct {
		entry interface {
			JSON() (json.RawMessage, error)
		}
		want string
	}{
		{GrantEntry{Src: []string{"a"}, Dst: []string{"b"}}, `{"dst":["b"],"src":["a"]}`},
		{GrantEntry{Src: []string{"a"}, Dst: []string{}, IP: []string{"*"}, App: raw(`{"x":[]}`), Via: []string{"tag:v"}, SrcPosture: []string{"p"}},
			`{"app":{"x":[]},"dst":[],"ip":["*"],"src":["a"],"srcPosture":["p"],"via":["tag:v"]}`},
		{PolicyTestEntry{Src: "a"}, `{"src":"a"}`},
		{PolicyTestEntry{Src: "a", Proto: &proto, Accept: []string{"b:1"}, Deny: []string{}}, `{"accept":["b:1"],"deny":[],"proto":"tcp","src":"a"}`},
		{ListEntry{}, `[]`},
		{ListEntry{"x", "y"}, `["x","y"]`},
	} {
		got, err := tc.entry.JSON()
		if err != nil || string(got) != tc.want {
			t.Errorf("%#v.JSON() = %s, %v; want %s", tc.entry, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		entry interface {
			JSON() (json.RawMessage, error)
		}
		want string
	}{
		{GrantEntry{Dst: []string{"b"}}, "policy: a grant needs src and dst"},
		{GrantEntry{Src: []string{"a"}}, "policy: a grant needs src and dst"},
		{GrantEntry{Src: []string{"a"}, Dst: []string{"b"}, App: raw(`{`)}, "policy: the app of a grant is not valid JSON"},
		{ListEntry(nil), "policy: the list of owners or approvers is not set"},
	} {
		if _, err := tc.entry.JSON(); err == nil || err.Error() != tc.want {
			t.Errorf("%#v.JSON() error %v, want %q", tc.entry, err, tc.want)
		}
	}
	for _, tc := range []struct {
		route string
		exit  bool
		key   Key
		ok    bool
	}{
		{"", true, ExitNodeKey(), true},
		{"10.0.0.0/8", false, RouteKey("10.0.0.0/8"), true},
		{"10.0.0.0/8", true, Key{}, false},
		{"", false, Key{}, false},
	} {
		k, err := AutoApproverKey(tc.route, tc.exit)
		if k != tc.key || (err == nil) != tc.ok {
			t.Errorf("AutoApproverKey(%q, %v) = %v, %v", tc.route, tc.exit, k, err)
		}
	}
	for _, kind := range []Kind{KindGrant, KindTagOwner, KindAutoApprover, KindPolicyTest, KindAllowAll} {
		if k, ok := KindOf(kind.ResourceType()); !ok || k != kind {
			t.Errorf("KindOf(%s) = %v, %v", kind.ResourceType(), k, ok)
		}
	}
	if _, ok := KindOf("qtail_section"); ok {
		t.Error("KindOf of an unknown type")
	}
}
