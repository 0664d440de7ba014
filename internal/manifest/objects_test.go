package manifest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// homeLabRoutes are the subnet routes of a typical home-lab connector.
var homeLabRoutes = []string{"10.244.0.0/16", "10.10.0.0/16", "10.50.0.0/24", "10.101.0.0/16", "192.168.0.0/24", "10.20.0.0/16"}

func TestConnectorRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Connector
		want []string // substrings of the rendered values
	}{
		{
			name: "hostname",
			c: Connector{
				Name: "homelab", Hostname: "homelab", SubnetRoutes: homeLabRoutes, ExitNode: true,
				Tags: []string{"tag:k8s", "tag:homelab"}, ProxyClass: "prod",
			},
			want: []string{"kind: Connector", "apiVersion: tailscale.com/v1alpha1", "hostname: homelab", "exitNode: true", "- 192.168.0.0/24", "proxyClass: prod"},
		},
		{
			name: "prefix and replicas",
			c:    Connector{Name: "office", HostnamePrefix: "office-router", Replicas: new(int64(3)), SubnetRoutes: []string{"10.0.0.0/8"}},
			want: []string{"hostnamePrefix: office-router", "replicas: 3", "advertiseRoutes:"},
		},
		{
			name: "exit node only",
			c:    Connector{Name: "exit", ExitNode: true},
			want: []string{"exitNode: true", "name: exit"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := RenderConnector(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(doc, w) {
					t.Errorf("rendered values lack %q:\n%s", w, doc)
				}
			}
			if tc.c.SubnetRoutes == nil && strings.Contains(doc, "subnetRouter") {
				t.Errorf("a connector without routes renders a subnetRouter:\n%s", doc)
			}
			got, err := ReadConnector(doc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.c) {
				t.Errorf("read back %+v, want %+v\n%s", got, tc.c, doc)
			}
			again, err := RenderConnector(got)
			if err != nil || again != doc {
				t.Errorf("rendering is not stable: %v\n%s\n---\n%s", err, doc, again)
			}
		})
	}
}

func TestProxyGroupRoundTrip(t *testing.T) {
	for _, p := range []ProxyGroup{
		{Name: "egress", Type: ProxyGroupEgress},
		{Name: "ingress", Type: ProxyGroupIngress, Replicas: new(int64(3)), HostnamePrefix: "ing", Tags: []string{"tag:k8s"}, ProxyClass: "prod"},
	} {
		t.Run(p.Name, func(t *testing.T) {
			doc, err := RenderProxyGroup(p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(doc, "kind: ProxyGroup") || !strings.Contains(doc, "type: "+p.Type) {
				t.Errorf("rendered values:\n%s", doc)
			}
			got, err := ReadProxyGroup(doc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, p) {
				t.Errorf("read back %+v, want %+v\n%s", got, p, doc)
			}
		})
	}
}

func TestEgressServiceRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    EgressService
		want []string
	}{
		{
			name: "fqdn",
			e:    EgressService{Name: "db", TailnetFQDN: "db.example-tailnet.ts.net", Ports: []ServicePort{{Port: 5432, Protocol: "TCP"}}},
			want: []string{"tailscale.com/tailnet-fqdn: db.example-tailnet.ts.net", "name: tcp-5432", "type: ExternalName", "externalName: placeholder"},
		},
		{
			name: "ip with proxy group and ports",
			e: EgressService{
				Name: "nas", TailnetIP: "100.64.1.2", ProxyGroup: "egress",
				Ports: []ServicePort{{Port: 445, Protocol: "TCP"}, {Port: 53, Protocol: "UDP"}},
			},
			want: []string{"tailscale.com/tailnet-ip: 100.64.1.2", "tailscale.com/proxy-group: egress", "name: udp-53", "protocol: UDP"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := RenderEgressService(tc.e)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(doc, w) {
					t.Errorf("rendered values lack %q:\n%s", w, doc)
				}
			}
			got, err := ReadEgressService(doc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.e) {
				t.Errorf("read back %+v, want %+v\n%s", got, tc.e, doc)
			}
		})
	}
}

func TestReadEgressServiceLegacyAnnotation(t *testing.T) {
	doc := `manifests:
  - apiVersion: v1
    kind: Service
    metadata:
      name: nas
      annotations:
        tailscale.com/ts-tailnet-target-ip: 100.64.1.2
    spec:
      type: ExternalName
      externalName: placeholder
      ports:
        - name: smb
          port: 445
        - port: "53"
          protocol: udp
`
	got, err := ReadEgressService(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := EgressService{Name: "nas", TailnetIP: "100.64.1.2", Ports: []ServicePort{{Port: 445, Protocol: "TCP"}, {Port: 53, Protocol: "UDP"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read %+v, want %+v", got, want)
	}
}

func TestServicePortNames(t *testing.T) {
	p := ServicePort{Port: 5432, Protocol: "TCP"}
	if p.PortName() != "tcp-5432" || p.String() != "tcp:5432" {
		t.Errorf("PortName %q, String %q", p.PortName(), p.String())
	}
}

func TestConnectorDeviceHostnames(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Connector
		want []string
	}{
		{"default", Connector{Name: "homelab"}, []string{"homelab-connector"}},
		{"hostname", Connector{Name: "homelab", Hostname: "home"}, []string{"home"}},
		{"one replica", Connector{Name: "homelab", Replicas: new(int64(1))}, []string{"homelab-connector"}},
		{"prefix", Connector{Name: "homelab", HostnamePrefix: "router", Replicas: new(int64(3))}, []string{"router-0", "router-1", "router-2"}},
		{"prefix, default replicas", Connector{Name: "homelab", HostnamePrefix: "router"}, []string{"router-0"}},
		// Without a prefix every replica takes the same hostname, as the
		// operator's StatefulSet reconciler gives it (the CRD refuses a
		// hostname with more than one replica).
		{"hostname with replicas", Connector{Name: "homelab", Hostname: "home", Replicas: new(int64(2))}, []string{"home", "home"}},
		{"default with replicas", Connector{Name: "homelab", Replicas: new(int64(3))}, []string{"homelab-connector", "homelab-connector", "homelab-connector"}},
		{"no replicas", Connector{Name: "homelab", Replicas: new(int64(0))}, []string{}},
		{"negative replicas", Connector{Name: "homelab", HostnamePrefix: "router", Replicas: new(int64(-1))}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.DeviceHostnames(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DeviceHostnames() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestProxyGroupDeviceHostnames(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    ProxyGroup
		want []string
	}{
		{"default", ProxyGroup{Name: "egress", Type: ProxyGroupEgress}, []string{"egress-0", "egress-1"}},
		{"prefix", ProxyGroup{Name: "egress", HostnamePrefix: "out", Replicas: new(int64(3))}, []string{"out-0", "out-1", "out-2"}},
		{"one replica", ProxyGroup{Name: "ingress", Replicas: new(int64(1))}, []string{"ingress-0"}},
		{"no replicas", ProxyGroup{Name: "ingress", Replicas: new(int64(0))}, []string{}},
		{"negative replicas", ProxyGroup{Name: "ingress", Replicas: new(int64(-2))}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.DeviceHostnames(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DeviceHostnames() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAdvertisedRoutes(t *testing.T) {
	c := Connector{Name: "homelab", SubnetRoutes: []string{"10.0.0.0/16", "fd00::/64"}, ExitNode: true}
	want := []string{"10.0.0.0/16", "fd00::/64", "0.0.0.0/0", "::/0"}
	if got := c.AdvertisedRoutes(); !reflect.DeepEqual(got, want) {
		t.Errorf("AdvertisedRoutes() = %q, want %q", got, want)
	}
	if len(c.SubnetRoutes) != 2 {
		t.Errorf("AdvertisedRoutes changed the connector's routes: %q", c.SubnetRoutes)
	}
	if got := (Connector{Name: "exit", ExitNode: true}).AdvertisedRoutes(); !reflect.DeepEqual(got, ExitNodeRoutes) {
		t.Errorf("exit node only: %q", got)
	}
	if got := (Connector{Name: "router", SubnetRoutes: []string{"10.0.0.0/16"}}).AdvertisedRoutes(); !reflect.DeepEqual(got, []string{"10.0.0.0/16"}) {
		t.Errorf("subnet router only: %q", got)
	}
	if got := (Connector{Name: "none"}).AdvertisedRoutes(); len(got) != 0 {
		t.Errorf("no routes: %q", got)
	}
}

func TestReadObjectErrors(t *testing.T) {
	pg, err := RenderProxyGroup(ProxyGroup{Name: "egress", Type: ProxyGroupEgress})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadConnector(pg); !errors.Is(err, ErrNoManifest) {
		t.Errorf("a ProxyGroup read as a connector: err = %v, want ErrNoManifest", err)
	}
	for _, doc := range []string{"", "manifests: []\n", "other: 1\n"} {
		if _, err := ReadConnector(doc); !errors.Is(err, ErrNoManifest) {
			t.Errorf("ReadConnector(%q): err = %v, want ErrNoManifest", doc, err)
		}
	}
	// A Service of another apiVersion is not the egress Service.
	if _, err := ReadEgressService("manifests:\n  - apiVersion: v2\n    kind: Service\n    metadata: {name: x}\n"); !errors.Is(err, ErrNoManifest) {
		t.Errorf("Service of apiVersion v2: err = %v, want ErrNoManifest", err)
	}

	two := `manifests:
  - apiVersion: tailscale.com/v1alpha1
    kind: Connector
    metadata: {name: a}
  - apiVersion: tailscale.com/v1alpha1
    kind: Connector
    metadata: {name: b}
`
	_, err = ReadConnector(two)
	if err == nil || errors.Is(err, ErrNoManifest) || !strings.Contains(err.Error(), "2 Connector objects") {
		t.Errorf("two connectors: err = %v", err)
	}

	_, err = ReadConnector("manifests: [\n")
	if err == nil || errors.Is(err, ErrNoManifest) || !strings.Contains(err.Error(), "not valid YAML") {
		t.Errorf("invalid YAML: err = %v", err)
	}
}

func TestCheckSubnetRoutes(t *testing.T) {
	if errs := CheckSubnetRoutes(homeLabRoutes); errs != nil {
		t.Errorf("home-lab routes: %v", errs)
	}
	if errs := CheckSubnetRoutes([]string{"10.0.0.0/16", "fd00::/64", "10.1.0.0/16", "192.168.1.7/32"}); errs != nil {
		t.Errorf("valid routes: %v", errs)
	}
	if errs := CheckSubnetRoutes(nil); errs != nil {
		t.Errorf("no routes: %v", errs)
	}

	for _, tc := range []struct {
		name   string
		routes []string
		want   []string // one substring per expected error, in order
	}{
		{"IPv4 default route", []string{"10.0.0.0/16", "0.0.0.0/0"}, []string{"subnet_routes[1]: \"0.0.0.0/0\" is a default route; set exit_node = true"}},
		{"IPv6 default route", []string{"::/0"}, []string{"subnet_routes[0]: \"::/0\" is a default route; set exit_node = true"}},
		{"host bits", []string{"10.0.0.1/16"}, []string{"subnet_routes[0]: \"10.0.0.1/16\" has host bits set; the operator refuses it. Use 10.0.0.0/16"}},
		{"not canonical", []string{"FD00:0::/64"}, []string{"subnet_routes[0]: write \"FD00:0::/64\" as fd00::/64, the form Tailscale reports routes in"}},
		{"duplicate", []string{"10.0.0.0/16", "192.168.0.0/24", "10.0.0.0/16"}, []string{"subnet_routes[2]: 10.0.0.0/16 is listed twice (also at index 0)"}},
		{"overlap", []string{"10.0.0.0/8", "10.1.0.0/16"}, []string{"subnet_routes[1]: 10.1.0.0/16 overlaps 10.0.0.0/8 (index 0)"}},
		{"overlap, larger second", []string{"10.1.0.0/16", "10.0.0.0/8"}, []string{"subnet_routes[1]: 10.0.0.0/8 overlaps 10.1.0.0/16 (index 0)"}},
		{"invalid CIDR", []string{"10.0.0.0/16", "10.0.0.0", "banana"}, []string{"subnet_routes[1]: \"10.0.0.0\" is not a CIDR", "subnet_routes[2]: \"banana\" is not a CIDR"}},
		{"several problems", []string{"10.0.0.0/33", "::/0", "10.0.0.0/8", "10.2.3.0/24"}, []string{"subnet_routes[0]:", "subnet_routes[1]:", "subnet_routes[3]: 10.2.3.0/24 overlaps 10.0.0.0/8 (index 2)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := CheckSubnetRoutes(tc.routes)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors %v, want %d", len(errs), errs, len(tc.want))
			}
			for i, err := range errs {
				msg := err.Error()
				if !strings.HasPrefix(msg, "subnet_routes[") {
					t.Errorf("error %q names no index", msg)
				}
				if !strings.Contains(msg, tc.want[i]) {
					t.Errorf("error %d = %q, want it to contain %q", i, msg, tc.want[i])
				}
			}
		})
	}
}

func TestCheckNames(t *testing.T) {
	long := strings.Repeat("a", 63)
	tooLong := strings.Repeat("a", 64)
	for _, tc := range []struct {
		name  string
		check func(string) error
		good  []string
		bad   []string
	}{
		{
			name:  "CheckKubernetesName",
			check: CheckKubernetesName,
			good:  []string{"homelab", "a", "1router", "home-lab-2", long},
			bad:   []string{"", "Homelab", "-homelab", "homelab-", "home_lab", "home.lab", tooLong},
		},
		{
			name:  "CheckServiceName",
			check: CheckServiceName,
			good:  []string{"db", "a", "db-1", long},
			bad:   []string{"", "1db", "DB", "db-", "-db", "db.prod", tooLong},
		},
		{
			name:  "CheckConnectorHostname",
			check: CheckConnectorHostname,
			good:  []string{"homelab", "ab", "1-router", "0a", long},
			bad:   []string{"", "a", "Homelab", "-home", "home-", "home.lab", tooLong},
		},
		{
			name:  "CheckHostnamePrefix",
			check: CheckHostnamePrefix,
			good:  []string{"a", "router", "router-", "1", strings.Repeat("a", 62)},
			bad:   []string{"", "-router", "Router", "router.x", long},
		},
		{
			name:  "CheckTag",
			check: CheckTag,
			good:  []string{"tag:k8s", "tag:Prod-1", "tag:a"},
			bad:   []string{"", "k8s", "tag:", "tag:1k8s", "tag:k8s_x", "tag:-k8s", "TAG:k8s", "tag:k8s "},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, s := range tc.good {
				if err := tc.check(s); err != nil {
					t.Errorf("%s(%q) = %v, want nil", tc.name, s, err)
				}
			}
			for _, s := range tc.bad {
				err := tc.check(s)
				if err == nil {
					t.Errorf("%s(%q) = nil, want an error", tc.name, s)
				} else if !strings.Contains(err.Error(), "\""+s+"\"") {
					t.Errorf("%s(%q): the error %q does not quote the value", tc.name, s, err)
				}
			}
		})
	}
}

func TestDeviceTagsFollowTheOperator(t *testing.T) {
	// Read back, a Connector without tags has none: the CRD has no
	// default, the operator applies its proxy tags.
	doc, err := RenderConnector(Connector{Name: "lan", SubnetRoutes: []string{"10.0.0.0/16"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadConnector(doc)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tags != nil {
		t.Fatalf("a Connector without tags reads back tagged %v", c.Tags)
	}
	for _, tc := range []struct {
		name      string
		got, want []string
	}{
		{"connector, operator's proxy tags", c.DeviceTags([]string{"tag:lan", "tag:k8s"}), []string{"tag:lan", "tag:k8s"}},
		{"connector, operator unknown", c.DeviceTags(nil), []string{"tag:k8s"}},
		{"connector, own tags", Connector{Tags: []string{"tag:router"}}.DeviceTags([]string{"tag:lan"}), []string{"tag:router"}},
		{"proxy group, operator's proxy tags", ProxyGroup{}.DeviceTags([]string{"tag:pg"}), []string{"tag:pg"}},
		{"egress, own tags", EgressService{Tags: []string{"tag:db"}}.DeviceTags([]string{"tag:k8s"}), []string{"tag:db"}},
		{"egress, operator's", EgressService{}.DeviceTags([]string{"tag:egress"}), []string{"tag:egress"}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestEgressProxyAnnotationsRoundTrip(t *testing.T) {
	e := EgressService{Name: "db", TailnetFQDN: "db.tail1.ts.net", Ports: []ServicePort{{Port: 5432, Protocol: "TCP"}},
		Hostname: "prod-db-egress", Tags: []string{"tag:egress", "tag:db"}, ProxyClass: "small"}
	doc, err := RenderEgressService(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tailscale.com/hostname: prod-db-egress", "tailscale.com/tags: tag:egress,tag:db", "tailscale.com/proxy-class: small"} {
		if !strings.Contains(doc, want) {
			t.Errorf("rendered values lack %q:\n%s", want, doc)
		}
	}
	back, err := ReadEgressService(doc)
	if err != nil || !reflect.DeepEqual(back, e) {
		t.Fatalf("read back %+v, %v; want %+v", back, err, e)
	}
	if h := back.ProxyHostname("prod"); h != "prod-db-egress" {
		t.Errorf("ProxyHostname with the annotation = %q", h)
	}
	if h := (EgressService{Name: "db"}).ProxyHostname("prod"); h != "prod-db" {
		t.Errorf("default ProxyHostname = %q", h)
	}
}

func TestKubeAPIServerProxyGroupSeries(t *testing.T) {
	t.Parallel()
	if got := KubeAPIServerProxyGroupSince(); got != "1.86" {
		t.Errorf("since %s", got)
	}
	for v, want := range map[string]bool{"1.84.3": false, "1.86.0": true, "1.102.4": true} {
		if got, known := SupportsKubeAPIServerProxyGroup(v); !known || got != want {
			t.Errorf("%s: %v, %v", v, got, known)
		}
	}
	p := ProxyGroup{Name: "kubeapi", Type: ProxyGroupKubeAPIServer, KubeAPIServerMode: KubeAPIServerNoAuth}
	values, err := RenderProxyGroup(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadProxyGroup(values)
	if err != nil || back.KubeAPIServerMode != KubeAPIServerNoAuth || back.ServiceName() != "svc:kubeapi" {
		t.Fatalf("read back %+v, %v from\n%s", back, err, values)
	}
	if _, err := RenderProxyGroup(ProxyGroup{Name: "ingress", Type: ProxyGroupIngress, KubeAPIServerMode: KubeAPIServerAuth}); err == nil {
		t.Error("an ingress ProxyGroup rendered with spec.kubeAPIServer")
	}
}
