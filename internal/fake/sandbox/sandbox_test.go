package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

type client struct {
	t    *testing.T
	base string
}

func (c client) do(method, path, auth string, body any) (int, []byte) {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.base+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, out
}

func start(t *testing.T) (*World, client) {
	t.Helper()
	w, err := New(Options{DeployTime: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w.Handler())
	t.Cleanup(srv.Close)
	return w, client{t: t, base: srv.URL}
}

const qoveryAuth = "Token " + QoveryToken

func TestSeedAndExports(t *testing.T) {
	w, c := start(t)
	code, body := c.do("GET", "/_sandbox/seed", "", nil)
	if code != 200 {
		t.Fatalf("seed: %d %s", code, body)
	}
	var seed Seed
	if err := json.Unmarshal(body, &seed); err != nil {
		t.Fatal(err)
	}
	if seed.OrganizationID == "" || len(seed.Regions) != 2 {
		t.Fatalf("seed = %+v", seed)
	}
	for _, region := range Regions {
		r := seed.Regions[region]
		if r.ClusterID == "" || r.EnvironmentID == "" || len(r.Applications) != 3 {
			t.Fatalf("region %s = %+v", region, r)
		}
		// The seeded applications are visible through the Qovery API, with
		// and without ports as the design says.
		code, body := c.do("GET", "/qovery/application/"+r.Applications["worker"], qoveryAuth, nil)
		if code != 200 || !strings.Contains(string(body), `"ports":[]`) {
			t.Fatalf("worker: %d %s", code, body)
		}
		code, body = c.do("GET", "/qovery/application/"+r.Applications["billing-api"], qoveryAuth, nil)
		if code != 200 || !strings.Contains(string(body), `"internal_port":443`) {
			t.Fatalf("billing-api: %d %s", code, body)
		}
	}
	exports := w.Exports("http://127.0.0.1:1")
	for _, want := range []string{
		"export QOVERY_API_URL=http://127.0.0.1:1/qovery\n",
		"export QOVERY_API_TOKEN=" + QoveryToken + "\n",
		"export TAILSCALE_BASE_URL=http://127.0.0.1:1/tailscale\n",
		"export TAILSCALE_API_KEY=" + TailscaleAPIKey + "\n",
		"export TF_VAR_organization_id=" + seed.OrganizationID + "\n",
	} {
		if !strings.Contains(exports, want) {
			t.Errorf("exports lack %q:\n%s", want, exports)
		}
	}
	// Every seeded region's IDs, by region; none as a TF_VAR_ that a root
	// of another region would pick up.
	for _, region := range Regions {
		key := strings.ToUpper(strings.ReplaceAll(region, "-", "_"))
		r := seed.Regions[region]
		for _, want := range []string{
			"export QTAIL_SANDBOX_CLUSTER_ID_" + key + "=" + r.ClusterID + "\n",
			"export QTAIL_SANDBOX_ENVIRONMENT_ID_" + key + "=" + r.EnvironmentID + "\n",
			"export QTAIL_SANDBOX_APPLICATION_ID_" + key + "_BILLING_API=" + r.Applications["billing-api"] + "\n",
		} {
			if !strings.Contains(exports, want) {
				t.Errorf("exports lack %q:\n%s", want, exports)
			}
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(exports, "\n"), "\n") {
		if !strings.HasPrefix(line, "export ") {
			t.Errorf("exports has a line that is not an export: %q", line)
		}
		if strings.HasPrefix(line, "export TF_VAR_") && !strings.HasPrefix(line, "export TF_VAR_organization_id=") {
			t.Errorf("exports sets a variable of every root: %q", line)
		}
	}
}

func TestCallsAndFaults(t *testing.T) {
	_, c := start(t)
	code, body := c.do("POST", "/_sandbox/faults", "", FaultsRequest{Rules: []faults.Rule{{Route: "GET /tailscale/api/v2/tailnet/{tailnet}/acl", Status: 503, RetryAfter: 1, Count: 1}}})
	if code != 200 {
		t.Fatalf("faults: %d %s", code, body)
	}
	auth := "Bearer " + TailscaleAPIKey
	if code, _ := c.do("GET", "/tailscale/api/v2/tailnet/-/acl", auth, nil); code != 503 {
		t.Fatalf("first policy read: %d, want the injected 503", code)
	}
	if code, body := c.do("GET", "/tailscale/api/v2/tailnet/-/acl", auth, nil); code != 200 || !bytes.Contains(body, []byte("group:platform-ops")) {
		t.Fatalf("second policy read: %d %s", code, body)
	}
	code, body = c.do("GET", "/_sandbox/calls", "", nil)
	if code != 200 {
		t.Fatal(code)
	}
	var calls map[string]int
	if err := json.Unmarshal(body, &calls); err != nil {
		t.Fatal(err)
	}
	if calls["GET /tailscale/api/v2/tailnet/{tailnet}/acl"] != 2 {
		t.Fatalf("calls = %v", calls)
	}
	if code, _ := c.do("DELETE", "/_sandbox/calls", "", nil); code != 204 {
		t.Fatal(code)
	}
	_, body = c.do("GET", "/_sandbox/calls", "", nil)
	if strings.TrimSpace(string(body)) != "{}" {
		t.Fatalf("calls after reset = %s", body)
	}
}

func TestConsoleActions(t *testing.T) {
	w, c := start(t)
	seed := w.Seed()
	app := seed.Regions["us-east-1"].Applications["web"]

	// A hand edit of the policy, validated like the admin console does.
	code, body := c.do("POST", "/_sandbox/console", "", ConsoleAction{Action: "tailscale.set_policy", Policy: `{"grants": [{"src": ["tag:nope"], "dst": ["*"], "ip": ["*"]}]}`})
	if code != 400 || !strings.Contains(string(body), `tag not found`) {
		t.Fatalf("invalid hand edit: %d %s", code, body)
	}
	code, body = c.do("POST", "/_sandbox/console", "", ConsoleAction{Action: "tailscale.set_policy", Policy: "// by hand\n{\"grants\": []}\n"})
	if code != 200 {
		t.Fatalf("valid hand edit: %d %s", code, body)
	}
	if got, _ := w.Tailnet.Policy(); string(got) != "// by hand\n{\"grants\": []}\n" {
		t.Fatalf("policy = %q", got)
	}

	if code, body := c.do("POST", "/_sandbox/console", "", ConsoleAction{Action: "tailscale.add_device", Host: "db-1", Tags: []string{"tag:db"}}); code != 200 {
		t.Fatalf("add device: %d %s", code, body)
	}
	if code, body := c.do("POST", "/_sandbox/console", "", ConsoleAction{Action: "tailscale.remove_device", Host: "db-1"}); code != 200 {
		t.Fatalf("remove device: %d %s", code, body)
	}
	if code, _ := c.do("POST", "/_sandbox/console", "", ConsoleAction{Action: "tailscale.remove_device", Host: "db-1"}); code != 400 {
		t.Fatalf("removing a missing device: %d, want 400", code)
	}

	if code, body := c.do("POST", "/_sandbox/console", "", ConsoleAction{Action: "qovery.set_ports", ID: app, Ports: []int{8081}}); code != 200 {
		t.Fatalf("set ports: %d %s", code, body)
	}
	a, _ := w.Qovery.Application(app)
	if len(a.Ports) != 1 || a.Ports[0].InternalPort != 8081 {
		t.Fatalf("ports = %+v", a.Ports)
	}

	if code, body := c.do("POST", "/_sandbox/console", "", ConsoleAction{Action: "nonsense"}); code != 400 || !strings.Contains(string(body), "unknown console action") {
		t.Fatalf("unknown action: %d %s", code, body)
	}
	if code, _ := c.do("POST", "/_sandbox/console", "", map[string]string{"actoin": "x"}); code != 400 {
		t.Fatalf("unknown field accepted: %d", code)
	}
}

func TestTailnetTopologyAndReset(t *testing.T) {
	w, c := start(t)
	topo := map[string]any{
		"users": []map[string]any{{"id": 1, "name": "odin", "email": "odin@example.com"}},
		"nodes": map[string]any{"bulbasaur": map[string]any{"hostname": "bulbasaur", "ipv4": "100.64.0.9", "ipv6": "fd7a:115c:a1e0::9", "user": "odin", "tags": []string{}, "routable_ips": []string{}, "approved_routes": []string{}}},
	}
	if code, body := c.do("POST", "/_sandbox/tailnet", "", topo); code != 200 {
		t.Fatalf("topology: %d %s", code, body)
	}
	devs := w.Tailnet.Devices()
	if len(devs) != 1 || devs[0].Hostname != "bulbasaur" {
		t.Fatalf("devices = %+v", devs)
	}
	before := w.Seed()
	code, body := c.do("POST", "/_sandbox/reset", "", nil)
	if code != 200 {
		t.Fatalf("reset: %d %s", code, body)
	}
	if after := w.Seed(); after.OrganizationID != before.OrganizationID {
		t.Fatalf("seeded IDs changed across reset: %s -> %s", before.OrganizationID, after.OrganizationID)
	}
	if n := len(w.Tailnet.Devices()); n != 3 {
		t.Fatalf("devices after reset = %d, want the 3 seeded", n)
	}
	if code, _ := c.do("GET", "/_sandbox/nothing", "", nil); code != 404 {
		t.Fatalf("unknown admin route: %d", code)
	}
}

func TestFaultAfterHandlerLosesTheAnswerOfAnAppliedCall(t *testing.T) {
	w, c := start(t)
	route := "POST /qovery/organization/{organizationId}/annotationsGroups"
	code, body := c.do("POST", "/_sandbox/faults", "", json.RawMessage(`{"rules":[{"route":"`+route+`","status":502,"after_handler":true}]}`))
	var pending struct{ Pending []faults.Rule }
	if err := json.Unmarshal(body, &pending); code != 200 || err != nil || len(pending.Pending) != 1 || !pending.Pending[0].AfterHandler {
		t.Fatalf("faults: %d %s %v", code, body, err)
	}
	org := w.Seed().OrganizationID
	group := map[string]any{"name": "lost-answer", "annotations": []any{}, "scopes": []string{"SERVICES"}}
	if code, body := c.do("POST", "/qovery/organization/"+org+"/annotationsGroups", qoveryAuth, group); code != 502 {
		t.Fatalf("create: %d %s, want the injected 502", code, body)
	}
	code, body = c.do("GET", "/qovery/organization/"+org+"/annotationsGroups", qoveryAuth, nil)
	if code != 200 || !bytes.Contains(body, []byte(`"name":"lost-answer"`)) {
		t.Fatalf("the create was not applied: %d %s", code, body)
	}
}

func TestConsoleSetRoutes(t *testing.T) {
	w, c := start(t)
	d := w.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: "homelab", Tags: []string{"tag:k8s"}, AdvertisedRoutes: []string{"10.244.0.0/16", "0.0.0.0/0", "::/0"}})

	// Approve by hostname, then revoke all by id.
	if code, body := c.do("POST", "/_sandbox/console", "", ConsoleAction{Action: "tailscale.set_routes", Host: "homelab", Routes: []string{"10.244.0.0/16"}}); code != 200 {
		t.Fatalf("set routes by hostname: %d %s", code, body)
	}
	if got, _ := w.Tailnet.Device(d.ID); strings.Join(got.EnabledRoutes, ",") != "10.244.0.0/16" {
		t.Fatalf("enabled routes %v", got.EnabledRoutes)
	}
	if code, body := c.do("POST", "/_sandbox/console", "", ConsoleAction{Action: "tailscale.set_routes", ID: d.NodeID}); code != 200 {
		t.Fatalf("revoke by id: %d %s", code, body)
	}
	if got, _ := w.Tailnet.Device(d.ID); len(got.EnabledRoutes) != 0 {
		t.Fatalf("enabled routes after revoking: %v", got.EnabledRoutes)
	}

	w.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: "homelab"})
	for _, tc := range []struct {
		a    ConsoleAction
		want string
	}{
		{ConsoleAction{Action: "tailscale.set_routes", Routes: []string{"10.0.0.0/8"}}, `needs "id" or "hostname"`},
		{ConsoleAction{Action: "tailscale.set_routes", Host: "nobody"}, `no device "nobody"`},
		{ConsoleAction{Action: "tailscale.set_routes", Host: "homelab"}, `2 devices have the hostname "homelab"`},
		{ConsoleAction{Action: "tailscale.set_routes", ID: d.ID, Routes: []string{"10.0.0.1/8"}}, "host bits are set"},
	} {
		code, body := c.do("POST", "/_sandbox/console", "", tc.a)
		var e struct{ Message string }
		if err := json.Unmarshal(body, &e); err != nil || code != 400 || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%+v: %d %s, want 400 saying %q", tc.a, code, body, tc.want)
		}
	}
}

func TestCompatDefaultsAndOverride(t *testing.T) {
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Cluster.Compat(); got != (cluster.Compat{}) {
		t.Fatalf("default sandbox keeps %+v, want the real operator (no earlier behaviour)", got)
	}
	simple := cluster.Compat{NoEgressProxies: true, ProxyGroupIngressWithoutService: true}
	w, err = New(Options{Compat: &Compat{Cluster: simple}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Reset(); err != nil {
		t.Fatal(err)
	}
	if got := w.Cluster.Compat(); got != simple {
		t.Fatalf("after Reset the sandbox keeps %+v, want %+v", got, simple)
	}
}

// TestSeedIsBackwardCompatible: the seed keeps the ids it always printed
// (objects added later are seeded after them) and only adds fields.
func TestSeedIsBackwardCompatible(t *testing.T) {
	w, c := start(t)
	const before = `{"organization_id":"3f782963-1da0-4787-a4b5-77a4d41bdf07","project_id":"b20c96ab-52fc-48ae-8e08-37c3f5f2b026",` +
		`"regions":{"eu-west-3":{"cluster_id":"827d77db-cae9-403b-959f-df629f246e69","environment_id":"f4686e6f-a59c-4b20-aece-05edd38a074d",` +
		`"applications":{"billing-api":"e4c5eb6e-4a00-42aa-a358-aaf17e3b60fd","web":"b96aa7ca-46c4-47df-8f56-c802aa3b9b05","worker":"40d93926-fc9d-4de6-b692-4ddebe964697"}},` +
		`"us-east-1":{"cluster_id":"5a8c5284-3324-49a4-84a6-a66a40a811a8","environment_id":"a6adc458-5dd8-4fe7-b2bb-b1def9d55083",` +
		`"applications":{"billing-api":"11bbdff6-820b-44ae-b3a1-89afd0c29ee1","web":"558ca1f8-3d51-4720-b255-6e32138b9b84","worker":"f244fcfb-0ac2-40ea-8695-8c6e123f5872"}}},` +
		`"tailnet":"example.com","magic_dns_suffix":"tail4f2a.ts.net"}`
	var old, now Seed
	if err := json.Unmarshal([]byte(before), &old); err != nil {
		t.Fatal(err)
	}
	code, body := c.do("GET", "/_sandbox/seed", "", nil)
	if code != 200 {
		t.Fatalf("seed: %d %s", code, body)
	}
	if err := json.Unmarshal(body, &now); err != nil {
		t.Fatal(err)
	}
	for region, r := range now.Regions {
		if len(r.Containers) != 1 || r.Containers["metrics"] == "" {
			t.Errorf("%s containers %v", region, r.Containers)
		}
		r.Containers = nil
		now.Regions[region] = r
	}
	if !reflect.DeepEqual(old, now) {
		t.Errorf("seed changed:\nwas %+v\nnow %+v", old, now)
	}
	for _, region := range Regions {
		key := strings.ToUpper(strings.ReplaceAll(region, "-", "_"))
		if want := "export QTAIL_SANDBOX_CONTAINER_ID_" + key + "_METRICS=" + w.Seed().Regions[region].Containers["metrics"] + "\n"; !strings.Contains(w.Exports("http://x"), want) {
			t.Errorf("exports lack %q", want)
		}
	}
}

// TestSeededWorkloads: each region has a container with a port; the
// applications with ports have an autoscaling policy and a labels group.
func TestSeededWorkloads(t *testing.T) {
	w, c := start(t)
	for _, region := range Regions {
		r := w.Seed().Regions[region]
		code, body := c.do("GET", "/qovery/container/"+r.Containers["metrics"], qoveryAuth, nil)
		var ctr struct {
			ServiceType string `json:"service_type"`
			Environment struct {
				ID string `json:"id"`
			} `json:"environment"`
			Ports []struct {
				InternalPort int `json:"internal_port"`
			} `json:"ports"`
		}
		if code != 200 || json.Unmarshal(body, &ctr) != nil || ctr.ServiceType != "CONTAINER" || ctr.Environment.ID != r.EnvironmentID ||
			len(ctr.Ports) != 1 || ctr.Ports[0].InternalPort != 9102 {
			t.Errorf("%s container: %d %s", region, code, body)
		}
		for name, want := range map[string]bool{"billing-api": true, "web": true, "worker": false} {
			code, body := c.do("GET", "/qovery/application/"+r.Applications[name], qoveryAuth, nil)
			var app struct {
				Autoscaling  *struct{ Mode string }  `json:"autoscaling"`
				LabelsGroups []struct{ Name string } `json:"labels_groups"`
			}
			if code != 200 || json.Unmarshal(body, &app) != nil || (app.Autoscaling != nil) != want || (len(app.LabelsGroups) == 1) != want {
				t.Errorf("%s %s: %d %s", region, name, code, body)
			}
		}
	}
}

// TestCompat: by default a failed status gives no reason, as the real
// API's; Compat.StatusMessages adds one.
func TestCompat(t *testing.T) {
	for _, compat := range []*Compat{nil, {}, {StatusMessages: true}} {
		w, err := New(Options{DeployTime: 5 * time.Millisecond, Compat: compat})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(w.Handler())
		c := client{t: t, base: srv.URL}
		app := w.Seed().Regions[Regions[0]].Applications["web"]
		w.Qovery.SetDeployer(failingDeployer{})
		if code, body := c.do("POST", "/qovery/application/"+app+"/redeploy", qoveryAuth, nil); code != 202 {
			t.Fatalf("redeploy: %d %s", code, body)
		}
		var status map[string]any
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			_, body := c.do("GET", "/qovery/application/"+app+"/status", qoveryAuth, nil)
			if err := json.Unmarshal(body, &status); err != nil {
				t.Fatal(err)
			}
			if status["state"] == "DEPLOYMENT_ERROR" {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		_, hasMessage := status["message"]
		if hasMessage != (compat != nil && compat.StatusMessages) || status["state"] != "DEPLOYMENT_ERROR" {
			t.Errorf("compat %v: status %v", compat, status)
		}
		srv.Close()
		w.Qovery.Close()
	}
}

type failingDeployer struct{}

func (failingDeployer) Deploy(context.Context, qoveryapi.ServiceSnapshot) error {
	return errors.New("image pull failed")
}

func (failingDeployer) Delete(context.Context, qoveryapi.ServiceSnapshot) error { return nil }

// TestQoveryAnswersAsTheRealAPI: by default the sandbox's Qovery queues a
// deployment requested during another one, lags the status behind a
// trigger, and refuses an edit with a member its request does not define;
// Compat and StatusLag select the simpler behaviours.
func TestQoveryAnswersAsTheRealAPI(t *testing.T) {
	w, c := start(t)
	app := w.Seed().Regions[Regions[0]].Applications["worker"]
	status := func() map[string]any {
		code, body := c.do(http.MethodGet, "/qovery/application/"+app+"/status", qoveryAuth, nil)
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil || code != http.StatusOK {
			t.Fatalf("status: %d %s", code, body)
		}
		return v
	}
	before := status()
	redeploy := func() (int, map[string]any) {
		code, body := c.do(http.MethodPost, "/qovery/application/"+app+"/redeploy", qoveryAuth, nil)
		var v map[string]any
		_ = json.Unmarshal(body, &v)
		return code, v
	}
	if code, v := redeploy(); code != http.StatusAccepted || v["deployment_request_id"] == before["deployment_request_id"] {
		t.Fatalf("first redeploy: %d %v", code, v)
	}
	if code, v := redeploy(); code != http.StatusAccepted || v["state"] != "DEPLOYMENT_QUEUED" {
		t.Errorf("redeploy during the first: %d %v, want it queued", code, v)
	}
	if lagged := status(); lagged["deployment_request_id"] != before["deployment_request_id"] {
		t.Errorf("status right after the trigger %v, want the previous one %v", lagged, before)
	}
	code, body := c.do(http.MethodGet, "/qovery/application/"+app, qoveryAuth, nil)
	if code != http.StatusOK {
		t.Fatalf("GET: %d %s", code, body)
	}
	var read map[string]any
	if err := json.Unmarshal(body, &read); err != nil {
		t.Fatal(err)
	}
	if code, body := c.do(http.MethodPut, "/qovery/application/"+app, qoveryAuth, read); code != http.StatusBadRequest ||
		!strings.Contains(string(body), "ApplicationEditRequest") {
		t.Errorf("PUT of the object read: %d %s, want 400", code, body)
	}

	simple, err := New(Options{DeployTime: time.Hour, StatusLag: qoveryapi.NoStatusLag, Compat: &Compat{DeploymentConflicts: true}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(simple.Handler())
	t.Cleanup(srv.Close)
	sc := client{t: t, base: srv.URL}
	app = simple.Seed().Regions[Regions[0]].Applications["worker"]
	if code, body := sc.do(http.MethodPost, "/qovery/application/"+app+"/redeploy", qoveryAuth, nil); code != http.StatusAccepted {
		t.Fatalf("redeploy: %d %s", code, body)
	}
	if code, body := sc.do(http.MethodPost, "/qovery/application/"+app+"/redeploy", qoveryAuth, nil); code != http.StatusConflict {
		t.Errorf("DeploymentConflicts: %d %s, want 409", code, body)
	}
	if code, body := sc.do(http.MethodGet, "/qovery/application/"+app+"/status", qoveryAuth, nil); code != http.StatusOK ||
		!strings.Contains(string(body), `"state":"DEPLOYMENT_QUEUED"`) {
		t.Errorf("NoStatusLag: %d %s", code, body)
	}
}

func TestRegionsOption(t *testing.T) {
	regions := []string{"us-east-1", "ap-south-1", "sa-east-1"}
	w, err := New(Options{Regions: regions})
	if err != nil {
		t.Fatal(err)
	}
	seed := w.Seed()
	if len(seed.Regions) != len(regions) {
		t.Fatalf("seeded regions %v, want %v", seed.Regions, regions)
	}
	envs := map[string]bool{}
	for _, region := range regions {
		r := seed.Regions[region]
		if r.EnvironmentID == "" || r.Applications["billing-api"] == "" || r.Containers["metrics"] == "" || envs[r.EnvironmentID] {
			t.Fatalf("region %s = %+v", region, r)
		}
		envs[r.EnvironmentID] = true
		if app, ok := w.Qovery.Application(r.Applications["web"]); !ok || app.EnvironmentID != r.EnvironmentID {
			t.Errorf("region %s: web is %+v", region, app)
		}
		key := strings.ToUpper(strings.ReplaceAll(region, "-", "_"))
		if want := "export QTAIL_SANDBOX_ENVIRONMENT_ID_" + key + "=" + r.EnvironmentID + "\n"; !strings.Contains(w.Exports("http://127.0.0.1:1"), want) {
			t.Errorf("exports lack %q", want)
		}
	}
	if _, ok := seed.Regions["eu-west-3"]; ok {
		t.Error("a region of the default list was seeded too")
	}
}
