package docscheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

// The markers around the version table in the qtail_operator page.
const (
	chartTableStart = "<!-- chart versions: internal/manifest/charts.go -->"
	chartTableEnd   = "<!-- end of chart versions -->"
)

// chartTable renders the version table of internal/manifest as the
// qtail_operator page shows it.
func chartTable() string {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	var b strings.Builder
	b.WriteString("| Series | Checked against | `oauth.audience` (workload identity) | Connector `replicas` | `kube-apiserver` ProxyGroup | tailscale.com kinds |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, s := range manifest.OperatorChartVersions() {
		b.WriteString("| " + s.Series + " | " + s.Checked + " | " + yes(s.WorkloadIdentity) + " | " + yes(s.ConnectorReplicas) +
			" | " + yes(s.KubeAPIServerProxyGroup) + " | " + strings.Join(s.Kinds, ", ") + " |\n")
	}
	return b.String()
}

// The chart versions the qtail_operator page lists are those of the
// version table in the code, in the template and in the generated page.
func TestDocs_operatorChartVersionsMatchTheCode(t *testing.T) {
	want := chartTable()
	for _, rel := range []string{"templates/resources/operator.md.tmpl", "docs/resources/operator.md"} {
		b, err := os.ReadFile(filepath.Join(root(t), rel))
		if err != nil {
			t.Fatal(err)
		}
		_, rest, ok := strings.Cut(string(b), chartTableStart+"\n")
		got, _, closed := strings.Cut(rest, chartTableEnd)
		if !ok || !closed {
			t.Fatalf("%s has no version table between %q and %q; put this there:\n%s", rel, chartTableStart, chartTableEnd, want)
		}
		if got != want {
			t.Errorf("%s lists other chart versions than internal/manifest/charts.go; the table should read:\n%s\nit reads:\n%s", rel, want, got)
		}
	}
}
