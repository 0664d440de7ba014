package policyfile

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/tailscale/hujson"
)

// ServiceApproval tells whether autoApprovers.services approve the hosts
// of a Tailscale Service.
type ServiceApproval struct {
	// Entry is the member of autoApprovers.services that approves them
	// ("svc:NAME" or "tag:TAG"), empty when none does.
	Entry string
	// Approvers are that member's approvers.
	Approvers []string
}

// Approved reports whether an entry approves the hosts.
func (a ServiceApproval) Approved() bool { return a.Entry != "" }

// ServiceApprover finds the member of autoApprovers.services that
// approves devices tagged hostTags as hosts of the Tailscale Service
// service (svc:NAME), which carries the tags serviceTags: a member named
// after the Service, or after one of its tags, whose approvers include
// one of hostTags or autogroup:tagged. Names and tags compare without
// regard to case, as Tailscale compares them. A policy that cannot be read
// approves nothing.
func (d *Document) ServiceApprover(service string, serviceTags, hostTags []string) ServiceApproval {
	b, err := hujson.Standardize(d.root.Pack())
	if err != nil {
		return ServiceApproval{}
	}
	var file struct {
		AutoApprovers struct {
			Services map[string][]string `json:"services"`
		} `json:"autoApprovers"`
	}
	if json.Unmarshal(b, &file) != nil {
		return ServiceApproval{}
	}
	services := file.AutoApprovers.Services
	keys := make([]string, 0, len(services))
	for k := range services {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fold := func(list []string, s string) bool {
		return slices.ContainsFunc(list, func(t string) bool { return strings.EqualFold(t, s) })
	}
	for _, k := range keys {
		names := strings.EqualFold(k, service) || strings.HasPrefix(strings.ToLower(k), "tag:") && fold(serviceTags, k)
		if !names {
			continue
		}
		for _, a := range services[k] {
			if fold(hostTags, a) || strings.EqualFold(a, "autogroup:tagged") && len(hostTags) > 0 {
				return ServiceApproval{Entry: k, Approvers: services[k]}
			}
		}
	}
	return ServiceApproval{}
}
