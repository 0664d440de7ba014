package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The Kubernetes objects qtail ships through the tailnet-manifests chart. The
// chart applies each entry of the `manifests` list of its values as one
// object; qtail writes that list into a raw values file of the Helm service.
const (
	// ManifestsFileName is the name of the raw values file that holds the
	// manifests in a Helm service of a connector, a ProxyGroup or an egress
	// Service.
	ManifestsFileName = "qtail-manifests.yaml"
	// ManifestsKey is the key of the values that the chart ranges over.
	ManifestsKey = "manifests"

	TailscaleAPIVersion = "tailscale.com/v1alpha1"
	KindConnector       = "Connector"
	KindProxyGroup      = "ProxyGroup"
	KindProxyClass      = "ProxyClass"
	KindService         = "Service"

	// Annotations of an egress Service.
	AnnotationTailnetFQDN = "tailscale.com/tailnet-fqdn"
	AnnotationTailnetIP   = "tailscale.com/tailnet-ip"
	// AnnotationProxyGroup names the ProxyGroup that serves a Service:
	// an egress one, or an ingress one for an exposed Service.
	AnnotationProxyGroup = "tailscale.com/proxy-group"
	// AnnotationFunnel on a Service (or an Ingress) makes the operator
	// publish it on the public internet through Tailscale Funnel: qtail
	// never writes it, and refuses it wherever a user could add it.
	AnnotationFunnel = "tailscale.com/funnel"
	// AnnotationExpose = "true" asks the operator to expose a Service on
	// the tailnet through a proxy.
	AnnotationExpose = "tailscale.com/expose"
	// AnnotationHostname and AnnotationTags name a Service's proxy device:
	// an egress proxy (default NAMESPACE-NAME, and the operator's proxy
	// tags) or the proxy of an exposed Service.
	AnnotationHostname = "tailscale.com/hostname"
	AnnotationTags     = "tailscale.com/tags"
	// AnnotationProxyClass names the ProxyClass of a Service's proxy; the
	// operator also reads it as a label, which wins.
	AnnotationProxyClass = "tailscale.com/proxy-class"
	// LegacyAnnotationTailnetIP is the older name of tailnet-ip, which the
	// operator still reads.
	LegacyAnnotationTailnetIP = "tailscale.com/ts-tailnet-target-ip"

	// ExternalNamePlaceholder is the externalName of an egress Service
	// before the operator points it at its egress proxy.
	ExternalNamePlaceholder = "placeholder"

	ProxyGroupIngress = "ingress"
	ProxyGroupEgress  = "egress"
	// ProxyGroupKubeAPIServer replicas proxy the Kubernetes API on the
	// tailnet, behind the Tailscale Service svc:NAME (from chart 1.86).
	ProxyGroupKubeAPIServer = "kube-apiserver"
)

// ExitNodeRoutes are the routes an exit node advertises.
var ExitNodeRoutes = []string{"0.0.0.0/0", "::/0"}

// ChartDefaultProxyTags are the operator chart's proxyConfig.defaultTags
// (PROXY_TAGS): the tags of every proxy, Connector and ProxyGroup device
// that names none, unless the operator's values say otherwise.
var ChartDefaultProxyTags = []string{"tag:k8s"}

// ProxyDeviceTags returns the tags an object's devices get: its own, else
// the operator's proxy tags (PROXY_TAGS), else the chart's default.
func ProxyDeviceTags(own, proxyTags []string) []string {
	if len(own) > 0 {
		return slices.Clone(own)
	}
	if len(proxyTags) > 0 {
		return slices.Clone(proxyTags)
	}
	return slices.Clone(ChartDefaultProxyTags)
}

// Connector is a tailscale.com/v1alpha1 Connector: a subnet router, an exit
// node, or both, with one device per replica.
type Connector struct {
	Name string
	// Hostname and HostnamePrefix are exclusive; neither gives the
	// operator's default, NAME-connector.
	Hostname       string
	HostnamePrefix string
	// Replicas nil leaves the CRD's default (1).
	Replicas     *int64
	SubnetRoutes []string
	ExitNode     bool
	// Tags nil leaves the choice to the operator: the CRD has no default,
	// the operator applies its proxy tags (PROXY_TAGS, the chart's
	// proxyConfig.defaultTags). See DeviceTags.
	Tags []string
	// ProxyClass must name a ProxyClass that is Ready on the cluster, or
	// the operator brings up no device (the Connector waits).
	ProxyClass string
}

// DeviceTags are the tags of the connector's devices, given the proxy
// tags of the cluster's operator (nil when unknown: the chart's default).
func (c Connector) DeviceTags(proxyTags []string) []string { return ProxyDeviceTags(c.Tags, proxyTags) }

// DeviceHostnames are the hostnames of the devices the operator brings up
// for the connector, in replica order: PREFIX-0 ... PREFIX-(N-1) with a
// hostname prefix; otherwise every replica gets the hostname (default
// NAME-connector), as the operator does, so that replicas beyond the first
// share it and Tailscale suffixes their MagicDNS names (NAME-1, NAME-2).
func (c Connector) DeviceHostnames() []string {
	n := int64(1)
	if c.Replicas != nil {
		// A negative count (a hand-edited values file; the CRD refuses
		// it) brings up no device.
		n = max(*c.Replicas, 0)
	}
	base := c.Hostname
	if base == "" {
		base = c.Name + "-connector"
	}
	out := make([]string, 0, n)
	for i := range n {
		if c.HostnamePrefix != "" {
			out = append(out, c.HostnamePrefix+"-"+strconv.FormatInt(i, 10))
		} else {
			out = append(out, base)
		}
	}
	return out
}

// AdvertisedRoutes are the routes the connector's devices advertise: the
// subnet routes, then the exit node routes.
func (c Connector) AdvertisedRoutes() []string {
	out := slices.Clone(c.SubnetRoutes)
	if c.ExitNode {
		out = append(out, ExitNodeRoutes...)
	}
	return out
}

// ProxyGroup is a tailscale.com/v1alpha1 ProxyGroup: replicas of an ingress
// or egress proxy.
type ProxyGroup struct {
	Name string
	Type string
	// Replicas nil leaves the CRD's default (2).
	Replicas       *int64
	HostnamePrefix string
	// Tags nil leaves the operator's proxy tags; see DeviceTags.
	Tags []string
	// ProxyClass (or, when empty, the operator's
	// proxyConfig.defaultProxyClass) must be Ready on the cluster, or the
	// operator brings up no device.
	ProxyClass string
	// KubeAPIServerMode is spec.kubeAPIServer.mode of a kube-apiserver
	// ProxyGroup ("auth" or "noauth"; empty leaves out spec.kubeAPIServer,
	// which the operator runs in auth mode).
	KubeAPIServerMode string
}

// Modes of a kube-apiserver ProxyGroup (spec.kubeAPIServer.mode): auth
// impersonates each caller by their tailnet identity and the groups that
// grants of tailscale.com/cap/kubernetes give; noauth passes requests on
// with the proxy's own service account.
const (
	KubeAPIServerAuth   = "auth"
	KubeAPIServerNoAuth = "noauth"
)

// ServiceName is the Tailscale Service that the replicas of a
// kube-apiserver ProxyGroup serve: svc:NAME (qtail sets no
// spec.kubeAPIServer.hostname).
func (p ProxyGroup) ServiceName() string { return "svc:" + p.Name }

// DeviceTags are the tags of the ProxyGroup's devices, given the proxy
// tags of the cluster's operator (nil when unknown: the chart's default).
func (p ProxyGroup) DeviceTags(proxyTags []string) []string {
	return ProxyDeviceTags(p.Tags, proxyTags)
}

// ProxyGroupDefaultReplicas is the CRD's default replica count.
const ProxyGroupDefaultReplicas = 2

// DeviceHostnames are the hostnames of the ProxyGroup's devices:
// PREFIX-0 ... PREFIX-(N-1), the prefix defaulting to the name.
func (p ProxyGroup) DeviceHostnames() []string {
	n := int64(ProxyGroupDefaultReplicas)
	if p.Replicas != nil {
		n = max(*p.Replicas, 0)
	}
	prefix := p.HostnamePrefix
	if prefix == "" {
		prefix = p.Name
	}
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, prefix+"-"+strconv.FormatInt(i, 10))
	}
	return out
}

// ServicePort is a port of an egress Service.
type ServicePort struct {
	Port     int64
	Protocol string // TCP or UDP
}

// PortName is the Kubernetes name of the port, e.g. tcp-5432.
func (p ServicePort) PortName() string {
	return strings.ToLower(p.Protocol) + "-" + strconv.FormatInt(p.Port, 10)
}

// String is the port as "tcp:5432".
func (p ServicePort) String() string {
	return strings.ToLower(p.Protocol) + ":" + strconv.FormatInt(p.Port, 10)
}

// EgressService is a Service of type ExternalName that the operator turns
// into an egress proxy to a tailnet machine: without a ProxyGroup, a proxy
// device of its own (see ProxyHostname and DeviceTags), whose headless
// Service in the operator's namespace the operator then writes into
// externalName; with one, the ProxyGroup's devices.
type EgressService struct {
	Name string
	// TailnetFQDN and TailnetIP are exclusive.
	TailnetFQDN string
	TailnetIP   string
	Ports       []ServicePort
	ProxyGroup  string
	// Hostname and Tags name and tag the proxy device of a Service without
	// a ProxyGroup (empty: NAMESPACE-NAME and the operator's proxy tags).
	Hostname string
	Tags     []string
	// ProxyClass of the proxy device (a ProxyGroup's own applies
	// otherwise).
	ProxyClass string
}

// ProxyHostname is the hostname of the egress proxy device of a Service
// without a ProxyGroup, in namespace: the hostname annotation, else
// NAMESPACE-NAME.
func (e EgressService) ProxyHostname(namespace string) string {
	if e.Hostname != "" {
		return e.Hostname
	}
	return namespace + "-" + e.Name
}

// DeviceTags are the tags of the egress proxy device, given the proxy tags
// of the cluster's operator (nil when unknown: the chart's default).
func (e EgressService) DeviceTags(proxyTags []string) []string {
	return ProxyDeviceTags(e.Tags, proxyTags)
}

// RenderConnector renders the values file of a connector's Helm service.
func RenderConnector(c Connector) (string, error) {
	spec := map[string]any{}
	if c.Hostname != "" {
		spec["hostname"] = c.Hostname
	}
	if c.HostnamePrefix != "" {
		spec["hostnamePrefix"] = c.HostnamePrefix
	}
	if c.Replicas != nil {
		spec["replicas"] = *c.Replicas
	}
	if len(c.SubnetRoutes) > 0 {
		spec["subnetRouter"] = map[string]any{"advertiseRoutes": toAny(c.SubnetRoutes)}
	}
	if c.ExitNode {
		spec["exitNode"] = true
	}
	if len(c.Tags) > 0 {
		spec["tags"] = toAny(c.Tags)
	}
	if c.ProxyClass != "" {
		spec["proxyClass"] = c.ProxyClass
	}
	return renderObject(TailscaleAPIVersion, KindConnector, map[string]any{"name": c.Name}, spec)
}

// RenderProxyGroup renders the values file of a ProxyGroup's Helm service.
func RenderProxyGroup(p ProxyGroup) (string, error) {
	spec := map[string]any{"type": p.Type}
	if p.Replicas != nil {
		spec["replicas"] = *p.Replicas
	}
	if p.HostnamePrefix != "" {
		spec["hostnamePrefix"] = p.HostnamePrefix
	}
	if len(p.Tags) > 0 {
		spec["tags"] = toAny(p.Tags)
	}
	if p.ProxyClass != "" {
		spec["proxyClass"] = p.ProxyClass
	}
	if p.KubeAPIServerMode != "" {
		if p.Type != ProxyGroupKubeAPIServer {
			return "", fmt.Errorf("spec.kubeAPIServer is only for ProxyGroups of type %s", ProxyGroupKubeAPIServer)
		}
		spec["kubeAPIServer"] = map[string]any{"mode": p.KubeAPIServerMode}
	}
	return renderObject(TailscaleAPIVersion, KindProxyGroup, map[string]any{"name": p.Name}, spec)
}

// RenderEgressService renders the values file of an egress Service's Helm
// service.
func RenderEgressService(e EgressService) (string, error) {
	ann := map[string]any{}
	if e.TailnetFQDN != "" {
		ann[AnnotationTailnetFQDN] = e.TailnetFQDN
	}
	if e.TailnetIP != "" {
		ann[AnnotationTailnetIP] = e.TailnetIP
	}
	if e.ProxyGroup != "" {
		ann[AnnotationProxyGroup] = e.ProxyGroup
	}
	if e.Hostname != "" {
		ann[AnnotationHostname] = e.Hostname
	}
	if len(e.Tags) > 0 {
		ann[AnnotationTags] = strings.Join(e.Tags, ",")
	}
	if e.ProxyClass != "" {
		ann[AnnotationProxyClass] = e.ProxyClass
	}
	ports := make([]any, 0, len(e.Ports))
	for _, p := range e.Ports {
		ports = append(ports, map[string]any{"name": p.PortName(), "port": p.Port, "protocol": p.Protocol})
	}
	spec := map[string]any{"type": "ExternalName", "externalName": ExternalNamePlaceholder}
	if len(ports) > 0 {
		spec["ports"] = ports
	}
	return renderObject("v1", KindService, map[string]any{"name": e.Name, "annotations": ann}, spec)
}

func renderObject(apiVersion, kind string, metadata, spec map[string]any) (string, error) {
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": metadata, "spec": spec}
	var buf bytes.Buffer
	buf.WriteString("# Rendered by qtail. The tailnet-manifests chart applies each entry of manifests.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(map[string]any{ManifestsKey: []any{obj}}); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// ErrNoManifest means the values hold no manifest of the expected kind.
var ErrNoManifest = errors.New("no manifest of the expected kind")

// object is a manifest read back from values.
type object struct {
	APIVersion string         `yaml:"apiVersion"`
	Kind       string         `yaml:"kind"`
	Metadata   objectMetadata `yaml:"metadata"`
	Spec       map[string]any `yaml:"spec"`
}

type objectMetadata struct {
	Name        string            `yaml:"name"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// readObject returns the single manifest of the given kind in doc. Other
// manifests are an error: qtail's file holds one object.
func readObject(doc, apiVersion, kind string) (object, error) {
	var values struct {
		Manifests []object `yaml:"manifests"`
	}
	if err := yaml.Unmarshal([]byte(doc), &values); err != nil {
		return object{}, fmt.Errorf("the values are not valid YAML: %w", err)
	}
	var found []object
	for _, o := range values.Manifests {
		if o.Kind == kind && o.APIVersion == apiVersion {
			found = append(found, o)
		}
	}
	switch len(found) {
	case 0:
		return object{}, fmt.Errorf("%w: the values list no %s %s", ErrNoManifest, apiVersion, kind)
	case 1:
		return found[0], nil
	}
	return object{}, fmt.Errorf("the values list %d %s objects where qtail writes one", len(found), kind)
}

// Names returns the names of the manifests of kind kind in a values file;
// none when the file is not YAML or lists no manifests.
func Names(doc, kind string) []string {
	var values struct {
		Manifests []object `yaml:"manifests"`
	}
	if yaml.Unmarshal([]byte(doc), &values) != nil {
		return nil
	}
	var out []string
	for _, o := range values.Manifests {
		if o.Kind == kind {
			out = append(out, o.Metadata.Name)
		}
	}
	return out
}

// ReadConnector reads back the connector from a values file.
func ReadConnector(doc string) (Connector, error) {
	o, err := readObject(doc, TailscaleAPIVersion, KindConnector)
	if err != nil {
		return Connector{}, err
	}
	c := Connector{
		Name:           o.Metadata.Name,
		Hostname:       specString(o.Spec, "hostname"),
		HostnamePrefix: specString(o.Spec, "hostnamePrefix"),
		Replicas:       specInt(o.Spec, "replicas"),
		Tags:           toStrings(o.Spec["tags"]),
		ProxyClass:     specString(o.Spec, "proxyClass"),
	}
	if sr, ok := o.Spec["subnetRouter"].(map[string]any); ok {
		c.SubnetRoutes = toStrings(sr["advertiseRoutes"])
	}
	if b, ok := o.Spec["exitNode"].(bool); ok {
		c.ExitNode = b
	}
	return c, nil
}

// ReadProxyGroup reads back the ProxyGroup from a values file.
func ReadProxyGroup(doc string) (ProxyGroup, error) {
	o, err := readObject(doc, TailscaleAPIVersion, KindProxyGroup)
	if err != nil {
		return ProxyGroup{}, err
	}
	return ProxyGroup{
		Name:           o.Metadata.Name,
		Type:           specString(o.Spec, "type"),
		Replicas:       specInt(o.Spec, "replicas"),
		HostnamePrefix: specString(o.Spec, "hostnamePrefix"),
		Tags:           toStrings(o.Spec["tags"]),
		ProxyClass:     specString(o.Spec, "proxyClass"),
		KubeAPIServerMode: func() string {
			k, _ := o.Spec["kubeAPIServer"].(map[string]any)
			return specString(k, "mode")
		}(),
	}, nil
}

// ReadEgressService reads back the egress Service from a values file.
func ReadEgressService(doc string) (EgressService, error) {
	o, err := readObject(doc, "v1", KindService)
	if err != nil {
		return EgressService{}, err
	}
	e := EgressService{
		Name:        o.Metadata.Name,
		TailnetFQDN: o.Metadata.Annotations[AnnotationTailnetFQDN],
		TailnetIP:   o.Metadata.Annotations[AnnotationTailnetIP],
		ProxyGroup:  o.Metadata.Annotations[AnnotationProxyGroup],
		Hostname:    o.Metadata.Annotations[AnnotationHostname],
		Tags:        splitTags(o.Metadata.Annotations[AnnotationTags]),
		ProxyClass:  o.Metadata.Labels[AnnotationProxyClass],
	}
	if e.ProxyClass == "" {
		e.ProxyClass = o.Metadata.Annotations[AnnotationProxyClass]
	}
	if e.TailnetIP == "" {
		e.TailnetIP = o.Metadata.Annotations[LegacyAnnotationTailnetIP]
	}
	if ports, ok := o.Spec["ports"].([]any); ok {
		for _, p := range ports {
			m, ok := p.(map[string]any)
			if !ok {
				continue
			}
			sp := ServicePort{Protocol: "TCP"}
			if n := specInt(m, "port"); n != nil {
				sp.Port = *n
			}
			if s := specString(m, "protocol"); s != "" {
				sp.Protocol = strings.ToUpper(s)
			}
			e.Ports = append(e.Ports, sp)
		}
	}
	return e, nil
}

func specString(m map[string]any, key string) string {
	switch v := m[key].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

func specInt(m map[string]any, key string) *int64 {
	switch v := m[key].(type) {
	case int:
		n := int64(v)
		return &n
	case int64:
		return &v
	case float64:
		n := int64(v)
		return &n
	case string:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return &n
		}
	}
	return nil
}

// Names and hostnames as the CRDs and Kubernetes accept them.
var (
	// kubernetesNameRE is an RFC 1123 label: what the names of a Connector,
	// a ProxyGroup and a Service must be.
	kubernetesNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// serviceNameRE is an RFC 1035 label: a Service name starts with a letter.
	serviceNameRE = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	// connectorHostnameRE is the Connector CRD's pattern for hostname.
	connectorHostnameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$`)
	// hostnamePrefixRE is the CRDs' pattern for hostnamePrefix.
	hostnamePrefixRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,61}$`)
	// tagRE is the CRDs' pattern for a tag.
	tagRE = regexp.MustCompile(`^tag:[a-zA-Z][a-zA-Z0-9-]*$`)
)

// CheckKubernetesName checks the name of a Connector or a ProxyGroup.
func CheckKubernetesName(s string) error {
	if len(s) > 63 || !kubernetesNameRE.MatchString(s) {
		return fmt.Errorf("%q is not a valid Kubernetes name: 1 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit", s)
	}
	return nil
}

// CheckServiceName checks the name of a Service.
func CheckServiceName(s string) error {
	if len(s) > 63 || !serviceNameRE.MatchString(s) {
		return fmt.Errorf("%q is not a valid Service name: 1 to 63 lower-case letters, digits and '-', starting with a letter and ending with a letter or digit", s)
	}
	return nil
}

// CheckConnectorHostname checks a Connector's hostname against the CRD.
func CheckConnectorHostname(s string) error {
	if !connectorHostnameRE.MatchString(s) {
		return fmt.Errorf("%q does not match the Connector CRD's pattern for hostname: 2 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit", s)
	}
	return nil
}

// CheckHostnamePrefix checks a hostname prefix against the CRDs.
func CheckHostnamePrefix(s string) error {
	if !hostnamePrefixRE.MatchString(s) {
		return fmt.Errorf("%q does not match the CRD's pattern for hostnamePrefix: 1 to 62 lower-case letters, digits and '-', starting with a letter or digit", s)
	}
	return nil
}

// CheckTag checks a tag against the CRDs' pattern.
func CheckTag(s string) error {
	if !tagRE.MatchString(s) {
		return fmt.Errorf("%q is not a valid tag: \"tag:\" followed by a letter, then letters, digits and '-'", s)
	}
	return nil
}

// CheckSubnetRoutes checks the subnet routes of a connector: each a CIDR
// without host bits (the operator refuses those), no default route (that
// is the exit node), no duplicates and no overlaps. Every problem is
// reported, with its index.
func CheckSubnetRoutes(routes []string) []error {
	var errs []error
	parsed := make([]netip.Prefix, len(routes))
	ok := make([]bool, len(routes))
	for i, r := range routes {
		p, err := netip.ParsePrefix(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("subnet_routes[%d]: %q is not a CIDR such as 10.0.0.0/16 or fd00::/64", i, r))
			continue
		}
		if p.Bits() == 0 {
			errs = append(errs, fmt.Errorf("subnet_routes[%d]: %q is a default route; set exit_node = true to route all traffic through the connector instead", i, r))
			continue
		}
		if p.Masked() != p {
			errs = append(errs, fmt.Errorf("subnet_routes[%d]: %q has host bits set; the operator refuses it. Use %s", i, r, p.Masked()))
			continue
		}
		if p.String() != r {
			errs = append(errs, fmt.Errorf("subnet_routes[%d]: write %q as %s, the form Tailscale reports routes in", i, r, p))
			continue
		}
		parsed[i], ok[i] = p, true
	}
	for i := range routes {
		for j := range i {
			if !ok[i] || !ok[j] {
				continue
			}
			a, b := parsed[j], parsed[i]
			if a == b {
				errs = append(errs, fmt.Errorf("subnet_routes[%d]: %s is listed twice (also at index %d)", i, b, j))
			} else if a.Overlaps(b) {
				errs = append(errs, fmt.Errorf("subnet_routes[%d]: %s overlaps %s (index %d); advertise the larger one only", i, b, a, j))
			}
		}
	}
	return errs
}
