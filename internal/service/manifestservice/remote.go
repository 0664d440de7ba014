package manifestservice

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// manifestHelmArguments make Helm roll back a failed upgrade, so that a
// failed deployment leaves the previous objects in place.
var manifestHelmArguments = []string{"--atomic"}

// manifestRequest fills req (new, or made from the service with ToRequest)
// with what qtail owns: name, source, arguments, cluster-wide resources and
// the whole values override.
func manifestRequest(req *qovery.HelmRequest, k manifestKind, name string, c manifestChart, values string) {
	req.Name = k.serviceName(name)
	if req.Description == "" {
		req.Description = "Tailscale " + k.object + " " + name + ", managed by qtail."
	}
	req.AutoDeploy = false
	req.Source = c.sourceRequest()
	req.Arguments = slices.Clone(manifestHelmArguments)
	req.AllowClusterWideResources = k.clusterScoped
	req.ValuesOverride = qovery.HelmValuesOverride{File: &qovery.HelmValuesFile{Raw: &qovery.HelmRawValues{
		Values: []qovery.HelmRawValuesFile{{Name: manifest.ManifestsFileName, Content: values}},
	}}}
}

// manifestObservation is what Qovery holds for a manifest service.
type manifestObservation struct {
	helm *qovery.Helm
	// file is the content of qtail's values file; fileFound is false when
	// the service has none.
	file      string
	fileFound bool
	// others describe the rest of the values override (names, never values).
	others []string
	status *qovery.Status
}

// observeManifestService reads a manifest service of the environment envID
// ("" after an import). A service that does not exist is an error for which
// qovery.IsNotFound is true.
func observeManifestService(ctx context.Context, q *qovery.Client, helmID, envID string) (*manifestObservation, error) {
	h, err := q.GetHelm(ctx, helmID, qovery.InEnvironment(envID))
	if err != nil {
		return nil, err
	}
	obs := &manifestObservation{helm: h}
	vo := h.ValuesOverride
	if vo.File != nil && vo.File.Raw != nil {
		for _, f := range vo.File.Raw.Values {
			if f.Name == manifest.ManifestsFileName && !obs.fileFound {
				obs.file, obs.fileFound = f.Content, true
				continue
			}
			obs.others = append(obs.others, "values file "+f.Name)
		}
	}
	if vo.File != nil && vo.File.Git != nil {
		obs.others = append(obs.others, "values files from Git repository "+vo.File.Git.GitRepository.URL)
	}
	for _, set := range []struct {
		flag  string
		pairs [][2]string
	}{{"--set", vo.Set}, {"--set-string", vo.SetString}, {"--set-json", vo.SetJSON}} {
		for _, kv := range set.pairs {
			obs.others = append(obs.others, set.flag+" "+kv[0])
		}
	}
	if obs.status, err = q.GetHelmStatus(ctx, helmID); err != nil {
		return nil, fmt.Errorf("reading the deployment status of Helm service %s: %w", helmID, err)
	}
	return obs, nil
}

// fillFromQovery sets the shared attributes from what Qovery holds and warns
// about drift, which the planned values then show.
func (m *manifestServiceModel) fillFromQovery(ctx context.Context, k manifestKind, obs *manifestObservation, diags *diag.Diagnostics) {
	h := obs.helm
	m.ID = types.StringValue(h.ID)
	m.EnvironmentID = types.StringValue(h.Environment.ID)
	m.HelmServiceName = types.StringValue(h.Name)
	prior, _, _ := m.chart(ctx)
	c := chartFromHelm(h, prior)
	if c.HelmRepository == nil && c.GitRepository == nil {
		diags.AddWarning("Chart Source Unknown", fmt.Sprintf("The Helm service %s takes its chart from a source qtail does not know. qtail plans to set it back.", h.ID))
		m.Chart = types.ObjectNull(manifestChartType.AttrTypes)
	} else {
		obj, d := chartObject(ctx, c)
		diags.Append(d...)
		m.Chart = obj
	}
	m.ClusterWideResourcesAllowed = types.BoolValue(h.AllowClusterWideResources)
	switch {
	case k.clusterScoped && !h.AllowClusterWideResources:
		diags.AddWarning("Cluster-Wide Resources Turned Off",
			fmt.Sprintf("The Helm service %s may no longer deploy cluster-wide resources, and a %s is cluster-scoped. qtail plans to allow them again and redeploy.", h.ID, k.object))
	case !k.clusterScoped && h.AllowClusterWideResources:
		diags.AddWarning("Cluster-Wide Resources Turned On",
			fmt.Sprintf("The Helm service %s may deploy cluster-wide resources, which a namespaced %s does not need. qtail plans to turn "+
				"them off again and redeploy.", h.ID, k.object))
	}
	reported := obs.file
	if len(obs.others) > 0 {
		var b strings.Builder
		b.WriteString(obs.file)
		if obs.file != "" && !strings.HasSuffix(obs.file, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("# Also in the values override of the Helm service, outside qtail's values file:\n")
		for _, s := range obs.others {
			b.WriteString("#   " + s + "\n")
		}
		reported = b.String()
		diags.AddWarning("Values Added Outside qtail",
			fmt.Sprintf("The values override of the Helm service %s holds more than qtail's values file (%s). qtail owns the whole override and plans to remove them.",
				h.ID, strings.Join(obs.others, "; ")))
	} else if !m.Values.IsNull() && !m.Values.IsUnknown() && cluster.YAMLEqual(reported, m.Values.ValueString()) {
		reported = m.Values.ValueString()
	}
	if !obs.fileFound {
		diags.AddWarning("Values File Missing",
			fmt.Sprintf("The Helm service %s has no values file %s. qtail plans to write it again and redeploy.", h.ID, manifest.ManifestsFileName))
	}
	m.Values = types.StringValue(reported)
	m.Deployed = types.BoolValue(cluster.Deployed(diags, k.noun, h.ID, obs.status))
}

// writeManifestService creates the Helm service (helmID "") or rewrites it
// with what qtail owns, keeping the rest of the service as it is.
func writeManifestService(ctx context.Context, q *qovery.Client, k manifestKind, envID, helmID, name string, c manifestChart, values string) (*qovery.Helm, error) {
	if helmID == "" {
		req := qovery.HelmRequest{}
		manifestRequest(&req, k, name, c, values)
		return q.CreateHelm(ctx, envID, &req)
	}
	h, err := q.GetHelm(ctx, helmID, qovery.InEnvironment(envID))
	if err != nil {
		return nil, err
	}
	req := h.ToRequest()
	manifestRequest(&req, k, name, c, values)
	return q.EditHelm(ctx, helmID, &req)
}
