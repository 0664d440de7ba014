package provider

import (
	"sync"
)

// operatorRegistry remembers, for one provider instance, the Helm services
// and devices of operators whose creation failed (Terraform has them as
// tainted and plans their replacement). Terraform plans the replacement of
// a tainted object as a plain creation, without its state, right after
// refreshing it: Read registers it here, so that the creation's checks do
// not take the failed operator's Helm service and device for conflicts.
//
// It also remembers the clusters on which the plan installs or keeps an
// operator, for the resources that need one (a Connector's CRD comes with
// the operator).
type operatorRegistry struct {
	mu       sync.Mutex
	replaced map[string]bool
	clusters map[string]bool
}

func newOperatorRegistry() *operatorRegistry {
	return &operatorRegistry{replaced: map[string]bool{}, clusters: map[string]bool{}}
}

// planOn records that the plan has an operator on the cluster.
func (r *operatorRegistry) planOn(clusterID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clusters[clusterID] = true
}

// plannedOn reports whether the plan has an operator on the cluster.
func (r *operatorRegistry) plannedOn(clusterID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clusters[clusterID]
}

// add registers the IDs of a failed operator.
func (r *operatorRegistry) add(ids ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if id != "" {
			r.replaced[id] = true
		}
	}
}

// has reports whether id belongs to a failed operator.
func (r *operatorRegistry) has(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.replaced[id]
}
