package tailnet

import (
	"slices"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

func TestPreviewPolicy(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{Topology: aclcheck.Topology{
		Users: []aclcheck.User{{ID: 1, Name: "alice", Email: "alice@example.com"}},
		Nodes: map[string]aclcheck.Node{"alice-laptop": {Hostname: "alice-laptop", IPv4: "100.64.0.1", User: "alice"}},
	}})
	proxy := e.srv.AddDevice(tailnetapi.DeviceSpec{Hostname: "web", Tags: []string{"tag:k8s"}, IPv4: "100.64.0.20", IPv6: "fd7a:115c:a1e0::20"})
	c := e.client(Config{})

	p, err := c.PreviewPolicy(t.Context(), []byte(operatorPolicy), PreviewIPPort, "["+proxy.Addresses[1]+"]:443")
	if err != nil {
		t.Fatal(err)
	}
	if p.Type != PreviewIPPort || len(p.Matches) != 1 || !slices.Equal(p.Matches[0].Users, []string{"autogroup:member"}) ||
		!slices.Equal(p.Matches[0].Ports, []string{"tag:k8s:tcp:443"}) || p.Matches[0].LineNumber != 11 {
		t.Errorf("preview %+v", p)
	}
	req := e.rec.last(t, "POST", "/acl/preview")
	if q := req.URL.Query(); q.Get("type") != "ipport" || q.Get("previewFor") != "[fd7a:115c:a1e0::20]:443" {
		t.Errorf("query %q", req.URL.RawQuery)
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/hujson" {
		t.Errorf("Content-Type %q", ct)
	}

	p, err = c.PreviewPolicy(t.Context(), []byte(operatorPolicy), PreviewIPPort, "100.64.0.20:22")
	if err != nil || p.Matches == nil || len(p.Matches) != 0 {
		t.Errorf("no rule: %+v, %v", p, err)
	}
	p, err = c.PreviewPolicy(t.Context(), []byte(operatorPolicy), PreviewUser, "alice@example.com")
	if err != nil || len(p.Matches) != 1 {
		t.Errorf("user: %+v, %v", p, err)
	}

	// A refused policy is an *APIError with the server's message.
	_, err = c.PreviewPolicy(t.Context(), []byte(`{"grants": [{"src": ["group:x"], "dst": ["*"], "ip": ["*"]}]}`), PreviewIPPort, "100.64.0.20:443")
	if ae, ok := AsAPIError(err); !ok || ae.Status != 400 || !strings.Contains(ae.Message, `group not found: "group:x"`) {
		t.Errorf("refused policy: %v", err)
	}
	if _, err := c.PreviewPolicy(t.Context(), nil, PreviewIPPort, "100.64.0.20:443"); err == nil {
		t.Error("an empty policy was sent")
	}
}
