package manifest

import (
	"reflect"
	"strings"
	"testing"
)

func TestDNSConfigRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    DNSConfig
		want []string
	}{
		{name: "defaults", d: DNSConfig{Name: "ts-dns"}, want: []string{"kind: DNSConfig", "apiVersion: tailscale.com/v1alpha1", "nameserver: {}", "name: ts-dns"}},
		{
			name: "everything",
			d:    DNSConfig{Name: "ts-dns", ImageRepo: "ghcr.io/acme/k8s-nameserver", ImageTag: "v1.2.3", Replicas: new(int64(2)), ClusterIP: "10.96.0.53"},
			want: []string{"repo: ghcr.io/acme/k8s-nameserver", "tag: v1.2.3", "replicas: 2", "clusterIP: 10.96.0.53"},
		},
		{name: "tag only", d: DNSConfig{Name: "dns", ImageTag: "stable"}, want: []string{"tag: stable"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := RenderDNSConfig(tc.d)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(doc, w) {
					t.Errorf("rendered values lack %q:\n%s", w, doc)
				}
			}
			got, err := ReadDNSConfig(doc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.d) {
				t.Errorf("read back %+v, want %+v\n%s", got, tc.d, doc)
			}
			if again, err := RenderDNSConfig(got); err != nil || again != doc {
				t.Errorf("rendering is not stable: %v\n%s\n---\n%s", err, doc, again)
			}
		})
	}
	if _, err := ReadDNSConfig("manifests: []\n"); err == nil {
		t.Error("values without a DNSConfig read as one")
	}
}

func TestDNSConfigChecks(t *testing.T) {
	for _, s := range []string{"tailscale/k8s-nameserver", "ghcr.io/acme/k8s-nameserver", "registry.local:5000/dns", "nameserver"} {
		if err := CheckImageRepo(s); err != nil {
			t.Errorf("CheckImageRepo(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"tailscale/k8s-nameserver:stable", "tailscale/k8s-nameserver@sha256:abc", "Tailscale/Nameserver", "", "a//b"} {
		if CheckImageRepo(s) == nil {
			t.Errorf("CheckImageRepo(%q) accepted", s)
		}
	}
	for _, s := range []string{"stable", "v1.90.0", "unstable-v1.91.1"} {
		if err := CheckImageTag(s); err != nil {
			t.Errorf("CheckImageTag(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"", "-x", ".x", "a b", strings.Repeat("a", 129)} {
		if CheckImageTag(s) == nil {
			t.Errorf("CheckImageTag(%q) accepted", s)
		}
	}
	for _, s := range []string{"10.96.0.53", "172.20.0.10", "fd00::53"} {
		if err := CheckClusterIP(s); err != nil {
			t.Errorf("CheckClusterIP(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"None", "none", "10.96.0.0/12", "0.0.0.0", "127.0.0.1", "fd00:0::53", "::ffff:10.0.0.1", "10.96.0.053", "host"} {
		if CheckClusterIP(s) == nil {
			t.Errorf("CheckClusterIP(%q) accepted", s)
		}
	}
}

// The DNSConfig CRD gained service.clusterIP in 1.86 and replicas in 1.90;
// the default image tag became stable in 1.92.
func TestDNSConfigSupport(t *testing.T) {
	for _, s := range OperatorChartVersions() {
		got := s.DNSConfig()
		want := DNSConfigSupport{ClusterIP: seriesAtLeast(s.Series, "1.86"), Replicas: seriesAtLeast(s.Series, "1.90")}
		if got != want {
			t.Errorf("%s: %+v, want %+v", s.Series, got, want)
		}
	}
	for series, want := range map[string]DNSConfigSupport{"1.78": {}, "1.84": {}, "1.86": {ClusterIP: true}, "1.88": {ClusterIP: true},
		"1.90": {ClusterIP: true, Replicas: true}, "1.102": {ClusterIP: true, Replicas: true}} {
		if got := (OperatorChartSeries{Series: series}).DNSConfig(); got != want {
			t.Errorf("%s: %+v, want %+v", series, got, want)
		}
	}
	if DNSConfigDefaultImageTag("1.90") != "unstable" || DNSConfigDefaultImageTag("1.92") != "stable" || DNSConfigDefaultImageTag("1.102") != "stable" {
		t.Error("default image tags by series are wrong")
	}
	if seriesAtLeast("2.0", "1.90") != true || seriesAtLeast("1.9", "1.90") != false || seriesAtLeast("x", "1.0") {
		t.Error("seriesAtLeast compares wrongly")
	}
}
