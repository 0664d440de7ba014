package tailnetapi

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

// The hosts of a Tailscale Service and their approval. A device that
// advertises svc:NAME (the replicas of an ingress ProxyGroup, for a
// Service the operator made) hosts it, but carries its traffic only once
// it is approved: by an autoApprovers.services entry of the current policy
// for the Service or one of its tags that covers the device, or by an
// admin. The approval follows the policy: an entry removed by hand takes
// the auto approval away. The routes, under both spellings of the
// Services path (the public API documents /services, client v2 calls
// /vip-services):
//
//	GET  /api/v2/tailnet/{tailnet}/services/{name}/devices
//	     {"devices": [{"stableNodeID", "hostname", "approvalLevel"}]}
//	GET  /api/v2/tailnet/{tailnet}/services/{name}/device/{id}/approved
//	     {"approved": bool, "autoApproved": bool}
//	POST /api/v2/tailnet/{tailnet}/services/{name}/device/{id}/approved
//	     {"approved": bool}, an admin's approval or its withdrawal
//
// approvalLevel is "not-approved", "approved:auto" or "approved:manual".
// Reads need services:read, the approval services.

// The approval levels of a Service host.
const (
	ApprovalNone   = "not-approved"
	ApprovalAuto   = "approved:auto"
	ApprovalManual = "approved:manual"
)

// ServiceHost is a device that advertises a Tailscale Service.
type ServiceHost struct {
	DeviceID, NodeID, Hostname string
	// Tags are the device's tags.
	Tags []string
	// Approval is ApprovalNone, ApprovalAuto or ApprovalManual.
	Approval string
}

// Approved reports whether the host carries the Service's traffic.
func (h ServiceHost) Approved() bool { return h.Approval != ApprovalNone }

type serviceHostJSON struct {
	StableNodeID  string `json:"stableNodeID"`
	Hostname      string `json:"hostname"`
	ApprovalLevel string `json:"approvalLevel"`
}

type serviceApprovalJSON struct {
	Approved     bool `json:"approved"`
	AutoApproved bool `json:"autoApproved"`
}

// AdvertiseService makes the devices deviceIDs (IDs or node IDs) the
// hosts of the Tailscale Service name, as their clients do when they
// advertise it; an empty list withdraws it. The Service need not exist
// yet. Unknown devices are ignored when the hosts are read.
func (s *Server) AdvertiseService(name string, deviceIDs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(deviceIDs) == 0 {
		delete(s.serviceHosts, name)
		return
	}
	s.serviceHosts[name] = slices.Clone(deviceIDs)
}

// ApproveServiceHost records an admin's approval (or, with approved
// false, refusal) of the device id as a host of the Service name, as the
// admin console does. An explicit refusal overrides autoApprovers.
func (s *Server) ApproveServiceHost(name, id string, approved bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.approveServiceHostLocked(name, id, approved); err != nil {
		return err
	}
	return nil
}

func (s *Server) approveServiceHostLocked(name, id string, approved bool) *CallError {
	if _, ok := s.services[name]; !ok {
		return &CallError{Status: http.StatusNotFound, Message: errNoService}
	}
	i := s.deviceIndexLocked(id)
	if i < 0 {
		return &CallError{Status: http.StatusNotFound, Message: errNoDevice}
	}
	if s.serviceApprovals[name] == nil {
		s.serviceApprovals[name] = map[string]bool{}
	}
	s.serviceApprovals[name][s.devices[i].NodeID] = approved
	return nil
}

// ServiceHosts returns the hosts of the Service name that are on the
// tailnet, in the order they advertised it, with their approval.
func (s *Server) ServiceHosts(name string) []ServiceHost {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.serviceHostsLocked(name)
}

// ServiceServed reports whether the Service name exists and one of its
// hosts is approved: whether it carries traffic.
func (s *Server) ServiceServed(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.services[name]; !ok {
		return false
	}
	return slices.ContainsFunc(s.serviceHostsLocked(name), ServiceHost.Approved)
}

func (s *Server) serviceHostsLocked(name string) []ServiceHost {
	var svcTags []string
	if v := s.services[name]; v != nil {
		svcTags = v.Tags
	}
	pol, _ := aclcheck.Parse(s.policy)
	var out []ServiceHost
	for _, id := range s.serviceHosts[name] {
		i := s.deviceIndexLocked(id)
		if i < 0 {
			continue
		}
		d := s.devices[i]
		h := ServiceHost{DeviceID: d.ID, NodeID: d.NodeID, Hostname: d.Hostname, Tags: slices.Clone(d.Tags), Approval: ApprovalNone}
		manual, decided := s.serviceApprovals[name][d.NodeID]
		switch {
		case decided && manual:
			h.Approval = ApprovalManual
		case decided:
		case pol != nil && pol.ServiceApproved(name, svcTags, d.Tags, d.User):
			h.Approval = ApprovalAuto
		}
		out = append(out, h)
	}
	return out
}

// handleListServiceHosts is GET /tailnet/{tailnet}/services/{name}/devices.
func (s *Server) handleListServiceHosts(w http.ResponseWriter, r *http.Request, p principal) {
	if !p.allows("services:read") {
		permissionDenied(w)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name := r.PathValue("name")
	if _, ok := s.services[name]; !ok {
		writeError(w, http.StatusNotFound, errNoService)
		return
	}
	out := []serviceHostJSON{}
	for _, h := range s.serviceHostsLocked(name) {
		out = append(out, serviceHostJSON{StableNodeID: h.NodeID, Hostname: h.Hostname, ApprovalLevel: h.Approval})
	}
	writeJSON(w, http.StatusOK, map[string][]serviceHostJSON{"devices": out})
}

// approvalLocked is the approval of the device id as a host of name.
func (s *Server) approvalLocked(name, id string) (serviceApprovalJSON, *CallError) {
	if _, ok := s.services[name]; !ok {
		return serviceApprovalJSON{}, &CallError{Status: http.StatusNotFound, Message: errNoService}
	}
	i := s.deviceIndexLocked(id)
	if i < 0 {
		return serviceApprovalJSON{}, &CallError{Status: http.StatusNotFound, Message: errNoDevice}
	}
	node := s.devices[i].NodeID
	for _, h := range s.serviceHostsLocked(name) {
		if h.NodeID == node {
			return serviceApprovalJSON{Approved: h.Approved(), AutoApproved: h.Approval == ApprovalAuto}, nil
		}
	}
	manual := s.serviceApprovals[name][node]
	return serviceApprovalJSON{Approved: manual}, nil
}

// handleGetServiceApproval is GET .../services/{name}/device/{id}/approved.
func (s *Server) handleGetServiceApproval(w http.ResponseWriter, r *http.Request, p principal) {
	if !p.allows("services:read") {
		permissionDenied(w)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.approvalLocked(r.PathValue("name"), r.PathValue("id"))
	if err != nil {
		writeCallError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// handleSetServiceApproval is POST .../services/{name}/device/{id}/approved.
func (s *Server) handleSetServiceApproval(w http.ResponseWriter, r *http.Request, p principal) {
	if !p.allows("services") {
		permissionDenied(w)
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var req struct {
		Approved *bool `json:"approved"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Approved == nil {
		writeError(w, http.StatusBadRequest, `invalid request body: want {"approved": true|false}`)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name, id := r.PathValue("name"), r.PathValue("id")
	if err := s.approveServiceHostLocked(name, id, *req.Approved); err != nil {
		writeCallError(w, err)
		return
	}
	a, _ := s.approvalLocked(name, id)
	writeJSON(w, http.StatusOK, a)
}
