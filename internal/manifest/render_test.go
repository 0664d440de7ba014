package manifest

import (
	"reflect"
	"strings"
	"testing"
)

// The values files qtail renders, byte for byte: a key that the object
// does not set is left out, not written empty.
func TestRenderedValuesExactly(t *testing.T) {
	const header = "# Rendered by qtail. The tailnet-manifests chart applies each entry of manifests.\n"
	for _, tc := range []struct {
		name   string
		render func() (string, error)
		want   string
	}{
		{
			name: "Ingress of a ProxyGroup, no tags",
			render: func() (string, error) {
				return RenderIngress(Ingress{Name: "web", Hostname: "web", BackendService: "app-z1", BackendPort: 8080, ProxyGroup: "ingress"})
			},
			want: header + `manifests:
  - apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata:
      annotations:
        tailscale.com/proxy-group: ingress
      name: web
    spec:
      defaultBackend:
        service:
          name: app-z1
          port:
            number: 8080
      ingressClassName: tailscale
      tls:
        - hosts:
            - web
`,
		},
		{
			name: "Ingress without annotations",
			render: func() (string, error) {
				return RenderIngress(Ingress{Name: "web", Hostname: "web", BackendService: "app-z1", BackendPort: 80})
			},
			want: header + `manifests:
  - apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata:
      name: web
    spec:
      defaultBackend:
        service:
          name: app-z1
          port:
            number: 80
      ingressClassName: tailscale
      tls:
        - hosts:
            - web
`,
		},
		{
			name: "egress Service without tags or ports",
			render: func() (string, error) {
				return RenderEgressService(EgressService{Name: "db", TailnetFQDN: "db.example.ts.net"})
			},
			want: header + `manifests:
  - apiVersion: v1
    kind: Service
    metadata:
      annotations:
        tailscale.com/tailnet-fqdn: db.example.ts.net
      name: db
    spec:
      externalName: placeholder
      type: ExternalName
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.render()
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("rendered:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// ReadIngress takes the proxy's hostname from the first label of the
// first TLS host, and leaves it empty when the spec lists none.
func TestReadIngressHosts(t *testing.T) {
	doc := func(spec string) string {
		return "manifests:\n  - apiVersion: networking.k8s.io/v1\n    kind: Ingress\n    metadata: {name: web}\n    spec:\n      ingressClassName: tailscale\n" + spec
	}
	for _, tc := range []struct {
		name, spec string
		want       Ingress
	}{
		{"FQDN", "      tls: [{hosts: [web.example.ts.net, other]}]\n", Ingress{Name: "web", Hostname: "web"}},
		{"no TLS entry", "      tls: []\n", Ingress{Name: "web"}},
		{"no host", "      tls: [{hosts: []}]\n", Ingress{Name: "web"}},
		{"backend port as a string", "      defaultBackend: {service: {name: app-z1, port: {number: \"80\"}}}\n", Ingress{Name: "web", BackendService: "app-z1", BackendPort: 80}},
		{"backend port by name", "      defaultBackend: {service: {name: app-z1, port: {name: http}}}\n", Ingress{Name: "web", BackendService: "app-z1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadIngress(doc(tc.spec))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("read %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestNames(t *testing.T) {
	doc := `manifests:
  - {apiVersion: tailscale.com/v1alpha1, kind: ProxyClass, metadata: {name: prod}}
  - {apiVersion: tailscale.com/v1alpha1, kind: Connector, metadata: {name: lan}}
  - {apiVersion: tailscale.com/v1alpha1, kind: ProxyClass, metadata: {name: metrics}}
`
	for _, tc := range []struct {
		doc, kind string
		want      []string
	}{
		{doc, KindProxyClass, []string{"prod", "metrics"}},
		{doc, KindConnector, []string{"lan"}},
		{doc, KindProxyGroup, nil},
		{"manifests: [\n", KindProxyClass, nil},
		{"other: 1\n", KindProxyClass, nil},
	} {
		if got := Names(tc.doc, tc.kind); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Names(%q, %s) = %q, want %q", tc.doc, tc.kind, got, tc.want)
		}
	}
}

func TestRenderedProxyGroups(t *testing.T) {
	first := "manifests:\n  - {apiVersion: tailscale.com/v1alpha1, kind: ProxyGroup, metadata: {name: old}, spec: {type: egress}}\n"
	second := `manifests:
  - {apiVersion: tailscale.com/v1alpha1, kind: ProxyGroup, metadata: {name: ingress}, spec: {type: ingress, tags: [tag:web, 7, tag:k8s]}}
  - {apiVersion: tailscale.com/v1alpha1, kind: ProxyGroup, metadata: {name: api}, spec: {type: kube-apiserver}}
  - {apiVersion: tailscale.com/v1alpha1, kind: ProxyClass, metadata: {name: prod}}
  - {apiVersion: tailscale.com/v1beta1, kind: ProxyGroup, metadata: {name: other}, spec: {type: egress}}
  - not an object
`
	// The last file that lists manifests wins, as Helm replaces lists.
	files := []string{first, second, "[not, a, map]\n", "other: 1\n"}
	if got, want := RenderedProxyGroups(files...), map[string]string{"ingress": "ingress", "api": "kube-apiserver"}; !reflect.DeepEqual(got, want) {
		t.Errorf("types %v, want %v", got, want)
	}
	if got, want := RenderedProxyGroupTags(files...), map[string][]string{"ingress": {"tag:web", "tag:k8s"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("tags %v, want %v", got, want)
	}
	if got := RenderedProxyGroups(); len(got) != 0 {
		t.Errorf("no files: %v", got)
	}
}

// unquotedYAMLType tells integers from other numbers, so that the
// hostname's error says which type YAML reads.
func TestCheckChartHostnameTypes(t *testing.T) {
	for _, tc := range []struct{ hostname, want string }{
		{"web", ""},
		{"1.5", "reads as a YAML number, not a string"},
		{".5", "reads as a YAML number, not a string"},
		{"1e5", "reads as a YAML integer, not a string"},
		{"1.0", "reads as a YAML integer, not a string"},
		{"18446744073709551615", "reads as a YAML integer, not a string"},
		{"99999999999999999999", "reads as a YAML number, not a string"},
		{"On", "reads as a YAML boolean, not a string: the Kubernetes API server would refuse the Deployment. Add a letter, such as operator-On"},
		{"~", `where "~" reads as null: the operator would fall back to the hostname tailscale-operator`},
		{"Null", "Choose a hostname with other letters, such as tailscale-operator-null"},
	} {
		err := CheckChartHostname(tc.hostname)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckChartHostname(%q) = %v", tc.hostname, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckChartHostname(%q) = %v, want it to say %q", tc.hostname, err, tc.want)
		}
	}
}

func TestDNSConfigCheckMessages(t *testing.T) {
	long := strings.Repeat("a", 255)
	for _, tc := range []struct {
		name  string
		check func(string) error
		in    string
		want  string // "" for no error
	}{
		{"repo of 255 characters", CheckImageRepo, long, ""},
		{"repo of 256 characters", CheckImageRepo, long + "a", "is not an image repository such as tailscale/k8s-nameserver"},
		{"registry port", CheckImageRepo, "registry.local:5000/dns", ""},
		{"tag alone", CheckImageRepo, ":v1", `":v1" carries a tag`},
		{"tag", CheckImageRepo, "dns:v1", `give the repository alone, such as dns, and the tag in tag`},
		{"digest", CheckImageRepo, "dns@sha256:abc", "carries a digest"},
		{"cluster IP", CheckClusterIP, "10.96.0.53", ""},
		{"headless", CheckClusterIP, "None", "makes the nameserver's Service headless"},
		{"not an address", CheckClusterIP, "host", `"host" is not an IP address`},
		{"zone", CheckClusterIP, "fd00::53%eth0", `"fd00::53%eth0" is not an IP address`},
		{"unspecified", CheckClusterIP, "::", ":: cannot be a Service's cluster IP"},
		{"loopback", CheckClusterIP, "127.0.0.1", "127.0.0.1 cannot be a Service's cluster IP"},
		{"multicast", CheckClusterIP, "224.0.0.1", "224.0.0.1 cannot be a Service's cluster IP"},
		{"link-local", CheckClusterIP, "169.254.0.1", "169.254.0.1 cannot be a Service's cluster IP"},
		{"IPv4 in IPv6", CheckClusterIP, "::ffff:10.0.0.1", `write "::ffff:10.0.0.1" as 10.0.0.1`},
		{"not canonical", CheckClusterIP, "FD00::53", `write "FD00::53" as fd00::53, the form Kubernetes reports addresses in`},
	} {
		err := tc.check(tc.in)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %q: %v", tc.name, tc.in, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %q: %v, want it to say %q", tc.name, tc.in, err, tc.want)
		}
	}
}

func TestCanonicalYAML(t *testing.T) {
	for _, tc := range []struct {
		m    map[string]any
		want string
	}{
		{nil, ""},
		{map[string]any{}, ""},
		{map[string]any{"b": []any{"x"}, "a": map[string]any{"c": 1}}, "a:\n  c: 1\nb:\n  - x\n"},
	} {
		got, err := CanonicalYAML(tc.m)
		if err != nil || got != tc.want {
			t.Errorf("CanonicalYAML(%v) = %q, %v; want %q", tc.m, got, err, tc.want)
		}
	}
}
