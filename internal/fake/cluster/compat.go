package cluster

// Compat keeps, one by one, behaviours of earlier versions of the
// simulation that the real operator does not have. The zero value is the
// real operator; a test suite written against an older behaviour sets the
// ones it still needs (see sandbox.Options).
type Compat struct {
	// OperatorNewDevice: the operator keeps no tsnet state across its
	// deployments. A hostname or default tags change brings up a new
	// device in place of the old one, each start logs in again with the
	// OAuth client (so credential problems fail the deployment), and an
	// uninstall removes the device. The real operator keeps its node in
	// the operator Secret: a new hostname renames the same device, new
	// default tags leave its tags as they were, it starts without calling
	// the API while the node is logged in, and an uninstalled operator's
	// device stays on the tailnet, offline.
	OperatorNewDevice bool

	// ProxyNewDevice: a proxy (exposed Service, egress Service, Connector
	// or ProxyGroup replica) whose hostname or tags change gets a new
	// device, and an exposed Service the operator refuses loses its
	// proxy. The real operator keeps each proxy's state Secret: the same
	// device is renamed, its tags stay those of its first auth key, and a
	// refused Service keeps what the operator made before.
	ProxyNewDevice bool

	// OperatorOwnsProxyTags: the operator's deployment fails unless its
	// own tags own the proxy tags, and an exposed Service's proxy needs
	// the operator device's tags (not its OAuth client's) to own its
	// tags. The real operator starts whatever the proxy tags, and each
	// proxy's auth key is minted with the OAuth client, whose tags must
	// own the proxy's.
	OperatorOwnsProxyTags bool

	// ReconcileOnAppDeploy: an annotated application's Service is
	// reconciled only when the application deploys. The real operator
	// reconciles every annotated Service when it starts, and again when a
	// ProxyGroup or ProxyClass it depends on changes.
	ReconcileOnAppDeploy bool

	// NoEgressProxies: egress Services are only validated: one without a
	// ProxyGroup gets no proxy device, and every one keeps the
	// externalName it was rendered with. The real operator brings up a
	// proxy device for one without a ProxyGroup, and points externalName
	// at the proxy's headless Service, or for one with a ProxyGroup at a
	// ClusterIP Service in front of the ProxyGroup.
	NoEgressProxies bool

	// IgnoreProxyClass: the ProxyClass an object names is not looked at.
	// The real operator brings up no proxy for a Connector, ProxyGroup or
	// Service whose ProxyClass is missing or not Ready.
	IgnoreProxyClass bool

	// ProxyGroupIngressWithoutService: an exposure through an ingress
	// ProxyGroup is served as soon as the ProxyGroup exists. The real
	// operator waits for the ProxyGroup to be available, refuses two
	// Services with one hostname, and creates the Tailscale Service
	// svc:HOSTNAME through the API (which needs the services scope).
	ProxyGroupIngressWithoutService bool

	// IndexedConnectorHostnames: the replicas of a Connector without a
	// hostnamePrefix are named HOSTNAME-0 ... HOSTNAME-(N-1). The real
	// operator gives every replica the hostname.
	IndexedConnectorHostnames bool

	// QuotedOperatorHostname: the operator's hostname deploys whatever
	// YAML reads it as. The real chart writes it unquoted into the
	// Deployment: a number or boolean makes the API server refuse it,
	// null leaves the default hostname.
	QuotedOperatorHostname bool

	// CleanupWithoutOperator: a deleted Service, Connector or ProxyGroup
	// goes at once with its devices, a Service whose annotations are gone
	// loses its proxy, and the operator's uninstall leaves its custom
	// resources in place, whether or not an operator runs. The real
	// operator puts its finalizer on what it serves: with no operator
	// running, a deleted object stays Terminating with its devices, and
	// uninstalling the operator deletes its CRDs, whose deletion the
	// custom resources left wedge, so that a new install fails.
	CleanupWithoutOperator bool

	// LenientAnnotations: the tailscale.com/tags annotation is trimmed
	// around each tag, an empty one means the default tags, and an empty
	// tailscale.com/proxy-group annotation means none. The real operator
	// splits the tags on commas without trimming (so "tag:a, tag:b" asks
	// for " tag:b" when it mints the auth key, after a validation that
	// trims), refuses an empty tags annotation, and skips a Service whose
	// proxy-group annotation is present but empty.
	LenientAnnotations bool

	// OperatorLoginFailsDeployment: an operator pod that cannot log in
	// (credentials refused, scopes missing, tags it cannot own) fails its
	// deployment, which ends in DEPLOYMENT_ERROR with the exact cause. The
	// real chart declares no readiness or liveness probe, so Helm's --wait
	// sees the pod running and the deployment succeeds (Qovery says
	// DEPLOYED); the pod then exits and crash-loops, and no device comes.
	// OperatorNewDevice implies it.
	OperatorLoginFailsDeployment bool
}

// SetCompat sets the earlier behaviours the engine keeps.
func (e *Engine) SetCompat(c Compat) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.compat = c
}

// Compat returns the earlier behaviours the engine keeps.
func (e *Engine) Compat() Compat {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.compat
}
