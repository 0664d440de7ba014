package operator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// operatorHelmArguments make Helm wait for the operator to be ready and roll
// back a failed upgrade, so that a failed deployment leaves the previous
// operator running.
var operatorHelmArguments = []string{"--wait", "--atomic"}

const operatorHelmDescription = "Tailscale Kubernetes operator, managed by qtail."

// oauthCredentials are what the two Qovery variables must hold. An empty
// secret leaves the secret variable's value as it is; with workload
// identity there is no secret variable.
type oauthCredentials struct {
	clientID         string
	secret           string
	workloadIdentity bool
}

// operatorRequest fills req (a new request, or one made from the service
// with ToRequest) with what qtail owns: name, chart, arguments, cluster-wide
// resources and the whole values override.
func operatorRequest(req *qovery.HelmRequest, m *operatorModel, values string) {
	req.Name = m.Hostname.ValueString()
	if req.Description == "" {
		req.Description = operatorHelmDescription
	}
	req.AutoDeploy = false
	req.Source = qovery.HelmSourceRequest{HelmRepository: &qovery.HelmRepositorySourceRequest{
		Repository:   m.HelmRepositoryID.ValueString(),
		ChartName:    cluster.OperatorChart,
		ChartVersion: m.ChartVersion.ValueString(),
	}}
	req.Arguments = slices.Clone(operatorHelmArguments)
	req.AllowClusterWideResources = true
	req.ValuesOverride = qovery.HelmValuesOverride{File: &qovery.HelmValuesFile{Raw: &qovery.HelmRawValues{
		Values: []qovery.HelmRawValuesFile{{Name: manifest.ValuesFileName, Content: values}},
	}}}
}

// operatorObservation is what Qovery holds for an operator's Helm service.
type operatorObservation struct {
	helm *qovery.Helm
	// file is the content of qtail's values file; fileFound is false
	// when the service has no such file.
	file      string
	fileFound bool
	// others describe the parts of the values override outside qtail's
	// file (keys only, never values).
	others []string
	// idVar and secretVar are the service's own TS_OAUTH_CLIENT_ID and
	// TS_OAUTH_CLIENT_SECRET, nil when absent.
	idVar, secretVar *qovery.Variable
	// status is the service's deployment status.
	status *qovery.Status
}

// reportedValues is the `values` attribute: qtail's values file, followed by
// a comment naming what else overrides the chart's values.
func (o *operatorObservation) reportedValues() string {
	if len(o.others) == 0 {
		return o.file
	}
	var b strings.Builder
	b.WriteString(o.file)
	if o.file != "" && !strings.HasSuffix(o.file, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("# Also in the values override of the Helm service, outside qtail's values file:\n")
	for _, s := range o.others {
		b.WriteString("#   " + s + "\n")
	}
	return b.String()
}

// observeOperator reads the Helm service of the environment envID ("" after
// an import) and its own variables. A service that does not exist is an
// error for which qovery.IsNotFound is true.
func observeOperator(ctx context.Context, q *qovery.Client, helmID, envID string) (*operatorObservation, error) {
	h, err := q.GetHelm(ctx, helmID, qovery.InEnvironment(envID))
	if err != nil {
		return nil, err
	}
	obs := &operatorObservation{helm: h}
	vo := h.ValuesOverride
	if vo.File != nil && vo.File.Raw != nil {
		for _, f := range vo.File.Raw.Values {
			if f.Name == manifest.ValuesFileName && !obs.fileFound {
				obs.file, obs.fileFound = f.Content, true
				continue
			}
			obs.others = append(obs.others, "values file "+f.Name)
		}
	}
	if vo.File != nil && vo.File.Git != nil {
		obs.others = append(obs.others, fmt.Sprintf("values files %s from Git repository %s", strings.Join(vo.File.Git.Paths, ", "), vo.File.Git.GitRepository.URL))
	}
	for _, set := range []struct {
		flag  string
		pairs [][2]string
	}{{"--set", vo.Set}, {"--set-string", vo.SetString}, {"--set-json", vo.SetJSON}} {
		for _, kv := range set.pairs {
			obs.others = append(obs.others, set.flag+" "+kv[0]+" (value not shown)")
		}
	}
	vars, err := q.ListVariables(ctx, helmID, qovery.VariableScopeHelm)
	if err != nil {
		return nil, fmt.Errorf("listing the variables of Helm service %s: %w", helmID, err)
	}
	own := ownHelmVariables(vars)
	obs.idVar, obs.secretVar = own[manifest.OAuthClientIDVariable], own[manifest.OAuthClientSecretVariable]
	if obs.status, err = q.GetHelmStatus(ctx, helmID); err != nil {
		return nil, fmt.Errorf("reading the deployment status of Helm service %s: %w", helmID, err)
	}
	return obs, nil
}

// ownHelmVariables keeps the variables defined on the Helm service itself,
// its overrides of the environment's or the project's included (the list
// also holds inherited and built-in ones), by key.
func ownHelmVariables(vars []qovery.Variable) map[string]*qovery.Variable {
	out := map[string]*qovery.Variable{}
	for i := range vars {
		v := &vars[i]
		if v.IsOwn(qovery.VariableScopeHelm) {
			out[v.Key] = v
		}
	}
	return out
}

// syncOAuthVariables makes the Helm service hold TS_OAUTH_CLIENT_ID as a
// plain variable (a client ID is not a secret, and it must stay readable)
// and TS_OAUTH_CLIENT_SECRET as a secret, or, with workload identity, no
// TS_OAUTH_CLIENT_SECRET. A variable of the wrong kind is replaced. It
// returns the variable IDs (secretVarID is empty with workload identity).
func syncOAuthVariables(ctx context.Context, q *qovery.Client, helmID string, creds oauthCredentials) (idVarID, secretVarID string, err error) {
	vars, err := q.ListVariables(ctx, helmID, qovery.VariableScopeHelm)
	if err != nil {
		return "", "", fmt.Errorf("listing the variables of Helm service %s: %w", helmID, err)
	}
	own := ownHelmVariables(vars)
	idVarID, err = putOperatorVariable(ctx, q, helmID, own[manifest.OAuthClientIDVariable], manifest.OAuthClientIDVariable, creds.clientID, false,
		"OAuth client ID of the Tailscale operator (managed by qtail)")
	if err != nil {
		return "", "", err
	}
	if creds.workloadIdentity {
		if v := own[manifest.OAuthClientSecretVariable]; v != nil {
			if err := q.DeleteVariable(ctx, v.ID, qovery.VariableParent(qovery.VariableScopeHelm, helmID)); err != nil && !qovery.IsNotFound(err) {
				return idVarID, v.ID, fmt.Errorf("deleting the variable %s, which workload identity does not use: %w", manifest.OAuthClientSecretVariable, err)
			}
		}
		return idVarID, "", nil
	}
	if creds.secret == "" {
		if v := own[manifest.OAuthClientSecretVariable]; v != nil && v.IsSecret {
			return idVarID, v.ID, nil
		}
		return idVarID, "", fmt.Errorf("the secret variable %s is missing and qtail has no secret to write into it", manifest.OAuthClientSecretVariable)
	}
	secretVarID, err = putOperatorVariable(ctx, q, helmID, own[manifest.OAuthClientSecretVariable], manifest.OAuthClientSecretVariable, creds.secret, true,
		"OAuth client secret of the Tailscale operator (managed by qtail)")
	if err != nil {
		return idVarID, "", err
	}
	return idVarID, secretVarID, nil
}

// putOperatorVariable creates or edits one variable of the Helm service. Errors
// name the variable, never its value.
func putOperatorVariable(ctx context.Context, q *qovery.Client, helmID string, existing *qovery.Variable, key, value string, secret bool, description string) (string, error) {
	if existing != nil && existing.IsSecret == secret {
		if !secret && existing.Value != nil && *existing.Value == value {
			return existing.ID, nil
		}
		v, err := q.EditVariable(ctx, existing.ID, &qovery.VariableEditRequest{Key: key, Value: &value, Description: &description})
		if err != nil {
			return "", fmt.Errorf("updating the variable %s: %w", key, err)
		}
		return v.ID, nil
	}
	if existing != nil {
		if err := q.DeleteVariable(ctx, existing.ID, qovery.VariableParent(qovery.VariableScopeHelm, helmID)); err != nil && !qovery.IsNotFound(err) {
			return "", fmt.Errorf("deleting the variable %s to recreate it as a %s: %w", key, operatorVariableKind(secret), err)
		}
	}
	v, err := q.CreateVariable(ctx, &qovery.VariableRequest{
		Key: key, Value: value, IsSecret: secret, Description: &description,
		VariableScope: qovery.VariableScopeHelm, VariableParentID: helmID,
	})
	if err != nil {
		return "", fmt.Errorf("creating the variable %s: %w", key, err)
	}
	return v.ID, nil
}

func operatorVariableKind(secret bool) string {
	if secret {
		return "secret"
	}
	return "plain variable"
}

// sameTags reports whether have and want hold the same tags, in any order.
func sameTags(have, want []string) bool {
	return len(have) == len(want) && cluster.HasTags(have, want) && cluster.HasTags(want, have)
}

// operatorDeviceDrift describes how the device d differs from the operator
// device as planned (named hostname, tagged exactly tags), or returns ""
// when it does not.
func operatorDeviceDrift(d *tailnet.Device, hostname string, tags []string) string {
	switch {
	case d.Hostname != hostname:
		return fmt.Sprintf("device %s is named %s, not %s", cluster.DeviceID(d), d.Hostname, hostname)
	case !sameTags(d.Tags, tags):
		return fmt.Sprintf("device %s (%s) is tagged %s, not %s", hostname, cluster.DeviceID(d), tfx.HCLList(d.Tags), tfx.HCLList(tags))
	}
	return ""
}

// lookupOperatorDevice returns the operator's device: the device id when
// it is still on the tailnet (the operator keeps its node across upgrades,
// renames and tag changes), otherwise the tagged device named hostname, or
// nil when there is none.
func lookupOperatorDevice(ctx context.Context, tn *tailnet.Client, id, hostname string) (*tailnet.Device, error) {
	if id != "" {
		d, err := tn.GetDevice(ctx, id)
		if err == nil {
			return d, nil
		}
		if !tailnet.IsNotFound(err) {
			return nil, err
		}
	}
	d, err := tn.FindDeviceByHostname(ctx, hostname)
	if err != nil || d == nil || len(d.Tags) == 0 {
		// A device of a user is never the operator's.
		return nil, err
	}
	return d, nil
}

// retagError is the failure to set the operator device's tags.
type retagError struct {
	device *tailnet.Device
	tags   []string
	err    error
}

func (e *retagError) Error() string {
	return fmt.Sprintf("setting the tags of the operator device %s (%s) to %s: %v", e.device.Hostname, cluster.DeviceID(e.device), tfx.HCLList(e.tags), e.err)
}

func (e *retagError) Unwrap() error { return e.err }

// awaitOperatorDevice waits, after a deployment, for the operator's device
// to be online under hostname, then gives it exactly tags. The operator
// keeps its node in its operator Secret: a new hostname renames the same
// device, and its tags stay those of its first login whatever
// OPERATOR_INITIAL_TAGS says now, so qtail sets them through the API
// (POST /device/{id}/tags). id is the device the operator had (empty for a
// new operator): the wait follows it while it is on the tailnet, and
// otherwise waits for a tagged device that joins under hostname (a new
// node, or the node of an earlier install in the same namespace coming
// back online).
func awaitOperatorDevice(ctx context.Context, tn *tailnet.Client, id, hostname string, tags []string, poll time.Duration) (*tailnet.Device, error) {
	last := "nothing yet"
	wait := tfx.StartWait(ctx, "the operator device "+hostname+" to be online on the tailnet")
	for {
		d, err := lookupOperatorDevice(ctx, tn, id, hostname)
		switch {
		case err != nil && ctx.Err() == nil:
			return nil, fmt.Errorf("looking for the operator device: %w", err)
		case err != nil:
		case d == nil:
			last = "no tagged device named " + hostname
		case d.Hostname != hostname:
			last = fmt.Sprintf("device %s is still named %s", cluster.DeviceID(d), d.Hostname)
		case !d.ConnectedToControl:
			last = fmt.Sprintf("device %s (%s) is offline", d.Hostname, cluster.DeviceID(d))
		case sameTags(d.Tags, tags):
			return d, nil
		default:
			if err := tn.SetDeviceTags(ctx, cluster.DeviceID(d), tags); err != nil {
				return nil, &retagError{device: d, tags: tags, err: err}
			}
			d.Tags = slices.Clone(tags)
			return d, nil
		}
		if wait.Sleep(ctx, poll, last) != nil {
			return nil, fmt.Errorf("%w waiting for the operator device %s to be online on the tailnet (last seen: %s)",
				cluster.ErrTimedOut, hostname, last)
		}
	}
}

// revokeOperatorClient deletes an OAuth client; one already gone is fine.
func revokeOperatorClient(ctx context.Context, tn *tailnet.Client, id string) error {
	if err := tn.DeleteKey(ctx, id); err != nil && !tailnet.IsNotFound(err) {
		return err
	}
	return nil
}

// oauthClientDescriptionPrefix starts the description of every OAuth
// client qtail creates for an operator.
const oauthClientDescriptionPrefix = "qtail operator "

// oauthClientDescription names the cluster in at most 50 letters, digits,
// spaces, dashes and underscores, as the keys API requires.
func oauthClientDescription(clusterName, hostname string) string {
	name := clusterName
	if name == "" {
		name = hostname
	}
	var b strings.Builder
	b.WriteString(oauthClientDescriptionPrefix)
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == ' ':
			b.WriteRune(c)
		default:
			b.WriteRune('-')
		}
	}
	s := b.String()
	if len(s) > 50 {
		s = s[:50]
	}
	return strings.TrimSpace(s)
}

// sameExtraValues reports whether two extra_values documents hold the same
// values ("" and a document with no keys are the same).
func sameExtraValues(a, b string) bool {
	ma, err := manifest.ParseExtraValues(a)
	if err != nil {
		return false
	}
	mb, err := manifest.ParseExtraValues(b)
	if err != nil {
		return false
	}
	ca, err := manifest.CanonicalYAML(ma)
	if err != nil {
		return false
	}
	cb, err := manifest.CanonicalYAML(mb)
	if err != nil {
		return false
	}
	return ca == cb
}
