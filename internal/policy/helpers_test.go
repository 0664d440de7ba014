package policy

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tailscale/hujson"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// basePolicy is a small hand-written policy file.
const basePolicy = `{
	// People.
	"groups": {"group:ops": ["carol@example.com"]},
	"tagOwners": {
		"tag:db": ["group:ops"],
	},
	"grants": [
		{"src": ["group:ops"], "dst": ["tag:db"], "ip": ["tcp:5432"]},
	],
}
`

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// mustParse parses b and checks that it is valid HuJSON.
func mustParse(t *testing.T, b []byte) *policyfile.Document {
	t.Helper()
	d, err := policyfile.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hujson.Standardize(d.Bytes()); err != nil {
		t.Fatalf("result is not valid HuJSON: %v\n%s", err, d.Bytes())
	}
	return d
}

// pause lets d of virtual time pass for the calling goroutine, in a
// synctest bubble.
func pause(d time.Duration) {
	if d > 0 {
		<-time.After(d)
	}
}

// perFragment reports the time per fragment of a benchmark over n.
func perFragment(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/fragment")
}
