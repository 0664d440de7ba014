package sandbox

import (
	"encoding/json"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

// The sandbox tailnet has HTTPS certificates on, and /_sandbox/ingresses
// lists the cluster's Ingresses and the certificates issued (none at
// start; the quickstart's acceptance run checks them after an apply).
func TestIngressesOfTheSeededApplications(t *testing.T) {
	w, c := start(t)
	if !w.Tailnet.HTTPSEnabled() {
		t.Fatal("the sandbox tailnet has HTTPS certificates off")
	}
	code, body := c.do("GET", "/_sandbox/ingresses", "", nil)
	var got struct {
		Ingresses    []cluster.Ingress        `json:"ingresses"`
		Certificates []tailnetapi.Certificate `json:"certificates"`
	}
	if err := json.Unmarshal(body, &got); code != 200 || err != nil || len(got.Ingresses) != 0 || len(got.Certificates) != 0 {
		t.Fatalf("before any Ingress: %d %s (%v)", code, body, err)
	}
}
