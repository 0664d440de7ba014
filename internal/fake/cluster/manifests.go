package cluster

import (
	"fmt"
	"maps"
	"math"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

// A Helm service other than the operator chart may render Kubernetes
// objects from the list `manifests` of its values, one object per entry
// (the chart qtail ships does exactly that). The simulation reads that list
// as the Kubernetes API server would receive it, independently of how
// qtail writes it, and plays Helm, the API server and the operator:
//
//   - Helm merges the values files (a later file's list replaces an earlier
//     one), builds the objects (a tailscale.com kind needs the operator's
//     CRDs on the cluster), refuses objects that another release owns, and
//     installs all of them or none (--atomic);
//   - the API server validates them against the CRDs' schemas and CEL
//     rules (patterns, minimums, one role per Connector, hostname rules,
//     an immutable ProxyGroup type);
//   - the operator brings up one device per Connector or ProxyGroup
//     replica, advertises the Connector's routes (which the tailnet
//     approves when autoApprovers allow them at that moment), marks
//     ProxyClasses Ready, and brings up a proxy device for each egress
//     Service without a ProxyGroup, reporting problems as events.
//
// Objects the release no longer renders are deleted, with their devices;
// so are all of them when the Helm service is deleted. With no operator
// running, those that carry its finalizer stay Terminating, their devices
// with them (finalizers.go).

// Names the simulation reads in rendered manifests.
const (
	// ManifestsKey is the key of the values list a manifests chart renders.
	ManifestsKey = "manifests"

	// Annotations of an egress Service (tailscale.com/proxy-group is
	// AnnotationProxyGroup).
	AnnotationTailnetFQDN = "tailscale.com/tailnet-fqdn"
	AnnotationTailnetIP   = "tailscale.com/tailnet-ip"
	// AnnotationLegacyTailnetIP is the older name of tailnet-ip, which the
	// operator still reads.
	AnnotationLegacyTailnetIP = "tailscale.com/ts-tailnet-target-ip"

	// ProxyGroup types, as the CRD enumerates them.
	ProxyGroupTypeEgress        = "egress"
	ProxyGroupTypeIngress       = "ingress"
	ProxyGroupTypeKubeAPIServer = "kube-apiserver"

	tailscaleGroup   = "tailscale.com"
	tailscaleVersion = "v1alpha1"
	kindConnector    = "Connector"
	kindProxyGroup   = "ProxyGroup"
	kindService      = "Service"

	defaultConnectorReplicas  = 1
	defaultProxyGroupReplicas = 2

	// helmFailure prefixes the errors Helm reports, as for the operator
	// chart.
	helmFailure = "helm upgrade --install failed: "
	// defaultManifestsChart names the chart in template errors when the
	// chart comes from Git and has no name in the snapshot.
	defaultManifestsChart = "tailnet-manifests"
)

// tailscaleKinds are the kinds of the operator chart's CRDs (version
// v1alpha1), with the minor release of the chart that introduced each.
// All are cluster-scoped but ProxyGroupPolicy.
var tailscaleKinds = map[string]int{
	"Connector": 78, "ProxyGroup": 78, "ProxyClass": 78, "DNSConfig": 78, "Recorder": 78,
	"Tailnet": 96, "ProxyGroupPolicy": 96, "PeerRelay": 102,
}

// namespacedTailscaleKinds are the tailscale.com kinds that live in a
// namespace.
var namespacedTailscaleKinds = map[string]bool{"ProxyGroupPolicy": true}

// clusterScopedKinds are the well-known cluster-scoped kinds, by
// "group/kind" (the core group is empty).
var clusterScopedKinds = map[string]bool{
	"/Namespace": true, "/Node": true, "/PersistentVolume": true,
	"rbac.authorization.k8s.io/ClusterRole": true, "rbac.authorization.k8s.io/ClusterRoleBinding": true,
	"apiextensions.k8s.io/CustomResourceDefinition": true, "storage.k8s.io/StorageClass": true,
	"networking.k8s.io/IngressClass": true, "scheduling.k8s.io/PriorityClass": true,
	"admissionregistration.k8s.io/ValidatingWebhookConfiguration": true,
	"admissionregistration.k8s.io/MutatingWebhookConfiguration":   true,
}

// ReplicaDevice is the tailnet device of one replica.
type ReplicaDevice struct {
	// Index is the replica's ordinal.
	Index    int
	Hostname string
	DeviceID string
}

// Connector is a tailscale.com Connector a Helm service rendered, with
// the defaults applied.
type Connector struct {
	HelmID    string
	ClusterID string
	Name      string
	// Hostname and HostnamePrefix are as in the spec ("" when unset).
	Hostname       string
	HostnamePrefix string
	Replicas       int
	SubnetRoutes   []string
	ExitNode       bool
	// Tags are the spec's tags, or the operator's proxy tags (tag:k8s by
	// default) when the spec has none.
	Tags       []string
	ProxyClass string
	// Hostnames are the device hostnames the operator wants, in replica
	// order: PREFIX-0 ... PREFIX-(N-1) with a hostname prefix, otherwise
	// the hostname (default NAME-connector) for every replica.
	Hostnames []string
	// AdvertisedRoutes are what each device advertises: the subnet routes,
	// then 0.0.0.0/0 and ::/0 for an exit node.
	AdvertisedRoutes []string
	// Devices are the devices the operator brought up at its last
	// reconciliation, in replica order (a device removed by hand since
	// is still listed).
	Devices []ReplicaDevice
}

// DeviceIDs returns the IDs of the connector's devices, in replica order.
func (c Connector) DeviceIDs() []string { return replicaIDs(c.Devices) }

// ProxyGroup is a tailscale.com ProxyGroup a Helm service rendered, with
// the defaults applied.
type ProxyGroup struct {
	HelmID         string
	ClusterID      string
	Name           string
	Type           string
	Replicas       int
	HostnamePrefix string
	// Tags are the spec's tags, or the operator's proxy tags.
	Tags       []string
	ProxyClass string
	// Hostnames are PREFIX-0 ... PREFIX-(N-1), the prefix defaulting to
	// the name.
	Hostnames []string
	// Devices are the devices the operator brought up at its last
	// reconciliation, in replica order.
	Devices []ReplicaDevice
	// KubeAPIServer is spec.kubeAPIServer, and the status the operator
	// gives a ProxyGroup of type kube-apiserver (nil for the other types).
	KubeAPIServer *KubeAPIServerProxy
}

// DeviceIDs returns the IDs of the ProxyGroup's devices, in replica order.
func (g ProxyGroup) DeviceIDs() []string { return replicaIDs(g.Devices) }

// ServicePort is a port of a rendered Service.
type ServicePort struct {
	Name     string
	Port     int
	Protocol string
}

// EgressService is a rendered Service annotated with a tailnet target
// (tailscale.com/tailnet-fqdn or tailscale.com/tailnet-ip). The operator
// needs nothing on the tailnet for it; it only checks it.
type EgressService struct {
	HelmID    string
	ClusterID string
	Namespace string
	Name      string
	// TailnetFQDN and TailnetIP are the targets as annotated; TailnetIP
	// falls back to the legacy annotation.
	TailnetFQDN  string
	TailnetIP    string
	ProxyGroup   string
	Type         string
	ExternalName string
	Ports        []ServicePort
	// Valid reports whether the operator accepted the Service at its last
	// reconciliation; Problem says why not.
	Valid   bool
	Problem string
	// DeviceID, ProxyHostname and ProxyTags are the proxy device the
	// operator brought up for a Service without a ProxyGroup (empty
	// until it has one).
	DeviceID      string
	ProxyHostname string
	ProxyTags     []string

	// hostname and tags are the tailscale.com/hostname and
	// tailscale.com/tags annotations, proxyClass the ProxyClass label or
	// annotation.
	hostname   string
	tags       []string
	hasTags    bool
	proxyClass string
	hasClass   bool
	// emptyProxyGroup is set when tailscale.com/proxy-group is present
	// but empty.
	emptyProxyGroup bool
}

// Connectors lists the rendered Connectors, by cluster then name.
func (e *Engine) Connectors() []Connector {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Connector
	for _, k := range e.sortedKeysLocked("") {
		if c := e.objects[k].connector; c != nil {
			out = append(out, c.clone())
		}
	}
	return out
}

// ProxyGroups lists the rendered ProxyGroups, by cluster then name.
func (e *Engine) ProxyGroups() []ProxyGroup {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []ProxyGroup
	for _, k := range e.sortedKeysLocked("") {
		if g := e.objects[k].proxyGroup; g != nil {
			out = append(out, g.clone())
		}
	}
	return out
}

// EgressServices lists the rendered egress Services, by cluster, namespace
// then name.
func (e *Engine) EgressServices() []EgressService {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []EgressService
	for _, k := range e.sortedKeysLocked("") {
		if s := e.objects[k].egress; s != nil {
			c := *s
			c.Ports = slices.Clone(s.Ports)
			c.ProxyTags = slices.Clone(s.ProxyTags)
			c.tags = slices.Clone(s.tags)
			out = append(out, c)
		}
	}
	return out
}

func (c *Connector) clone() Connector {
	out := *c
	out.SubnetRoutes = slices.Clone(c.SubnetRoutes)
	out.Tags = slices.Clone(c.Tags)
	out.Hostnames = slices.Clone(c.Hostnames)
	out.AdvertisedRoutes = slices.Clone(c.AdvertisedRoutes)
	out.Devices = slices.Clone(c.Devices)
	return out
}

func (g *ProxyGroup) clone() ProxyGroup {
	out := *g
	out.Tags = slices.Clone(g.Tags)
	out.Hostnames = slices.Clone(g.Hostnames)
	out.Devices = slices.Clone(g.Devices)
	if g.KubeAPIServer != nil {
		k := *g.KubeAPIServer
		k.Conditions = maps.Clone(k.Conditions)
		out.KubeAPIServer = &k
	}
	return out
}

func replicaIDs(devs []ReplicaDevice) []string {
	out := make([]string, 0, len(devs))
	for _, d := range devs {
		out = append(out, d.DeviceID)
	}
	return out
}

// objectKey identifies a Kubernetes object on a cluster.
type objectKey struct {
	cluster   string
	group     string // "" for the core group
	kind      string
	namespace string // "" for a cluster-scoped object
	name      string
}

// ownedObject is an object a Helm release installed.
type ownedObject struct {
	helmID    string
	release   string // the Helm release name
	releaseNS string // the namespace of the release
	// At most one of these is set: objects the simulation does not act
	// on (a ConfigMap, a Service without a tailnet target) have none.
	connector  *Connector
	proxyGroup *ProxyGroup
	egress     *EgressService
	proxyClass *ProxyClass
	dnsConfig  *DNSConfig
	ingress    *Ingress
	// finalizer is set once a running operator has put its finalizer
	// on the object (finalizers.go).
	finalizer bool
}

// sortedKeysLocked returns the keys of the objects, of one cluster when
// cluster is not empty, in a stable order.
func (e *Engine) sortedKeysLocked(cluster string) []objectKey {
	keys := make([]objectKey, 0, len(e.objects))
	for k := range e.objects {
		if cluster == "" || k.cluster == cluster {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		for _, p := range [][2]string{{a.cluster, b.cluster}, {a.group, b.group}, {a.kind, b.kind}, {a.namespace, b.namespace}} {
			if p[0] != p[1] {
				return p[0] < p[1]
			}
		}
		return a.name < b.name
	})
	return keys
}

func (e *Engine) proxyGroupLocked(cluster, name string) *ProxyGroup {
	if o := e.objects[objectKey{cluster: cluster, group: tailscaleGroup, kind: kindProxyGroup, name: name}]; o != nil {
		return o.proxyGroup
	}
	return nil
}

func (e *Engine) ownsObjectsLocked(helmID string) bool {
	for _, o := range e.objects {
		if o.helmID == helmID {
			return true
		}
	}
	return false
}

// manifest is one entry of the manifests list, as the API server receives
// it.
type manifest struct {
	index         int
	apiVersion    string
	group         string
	version       string
	kind          string
	name          string
	rawNamespace  string // metadata.namespace as written
	annotations   map[string]string
	labels        map[string]string
	obj           map[string]any
	clusterScoped bool
	key           objectKey
}

// qualifiedKind is the kind as the API server names it in errors:
// "Connector.tailscale.com", "Service".
func (m *manifest) qualifiedKind() string {
	if m.group == "" {
		return m.kind
	}
	return m.kind + "." + m.group
}

// resource is the plural resource name as the API server names it in
// "already exists" errors: "connectors.tailscale.com", "services".
func (m *manifest) resource() string {
	p := strings.ToLower(m.kind)
	switch {
	case strings.HasSuffix(p, "s"):
		p += "es"
	case strings.HasSuffix(p, "y"):
		p = strings.TrimSuffix(p, "y") + "ies"
	default:
		p += "s"
	}
	if m.group != "" {
		p += "." + m.group
	}
	return p
}

// deployManifests installs or upgrades the objects a Helm service renders
// from its manifests values. A Helm service without such values that owns
// no object is left alone; one that owned objects loses them, as Helm
// deletes what a release no longer renders.
func (e *Engine) deployManifests(svc qoveryapi.ServiceSnapshot) error {
	list, present, err := manifestsValues(svc.ValuesFiles)
	if err != nil {
		return fmt.Errorf("%s%w", helmFailure, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !present && !e.ownsObjectsLocked(svc.ID) {
		return nil
	}
	chart := svc.ChartName
	if chart == "" {
		chart = defaultManifestsChart
	}
	objs, err := parseManifests(list, chart, svc)
	if err != nil {
		return fmt.Errorf("%s%w", helmFailure, err)
	}
	if err := checkClusterWide(svc, chart, objs); err != nil {
		return err
	}
	if err := e.checkMappingsLocked(svc.ClusterID, objs); err != nil {
		return fmt.Errorf("%s%w", helmFailure, err)
	}
	for _, m := range objs {
		if _, ok := e.terminating[m.key]; ok {
			return fmt.Errorf("%sfailed to create resource: object is being deleted: %s %q already exists (it waits for the finalizer %s, "+
				"which no operator runs to remove)", helmFailure, m.resource(), m.name, Finalizer)
		}
	}
	installing := !e.ownsObjectsLocked(svc.ID)
	objs, err = e.checkOwnershipLocked(svc, objs, installing)
	if err != nil {
		return fmt.Errorf("%s%w", helmFailure, err)
	}
	wanted, err := e.validateLocked(svc, objs)
	if err != nil {
		return fmt.Errorf("%s%w", helmFailure, err)
	}
	e.commitLocked(svc, objs, wanted)
	return nil
}

// releaseName is the Helm release name of a Helm service.
func releaseName(svc qoveryapi.ServiceSnapshot) string {
	if svc.KubernetesName != "" {
		return svc.KubernetesName
	}
	return svc.Name
}

// manifestsValues merges the manifests key of the values files as Helm
// merges values: a later file's value replaces an earlier one (lists are
// not merged) and null removes it. present is false when no file sets it.
func manifestsValues(files []qoveryapi.ValuesFile) (list any, present bool, err error) {
	for _, f := range files {
		var doc any
		if err := yaml.Unmarshal([]byte(f.Content), &doc); err != nil {
			return nil, false, fmt.Errorf("failed to parse %s: error converting YAML to JSON: %v", f.Name, err)
		}
		switch m := normalizeYAML(doc).(type) {
		case nil:
		case map[string]any:
			if v, ok := m[ManifestsKey]; ok {
				list, present = v, v != nil
			}
		default:
			return nil, false, fmt.Errorf("failed to parse %s: error unmarshaling JSON: json: cannot unmarshal %s into Go value of type map[string]interface {}", f.Name, goJSONKind(m))
		}
	}
	return list, present, nil
}

// normalizeYAML turns decoded YAML into what Helm hands to templates after
// its YAML to JSON conversion: maps with string keys, timestamps as text.
func normalizeYAML(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = normalizeYAML(x)
		}
		return t
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[fmt.Sprint(k)] = normalizeYAML(x)
		}
		return out
	case []any:
		for i, x := range t {
			t[i] = normalizeYAML(x)
		}
		return t
	case time.Time:
		return t.Format(time.RFC3339)
	}
	return v
}

// jsonType is the OpenAPI type name of a value, as the API server names it
// in type errors.
func jsonType(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return "integer"
	case float32:
		return jsonType(float64(t))
	case float64:
		if !math.IsInf(t, 0) && t == math.Trunc(t) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// goJSONKind is the JSON kind encoding/json names in unmarshal errors.
func goJSONKind(v any) string {
	switch t := jsonType(v); t {
	case "integer":
		return "number"
	case "boolean":
		return "bool"
	default:
		return t
	}
}

func asInt(v any) (int64, bool) {
	switch t := v.(type) {
	case int:
		return int64(t), true
	case int64:
		return t, true
	case uint64:
		return int64(t), true
	case float64:
		if jsonType(t) == "integer" {
			return int64(t), true
		}
	}
	return 0, false
}

// parseManifests renders the chart's single template (range over the list,
// one document per entry) and builds the objects as Helm does before it
// talks to the cluster.
func parseManifests(list any, chart string, svc qoveryapi.ServiceSnapshot) ([]*manifest, error) {
	var entries []any
	switch l := list.(type) {
	case nil:
	case []any:
		entries = l
	case map[string]any:
		// A template's range over a map visits its values in key order.
		keys := make([]string, 0, len(l))
		for k := range l {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			entries = append(entries, l[k])
		}
	default:
		tpl := chart + "/templates/manifests.yaml"
		return nil, fmt.Errorf("template: %s:1:11: executing %q at <.Values.%s>: range can't iterate over %v", tpl, tpl, ManifestsKey, l)
	}
	const build = "unable to build kubernetes objects from release manifest: "
	var out []*manifest
	for i, entry := range entries {
		if entry == nil {
			// toYaml renders null, an empty document Helm skips.
			continue
		}
		obj, ok := entry.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%serror unmarshaling JSON: while decoding JSON: json: cannot unmarshal %s into Go value of type map[string]interface {}", build, goJSONKind(entry))
		}
		m := &manifest{index: i, obj: obj}
		m.apiVersion, _ = obj["apiVersion"].(string)
		m.kind, _ = obj["kind"].(string)
		var missing []string
		if m.apiVersion == "" {
			missing = append(missing, "apiVersion not set")
		}
		if m.kind == "" {
			missing = append(missing, "kind not set")
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%serror validating \"\": error validating data: %s", build, aggregate(missing))
		}
		if g, v, ok := strings.Cut(m.apiVersion, "/"); ok {
			m.group, m.version = g, v
		} else {
			m.version = m.apiVersion
		}
		meta, _ := obj["metadata"].(map[string]any)
		m.name, _ = meta["name"].(string)
		m.rawNamespace, _ = meta["namespace"].(string)
		if raw, ok := meta["annotations"].(map[string]any); ok {
			m.annotations = map[string]string{}
			keys := make([]string, 0, len(raw))
			for k := range raw {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				s, ok := raw[k].(string)
				if !ok && raw[k] != nil {
					return nil, fmt.Errorf("%serror validating \"\": error validating data: ValidationError(%s.metadata.annotations.%s): invalid type for io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta.annotations: got %q, expected \"string\"",
						build, m.kind, k, jsonType(raw[k]))
				}
				m.annotations[k] = s
			}
		}
		if raw, ok := meta["labels"].(map[string]any); ok {
			m.labels = map[string]string{}
			for k, v := range raw {
				m.labels[k], _ = v.(string)
			}
		}
		_, tsKind := tailscaleKinds[m.kind]
		m.clusterScoped = clusterScopedKinds[m.group+"/"+m.kind] || m.group == tailscaleGroup && tsKind && !namespacedTailscaleKinds[m.kind]
		m.key = objectKey{cluster: svc.ClusterID, group: m.group, kind: m.kind, name: m.name}
		if !m.clusterScoped {
			m.key.namespace = m.rawNamespace
			if m.key.namespace == "" {
				m.key.namespace = svc.Namespace
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// aggregate formats errors as Kubernetes aggregates them: the error alone,
// or a bracketed list.
func aggregate(errs []string) string {
	if len(errs) == 1 {
		return errs[0]
	}
	return "[" + strings.Join(errs, ", ") + "]"
}

// checkClusterWide refuses cluster-scoped objects when the Helm service
// does not allow cluster-wide resources, as for the operator chart.
func checkClusterWide(svc qoveryapi.ServiceSnapshot, chart string, objs []*manifest) error {
	if svc.AllowClusterWideResources {
		return nil
	}
	var names []string
	for _, m := range objs {
		if m.clusterScoped {
			names = append(names, m.kind+" "+m.name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return fmt.Errorf("helm chart %s renders cluster-wide resources (%s) but allow_cluster_wide_resources is false", chart, strings.Join(names, ", "))
}

// checkMappingsLocked fails as Helm does when the cluster does not know a
// kind: the tailscale.com kinds exist only where the operator chart
// installed its CRDs, those of its release.
func (e *Engine) checkMappingsLocked(cluster string, objs []*manifest) error {
	op, crds := e.operators[cluster]
	for _, m := range objs {
		since, known := tailscaleKinds[m.kind]
		if m.group != tailscaleGroup || crds && m.version == tailscaleVersion && known && chartMinor(op.ChartVersion) >= since {
			continue
		}
		return fmt.Errorf("unable to build kubernetes objects from release manifest: resource mapping not found for name: %q namespace: %q from \"\": no matches for kind %q in version %q\nensure CRDs are installed first",
			m.name, m.rawNamespace, m.kind, m.apiVersion)
	}
	return nil
}

// checkOwnershipLocked refuses objects that another release owns, as
// Helm does, and resolves objects rendered twice: an install fails on the
// second create, an upgrade patches the object twice (the later entry
// wins). It returns the objects to apply.
func (e *Engine) checkOwnershipLocked(svc qoveryapi.ServiceSnapshot, objs []*manifest, installing bool) ([]*manifest, error) {
	release := releaseName(svc)
	verb := "update"
	if installing {
		verb = "install"
	}
	for _, m := range objs {
		cur, ok := e.objects[m.key]
		if !ok || cur.helmID == svc.ID {
			continue
		}
		key, want, have := "meta.helm.sh/release-name", release, cur.release
		if want == have {
			key, want, have = "meta.helm.sh/release-namespace", svc.Namespace, cur.releaseNS
		}
		return nil, fmt.Errorf("rendered manifests contain a resource that already exists. Unable to continue with %s: %s %q in namespace %q exists and cannot be imported into the current release: "+
			"invalid ownership metadata; annotation validation error: key %q must equal %q: current value is %q",
			verb, m.kind, m.name, m.key.namespace, key, want, have)
	}
	last := map[objectKey]int{}
	for i, m := range objs {
		if _, dup := last[m.key]; dup && installing && m.name != "" {
			return nil, fmt.Errorf("failed to create resource: %s %q already exists", m.resource(), m.name)
		}
		last[m.key] = i
	}
	out := make([]*manifest, 0, len(objs))
	for i, m := range objs {
		if last[m.key] == i {
			out = append(out, m)
		}
	}
	return out, nil
}

// fieldErrors collects API server validation errors in its wording.
type fieldErrors []string

func (f *fieldErrors) required(path string) {
	*f = append(*f, path+": Required value")
}

func (f *fieldErrors) wrongType(path string, v any, want string) {
	t := jsonType(v)
	*f = append(*f, fmt.Sprintf("%s: Invalid value: %q: %s in body must be of type %s: %q", path, t, path, want, t))
}

func (f *fieldErrors) pattern(path, v string, re *regexp.Regexp) {
	*f = append(*f, fmt.Sprintf("%s: Invalid value: %q: %s in body should match '%s'", path, v, path, re.String()))
}

func (f *fieldErrors) minimum(path string, v, bound int64) {
	*f = append(*f, fmt.Sprintf("%s: Invalid value: %d: %s in body should be greater than or equal to %d", path, v, path, bound))
}

func (f *fieldErrors) rule(path string, v any, message string) {
	*f = append(*f, fmt.Sprintf("%s: Invalid value: %q: %s", path, jsonType(v), message))
}

// str reads an optional string field.
func (f *fieldErrors) str(m map[string]any, key, path string) (string, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		f.wrongType(path, v, "string")
		return "", false
	}
	return s, true
}

// integer reads an optional integer field.
func (f *fieldErrors) integer(m map[string]any, key, path string) (int64, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false
	}
	n, ok := asInt(v)
	if !ok {
		f.wrongType(path, v, "integer")
		return 0, false
	}
	return n, true
}

// boolean reads an optional boolean field.
func (f *fieldErrors) boolean(m map[string]any, key, path string) (bool, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		f.wrongType(path, v, "boolean")
		return false, false
	}
	return b, true
}

// object reads an optional object field.
func (f *fieldErrors) object(m map[string]any, key, path string) (map[string]any, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, false
	}
	o, ok := v.(map[string]any)
	if !ok {
		f.wrongType(path, v, "object")
		return nil, false
	}
	return o, true
}

// stringList reads an optional array of strings, each checked by item.
func (f *fieldErrors) stringList(m map[string]any, key, path string, item func(path, s string)) ([]string, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, false
	}
	list, ok := v.([]any)
	if !ok {
		f.wrongType(path, v, "array")
		return nil, false
	}
	out := make([]string, 0, len(list))
	for i, x := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		s, ok := x.(string)
		if !ok {
			f.wrongType(p, x, "string")
			continue
		}
		if item != nil {
			item(p, s)
		}
		out = append(out, s)
	}
	return out, true
}

// Patterns of the CRDs and of Kubernetes names.
var (
	connectorHostnameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$`)
	hostnamePrefixRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,61}$`)
	tagRE               = regexp.MustCompile(`^tag:[a-zA-Z][a-zA-Z0-9-]*$`)
	dns1123SubdomainRE  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	dns1035LabelRE      = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	// magicDNSNameRE is the operator's test for a tailnet node's FQDN.
	magicDNSNameRE = regexp.MustCompile(`^[a-zA-Z0-9-]+\.[a-zA-Z0-9-]+\.ts\.net\.?$`)
)

// checkName validates metadata.name as the API server does: a DNS-1035
// label for a Service, a DNS-1123 subdomain otherwise.
func checkName(m *manifest, f *fieldErrors) {
	switch {
	case m.name == "":
		*f = append(*f, "metadata.name: Required value: name or generateName is required")
	case m.group == "" && m.kind == kindService:
		if len(m.name) > 63 {
			*f = append(*f, fmt.Sprintf("metadata.name: Invalid value: %q: must be no more than 63 characters", m.name))
		}
		if !dns1035LabelRE.MatchString(m.name) {
			*f = append(*f, fmt.Sprintf("metadata.name: Invalid value: %q: a DNS-1035 label must consist of lower case alphanumeric characters or '-', "+
				"start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')", m.name))
		}
	default:
		if len(m.name) > 253 {
			*f = append(*f, fmt.Sprintf("metadata.name: Invalid value: %q: must be no more than 253 characters", m.name))
		}
		if !dns1123SubdomainRE.MatchString(m.name) {
			*f = append(*f, fmt.Sprintf("metadata.name: Invalid value: %q: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "+
				"and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')", m.name))
		}
	}
}

// wanted is what the API server stores for one object: the typed state of
// the kinds the simulation acts on.
type wanted struct {
	connector  *Connector
	proxyGroup *ProxyGroup
	egress     *EgressService
	proxyClass *ProxyClass
	dnsConfig  *DNSConfig
	ingress    *Ingress
}

// validateLocked validates every object as the API server would on create
// or patch, and returns their typed state. The first invalid object fails
// the release, in the wording Helm reports.
func (e *Engine) validateLocked(svc qoveryapi.ServiceSnapshot, objs []*manifest) ([]wanted, error) {
	out := make([]wanted, len(objs))
	for i, m := range objs {
		var errs fieldErrors
		checkName(m, &errs)
		var w wanted
		switch {
		case m.group == tailscaleGroup && m.kind == kindConnector:
			w.connector = validateConnector(m, &errs)
		case m.group == tailscaleGroup && m.kind == kindProxyGroup:
			var old *ProxyGroup
			if o := e.objects[m.key]; o != nil {
				old = o.proxyGroup
			}
			w.proxyGroup = validateProxyGroup(m, old, &errs)
		case m.group == tailscaleGroup && m.kind == kindProxyClass:
			w.proxyClass = validateProxyClass(m, &errs)
		case m.group == "" && m.kind == kindService:
			w.egress = readService(m)
		case m.group == tailscaleGroup && m.kind == kindDNSConfig:
			w.dnsConfig = validateDNSConfig(m, e.operatorChartLocked(svc.ClusterID), &errs)
		case m.group == networkingGroup && m.kind == kindIngress:
			w.ingress = readIngress(m, &errs)
		}
		if len(errs) > 0 {
			msg := fmt.Sprintf("%s %q is invalid: %s", m.qualifiedKind(), m.name, aggregate(errs))
			if _, exists := e.objects[m.key]; exists {
				return nil, fmt.Errorf("cannot patch %q with kind %s: %s", m.name, m.kind, msg)
			}
			return nil, fmt.Errorf("failed to create resource: %s", msg)
		}
		setOwner(&w, svc, m)
		out[i] = w
	}
	return out, nil
}

// setOwner records the Helm service and cluster on the typed object.
func setOwner(w *wanted, svc qoveryapi.ServiceSnapshot, m *manifest) {
	switch {
	case w.connector != nil:
		w.connector.HelmID, w.connector.ClusterID, w.connector.Name = svc.ID, svc.ClusterID, m.name
	case w.proxyGroup != nil:
		w.proxyGroup.HelmID, w.proxyGroup.ClusterID, w.proxyGroup.Name = svc.ID, svc.ClusterID, m.name
	case w.egress != nil:
		w.egress.HelmID, w.egress.ClusterID, w.egress.Name, w.egress.Namespace = svc.ID, svc.ClusterID, m.name, m.key.namespace
	case w.proxyClass != nil:
		w.proxyClass.HelmID, w.proxyClass.ClusterID, w.proxyClass.Name = svc.ID, svc.ClusterID, m.name
	case w.dnsConfig != nil:
		w.dnsConfig.HelmID, w.dnsConfig.ClusterID, w.dnsConfig.Name = svc.ID, svc.ClusterID, m.name
	case w.ingress != nil:
		w.ingress.HelmID, w.ingress.ClusterID, w.ingress.Name, w.ingress.Namespace = svc.ID, svc.ClusterID, m.name, m.key.namespace
	}
}

// specOf returns the object's spec, required by both CRDs.
func specOf(m *manifest, errs *fieldErrors) (map[string]any, bool) {
	v, ok := m.obj["spec"]
	if !ok || v == nil {
		errs.required("spec")
		return nil, false
	}
	spec, ok := v.(map[string]any)
	if !ok {
		errs.wrongType("spec", v, "object")
		return nil, false
	}
	return spec, true
}

func checkTag(errs *fieldErrors) func(path, s string) {
	return func(path, s string) {
		if !tagRE.MatchString(s) {
			errs.pattern(path, s, tagRE)
		}
	}
}

// validateConnector checks a Connector against the CRD's schema and CEL
// rules and returns its spec (tags and hostnames are settled when the
// operator reconciles it).
func validateConnector(m *manifest, errs *fieldErrors) *Connector {
	spec, ok := specOf(m, errs)
	if !ok {
		return nil
	}
	before := len(*errs)
	c := &Connector{Replicas: defaultConnectorReplicas}
	hostname, hasHostname := errs.str(spec, "hostname", "spec.hostname")
	if hasHostname && !connectorHostnameRE.MatchString(hostname) {
		errs.pattern("spec.hostname", hostname, connectorHostnameRE)
	}
	prefix, hasPrefix := errs.str(spec, "hostnamePrefix", "spec.hostnamePrefix")
	if hasPrefix && !hostnamePrefixRE.MatchString(prefix) {
		errs.pattern("spec.hostnamePrefix", prefix, hostnamePrefixRE)
	}
	replicas, hasReplicas := errs.integer(spec, "replicas", "spec.replicas")
	if hasReplicas {
		if replicas < 0 {
			errs.minimum("spec.replicas", replicas, 0)
		}
		c.Replicas = int(replicas)
	}
	c.Tags, _ = errs.stringList(spec, "tags", "spec.tags", checkTag(errs))
	c.ProxyClass, _ = errs.str(spec, "proxyClass", "spec.proxyClass")
	router, hasRouter := errs.object(spec, "subnetRouter", "spec.subnetRouter")
	if hasRouter {
		const path = "spec.subnetRouter.advertiseRoutes"
		routes, ok := errs.stringList(router, "advertiseRoutes", path, func(p, s string) {
			if _, _, err := net.ParseCIDR(s); err != nil {
				*errs = append(*errs, fmt.Sprintf("%s: Invalid value: %q: %s in body must be of type cidr: %q", p, s, p, s))
			}
		})
		switch {
		case !ok && router["advertiseRoutes"] == nil:
			errs.required(path)
		case ok && len(routes) == 0:
			*errs = append(*errs, fmt.Sprintf("%s: Invalid value: 0: %s in body should have at least 1 items", path, path))
		}
		c.SubnetRoutes = routes
	}
	exitNode, _ := errs.boolean(spec, "exitNode", "spec.exitNode")
	_, hasAppConnector := errs.object(spec, "appConnector", "spec.appConnector")
	if len(*errs) == before {
		// CEL rules of the CRD, checked once the schema holds.
		if !hasRouter && !exitNode && !hasAppConnector {
			errs.rule("spec", spec, "A Connector needs to have at least one of exit node, subnet router or app connector configured.")
		}
		if (hasRouter || exitNode) && hasAppConnector {
			errs.rule("spec", spec, "The appConnector field is mutually exclusive with exitNode and subnetRouter fields.")
		}
		if hasHostname && hasReplicas && replicas > 1 {
			errs.rule("spec", spec, "The hostname field cannot be specified when replicas is greater than 1.")
		}
		if hasHostname && hasPrefix {
			errs.rule("spec", spec, "The hostname and hostnamePrefix fields are mutually exclusive.")
		}
	}
	c.Hostname, c.HostnamePrefix, c.ExitNode = hostname, prefix, exitNode
	return c
}

// validateProxyGroup checks a ProxyGroup against the CRD's schema and its
// transition rule (the type of an existing ProxyGroup, old, is
// immutable).
func validateProxyGroup(m *manifest, old *ProxyGroup, errs *fieldErrors) *ProxyGroup {
	spec, ok := specOf(m, errs)
	if !ok {
		return nil
	}
	g := &ProxyGroup{Replicas: defaultProxyGroupReplicas}
	typ, hasType := errs.str(spec, "type", "spec.type")
	switch {
	case !hasType && spec["type"] == nil:
		errs.required("spec.type")
	case hasType && typ != ProxyGroupTypeEgress && typ != ProxyGroupTypeIngress && typ != ProxyGroupTypeKubeAPIServer:
		*errs = append(*errs, fmt.Sprintf("spec.type: Unsupported value: %q: supported values: %q, %q, %q", typ, ProxyGroupTypeEgress, ProxyGroupTypeIngress, ProxyGroupTypeKubeAPIServer))
	case hasType && old != nil && old.Type != typ:
		errs.rule("spec.type", typ, "ProxyGroup type is immutable")
	}
	g.Type = typ
	if n, ok := errs.integer(spec, "replicas", "spec.replicas"); ok {
		if n < 0 {
			errs.minimum("spec.replicas", n, 0)
		}
		g.Replicas = int(n)
	}
	if p, ok := errs.str(spec, "hostnamePrefix", "spec.hostnamePrefix"); ok {
		if !hostnamePrefixRE.MatchString(p) {
			errs.pattern("spec.hostnamePrefix", p, hostnamePrefixRE)
		}
		g.HostnamePrefix = p
	}
	g.Tags, _ = errs.stringList(spec, "tags", "spec.tags", checkTag(errs))
	g.ProxyClass, _ = errs.str(spec, "proxyClass", "spec.proxyClass")
	g.KubeAPIServer = validateKubeAPIServer(spec, typ, errs)
	return g
}

// readService reads a Service. The API server's own checks of a Service
// are not simulated beyond its name; the operator validates egress
// Services. It returns nil for a Service without a tailnet target, which
// the operator ignores.
func readService(m *manifest) *EgressService {
	fqdn := m.annotations[AnnotationTailnetFQDN]
	ip := m.annotations[AnnotationTailnetIP]
	if ip == "" {
		ip = m.annotations[AnnotationLegacyTailnetIP]
	}
	if fqdn == "" && ip == "" {
		return nil
	}
	s := &EgressService{TailnetFQDN: fqdn, TailnetIP: ip, ProxyGroup: m.annotations[AnnotationProxyGroup], Type: "ClusterIP",
		hostname: m.annotations[AnnotationHostname]}
	if v, ok := m.annotations[AnnotationProxyGroup]; ok && v == "" {
		s.emptyProxyGroup = true
	}
	if v, ok := m.annotations[AnnotationTags]; ok {
		s.tags, s.hasTags = strings.Split(v, ","), true
	}
	if v, ok := m.labels[AnnotationProxyClass]; ok {
		s.proxyClass, s.hasClass = v, true
	} else if v, ok := m.annotations[AnnotationProxyClass]; ok {
		s.proxyClass, s.hasClass = v, true
	}
	spec, _ := m.obj["spec"].(map[string]any)
	if t, ok := spec["type"].(string); ok && t != "" {
		s.Type = t
	}
	s.ExternalName, _ = spec["externalName"].(string)
	ports, _ := spec["ports"].([]any)
	for _, p := range ports {
		pm, ok := p.(map[string]any)
		if !ok {
			continue
		}
		sp := ServicePort{Protocol: "TCP"}
		sp.Name, _ = pm["name"].(string)
		if n, ok := asInt(pm["port"]); ok {
			sp.Port = int(n)
		}
		if proto, ok := pm["protocol"].(string); ok && proto != "" {
			sp.Protocol = proto
		}
		s.Ports = append(s.Ports, sp)
	}
	return s
}

// commitLocked stores the release's objects, deletes the ones it no
// longer renders, and lets the operator reconcile.
func (e *Engine) commitLocked(svc qoveryapi.ServiceSnapshot, objs []*manifest, typed []wanted) {
	keep := map[objectKey]bool{}
	for _, m := range objs {
		keep[m.key] = true
	}
	for k, o := range e.objects {
		if o.helmID == svc.ID && !keep[k] {
			e.deleteObjectLocked(k)
		}
	}
	for i, m := range objs {
		w := typed[i]
		if prev := e.objects[m.key]; prev != nil {
			// The operator's devices and status belong to the object,
			// not to one version of its spec.
			if w.connector != nil && prev.connector != nil {
				w.connector.Devices = prev.connector.Devices
			}
			if w.proxyGroup != nil && prev.proxyGroup != nil {
				w.proxyGroup.Devices = prev.proxyGroup.Devices
			}
			if w.egress != nil && prev.egress != nil {
				w.egress.keepStatus(prev.egress)
			}
			if prev.egress != nil && w.egress == nil && prev.egress.DeviceID != "" {
				e.tailnet.RemoveDevice(prev.egress.DeviceID)
			}
			if w.ingress != nil && prev.ingress != nil {
				w.ingress.keepStatus(prev.ingress)
			}
		}
		obj := &ownedObject{
			helmID: svc.ID, release: releaseName(svc), releaseNS: svc.Namespace,
			connector: w.connector, proxyGroup: w.proxyGroup, egress: w.egress, proxyClass: w.proxyClass, ingress: w.ingress,
		}
		if prev := e.objects[m.key]; prev != nil {
			obj.finalizer = prev.finalizer
		}
		keepDNSConfigStatus(obj, w.dnsConfig, e.objects[m.key])
		e.objects[m.key] = obj
	}
	e.reconcileDNSConfigsLocked(svc.ClusterID, svc.ID)
	if !e.compat.ReconcileOnAppDeploy {
		e.reconcileClusterLocked(svc.ClusterID, svc.ID)
		return
	}
	op := e.operators[svc.ClusterID]
	for _, w := range typed {
		if w.proxyClass != nil {
			e.reconcileProxyClassLocked(op, w.proxyClass)
		}
	}
	for _, w := range typed {
		switch {
		case w.connector != nil:
			e.reconcileConnectorLocked(op, w.connector)
		case w.proxyGroup != nil:
			e.reconcileProxyGroupLocked(op, w.proxyGroup)
		}
	}
	e.reconcileEgressLocked(svc.ClusterID, svc.ID)
	e.reconcileIngressesLocked(svc.ClusterID)
	e.markFinalizersLocked(svc.ClusterID)
}

// reconcileClusterLocked is the operator reconciling every object it
// watches on a cluster, after it starts or after a change on the cluster:
// ProxyClasses first, then Connectors and ProxyGroups, egress Services,
// and the applications' annotated Services. Problems of the objects helmID
// renders are logged again; those of others when they change.
func (e *Engine) reconcileClusterLocked(cluster, helmID string) {
	op := e.operators[cluster]
	keys := e.sortedKeysLocked(cluster)
	for _, k := range keys {
		if pc := e.objects[k].proxyClass; pc != nil {
			e.reconcileProxyClassLocked(op, pc)
		}
	}
	for _, k := range keys {
		switch o := e.objects[k]; {
		case o.connector != nil:
			e.reconcileConnectorLocked(op, o.connector)
		case o.proxyGroup != nil:
			e.reconcileProxyGroupLocked(op, o.proxyGroup)
		}
	}
	e.reconcileEgressLocked(cluster, helmID)
	e.markFinalizersLocked(cluster)
	for _, a := range e.appsOnClusterLocked(cluster) {
		e.reconcileAppLocked(a)
	}
	e.reconcileIngressesLocked(cluster)
}

// deleteManifestsLocked uninstalls a Helm service's release: its objects
// go, and the operator removes their devices.
func (e *Engine) deleteManifestsLocked(svc qoveryapi.ServiceSnapshot) {
	removed := false
	for k, o := range e.objects {
		if o.helmID == svc.ID {
			e.deleteObjectLocked(k)
			removed = true
		}
	}
	switch {
	case !removed:
	case e.compat.ReconcileOnAppDeploy:
		e.reconcileEgressLocked(svc.ClusterID, "")
	default:
		e.reconcileClusterLocked(svc.ClusterID, "")
	}
}

func (e *Engine) removeObjectLocked(k objectKey) {
	o := e.objects[k]
	var devs []ReplicaDevice
	switch {
	case o.connector != nil:
		devs = o.connector.Devices
	case o.proxyGroup != nil:
		devs = o.proxyGroup.Devices
		e.dropKubeAPIServerServiceLocked(o.proxyGroup)
	case o.egress != nil && o.egress.DeviceID != "":
		devs = []ReplicaDevice{{DeviceID: o.egress.DeviceID}}
	case o.ingress != nil && o.ingress.DeviceID != "":
		devs = []ReplicaDevice{{DeviceID: o.ingress.DeviceID}}
	}
	if o.ingress != nil {
		if op := e.operators[k.cluster]; op != nil {
			e.dropAppServiceLocked(op, o.ingress.serviceKey())
		}
	}
	for _, d := range devs {
		e.tailnet.RemoveDevice(d.DeviceID)
	}
	if o.dnsConfig != nil {
		e.dnsConfigGoneLocked(k)
	}
	delete(e.objects, k)
}

// proxyTags are the tags of an object's devices: its own, or the
// operator's proxy tags.
func proxyTags(op *Operator, tags []string) []string {
	if len(tags) > 0 {
		return slices.Clone(tags)
	}
	if op != nil && len(op.ProxyTags) > 0 {
		return slices.Clone(op.ProxyTags)
	}
	return []string{defaultProxyTag}
}

// reconcileConnectorLocked is the operator's Connector reconciler: one
// device per replica, each advertising the subnet routes and, for an exit
// node, 0.0.0.0/0 and ::/0. With a hostnamePrefix the replicas are
// PREFIX-0 ... PREFIX-(N-1); otherwise each takes the hostname (default
// NAME-connector), and Tailscale suffixes the MagicDNS names of all but
// the first. A route with host bits set makes the operator refuse the
// Connector (an event), and a ProxyClass that is missing or not Ready
// makes it wait; either way its devices stay as they are.
func (e *Engine) reconcileConnectorLocked(op *Operator, c *Connector) {
	c.Tags = proxyTags(op, c.Tags)
	base := c.Hostname
	if base == "" {
		base = c.Name + "-connector"
	}
	what := "Connector " + c.Name
	switch {
	case c.HostnamePrefix != "":
		c.Hostnames = e.replicaHostnames(what, c.Replicas, func(i int) string { return fmt.Sprintf("%s-%d", c.HostnamePrefix, i) })
	case e.compat.IndexedConnectorHostnames && c.Replicas != 1:
		c.Hostnames = e.replicaHostnames(what, c.Replicas, func(i int) string { return fmt.Sprintf("%s-%d", base, i) })
	default:
		c.Hostnames = e.replicaHostnames(what, c.Replicas, func(int) string { return base })
	}
	c.AdvertisedRoutes = slices.Clone(c.SubnetRoutes)
	if c.ExitNode {
		c.AdvertisedRoutes = append(c.AdvertisedRoutes, "0.0.0.0/0", "::/0")
	}
	if op == nil {
		e.logf("%s: no Tailscale operator runs on cluster %s, nothing reconciles it", what, c.ClusterID)
		return
	}
	for _, r := range c.SubnetRoutes {
		p, err := netip.ParsePrefix(r)
		switch {
		case err != nil:
			e.logf("%s: ConnectorInvalid: Connector is invalid: route %s is invalid: %v", what, r, err)
			return
		case p.Masked() != p:
			e.logf("%s: ConnectorInvalid: Connector is invalid: route %s has non-address bits set; expected %s", what, r, p.Masked())
			return
		}
	}
	// The Connector has no default ProxyClass.
	if !e.proxyClassAllowsLocked(what, kindConnector, op, c.ProxyClass) {
		return
	}
	c.Devices = e.reconcileReplicasLocked(what, op, c.Hostnames, c.Tags, c.AdvertisedRoutes, c.Devices)
}

// reconcileProxyGroupLocked is the operator's ProxyGroup reconciler: one
// device per replica, PREFIX-0 ... PREFIX-(N-1), the prefix defaulting to
// the name, once its ProxyClass (its own, else the operator's default) is
// Ready. The devices advertise no routes.
func (e *Engine) reconcileProxyGroupLocked(op *Operator, g *ProxyGroup) {
	g.Tags = proxyTags(op, g.Tags)
	prefix := g.HostnamePrefix
	if prefix == "" {
		prefix = g.Name
	}
	what := "ProxyGroup " + g.Name
	g.Hostnames = e.replicaHostnames(what, g.Replicas, func(i int) string { return fmt.Sprintf("%s-%d", prefix, i) })
	if op == nil {
		e.logf("%s: no Tailscale operator runs on cluster %s, nothing reconciles it", what, g.ClusterID)
		return
	}
	class := g.ProxyClass
	if class == "" {
		class = op.DefaultProxyClass
	}
	if !e.proxyClassAllowsLocked(what, kindProxyGroup, op, class) {
		return
	}
	g.Devices = e.reconcileReplicasLocked(what, op, g.Hostnames, g.Tags, nil, g.Devices)
	if g.KubeAPIServer != nil {
		e.reconcileKubeAPIServerLocked(op, g)
	}
}

// maxSimulatedReplicas bounds the devices the simulation makes for one
// object.
const maxSimulatedReplicas = 100

// replicaHostnames returns the hostnames of n replicas, at most
// maxSimulatedReplicas of them.
func (e *Engine) replicaHostnames(what string, n int, name func(i int) string) []string {
	if n > maxSimulatedReplicas {
		e.logf("%s: %d replicas requested; the simulation runs the first %d", what, n, maxSimulatedReplicas)
		n = maxSimulatedReplicas
	}
	out := make([]string, 0, max(n, 0))
	for i := range n {
		out = append(out, name(i))
	}
	return out
}

// reconcileReplicasLocked brings the devices of an object's replicas in
// line with what it wants and returns them, replica by replica (each
// replica has its state Secret):
//
//   - the device of a replica still on the tailnet is kept: renamed when
//     its hostname changed, its tags as they were (they are fixed when its
//     auth key is made), its advertised routes updated (the tailnet
//     approves new ones when autoApprovers allow them);
//   - a missing device (never made, or removed from the tailnet by hand)
//     is made, provided the operator's OAuth client may mint auth keys
//     with the tags;
//   - the devices of replicas beyond the count are removed.
//
// A replica whose auth key cannot be minted has no device, and the others
// keep their replica index.
//
// With Compat.ProxyNewDevice a replica whose hostname or tags changed gets
// a new device instead.
func (e *Engine) reconcileReplicasLocked(what string, op *Operator, hostnames, tags, routes []string, current []ReplicaDevice) []ReplicaDevice {
	checked, allowed := false, false
	var refused []string
	mayMint := func() bool {
		if !checked {
			checked = true
			if err := e.mintLocked(op, tags, false); err != nil {
				e.logf("%s: failed to create auth key: %v", what, err)
			} else {
				allowed = true
			}
		}
		return allowed
	}
	advertise := func(id, h string) {
		if _, err := e.tailnet.SetAdvertisedRoutes(id, routes); err != nil {
			e.logf("%s: device %s cannot advertise its routes: %v", what, h, err)
		}
	}
	have := map[int]ReplicaDevice{}
	for _, d := range current {
		have[d.Index] = d
	}
	out := make([]ReplicaDevice, 0, len(hostnames))
	for i, h := range hostnames {
		if d, ok := have[i]; ok {
			delete(have, i)
			if dev, found := e.tailnet.Device(d.DeviceID); found {
				switch {
				case !e.compat.ProxyNewDevice:
					if dev.Hostname != h {
						e.tailnet.RenameDevice(d.DeviceID, h)
					}
					advertise(d.DeviceID, h)
					out = append(out, ReplicaDevice{Index: i, Hostname: h, DeviceID: d.DeviceID})
					continue
				case dev.Hostname == h && sameSet(dev.Tags, tags):
					advertise(d.DeviceID, h)
					out = append(out, d)
					continue
				}
				e.logf("%s: replica %d changed from %s [%s] to %s [%s]: device %s is replaced", what, i, dev.Hostname, strings.Join(dev.Tags, ","), h, strings.Join(tags, ","), d.DeviceID)
				e.tailnet.RemoveDevice(d.DeviceID)
			}
		}
		if !mayMint() {
			refused = append(refused, h)
			continue
		}
		dev := e.tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: h, Tags: tags, OS: "linux"})
		if len(routes) > 0 {
			advertise(dev.ID, h)
		}
		out = append(out, ReplicaDevice{Index: i, Hostname: h, DeviceID: dev.ID})
	}
	if len(refused) > 0 {
		e.logf("%s: no device for %s", what, strings.Join(refused, ", "))
	}
	for _, d := range have {
		e.tailnet.RemoveDevice(d.DeviceID)
	}
	return out
}
