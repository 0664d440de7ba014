package cluster

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"go.yaml.in/yaml/v3"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// ProxyClassCheck asks whether the ProxyClass of a planned object lets the
// operator bring up its proxy: the operator makes none for a Connector,
// ProxyGroup or Service whose ProxyClass is missing from the cluster or
// not Ready.
type ProxyClassCheck struct {
	// Name is the ProxyClass the object names; empty for none.
	Name string
	// OperatorDefault is set for the objects to which the operator applies
	// its proxyConfig.defaultProxyClass when they name none (exposed and
	// egress Services, ProxyGroups; not Connectors).
	OperatorDefault bool
	// At is the attribute that names the ProxyClass.
	At path.Path
	// Object names the object in a sentence: "the Connector homelab".
	Object string
}

// renderedProxyClass is a ProxyClass and the Helm service that renders it.
type renderedProxyClass struct {
	manifest.ProxyClass
	helm *qovery.Helm
}

// clusterProxyClasses returns the ProxyClasses that the Helm services of a
// cluster render, by name, and the Helm services whose rendering qtail
// cannot read: their values come from Git or --set flags, or their chart is
// not one that applies a `manifests` list (such as tailnet-manifests).
func clusterProxyClasses(helms []qovery.Helm) (map[string]renderedProxyClass, []*qovery.Helm) {
	return clusterRendered(helms, func(h *qovery.Helm, files []string) map[string]renderedProxyClass {
		out := map[string]renderedProxyClass{}
		for _, pc := range manifest.RenderedProxyClasses(files...) {
			out[pc.Name] = renderedProxyClass{ProxyClass: pc, helm: h}
		}
		return out
	})
}

// clusterRendered returns what extract finds, by name, in the values files
// of each Helm service of a cluster that qtail can read (the first service
// that renders a name wins), and the Helm services it cannot read.
func clusterRendered[T any](helms []qovery.Helm, extract func(h *qovery.Helm, files []string) map[string]T) (map[string]T, []*qovery.Helm) {
	found := map[string]T{}
	var opaque []*qovery.Helm
	for i := range helms {
		h := &helms[i]
		if isOperator(h) {
			continue
		}
		files, readable := manifestsValues(h)
		if !readable {
			opaque = append(opaque, h)
			continue
		}
		for name, v := range extract(h, files) {
			if _, seen := found[name]; !seen {
				found[name] = v
			}
		}
	}
	return found, opaque
}

// manifestsValues returns the raw values files of a Helm service, and
// whether they are all that makes what it renders: no values from Git, no
// --set flags, and a `manifests` list in one of the files.
func manifestsValues(h *qovery.Helm) ([]string, bool) {
	vo := h.ValuesOverride
	if len(vo.Set)+len(vo.SetString)+len(vo.SetJSON) > 0 || vo.File == nil || vo.File.Git != nil || vo.File.Raw == nil {
		return nil, false
	}
	var files []string
	listed := false
	for _, f := range vo.File.Raw.Values {
		files = append(files, f.Content)
		var doc map[string]any
		if yaml.Unmarshal([]byte(f.Content), &doc) == nil {
			if _, ok := doc[manifest.ManifestsKey]; ok {
				listed = true
			}
		}
	}
	return files, listed
}

// CheckProxyClass refuses a ProxyClass that no Helm service of the cluster
// renders, or one that cannot be Ready, and warns when qtail cannot tell:
// a Helm service whose rendering it cannot read, or a ProxyClass whose
// readiness depends on what qtail cannot see. Without a ProxyClass, the
// operator's default counts for the objects it applies to.
func CheckProxyClass(ctx context.Context, c *conn.Clients, ops *Lookup, check ProxyClassCheck, diags *diag.Diagnostics) {
	name, named := check.Name, "named in proxy_class"
	if name == "" && check.OperatorDefault {
		op, _ := ops.UsePlan(c.Planned()).Operator(ctx)
		name, named = op.DefaultProxyClass, "the operator's default, proxyConfig.defaultProxyClass in its extra_values"
	}
	if name == "" {
		return
	}
	cluster := ops.Env.ClusterID
	helms, err := ops.Helms(ctx)
	if err != nil {
		diags.AddWarning("ProxyClass Not Checked", fmt.Sprintf("qtail could not list the Helm services of cluster %s to find the "+
			"ProxyClass %s: %v. The operator brings up no proxy for %s until that ProxyClass is Ready.", cluster, name, err, check.Object))
		return
	}
	found, opaque := clusterProxyClasses(helms)
	pc, ok := found[name]
	if ok && pc.Problem() != "" {
		diags.AddAttributeError(check.At, "ProxyClass Cannot Be Ready",
			fmt.Sprintf("The ProxyClass %s (%s) is rendered by the Helm service %q (%s) on cluster %s, but %s. The operator brings up "+
				"no proxy for %s until the ProxyClass is Ready. Fix the ProxyClass in that Helm service, or name another one.",
				name, named, pc.helm.Name, pc.helm.ID, cluster, pc.Problem(), check.Object))
		return
	}
	if ok && pc.ServiceMonitor {
		diags.AddAttributeWarning(check.At, "ProxyClass Readiness Not Checked",
			fmt.Sprintf("The ProxyClass %s (Helm service %q) asks for a Prometheus ServiceMonitor: the operator marks it Ready only "+
				"where the CRD servicemonitors.monitoring.coreos.com is installed, which qtail cannot see. Without it, %s gets no proxy.",
				name, pc.helm.Name, check.Object))
		return
	}
	if ok {
		return
	}
	if len(opaque) > 0 {
		diags.AddAttributeWarning(check.At, "ProxyClass Not Checked",
			fmt.Sprintf("No Helm service of cluster %s that qtail can read renders the ProxyClass %s (%s), and qtail cannot tell what "+
				"%s render (values from Git or --set, or a chart of their own). The operator brings up no proxy for %s until a "+
				"ProxyClass of that name is Ready on the cluster.", cluster, name, named, helmNames(opaque), check.Object))
		return
	}
	diags.AddAttributeError(check.At, "ProxyClass Not on the Cluster",
		fmt.Sprintf("No Helm service of cluster %s renders the ProxyClass %s (%s); qtail read the values of all %d of them. "+
			"The operator brings up no proxy for %s until a ProxyClass of that name is Ready. Render it in a Helm service of the "+
			"%s chart (an entry of kind ProxyClass, apiVersion %s, in manifests), or name a ProxyClass that exists.",
			cluster, name, named, len(helms), check.Object, ManifestsChart, manifest.TailscaleAPIVersion))
}

// ProxyClassProblem returns why the ProxyClass name (or, when empty and
// operatorDefault is set, the operator's default) keeps the operator from
// bringing up a proxy, when the cluster's Helm services show it for sure:
// none of them renders it (and qtail can read them all), or it cannot be
// Ready. It returns "" otherwise.
func ProxyClassProblem(ctx context.Context, ops *Lookup, name string, operatorDefault bool) string {
	if name == "" && operatorDefault {
		op, _ := ops.Operator(ctx)
		name = op.DefaultProxyClass
	}
	if name == "" {
		return ""
	}
	helms, err := ops.Helms(ctx)
	if err != nil {
		return ""
	}
	found, opaque := clusterProxyClasses(helms)
	pc, ok := found[name]
	if ok && pc.Problem() != "" {
		return fmt.Sprintf("the ProxyClass %s cannot be Ready: %s", name, pc.Problem())
	}
	if !ok && len(opaque) == 0 {
		return fmt.Sprintf("no Helm service of cluster %s renders the ProxyClass %s, so the operator waits for it", ops.Env.ClusterID, name)
	}
	return ""
}

func helmNames(helms []*qovery.Helm) string {
	names := make([]string, len(helms))
	for i, h := range helms {
		names[i] = fmt.Sprintf("%q (%s)", h.Name, h.ID)
	}
	return strings.Join(names, ", ")
}
