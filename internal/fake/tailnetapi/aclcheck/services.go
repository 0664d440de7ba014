package aclcheck

import "strings"

// ServiceApproved reports whether autoApprovers.services approve a
// device with the given tags (or, untagged, owned by deviceUser) as a
// host of the Tailscale Service service (svc:NAME), which carries the
// tags serviceTags. An entry approves the Service it names, "svc:NAME",
// or every Service with its tag, "tag:TAG", for the devices its approvers
// cover (as autoApprovers.routes do: a device tag, its user, a group of
// the user, autogroup:member or autogroup:tagged). Service names and tags
// compare without regard to case.
func (p *Policy) ServiceApproved(service string, serviceTags, deviceTags []string, deviceUser string) bool {
	aa := p.file.AutoApprovers
	if aa == nil {
		return false
	}
	for _, key := range sortedKeys(aa.Services) {
		lower := strings.ToLower(key)
		match := strings.EqualFold(key, service)
		if strings.HasPrefix(lower, "tag:") {
			for _, t := range serviceTags {
				match = match || strings.EqualFold(t, key)
			}
		}
		if match && p.approves(aa.Services[key], deviceTags, deviceUser) {
			return true
		}
	}
	return false
}
