package cluster

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// CheckHTTPS refuses certificates that are off, on the attribute, in the
// resource's words; it warns when the settings cannot be read, and reads
// them once per provider instance, a failed read excepted.
func TestCheckHTTPS(t *testing.T) {
	w := newWorld(t)
	var reads, failures atomic.Int32
	inner := w.handler
	w.handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/settings") {
			reads.Add(1)
			if failures.Load() > 0 {
				failures.Add(-1)
				http.Error(rw, `{"message":"internal error"}`, http.StatusInternalServerError)
				return
			}
		}
		inner.ServeHTTP(rw, r)
	})
	need := HTTPSNeed{At: path.Root("hostname"), Needs: "the proxy needs them", Serves: "The proxy serves HTTPS",
		Without: "the proxy never serves", Fix: ", then plan again"}

	// A failed read: a warning, and the next check reads again.
	c := w.clients()
	failures.Store(1)
	var diags diag.Diagnostics
	if !CheckHTTPS(w.ctx, c, &diags, need) || diags.HasError() || diags.WarningsCount() != 1 ||
		diags.Warnings()[0].Summary() != "HTTPS Certificates Not Checked" || !strings.Contains(diags.Warnings()[0].Detail(), "which the proxy needs them.") {
		t.Fatalf("a failed read: %v", diags)
	}

	// Certificates off (a new tailnet): an error on the attribute.
	diags = nil
	if CheckHTTPS(w.ctx, c, &diags, need) || diags.ErrorsCount() != 1 {
		t.Fatalf("certificates off: %v", diags)
	}
	d, ok := diags.Errors()[0].(diag.DiagnosticWithPath)
	if !ok || !d.Path().Equal(path.Root("hostname")) ||
		!strings.HasPrefix(d.Detail(), "The proxy serves HTTPS, but the tailnet settings say HTTPS certificates are off (httpsEnabled is false): the proxy never serves.") ||
		!strings.HasSuffix(d.Detail(), "; MagicDNS must be on), then plan again.") {
		t.Fatalf("certificates off: %v", diags)
	}

	// The settings are read once: turning certificates on is seen by the
	// next provider instance, not by this one.
	w.Tailnet.SetHTTPSEnabled(true)
	diags = nil
	if CheckHTTPS(w.ctx, c, &diags, need) || reads.Load() != 2 {
		t.Fatalf("a second check: %v, %d reads, want the settings of the first (2 reads: the failed one and one)", diags, reads.Load())
	}
	diags = nil
	if !CheckHTTPS(w.ctx, w.clients(), &diags, need) || len(diags) != 0 || reads.Load() != 3 {
		t.Fatalf("a new provider instance: %v, %d reads", diags, reads.Load())
	}
}
