package manifest

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// KindDNSConfig is the tailscale.com/v1alpha1 DNSConfig: the operator's
// ts.net nameserver for cluster workloads. It is cluster-scoped, and the
// operator supports one per cluster.
const KindDNSConfig = "DNSConfig"

// DNSConfig is a tailscale.com/v1alpha1 DNSConfig. The operator deploys,
// in its own namespace, a nameserver (a Deployment and a Service named
// nameserver) that answers for the MagicDNS names of the egress proxies
// and ingress proxies of the cluster, and writes the Service's cluster IP
// to status.nameserver.ip.
type DNSConfig struct {
	Name string
	// ImageRepo and ImageTag are spec.nameserver.image; empty leaves the
	// operator's defaults (tailscale/k8s-nameserver, and the tag of
	// DNSConfigDefaultImageTag).
	ImageRepo string
	ImageTag  string
	// Replicas is spec.nameserver.replicas (chart 1.90 and later); nil
	// leaves the operator's default, 1.
	Replicas *int64
	// ClusterIP is spec.nameserver.service.clusterIP (chart 1.86 and
	// later): the static IP of the nameserver's Service. The operator sets
	// it only when it creates the Service.
	ClusterIP string
}

// The series of the operator chart whose DNSConfig CRD introduced an
// optional field of the spec. Series before them prune the field: the
// API server drops what a CRD does not define, so the nameserver runs
// without it.
const (
	DNSConfigClusterIPSince = "1.86"
	DNSConfigReplicasSince  = "1.90"
)

// DNSConfigDefaultImageRepo is the nameserver image the operator runs when
// spec.nameserver.image.repo is empty.
const DNSConfigDefaultImageRepo = "tailscale/k8s-nameserver"

// DNSConfigDefaultImageTag is the nameserver image tag the operator of a
// chart series runs when spec.nameserver.image.tag is empty: unstable up
// to 1.90, stable from 1.92.
func DNSConfigDefaultImageTag(series string) string {
	if seriesAtLeast(series, "1.92") {
		return "stable"
	}
	return "unstable"
}

// DNSConfigSupport says which optional DNSConfig fields the CRD of a chart
// series defines.
type DNSConfigSupport struct {
	ClusterIP bool
	Replicas  bool
}

// DNSConfig returns the optional DNSConfig fields the series' CRD defines.
func (s OperatorChartSeries) DNSConfig() DNSConfigSupport {
	return DNSConfigSupport{
		ClusterIP: seriesAtLeast(s.Series, DNSConfigClusterIPSince),
		Replicas:  seriesAtLeast(s.Series, DNSConfigReplicasSince),
	}
}

// seriesAtLeast reports whether the series a (MAJOR.MINOR) is b or later.
func seriesAtLeast(a, b string) bool {
	am, an, ok1 := parseSeries(a)
	bm, bn, ok2 := parseSeries(b)
	if !ok1 || !ok2 {
		return false
	}
	return am > bm || am == bm && an >= bn
}

func parseSeries(s string) (major, minor int, ok bool) {
	ma, mi, found := strings.Cut(s, ".")
	if !found {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(ma)
	minor, err2 := strconv.Atoi(mi)
	return major, minor, err1 == nil && err2 == nil
}

// RenderDNSConfig renders the values file of a DNSConfig's Helm service.
// The CRD requires spec.nameserver, so an empty one is written as {}.
func RenderDNSConfig(d DNSConfig) (string, error) {
	ns := map[string]any{}
	if d.ImageRepo != "" || d.ImageTag != "" {
		img := map[string]any{}
		if d.ImageRepo != "" {
			img["repo"] = d.ImageRepo
		}
		if d.ImageTag != "" {
			img["tag"] = d.ImageTag
		}
		ns["image"] = img
	}
	if d.Replicas != nil {
		ns["replicas"] = *d.Replicas
	}
	if d.ClusterIP != "" {
		ns["service"] = map[string]any{"clusterIP": d.ClusterIP}
	}
	return renderObject(TailscaleAPIVersion, KindDNSConfig, map[string]any{"name": d.Name}, map[string]any{"nameserver": ns})
}

// ReadDNSConfig reads back the DNSConfig from a values file.
func ReadDNSConfig(doc string) (DNSConfig, error) {
	o, err := readObject(doc, TailscaleAPIVersion, KindDNSConfig)
	if err != nil {
		return DNSConfig{}, err
	}
	d := DNSConfig{Name: o.Metadata.Name}
	ns, _ := o.Spec["nameserver"].(map[string]any)
	if img, ok := ns["image"].(map[string]any); ok {
		d.ImageRepo, d.ImageTag = specString(img, "repo"), specString(img, "tag")
	}
	d.Replicas = specInt(ns, "replicas")
	if svc, ok := ns["service"].(map[string]any); ok {
		d.ClusterIP = specString(svc, "clusterIP")
	}
	return d, nil
}

var (
	// imageRepoRE is an image reference without tag or digest: an
	// optional registry host (with a port), then path components of
	// lower-case letters and digits joined by '.', '_', '__' or dashes.
	imageRepoRE = regexp.MustCompile(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?` +
		`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$`)
	// imageTagRE is an image tag.
	imageTagRE = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127}$`)
)

// CheckImageRepo checks a nameserver image repository: the operator runs
// REPO:TAG, so the repository carries neither a tag nor a digest.
func CheckImageRepo(s string) error {
	if strings.Contains(s, "@") {
		return fmt.Errorf("%q carries a digest; the operator runs REPO:TAG, so give the repository alone and the tag in tag", s)
	}
	if i := strings.LastIndex(s, ":"); i >= 0 && !strings.Contains(s[i:], "/") {
		return fmt.Errorf("%q carries a tag; the operator runs REPO:TAG, so give the repository alone, such as %s, and the tag in tag", s, s[:i])
	}
	if len(s) > 255 || !imageRepoRE.MatchString(s) {
		return fmt.Errorf("%q is not an image repository such as %s or ghcr.io/acme/k8s-nameserver", s, DNSConfigDefaultImageRepo)
	}
	return nil
}

// CheckImageTag checks a nameserver image tag.
func CheckImageTag(s string) error {
	if !imageTagRE.MatchString(s) {
		return fmt.Errorf("%q is not an image tag: up to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'", s)
	}
	return nil
}

// CheckClusterIP checks a static cluster IP for the nameserver's Service:
// one address, written as Kubernetes writes it. "None" would make the
// Service headless, and the operator never reports the IP of a headless
// Service.
func CheckClusterIP(s string) error {
	if strings.EqualFold(s, "None") {
		return fmt.Errorf("%q makes the nameserver's Service headless, and the operator then never reports a nameserver IP; give an "+
			"address of the cluster's Service range, or leave cluster_ip unset", s)
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return fmt.Errorf("%q is not an IP address such as 10.96.0.53", s)
	}
	if a.IsUnspecified() || a.IsLoopback() || a.IsMulticast() || a.IsLinkLocalUnicast() {
		return fmt.Errorf("%s cannot be a Service's cluster IP; give an address of the cluster's Service range, such as 10.96.0.53", s)
	}
	if a.Is4In6() {
		return fmt.Errorf("write %q as %s", s, a.Unmap())
	}
	if a.String() != s {
		return fmt.Errorf("write %q as %s, the form Kubernetes reports addresses in", s, a)
	}
	return nil
}
