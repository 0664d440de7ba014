package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

// FaultsRequest is the body of POST /_sandbox/faults. Each rule names a
// route as GET /_sandbox/calls lists it and applies to its next "count"
// calls (1 by default):
//
//	{"route": "POST /qovery/environment/{environmentId}/helm", "status": 503, "retry_after": 2}
//	    answer 503 with Retry-After instead of calling the route
//	{"route": "POST /qovery/environment/{environmentId}/helm", "status": 502, "after_handler": true}
//	    create the Helm service, then answer 502 instead of 201: the
//	    request was applied but its answer was lost
//	{"route": "POST /tailscale/api/v2/tailnet/{tailnet}/keys", "drop": true, "after_handler": true}
//	    create the key, then close the connection without an answer
//	{"route": "/tailscale/*", "latency": "2s", "count": 10}
//	    slow down the next ten calls to the Tailscale API
//
// "body" replaces the JSON error body ({"message": "<status text>"} by
// default).
type FaultsRequest struct {
	// Latency, when set, replaces the latency added to every call.
	Latency *faults.Duration `json:"latency,omitempty"`
	// Rules are queued in order.
	Rules []faults.Rule `json:"rules,omitempty"`
	// Clear drops queued rules first.
	Clear bool `json:"clear,omitempty"`
}

// ConsoleAction is the body of POST /_sandbox/console: what a person does by
// hand in the Qovery console or the Tailscale admin console.
//
// Actions and their fields:
//
//	tailscale.set_policy          policy (HuJSON text)
//	tailscale.remove_device       hostname
//	tailscale.add_device          hostname, tags, user
//	tailscale.set_routes          id or hostname (device), routes (the enabled routes: approve
//	                              or revoke by hand; [] revokes all)
//	qovery.set_chart_version      id (Helm service), value
//	qovery.set_cluster_wide       id (Helm service), enabled
//	qovery.set_values             id (Helm service), value (the whole raw values file)
//	qovery.delete_service         id (Helm service, application or container)
//	qovery.deploy                 id (Helm service, application or container)
//	qovery.delete_variable        id (Helm service), key
//	qovery.set_repository_url     id (Helm repository), value
//	qovery.delete_repository      id (Helm repository)
//	qovery.set_annotation         id (annotations group), key, value
//	qovery.delete_group           id (annotations group)
//	qovery.detach_group           id (application or container), group_id
//	qovery.set_ports              id (application), ports
type ConsoleAction struct {
	Action  string   `json:"action"`
	ID      string   `json:"id,omitempty"`
	GroupID string   `json:"group_id,omitempty"`
	Key     string   `json:"key,omitempty"`
	Value   string   `json:"value,omitempty"`
	Enabled bool     `json:"enabled,omitempty"`
	Policy  string   `json:"policy,omitempty"`
	Host    string   `json:"hostname,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	User    string   `json:"user,omitempty"`
	Ports   []int    `json:"ports,omitempty"`
	Routes  []string `json:"routes,omitempty"`
}

func (w *World) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /_sandbox/seed", func(rw http.ResponseWriter, _ *http.Request) {
		writeJSON(rw, http.StatusOK, w.Seed())
	})
	mux.HandleFunc("GET /_sandbox/calls", func(rw http.ResponseWriter, _ *http.Request) {
		writeJSON(rw, http.StatusOK, w.Faults.Calls())
	})
	mux.HandleFunc("DELETE /_sandbox/calls", func(rw http.ResponseWriter, _ *http.Request) {
		w.Faults.ResetCalls()
		rw.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /_sandbox/faults", func(rw http.ResponseWriter, r *http.Request) {
		var req FaultsRequest
		if err := decode(r, &req); err != nil {
			writeError(rw, http.StatusBadRequest, err)
			return
		}
		if req.Clear {
			w.Faults.Reset()
		}
		if req.Latency != nil {
			w.Faults.SetLatency(time.Duration(*req.Latency))
		}
		w.Faults.Add(req.Rules...)
		writeJSON(rw, http.StatusOK, map[string]any{"pending": w.Faults.Pending()})
	})
	mux.HandleFunc("POST /_sandbox/console", func(rw http.ResponseWriter, r *http.Request) {
		var a ConsoleAction
		if err := decode(r, &a); err != nil {
			writeError(rw, http.StatusBadRequest, err)
			return
		}
		if err := w.Console(a); err != nil {
			writeError(rw, http.StatusBadRequest, err)
			return
		}
		writeJSON(rw, http.StatusOK, map[string]string{"done": a.Action})
	})
	mux.HandleFunc("POST /_sandbox/tailnet", func(rw http.ResponseWriter, r *http.Request) {
		var t aclcheck.Topology
		if err := decode(r, &t); err != nil {
			writeError(rw, http.StatusBadRequest, err)
			return
		}
		w.Tailnet.SetTopology(t)
		writeJSON(rw, http.StatusOK, w.Tailnet.Topology())
	})
	mux.HandleFunc("GET /_sandbox/tailnet", func(rw http.ResponseWriter, _ *http.Request) {
		writeJSON(rw, http.StatusOK, map[string]any{"devices": w.Tailnet.Devices(), "events": w.Cluster.Events()})
	})
	mux.HandleFunc("GET /_sandbox/ingresses", func(rw http.ResponseWriter, _ *http.Request) {
		writeJSON(rw, http.StatusOK, map[string]any{"ingresses": w.Cluster.Ingresses(), "certificates": w.Tailnet.Certificates()})
	})
	mux.HandleFunc("POST /_sandbox/reset", func(rw http.ResponseWriter, _ *http.Request) {
		if err := w.Reset(); err != nil {
			writeError(rw, http.StatusInternalServerError, err)
			return
		}
		writeJSON(rw, http.StatusOK, w.Seed())
	})
	mux.HandleFunc("/_sandbox/", func(rw http.ResponseWriter, r *http.Request) {
		writeError(rw, http.StatusNotFound, fmt.Errorf("no sandbox admin route %s %s", r.Method, r.URL.Path))
	})
}

// Console performs a console action on the world.
func (w *World) Console(a ConsoleAction) error {
	q, t := w.Qovery, w.Tailnet
	need := func(fields ...string) error {
		for _, f := range fields {
			switch f {
			case "id":
				if a.ID == "" {
					return fmt.Errorf("%s needs \"id\"", a.Action)
				}
			case "hostname":
				if a.Host == "" {
					return fmt.Errorf("%s needs \"hostname\"", a.Action)
				}
			case "key":
				if a.Key == "" {
					return fmt.Errorf("%s needs \"key\"", a.Action)
				}
			}
		}
		return nil
	}
	switch a.Action {
	case "tailscale.set_policy":
		if err := t.SetPolicyDirect([]byte(a.Policy)); err != nil {
			var ae *aclcheck.Error
			if errors.As(err, &ae) {
				return fmt.Errorf("the tailnet refused the policy: %s", describe(ae))
			}
			return err
		}
		return nil
	case "tailscale.remove_device":
		if err := need("hostname"); err != nil {
			return err
		}
		if t.RemoveDevicesByHostname(a.Host) == 0 {
			return fmt.Errorf("no device %q on the tailnet", a.Host)
		}
		return nil
	case "tailscale.add_device":
		if err := need("hostname"); err != nil {
			return err
		}
		t.AddDevice(tailnetDevice(a))
		return nil
	case "tailscale.set_routes":
		id := a.ID
		if id == "" {
			if a.Host == "" {
				return fmt.Errorf("%s needs \"id\" or \"hostname\"", a.Action)
			}
			var ids []string
			for _, d := range t.Devices() {
				if d.Hostname == a.Host {
					ids = append(ids, d.ID)
				}
			}
			switch len(ids) {
			case 0:
				return fmt.Errorf("no device %q on the tailnet", a.Host)
			case 1:
				id = ids[0]
			default:
				return fmt.Errorf("%d devices have the hostname %q; give the device's \"id\"", len(ids), a.Host)
			}
		}
		_, err := t.SetEnabledRoutes(id, a.Routes)
		return err
	case "qovery.set_chart_version":
		if err := need("id"); err != nil {
			return err
		}
		return q.SetHelmChartVersion(a.ID, a.Value)
	case "qovery.set_cluster_wide":
		if err := need("id"); err != nil {
			return err
		}
		return q.SetHelmAllowClusterWideResources(a.ID, a.Enabled)
	case "qovery.set_values":
		if err := need("id"); err != nil {
			return err
		}
		h, ok := q.Helm(a.ID)
		if !ok {
			return fmt.Errorf("no Helm service %s", a.ID)
		}
		name := "values.yaml"
		if h.ValuesOverride.File != nil && h.ValuesOverride.File.Raw != nil && len(h.ValuesOverride.File.Raw.Values) > 0 {
			name = h.ValuesOverride.File.Raw.Values[0].Name
		}
		return q.SetHelmRawValues(a.ID, qoveryapi.ValuesFile{Name: name, Content: a.Value})
	case "qovery.delete_service":
		if err := need("id"); err != nil {
			return err
		}
		return q.DeleteService(a.ID)
	case "qovery.deploy":
		if err := need("id"); err != nil {
			return err
		}
		return q.Deploy(a.ID)
	case "qovery.delete_variable":
		if err := need("id", "key"); err != nil {
			return err
		}
		for _, v := range q.Variables() {
			if v.ParentID == a.ID && v.Key == a.Key {
				return q.DeleteVariable(v.ID)
			}
		}
		return fmt.Errorf("no variable %s on %s", a.Key, a.ID)
	case "qovery.set_repository_url":
		if err := need("id"); err != nil {
			return err
		}
		return q.UpdateHelmRepository(a.ID, func(r *qoveryapi.HelmRepository) { r.URL = a.Value })
	case "qovery.delete_repository":
		if err := need("id"); err != nil {
			return err
		}
		return q.DeleteHelmRepository(a.ID)
	case "qovery.set_annotation":
		if err := need("id", "key"); err != nil {
			return err
		}
		g, ok := q.AnnotationsGroup(a.ID)
		if !ok {
			return fmt.Errorf("no annotations group %s", a.ID)
		}
		anns := make([]qoveryapi.Annotation, 0, len(g.Annotations)+1)
		found := false
		for _, an := range g.Annotations {
			if an.Key == a.Key {
				an.Value = a.Value
				found = true
			}
			anns = append(anns, an)
		}
		if !found {
			anns = append(anns, qoveryapi.Annotation{Key: a.Key, Value: a.Value})
		}
		return q.SetAnnotations(a.ID, anns...)
	case "qovery.delete_group":
		if err := need("id"); err != nil {
			return err
		}
		return q.DeleteAnnotationsGroup(a.ID)
	case "qovery.detach_group":
		if err := need("id"); err != nil {
			return err
		}
		return q.DetachAnnotationsGroup(a.ID, a.GroupID)
	case "qovery.set_ports":
		if err := need("id"); err != nil {
			return err
		}
		ports := make([]qoveryapi.Port, 0, len(a.Ports))
		for _, p := range a.Ports {
			ports = append(ports, qoveryapi.Port{Name: fmt.Sprintf("p%d", p), InternalPort: p, Protocol: "HTTP"})
		}
		return q.SetApplicationPorts(a.ID, ports...)
	}
	return fmt.Errorf("unknown console action %q", a.Action)
}

func describe(e *aclcheck.Error) string {
	var b strings.Builder
	b.WriteString(e.Message)
	for _, d := range e.Data {
		fmt.Fprintf(&b, "; %s: %s", d.User, strings.Join(d.Errors, ", "))
	}
	return b.String()
}

func decode(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid request body: %w", err)
	}
	return nil
}

func writeJSON(rw http.ResponseWriter, status int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	enc := json.NewEncoder(rw)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(rw http.ResponseWriter, status int, err error) {
	writeJSON(rw, status, map[string]string{"message": err.Error()})
}

func tailnetDevice(a ConsoleAction) tailnetapi.DeviceSpec {
	return tailnetapi.DeviceSpec{Hostname: a.Host, Tags: a.Tags, User: a.User, OS: "linux"}
}
