package provider

import (
	"strings"
	"sync"
)

// exposureRegistry remembers, for one provider instance, what the
// qtail_exposed_service resources planned so far claim and give up, so that
// two exposures of one configuration cannot plan the same tailnet hostname.
//
// Terraform plans the resources of one configuration in one provider
// instance, so the registry sees every exposure of the plan; a separate
// configuration is seen through the annotations groups of the organization
// instead.
type exposureRegistry struct {
	mu sync.Mutex
	// hostnames maps a claimed hostname (lower case) to the application
	// that claims it.
	hostnames map[string]string
	// released holds the annotations groups and devices of exposures that
	// this plan replaces: the replacement may take their hostname.
	released map[string]bool
}

func newExposureRegistry() *exposureRegistry {
	return &exposureRegistry{hostnames: map[string]string{}, released: map[string]bool{}}
}

// claim records that applicationID is exposed at hostname in this plan. It
// returns the other application that already claims the hostname, if any;
// claiming again for the same application is not a conflict (Terraform may
// plan one resource more than once).
func (x *exposureRegistry) claim(hostname, applicationID string) (other string, conflict bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	key := strings.ToLower(hostname)
	if prev, ok := x.hostnames[key]; ok && prev != applicationID {
		return prev, true
	}
	x.hostnames[key] = applicationID
	return "", false
}

// release records objects (annotations groups, devices) that the plan
// replaces.
func (x *exposureRegistry) release(ids ...string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, id := range ids {
		if id != "" {
			x.released[id] = true
		}
	}
}

// isReleased reports whether the plan replaces the object id.
func (x *exposureRegistry) isReleased(id string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return id != "" && x.released[id]
}
