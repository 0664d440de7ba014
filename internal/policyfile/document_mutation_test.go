package policyfile

import "testing"

// TestLayoutOfAppendedAndRemovedEntries pins the bytes of a new grant in
// files of several layouts, and of the file once it is removed again.
func TestLayoutOfAppendedAndRemovedEntries(t *testing.T) {
	g := Key{Kind: KindGrant, Name: "n"}
	for _, tc := range []struct{ src, put, del string }{
		{
			"{\n\t\"grants\": [],\n}\n",
			"{\n\t\"grants\": [\n\t\t// qtail:grant:n\n\t\t{\n\t\t\t\"src\": [\"group:ops\"],\n\t\t\t\"dst\": [\"tag:n\"],\n\t\t\t\"ip\": [\"tcp:443\"],\n\t\t},\n\t],\n}\n",
			"{\n\t\"grants\": [],\n}\n",
		},
		{
			"{\n\t\"grants\": [ ],\n}\n",
			"{\n\t\"grants\": [ \n\t\t// qtail:grant:n\n\t\t{\n\t\t\t\"src\": [\"group:ops\"],\n\t\t\t\"dst\": [\"tag:n\"],\n\t\t\t\"ip\": [\"tcp:443\"],\n\t\t},\n\t],\n}\n",
			"{\n\t\"grants\": [ ],\n}\n",
		},
		{
			"{\n  \"grants\": [\n    {\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"22\"]}\n  ]\n}\n",
			"{\n  \"grants\": [\n    {\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"22\"]},\n    // qtail:grant:n\n    {\n      \"src\": [\"group:ops\"],\n      \"dst\": [\"tag:n\"],\n      \"ip\": [\"tcp:443\"]\n    }\n  ]\n}\n",
			"{\n  \"grants\": [\n    {\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"22\"]}\n  ]\n}\n",
		},
		{
			"{\n\t\"grants\": [\n\t\t{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"22\"]}, // note\n\t],\n}\n",
			"{\n\t\"grants\": [\n\t\t{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"22\"]}, // note\n\t\t// qtail:grant:n\n\t\t{\n\t\t\t\"src\": [\"group:ops\"],\n\t\t\t\"dst\": [\"tag:n\"],\n\t\t\t\"ip\": [\"tcp:443\"],\n\t\t},\n\t],\n}\n",
			"{\n\t\"grants\": [\n\t\t{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"22\"]}, // note\n\t],\n}\n",
		},
		{
			"{\n\t\"grants\": [{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"22\"]}],\n}\n",
			"{\n\t\"grants\": [{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"22\"]},\n\t\t// qtail:grant:n\n\t\t{\n\t\t\t\"src\": [\"group:ops\"],\n\t\t\t\"dst\": [\"tag:n\"],\n\t\t\t\"ip\": [\"tcp:443\"],\n\t\t}],\n}\n",
			"{\n\t\"grants\": [{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"22\"]}],\n}\n",
		},
		{
			"{\r\n\t\"grants\": [\r\n\t\t{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"22\"]},\r\n\t],\r\n}\r\n",
			"{\r\n\t\"grants\": [\r\n\t\t{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"22\"]},\r\n\t\t// qtail:grant:n\r\n\t\t{\r\n\t\t\t\"src\": [\"group:ops\"],\r\n\t\t\t\"dst\": [\"tag:n\"],\r\n\t\t\t\"ip\": [\"tcp:443\"],\r\n\t\t},\r\n\t],\r\n}\r\n",
			"{\r\n\t\"grants\": [\r\n\t\t{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"22\"]},\r\n\t],\r\n}\r\n",
		},
		{
			"{\n\t\"hosts\": {},\n\n\t\"acls\": [],\n}\n",
			"{\n\t\"hosts\": {},\n\n\t\"acls\": [],\n\n\t\"grants\": [\n\t\t// qtail:grant:n\n\t\t{\n\t\t\t\"src\": [\"group:ops\"],\n\t\t\t\"dst\": [\"tag:n\"],\n\t\t\t\"ip\": [\"tcp:443\"],\n\t\t},\n\t],\n}\n",
			"{\n\t\"hosts\": {},\n\n\t\"acls\": [],\n\n\t\"grants\": [],\n}\n",
		},
		{
			"{\n\t\"grants\": [\n\t\t1,\n\n\t\t2,\n\t],\n}\n",
			"{\n\t\"grants\": [\n\t\t1,\n\n\t\t2,\n\t\t// qtail:grant:n\n\t\t{\n\t\t\t\"src\": [\"group:ops\"],\n\t\t\t\"dst\": [\"tag:n\"],\n\t\t\t\"ip\": [\"tcp:443\"],\n\t\t},\n\t],\n}\n",
			"{\n\t\"grants\": [\n\t\t1,\n\n\t\t2,\n\t],\n}\n",
		},
		{
			"{\"grants\": []}",
			"{\"grants\": [\n\t// qtail:grant:n\n\t{\n\t\t\"src\": [\"group:ops\"],\n\t\t\"dst\": [\"tag:n\"],\n\t\t\"ip\": [\"tcp:443\"],\n\t},\n]}",
			"{\"grants\": []}",
		},
		{
			"{}",
			"{\n\t\"grants\": [\n\t\t// qtail:grant:n\n\t\t{\n\t\t\t\"src\": [\"group:ops\"],\n\t\t\t\"dst\": [\"tag:n\"],\n\t\t\t\"ip\": [\"tcp:443\"],\n\t\t},\n\t],\n}",
			"{\n\t\"grants\": [],\n}",
		},
	} {
		d := mustParse(t, []byte(tc.src))
		if err := d.Put(g, grantValue("n")); err != nil {
			t.Fatal(err)
		}
		if got := string(d.Bytes()); got != tc.put {
			t.Errorf("Put in %q:\n%q\nwant\n%q", tc.src, got, tc.put)
		}
		if !d.Delete(g) {
			t.Errorf("Delete in %q removed nothing", tc.src)
		}
		if got := string(d.Bytes()); got != tc.del {
			t.Errorf("Delete in %q:\n%q\nwant\n%q", tc.src, got, tc.del)
		}
	}
}

// TestLayoutOfAdoptedEntries pins where the marker of an adopted entry
// goes, and what its removal leaves.
func TestLayoutOfAdoptedEntries(t *testing.T) {
	for _, tc := range []struct {
		key           Key
		val           string
		src, put, del string
	}{
		{
			Key{Kind: KindGrant, Name: "n"}, string(grantValue("n")),
			"{\n\t\"grants\": [{\"src\": [\"group:ops\"], \"dst\": [\"tag:n\"], \"ip\": [\"tcp:443\"]}],\n}\n",
			"{\n\t\"grants\": [\n\t\t// qtail:grant:n\n\t\t{\"src\": [\"group:ops\"], \"dst\": [\"tag:n\"], \"ip\": [\"tcp:443\"]}],\n}\n",
			"{\n\t\"grants\": [],\n}\n",
		},
		{
			Key{Kind: KindGrant, Name: "n"}, string(grantValue("n")),
			"{\n\t\"grants\": [\n\t\t{\"src\": [\"group:ops\"], \"dst\": [\"tag:n\"], \"ip\": [\"tcp:443\"]},\n\t],\n}\n",
			"{\n\t\"grants\": [\n\t\t// qtail:grant:n\n\t\t{\"src\": [\"group:ops\"], \"dst\": [\"tag:n\"], \"ip\": [\"tcp:443\"]},\n\t],\n}\n",
			"{\n\t\"grants\": [],\n}\n",
		},
		{
			Key{Kind: KindGrant, Name: "n"}, string(grantValue("n")),
			"{\n\t\"grants\": [\n\t\t1, {\"src\": [\"group:ops\"], \"dst\": [\"tag:n\"], \"ip\": [\"tcp:443\"]},\n\t],\n}\n",
			"{\n\t\"grants\": [\n\t\t1,\n\t\t// qtail:grant:n\n\t\t{\"src\": [\"group:ops\"], \"dst\": [\"tag:n\"], \"ip\": [\"tcp:443\"]},\n\t],\n}\n",
			"{\n\t\"grants\": [\n\t\t1,\n\t],\n}\n",
		},
		{
			Key{Kind: KindTagOwner, Name: "tag:n"}, `["a@b.c"]`,
			"{\n\t\"tagOwners\": {\"tag:n\": [\"a@b.c\"]},\n}\n",
			"{\n\t\"tagOwners\": {\n\t\t// qtail:tag_owner:tag:n\n\t\t\"tag:n\": [\"a@b.c\"]},\n}\n",
			"{\n\t\"tagOwners\": {},\n}\n",
		},
	} {
		d := mustParse(t, []byte(tc.src))
		if err := d.Put(tc.key, raw(tc.val)); err != nil {
			t.Fatal(err)
		}
		if got := string(d.Bytes()); got != tc.put {
			t.Errorf("adoption in %q:\n%q\nwant\n%q", tc.src, got, tc.put)
		}
		if !d.Delete(tc.key) {
			t.Errorf("Delete in %q removed nothing", tc.src)
		}
		if got := string(d.Bytes()); got != tc.del {
			t.Errorf("Delete in %q:\n%q\nwant\n%q", tc.src, got, tc.del)
		}
	}
}
