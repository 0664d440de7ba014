package cluster

import (
	"crypto/sha256"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

// Egress Services: a rendered Service annotated with a tailnet target.
// Without a ProxyGroup the operator runs a proxy of its own for it, a
// tailnet device, and points the Service's externalName at the proxy's
// headless Service in the operator's namespace; with a ProxyGroup the
// ProxyGroup's devices carry the traffic, and externalName points at a
// ClusterIP Service the operator makes in its namespace.

// clusterDomain is the DNS domain of the simulated clusters.
const clusterDomain = "cluster.local"

// maxStatefulSetName bounds the generated names of a proxy's StatefulSet
// and headless Service, so that the pod names stay valid.
const maxStatefulSetName = 63 - 10 - 1

// generatedName is Kubernetes' generateName: base, shortened to keep the
// whole within limit, then five characters, here derived from seed so
// that a simulation is repeatable.
func generatedName(base, seed string, limit int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	sum := sha256.Sum256([]byte(seed))
	var suffix [5]byte
	for i := range suffix {
		suffix[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	if excess := len(base) + len(suffix) - limit; excess > 0 {
		base = base[:len(base)-1-excess] + "-"
	}
	return base + string(suffix[:])
}

// keepStatus carries what the operator did for a Service over a new
// version of its spec: the API server keeps the status, the proxy keeps
// its state Secret, and Helm's three-way merge leaves the externalName the
// operator wrote.
func (s *EgressService) keepStatus(prev *EgressService) {
	s.Valid, s.Problem = prev.Valid, prev.Problem
	s.DeviceID, s.ProxyHostname, s.ProxyTags = prev.DeviceID, prev.ProxyHostname, slices.Clone(prev.ProxyTags)
	if strings.HasSuffix(prev.ExternalName, ".svc."+clusterDomain) {
		s.ExternalName = prev.ExternalName
	}
}

// reconcileEgressLocked validates the egress Services of a cluster as the
// operator does, after a change on the cluster, and brings up or keeps
// their proxies. It logs the problems of the Services that helmID just
// deployed, and of any other whose validity changed (a ProxyGroup
// appeared or went away).
func (e *Engine) reconcileEgressLocked(cluster, helmID string) {
	op := e.operators[cluster]
	for _, k := range e.sortedKeysLocked(cluster) {
		o := e.objects[k]
		s := o.egress
		if s == nil {
			continue
		}
		problem := e.egressProblemLocked(s)
		valid := problem == ""
		changed := valid != s.Valid || problem != s.Problem
		s.Valid, s.Problem = valid, problem
		if !valid && (changed || o.helmID == helmID) {
			e.logf("Service %s/%s: %s", s.Namespace, s.Name, problem)
		}
		if !valid {
			// The operator returns before touching what it made.
			continue
		}
		if e.compat.NoEgressProxies {
			continue
		}
		if s.emptyProxyGroup && !e.compat.LenientAnnotations {
			if changed || o.helmID == helmID {
				e.logf("Service %s/%s: annotation %s is empty: no reconciler serves the Service", s.Namespace, s.Name, AnnotationProxyGroup)
			}
			continue
		}
		if s.ProxyGroup != "" {
			if s.DeviceID != "" {
				// Served by the ProxyGroup now: the proxy of its own
				// is cleaned up.
				e.tailnet.RemoveDevice(s.DeviceID)
				s.DeviceID, s.ProxyHostname, s.ProxyTags = "", "", nil
			}
			name := generatedName("ts-"+s.Name+"-", s.ClusterID+"/"+s.Namespace+"/"+s.Name, 253-5)
			s.ExternalName = name + "." + op.Namespace + ".svc." + clusterDomain
			continue
		}
		e.reconcileEgressProxyLocked(op, s)
	}
}

// reconcileEgressProxyLocked brings up or keeps the proxy device of an
// egress Service without a ProxyGroup: named by tailscale.com/hostname
// (default NAMESPACE-NAME), tagged by tailscale.com/tags (default the
// operator's proxy tags), once its ProxyClass is Ready. Its auth key is
// minted with the operator's OAuth client, whose tags must own the
// proxy's; otherwise the proxy fails on its own and no device appears. A
// proxy keeps its device: a new hostname renames it, its tags stay.
func (e *Engine) reconcileEgressProxyLocked(op *Operator, s *EgressService) {
	what := fmt.Sprintf("Service %s/%s", s.Namespace, s.Name)
	class := op.DefaultProxyClass
	if s.hasClass {
		class = s.proxyClass
	}
	if !e.proxyClassAllowsLocked(what, kindService, op, class) {
		return
	}
	hostname := s.hostname
	if hostname == "" {
		hostname = s.Namespace + "-" + s.Name
	}
	tags := op.ProxyTags
	if s.hasTags {
		tags = s.tags
	}
	if s.DeviceID != "" && deviceExists(e.tailnet, s.DeviceID) {
		if s.ProxyHostname == hostname {
			return
		}
		if !e.compat.ProxyNewDevice {
			e.tailnet.RenameDevice(s.DeviceID, hostname)
			s.ProxyHostname = hostname
			return
		}
		e.tailnet.RemoveDevice(s.DeviceID)
		s.DeviceID = ""
	}
	if err := e.mintLocked(op, tags, false); err != nil {
		e.logf("%s: ProxyFailed: failed to provision: failed to create or get API key secret: %v (no device for egress proxy %s)", what, err, hostname)
		return
	}
	e.noteSharedHostnameLocked(what, hostname)
	dev := e.tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: hostname, Tags: tags, OS: "linux"})
	s.DeviceID, s.ProxyHostname, s.ProxyTags = dev.ID, hostname, slices.Clone(tags)
	headless := generatedName("ts-"+s.Name+"-", s.ClusterID+"/"+s.Namespace+"/"+s.Name, maxStatefulSetName)
	s.ExternalName = headless + "." + op.Namespace + ".svc." + clusterDomain
}

// egressProblemLocked returns why the operator does not serve an egress
// Service, or "" when it does.
//
// Every egress Service is checked as validateService does: one target
// only, a target FQDN that looks like a tailnet node's MagicDNS name, a
// target IP that parses, a valid hostname (NAMESPACE-NAME unless
// tailscale.com/hostname says otherwise) and valid tags. With
// tailscale.com/proxy-group, the ProxyGroup must exist (the operator
// waits for it), be of type egress, and the Service must be an
// ExternalName with ports.
func (e *Engine) egressProblemLocked(s *EgressService) string {
	if _, ok := e.operators[s.ClusterID]; !ok {
		return fmt.Sprintf("no Tailscale operator runs on cluster %s, the annotations have no effect", s.ClusterID)
	}
	var violations []string
	if s.TailnetFQDN != "" && s.TailnetIP != "" {
		violations = append(violations, fmt.Sprintf("only one of annotations %s and %s can be set", AnnotationTailnetIP, AnnotationTailnetFQDN))
	}
	if s.TailnetFQDN != "" && !magicDNSNameRE.MatchString(s.TailnetFQDN) {
		violations = append(violations, fmt.Sprintf("invalid value of annotation %s: %q does not appear to be a valid MagicDNS name", AnnotationTailnetFQDN, s.TailnetFQDN))
	}
	if s.TailnetIP != "" {
		if _, err := netip.ParseAddr(s.TailnetIP); err != nil {
			violations = append(violations, fmt.Sprintf("invalid value of annotation %s: %q could not be parsed as a valid IP Address, error: %s", AnnotationTailnetIP, s.TailnetIP, err))
		}
	}
	if s.hostname != "" {
		if err := tailnetapi.CheckDNSLabel(s.hostname); err != nil {
			violations = append(violations, fmt.Sprintf("invalid Tailscale hostname specified %q: %s", s.hostname, err))
		}
	} else if err := tailnetapi.CheckDNSLabel(s.Namespace + "-" + s.Name); err != nil {
		violations = append(violations, fmt.Sprintf("invalid Tailscale hostname %q, use %q annotation to override: %s", s.Namespace+"-"+s.Name, AnnotationHostname, err))
	}
	for _, t := range s.tags {
		if !validTag(strings.TrimSpace(t)) {
			violations = append(violations, fmt.Sprintf("tailscale.com/tags annotation contains invalid tag %q: a tag is \"tag:\" then a letter, then letters, digits or dashes", t))
		}
	}
	if s.ProxyGroup == "" {
		if len(violations) == 0 {
			return ""
		}
		return "INVALIDSERVICE: unable to provision proxy resources: invalid Service: " + strings.Join(violations, ", ")
	}
	pg := e.proxyGroupLocked(s.ClusterID, s.ProxyGroup)
	if pg == nil {
		return fmt.Sprintf("ProxyGroup %q not found on cluster %s, waiting...", s.ProxyGroup, s.ClusterID)
	}
	if len(s.Ports) == 0 {
		violations = append(violations, "egress Service for ProxyGroup must have at least one target Port specified")
	}
	if s.Type != "ExternalName" {
		violations = append(violations, fmt.Sprintf("unexpected egress Service type %s. The only supported type is ExternalName.", s.Type))
	}
	if pg.Type != ProxyGroupTypeEgress {
		violations = append(violations, fmt.Sprintf("egress Service references ProxyGroup of type %s, must be type %s", pg.Type, ProxyGroupTypeEgress))
	}
	if len(violations) == 0 {
		return ""
	}
	return "INVALIDSERVICE: invalid egress Service: " + strings.Join(violations, ", ")
}
