package policyfile

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenPuts is one fragment of each kind, as created and then as updated.
func goldenPuts() (create, change []Mutation) {
	m := func(k Key, v string) Mutation { return Mutation{Key: k, Value: json.RawMessage(v)} }
	create = []Mutation{
		m(Key{Kind: KindGrant, Name: "web-to-db"}, `{"ip":["tcp:5432"],"dst":["tag:db"],"src":["tag:web"]}`),
		m(Key{Kind: KindTagOwner, Name: "tag:router"}, `["group:ops"]`),
		m(RouteKey("10.2.0.0/16"), `["tag:router"]`),
		m(ExitNodeKey(), `["tag:router"]`),
		m(Key{Kind: KindPolicyTest, Name: "web-reaches-db"}, `{"src":"tag:web","accept":["tag:db:5432"],"deny":["tag:db:22"]}`),
	}
	change = []Mutation{
		m(Key{Kind: KindGrant, Name: "web-to-db"}, `{"src":["tag:web","group:eng"],"dst":["tag:db"],"ip":["tcp:5432","tcp:6432"],`+
			`"app":{"example.com/cap/db":[{"role":"reader","databases":["billing","ledger","audit"]}]}}`),
		m(Key{Kind: KindTagOwner, Name: "tag:router"}, `["group:ops","alice@example.com"]`),
		m(RouteKey("10.2.0.0/16"), `["tag:router","group:ops"]`),
		m(ExitNodeKey(), `[]`),
		m(Key{Kind: KindPolicyTest, Name: "web-reaches-db"}, `{"src":"tag:web","accept":["tag:db:5432","tag:db:6432"]}`),
	}
	return create, change
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// isSubsequence reports whether every byte of a appears in b in order.
func isSubsequence(a, b []byte) bool {
	i := 0
	for j := 0; i < len(a) && j < len(b); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}

// insertedRuns returns the bytes of b that are not in a, when a is b with
// pieces cut out: the common prefix and suffix are removed first.
func insertedRuns(a, b []byte) []byte {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return b[p : len(b)-s]
}

func mustParse(t *testing.T, b []byte) *Document {
	t.Helper()
	d, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hujson.Standardize(d.Bytes()); err != nil {
		t.Fatalf("result is not valid HuJSON: %v\n%s", err, d.Bytes())
	}
	return d
}

func mustCanon(t *testing.T, s json.RawMessage) string {
	t.Helper()
	c, err := Canonicalize(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(c)
}

func TestGolden(t *testing.T) {
	files := []struct {
		name string
		// complete: every section exists, so deleting what was put gives
		// the original back byte for byte.
		complete bool
	}{
		{"handwritten.hujson", true},
		{"compact.hujson", true},
		{"spaces.json", false},
		{"empty.hujson", false},
	}
	create, change := goldenPuts()
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			orig, err := os.ReadFile(filepath.Join("testdata", f.name))
			if err != nil {
				t.Fatal(err)
			}
			base := strings.TrimSuffix(f.name, filepath.Ext(f.name))
			doc := mustParse(t, orig)

			// Create: each put only inserts; the original bytes all stay,
			// in order.
			for _, m := range create {
				before := doc.Bytes()
				if err := doc.Apply(m); err != nil {
					t.Fatalf("put %s: %v", m.Key, err)
				}
				after := mustParse(t, doc.Bytes()).Bytes()
				if !isSubsequence(before, after) {
					t.Errorf("put %s changed existing bytes", m.Key)
				}
				if f.complete && !bytes.Contains(insertedRuns(before, after), []byte(m.Key.Marker())) {
					t.Errorf("put %s: the inserted bytes lack the marker: %q", m.Key, insertedRuns(before, after))
				}
				got := doc.Get(m.Key)
				if !got.Found || !got.Marked || string(got.Value) != mustCanon(t, m.Value) {
					t.Errorf("get %s after put = %+v", m.Key, got)
				}
			}
			checkGolden(t, base+".put.hujson", doc.Bytes())
			if n := len(doc.Fragments()); n != len(create) {
				t.Errorf("Fragments() lists %d fragments, want %d", n, len(create))
			}
			afterPut := doc.Bytes()

			// Putting the same values again changes nothing.
			for _, m := range create {
				if err := doc.Apply(m); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(doc.Bytes(), afterPut) {
				t.Error("putting identical values changed the document")
			}

			// Update: only the values change, in place.
			for _, m := range change {
				if err := doc.Apply(m); err != nil {
					t.Fatalf("update %s: %v", m.Key, err)
				}
				got := doc.Get(m.Key)
				if !got.Found || !got.Marked || string(got.Value) != mustCanon(t, m.Value) {
					t.Errorf("get %s after update = %+v", m.Key, got)
				}
			}
			checkGolden(t, base+".update.hujson", mustParse(t, doc.Bytes()).Bytes())

			// Delete: the fragments go with their markers.
			for _, m := range create {
				if !doc.Delete(m.Key) {
					t.Errorf("delete %s found nothing", m.Key)
				}
				if got := doc.Get(m.Key); got.Found {
					t.Errorf("get %s after delete = %+v", m.Key, got)
				}
			}
			deleted := mustParse(t, doc.Bytes()).Bytes()
			checkGolden(t, base+".delete.hujson", deleted)
			if f.complete && !bytes.Equal(deleted, orig) {
				t.Errorf("after delete the document differs from the original:\n%s", deleted)
			}
			if !isSubsequence(orig, deleted) {
				t.Error("after delete, bytes of the original are missing")
			}
			if bytes.Contains(deleted, []byte("qtail:")) {
				t.Error("a marker is left after delete")
			}
			// A second round gives the same bytes back. The sections the
			// first round created stay, but for autoApprovers, which goes
			// with its last approver and comes back at the end of the
			// file.
			for _, m := range create {
				if err := doc.Apply(m); err != nil {
					t.Fatal(err)
				}
			}
			if f.complete && !bytes.Equal(doc.Bytes(), afterPut) {
				t.Errorf("second put differs from the first:\n%s", doc.Bytes())
			}
			for _, m := range create {
				doc.Delete(m.Key)
			}
			if !bytes.Equal(doc.Bytes(), deleted) {
				t.Errorf("second delete differs from the first:\n%s", doc.Bytes())
			}
		})
	}
}
