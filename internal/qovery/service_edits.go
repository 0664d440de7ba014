package qovery

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Applications and containers are edited with their edit requests
// (ApplicationEditRequest, ContainerRequest) built from the object read:
// every member of the request is copied from the answer, those whose
// request shape differs rebuilt, and the answer's read-only members (id,
// created_at, environment, service_type, maximum_cpu...) and any member
// the request does not define are left out, since a strict server
// refuses them. Members copied verbatim stay as read: absent when the
// answer has none, null when it says null.

// portRequest is a port of an edit request (ServicePort), its members
// copied as read: an id keeps the port, none creates one.
type portRequest struct {
	ID                 json.RawMessage `json:"id,omitempty"`
	Name               json.RawMessage `json:"name,omitempty"`
	InternalPort       json.RawMessage `json:"internal_port,omitempty"`
	ExternalPort       json.RawMessage `json:"external_port,omitempty"`
	PubliclyAccessible json.RawMessage `json:"publicly_accessible,omitempty"`
	IsDefault          json.RawMessage `json:"is_default,omitempty"`
	Protocol           json.RawMessage `json:"protocol,omitempty"`
	PublicPath         json.RawMessage `json:"public_path,omitempty"`
	PublicPathRewrite  json.RawMessage `json:"public_path_rewrite,omitempty"`
}

// storageRequest is a storage entry of an edit request, its members
// copied as read: an id keeps the volume, none creates one.
type storageRequest struct {
	ID         json.RawMessage `json:"id,omitempty"`
	Type       json.RawMessage `json:"type,omitempty"`
	Size       json.RawMessage `json:"size,omitempty"`
	MountPoint json.RawMessage `json:"mount_point,omitempty"`
}

// workloadEdit holds the members that ApplicationEditRequest and
// ContainerRequest share. Ports and storage entries left out would be
// deleted (the edit replaces collections), so both are sent as read.
type workloadEdit struct {
	Storage               *[]storageRequest `json:"storage,omitempty"`
	Ports                 *[]portRequest    `json:"ports,omitempty"`
	Name                  json.RawMessage   `json:"name,omitempty"`
	Description           json.RawMessage   `json:"description,omitempty"`
	Arguments             json.RawMessage   `json:"arguments,omitempty"`
	Entrypoint            json.RawMessage   `json:"entrypoint,omitempty"`
	CPU                   json.RawMessage   `json:"cpu,omitempty"`
	Memory                json.RawMessage   `json:"memory,omitempty"`
	GPU                   json.RawMessage   `json:"gpu,omitempty"`
	EphemeralStorageInGiB json.RawMessage   `json:"ephemeral_storage_in_gib,omitempty"`
	CPUArchitecture       json.RawMessage   `json:"cpu_architecture,omitempty"`
	MinRunningInstances   json.RawMessage   `json:"min_running_instances,omitempty"`
	MaxRunningInstances   json.RawMessage   `json:"max_running_instances,omitempty"`
	Healthchecks          json.RawMessage   `json:"healthchecks,omitempty"`
	AutoPreview           json.RawMessage   `json:"auto_preview,omitempty"`
	AutoDeploy            json.RawMessage   `json:"auto_deploy,omitempty"`
	IconURI               json.RawMessage   `json:"icon_uri,omitempty"`
	// AnnotationsGroups is always sent, [] included: the API does not
	// say what an absent member means.
	AnnotationsGroups []Ref `json:"annotations_groups"`
	// LabelsGroups is sent as read, as references.
	LabelsGroups *[]Ref `json:"labels_groups,omitempty"`
	// Autoscaling is in request shape, left out when the service has
	// none.
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`
}

// applicationEdit is an ApplicationEditRequest.
type applicationEdit struct {
	workloadEdit
	GitRepository          *GitRepository  `json:"git_repository,omitempty"`
	BuildMode              json.RawMessage `json:"build_mode,omitempty"`
	DockerfilePath         json.RawMessage `json:"dockerfile_path,omitempty"`
	DockerTargetBuildStage json.RawMessage `json:"docker_target_build_stage,omitempty"`
}

// containerEdit is a ContainerRequest.
type containerEdit struct {
	workloadEdit
	RegistryID string          `json:"registry_id"`
	ImageName  json.RawMessage `json:"image_name,omitempty"`
	Tag        json.RawMessage `json:"tag,omitempty"`
}

// readEdit fills req, an edit request that embeds a workloadEdit (w),
// from the answer read at path, attaching exactly groupIDs.
func readEdit(path string, read json.RawMessage, req any, w *workloadEdit, groupIDs []string) error {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(read, &probe); err != nil {
		return fmt.Errorf("qovery: GET %s: the answer is not a JSON object: %w", path, err)
	}
	if probe == nil {
		return fmt.Errorf("qovery: GET %s: the answer is null", path)
	}
	// The members rebuilt below are decoded on their own.
	rest := make(map[string]json.RawMessage, len(probe))
	for k, v := range probe {
		switch k {
		case "annotations_groups", "labels_groups", "autoscaling":
		default:
			rest[k] = v
		}
	}
	b, err := json.Marshal(rest)
	if err != nil {
		return fmt.Errorf("qovery: GET %s: %w", path, err)
	}
	if err := json.Unmarshal(b, req); err != nil {
		return fmt.Errorf("qovery: GET %s: %w", path, err)
	}
	w.AnnotationsGroups = refs(groupIDs)
	w.LabelsGroups = nil
	if raw, ok := probe["labels_groups"]; ok {
		var groups []Ref
		if err := json.Unmarshal(raw, &groups); err != nil {
			return fmt.Errorf("qovery: GET %s: labels_groups: %w", path, err)
		}
		ids := make([]string, 0, len(groups))
		for _, g := range groups {
			ids = append(ids, g.ID)
		}
		labels := refs(ids)
		w.LabelsGroups = &labels
	}
	scaling, err := autoscalingRequest(probe["autoscaling"])
	if err != nil {
		return fmt.Errorf("qovery: GET %s: autoscaling: %w", path, err)
	}
	w.Autoscaling = scaling
	return nil
}

// refs returns [{"id": ...}] for ids, without repeats, [] for none.
func refs(ids []string) []Ref {
	out := make([]Ref, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, Ref{ID: id})
		}
	}
	return out
}

// Autoscaling is a service's KEDA autoscaling policy in request shape
// (AutoscalingPolicyRequest). The answer adds ids, dates and the service
// id, which an edit does not take.
type Autoscaling struct {
	Mode                   string          `json:"mode"`
	PollingIntervalSeconds *int            `json:"polling_interval_seconds,omitempty"`
	CooldownPeriodSeconds  *int            `json:"cooldown_period_seconds,omitempty"`
	Scalers                []ScalerRequest `json:"scalers"`
}

// ScalerRequest is a KEDA scaler in request shape.
type ScalerRequest struct {
	ScalerType string `json:"scaler_type"`
	Enabled    *bool  `json:"enabled,omitempty"`
	// Role is PRIMARY or SAFETY.
	Role       string          `json:"role"`
	ConfigJSON json.RawMessage `json:"config_json,omitempty"`
	ConfigYAML *string         `json:"config_yaml,omitempty"`
	// TriggerAuthentication is named when it refers to an existing one;
	// an inline one is named by the server.
	TriggerAuthentication *TriggerAuthenticationRequest `json:"trigger_authentication,omitempty"`
}

// TriggerAuthenticationRequest is a KEDA TriggerAuthentication in request
// shape.
type TriggerAuthenticationRequest struct {
	Name       string `json:"name,omitempty"`
	ConfigYAML string `json:"config_yaml"`
}

// autoscalingRequest converts an autoscaling policy as answered into its
// request shape, nil for none.
func autoscalingRequest(raw json.RawMessage) (*Autoscaling, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var in struct {
		Mode                   string `json:"mode"`
		PollingIntervalSeconds *int   `json:"polling_interval_seconds"`
		CooldownPeriodSeconds  *int   `json:"cooldown_period_seconds"`
		Scalers                []struct {
			ScalerType            string          `json:"scaler_type"`
			Enabled               *bool           `json:"enabled"`
			Role                  string          `json:"role"`
			ConfigJSON            json.RawMessage `json:"config_json"`
			ConfigYAML            *string         `json:"config_yaml"`
			TriggerAuthentication *struct {
				Name       string  `json:"name"`
				ConfigYAML *string `json:"config_yaml"`
			} `json:"trigger_authentication"`
		} `json:"scalers"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	out := &Autoscaling{Mode: in.Mode, PollingIntervalSeconds: in.PollingIntervalSeconds, CooldownPeriodSeconds: in.CooldownPeriodSeconds,
		Scalers: make([]ScalerRequest, 0, len(in.Scalers))}
	for _, sc := range in.Scalers {
		r := ScalerRequest{ScalerType: sc.ScalerType, Enabled: sc.Enabled, Role: sc.Role, ConfigYAML: sc.ConfigYAML}
		if len(sc.ConfigJSON) > 0 && string(sc.ConfigJSON) != "null" {
			r.ConfigJSON = sc.ConfigJSON
		}
		if t := sc.TriggerAuthentication; t != nil {
			r.TriggerAuthentication = &TriggerAuthenticationRequest{Name: t.Name}
			if t.ConfigYAML != nil {
				r.TriggerAuthentication.ConfigYAML = *t.ConfigYAML
			}
		}
		out.Scalers = append(out.Scalers, r)
	}
	return out, nil
}

// getService reads the service id at /segment/id (segment "helm",
// "application" or "container"); a deleted one is settled with its
// environment's list (see serviceGone).
func getService[T any](ctx context.Context, c *Client, segment, id string, in []Parent) (*T, error) {
	var out T
	gone := func(ctx context.Context, err error) error { return c.serviceGone(ctx, err, segment, id, in) }
	if err := c.getObject(ctx, pathf("/"+segment+"/%s", id), &out, gone); err != nil {
		return nil, err
	}
	return &out, nil
}

// putEdit sends the edit request req to path and returns the service as
// edited.
func putEdit[T any](ctx context.Context, c *Client, path string, req any) (*T, error) {
	var out T
	if err := c.do(ctx, http.MethodPut, path, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
