package manifest

import (
	"fmt"
	"strings"
)

// An Ingress of class tailscale (cmd/k8s-operator/ingress.go): the
// operator makes one proxy device, named after the first label of
// spec.tls[0].hosts[0], that serves HTTPS on port 443 with the tailnet's
// certificate for its MagicDNS name and proxies to spec.defaultBackend, a
// Service of the Ingress's own namespace. With tailscale.com/proxy-group
// it is instead the Tailscale Service svc:HOSTNAME of an ingress
// ProxyGroup.

const (
	// IngressAPIVersion and KindIngress name the Ingress kind.
	IngressAPIVersion = "networking.k8s.io/v1"
	KindIngress       = "Ingress"
	// IngressClassTailscale is the IngressClass the operator's chart
	// installs.
	IngressClassTailscale = "tailscale"
	// IngressPort is the only port an Ingress proxy serves.
	IngressPort = 443
)

// Ingress is the Ingress of an HTTPS exposure.
type Ingress struct {
	// Name is the object's name; Hostname the proxy's (spec.tls host).
	Name     string
	Hostname string
	// BackendService and BackendPort are the default backend: a Service
	// of the Ingress's namespace and its port number.
	BackendService string
	BackendPort    int64
	// Tags of the proxy device (tailscale.com/tags); none: the
	// operator's proxy tags.
	Tags []string
	// ProxyGroup, when set, serves the Ingress as a Tailscale Service of
	// that ingress ProxyGroup.
	ProxyGroup string
}

// DeviceTags are the tags of the Ingress's proxy device, given the proxy
// tags of the cluster's operator (nil when unknown: the chart's default).
func (g Ingress) DeviceTags(proxyTags []string) []string {
	return ProxyDeviceTags(g.Tags, proxyTags)
}

// RenderIngress renders the values file of an Ingress's Helm service.
func RenderIngress(g Ingress) (string, error) {
	meta := map[string]any{"name": g.Name}
	ann := map[string]any{}
	if len(g.Tags) > 0 {
		ann[AnnotationTags] = strings.Join(g.Tags, ",")
	}
	if g.ProxyGroup != "" {
		ann[AnnotationProxyGroup] = g.ProxyGroup
	}
	if len(ann) > 0 {
		meta["annotations"] = ann
	}
	spec := map[string]any{
		"ingressClassName": IngressClassTailscale,
		"defaultBackend": map[string]any{"service": map[string]any{
			"name": g.BackendService, "port": map[string]any{"number": g.BackendPort},
		}},
		"tls": []any{map[string]any{"hosts": []any{g.Hostname}}},
	}
	return renderObject(IngressAPIVersion, KindIngress, meta, spec)
}

// ReadIngress reads back the Ingress from a values file.
func ReadIngress(doc string) (Ingress, error) {
	o, err := readObject(doc, IngressAPIVersion, KindIngress)
	if err != nil {
		return Ingress{}, err
	}
	g := Ingress{
		Name:       o.Metadata.Name,
		Tags:       splitTags(o.Metadata.Annotations[AnnotationTags]),
		ProxyGroup: o.Metadata.Annotations[AnnotationProxyGroup],
	}
	if class := specString(o.Spec, "ingressClassName"); class != IngressClassTailscale {
		return g, fmt.Errorf("the Ingress %s has the class %q, not %q: the operator does not serve it", g.Name, class, IngressClassTailscale)
	}
	if b, ok := o.Spec["defaultBackend"].(map[string]any); ok {
		if s, ok := b["service"].(map[string]any); ok {
			g.BackendService = specString(s, "name")
			if p, ok := s["port"].(map[string]any); ok {
				if n := specInt(p, "number"); n != nil {
					g.BackendPort = *n
				}
			}
		}
	}
	if tls, ok := o.Spec["tls"].([]any); ok && len(tls) > 0 {
		if t, ok := tls[0].(map[string]any); ok {
			if hosts := toStrings(t["hosts"]); len(hosts) > 0 {
				g.Hostname, _, _ = strings.Cut(hosts[0], ".")
			}
		}
	}
	return g, nil
}

// ApplicationServiceName is the name of the Kubernetes Service that
// Qovery's engine gives an application or a container: "app-z" and the
// first 8 hexadecimal digits of its ID.
func ApplicationServiceName(id string) string {
	id = strings.ReplaceAll(id, "-", "")
	if len(id) > 8 {
		id = id[:8]
	}
	return "app-z" + id
}
