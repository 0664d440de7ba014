// Package manifest renders the YAML that qtail hands to Qovery: the values
// file of the Tailscale operator chart, and reads it back.
package manifest

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Names of the Qovery secret variables that carry the operator's OAuth
// client, and the placeholders the values file uses for them. Qovery
// replaces each qovery.env.NAME at deploy time, so the secret never shows in
// the values.
const (
	OAuthClientIDVariable     = "TS_OAUTH_CLIENT_ID"
	OAuthClientSecretVariable = "TS_OAUTH_CLIENT_SECRET"
	OAuthClientIDRef          = "qovery.env." + OAuthClientIDVariable
	OAuthClientSecretRef      = "qovery.env." + OAuthClientSecretVariable
	// ValuesFileName is the name of the raw values file in the Helm service.
	ValuesFileName = "qtail-operator-values.yaml"
)

// OperatorValues are the chart values qtail owns.
type OperatorValues struct {
	Hostname         string
	DefaultTags      []string
	ProxyDefaultTags []string
	APIServerProxy   string // "false", "true" or "noauth"
	// OAuthAudience, when set, makes the operator authenticate with
	// workload identity federation: the chart projects a service account
	// token with this audience and the operator exchanges it for an API
	// token of the federated identity whose ID is the client ID variable;
	// no client secret is rendered. Only charts with WorkloadIdentity in
	// the version table read it.
	OAuthAudience string
}

// OwnedPath is a chart value that qtail sets, and what to set instead of
// overriding it.
type OwnedPath struct {
	// Path is the dotted key, such as oauth.clientId.
	Path string
	// Instead says which attributes of the operator resource set it.
	Instead string
}

// Attribute guidance for the OAuth client of the operator.
const insteadOAuthClient = "qtail manages the operator's OAuth client: set oauth_client_id with oauth_client_secret_wo " +
	"and oauth_client_secret_wo_version, or create_oauth_client = true"

// ownedPaths are the value keys qtail sets or keeps unset: extra values may
// not touch them. oauth.audience (workload identity) is qtail's to set from
// oauth_audience, and oauthSecretVolume (client credentials from another
// volume) would silently replace the OAuth client qtail manages: the chart
// then no longer mounts the Secret holding qtail's client.
var ownedPaths = []OwnedPath{
	{"oauth.clientId", insteadOAuthClient},
	{"oauth.clientSecret", insteadOAuthClient},
	{"oauth.audience", "for workload identity, set oauth_audience with oauth_client_id, the ID of a Tailscale federated identity"},
	{"oauthSecretVolume", "a volume of client credentials would replace the OAuth client qtail manages; " + insteadOAuthClient},
	{"operatorConfig.hostname", "set hostname"},
	{"operatorConfig.defaultTags", "set default_tags"},
	{"proxyConfig.defaultTags", "set proxy_default_tags"},
	{"apiServerProxyConfig.mode", "set api_server_proxy"},
}

// OwnedPaths lists the value keys qtail sets, in dotted form.
func OwnedPaths() []string {
	out := make([]string, 0, len(ownedPaths))
	for _, p := range ownedPaths {
		out = append(out, p.Path)
	}
	return out
}

// OwnedPathDetails lists the value keys qtail sets with what to set
// instead of each.
func OwnedPathDetails() []OwnedPath { return append([]OwnedPath(nil), ownedPaths...) }

// ownedParents are maps that qtail fills; their other keys are open to
// extra values, but they must stay maps.
var ownedParents = map[string]bool{"oauth": true, "operatorConfig": true, "proxyConfig": true, "apiServerProxyConfig": true}

// ParseExtraValues reads user-supplied YAML values and refuses keys that
// qtail owns. An empty document is an empty map.
func ParseExtraValues(doc string) (map[string]any, error) {
	out := map[string]any{}
	if strings.TrimSpace(doc) == "" {
		return out, nil
	}
	if err := yaml.Unmarshal([]byte(doc), &out); err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	if out == nil {
		return map[string]any{}, nil
	}
	var owned []string
	for _, p := range ownedPaths {
		if _, ok := lookup(out, p.Path); ok {
			owned = append(owned, fmt.Sprintf("%s (%s)", p.Path, p.Instead))
		}
	}
	if len(owned) > 0 {
		return nil, fmt.Errorf("these keys are set by qtail from the resource's own attributes and cannot be overridden: %s", strings.Join(owned, "; "))
	}
	if at := funnelKeys(out, ""); len(at) > 0 {
		return nil, fmt.Errorf("these values set the annotation %s, which publishes a Service on the public internet through "+
			"Tailscale Funnel: %s. qtail puts services on the tailnet only and never turns Funnel on; remove it", AnnotationFunnel,
			strings.Join(at, ", "))
	}
	for parent := range ownedParents {
		if v, ok := out[parent]; ok {
			if _, isMap := v.(map[string]any); !isMap {
				return nil, fmt.Errorf("%s must be a map: qtail sets keys inside it", parent)
			}
		}
	}
	return out, nil
}

func lookup(m map[string]any, dotted string) (any, bool) {
	parts := strings.Split(dotted, ".")
	var cur any = m
	for _, p := range parts {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = mm[p]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

func set(m map[string]any, dotted string, v any) {
	parts := strings.Split(dotted, ".")
	cur := m
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[parts[len(parts)-1]] = v
}

// RenderOperatorValues returns the values file: extra values with qtail's
// values merged over them. The output is stable (sorted keys, two-space
// indentation), so that an unchanged configuration renders the same bytes.
func RenderOperatorValues(v OperatorValues, extra map[string]any) (string, error) {
	doc := deepCopy(extra)
	set(doc, "oauth.clientId", OAuthClientIDRef)
	if v.OAuthAudience != "" {
		// The chart then mounts no client secret: the operator exchanges
		// a projected service account token instead.
		set(doc, "oauth.audience", v.OAuthAudience)
	} else {
		set(doc, "oauth.clientSecret", OAuthClientSecretRef)
	}
	set(doc, "operatorConfig.hostname", v.Hostname)
	set(doc, "operatorConfig.defaultTags", toAny(v.DefaultTags))
	// The chart reads proxyConfig.defaultTags as one comma-separated string.
	set(doc, "proxyConfig.defaultTags", strings.Join(v.ProxyDefaultTags, ","))
	set(doc, "apiServerProxyConfig.mode", v.APIServerProxy)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// ReadOperatorValues parses a values file back into qtail's values and the
// extra values around them. It tells drift in the console from the
// configuration.
func ReadOperatorValues(doc string) (OperatorValues, map[string]any, error) {
	all := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &all); err != nil {
		return OperatorValues{}, nil, fmt.Errorf("the values file is not valid YAML: %w", err)
	}
	if all == nil {
		all = map[string]any{}
	}
	var v OperatorValues
	if s, ok := lookup(all, "operatorConfig.hostname"); ok {
		v.Hostname = fmt.Sprint(s)
	}
	if s, ok := lookup(all, "operatorConfig.defaultTags"); ok {
		v.DefaultTags = toStrings(s)
	}
	if s, ok := lookup(all, "proxyConfig.defaultTags"); ok {
		switch t := s.(type) {
		case string:
			v.ProxyDefaultTags = splitTags(t)
		default:
			v.ProxyDefaultTags = toStrings(t)
		}
	}
	if s, ok := lookup(all, "apiServerProxyConfig.mode"); ok {
		v.APIServerProxy = fmt.Sprint(s)
	}
	if s, ok := lookup(all, "oauth.audience"); ok && s != nil {
		v.OAuthAudience = fmt.Sprint(s)
	}
	extra := deepCopy(all)
	for _, p := range ownedPaths {
		remove(extra, p.Path)
	}
	for parent := range ownedParents {
		if m, ok := extra[parent].(map[string]any); ok && len(m) == 0 {
			delete(extra, parent)
		}
	}
	return v, extra, nil
}

// OAuthReferences reports whether the values file still reads the OAuth
// client from the Qovery variables: the client ID and secret, or with
// workload identity (oauth.audience) the client ID alone.
func OAuthReferences(doc string) bool {
	all := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &all); err != nil {
		return false
	}
	id, _ := lookup(all, "oauth.clientId")
	secret, hasSecret := lookup(all, "oauth.clientSecret")
	audience, _ := lookup(all, "oauth.audience")
	if a, ok := audience.(string); ok && a != "" {
		return id == OAuthClientIDRef && !hasSecret
	}
	return id == OAuthClientIDRef && secret == OAuthClientSecretRef
}

// OperatorDefaultProxyClass returns proxyConfig.defaultProxyClass of an
// operator values file: the ProxyClass the operator applies to exposed
// Services and ProxyGroups that name none (not to Connectors). Empty when
// unset or unreadable.
func OperatorDefaultProxyClass(doc string) string {
	all := map[string]any{}
	if yaml.Unmarshal([]byte(doc), &all) != nil {
		return ""
	}
	if s, ok := lookup(all, "proxyConfig.defaultProxyClass"); ok {
		if name, ok := s.(string); ok {
			return name
		}
	}
	return ""
}

// CanonicalYAML renders a values map in the stable form, for comparing
// extra values regardless of formatting. An empty map renders as "".
func CanonicalYAML(m map[string]any) (string, error) {
	if len(m) == 0 {
		return "", nil
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

func remove(m map[string]any, dotted string) {
	parts := strings.Split(dotted, ".")
	cur := m
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return
		}
		cur = next
	}
	delete(cur, parts[len(parts)-1])
}

func splitTags(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func toStrings(v any) []string {
	switch t := v.(type) {
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			out = append(out, fmt.Sprint(e))
		}
		return out
	case string:
		return splitTags(t)
	}
	return nil
}

func deepCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out[k] = copyValue(m[k])
	}
	return out
}

func copyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return deepCopy(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}

// funnelKeys returns the paths, under prefix, of the keys of v that are the
// Funnel annotation, in maps and lists at any depth, in a stable order.
func funnelKeys(v any, prefix string) []string {
	var out []string
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if strings.EqualFold(strings.TrimSpace(k), AnnotationFunnel) {
				out = append(out, p)
				continue
			}
			out = append(out, funnelKeys(t[k], p)...)
		}
	case []any:
		for i, e := range t {
			out = append(out, funnelKeys(e, fmt.Sprintf("%s[%d]", prefix, i))...)
		}
	}
	return out
}
