package docscheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

// The markers around the DNSConfig fields table of the qtail_dns_config page.
const (
	dnsFieldsStart = "<!-- dnsconfig fields: internal/manifest/dnsconfig.go -->"
	dnsFieldsEnd   = "<!-- end of dnsconfig fields -->"
)

// dnsFieldsTable renders the DNSConfig fields by chart series as the
// qtail_dns_config page shows them.
func dnsFieldsTable() string {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	var b strings.Builder
	b.WriteString("| Series | `image_repo`, `image_tag` | `cluster_ip` | `replicas` | Default image tag |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, s := range manifest.OperatorChartVersions() {
		f := s.DNSConfig()
		b.WriteString("| " + s.Series + " | yes | " + yes(f.ClusterIP) + " | " + yes(f.Replicas) + " | `" + manifest.DNSConfigDefaultImageTag(s.Series) + "` |\n")
	}
	return b.String()
}

// The DNSConfig fields the qtail_dns_config page lists by chart series are
// those of internal/manifest, in the template and in the generated page.
func TestDocs_dnsConfigFieldsMatchTheCode(t *testing.T) {
	want := dnsFieldsTable()
	for _, rel := range []string{"templates/resources/dns_config.md.tmpl", "docs/resources/dns_config.md"} {
		b, err := os.ReadFile(filepath.Join(root(t), rel))
		if err != nil {
			t.Fatal(err)
		}
		_, rest, ok := strings.Cut(string(b), dnsFieldsStart+"\n")
		got, _, closed := strings.Cut(rest, dnsFieldsEnd)
		if !ok || !closed {
			t.Fatalf("%s has no DNSConfig fields table between %q and %q; put this there:\n%s", rel, dnsFieldsStart, dnsFieldsEnd, want)
		}
		if got != want {
			t.Errorf("%s lists other DNSConfig fields than internal/manifest; the table should read:\n%s\nit reads:\n%s", rel, want, got)
		}
	}
}
