package provider

import (
	"context"
	"sort"
	"sync"
)

// proxyGroupRegistry remembers, for one provider instance, the ProxyGroups
// that the qtail_proxy_group resources of the plan declare, by cluster and
// name, with their type. An exposure that names one of them in proxy_group
// is checked against its type.
//
// An exposure that references qtail_proxy_group.NAME.name is planned after
// that ProxyGroup, so the registry has it by then. A ProxyGroup that no
// resource of the plan declares may be managed elsewhere and is not
// checked.
type proxyGroupRegistry struct {
	mu sync.Mutex
	// groups maps an environment and a ProxyGroup name to its type. The
	// environment stands for its cluster, which the ProxyGroup's plan
	// reads only when it checks a change.
	groups map[proxyGroupRef]string
	// clusters maps an environment ID to its cluster ID, as far as read.
	clusters map[string]string
}

type proxyGroupRef struct {
	environmentID, name string
}

// plannedProxyGroup is one ProxyGroup of the plan.
type plannedProxyGroup struct {
	environmentID, name, typ string
}

func newProxyGroupRegistry() *proxyGroupRegistry {
	return &proxyGroupRegistry{groups: map[proxyGroupRef]string{}, clusters: map[string]string{}}
}

// declare records that the plan has the ProxyGroup name of type typ in the
// environment environmentID; clusterID is the environment's cluster, or ""
// when it was not read. Declaring again replaces the type (Terraform may
// plan one resource more than once).
func (x *proxyGroupRegistry) declare(environmentID, clusterID, name, typ string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.groups[proxyGroupRef{environmentID: environmentID, name: name}] = typ
	if clusterID != "" {
		x.clusters[environmentID] = clusterID
	}
}

// named returns the planned ProxyGroups called name, in every environment.
func (x *proxyGroupRegistry) named(name string) []plannedProxyGroup {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []plannedProxyGroup
	for ref, typ := range x.groups {
		if ref.name == name {
			out = append(out, plannedProxyGroup{environmentID: ref.environmentID, name: name, typ: typ})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].environmentID < out[j].environmentID })
	return out
}

// cluster returns the cluster of an environment, reading it with read the
// first time.
func (x *proxyGroupRegistry) cluster(ctx context.Context, environmentID string,
	read func(ctx context.Context, environmentID string) (string, error)) (string, error) {
	x.mu.Lock()
	c, ok := x.clusters[environmentID]
	x.mu.Unlock()
	if ok {
		return c, nil
	}
	c, err := read(ctx, environmentID)
	if err != nil {
		return "", err
	}
	x.mu.Lock()
	x.clusters[environmentID] = c
	x.mu.Unlock()
	return c, nil
}
