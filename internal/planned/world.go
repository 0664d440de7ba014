package planned

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// World is what the resources planned so far by one provider instance
// claim, declare, replace and refreshed. Its methods are safe for
// concurrent use: Terraform plans several resources at once.
type World struct {
	mu sync.Mutex
	// hostnames maps a claimed hostname (lower case) to who claims it.
	hostnames map[string]string
	// objects maps a claimed cluster-scoped object (lower case) to who
	// claims it.
	objects map[string]string
	// released holds the IDs of objects that the plan replaces.
	released map[string]bool
	// failedOperators holds the Helm service and device IDs of operators
	// whose creation failed.
	failedOperators map[string]bool
	// operatorClusters holds the clusters on which the plan has an
	// operator.
	operatorClusters map[string]bool
	// operators holds, by cluster, what the plan of a qtail_operator says
	// about it.
	operators map[string]Operator
	// proxyGroups maps an environment and a ProxyGroup name to its type.
	// The environment stands for its cluster, which the ProxyGroup's plan
	// reads only when it checks a change.
	proxyGroups map[proxyGroupRef]string
	// clusters maps an environment ID to its cluster ID, as far as read.
	clusters map[string]string
	// refreshed maps the Helm service of a refreshed manifest service to
	// the IDs of its devices.
	refreshed map[string][]string
	// deleting counts, by the Qovery object that holds it, the Deletes in
	// progress of the objects that need an operator.
	deleting map[string]int
}

type proxyGroupRef struct {
	environmentID, name string
}

// ProxyGroup is one ProxyGroup that a resource of the plan declares.
type ProxyGroup struct {
	EnvironmentID, Name, Type string
}

// New returns an empty World.
func New() *World {
	return &World{
		hostnames:        map[string]string{},
		objects:          map[string]string{},
		released:         map[string]bool{},
		failedOperators:  map[string]bool{},
		operatorClusters: map[string]bool{},
		operators:        map[string]Operator{},
		proxyGroups:      map[proxyGroupRef]string{},
		clusters:         map[string]string{},
		refreshed:        map[string][]string{},
		deleting:         map[string]int{},
	}
}

// claim records key for owner in m, or returns the other owner.
func (w *World) claim(m map[string]string, key, owner string) (other string, conflict bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	key = strings.ToLower(key)
	if prev, ok := m[key]; ok && prev != owner {
		return prev, true
	}
	m[key] = owner
	return "", false
}

// ClaimHostname records that owner (an application ID, "connector NAME on
// cluster ID") plans a device named hostname. It returns the other owner
// that already claims the hostname, if any; claiming again for the same
// owner is not a conflict (Terraform may plan one resource more than
// once). Hostnames compare without case, as MagicDNS names do.
func (w *World) ClaimHostname(hostname, owner string) (other string, conflict bool) {
	return w.claim(w.hostnames, hostname, owner)
}

// ObjectName is the name under which a cluster-scoped object is claimed,
// and shown in messages: "Connector homelab on cluster ID".
func ObjectName(kind, name, clusterID string) string {
	return fmt.Sprintf("%s %s on cluster %s", kind, name, clusterID)
}

// ClaimObject records that owner plans the cluster-scoped object named by
// ObjectName, as ClaimHostname does for hostnames.
func (w *World) ClaimObject(object, owner string) (other string, conflict bool) {
	return w.claim(w.objects, object, owner)
}

// Release records objects (annotations groups, Helm services, devices) that
// the plan replaces: they are no conflict for their replacement.
func (w *World) Release(ids ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		if id != "" {
			w.released[id] = true
		}
	}
}

// Released reports whether the plan replaces the object id.
func (w *World) Released(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return id != "" && w.released[id]
}

// AddFailedOperator records the Helm service and device IDs of an operator
// whose creation failed: Terraform has it as tainted and plans its
// replacement as a plain creation, without its state, right after
// refreshing it. Read records it, so that the creation's checks do not take
// the failed operator's Helm service and device for conflicts.
func (w *World) AddFailedOperator(ids ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		if id != "" {
			w.failedOperators[id] = true
		}
	}
}

// FailedOperator reports whether id belongs to an operator whose creation
// failed.
func (w *World) FailedOperator(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failedOperators[id]
}

// Operator is what the plan of a qtail_operator tells the resources of its
// cluster: the configuration the operator will run, where known.
type Operator struct {
	// Values is the values file qtail writes into the operator's Helm
	// service; empty while unknown.
	Values string
	// ClientID is the OAuth client given by ID; empty when qtail creates
	// the client, or while unknown.
	ClientID string
	// CreatesClient is set when qtail creates the OAuth client
	// (create_oauth_client), with default_tags as its tags.
	CreatesClient bool
	// ChartVersion is the operator chart's version; empty while unknown.
	ChartVersion string
}

// PlanOperator records what the plan of a qtail_operator says about the
// operator of the cluster (and that the plan has one there).
func (w *World) PlanOperator(clusterID string, op Operator) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.operatorClusters[clusterID] = true
	w.operators[clusterID] = op
}

// PlannedOperator returns what the plan says about the operator of the
// cluster; ok is false when no qtail_operator of the plan has said it.
func (w *World) PlannedOperator(clusterID string) (op Operator, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	op, ok = w.operators[clusterID]
	return op, ok
}

// OperatorPlannedOn reports whether the plan has an operator on the
// cluster (a Connector's CRD comes with the operator).
func (w *World) OperatorPlannedOn(clusterID string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.operatorClusters[clusterID]
}

// DeclareProxyGroup records that the plan has the ProxyGroup name of type
// typ in the environment environmentID; clusterID is the environment's
// cluster, or "" when it was not read. Declaring again replaces the type
// (Terraform may plan one resource more than once).
func (w *World) DeclareProxyGroup(environmentID, clusterID, name, typ string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.proxyGroups[proxyGroupRef{environmentID: environmentID, name: name}] = typ
	if clusterID != "" {
		w.clusters[environmentID] = clusterID
	}
}

// ProxyGroupsNamed returns the planned ProxyGroups called name, in every
// environment, by environment ID. An exposure that references
// qtail_proxy_group.NAME.name is planned after that ProxyGroup, so it is
// here by then; a ProxyGroup that no resource of the plan declares may be
// managed elsewhere.
func (w *World) ProxyGroupsNamed(name string) []ProxyGroup {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []ProxyGroup
	for ref, typ := range w.proxyGroups {
		if ref.name == name {
			out = append(out, ProxyGroup{EnvironmentID: ref.environmentID, Name: name, Type: typ})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].EnvironmentID < out[j].EnvironmentID })
	return out
}

// ClusterOf returns the cluster of an environment, reading it with read
// the first time.
func (w *World) ClusterOf(ctx context.Context, environmentID string,
	read func(ctx context.Context, environmentID string) (string, error)) (string, error) {
	w.mu.Lock()
	c, ok := w.clusters[environmentID]
	w.mu.Unlock()
	if ok {
		return c, nil
	}
	c, err := read(ctx, environmentID)
	if err != nil {
		return "", err
	}
	w.mu.Lock()
	w.clusters[environmentID] = c
	w.mu.Unlock()
	return c, nil
}

// RecordRefresh records, when Read refreshes a manifest service, its Helm
// service and the devices it found. A tainted resource (its creation
// failed, or someone ran terraform taint) is refreshed, then planned as a
// creation without its state: Refreshed then recognizes its Helm service.
func (w *World) RecordRefresh(helmID string, deviceIDs []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.refreshed[helmID] = slices.Clone(deviceIDs)
}

// Refreshed returns the devices of a manifest service that Read
// refreshed; seen is false when Read did not refresh it.
func (w *World) Refreshed(helmID string) (deviceIDs []string, seen bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids, ok := w.refreshed[helmID]
	return slices.Clone(ids), ok
}

// StartDelete records, during an apply, that the Delete of the object
// held by the Qovery object id (the annotations group of an exposure, the
// Helm service of a connector, ProxyGroup or egress Service) has started;
// calling done records its end. The Delete of an operator waits for the
// objects of its cluster that are being deleted (Terraform deletes in
// parallel what the configuration does not order) and refuses those that
// are not.
func (w *World) StartDelete(id string) (done func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deleting[id]++
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.deleting[id]--; w.deleting[id] <= 0 {
				delete(w.deleting, id)
			}
		})
	}
}

// Deleting reports whether a Delete of the object held by id is in
// progress.
func (w *World) Deleting(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deleting[id] > 0
}

// DeletesInProgress returns how many Deletes of objects that need an
// operator are in progress.
func (w *World) DeletesInProgress() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, c := range w.deleting {
		n += c
	}
	return n
}
