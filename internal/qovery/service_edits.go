package qovery

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Applications and containers are edited by sending back the object read,
// as the console does. Some members are answered in another shape than
// the edit takes; editBody rebuilds the ones both kinds share.

// serviceBody is the JSON object of an edit, member by member.
type serviceBody struct {
	path    string
	members map[string]json.RawMessage
}

// set replaces a member.
func (b *serviceBody) set(name string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("qovery: PUT %s: encoding %s: %w", b.path, name, err)
	}
	b.members[name] = raw
	return nil
}

// raw returns the body to send.
func (b *serviceBody) raw() json.RawMessage {
	out, err := json.Marshal(b.members)
	if err != nil {
		// A map of raw messages decoded from JSON always encodes.
		panic(err)
	}
	return out
}

// editBody turns the answer read at path (an application or a container)
// into an edit body that attaches exactly groupIDs: annotations_groups and
// labels_groups as [{"id": ...}], autoscaling in request shape (removed
// when the service has none).
func editBody(path string, read json.RawMessage, groupIDs []string) (*serviceBody, error) {
	b := &serviceBody{path: path}
	if err := json.Unmarshal(read, &b.members); err != nil {
		return nil, fmt.Errorf("qovery: GET %s: the answer is not a JSON object: %w", path, err)
	}
	if b.members == nil {
		return nil, fmt.Errorf("qovery: GET %s: the answer is null", path)
	}
	if err := b.set("annotations_groups", refs(groupIDs)); err != nil {
		return nil, err
	}
	if raw, ok := b.members["labels_groups"]; ok {
		var groups []Ref
		if err := json.Unmarshal(raw, &groups); err != nil {
			return nil, fmt.Errorf("qovery: GET %s: labels_groups: %w", path, err)
		}
		ids := make([]string, 0, len(groups))
		for _, g := range groups {
			ids = append(ids, g.ID)
		}
		if err := b.set("labels_groups", refs(ids)); err != nil {
			return nil, err
		}
	}
	scaling, err := autoscalingRequest(b.members["autoscaling"])
	if err != nil {
		return nil, fmt.Errorf("qovery: GET %s: autoscaling: %w", path, err)
	}
	if scaling == nil {
		delete(b.members, "autoscaling")
	} else if err := b.set("autoscaling", scaling); err != nil {
		return nil, err
	}
	return b, nil
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
	if err := c.do(ctx, http.MethodGet, pathf("/"+segment+"/%s", id), nil, &out); err != nil {
		return nil, c.serviceGone(ctx, err, segment, id, in)
	}
	return &out, nil
}

// putGroups sends back read, the object at path, attaching exactly
// groupIDs (see editBody); fix rebuilds the members of that kind of
// service. It returns the service as edited.
func putGroups[T any](ctx context.Context, c *Client, path string, read json.RawMessage, groupIDs []string, fix func(*serviceBody) error) (*T, error) {
	body, err := editBody(path, read, groupIDs)
	if err != nil {
		return nil, err
	}
	if err := fix(body); err != nil {
		return nil, err
	}
	var out T
	if err := c.do(ctx, http.MethodPut, path, body.raw(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}
