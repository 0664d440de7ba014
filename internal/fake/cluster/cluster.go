// Package cluster simulates what the Tailscale Kubernetes operator does in
// the clusters that Qovery deploys to, so that the fakes show the results
// qtail promises: the operator device after a valid operator deployment
// (kept across upgrades, as the operator keeps its node in a Secret), a
// proxy device for each exposed Service and each egress Service without a
// ProxyGroup, the Tailscale Service of an exposure through an ingress
// ProxyGroup, the devices and routes of the Connectors and ProxyGroups a
// Helm service renders, the ProxyClasses they wait for, and the reasons a
// real operator pod, Helm or the Kubernetes API server would fail. Compat
// keeps earlier, less faithful behaviours for the tests that still need
// them.
//
// An Engine is the Deployer of the fake Qovery API: the fake calls it at the
// end of every deployment and deletion, with the service as the deployment
// engine renders it (variables resolved).
package cluster

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	yamlv2 "gopkg.in/yaml.v2"

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
	HelmID    string
	ClusterID string
	// ChartVersion is the operator chart's version: its CRDs define the
	// tailscale.com kinds the cluster knows.
	ChartVersion string
	// Namespace is the operator's namespace (its Helm release's), where
	// it makes the proxies' StatefulSets and Services.
	Namespace string
	// Hostname is OPERATOR_HOSTNAME, the name of its device.
	Hostname string
	// Tags are OPERATOR_INITIAL_TAGS: the tags the operator asks for when
	// its node logs in. A node that is already logged in keeps the tags it
	// has on the tailnet.
	Tags []string
	// ProxyTags are PROXY_TAGS, DefaultProxyClass PROXY_DEFAULT_CLASS.
	ProxyTags         []string
	DefaultProxyClass string
	OAuthClient       string
	// ClientTags are the tags of the OAuth client: the operator mints the
	// auth keys of its proxies, connectors and ProxyGroup replicas with
	// it, so they must own the tags those devices ask for.
	ClientTags []string
	DeviceID   string
	// NodeID is the device's stable node ID, which identifies the
	// operator in the owner references of its Tailscale Services.
	NodeID string

	// secret is the OAuth client's secret; never logged.
	secret string
	// audience is set when the operator uses workload identity.
	audience string
}

// Proxy is an exposed Service's proxy.
type Proxy struct {
	ApplicationID string
	ClusterID     string
	Hostname      string
	Tags          []string
	DeviceID      string
}

// nodeKey locates the operator Secret, where the operator keeps its tsnet
// state: one per namespace of a cluster.
type nodeKey struct{ cluster, namespace string }

// Engine is the simulated cluster side.
type Engine struct {
	tailnet *tailnetapi.Server

	mu        sync.Mutex
	compat    Compat
	operators map[string]*Operator // by cluster ID
	// nodes are the operator Secrets: the device each holds the state of,
	// kept when the operator is uninstalled.
	nodes   map[nodeKey]string
	proxies map[string]*Proxy // by application ID
	// apps are the applications as last deployed, by ID: their Services
	// stay on the cluster for the operator to reconcile.
	apps map[string]qoveryapi.ServiceSnapshot
	// appServices are the Tailscale Services the operator made for
	// applications exposed through a ProxyGroup, by application ID.
	appServices map[string]string
	// objects are the Kubernetes objects that Helm services rendered
	// from their manifests values (see manifests.go).
	objects map[objectKey]*ownedObject
	events  []string
	// broken are the applications whose deployments fail, with the
	// reason (BreakApplication).
	broken map[string]string
	// terminating are the objects deleted while no operator ran to remove
	// their finalizer (see finalizers.go), stuckServices the
	// applications' Services likewise, by application ID.
	terminating   map[objectKey]*ownedObject
	stuckServices map[string]stuckService
	// issuers are the service account token issuers of the clusters, by
	// cluster ID. A cluster keeps its issuer across Reset.
	issuers map[string]*tailnetapi.Issuer
	// crashLoops are the operators whose pod exits after start, by
	// cluster ID: their release is deployed, but they run nothing.
	crashLoops map[string]CrashLoop
	// dns are the nameservers of the DNSConfigs (dnsconfig.go).
	dns dnsState
}

// CrashLoop is an operator whose Helm release is deployed but whose pod
// exits after start, over and over: no probe tells Helm, so Qovery reports
// the deployment DEPLOYED, and no device comes.
type CrashLoop struct {
	HelmID, ClusterID, Hostname string
	// Reason is what the pod logs before it exits.
	Reason string
}

// New returns an engine that adds and removes devices on tailnet.
func New(tailnet *tailnetapi.Server) *Engine {
	e := &Engine{tailnet: tailnet, issuers: map[string]*tailnetapi.Issuer{}}
	e.resetLocked()
	return e
}

// OperatorServiceAccount is the name of the service account the operator
// chart runs the operator under.
const OperatorServiceAccount = "operator"

// ServiceAccountSubject is the sub claim of the service account tokens
// Kubernetes issues for the service account name of namespace.
func ServiceAccountSubject(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// Issuer returns the service account token issuer of the cluster
// clusterID, as its OIDC discovery document names it: a federated identity
// of the tailnet trusts it to let the cluster's workloads in with workload
// identity.
func (e *Engine) Issuer(clusterID string) *tailnetapi.Issuer {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.issuerLocked(clusterID)
}

func (e *Engine) issuerLocked(clusterID string) *tailnetapi.Issuer {
	iss := e.issuers[clusterID]
	if iss == nil {
		iss = tailnetapi.NewIssuer("https://oidc.clusters.example.com/" + clusterID)
		e.issuers[clusterID] = iss
	}
	return iss
}

// workloadCallerLocked is the API client of an operator using workload
// identity: the chart projects a service account token with the audience
// into its pod, and the operator exchanges it for an access token of the
// federated identity clientID.
func (e *Engine) workloadCallerLocked(clusterID, namespace, clientID, audience string) (*tailnetapi.Caller, error) {
	jwt := e.issuerLocked(clusterID).Token(ServiceAccountSubject(namespace, OperatorServiceAccount), audience, nil)
	return e.tailnet.ExchangeCaller(clientID, jwt)
}

func (e *Engine) resetLocked() {
	e.operators = map[string]*Operator{}
	e.nodes = map[nodeKey]string{}
	e.proxies = map[string]*Proxy{}
	e.apps = map[string]qoveryapi.ServiceSnapshot{}
	e.appServices = map[string]string{}
	e.objects = map[objectKey]*ownedObject{}
	e.terminating = map[objectKey]*ownedObject{}
	e.stuckServices = map[string]stuckService{}
	e.events = nil
	e.crashLoops = map[string]CrashLoop{}
	e.dns = dnsState{}
}

// CrashLoops lists the operators whose pod crash-loops, by cluster ID.
func (e *Engine) CrashLoops() []CrashLoop {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]CrashLoop, 0, len(e.crashLoops))
	for _, c := range e.crashLoops {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ClusterID < out[j].ClusterID })
	return out
}

var _ qoveryapi.Deployer = (*Engine)(nil)

// Reset forgets every operator, proxy, application and rendered object
// (the devices are the tailnet's). The earlier behaviours set with
// SetCompat stay.
func (e *Engine) Reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.resetLocked()
}

// Operators lists the running operators.
func (e *Engine) Operators() []Operator {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Operator, 0, len(e.operators))
	for _, o := range e.operators {
		c := *o
		c.Tags, c.ProxyTags, c.ClientTags = slices.Clone(o.Tags), slices.Clone(o.ProxyTags), slices.Clone(o.ClientTags)
		// The copy does not carry the secret, so that printing it
		// cannot leak it.
		c.secret = ""
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
		return e.deployApplication(svc)
	}
	return nil
}

// Delete is called by the fake Qovery API when a service is deleted.
func (e *Engine) Delete(_ context.Context, svc qoveryapi.ServiceSnapshot) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch svc.Kind {
	case "HELM":
		if c, ok := e.crashLoops[svc.ClusterID]; ok && c.HelmID == svc.ID {
			delete(e.crashLoops, svc.ClusterID)
		}
		if op, ok := e.operators[svc.ClusterID]; ok && op.HelmID == svc.ID {
			if e.compat.OperatorNewDevice {
				e.tailnet.RemoveDevice(op.DeviceID)
			} else {
				// The operator Secret is not part of the release: the
				// node survives, offline, and comes back with the next
				// operator in this namespace.
				e.tailnet.SetConnected(op.DeviceID, false)
			}
			delete(e.operators, svc.ClusterID)
			if !e.compat.CleanupWithoutOperator {
				// The CRDs go with the release, and every custom
				// resource with them.
				e.uninstallCRDsLocked(svc.ClusterID)
			}
		}
		e.deleteManifestsLocked(svc)
	case "APPLICATION", "CONTAINER":
		e.deleteAppLocked(svc)
	}
	return nil
}

// operatorValues is the part of the chart's values the simulation reads.
type operatorValues struct {
	OAuth struct {
		ClientID     string `yaml:"clientId"`
		ClientSecret string `yaml:"clientSecret"`
		Audience     string `yaml:"audience"`
	} `yaml:"oauth"`
	OAuthSecretVolume map[string]any `yaml:"oauthSecretVolume"`
	OperatorConfig    struct {
		Hostname    string `yaml:"hostname"`
		DefaultTags any    `yaml:"defaultTags"`
	} `yaml:"operatorConfig"`
	ProxyConfig struct {
		DefaultTags       any    `yaml:"defaultTags"`
		DefaultProxyClass string `yaml:"defaultProxyClass"`
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

// deployOperator brings up the operator, or fails as Helm or the operator
// pod would. In order:
//
//   - the chart renders CRDs and ClusterRoles: without
//     allow_cluster_wide_resources the deployment is refused;
//   - a cluster runs one operator: the CRDs of another release on the same
//     cluster make Helm refuse the install, and so do CRDs whose deletion
//     is wedged by the finalizers of custom resources left when the
//     previous operator was uninstalled;
//   - the chart writes the hostname unquoted into the Deployment: one that
//     YAML reads as a number or boolean makes the API server refuse it,
//     null leaves the operator's default hostname;
//   - the pod parses APISERVER_PROXY;
//   - it reads its OAuth client from the files of the operator-oauth
//     Secret (made from the chart values; Qovery precreates none), or with
//     workload identity (oauth.audience, from chart 1.92) from its
//     environment; a volume of credentials (oauthSecretVolume) is beyond
//     what the simulation can read;
//   - its tsnet node is kept in the operator Secret of its namespace: a
//     node still on the tailnet starts without calling the API, under the
//     new hostname (the same device, renamed) and with the tags it has;
//   - otherwise the node logs in: the operator exchanges its OAuth client
//     for an access token (an unknown or revoked client, or a wrong
//     secret, is refused), or with workload identity a token of its
//     service account, issued by the cluster (Issuer) for the audience,
//     which the federated identity must trust; it then mints an auth key with
//     OPERATOR_INITIAL_TAGS, which needs the devices:core and auth_keys
//     scopes and tags declared in tagOwners and owned by the client's
//     tags.
//
// A pod that cannot log in exits after start: the chart declares no
// readiness or liveness probe, so Helm's --wait saw it running, the
// deployment succeeds (Qovery says DEPLOYED), and the pod crash-loops with
// no device (see CrashLoop; Compat.OperatorLoginFailsDeployment fails the
// deployment with the exact cause instead). The proxy tags are not checked
// at start: each proxy's auth key is minted when the proxy is made, and
// fails then. A failed deployment leaves a
// running operator as it was (Helm's --atomic rolls the release back). A
// running operator finishes the cleanup of the Services left Terminating
// (finalizers.go), then reconciles every object it watches on the
// cluster.
func (e *Engine) deployOperator(svc qoveryapi.ServiceSnapshot) error {
	if !svc.AllowClusterWideResources {
		return fmt.Errorf("helm chart %s renders cluster-wide resources (CustomResourceDefinition connectors.tailscale.com, ClusterRole tailscale-operator) "+
			"but allow_cluster_wide_resources is false", svc.ChartName)
	}
	e.mu.Lock()
	other, taken := e.operators[svc.ClusterID]
	if c, crashing := e.crashLoops[svc.ClusterID]; !taken && crashing {
		// Its release, CRDs included, is installed all the same.
		other, taken = &Operator{HelmID: c.HelmID, Hostname: c.Hostname}, true
	}
	compat := e.compat
	wedged := e.checkCRDsFreeLocked(svc.ClusterID)
	e.mu.Unlock()
	if wedged != nil && !taken {
		return wedged
	}
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
		case "oauth.audience":
			vals.OAuth.Audience = kv[1]
		case "operatorConfig.hostname":
			vals.OperatorConfig.Hostname = kv[1]
		}
	}
	hostname := vals.OperatorConfig.Hostname
	if hostname == "" {
		hostname = defaultHostname
	}
	if !compat.QuotedOperatorHostname {
		switch t := unquotedType(hostname); t {
		case "string":
		case "null":
			// OPERATOR_HOSTNAME is then empty: the operator's default.
			hostname = defaultHostname
		default:
			return fmt.Errorf("helm upgrade --install failed: unable to build kubernetes objects from release manifest: error validating \"\": error validating data: "+
				"ValidationError(Deployment.spec.template.spec.containers[0].env[1].value): invalid type for io.k8s.api.core.v1.EnvVar.value: got %q, expected \"string\" "+
				"(the chart writes operatorConfig.hostname %q unquoted)", t, hostname)
		}
	}
	switch mode := fmt.Sprint(vals.APIServerProxyConfig.Mode); {
	case vals.APIServerProxyConfig.Mode == nil, mode == "false", mode == "true", mode == "noauth":
	default:
		return fmt.Errorf("operator pod failed: unknown APISERVER_PROXY value %q", mode)
	}
	workloadIdentity := vals.OAuth.Audience != "" && chartReadsAudience(svc.ChartVersion)
	switch {
	case len(vals.OAuthSecretVolume) > 0:
		return fmt.Errorf("operator pod failed: the OAuth client comes from the volume in oauthSecretVolume, which the simulation cannot read; " +
			"give oauth.clientId and oauth.clientSecret instead")
	case workloadIdentity && vals.OAuth.ClientID == "":
		return fmt.Errorf("operator pod failed: CLIENT_ID_FILE and CLIENT_SECRET_FILE must be set (oauth.audience without oauth.clientId)")
	case !workloadIdentity && (vals.OAuth.ClientID == "" || vals.OAuth.ClientSecret == ""):
		return fmt.Errorf("operator pod failed: reading client ID \"/oauth/client_id\": open /oauth/client_id: no such file or directory " +
			"(no oauth.clientId and oauth.clientSecret in the chart values, and no precreated operator-oauth Secret)")
	}
	tags := tagList(vals.OperatorConfig.DefaultTags, defaultOperatorTag)
	proxyTags := tagList(vals.ProxyConfig.DefaultTags, defaultProxyTag)

	e.mu.Lock()
	node := nodeKey{svc.ClusterID, svc.Namespace}
	nodeDevice, hasNode := e.nodes[node]
	e.mu.Unlock()
	loggedIn := !compat.OperatorNewDevice && hasNode && deviceExists(e.tailnet, nodeDevice)

	// The OAuth client or federated identity, as far as the tailnet knows
	// it; a node that must log in needs it valid.
	var caller *tailnetapi.Caller
	var loginErr error
	if workloadIdentity {
		e.mu.Lock()
		caller, loginErr = e.workloadCallerLocked(svc.ClusterID, svc.Namespace, vals.OAuth.ClientID, vals.OAuth.Audience)
		e.mu.Unlock()
	} else {
		caller, loginErr = e.tailnet.Caller(vals.OAuth.ClientID, vals.OAuth.ClientSecret)
	}
	var clientTags []string
	if caller != nil {
		clientTags = caller.Tags()
	}
	if !loggedIn {
		if err := e.checkLogin(vals, tags, caller, loginErr); err != nil {
			if compat.OperatorLoginFailsDeployment || compat.OperatorNewDevice {
				return err
			}
			e.crashLoop(svc, hostname, err)
			return nil
		}
	}
	if compat.OperatorOwnsProxyTags {
		body, _ := e.tailnet.Policy()
		pol, perr := aclcheck.Parse(body)
		if perr != nil {
			return fmt.Errorf("operator pod failed: the tailnet policy is invalid: %s", perr.Message)
		}
		for _, pt := range proxyTags {
			if !anyOwns(pol, tags, pt) {
				return fmt.Errorf("operator pod failed: proxy tags [%s] are not owned by the operator's tags %v in tagOwners: the operator could not create auth keys for its proxies", pt, tags)
			}
		}
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	op := &Operator{
		HelmID: svc.ID, ClusterID: svc.ClusterID, ChartVersion: svc.ChartVersion, Namespace: svc.Namespace, Hostname: hostname,
		Tags: tags, ProxyTags: proxyTags, DefaultProxyClass: vals.ProxyConfig.DefaultProxyClass,
		OAuthClient: vals.OAuth.ClientID, ClientTags: slices.Clone(clientTags),
		secret: vals.OAuth.ClientSecret,
	}
	if workloadIdentity {
		op.audience, op.secret = vals.OAuth.Audience, ""
	}
	switch old, ok := e.operators[svc.ClusterID]; {
	case loggedIn:
		dev, _ := e.tailnet.RenameDevice(nodeDevice, hostname)
		e.tailnet.SetConnected(nodeDevice, true)
		op.DeviceID, op.NodeID = dev.ID, dev.NodeID
	case compat.OperatorNewDevice && ok && old.Hostname == hostname && sameSet(old.Tags, tags) && deviceExists(e.tailnet, old.DeviceID):
		op.DeviceID, op.NodeID = old.DeviceID, old.NodeID
	default:
		if ok && compat.OperatorNewDevice {
			e.tailnet.RemoveDevice(old.DeviceID)
		}
		// The node logs in with an auth key the operator mints with its
		// OAuth client (checkLogin checked that it may).
		if caller != nil {
			if _, err := caller.MintAuthKey(tags); err != nil {
				e.logf("operator %s: minting its auth key: %v", hostname, err)
			}
		}
		dev := e.tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: hostname, Tags: tags, OS: "linux"})
		op.DeviceID, op.NodeID = dev.ID, dev.NodeID
	}
	e.operators[svc.ClusterID] = op
	delete(e.crashLoops, svc.ClusterID)
	e.nodes[node] = op.DeviceID
	e.finishCleanupLocked(svc.ClusterID)
	if !compat.ReconcileOnAppDeploy {
		e.reconcileClusterLocked(svc.ClusterID, "")
	}
	e.reconcileDNSConfigsLocked(svc.ClusterID, "")
	return nil
}

// crashLoop records the operator of svc as crash-looping with the reason
// err, after its deployment succeeded: the chart has no probes, so Helm's
// --wait saw the pod running before it exited. The pod replaced the one of
// an operator that ran before (the rollout completed), so that one runs no
// more; its node stays on the tailnet, offline.
func (e *Engine) crashLoop(svc qoveryapi.ServiceSnapshot, hostname string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if old, ok := e.operators[svc.ClusterID]; ok && old.HelmID == svc.ID {
		e.tailnet.SetConnected(old.DeviceID, false)
		delete(e.operators, svc.ClusterID)
	}
	reason := strings.TrimPrefix(err.Error(), "operator pod failed: ")
	e.crashLoops[svc.ClusterID] = CrashLoop{HelmID: svc.ID, ClusterID: svc.ClusterID, Hostname: hostname, Reason: reason}
	e.logf("operator %s (Helm service %s) in CrashLoopBackOff: %s", hostname, svc.ID, reason)
}

// checkLogin is what stops a node that must log in: the credentials
// (caller, or loginErr when the tailnet refused them), their scopes, and
// the tags of the operator's auth key.
func (e *Engine) checkLogin(vals operatorValues, tags []string, caller *tailnetapi.Caller, loginErr error) error {
	switch {
	case loginErr != nil && vals.OAuth.Audience != "":
		return fmt.Errorf("operator pod failed: creating operator authkey: %v (federated identity %s, audience %q)", loginErr, vals.OAuth.ClientID, vals.OAuth.Audience)
	case loginErr != nil:
		return fmt.Errorf("operator pod failed: getting OAuth token: oauth2: \"invalid_client\" \"invalid client credentials\" (client %s)", vals.OAuth.ClientID)
	}
	if scopes := caller.Scopes(); !hasScope(scopes, "devices:core") || !hasScope(scopes, "auth_keys") {
		return fmt.Errorf("operator pod failed: creating operator authkey: calling actor does not have enough permissions to perform this function (OAuth client %s has scopes %v; it needs devices:core and auth_keys)",
			vals.OAuth.ClientID, scopes)
	}
	clientTags := caller.Tags()
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
		if !anyOwns(pol, clientTags, t) {
			return fmt.Errorf("operator pod failed: creating operator authkey: requested tags [%s] are invalid or not permitted (400): the OAuth client's tags %v do not own %s", strings.Join(tags, ","), clientTags, t)
		}
	}
	return nil
}

// chartReadsAudience reports whether a tailscale-operator chart version
// reads oauth.audience (workload identity), which it does from 1.92.
func chartReadsAudience(version string) bool { return chartMinor(version) >= 92 }

// chartMinor is the minor release of a 1.x tailscale-operator chart
// version; a version it cannot read (a chart from Git) counts as the
// newest.
func chartMinor(version string) int {
	major, rest, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	minor, _, _ := strings.Cut(rest, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil || ma != 1 {
		return math.MaxInt
	}
	return mi
}

// unquotedType is the type a value gets when a template writes it unquoted
// into a manifest and Kubernetes decodes it (YAML 1.1): "string",
// "integer", "number", "boolean" or "null".
func unquotedType(s string) string {
	var m map[string]any
	if err := yamlv2.Unmarshal([]byte("value: "+s), &m); err != nil {
		return "string"
	}
	return jsonType(m["value"])
}

func mergeValues(dst *operatorValues, src operatorValues) {
	if src.OAuth.ClientID != "" {
		dst.OAuth.ClientID = src.OAuth.ClientID
	}
	if src.OAuth.ClientSecret != "" {
		dst.OAuth.ClientSecret = src.OAuth.ClientSecret
	}
	if src.OAuth.Audience != "" {
		dst.OAuth.Audience = src.OAuth.Audience
	}
	if src.OAuthSecretVolume != nil {
		dst.OAuthSecretVolume = src.OAuthSecretVolume
	}
	if src.ProxyConfig.DefaultProxyClass != "" {
		dst.ProxyConfig.DefaultProxyClass = src.ProxyConfig.DefaultProxyClass
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
