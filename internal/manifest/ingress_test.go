package manifest_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/manifest"
)

func TestIngress_renderAndReadBack(t *testing.T) {
	g := manifest.Ingress{Name: "web-us", Hostname: "web-us", BackendService: "app-zb96aa7ca", BackendPort: 80, Tags: []string{"tag:k8s-web", "tag:k8s"}}
	doc, err := manifest.RenderIngress(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"apiVersion: networking.k8s.io/v1", "kind: Ingress", "ingressClassName: tailscale",
		"tailscale.com/tags: tag:k8s-web,tag:k8s", "number: 80", "name: app-zb96aa7ca", "- web-us"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the values lack %q:\n%s", want, doc)
		}
	}
	back, err := manifest.ReadIngress(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, g) {
		t.Fatalf("read back %+v, want %+v", back, g)
	}

	// Another class is not the operator's.
	other := strings.Replace(doc, "ingressClassName: tailscale", "ingressClassName: nginx", 1)
	if _, err := manifest.ReadIngress(other); err == nil || !strings.Contains(err.Error(), `class "nginx"`) {
		t.Fatalf("an nginx Ingress read as %v", err)
	}
	if _, err := manifest.ReadIngress("manifests: []\n"); err == nil {
		t.Fatal("no Ingress read without error")
	}
}

func TestIngress_applicationServiceName(t *testing.T) {
	if got := manifest.ApplicationServiceName("b96aa7ca-46c4-47df-8f56-c802aa3b9b05"); got != "app-zb96aa7ca" {
		t.Fatalf("got %q", got)
	}
}
