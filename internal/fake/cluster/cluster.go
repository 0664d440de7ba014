// Package cluster simulates what the Tailscale Kubernetes operator does in
// the clusters that Qovery deploys to, so that the fakes show the results
// qtail promises: the operator device after a valid operator deployment, a
// proxy device for each exposed Service, the devices and routes of the
// Connectors and ProxyGroups a Helm service renders, the checks of egress
// Services, and the reasons a real operator pod, Helm or the Kubernetes API
// server would fail.
//
// An Engine is the Deployer of the fake Qovery API: the fake calls it at the
// end of every deployment and deletion, with the service as the deployment
// engine renders it (variables resolved).
package cluster

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

// The operator chart and the annotations it reads on Services.
const (
	OperatorChart = "tailscale-operator"

	AnnotationExpose     = "tailscale.com/expose"
	AnnotationHostname   = "tailscale.com/hostname"
	AnnotationTags       = "tailscale.com/tags"
	AnnotationProxyGroup = "tailscale.com/proxy-group"
	AnnotationProxyClass = "tailscale.com/proxy-class"

	defaultOperatorTag = "tag:k8s-operator"
	defaultProxyTag    = "tag:k8s"
	defaultHostname    = "tailscale-operator"
)

// Operator is an operator the simulation runs on a cluster.
type Operator struct {
	HelmID      string
	ClusterID   string
	Namespace   string
	Hostname    string
	Tags        []string
	ProxyTags   []string
	OAuthClient string
	// ClientTags are the tags of the OAuth client: the operator mints the
	// auth keys of its proxies, connectors and ProxyGroup replicas with
	// it, so they must own the tags those devices ask for.
	ClientTags []string
	DeviceID   string
}

// Proxy is an exposed Service's proxy.
type Proxy struct {
	ApplicationID string
	ClusterID     string
	Hostname      string
	Tags          []string
	DeviceID      string
}

// Engine is the simulated cluster side.
type Engine struct {
	tailnet *tailnetapi.Server

	mu        sync.Mutex
	operators map[string]*Operator // by cluster ID
	proxies   map[string]*Proxy    // by application ID
	// objects are the Kubernetes objects that Helm services rendered
	// from their manifests values (see manifests.go).
	objects map[objectKey]*ownedObject
	events  []string
}

// New returns an engine that adds and removes devices on tailnet.
func New(tailnet *tailnetapi.Server) *Engine {
	return &Engine{tailnet: tailnet, operators: map[string]*Operator{}, proxies: map[string]*Proxy{}, objects: map[objectKey]*ownedObject{}}
}

var _ qoveryapi.Deployer = (*Engine)(nil)

// Reset forgets every operator, proxy and rendered object (the devices
// are the tailnet's).
func (e *Engine) Reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.operators = map[string]*Operator{}
	e.proxies = map[string]*Proxy{}
	e.objects = map[objectKey]*ownedObject{}
	e.events = nil
}

// Operators lists the running operators.
func (e *Engine) Operators() []Operator {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Operator, 0, len(e.operators))
	for _, o := range e.operators {
		c := *o
		c.Tags, c.ProxyTags, c.ClientTags = slices.Clone(o.Tags), slices.Clone(o.ProxyTags), slices.Clone(o.ClientTags)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ClusterID < out[j].ClusterID })
	return out
}

// Proxies lists the running proxies.
func (e *Engine) Proxies() []Proxy {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Proxy, 0, len(e.proxies))
	for _, p := range e.proxies {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Hostname < out[j].Hostname })
	return out
}

// Events returns what the simulated operators logged: why a proxy was not
// created, for example.
func (e *Engine) Events() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.events...)
}

func (e *Engine) logf(format string, args ...any) {
	e.events = append(e.events, fmt.Sprintf(format, args...))
}

// Deploy is called by the fake Qovery API at the end of a deployment.
func (e *Engine) Deploy(_ context.Context, svc qoveryapi.ServiceSnapshot) error {
	switch svc.Kind {
	case "HELM":
		if svc.ChartName == OperatorChart {
			return e.deployOperator(svc)
		}
		return e.deployManifests(svc)
	case "APPLICATION", "CONTAINER":
		e.deployApplication(svc)
		return nil
	}
	return nil
}

// Delete is called by the fake Qovery API when a service is deleted.
func (e *Engine) Delete(_ context.Context, svc qoveryapi.ServiceSnapshot) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch svc.Kind {
	case "HELM":
		if op, ok := e.operators[svc.ClusterID]; ok && op.HelmID == svc.ID {
			e.tailnet.RemoveDevice(op.DeviceID)
			delete(e.operators, svc.ClusterID)
		}
		e.deleteManifestsLocked(svc)
	case "APPLICATION", "CONTAINER":
		e.removeProxy(svc.ID)
	}
	return nil
}

// operatorValues is the part of the chart's values the simulation reads.
type operatorValues struct {
	OAuth struct {
		ClientID     string `yaml:"clientId"`
		ClientSecret string `yaml:"clientSecret"`
	} `yaml:"oauth"`
	OperatorConfig struct {
		Hostname    string `yaml:"hostname"`
		DefaultTags any    `yaml:"defaultTags"`
	} `yaml:"operatorConfig"`
	ProxyConfig struct {
		DefaultTags any `yaml:"defaultTags"`
	} `yaml:"proxyConfig"`
	APIServerProxyConfig struct {
		Mode any `yaml:"mode"`
	} `yaml:"apiServerProxyConfig"`
}

func tagList(v any, def string) []string {
	var out []string
	switch t := v.(type) {
	case nil:
	case string:
		for _, s := range strings.Split(t, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	case []any:
		for _, s := range t {
			out = append(out, fmt.Sprint(s))
		}
	}
	if len(out) == 0 {
		out = []string{def}
	}
	return out
}

// deployOperator brings up the operator device, or fails as Helm or the
// operator pod would. In order:
//
//   - the chart renders CRDs and ClusterRoles: without
//     allow_cluster_wide_resources the deployment is refused;
//   - a cluster runs one operator: the CRDs of another release on the same
//     cluster make Helm refuse the install;
//   - the pod reads its OAuth client from the chart values (or a precreated
//     Secret, which Qovery does not make): without them it cannot start;
//   - it exchanges them for an access token: an unknown or revoked client,
//     or a wrong secret, is refused;
//   - it mints an auth key for its own device, which needs the devices:core
//     and auth_keys scopes and tags declared in tagOwners and owned by the
//     client's tags; its proxy tags must be owned by its own tags;
//   - it parses APISERVER_PROXY.
//
// A failed deployment leaves a running operator as it was (Helm's --atomic
// rolls the release back). A successful one adds the operator device, or
// keeps it when the hostname and tags are unchanged and the device is still
// on the tailnet; otherwise the old device is replaced.
func (e *Engine) deployOperator(svc qoveryapi.ServiceSnapshot) error {
	if !svc.AllowClusterWideResources {
		return fmt.Errorf("helm chart %s renders cluster-wide resources (CustomResourceDefinition connectors.tailscale.com, ClusterRole tailscale-operator) "+
			"but allow_cluster_wide_resources is false", svc.ChartName)
	}
	e.mu.Lock()
	other, taken := e.operators[svc.ClusterID]
	e.mu.Unlock()
	if taken && other.HelmID != svc.ID {
		return fmt.Errorf("helm upgrade --install failed: rendered manifests contain a resource that already exists. Unable to continue with install: "+
			"CustomResourceDefinition \"connectors.tailscale.com\" in namespace \"\" exists and cannot be imported into the current release: "+
			"invalid ownership metadata; annotation validation error: key \"meta.helm.sh/release-name\" must equal %q: current value is %q "+
			"(the operator of Helm service %s already runs on this cluster)", svc.Name, other.Hostname, other.HelmID)
	}
	var vals operatorValues
	for _, f := range svc.ValuesFiles {
		var layer operatorValues
		if err := yaml.Unmarshal([]byte(f.Content), &layer); err != nil {
			return fmt.Errorf("values file %s: %v", f.Name, err)
		}
		mergeValues(&vals, layer)
	}
	for _, kv := range append(append([][2]string{}, svc.Set...), svc.SetString...) {
		switch kv[0] {
		case "oauth.clientId":
			vals.OAuth.ClientID = kv[1]
		case "oauth.clientSecret":
			vals.OAuth.ClientSecret = kv[1]
		case "operatorConfig.hostname":
			vals.OperatorConfig.Hostname = kv[1]
		}
	}
	if vals.OAuth.ClientID == "" || vals.OAuth.ClientSecret == "" {
		return fmt.Errorf("operator pod failed: reading client ID \"/oauth/client_id\": open /oauth/client_id: no such file or directory " +
			"(no oauth.clientId and oauth.clientSecret in the chart values, and no precreated operator-oauth Secret)")
	}
	clientTags, scopes, ok := e.tailnet.CheckOAuthClient(vals.OAuth.ClientID, vals.OAuth.ClientSecret)
	if !ok {
		return fmt.Errorf("operator pod failed: getting OAuth token: oauth2: \"invalid_client\" \"invalid client credentials\" (client %s)", vals.OAuth.ClientID)
	}
	if !hasScope(scopes, "devices:core") || !hasScope(scopes, "auth_keys") {
		return fmt.Errorf("operator pod failed: creating operator authkey: calling actor does not have enough permissions to perform this function (OAuth client %s has scopes %v; it needs devices:core and auth_keys)",
			vals.OAuth.ClientID, scopes)
	}
	hostname := vals.OperatorConfig.Hostname
	if hostname == "" {
		hostname = defaultHostname
	}
	tags := tagList(vals.OperatorConfig.DefaultTags, defaultOperatorTag)
	proxyTags := tagList(vals.ProxyConfig.DefaultTags, defaultProxyTag)

	body, _ := e.tailnet.Policy()
	pol, perr := aclcheck.Parse(body)
	if perr != nil {
		return fmt.Errorf("operator pod failed: the tailnet policy is invalid: %s", perr.Message)
	}
	owners := pol.TagOwners()
	for _, t := range tags {
		if _, declared := lookupTag(owners, t); !declared {
			return fmt.Errorf("operator pod failed: creating operator authkey: requested tags [%s] are invalid or not permitted (400): %s is not declared in tagOwners", strings.Join(tags, ","), t)
		}
		if !ownsOrEqual(clientTags, t, pol) {
			return fmt.Errorf("operator pod failed: creating operator authkey: requested tags [%s] are invalid or not permitted (400): the OAuth client's tags %v do not own %s", strings.Join(tags, ","), clientTags, t)
		}
	}
	for _, pt := range proxyTags {
		if !anyOwns(pol, tags, pt) {
			return fmt.Errorf("operator pod failed: proxy tags [%s] are not owned by the operator's tags %v in tagOwners: the operator could not create auth keys for its proxies", pt, tags)
		}
	}

	switch mode := fmt.Sprint(vals.APIServerProxyConfig.Mode); {
	case vals.APIServerProxyConfig.Mode == nil, mode == "false", mode == "true", mode == "noauth":
	default:
		return fmt.Errorf("operator pod failed: unknown APISERVER_PROXY value %q", mode)
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if old, ok := e.operators[svc.ClusterID]; ok {
		if old.Hostname == hostname && sameSet(old.Tags, tags) && deviceExists(e.tailnet, old.DeviceID) {
			old.ProxyTags = proxyTags
			old.OAuthClient = vals.OAuth.ClientID
			old.ClientTags = slices.Clone(clientTags)
			old.HelmID = svc.ID
			return nil
		}
		e.tailnet.RemoveDevice(old.DeviceID)
	}
	dev := e.tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: hostname, Tags: tags, OS: "linux"})
	e.operators[svc.ClusterID] = &Operator{
		HelmID: svc.ID, ClusterID: svc.ClusterID, Namespace: svc.Namespace, Hostname: hostname,
		Tags: tags, ProxyTags: proxyTags, OAuthClient: vals.OAuth.ClientID, ClientTags: slices.Clone(clientTags), DeviceID: dev.ID,
	}
	// A running operator reconciles the Services it already knows.
	return nil
}

func mergeValues(dst *operatorValues, src operatorValues) {
	if src.OAuth.ClientID != "" {
		dst.OAuth.ClientID = src.OAuth.ClientID
	}
	if src.OAuth.ClientSecret != "" {
		dst.OAuth.ClientSecret = src.OAuth.ClientSecret
	}
	if src.OperatorConfig.Hostname != "" {
		dst.OperatorConfig.Hostname = src.OperatorConfig.Hostname
	}
	if src.OperatorConfig.DefaultTags != nil {
		dst.OperatorConfig.DefaultTags = src.OperatorConfig.DefaultTags
	}
	if src.ProxyConfig.DefaultTags != nil {
		dst.ProxyConfig.DefaultTags = src.ProxyConfig.DefaultTags
	}
	if src.APIServerProxyConfig.Mode != nil {
		dst.APIServerProxyConfig.Mode = src.APIServerProxyConfig.Mode
	}
}

func deviceExists(t *tailnetapi.Server, id string) bool {
	for _, d := range t.Devices() {
		if d.ID == id {
			return true
		}
	}
	return false
}

func lookupTag(owners map[string][]string, tag string) ([]string, bool) {
	for k, v := range owners {
		if strings.EqualFold(k, tag) {
			return v, true
		}
	}
	return nil, false
}

// anyOwns reports whether one of owners is tag itself or owns it in
// tagOwners.
func anyOwns(pol *aclcheck.Policy, owners []string, tag string) bool {
	for _, o := range owners {
		if strings.EqualFold(o, tag) || pol.CanOwnTag(o, tag) {
			return true
		}
	}
	return false
}

func ownsOrEqual(clientTags []string, tag string, pol *aclcheck.Policy) bool {
	return anyOwns(pol, clientTags, tag)
}

func hasScope(list []string, want string) bool {
	for _, s := range list {
		if s == want || s == "all" || strings.EqualFold(s, want) {
			return true
		}
		// A scope like "devices:core" is granted by "devices:core" only;
		// "devices" covers its sub-scopes in the legacy set.
		if strings.HasPrefix(want, s+":") && !strings.HasSuffix(s, ":read") {
			return true
		}
	}
	return false
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[strings.ToLower(s)]++
	}
	for _, s := range b {
		seen[strings.ToLower(s)]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// validLabel checks a DNS label as the operator does: 1 to 63 bytes of
// letters, digits and dashes, starting and ending with a letter or digit.
func validLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		dashInside := c == '-' && i > 0 && i < len(s)-1
		if !alnum && !dashInside {
			return false
		}
	}
	return true
}
