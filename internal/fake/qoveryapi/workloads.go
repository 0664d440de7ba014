package qoveryapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
)

// Workload holds what applications and containers share: the members of a
// service whose pods the engine runs behind a Kubernetes Service. Extra
// holds every other member as last sent (cpu, memory, fields unknown to the
// fake...), so that they survive an edit that sends them back.
type Workload struct {
	Ports               []Port
	Storage             []Storage
	Healthchecks        json.RawMessage
	AnnotationsGroupIDs []string
	LabelsGroupIDs      []string
	// Autoscaling is nil for a service without a KEDA policy.
	Autoscaling *Autoscaling
	Extra       map[string]json.RawMessage
}

// Autoscaling is a KEDA autoscaling policy.
type Autoscaling struct {
	ID                     string
	Mode                   string
	PollingIntervalSeconds int
	CooldownPeriodSeconds  int
	Scalers                []Scaler
	CreatedAt              time.Time
}

// Scaler is a KEDA scaler of an autoscaling policy.
type Scaler struct {
	ID         string
	ScalerType string
	Enabled    bool
	// Role is PRIMARY or SAFETY.
	Role string
	// ConfigJSON is a JSON object, nil for none.
	ConfigJSON json.RawMessage
	// ConfigYAML is nil for none.
	ConfigYAML            *string
	TriggerAuthentication *TriggerAuthentication
}

// TriggerAuthentication is the KEDA TriggerAuthentication of a scaler.
type TriggerAuthentication struct {
	ID         string
	Name       string
	ConfigYAML *string
}

// LabelsGroup is an organization labels group.
type LabelsGroup struct {
	ID             string
	OrganizationID string
	Name           string
	Labels         []Label
	CreatedAt      time.Time
	seq            uint64
}

// Label is one label of a labels group.
type Label struct {
	Key                      string
	Value                    string
	PropagateToCloudProvider bool
}

// Members of an application or container answer that an edit does not
// take: they are ignored when sent back, as the console sends the whole
// object it read.
var workloadReadOnly = []string{"id", "created_at", "updated_at", "environment", "service_type",
	"maximum_cpu", "maximum_memory", "maximum_gpu", "maximun_gpu"}

func (w *Workload) clone() Workload {
	out := *w
	out.Ports = clonePorts(w.Ports)
	out.Storage = slices.Clone(w.Storage)
	out.Healthchecks = slices.Clone(w.Healthchecks)
	out.AnnotationsGroupIDs = slices.Clone(w.AnnotationsGroupIDs)
	out.LabelsGroupIDs = slices.Clone(w.LabelsGroupIDs)
	if w.Autoscaling != nil {
		a := w.Autoscaling.clone()
		out.Autoscaling = &a
	}
	out.Extra = make(map[string]json.RawMessage, len(w.Extra))
	for k, v := range w.Extra {
		out.Extra[k] = slices.Clone(v)
	}
	return out
}

func (a *Autoscaling) clone() Autoscaling {
	out := *a
	out.Scalers = make([]Scaler, len(a.Scalers))
	for i, sc := range a.Scalers {
		sc.ConfigJSON = slices.Clone(sc.ConfigJSON)
		sc.ConfigYAML = cloneStrPtr(sc.ConfigYAML)
		if sc.TriggerAuthentication != nil {
			t := *sc.TriggerAuthentication
			t.ConfigYAML = cloneStrPtr(t.ConfigYAML)
			sc.TriggerAuthentication = &t
		}
		out.Scalers[i] = sc
	}
	return out
}

// config is the workload as a deployment renders it: JSON members in a
// canonical form and no ids, so that key order, spacing and new ids do not
// count as changes.
func (w *Workload) config() Workload {
	c := w.clone()
	c.Healthchecks = canonical(c.Healthchecks)
	for k, v := range c.Extra {
		c.Extra[k] = canonical(v)
	}
	if c.Autoscaling != nil {
		c.Autoscaling.ID, c.Autoscaling.CreatedAt = "", time.Time{}
		for i := range c.Autoscaling.Scalers {
			sc := &c.Autoscaling.Scalers[i]
			sc.ID = ""
			sc.ConfigJSON = canonical(sc.ConfigJSON)
			if sc.TriggerAuthentication != nil {
				sc.TriggerAuthentication.ID = ""
			}
		}
	}
	return c
}

// Response shapes.

type labelJSON struct {
	Key                      string `json:"key"`
	Value                    string `json:"value"`
	PropagateToCloudProvider bool   `json:"propagate_to_cloud_provider"`
}

type labelsGroupJSON struct {
	ID        string      `json:"id"`
	CreatedAt time.Time   `json:"created_at"`
	UpdatedAt time.Time   `json:"updated_at"`
	Name      string      `json:"name"`
	Labels    []labelJSON `json:"labels"`
}

type triggerAuthenticationJSON struct {
	ID             string    `json:"id"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	OrganizationID string    `json:"organization_id"`
	Name           string    `json:"name"`
	ConfigYAML     *string   `json:"config_yaml,omitempty"`
}

type scalerJSON struct {
	ID                    string                     `json:"id"`
	CreatedAt             time.Time                  `json:"created_at"`
	UpdatedAt             time.Time                  `json:"updated_at"`
	ScalerType            string                     `json:"scaler_type"`
	Enabled               bool                       `json:"enabled"`
	Role                  string                     `json:"role"`
	ConfigJSON            json.RawMessage            `json:"config_json"`
	ConfigYAML            *string                    `json:"config_yaml"`
	TriggerAuthentication *triggerAuthenticationJSON `json:"trigger_authentication,omitempty"`
}

type autoscalingJSON struct {
	ID                     string       `json:"id"`
	CreatedAt              time.Time    `json:"created_at"`
	UpdatedAt              time.Time    `json:"updated_at"`
	ServiceID              string       `json:"service_id"`
	Mode                   string       `json:"mode"`
	PollingIntervalSeconds int          `json:"polling_interval_seconds"`
	CooldownPeriodSeconds  int          `json:"cooldown_period_seconds"`
	Scalers                []scalerJSON `json:"scalers"`
}

// renderWorkload adds the members of w to out, the answer about service
// serviceID of organization orgID: the extra members as last sent, then the
// ones the fake models.
func (st *State) renderWorkload(out map[string]any, w *Workload, serviceID, orgID string) {
	for k, v := range w.Extra {
		out[k] = v
	}
	ports := []portJSON{}
	for _, p := range w.Ports {
		ports = append(ports, portJSON{ID: p.ID, Name: p.Name, InternalPort: p.InternalPort, ExternalPort: cloneIntPtr(p.ExternalPort),
			PubliclyAccessible: p.PubliclyAccessible, IsDefault: p.IsDefault, Protocol: p.Protocol})
	}
	out["ports"] = ports
	storage := []storageJSON{}
	for _, s := range w.Storage {
		storage = append(storage, storageJSON(s))
	}
	out["storage"] = storage
	if len(w.Healthchecks) > 0 {
		out["healthchecks"] = w.Healthchecks
	} else {
		out["healthchecks"] = map[string]any{}
	}
	groups := []annotationsGroupJSON{}
	for _, id := range w.AnnotationsGroupIDs {
		if g := st.AnnotationsGroups[id]; g != nil {
			groups = append(groups, renderAnnotationsGroup(g))
		}
	}
	out["annotations_groups"] = groups
	labels := []labelsGroupJSON{}
	for _, id := range w.LabelsGroupIDs {
		if g := st.LabelsGroups[id]; g != nil {
			j := labelsGroupJSON{ID: g.ID, CreatedAt: g.CreatedAt, UpdatedAt: g.CreatedAt, Name: g.Name, Labels: []labelJSON{}}
			for _, l := range g.Labels {
				j.Labels = append(j.Labels, labelJSON(l))
			}
			labels = append(labels, j)
		}
	}
	out["labels_groups"] = labels
	if a := w.Autoscaling; a != nil {
		j := autoscalingJSON{ID: a.ID, CreatedAt: a.CreatedAt, UpdatedAt: a.CreatedAt, ServiceID: serviceID, Mode: a.Mode,
			PollingIntervalSeconds: a.PollingIntervalSeconds, CooldownPeriodSeconds: a.CooldownPeriodSeconds, Scalers: []scalerJSON{}}
		for _, sc := range a.Scalers {
			sj := scalerJSON{ID: sc.ID, CreatedAt: a.CreatedAt, UpdatedAt: a.CreatedAt, ScalerType: sc.ScalerType, Enabled: sc.Enabled,
				Role: sc.Role, ConfigJSON: sc.ConfigJSON, ConfigYAML: cloneStrPtr(sc.ConfigYAML)}
			if sj.ConfigJSON == nil {
				sj.ConfigJSON = json.RawMessage("null")
			}
			if t := sc.TriggerAuthentication; t != nil {
				sj.TriggerAuthentication = &triggerAuthenticationJSON{ID: t.ID, CreatedAt: a.CreatedAt, UpdatedAt: a.CreatedAt,
					OrganizationID: orgID, Name: t.Name, ConfigYAML: cloneStrPtr(t.ConfigYAML)}
			}
			j.Scalers = append(j.Scalers, sj)
		}
		out["autoscaling"] = j
	}
}

// editWorkload applies the shared members of an edit body to a copy of w.
// It is a replacement for collections: a port or storage entry without id
// is created, one with an id is updated, one left out is deleted; an
// absent autoscaling removes the policy. own lists the members the caller
// handles itself; they are not kept in Extra. The caller holds the lock.
func (s *Server) editWorkload(kind string, w *Workload, body map[string]json.RawMessage, orgID string, own ...string) (Workload, error) {
	next := w.clone()

	hc, ok := body["healthchecks"]
	if !ok || string(hc) == "null" {
		return next, badRequest("healthchecks: required")
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(hc, &probe); err != nil {
		return next, badRequest("healthchecks: must be an object with readiness_probe and liveness_probe")
	}
	next.Healthchecks = compact(hc)

	// (fake) The API does not say what an absent annotations_groups means
	// (keep or clear), so an edit without it is refused: clients must
	// always send the field, [] to detach every group.
	rawGroups, ok := body["annotations_groups"]
	if !ok || string(rawGroups) == "null" {
		return next, badRequest("annotations_groups: required (send [] to detach every group)")
	}
	var err error
	if next.AnnotationsGroupIDs, err = groupIDs("annotations_groups", rawGroups, func(id string) bool {
		g := s.st.AnnotationsGroups[id]
		return g != nil && g.OrganizationID == orgID
	}); err != nil {
		return next, err
	}
	// An absent labels_groups detaches them all, as a collection left
	// out of the body. (The console sends the group objects it read; their
	// other members are ignored.)
	next.LabelsGroupIDs = []string{}
	if raw, ok := body["labels_groups"]; ok && string(raw) != "null" {
		if next.LabelsGroupIDs, err = groupIDs("labels_groups", raw, func(id string) bool {
			g := s.st.LabelsGroups[id]
			return g != nil && g.OrganizationID == orgID
		}); err != nil {
			return next, err
		}
	}

	// (fake) An absent ports or storage list is an empty one: every entry
	// is left out, so every entry is deleted.
	var ports []portRequestJSON
	if raw, ok := body["ports"]; ok {
		if err := json.Unmarshal(raw, &ports); err != nil {
			return next, badRequest("ports: %s", jsonMessage(err))
		}
	}
	next.Ports = []Port{}
	for i, p := range ports {
		port, err := s.validPort(kind, i, &p, w.Ports)
		if err != nil {
			return next, err
		}
		next.Ports = append(next.Ports, port)
	}

	var storage []storageRequestJSON
	if raw, ok := body["storage"]; ok {
		if err := json.Unmarshal(raw, &storage); err != nil {
			return next, badRequest("storage: %s", jsonMessage(err))
		}
	}
	next.Storage = []Storage{}
	for i, st := range storage {
		entry, err := s.validStorage(kind, i, &st, w.Storage)
		if err != nil {
			return next, err
		}
		next.Storage = append(next.Storage, entry)
	}

	next.Autoscaling = nil
	if raw, ok := body["autoscaling"]; ok && string(raw) != "null" {
		if next.Autoscaling, err = s.validAutoscaling(raw, w.Autoscaling); err != nil {
			return next, err
		}
	}

	next.Extra = map[string]json.RawMessage{}
	for k, v := range body {
		switch k {
		case "healthchecks", "annotations_groups", "labels_groups", "ports", "storage", "autoscaling":
			continue
		}
		if slices.Contains(own, k) || slices.Contains(workloadReadOnly, k) {
			continue
		}
		next.Extra[k] = compact(v)
	}
	return next, nil
}

// editService handles the edit (PUT) of an application or a container,
// named by the path parameter param: refused while the service is being
// deleted, checked by edit, which returns the new name and the function
// that applies the edit, and refused when the new name is taken in the
// environment. render answers the service as edited.
func (s *Server) editService(r *http.Request, kind, param string, edit func(id string, body map[string]json.RawMessage) (string, func(), error),
	render func(id string) map[string]any) (int, any, error) {
	body, err := decodeObject(r)
	if err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.PathValue(param)
	w, ok := s.st.workload(id)
	if !ok || w.kind != kind {
		return 0, nil, s.missing(strings.ToLower(kind), id)
	}
	if w.status.deleting() {
		return 0, nil, errorf(http.StatusConflict, "Operation is in progress: the service is being deleted")
	}
	if !s.opts.AcceptUnknownMembers {
		if err := editMembers(kind, body); err != nil {
			return 0, nil, err
		}
	}
	name, apply, err := edit(id, body)
	if err != nil {
		return 0, nil, err
	}
	if s.st.nameTaken(w.envID, name, id) {
		return 0, nil, errorf(http.StatusConflict, "a service named %q already exists in this environment", name)
	}
	apply()
	return http.StatusOK, render(id), nil
}

// Members of the edit requests of applications (ApplicationEditRequest)
// and containers (ContainerRequest), and of the items of their lists.
var (
	applicationEditMembers = []string{"storage", "name", "description", "git_repository", "build_mode", "dockerfile_path",
		"cpu", "memory", "gpu", "ephemeral_storage_in_gib", "min_running_instances", "max_running_instances", "healthchecks",
		"auto_preview", "ports", "arguments", "entrypoint", "auto_deploy", "annotations_groups", "labels_groups", "icon_uri",
		"docker_target_build_stage", "cpu_architecture", "autoscaling"}
	containerEditMembers = []string{"storage", "ports", "name", "description", "registry_id", "image_name", "tag", "arguments",
		"entrypoint", "cpu", "memory", "gpu", "ephemeral_storage_in_gib", "cpu_architecture", "min_running_instances",
		"max_running_instances", "healthchecks", "auto_preview", "auto_deploy", "annotations_groups", "labels_groups", "icon_uri",
		"autoscaling"}
	portMembers    = []string{"id", "name", "internal_port", "external_port", "publicly_accessible", "is_default", "protocol", "public_path", "public_path_rewrite"}
	storageMembers = []string{"id", "type", "size", "mount_point"}
	groupMembers   = []string{"id"}
)

// editMembers refuses an edit body of an application or a container
// (kind) with a member that its request does not define, at the top or in
// an item of ports, storage, annotations_groups or labels_groups, as a
// strict server does (see Options.AcceptUnknownMembers). The members'
// values are checked later.
func editMembers(kind string, body map[string]json.RawMessage) error {
	members, request := applicationEditMembers, "ApplicationEditRequest"
	if kind == kindContainer {
		members, request = containerEditMembers, "ContainerRequest"
	}
	var unknown []string
	for k := range body {
		if !slices.Contains(members, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return badRequest("unknown field %q: %s does not define it (unknown fields: %s)", unknown[0], request, strings.Join(unknown, ", "))
	}
	for field, allowed := range map[string][]string{"ports": portMembers, "storage": storageMembers,
		"annotations_groups": groupMembers, "labels_groups": groupMembers} {
		raw, ok := body[field]
		if !ok || string(raw) == "null" {
			continue
		}
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return badRequest("%s: must be a list of objects", field)
		}
		for i, item := range items {
			if err := onlyMembers(fmt.Sprintf("%s[%d]", field, i), item, allowed...); err != nil {
				return err
			}
		}
	}
	return nil
}

// groupIDs reads a list of group references [{"id": ...}]; exists says
// whether an id names a group of the organization. Other members of an
// item are ignored.
func groupIDs(field string, raw json.RawMessage, exists func(string) bool) ([]string, error) {
	var groups []struct {
		ID *string `json:"id"`
	}
	if err := json.Unmarshal(raw, &groups); err != nil {
		return nil, badRequest("%s: %s", field, jsonMessage(err))
	}
	ids := []string{}
	for i, g := range groups {
		id, err := requireString(fmt.Sprintf("%s[%d].id", field, i), g.ID)
		if err != nil {
			return nil, err
		}
		if !exists(id) {
			return nil, badRequest("%s[%d].id: group %s not found in the organization", field, i, id)
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// onlyMembers refuses an object with members other than allowed: a
// response-only member sent back is an error.
func onlyMembers(field string, obj map[string]json.RawMessage, allowed ...string) error {
	var extra []string
	for k := range obj {
		if !slices.Contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	sort.Strings(extra)
	return badRequest("%s: unknown field %q: the request takes %v", field, extra[0], allowed)
}

// validAutoscaling reads an autoscaling policy in request shape
// (AutoscalingPolicyRequest, KEDA): the response's ids, dates and
// service_id are refused. prev keeps the ids of an unchanged policy.
func (s *Server) validAutoscaling(raw json.RawMessage, prev *Autoscaling) (*Autoscaling, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, badRequest("autoscaling: must be an object")
	}
	if err := onlyMembers("autoscaling", obj, "mode", "polling_interval_seconds", "cooldown_period_seconds", "scalers"); err != nil {
		return nil, err
	}
	var req struct {
		Mode                   *string           `json:"mode"`
		PollingIntervalSeconds *int              `json:"polling_interval_seconds"`
		CooldownPeriodSeconds  *int              `json:"cooldown_period_seconds"`
		Scalers                []json.RawMessage `json:"scalers"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, badRequest("autoscaling: %s", jsonMessage(err))
	}
	mode, err := requireString("autoscaling.mode", req.Mode)
	if err != nil {
		return nil, err
	}
	if err := oneOf("autoscaling.mode", mode, "KEDA"); err != nil {
		return nil, err
	}
	if len(req.Scalers) == 0 {
		return nil, badRequest("autoscaling.scalers: at least one scaler is required")
	}
	out := &Autoscaling{Mode: mode, PollingIntervalSeconds: 30, CooldownPeriodSeconds: 300}
	if req.PollingIntervalSeconds != nil {
		out.PollingIntervalSeconds = *req.PollingIntervalSeconds
	}
	if req.CooldownPeriodSeconds != nil {
		out.CooldownPeriodSeconds = *req.CooldownPeriodSeconds
	}
	for i, rawScaler := range req.Scalers {
		sc, err := validScaler(fmt.Sprintf("autoscaling.scalers[%d]", i), rawScaler)
		if err != nil {
			return nil, err
		}
		out.Scalers = append(out.Scalers, *sc)
	}
	// Ids stay when the policy is unchanged, as an update in place.
	if prev != nil {
		out.ID, out.CreatedAt = prev.ID, prev.CreatedAt
		for i := range out.Scalers {
			if i < len(prev.Scalers) && prev.Scalers[i].ScalerType == out.Scalers[i].ScalerType {
				out.Scalers[i].ID = prev.Scalers[i].ID
				if out.Scalers[i].TriggerAuthentication != nil && prev.Scalers[i].TriggerAuthentication != nil {
					out.Scalers[i].TriggerAuthentication.ID = prev.Scalers[i].TriggerAuthentication.ID
				}
			}
		}
	}
	s.autoscalingIDs(out)
	return out, nil
}

// autoscalingIDs gives ids to the parts of a policy that have none. The
// caller holds the lock.
func (s *Server) autoscalingIDs(a *Autoscaling) {
	if a.ID == "" {
		a.ID, a.CreatedAt = s.newID(), now()
	}
	for i := range a.Scalers {
		if a.Scalers[i].ID == "" {
			a.Scalers[i].ID = s.newID()
		}
		if t := a.Scalers[i].TriggerAuthentication; t != nil && t.ID == "" {
			t.ID = s.newID()
			if t.Name == "" {
				// The backend names an inline trigger authentication.
				t.Name = "keda-auth-" + shortID(t.ID)
			}
		}
	}
}

func validScaler(field string, raw json.RawMessage) (*Scaler, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, badRequest("%s: must be an object", field)
	}
	if err := onlyMembers(field, obj, "scaler_type", "enabled", "role", "config_json", "config_yaml", "trigger_authentication"); err != nil {
		return nil, err
	}
	var req struct {
		ScalerType *string         `json:"scaler_type"`
		Enabled    *bool           `json:"enabled"`
		Role       *string         `json:"role"`
		ConfigJSON json.RawMessage `json:"config_json"`
		ConfigYAML *string         `json:"config_yaml"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, badRequest("%s: %s", field, jsonMessage(err))
	}
	typ, err := requireString(field+".scaler_type", req.ScalerType)
	if err != nil {
		return nil, err
	}
	role, err := requireString(field+".role", req.Role)
	if err != nil {
		return nil, err
	}
	if err := oneOf(field+".role", role, "PRIMARY", "SAFETY"); err != nil {
		return nil, err
	}
	sc := &Scaler{ScalerType: typ, Role: role, Enabled: true, ConfigYAML: req.ConfigYAML}
	if req.Enabled != nil {
		sc.Enabled = *req.Enabled
	}
	if len(req.ConfigJSON) > 0 && string(req.ConfigJSON) != "null" {
		var cfg map[string]any
		if err := json.Unmarshal(req.ConfigJSON, &cfg); err != nil {
			return nil, badRequest("%s.config_json: must be an object", field)
		}
		sc.ConfigJSON = compact(req.ConfigJSON)
	}
	if rawAuth, ok := obj["trigger_authentication"]; ok && string(rawAuth) != "null" {
		var auth map[string]json.RawMessage
		if err := json.Unmarshal(rawAuth, &auth); err != nil {
			return nil, badRequest("%s.trigger_authentication: must be an object", field)
		}
		if err := onlyMembers(field+".trigger_authentication", auth, "name", "config_yaml"); err != nil {
			return nil, err
		}
		var t struct {
			Name       *string `json:"name"`
			ConfigYAML *string `json:"config_yaml"`
		}
		if err := json.Unmarshal(rawAuth, &t); err != nil {
			return nil, badRequest("%s.trigger_authentication: %s", field, jsonMessage(err))
		}
		sc.TriggerAuthentication = &TriggerAuthentication{ConfigYAML: t.ConfigYAML}
		if t.Name != nil {
			sc.TriggerAuthentication.Name = *t.Name
		}
	}
	return sc, nil
}

// validGitRepositoryRequest reads the git_repository of an application
// edit in request shape (ApplicationGitRepositoryRequest): provider and
// url are required, and the response's read-only members are refused.
func validGitRepositoryRequest(raw json.RawMessage) (GitSource, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return GitSource{}, badRequest("git_repository: must be an object")
	}
	// owner and name are listed as required by the API reference but
	// not defined; the console does not send them. They are tolerated.
	if err := onlyMembers("git_repository", obj, "provider", "url", "branch", "root_path", "git_token_id", "owner", "name"); err != nil {
		return GitSource{}, err
	}
	var g gitRepositoryRequestJSON
	if err := json.Unmarshal(raw, &g); err != nil {
		return GitSource{}, badRequest("git_repository: %s", jsonMessage(err))
	}
	return validGitSource("git_repository", &g, true)
}

// SeedLabelsGroup adds a labels group to an organization and returns its
// id.
func (s *Server) SeedLabelsGroup(orgID, name string, labels ...Label) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Organizations[orgID] == nil {
		return "", fmt.Errorf("organization %s does not exist", orgID)
	}
	g := &LabelsGroup{ID: s.newID(), OrganizationID: orgID, Name: name, Labels: slices.Clone(labels), CreatedAt: now(), seq: s.st.next()}
	s.st.LabelsGroups[g.ID] = g
	return g.ID, nil
}

// SetWorkloadSettings gives an application or a container the settings a
// real one often has, which an edit must carry over: a KEDA autoscaling
// policy with one scaler, and the labels groups labelsGroupIDs. The service
// stays up to date: this is how it was deployed.
func (s *Server) SetWorkloadSettings(serviceID string, labelsGroupIDs ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, ok := s.st.workload(serviceID)
	if !ok {
		return fmt.Errorf("service %s is not an application or a container", serviceID)
	}
	w, orgID := ref.w, s.st.environmentOrg(ref.envID)
	for _, id := range labelsGroupIDs {
		if g := s.st.LabelsGroups[id]; g == nil || g.OrganizationID != orgID {
			return fmt.Errorf("labels group %s does not exist in the service's organization", id)
		}
	}
	w.LabelsGroupIDs = slices.Clone(labelsGroupIDs)
	query := `sum(rate(http_requests_total[2m]))`
	w.Autoscaling = &Autoscaling{Mode: "KEDA", PollingIntervalSeconds: 30, CooldownPeriodSeconds: 300, Scalers: []Scaler{{
		ScalerType: "prometheus", Enabled: true, Role: "PRIMARY",
		ConfigJSON: json.RawMessage(`{"serverAddress":"http://prometheus.monitoring:9090","query":` + fmt.Sprintf("%q", query) + `,"threshold":"100"}`),
	}}}
	s.autoscalingIDs(w.Autoscaling)
	return nil
}
