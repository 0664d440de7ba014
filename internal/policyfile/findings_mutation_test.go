package policyfile

import (
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
