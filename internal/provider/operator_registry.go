package provider

import (
	"runtime"
	"sync"
	"weak"
)

// operatorRegistry remembers, for one provider instance, the Helm services
// and devices of operators whose creation failed (Terraform has them as
// tainted and plans their replacement). Terraform plans the replacement of
// a tainted object as a plain creation, without its state, right after
// refreshing it: Read registers it here, so that the creation's checks do
// not take the failed operator's Helm service and device for conflicts.
type operatorRegistry struct {
	mu       sync.Mutex
	replaced map[string]bool
}

var operatorRegistries sync.Map // weak.Pointer[providerData] -> *operatorRegistry

// operatorReplacements returns the registry of this provider instance.
func (d *providerData) operatorReplacements() *operatorRegistry {
	key := weak.Make(d)
	v, loaded := operatorRegistries.Load(key)
	if !loaded {
		v, loaded = operatorRegistries.LoadOrStore(key, &operatorRegistry{replaced: map[string]bool{}})
		if !loaded {
			runtime.AddCleanup(d, func(k weak.Pointer[providerData]) { operatorRegistries.Delete(k) }, key)
		}
	}
	r, _ := v.(*operatorRegistry) // only this function stores values
	return r
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
