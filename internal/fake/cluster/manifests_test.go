package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// These tests hand the engine the snapshots the fake Qovery API would give
// it, for a Helm service that renders its `manifests` values, on a cluster
// whose operator runs (labCluster) and one without an operator
// (bareCluster). The last ones drive the whole world.

const (
	labCluster   = "cluster-lab"
	bareCluster  = "cluster-bare"
	labNamespace = "z1234abcd-networking"
)

// labTagOwners is the tagOwners section of every policy below.
const labTagOwners = `"tagOwners": {
		"tag:k8s-operator": [],
		"tag:k8s":          ["tag:k8s-operator"],
		"tag:k8s-prod":     ["tag:k8s-operator"],
		"tag:stray":        ["autogroup:admin"],
	},
	"grants": [{"src": ["*"], "dst": ["*"], "ip": ["*"]}],`

// labPolicy has no autoApprovers: routes are only advertised.
const labPolicy = "{\n\t" + labTagOwners + "\n}"

// labApproversPolicy approves the home lab's routes and exit node for
// tag:k8s.
const labApproversPolicy = "{\n\t" + labTagOwners + `
	"autoApprovers": {
		"routes":   {"10.0.0.0/8": ["tag:k8s"], "192.168.0.0/24": ["tag:k8s"]},
		"exitNode": ["tag:k8s"],
	},
}`

// homelabRoutes are the routes of recipe step 6.
var homelabRoutes = []string{"10.244.0.0/16", "10.10.0.0/16", "10.50.0.0/24", "10.101.0.0/16", "192.168.0.0/24", "10.20.0.0/16"}

// lab is a tailnet with an operator running on labCluster.
type lab struct {
	t       *testing.T
	tailnet *tailnetapi.Server
	engine  *cluster.Engine
	// operator is the operator's Helm service, as deployed.
	operator qoveryapi.ServiceSnapshot
}

func newLab(t *testing.T, policy string) *lab {
	t.Helper()
	return newLabWith(t, policy, []string{"devices:core", "auth_keys"}, "")
}

// newLabWith runs the operator with an OAuth client of these scopes and
// more values (YAML appended to its values file).
func newLabWith(t *testing.T, policy string, scopes []string, moreValues string) *lab {
	t.Helper()
	ts := tailnetapi.New(tailnetapi.Options{InitialPolicy: []byte(policy), MagicDNSSuffix: "tail1234.ts.net"})
	l := &lab{t: t, tailnet: ts, engine: cluster.New(ts)}
	id, secret := ts.SeedOAuthClient("", "", scopes, []string{"tag:k8s-operator"})
	values := fmt.Sprintf("oauth:\n  clientId: %s\n  clientSecret: %s\noperatorConfig:\n  hostname: tailscale-operator-lab\n%s", id, secret, moreValues)
	l.operator = qoveryapi.ServiceSnapshot{
		Kind: "HELM", ID: "helm-operator", Name: "tailscale-operator", ClusterID: labCluster, Namespace: "z1234abcd-tailscale",
		ChartName: cluster.OperatorChart, ChartVersion: "1.102.4", AllowClusterWideResources: true,
		ValuesFiles: []qoveryapi.ValuesFile{{Name: "values.yaml", Content: values}},
	}
	err := l.engine.Deploy(context.Background(), l.operator)
	if err != nil {
		t.Fatalf("operator deployment: %v", err)
	}
	return l
}

// release is the snapshot of a manifests Helm service named name (its ID
// is "helm-" + name) on labCluster, one values file per content.
func release(name string, contents ...string) qoveryapi.ServiceSnapshot {
	svc := qoveryapi.ServiceSnapshot{
		Kind: "HELM", ID: "helm-" + name, Name: name, KubernetesName: name,
		ClusterID: labCluster, Namespace: labNamespace,
		ChartName: "tailnet-manifests", ChartVersion: "0.1.0", RepositoryURL: "https://charts.example.com/qtail",
		AllowClusterWideResources: true,
	}
	for i, c := range contents {
		file := manifest.ManifestsFileName
		if i > 0 {
			file = fmt.Sprintf("extra-%d.yaml", i)
		}
		svc.ValuesFiles = append(svc.ValuesFiles, qoveryapi.ValuesFile{Name: file, Content: c})
	}
	return svc
}

func (l *lab) deploy(svc qoveryapi.ServiceSnapshot) {
	l.t.Helper()
	if err := l.engine.Deploy(context.Background(), svc); err != nil {
		l.t.Fatalf("deploying %s: %v (events %q)", svc.Name, err, l.engine.Events())
	}
}

func (l *lab) remove(svc qoveryapi.ServiceSnapshot) {
	l.t.Helper()
	if err := l.engine.Delete(context.Background(), svc); err != nil {
		l.t.Fatalf("deleting %s: %v", svc.Name, err)
	}
}

// devices returns the devices with this hostname.
func (l *lab) devices(hostname string) []tailnetapi.Device {
	var out []tailnetapi.Device
	for _, d := range l.tailnet.Devices() {
		if d.Hostname == hostname {
			out = append(out, d)
		}
	}
	return out
}

// device returns the one device with this hostname and tags.
func (l *lab) device(hostname string, tags ...string) tailnetapi.Device {
	l.t.Helper()
	devs := l.devices(hostname)
	if len(devs) != 1 {
		l.t.Fatalf("want one device %s, got %+v (events %q)", hostname, devs, l.engine.Events())
	}
	if !slices.Equal(devs[0].Tags, tags) {
		l.t.Fatalf("device %s has tags %v, want %v", hostname, devs[0].Tags, tags)
	}
	return devs[0]
}

func (l *lab) noDevice(hostname string) {
	l.t.Helper()
	if devs := l.devices(hostname); len(devs) != 0 {
		l.t.Fatalf("want no device %s, got %+v", hostname, devs)
	}
}

// hostnames lists the hostnames on the tailnet other than the operator's.
func (l *lab) hostnames() []string {
	var out []string
	for _, d := range l.tailnet.Devices() {
		if d.Hostname != "tailscale-operator-lab" {
			out = append(out, d.Hostname)
		}
	}
	slices.Sort(out)
	return out
}

func (l *lab) event(want string) {
	l.t.Helper()
	for _, e := range l.engine.Events() {
		if strings.Contains(e, want) {
			return
		}
	}
	l.t.Fatalf("no event says %q; events: %q", want, l.engine.Events())
}

func (l *lab) setPolicy(policy string) {
	l.t.Helper()
	if err := l.tailnet.SetPolicyDirect([]byte(policy)); err != nil {
		l.t.Fatal(err)
	}
}

func replicas(n int64) *int64 { return &n }

// entries returns the entries of a values file's manifests list, to append
// to another file's list.
func entries(values string) string {
	_, after, _ := strings.Cut(values, "manifests:\n")
	return after
}

func connectorValues(t *testing.T, c manifest.Connector) string {
	t.Helper()
	v, err := manifest.RenderConnector(c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func proxyGroupValues(t *testing.T, g manifest.ProxyGroup) string {
	t.Helper()
	v, err := manifest.RenderProxyGroup(g)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// homelab is the Connector of recipe step 6.
var homelab = manifest.Connector{Name: "homelab", Hostname: "homelab", ExitNode: true, SubnetRoutes: homelabRoutes}

// connectorYAML is a values file with one Connector named homelab whose
// spec is the YAML flow mapping spec.
func connectorYAML(spec string) string {
	return "manifests:\n  - {apiVersion: tailscale.com/v1alpha1, kind: Connector, metadata: {name: homelab}, spec: " + spec + "}\n"
}

// proxyGroupYAML is a values file with one ProxyGroup.
func proxyGroupYAML(name, spec string) string {
	return fmt.Sprintf("manifests:\n  - {apiVersion: tailscale.com/v1alpha1, kind: ProxyGroup, metadata: {name: %s}, spec: %s}\n", name, spec)
}

// serviceYAML is a values file with one Service: annotations as key/value
// pairs, its type, and a Postgres port unless noPorts.
func serviceYAML(name, typ string, noPorts bool, annotations ...string) string {
	var ann []string
	for i := 0; i+1 < len(annotations); i += 2 {
		ann = append(ann, fmt.Sprintf("%q: %q", annotations[i], annotations[i+1]))
	}
	ports := ", ports: [{name: tcp-5432, port: 5432, protocol: TCP}]"
	if noPorts {
		ports = ""
	}
	return fmt.Sprintf("manifests:\n  - {apiVersion: v1, kind: Service, metadata: {name: %s, annotations: {%s}}, spec: {type: %s, externalName: placeholder%s}}\n",
		name, strings.Join(ann, ", "), typ, ports)
}

func TestManifests_homelabConnector(t *testing.T) {
	exitRoutes := []string{"0.0.0.0/0", "::/0"}
	advertised := append(slices.Clone(homelabRoutes), exitRoutes...)
	for _, tc := range []struct {
		name    string
		policy  string
		enabled []string
	}{
		{"autoApprovers approve every route", labApproversPolicy, advertised},
		{"without autoApprovers routes are only advertised", labPolicy, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLab(t, tc.policy)
			svc := release("homelab", connectorValues(t, homelab))
			l.deploy(svc)

			d := l.device("homelab", "tag:k8s")
			if d.Name != "homelab.tail1234.ts.net" {
				t.Errorf("MagicDNS name %s", d.Name)
			}
			if !slices.Equal(d.AdvertisedRoutes, advertised) {
				t.Errorf("advertised %v, want %v", d.AdvertisedRoutes, advertised)
			}
			// Enabled routes read back sorted by address.
			enabled := tailnet.SortRoutes(slices.Clone(tc.enabled))
			if !slices.Equal(d.EnabledRoutes, enabled) {
				t.Errorf("enabled %v, want %v", d.EnabledRoutes, enabled)
			}
			cs := l.engine.Connectors()
			if len(cs) != 1 {
				t.Fatalf("connectors %+v", cs)
			}
			c := cs[0]
			if c.HelmID != svc.ID || c.ClusterID != labCluster || c.Name != "homelab" || c.Hostname != "homelab" || c.Replicas != 1 ||
				!c.ExitNode || !slices.Equal(c.SubnetRoutes, homelabRoutes) || !slices.Equal(c.Tags, []string{"tag:k8s"}) ||
				!slices.Equal(c.Hostnames, []string{"homelab"}) || !slices.Equal(c.AdvertisedRoutes, advertised) ||
				!slices.Equal(c.DeviceIDs(), []string{d.ID}) {
				t.Fatalf("connector %+v", c)
			}

			// A plain redeployment keeps the device and its routes.
			l.deploy(svc)
			if again := l.device("homelab", "tag:k8s"); again.ID != d.ID || !slices.Equal(again.EnabledRoutes, enabled) {
				t.Fatalf("redeployment changed the device: %+v", again)
			}
		})
	}
}

func TestManifests_routesApprovedWhenAdvertised(t *testing.T) {
	l := newLab(t, labPolicy)
	c := manifest.Connector{Name: "homelab", Hostname: "homelab", SubnetRoutes: []string{"10.244.0.0/16"}}
	l.deploy(release("homelab", connectorValues(t, c)))
	if d := l.device("homelab", "tag:k8s"); len(d.EnabledRoutes) != 0 {
		t.Fatalf("approved without autoApprovers: %v", d.EnabledRoutes)
	}

	// autoApprovers added afterwards do not approve a route already
	// advertised, even when the Connector is redeployed...
	l.setPolicy(labApproversPolicy)
	l.deploy(release("homelab", connectorValues(t, c)))
	if d := l.device("homelab", "tag:k8s"); len(d.EnabledRoutes) != 0 {
		t.Fatalf("a route advertised earlier got approved: %v", d.EnabledRoutes)
	}
	// ... but they approve a route advertised from now on.
	c.SubnetRoutes = []string{"10.244.0.0/16", "10.20.0.0/16"}
	l.deploy(release("homelab", connectorValues(t, c)))
	d := l.device("homelab", "tag:k8s")
	if !slices.Equal(d.EnabledRoutes, []string{"10.20.0.0/16"}) || !slices.Equal(d.AdvertisedRoutes, c.SubnetRoutes) {
		t.Fatalf("advertised %v, enabled %v", d.AdvertisedRoutes, d.EnabledRoutes)
	}

	// A route approved by hand stays approved, also once the Connector
	// stops advertising it.
	if _, err := l.tailnet.SetEnabledRoutes(d.ID, []string{"10.244.0.0/16", "10.20.0.0/16"}); err != nil {
		t.Fatal(err)
	}
	c.SubnetRoutes = []string{"10.20.0.0/16"}
	l.deploy(release("homelab", connectorValues(t, c)))
	d = l.device("homelab", "tag:k8s")
	if !slices.Equal(d.AdvertisedRoutes, []string{"10.20.0.0/16"}) || !slices.Equal(d.EnabledRoutes, []string{"10.20.0.0/16", "10.244.0.0/16"}) {
		t.Fatalf("advertised %v, enabled %v", d.AdvertisedRoutes, d.EnabledRoutes)
	}
}

func TestManifests_connectorHostnames(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    manifest.Connector
		want []string
	}{
		{"hostname", manifest.Connector{Name: "homelab", Hostname: "gateway", ExitNode: true}, []string{"gateway"}},
		{"default hostname", manifest.Connector{Name: "homelab", ExitNode: true}, []string{"homelab-connector"}},
		{"prefix", manifest.Connector{Name: "homelab", HostnamePrefix: "hl", Replicas: replicas(3), ExitNode: true}, []string{"hl-0", "hl-1", "hl-2"}},
		{"prefix with one replica", manifest.Connector{Name: "homelab", HostnamePrefix: "hl", ExitNode: true}, []string{"hl-0"}},
		// Every replica takes the hostname, as the operator gives it.
		{"replicas without prefix", manifest.Connector{Name: "homelab", Replicas: replicas(2), ExitNode: true}, []string{"homelab-connector", "homelab-connector"}},
		{"hostname with one replica", manifest.Connector{Name: "homelab", Hostname: "gateway", Replicas: replicas(1), ExitNode: true}, []string{"gateway"}},
		{"no replica", manifest.Connector{Name: "homelab", HostnamePrefix: "hl", Replicas: replicas(0), ExitNode: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLab(t, labApproversPolicy)
			l.deploy(release("homelab", connectorValues(t, tc.c)))
			if got := l.hostnames(); !slices.Equal(got, tc.want) {
				t.Fatalf("devices %v, want %v (events %q)", got, tc.want, l.engine.Events())
			}
			for _, h := range tc.want {
				for _, d := range l.devices(h) {
					if !slices.Equal(d.EnabledRoutes, []string{"0.0.0.0/0", "::/0"}) || !slices.Equal(d.Tags, []string{"tag:k8s"}) {
						t.Errorf("%s: %+v", h, d)
					}
				}
			}
			if c := l.engine.Connectors()[0]; len(c.Devices) != len(tc.want) || !slices.Equal(c.Hostnames, tc.want) {
				t.Fatalf("connector %+v", c)
			}
		})
	}
}

// Replicas sharing a hostname get suffixed MagicDNS names; the earlier
// simulation numbered their hostnames.
func TestManifests_connectorReplicasShareTheHostname(t *testing.T) {
	l := newLab(t, labApproversPolicy)
	c := manifest.Connector{Name: "homelab", Replicas: replicas(3), SubnetRoutes: []string{"10.244.0.0/16"}}
	l.deploy(release("homelab", connectorValues(t, c)))
	var names []string
	for _, d := range l.devices("homelab-connector") {
		names = append(names, strings.TrimSuffix(d.Name, ".tail1234.ts.net"))
	}
	if !slices.Equal(names, []string{"homelab-connector", "homelab-connector-1", "homelab-connector-2"}) {
		t.Fatalf("MagicDNS names %v", names)
	}
	if got, want := l.engine.Connectors()[0].Hostnames, c.DeviceHostnames(); !slices.Equal(got, want) {
		t.Fatalf("the simulation wants %v, qtail renders %v", got, want)
	}
	// A redeployment keeps every replica's device.
	before := l.engine.Connectors()[0].DeviceIDs()
	l.deploy(release("homelab", connectorValues(t, c)))
	if after := l.engine.Connectors()[0].DeviceIDs(); !slices.Equal(before, after) {
		t.Fatalf("devices %v, then %v", before, after)
	}

	old := newLab(t, labApproversPolicy)
	old.engine.SetCompat(cluster.Compat{IndexedConnectorHostnames: true})
	old.deploy(release("homelab", connectorValues(t, c)))
	if got := old.hostnames(); !slices.Equal(got, []string{"homelab-connector-0", "homelab-connector-1", "homelab-connector-2"}) {
		t.Fatalf("with Compat.IndexedConnectorHostnames: %v", got)
	}
}

func TestManifests_connectorScaleDownAndUp(t *testing.T) {
	l := newLab(t, labApproversPolicy)
	c := manifest.Connector{Name: "homelab", HostnamePrefix: "hl", Replicas: replicas(3), SubnetRoutes: []string{"10.244.0.0/16"}}
	l.deploy(release("homelab", connectorValues(t, c)))
	first := l.device("hl-0", "tag:k8s")

	c.Replicas = replicas(1)
	l.deploy(release("homelab", connectorValues(t, c)))
	if got := l.hostnames(); !slices.Equal(got, []string{"hl-0"}) {
		t.Fatalf("after scaling down: %v", got)
	}
	if again := l.device("hl-0", "tag:k8s"); again.ID != first.ID {
		t.Fatal("scaling down replaced the remaining replica")
	}

	c.Replicas = replicas(2)
	l.deploy(release("homelab", connectorValues(t, c)))
	if got := l.hostnames(); !slices.Equal(got, []string{"hl-0", "hl-1"}) {
		t.Fatalf("after scaling up: %v", got)
	}
	if d := l.device("hl-1", "tag:k8s"); !slices.Equal(d.EnabledRoutes, []string{"10.244.0.0/16"}) {
		t.Fatalf("new replica: enabled %v", d.EnabledRoutes)
	}
}

func TestManifests_deviceRemovedByHandComesBack(t *testing.T) {
	l := newLab(t, labPolicy)
	svc := release("homelab", connectorValues(t, homelab))
	l.deploy(svc)
	old := l.device("homelab", "tag:k8s")
	l.tailnet.RemoveDevicesByHostname("homelab")

	// The policy now approves the routes: the new device advertises them
	// afresh, so they are approved.
	l.setPolicy(labApproversPolicy)
	l.deploy(svc)
	d := l.device("homelab", "tag:k8s")
	if d.ID == old.ID || len(d.EnabledRoutes) != len(homelabRoutes)+2 {
		t.Fatalf("device after redeployment: %+v", d)
	}
	if ids := l.engine.Connectors()[0].DeviceIDs(); !slices.Equal(ids, []string{d.ID}) {
		t.Fatalf("connector devices %v, want %s", ids, d.ID)
	}
}

func TestManifests_connectorTags(t *testing.T) {
	l := newLab(t, labApproversPolicy)
	c := homelab
	l.deploy(release("homelab", connectorValues(t, c)))
	old := l.device("homelab", "tag:k8s")

	// New tags: the replica keeps its state and its device, tagged as its
	// first auth key said.
	c.Tags = []string{"tag:k8s-prod"}
	l.deploy(release("homelab", connectorValues(t, c)))
	if d := l.device("homelab", "tag:k8s"); d.ID != old.ID {
		t.Fatalf("a tags change replaced the device %s with %s", old.ID, d.ID)
	}

	// Tags the operator's OAuth client does not own, on a new Connector:
	// no auth key, no device, an event.
	stray := manifest.Connector{Name: "stray", Hostname: "stray", SubnetRoutes: []string{"10.9.0.0/16"}, Tags: []string{"tag:stray"}}
	l.deploy(release("stray", connectorValues(t, stray)))
	l.noDevice("stray")
	l.event(`Connector stray: failed to create auth key: requested tags [tag:stray] are invalid or not permitted: the OAuth client's tags [tag:k8s-operator] neither are nor own them (400)`)
	l.event("Connector stray: no device for stray")

	// The earlier simulation replaced the device.
	prev := newLab(t, labApproversPolicy)
	prev.engine.SetCompat(cluster.Compat{ProxyNewDevice: true})
	c = homelab
	prev.deploy(release("homelab", connectorValues(t, c)))
	first := prev.device("homelab", "tag:k8s")
	c.Tags = []string{"tag:k8s-prod"}
	prev.deploy(release("homelab", connectorValues(t, c)))
	if d := prev.device("homelab", "tag:k8s-prod"); d.ID == first.ID {
		t.Fatal("with Compat.ProxyNewDevice the device kept its identity across a tags change")
	}
}

// A Connector or ProxyGroup without tags gets the operator's proxy tags
// (PROXY_TAGS): the CRD has no default.
func TestManifests_untaggedObjectsGetTheOperatorsProxyTags(t *testing.T) {
	policy := strings.Replace(labApproversPolicy, `"tag:stray"`, `"tag:lan": ["tag:k8s-operator"], "tag:stray"`, 1)
	l := newLabWith(t, policy, []string{"devices:core", "auth_keys"}, "proxyConfig:\n  defaultTags: tag:lan\n")
	l.deploy(release("lan", connectorValues(t, manifest.Connector{Name: "lan", Hostname: "lan", SubnetRoutes: []string{"10.9.0.0/16"}})))
	l.device("lan", "tag:lan")
	l.deploy(release("pg", proxyGroupValues(t, manifest.ProxyGroup{Name: "pg", Type: manifest.ProxyGroupEgress, Replicas: replicas(1)})))
	l.device("pg-0", "tag:lan")
}

func TestManifests_routeWithHostBitsRefusedByOperator(t *testing.T) {
	l := newLab(t, labApproversPolicy)
	l.deploy(release("homelab", connectorYAML("{subnetRouter: {advertiseRoutes: [10.244.0.1/16]}}")))
	l.noDevice("homelab-connector")
	l.event("Connector homelab: ConnectorInvalid: Connector is invalid: route 10.244.0.1/16 has non-address bits set; expected 10.244.0.0/16")
}

// The deployment failures, with the reason the deployment reports.
func TestManifests_failures(t *testing.T) {
	pgs := proxyGroupYAML("ingress-us", "{type: ingress}")
	for _, tc := range []struct {
		name string
		svc  qoveryapi.ServiceSnapshot
		want string
	}{
		{
			name: "cluster-wide resources not allowed",
			svc: func() qoveryapi.ServiceSnapshot {
				s := release("homelab", connectorValues(t, homelab)+entries(pgs))
				s.AllowClusterWideResources = false
				return s
			}(),
			want: "helm chart tailnet-manifests renders cluster-wide resources (Connector homelab, ProxyGroup ingress-us) but allow_cluster_wide_resources is false",
		},
		{
			name: "no operator, no CRDs",
			svc: func() qoveryapi.ServiceSnapshot {
				s := release("homelab", connectorValues(t, homelab))
				s.ClusterID = bareCluster
				return s
			}(),
			want: "helm upgrade --install failed: unable to build kubernetes objects from release manifest: resource mapping not found for name: \"homelab\" namespace: \"\" from \"\": " +
				"no matches for kind \"Connector\" in version \"tailscale.com/v1alpha1\"\nensure CRDs are installed first",
		},
		{
			name: "unknown version",
			svc:  release("homelab", strings.Replace(connectorYAML("{exitNode: true}"), "v1alpha1", "v1beta1", 1)),
			want: `no matches for kind "Connector" in version "tailscale.com/v1beta1"`,
		},
		{
			name: "no role",
			svc:  release("homelab", connectorYAML("{hostname: homelab}")),
			want: `helm upgrade --install failed: failed to create resource: Connector.tailscale.com "homelab" is invalid: spec: Invalid value: "object": ` +
				`A Connector needs to have at least one of exit node, subnet router or app connector configured.`,
		},
		{
			name: "exit node false is no role",
			svc:  release("homelab", connectorYAML("{exitNode: false}")),
			want: `A Connector needs to have at least one of exit node, subnet router or app connector configured.`,
		},
		{
			name: "hostname and prefix",
			svc:  release("homelab", connectorYAML("{hostname: homelab, hostnamePrefix: hl, exitNode: true}")),
			want: `Connector.tailscale.com "homelab" is invalid: spec: Invalid value: "object": The hostname and hostnamePrefix fields are mutually exclusive.`,
		},
		{
			name: "hostname with replicas",
			svc:  release("homelab", connectorYAML("{hostname: homelab, replicas: 2, exitNode: true}")),
			want: `spec: Invalid value: "object": The hostname field cannot be specified when replicas is greater than 1.`,
		},
		{
			name: "app connector with exit node",
			svc:  release("homelab", connectorYAML("{appConnector: {}, exitNode: true}")),
			want: `The appConnector field is mutually exclusive with exitNode and subnetRouter fields.`,
		},
		{
			name: "hostname pattern",
			svc:  release("homelab", connectorYAML("{hostname: Home_Lab, exitNode: true}")),
			want: `spec.hostname: Invalid value: "Home_Lab": spec.hostname in body should match '^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$'`,
		},
		{
			name: "one-letter hostname",
			svc:  release("homelab", connectorYAML("{hostname: h, exitNode: true}")),
			want: `spec.hostname: Invalid value: "h": spec.hostname in body should match`,
		},
		{
			name: "prefix pattern",
			svc:  release("homelab", connectorYAML("{hostnamePrefix: -hl, exitNode: true}")),
			want: `spec.hostnamePrefix: Invalid value: "-hl": spec.hostnamePrefix in body should match '^[a-z0-9][a-z0-9-]{0,61}$'`,
		},
		{
			name: "tag pattern",
			svc:  release("homelab", connectorYAML("{tags: [k8s], exitNode: true}")),
			want: `spec.tags[0]: Invalid value: "k8s": spec.tags[0] in body should match '^tag:[a-zA-Z][a-zA-Z0-9-]*$'`,
		},
		{
			name: "no routes",
			svc:  release("homelab", connectorYAML("{subnetRouter: {advertiseRoutes: []}}")),
			want: `spec.subnetRouter.advertiseRoutes: Invalid value: 0: spec.subnetRouter.advertiseRoutes in body should have at least 1 items`,
		},
		{
			name: "routes missing",
			svc:  release("homelab", connectorYAML("{subnetRouter: {}}")),
			want: `spec.subnetRouter.advertiseRoutes: Required value`,
		},
		{
			name: "not a CIDR",
			svc:  release("homelab", connectorYAML("{subnetRouter: {advertiseRoutes: [10.0.0.0/16, 10.0.0.0/33]}}")),
			want: `spec.subnetRouter.advertiseRoutes[1]: Invalid value: "10.0.0.0/33": spec.subnetRouter.advertiseRoutes[1] in body must be of type cidr: "10.0.0.0/33"`,
		},
		{
			name: "negative replicas",
			svc:  release("homelab", connectorYAML("{replicas: -1, exitNode: true}")),
			want: `spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0`,
		},
		{
			name: "replicas as text",
			svc:  release("homelab", connectorYAML(`{replicas: "2", exitNode: true}`)),
			want: `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`,
		},
		{
			name: "exit node as text",
			svc:  release("homelab", connectorYAML(`{exitNode: "yes"}`)),
			want: `spec.exitNode: Invalid value: "string": spec.exitNode in body must be of type boolean: "string"`,
		},
		{
			name: "errors aggregated",
			svc:  release("homelab", connectorYAML("{hostname: Home, tags: [k8s], exitNode: true}")),
			want: `Connector.tailscale.com "homelab" is invalid: [spec.hostname: Invalid value: "Home": spec.hostname in body should match '^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$', ` +
				`spec.tags[0]: Invalid value: "k8s": spec.tags[0] in body should match '^tag:[a-zA-Z][a-zA-Z0-9-]*$']`,
		},
		{
			name: "no spec",
			svc:  release("homelab", "manifests:\n  - {apiVersion: tailscale.com/v1alpha1, kind: Connector, metadata: {name: homelab}}\n"),
			want: `Connector.tailscale.com "homelab" is invalid: spec: Required value`,
		},
		{
			name: "no name",
			svc:  release("homelab", "manifests:\n  - {apiVersion: tailscale.com/v1alpha1, kind: Connector, metadata: {}, spec: {exitNode: true}}\n"),
			want: `failed to create resource: Connector.tailscale.com "" is invalid: metadata.name: Required value: name or generateName is required`,
		},
		{
			name: "invalid name",
			svc:  release("homelab", "manifests:\n  - {apiVersion: tailscale.com/v1alpha1, kind: Connector, metadata: {name: Home_Lab}, spec: {exitNode: true}}\n"),
			want: `Connector.tailscale.com "Home_Lab" is invalid: metadata.name: Invalid value: "Home_Lab": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters`,
		},
		{
			name: "invalid Service name",
			svc:  release("db", serviceYAML("1db", "ExternalName", false, cluster.AnnotationTailnetFQDN, "db.tail4f2a.ts.net")),
			want: `failed to create resource: Service "1db" is invalid: metadata.name: Invalid value: "1db": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character`,
		},
		{
			name: "ProxyGroup without type",
			svc:  release("pg", proxyGroupYAML("ingress-us", "{replicas: 2}")),
			want: `failed to create resource: ProxyGroup.tailscale.com "ingress-us" is invalid: spec.type: Required value`,
		},
		{
			name: "ProxyGroup type unknown",
			svc:  release("pg", proxyGroupYAML("ingress-us", "{type: sideways}")),
			want: `spec.type: Unsupported value: "sideways": supported values: "egress", "ingress", "kube-apiserver"`,
		},
		{
			name: "ProxyGroup negative replicas",
			svc:  release("pg", proxyGroupYAML("ingress-us", "{type: ingress, replicas: -2}")),
			want: `ProxyGroup.tailscale.com "ingress-us" is invalid: spec.replicas: Invalid value: -2: spec.replicas in body should be greater than or equal to 0`,
		},
		{
			name: "ProxyGroup prefix pattern",
			svc:  release("pg", proxyGroupYAML("ingress-us", "{type: ingress, hostnamePrefix: ING}")),
			want: `spec.hostnamePrefix: Invalid value: "ING": spec.hostnamePrefix in body should match`,
		},
		{
			name: "rendered twice on install",
			svc:  release("homelab", connectorYAML("{exitNode: true}")+entries(connectorYAML("{exitNode: true}"))),
			want: `helm upgrade --install failed: failed to create resource: connectors.tailscale.com "homelab" already exists`,
		},
		{
			name: "no apiVersion and kind",
			svc:  release("homelab", "manifests:\n  - {metadata: {name: homelab}}\n"),
			want: `helm upgrade --install failed: unable to build kubernetes objects from release manifest: error validating "": error validating data: [apiVersion not set, kind not set]`,
		},
		{
			name: "entry not an object",
			svc:  release("homelab", "manifests:\n  - homelab\n"),
			want: `unable to build kubernetes objects from release manifest: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go value of type map[string]interface {}`,
		},
		{
			name: "annotation not a string",
			svc:  release("db", "manifests:\n  - {apiVersion: v1, kind: Service, metadata: {name: db, annotations: {tailscale.com/proxy-group: 3}}, spec: {type: ExternalName}}\n"),
			want: `ValidationError(Service.metadata.annotations.tailscale.com/proxy-group): invalid type for io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta.annotations: got "integer", expected "string"`,
		},
		{
			name: "manifests not a list",
			svc:  release("homelab", "manifests: 3\n"),
			want: `helm upgrade --install failed: template: tailnet-manifests/templates/manifests.yaml:1:11: executing "tailnet-manifests/templates/manifests.yaml" at <.Values.manifests>: range can't iterate over 3`,
		},
		{
			name: "values not YAML",
			svc:  release("homelab", "manifests: [\n"),
			want: `helm upgrade --install failed: failed to parse qtail-manifests.yaml: error converting YAML to JSON: yaml: line`,
		},
		{
			name: "values not a map",
			svc:  release("homelab", "- manifests\n"),
			want: `failed to parse qtail-manifests.yaml: error unmarshaling JSON: json: cannot unmarshal array into Go value of type map[string]interface {}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLab(t, labApproversPolicy)
			err := l.engine.Deploy(context.Background(), tc.svc)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant it to say %s", err, tc.want)
			}
			if h := l.hostnames(); len(h) != 0 {
				t.Fatalf("a failed deployment made devices %v", h)
			}
			if n := len(l.engine.Connectors()) + len(l.engine.ProxyGroups()) + len(l.engine.EgressServices()); n != 0 {
				t.Fatalf("a failed deployment left %d objects", n)
			}
		})
	}
}

// A failed deployment changes nothing: Helm's --atomic rolls back.
func TestManifests_failedUpgradeKeepsTheRelease(t *testing.T) {
	l := newLab(t, labApproversPolicy)
	l.deploy(release("homelab", connectorValues(t, homelab)))
	before := l.device("homelab", "tag:k8s")

	// A valid Connector change with an invalid ProxyGroup next to it.
	changed := homelab
	changed.Hostname = "gateway"
	bad := release("homelab", connectorValues(t, changed)+entries(proxyGroupYAML("pg", "{type: sideways}")))
	err := l.engine.Deploy(context.Background(), bad)
	if err == nil || !strings.Contains(err.Error(), `failed to create resource: ProxyGroup.tailscale.com "pg" is invalid`) {
		t.Fatalf("error %v", err)
	}
	if after := l.device("homelab", "tag:k8s"); after.ID != before.ID {
		t.Fatal("the failed upgrade replaced the device")
	}
	l.noDevice("gateway")
	if cs := l.engine.Connectors(); len(cs) != 1 || cs[0].Hostname != "homelab" {
		t.Fatalf("connectors %+v", cs)
	}

	// An invalid change of an existing object is a failed patch.
	err = l.engine.Deploy(context.Background(), release("homelab", connectorYAML("{hostname: homelab, hostnamePrefix: hl, exitNode: true}")))
	if err == nil || !strings.Contains(err.Error(), `helm upgrade --install failed: cannot patch "homelab" with kind Connector: Connector.tailscale.com "homelab" is invalid:`) {
		t.Fatalf("error %v", err)
	}
}

func TestManifests_ownershipConflicts(t *testing.T) {
	l := newLab(t, labApproversPolicy)
	l.deploy(release("connector-a", connectorValues(t, homelab)))
	err := l.engine.Deploy(context.Background(), release("connector-b", connectorValues(t, homelab)))
	want := `helm upgrade --install failed: rendered manifests contain a resource that already exists. Unable to continue with install: ` +
		`Connector "homelab" in namespace "" exists and cannot be imported into the current release: invalid ownership metadata; ` +
		`annotation validation error: key "meta.helm.sh/release-name" must equal "connector-b": current value is "connector-a"`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
	if cs := l.engine.Connectors(); len(cs) != 1 || cs[0].HelmID != "helm-connector-a" {
		t.Fatalf("connectors %+v", cs)
	}

	// The same for a ProxyGroup, and a release that already owns objects
	// says "update".
	l.deploy(release("pg-a", proxyGroupYAML("ingress-us", "{type: ingress}")))
	err = l.engine.Deploy(context.Background(), release("connector-a", connectorValues(t, homelab)+entries(proxyGroupYAML("ingress-us", "{type: ingress}"))))
	if err == nil || !strings.Contains(err.Error(), `Unable to continue with update: ProxyGroup "ingress-us" in namespace "" exists`) ||
		!strings.Contains(err.Error(), `must equal "connector-a": current value is "pg-a"`) {
		t.Fatalf("error %v", err)
	}

	// Services conflict within a namespace only.
	db := serviceYAML("db", "ExternalName", false, cluster.AnnotationTailnetFQDN, "db.tail4f2a.ts.net")
	l.deploy(release("db-a", db))
	err = l.engine.Deploy(context.Background(), release("db-b", db))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`Service "db" in namespace %q exists and cannot be imported into the current release`, labNamespace)) {
		t.Fatalf("error %v", err)
	}
	other := release("db-b", db)
	other.Namespace = "z5678ef01-staging"
	l.deploy(other)
	if es := l.engine.EgressServices(); len(es) != 2 {
		t.Fatalf("egress services %+v", es)
	}

	// Same release name in another environment: the namespace differs.
	twin := release("connector-a", connectorValues(t, homelab))
	twin.ID, twin.Namespace = "helm-twin", "z5678ef01-staging"
	err = l.engine.Deploy(context.Background(), twin)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`key "meta.helm.sh/release-namespace" must equal "z5678ef01-staging": current value is %q`, labNamespace)) {
		t.Fatalf("error %v", err)
	}
}

func TestManifests_proxyGroups(t *testing.T) {
	l := newLab(t, labApproversPolicy)
	g := manifest.ProxyGroup{Name: "ingress-us", Type: manifest.ProxyGroupIngress, HostnamePrefix: "ing-us"}
	svc := release("ingress-us", proxyGroupValues(t, g))
	l.deploy(svc)
	if got := l.hostnames(); !slices.Equal(got, []string{"ing-us-0", "ing-us-1"}) {
		t.Fatalf("devices %v", got)
	}
	d := l.device("ing-us-0", "tag:k8s")
	if len(d.AdvertisedRoutes) != 0 || len(d.EnabledRoutes) != 0 {
		t.Fatalf("a ProxyGroup replica has routes: %+v", d)
	}
	pgs := l.engine.ProxyGroups()
	if len(pgs) != 1 || pgs[0].Type != "ingress" || pgs[0].Replicas != 2 || pgs[0].HelmID != svc.ID || pgs[0].ClusterID != labCluster ||
		len(pgs[0].DeviceIDs()) != 2 || pgs[0].DeviceIDs()[0] != d.ID || !slices.Equal(pgs[0].Tags, []string{"tag:k8s"}) {
		t.Fatalf("proxy groups %+v", pgs)
	}

	// Without a prefix the replicas are named after the ProxyGroup.
	g.HostnamePrefix, g.Replicas, g.Tags = "", replicas(3), []string{"tag:k8s-prod"}
	l.deploy(release("ingress-us", proxyGroupValues(t, g)))
	if got := l.hostnames(); !slices.Equal(got, []string{"ingress-us-0", "ingress-us-1", "ingress-us-2"}) {
		t.Fatalf("devices %v", got)
	}
	l.device("ingress-us-2", "tag:k8s-prod")

	// The type is immutable.
	g.Type = manifest.ProxyGroupEgress
	err := l.engine.Deploy(context.Background(), release("ingress-us", proxyGroupValues(t, g)))
	want := `helm upgrade --install failed: cannot patch "ingress-us" with kind ProxyGroup: ProxyGroup.tailscale.com "ingress-us" is invalid: ` +
		`spec.type: Invalid value: "string": ProxyGroup type is immutable`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
	if pgs := l.engine.ProxyGroups(); pgs[0].Type != "ingress" {
		t.Fatalf("the type changed: %+v", pgs)
	}

	// Deleted, then created again: any type.
	l.remove(svc)
	if got := l.hostnames(); len(got) != 0 {
		t.Fatalf("devices after the deletion: %v", got)
	}
	l.deploy(release("ingress-us", proxyGroupValues(t, g)))
	if pgs := l.engine.ProxyGroups(); len(pgs) != 1 || pgs[0].Type != "egress" {
		t.Fatalf("proxy groups %+v", pgs)
	}
}

func TestManifests_egressServices(t *testing.T) {
	fqdn, ip, legacy, pg := cluster.AnnotationTailnetFQDN, cluster.AnnotationTailnetIP, cluster.AnnotationLegacyTailnetIP, cluster.AnnotationProxyGroup
	for _, tc := range []struct {
		name   string
		values string
		// problem is "" for a valid Service.
		problem string
	}{
		{"fqdn", serviceYAML("db", "ExternalName", false, fqdn, "db.tail4f2a.ts.net"), ""},
		{"fqdn with final dot", serviceYAML("db", "ExternalName", true, fqdn, "db.tail4f2a.ts.net."), ""},
		{"ip", serviceYAML("db", "ExternalName", false, ip, "100.64.0.9"), ""},
		{"legacy ip", serviceYAML("db", "ExternalName", false, legacy, "fd7a:115c:a1e0::9"), ""},
		{"both", serviceYAML("db", "ExternalName", false, fqdn, "db.tail4f2a.ts.net", ip, "100.64.0.9"),
			"INVALIDSERVICE: unable to provision proxy resources: invalid Service: only one of annotations tailscale.com/tailnet-ip and tailscale.com/tailnet-fqdn can be set"},
		{"fqdn outside the tailnet", serviceYAML("db", "ExternalName", false, fqdn, "db.example.com"),
			`invalid value of annotation tailscale.com/tailnet-fqdn: "db.example.com" does not appear to be a valid MagicDNS name`},
		{"fqdn without a dot", serviceYAML("db", "ExternalName", false, fqdn, "db"), `"db" does not appear to be a valid MagicDNS name`},
		{"bad ip", serviceYAML("db", "ExternalName", false, ip, "100.64.0.999"),
			`invalid value of annotation tailscale.com/tailnet-ip: "100.64.0.999" could not be parsed as a valid IP Address, error: `},
		{"bad hostname", serviceYAML("db", "ExternalName", false, fqdn, "db.tail4f2a.ts.net", "tailscale.com/hostname", "-db"),
			`invalid Tailscale hostname specified "-db"`},
		{"ProxyGroup", serviceYAML("db", "ExternalName", false, fqdn, "db.tail4f2a.ts.net", pg, "egress-us"), ""},
		{"ProxyGroup missing", serviceYAML("db", "ExternalName", false, fqdn, "db.tail4f2a.ts.net", pg, "egress-eu"),
			`ProxyGroup "egress-eu" not found on cluster cluster-lab, waiting...`},
		{"ProxyGroup of type ingress", serviceYAML("db", "ExternalName", false, fqdn, "db.tail4f2a.ts.net", pg, "ingress-us"),
			"INVALIDSERVICE: invalid egress Service: egress Service references ProxyGroup of type ingress, must be type egress"},
		{"ProxyGroup without ports", serviceYAML("db", "ExternalName", true, ip, "100.64.0.9", pg, "egress-us"),
			"egress Service for ProxyGroup must have at least one target Port specified"},
		{"ProxyGroup with a ClusterIP Service", serviceYAML("db", "ClusterIP", false, ip, "100.64.0.9", pg, "egress-us"),
			"unexpected egress Service type ClusterIP. The only supported type is ExternalName."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLab(t, labApproversPolicy)
			l.deploy(release("proxy-groups", proxyGroupYAML("egress-us", "{type: egress, replicas: 1}")+
				entries(proxyGroupYAML("ingress-us", "{type: ingress, replicas: 1}"))))
			devices := len(l.tailnet.Devices())
			svc := release("db", tc.values)
			l.deploy(svc)
			es := l.engine.EgressServices()
			if len(es) != 1 {
				t.Fatalf("egress services %+v", es)
			}
			s := es[0]
			if s.HelmID != svc.ID || s.ClusterID != labCluster || s.Namespace != labNamespace || s.Name != "db" {
				t.Fatalf("egress service %+v", s)
			}
			if s.Valid != (tc.problem == "") || !strings.Contains(s.Problem, tc.problem) {
				t.Fatalf("valid %v, problem %q; want %q", s.Valid, s.Problem, tc.problem)
			}
			if tc.problem != "" && !slices.ContainsFunc(l.engine.Events(), func(e string) bool {
				return strings.HasPrefix(e, "Service "+labNamespace+"/db: ") && strings.Contains(e, tc.problem)
			}) {
				t.Fatalf("no event about db says %q; events %q", tc.problem, l.engine.Events())
			}
			// A valid Service without a ProxyGroup gets a proxy device of
			// its own, NAMESPACE-NAME, and its externalName points at the
			// proxy's headless Service in the operator's namespace.
			ownProxy := tc.problem == "" && !strings.Contains(tc.name, "ProxyGroup")
			want := devices
			if ownProxy {
				want++
				d := l.device(labNamespace+"-db", "tag:k8s")
				if s.DeviceID != d.ID || s.ProxyHostname != labNamespace+"-db" || !slices.Equal(s.ProxyTags, []string{"tag:k8s"}) {
					t.Fatalf("egress service %+v, device %+v", s, d)
				}
			}
			if n := len(l.tailnet.Devices()); n != want {
				t.Fatalf("%d devices, then %d; want %d", devices, n, want)
			}
			rewritten := strings.HasPrefix(s.ExternalName, "ts-db-") && strings.HasSuffix(s.ExternalName, ".z1234abcd-tailscale.svc.cluster.local")
			if rewritten != (tc.problem == "") {
				t.Fatalf("externalName %q", s.ExternalName)
			}
		})
	}
}

// The egress proxy of a Service without a ProxyGroup, as the operator runs
// it: named and tagged by the annotations, its auth key minted with the
// OAuth client, renamed in place, removed with the Service.
func TestManifests_egressProxyDevices(t *testing.T) {
	l := newLab(t, labPolicy)
	fqdn, host, tags := cluster.AnnotationTailnetFQDN, cluster.AnnotationHostname, cluster.AnnotationTags
	db := release("db", serviceYAML("db", "ExternalName", false, fqdn, "db.tail4f2a.ts.net", host, "prod-db", tags, "tag:k8s-prod"))
	l.deploy(db)
	d := l.device("prod-db", "tag:k8s-prod")
	first := l.engine.EgressServices()[0]
	if !strings.HasPrefix(first.ExternalName, "ts-db-") || len(strings.Split(first.ExternalName, ".")[0]) != len("ts-db-")+5 {
		t.Fatalf("externalName %q", first.ExternalName)
	}

	// A new hostname renames the proxy's device; the externalName stays.
	l.deploy(release("db", serviceYAML("db", "ExternalName", false, fqdn, "db.tail4f2a.ts.net", host, "prod-db-2", tags, "tag:k8s-prod")))
	if again := l.device("prod-db-2", "tag:k8s-prod"); again.ID != d.ID {
		t.Fatalf("a rename replaced the egress proxy %s with %s", d.ID, again.ID)
	}
	if es := l.engine.EgressServices()[0]; es.ExternalName != first.ExternalName {
		t.Fatalf("externalName %q, then %q", first.ExternalName, es.ExternalName)
	}

	// Two egress Services under one hostname: two devices, the second
	// with a suffixed MagicDNS name (the operator checks nothing).
	l.deploy(release("cache", serviceYAML("cache", "ExternalName", false, fqdn, "cache.tail4f2a.ts.net", host, "prod-db-2")))
	devs := l.devices("prod-db-2")
	if len(devs) != 2 || devs[1].Name != "prod-db-2-1.tail1234.ts.net" || !slices.Equal(devs[1].Tags, []string{"tag:k8s"}) {
		t.Fatalf("devices %+v", devs)
	}
	l.event("Service " + labNamespace + "/cache: hostname prod-db-2 is already used by device")

	// Tags the OAuth client does not own: the proxy fails, no device.
	l.deploy(release("stray", serviceYAML("stray", "ExternalName", false, fqdn, "stray.tail4f2a.ts.net", tags, "tag:stray")))
	l.noDevice(labNamespace + "-stray")
	l.event("Service " + labNamespace + "/stray: ProxyFailed: failed to provision: failed to create or get API key secret: requested tags [tag:stray] are invalid or not permitted")

	// An invalid tag annotation is refused before anything.
	l.deploy(release("bad", serviceYAML("bad", "ExternalName", false, fqdn, "bad.tail4f2a.ts.net", tags, "k8s")))
	l.event(`Service ` + labNamespace + `/bad: INVALIDSERVICE: unable to provision proxy resources: invalid Service: tailscale.com/tags annotation contains invalid tag "k8s"`)

	// Uninstalled, the Service takes its proxy with it.
	l.remove(db)
	l.noDevice("prod-db")
	if n := len(l.devices("prod-db-2")); n != 1 {
		t.Fatalf("%d devices prod-db-2 after removing db", n)
	}

	// The earlier simulation made no proxy.
	old := newLab(t, labPolicy)
	old.engine.SetCompat(cluster.Compat{NoEgressProxies: true})
	old.deploy(db)
	old.noDevice("prod-db")
	if es := old.engine.EgressServices()[0]; es.ExternalName != "placeholder" || !es.Valid {
		t.Fatalf("with Compat.NoEgressProxies: %+v", es)
	}
}

// Through a ProxyGroup, the externalName points at a ClusterIP Service in
// the operator's namespace and no device is made.
func TestManifests_egressThroughProxyGroup(t *testing.T) {
	l := newLab(t, labPolicy)
	l.deploy(release("pg", proxyGroupYAML("egress-us", "{type: egress, replicas: 1}")))
	devices := len(l.tailnet.Devices())
	l.deploy(release("db", serviceYAML("db", "ExternalName", false, cluster.AnnotationTailnetFQDN, "db.tail4f2a.ts.net", cluster.AnnotationProxyGroup, "egress-us")))
	es := l.engine.EgressServices()[0]
	if !es.Valid || es.DeviceID != "" || !strings.HasPrefix(es.ExternalName, "ts-db-") || !strings.HasSuffix(es.ExternalName, ".z1234abcd-tailscale.svc.cluster.local") {
		t.Fatalf("egress service %+v", es)
	}
	if n := len(l.tailnet.Devices()); n != devices {
		t.Fatalf("%d devices, then %d", devices, n)
	}
}

func TestManifests_egressServiceRecord(t *testing.T) {
	l := newLab(t, labPolicy)
	v, err := manifest.RenderEgressService(manifest.EgressService{
		Name: "db", TailnetFQDN: "db.tail4f2a.ts.net", ProxyGroup: "egress-us",
		Ports: []manifest.ServicePort{{Port: 5432, Protocol: "TCP"}, {Port: 53, Protocol: "UDP"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	l.deploy(release("db", v))
	want := cluster.EgressService{
		HelmID: "helm-db", ClusterID: labCluster, Namespace: labNamespace, Name: "db",
		TailnetFQDN: "db.tail4f2a.ts.net", ProxyGroup: "egress-us", Type: "ExternalName", ExternalName: "placeholder",
		Ports:   []cluster.ServicePort{{Name: "tcp-5432", Port: 5432, Protocol: "TCP"}, {Name: "udp-53", Port: 53, Protocol: "UDP"}},
		Problem: `ProxyGroup "egress-us" not found on cluster cluster-lab, waiting...`,
	}
	es := l.engine.EgressServices()
	if len(es) != 1 || fmt.Sprintf("%+v", es[0]) != fmt.Sprintf("%+v", want) {
		t.Fatalf("egress services %+v\nwant %+v", es, want)
	}

	// The operator waits for the ProxyGroup: once it exists the Service is
	// valid; when it goes, the Service is invalid again.
	pgs := release("egress-us", proxyGroupYAML("egress-us", "{type: egress}"))
	l.deploy(pgs)
	if es := l.engine.EgressServices(); !es[0].Valid || es[0].Problem != "" {
		t.Fatalf("after the ProxyGroup came: %+v", es[0])
	}
	l.remove(pgs)
	if es := l.engine.EgressServices(); es[0].Valid {
		t.Fatalf("after the ProxyGroup went: %+v", es[0])
	}
	events := l.engine.Events()
	if last := events[len(events)-1]; last != `Service `+labNamespace+`/db: ProxyGroup "egress-us" not found on cluster cluster-lab, waiting...` {
		t.Fatalf("last event %q", last)
	}

	// A Service without a tailnet target is no egress Service.
	l.deploy(release("plain", serviceYAML("web", "ClusterIP", false)))
	if es := l.engine.EgressServices(); len(es) != 1 {
		t.Fatalf("egress services %+v", es)
	}
}

func TestManifests_egressServiceWithoutOperator(t *testing.T) {
	l := newLab(t, labPolicy)
	svc := release("db", serviceYAML("db", "ExternalName", false, cluster.AnnotationTailnetIP, "100.64.0.9"))
	svc.ClusterID = bareCluster
	l.deploy(svc)
	es := l.engine.EgressServices()
	if len(es) != 1 || es[0].Valid || es[0].ClusterID != bareCluster {
		t.Fatalf("egress services %+v", es)
	}
	l.event("Service " + labNamespace + "/db: no Tailscale operator runs on cluster cluster-bare, the annotations have no effect")
}

// billingApp is an application exposed through the ProxyGroup ingress-us
// as billing.
func billingApp(id, kubeName, hostname string) qoveryapi.ServiceSnapshot {
	return qoveryapi.ServiceSnapshot{
		Kind: "APPLICATION", ID: id, Name: "billing-api", ClusterID: labCluster, Namespace: "zdef-prod", KubernetesName: kubeName,
		Ports: []qoveryapi.Port{{Name: "https", InternalPort: 443, Protocol: "HTTP"}},
		AnnotationsGroups: []qoveryapi.AnnotationsGroup{{ID: "group-1", Scopes: []string{"SERVICES"}, Annotations: []qoveryapi.Annotation{
			{Key: cluster.AnnotationExpose, Value: "true"}, {Key: cluster.AnnotationHostname, Value: hostname}, {Key: cluster.AnnotationProxyGroup, Value: "ingress-us"},
		}}},
	}
}

// An application exposed through a ProxyGroup: the operator says when it
// cannot serve it.
func TestManifests_exposureThroughProxyGroup(t *testing.T) {
	l := newLab(t, labPolicy)
	app := billingApp("app-1", "app-z1234abcd", "billing")
	l.deploy(app)
	l.event(`Service zdef-prod/app-z1234abcd: cannot be served by ProxyGroup "ingress-us" as Tailscale Service svc:billing: ProxyGroup "ingress-us" does not exist on cluster cluster-lab`)

	// The operator reconciles the Service when the ProxyGroup appears.
	l.deploy(release("pg", proxyGroupYAML("ingress-us", "{type: egress, replicas: 1}")))
	l.event(`Service zdef-prod/app-z1234abcd: IngressSvcInvalid: ProxyGroup "ingress-us" is of type "egress" but must be of type "ingress"`)

	// No replica yet: the ProxyGroup is not available.
	l.remove(release("pg"))
	l.deploy(release("pg", proxyGroupYAML("ingress-us", "{type: ingress, replicas: 0}")))
	l.event(`Service zdef-prod/app-z1234abcd: ProxyGroup "ingress-us" is not (yet) ready`)

	// Available, but the OAuth client lacks the services scope.
	l.deploy(release("pg", proxyGroupYAML("ingress-us", "{type: ingress, replicas: 1}")))
	l.event(`Service zdef-prod/app-z1234abcd: error getting Tailscale Service "billing": calling actor does not have enough permissions to perform this function (403)`)
	if n := len(l.tailnet.Services()); n != 0 {
		t.Fatalf("%d Tailscale Services without the scope", n)
	}
	l.noDevice("billing")

	// The earlier simulation served it anyway.
	old := newLab(t, labPolicy)
	old.engine.SetCompat(cluster.Compat{ProxyGroupIngressWithoutService: true})
	old.deploy(release("pg", proxyGroupYAML("ingress-us", "{type: ingress, replicas: 0}")))
	old.deploy(app)
	old.event(`Service zdef-prod/app-z1234abcd: served by ProxyGroup "ingress-us" as Tailscale Service svc:billing; no proxy device of its own`)
}

// With the services scope the operator makes svc:HOSTNAME, shares one
// another operator made, refuses one someone else made, refuses two
// Services under one hostname, and cleans up.
func TestManifests_tailscaleServiceOfAnIngressProxyGroup(t *testing.T) {
	l := newLabWith(t, labPolicy, []string{"devices:core", "auth_keys", "services"}, "")
	l.deploy(release("pg", proxyGroupYAML("ingress-us", "{type: ingress, replicas: 2}")))
	app := billingApp("app-1", "app-z1234abcd", "billing")
	l.deploy(app)
	l.event(`Service zdef-prod/app-z1234abcd: served by ProxyGroup "ingress-us" as Tailscale Service svc:billing`)
	svcs := l.tailnet.Services()
	op := l.engine.Operators()[0]
	if len(svcs) != 1 || svcs[0].Name != "svc:billing" || !slices.Equal(svcs[0].Tags, []string{"tag:k8s"}) || len(svcs[0].Addrs) != 2 ||
		svcs[0].Annotations["tailscale.com/owner-references"] != `{"ownerRefs":[{"operatorID":"`+op.NodeID+`"}]}` {
		t.Fatalf("Tailscale Services %+v (operator %s)", svcs, op.NodeID)
	}

	// A second Service under the same hostname: both are refused.
	l.deploy(billingApp("app-2", "app-z5678ef01", "billing"))
	l.event(`Service zdef-prod/app-z5678ef01: IngressSvcInvalid: found duplicate Service "zdef-prod/app-z1234abcd" for hostname "billing" - multiple HA Services for the same hostname on the same tailnet are not allowed`)
	l.deploy(app)
	l.event(`Service zdef-prod/app-z1234abcd: IngressSvcInvalid: found duplicate Service "zdef-prod/app-z5678ef01" for hostname "billing"`)
	l.remove(billingApp("app-2", "app-z5678ef01", "billing"))

	// A new hostname: the old Tailscale Service goes, the new one comes.
	l.deploy(billingApp("app-1", "app-z1234abcd", "payments"))
	if svcs := l.tailnet.Services(); len(svcs) != 1 || svcs[0].Name != "svc:payments" {
		t.Fatalf("after the rename: %+v", svcs)
	}

	// Someone made svc:reports by hand: the operator does not take it.
	admin, secret := l.tailnet.SeedOAuthClient("", "", []string{"services"}, []string{"tag:k8s-operator"})
	c, err := l.tailnet.Caller(admin, secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutService(tailnetapi.Service{Name: "svc:reports", Ports: []string{"tcp:443"}}); err != nil {
		t.Fatal(err)
	}
	l.deploy(billingApp("app-3", "app-z9999aaaa", "reports"))
	l.event(`Service zdef-prod/app-z9999aaaa: InvalidTailscaleService: error ensuring ownership of Tailscale Service reports: Tailscale Service svc:reports exists, but does not contain owner annotation`)

	// One another operator made is shared, and given back on unexpose.
	if _, err := c.PutService(tailnetapi.Service{Name: "svc:shared", Ports: []string{"do-not-validate"},
		Annotations: map[string]string{"tailscale.com/owner-references": `{"ownerRefs":[{"operatorID":"nOTHERCNTRL"}]}`}}); err != nil {
		t.Fatal(err)
	}
	shared := billingApp("app-4", "app-z4444bbbb", "shared")
	l.deploy(shared)
	v, _ := c.GetService("svc:shared")
	if want := `{"ownerRefs":[{"operatorID":"nOTHERCNTRL"},{"operatorID":"` + op.NodeID + `"}]}`; v.Annotations["tailscale.com/owner-references"] != want {
		t.Fatalf("shared owners %s, want %s", v.Annotations["tailscale.com/owner-references"], want)
	}
	l.remove(shared)
	v, err = c.GetService("svc:shared")
	if err != nil || v.Annotations["tailscale.com/owner-references"] != `{"ownerRefs":[{"operatorID":"nOTHERCNTRL"}]}` {
		t.Fatalf("after unexposing: %+v, %v", v, err)
	}

	// Unexposed, the operator's own Service goes.
	l.remove(app)
	if _, err := c.GetService("svc:payments"); !tailnetapi.IsNotFound(err) {
		t.Fatalf("svc:payments after the application went: %v", err)
	}
}

func TestManifests_values(t *testing.T) {
	a := manifest.Connector{Name: "a", Hostname: "router-a", ExitNode: true}
	b := manifest.Connector{Name: "b", Hostname: "router-b", ExitNode: true}
	for _, tc := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"later file wins", []string{connectorValues(t, a), connectorValues(t, b)}, []string{"router-b"}},
		{"file without the key", []string{connectorValues(t, a), "replicaCount: 2\n"}, []string{"router-a"}},
		{"null removes the list", []string{connectorValues(t, a), "manifests: null\n"}, nil},
		{"empty list", []string{"manifests: []\n"}, nil},
		{"comments only", []string{"# nothing yet\n"}, nil},
		{"both in one list", []string{connectorValues(t, a) + entries(connectorValues(t, b))}, []string{"router-a", "router-b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLab(t, labPolicy)
			l.deploy(release("routers", tc.files...))
			if got := l.hostnames(); !slices.Equal(got, tc.want) {
				t.Fatalf("devices %v, want %v", got, tc.want)
			}
		})
	}
}

func TestManifests_helmServiceWithoutManifests(t *testing.T) {
	l := newLab(t, labPolicy)
	// Any other chart, even where no operator runs, deploys as before.
	other := release("redis", "replicaCount: 2\nauth:\n  enabled: false\n")
	other.ClusterID, other.AllowClusterWideResources = bareCluster, false
	l.deploy(other)

	// A release that owned objects loses them when its values stop
	// rendering any.
	svc := release("homelab", connectorValues(t, homelab))
	l.deploy(svc)
	l.device("homelab", "tag:k8s")
	l.deploy(release("homelab", "replicaCount: 1\n"))
	l.noDevice("homelab")
	if cs := l.engine.Connectors(); len(cs) != 0 {
		t.Fatalf("connectors %+v", cs)
	}
}

func TestManifests_upgradeDropsWhatIsNoLongerRendered(t *testing.T) {
	l := newLab(t, labApproversPolicy)
	both := connectorValues(t, homelab) + entries(proxyGroupYAML("ingress-us", "{type: ingress}"))
	l.deploy(release("net", both))
	if got := l.hostnames(); !slices.Equal(got, []string{"homelab", "ingress-us-0", "ingress-us-1"}) {
		t.Fatalf("devices %v", got)
	}
	l.deploy(release("net", proxyGroupYAML("ingress-us", "{type: ingress}")))
	if got := l.hostnames(); !slices.Equal(got, []string{"ingress-us-0", "ingress-us-1"}) {
		t.Fatalf("devices %v", got)
	}
	if len(l.engine.Connectors()) != 0 || len(l.engine.ProxyGroups()) != 1 {
		t.Fatalf("connectors %+v, proxy groups %+v", l.engine.Connectors(), l.engine.ProxyGroups())
	}
}

func TestManifests_deleteAndReset(t *testing.T) {
	l := newLab(t, labApproversPolicy)
	all := connectorValues(t, homelab) +
		entries(proxyGroupYAML("egress-us", "{type: egress}")) +
		entries(serviceYAML("db", "ExternalName", false, cluster.AnnotationTailnetFQDN, "db.tail4f2a.ts.net", cluster.AnnotationProxyGroup, "egress-us"))
	svc := release("net", all)
	l.deploy(svc)
	if len(l.engine.Connectors()) != 1 || len(l.engine.ProxyGroups()) != 1 || len(l.engine.EgressServices()) != 1 || !l.engine.EgressServices()[0].Valid {
		t.Fatalf("connectors %+v, proxy groups %+v, egress %+v", l.engine.Connectors(), l.engine.ProxyGroups(), l.engine.EgressServices())
	}
	l.remove(svc)
	if got := l.hostnames(); len(got) != 0 {
		t.Fatalf("devices after the deletion: %v", got)
	}
	if len(l.engine.Connectors())+len(l.engine.ProxyGroups())+len(l.engine.EgressServices()) != 0 {
		t.Fatal("objects left after the deletion")
	}
	// The name is free again for another release.
	l.deploy(release("net-2", connectorValues(t, homelab)))

	l.engine.Reset()
	if len(l.engine.Connectors())+len(l.engine.ProxyGroups())+len(l.engine.EgressServices())+len(l.engine.Operators()) != 0 {
		t.Fatal("objects left after Reset")
	}
}

// The whole world: a manifests Helm service created through the Qovery
// API ends DEPLOYED with its devices, or in DEPLOYMENT_ERROR with the
// reason.
func TestManifests_throughQovery(t *testing.T) {
	t.Parallel()
	w := newWorld(t, true)
	w.env.InstallOperator(t, region)
	repo, err := w.q.CreateHelmRepository(w.ctx, w.env.Seed().OrganizationID, &qovery.HelmRepositoryRequest{
		Name: "qtail-charts", Kind: qovery.HelmRepositoryKindHTTPS, URL: "https://charts.example.com/qtail",
	})
	if err != nil {
		t.Fatal(err)
	}
	create := func(envID, name, values string, clusterWide bool) string {
		t.Helper()
		h, err := w.q.CreateHelm(w.ctx, envID, &qovery.HelmRequest{
			Name:                      name,
			Source:                    qovery.HelmSourceRequest{HelmRepository: &qovery.HelmRepositorySourceRequest{Repository: repo.ID, ChartName: "tailnet-manifests", ChartVersion: "0.1.0"}},
			Arguments:                 []string{"--wait", "--atomic"},
			AllowClusterWideResources: clusterWide,
			ValuesOverride:            qovery.HelmValuesOverride{File: &qovery.HelmValuesFile{Raw: &qovery.HelmRawValues{Values: []qovery.HelmRawValuesFile{{Name: manifest.ManifestsFileName, Content: values}}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return h.ID
	}

	c := manifest.Connector{Name: "homelab", HostnamePrefix: "homelab", Replicas: replicas(2), SubnetRoutes: []string{"10.244.0.0/16"}}
	id := create(w.envID(), "homelab", connectorValues(t, c), true)
	w.mustDeploy(id)
	for _, h := range []string{"homelab-0", "homelab-1"} {
		d, ok := w.env.DeviceByHostname(h)
		if !ok || !slices.Equal(d.AdvertisedRoutes, []string{"10.244.0.0/16"}) {
			t.Fatalf("device %s: %+v (present %v)", h, d, ok)
		}
	}
	if cs := w.env.Cluster.Connectors(); len(cs) != 1 || cs[0].HelmID != id {
		t.Fatalf("connectors %+v", cs)
	}

	w.mustFail(create(w.envID(), "homelab-copy", connectorValues(t, c), false),
		"helm chart tailnet-manifests renders cluster-wide resources (Connector homelab) but allow_cluster_wide_resources is false")
	w.mustFail(create(w.envID(), "homelab-twin", connectorValues(t, c), true),
		`Unable to continue with install: Connector "homelab" in namespace "" exists`, `must equal "homelab-twin": current value is "homelab"`)
	w.mustFail(create(w.env.Seed().Regions["eu-west-3"].EnvironmentID, "homelab-eu", connectorValues(t, c), true),
		`no matches for kind "Connector" in version "tailscale.com/v1alpha1"`, "ensure CRDs are installed first")

	if err := w.q.DeleteHelm(w.ctx, id); err != nil {
		t.Fatal(err)
	}
	get := func(ctx context.Context) (*qovery.Status, error) { return w.q.GetHelmStatus(ctx, id) }
	if err := qovery.WaitForDeletion(w.ctx, get, qovery.WaitOptions{PollInterval: 5 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	w.noDevice("homelab-0")
	w.noDevice("homelab-1")
}

// proxyClassYAML is a values file with one ProxyClass.
func proxyClassYAML(name, spec string) string {
	return fmt.Sprintf("manifests:\n  - {apiVersion: tailscale.com/v1alpha1, kind: ProxyClass, metadata: {name: %s}, spec: %s}\n", name, spec)
}

// A Connector, ProxyGroup or Service that names a ProxyClass gets no proxy
// until the ProxyClass exists and is Ready.
func TestManifests_proxyClass(t *testing.T) {
	l := newLab(t, labApproversPolicy)
	router := manifest.Connector{Name: "router", Hostname: "router", SubnetRoutes: []string{"10.9.0.0/16"}, ProxyClass: "monitored"}
	l.deploy(release("router", connectorValues(t, router)))
	l.noDevice("router")
	l.event(`Connector router: error verifying ProxyClass for Connector: error getting ProxyClass monitored: proxyclasses.tailscale.com "monitored" not found`)

	// The ProxyClass wants a ServiceMonitor: not Ready without the
	// Prometheus operator's CRD.
	l.deploy(release("classes", proxyClassYAML("monitored", "{metrics: {enable: true, serviceMonitor: {enable: true}}}")))
	pcs := l.engine.ProxyClasses()
	if len(pcs) != 1 || pcs[0].Ready || !strings.Contains(pcs[0].Problem, `"servicemonitors.monitoring.coreos.com" CRD was not found`) {
		t.Fatalf("proxy classes %+v", pcs)
	}
	l.noDevice("router")
	l.event("Connector router: ProxyClass monitored specified for the Connector, but is not (yet) Ready, waiting..")

	// Once a Helm service renders the CRD, the ProxyClass is Ready and
	// the Connector gets its device, without being deployed again.
	l.deploy(release("prometheus", "manifests:\n  - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: servicemonitors.monitoring.coreos.com}, spec: {}}\n"))
	if pcs := l.engine.ProxyClasses(); !pcs[0].Ready {
		t.Fatalf("proxy classes %+v", pcs)
	}
	d := l.device("router", "tag:k8s")

	// The ProxyClass goes: the running device stays, a new Connector
	// waits.
	l.remove(release("classes"))
	if again := l.device("router", "tag:k8s"); again.ID != d.ID {
		t.Fatal("the Connector's device changed when its ProxyClass went")
	}

	// A ProxyGroup without a ProxyClass of its own takes the operator's
	// default; a Service its annotation.
	dl := newLabWith(t, labPolicy, []string{"devices:core", "auth_keys"}, "proxyConfig:\n  defaultProxyClass: small\n")
	dl.deploy(release("pg", proxyGroupYAML("pg", "{type: egress, replicas: 1}")))
	dl.noDevice("pg-0")
	dl.event(`ProxyGroup pg: ProxyGroupCreating: the ProxyGroup's ProxyClass "small" does not (yet) exist`)
	dl.deploy(release("db", serviceYAML("db", "ExternalName", false, cluster.AnnotationTailnetIP, "100.64.0.9", cluster.AnnotationProxyClass, "tiny")))
	dl.noDevice(labNamespace + "-db")
	dl.event(`Service ` + labNamespace + `/db: error verifying ProxyClass for Service: error getting ProxyClass tiny: proxyclasses.tailscale.com "tiny" not found`)
	dl.deploy(release("classes", proxyClassYAML("small", "{}")+entries(proxyClassYAML("tiny", "{}"))))
	dl.device("pg-0", "tag:k8s")
	dl.device(labNamespace+"-db", "tag:k8s")

	// The CRD refuses a ServiceMonitor without metrics.
	err := dl.engine.Deploy(context.Background(), release("bad", proxyClassYAML("bad", "{metrics: {enable: false, serviceMonitor: {enable: true}}}")))
	if err == nil || !strings.Contains(err.Error(), `ProxyClass.tailscale.com "bad" is invalid: spec.metrics: Invalid value: "object": ServiceMonitor can only be enabled if metrics are enabled`) {
		t.Fatalf("error %v", err)
	}

	// The earlier simulation looked at no ProxyClass.
	old := newLab(t, labApproversPolicy)
	old.engine.SetCompat(cluster.Compat{IgnoreProxyClass: true})
	old.deploy(release("router", connectorValues(t, router)))
	old.device("router", "tag:k8s")
}

// The kinds of the operator's CRDs, by chart release: Tailnet and
// ProxyGroupPolicy from 1.96, PeerRelay from 1.102; ProxyGroupPolicy is
// namespaced, the others cluster-scoped.
func TestManifests_tailscaleKinds(t *testing.T) {
	l := newLab(t, labPolicy)
	objs := "manifests:\n" +
		"  - {apiVersion: tailscale.com/v1alpha1, kind: Tailnet, metadata: {name: second}, spec: {}}\n" +
		"  - {apiVersion: tailscale.com/v1alpha1, kind: PeerRelay, metadata: {name: relay}, spec: {}}\n" +
		"  - {apiVersion: tailscale.com/v1alpha1, kind: ProxyGroupPolicy, metadata: {name: policy}, spec: {}}\n"
	svc := release("kinds", objs)
	svc.AllowClusterWideResources = false
	err := l.engine.Deploy(context.Background(), svc)
	if err == nil || !strings.Contains(err.Error(), "renders cluster-wide resources (Tailnet second, PeerRelay relay) but allow_cluster_wide_resources is false") {
		t.Fatalf("error %v", err)
	}
	l.deploy(release("kinds", objs))

	// An operator of chart 1.94 installed none of these CRDs.
	ts := tailnetapi.New(tailnetapi.Options{InitialPolicy: []byte(labPolicy)})
	e := cluster.New(ts)
	id, secret := ts.SeedOAuthClient("", "", []string{"devices:core", "auth_keys"}, []string{"tag:k8s-operator"})
	if err := e.Deploy(context.Background(), qoveryapi.ServiceSnapshot{
		Kind: "HELM", ID: "helm-operator", ClusterID: labCluster, Namespace: "z1234abcd-tailscale", ChartName: cluster.OperatorChart, ChartVersion: "1.94.2",
		AllowClusterWideResources: true, ValuesFiles: []qoveryapi.ValuesFile{{Name: "v", Content: fmt.Sprintf("oauth: {clientId: %s, clientSecret: %s}\n", id, secret)}},
	}); err != nil {
		t.Fatal(err)
	}
	err = e.Deploy(context.Background(), release("kinds", objs))
	if err == nil || !strings.Contains(err.Error(), `no matches for kind "Tailnet" in version "tailscale.com/v1alpha1"`) {
		t.Fatalf("chart 1.94: %v", err)
	}
}

// A wrong OAuth secret does not stop an operator whose node is logged in,
// but every new proxy fails.
func TestManifests_wrongSecretFailsTheProxies(t *testing.T) {
	ts := tailnetapi.New(tailnetapi.Options{InitialPolicy: []byte(labPolicy)})
	e := cluster.New(ts)
	id, secret := ts.SeedOAuthClient("", "", []string{"devices:core", "auth_keys"}, []string{"tag:k8s-operator"})
	op := func(secret string) qoveryapi.ServiceSnapshot {
		return qoveryapi.ServiceSnapshot{Kind: "HELM", ID: "helm-operator", ClusterID: labCluster, Namespace: "z1234abcd-tailscale", ChartName: cluster.OperatorChart,
			AllowClusterWideResources: true, ValuesFiles: []qoveryapi.ValuesFile{{Name: "v", Content: fmt.Sprintf("oauth: {clientId: %s, clientSecret: %s}\n", id, secret)}}}
	}
	if err := e.Deploy(context.Background(), op(secret)); err != nil {
		t.Fatal(err)
	}
	if err := e.Deploy(context.Background(), op("tskey-client-wrong")); err != nil {
		t.Fatalf("a logged-in operator failed on a wrong secret: %v", err)
	}
	l := &lab{t: t, tailnet: ts, engine: e}
	l.deploy(release("router", connectorValues(t, manifest.Connector{Name: "router", Hostname: "router", SubnetRoutes: []string{"10.9.0.0/16"}})))
	l.noDevice("router")
	l.event(`Connector router: failed to create auth key: oauth2: "invalid_client"`)
}
