package tailnetapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Tailscale Services (the API's "VIP services"): a name svc:<label> with a
// virtual address pair that several devices can host. The routes are those
// client v2 calls:
//
//	GET    /api/v2/tailnet/{tailnet}/vip-services         {"vipServices": [...]}
//	GET    /api/v2/tailnet/{tailnet}/vip-services/{name}  the Service, or 404
//	PUT    /api/v2/tailnet/{tailnet}/vip-services/{name}  create, or replace all fields but the addresses
//	DELETE /api/v2/tailnet/{tailnet}/vip-services/{name}  200, or 404
//
// Reads need the services:read scope, writes services. A name is "svc:"
// then a DNS label (tailcfg.ServiceName.Validate, with its messages); ports
// are "tcp:PORT", "tcp:FIRST-LAST" or "do-not-validate"; tags follow the
// rules of POST /device/{id}/tags. A new Service gets an IPv4 and an IPv6
// address of its own, which a later PUT cannot change.

// Service is a Tailscale Service of the fake tailnet.
type Service struct {
	Name        string
	DisplayName string
	Comment     string
	Addrs       []string
	Ports       []string
	Tags        []string
	Annotations map[string]string
}

func (v *Service) clone() Service {
	c := *v
	c.Addrs = slices.Clone(v.Addrs)
	c.Ports = slices.Clone(v.Ports)
	c.Tags = slices.Clone(v.Tags)
	c.Annotations = maps.Clone(v.Annotations)
	return c
}

// serviceJSON is the wire shape, as client v2's tailscale.Service.
type serviceJSON struct {
	Name        string            `json:"name,omitempty"`
	DisplayName string            `json:"displayName,omitempty"`
	Addrs       []string          `json:"addrs,omitempty"`
	Comment     string            `json:"comment,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Ports       []string          `json:"ports,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
}

func (v *Service) wire() serviceJSON {
	return serviceJSON{Name: v.Name, DisplayName: v.DisplayName, Addrs: slices.Clone(v.Addrs), Comment: v.Comment,
		Annotations: maps.Clone(v.Annotations), Ports: slices.Clone(v.Ports), Tags: slices.Clone(v.Tags)}
}

// errNoService is the 404 message for a Service the tailnet does not have.
const errNoService = "service not found"

// maxDisplayName bounds a Service's display name.
const maxDisplayName = 64

// CheckDNSLabel checks a DNS label as util/dnsname.ValidLabel does, with
// its messages: 1 to 63 bytes of letters, digits and dashes, starting and
// ending with a letter or digit.
func CheckDNSLabel(label string) error {
	isAlnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	switch {
	case label == "":
		return fmt.Errorf("empty DNS label")
	case len(label) > 63:
		return fmt.Errorf("%q is too long, max length is %d bytes", label, 63)
	case !isAlnum(label[0]):
		return fmt.Errorf("%q is not a valid DNS label: must start with a letter or number", label)
	case !isAlnum(label[len(label)-1]):
		return fmt.Errorf("%q is not a valid DNS label: must end with a letter or number", label)
	}
	for i := 1; i < len(label)-1; i++ {
		if c := label[i]; !isAlnum(c) && c != '-' {
			return fmt.Errorf("%q is not a valid DNS label: contains invalid character %q", label, c)
		}
	}
	return nil
}

// checkServiceName validates a Service name as tailcfg.ServiceName does.
func checkServiceName(name string) error {
	bare, ok := strings.CutPrefix(name, "svc:")
	if !ok {
		return fmt.Errorf("%q is not a valid service name: must start with 'svc:'", name)
	}
	if bare == "" {
		return fmt.Errorf("%q is not a valid service name: must not be empty after the 'svc:' prefix", name)
	}
	return CheckDNSLabel(bare)
}

// checkServicePort validates one entry of a Service's ports.
func checkServicePort(p string) error {
	if p == "do-not-validate" {
		return nil
	}
	proto, ports, ok := strings.Cut(p, ":")
	if !ok || proto != "tcp" {
		return fmt.Errorf("invalid port %q: want tcp:PORT, tcp:FIRST-LAST or do-not-validate (tcp is the only protocol)", p)
	}
	first, last, isRange := strings.Cut(ports, "-")
	lo, err1 := strconv.ParseUint(first, 10, 16)
	hi, err2 := lo, error(nil)
	if isRange {
		hi, err2 = strconv.ParseUint(last, 10, 16)
	}
	if err1 != nil || err2 != nil || lo == 0 || hi < lo {
		return fmt.Errorf("invalid port %q: ports are 1 to 65535, a range is FIRST-LAST with FIRST <= LAST", p)
	}
	return nil
}

// deniedTagsLocked returns the tags p may not apply to a device or a
// Service: malformed, undeclared in tagOwners, or (for an OAuth access
// token) neither the client's tags nor owned by them.
func (s *Server) deniedTagsLocked(p principal, tags []string) []string {
	owners := tagOwners(s.policy)
	var denied []string
	for _, t := range tags {
		if _, declared := owners[t]; checkTag(t) != nil || !declared {
			denied = append(denied, t)
		}
	}
	for _, t := range s.notOwnedByClientLocked(p, tags) {
		if !slices.Contains(denied, t) {
			denied = append(denied, t)
		}
	}
	return denied
}

// putServiceLocked creates or replaces the Service name for p and returns
// it, or the status and message of the refusal.
func (s *Server) putServiceLocked(p principal, name string, req serviceJSON) (Service, *CallError) {
	if !p.allows("services") {
		return Service{}, &CallError{Status: http.StatusForbidden, Message: errPermissionDenied}
	}
	bad := func(msg string) (Service, *CallError) {
		return Service{}, &CallError{Status: http.StatusBadRequest, Message: msg}
	}
	if err := checkServiceName(name); err != nil {
		return bad(err.Error())
	}
	if req.Name != "" && req.Name != name {
		return bad(fmt.Sprintf("service name %q in the body does not match %q in the path", req.Name, name))
	}
	if len(req.DisplayName) > maxDisplayName {
		return bad(fmt.Sprintf("displayName is %d characters long; at most %d are allowed", len(req.DisplayName), maxDisplayName))
	}
	for _, port := range req.Ports {
		if err := checkServicePort(port); err != nil {
			return bad(err.Error())
		}
	}
	if denied := s.deniedTagsLocked(p, req.Tags); len(denied) > 0 {
		return bad(fmt.Sprintf("requested tags %v are invalid or not permitted", denied))
	}
	v := s.services[name]
	if v == nil {
		s.serviceSeq++
		n := s.serviceSeq
		// 100.99.0.0/16 for Service addresses, apart from devices'.
		v4 := fmt.Sprintf("100.99.%d.%d", (n/254)%256, n%254+1)
		v = &Service{Name: name, Addrs: []string{v4, fmt.Sprintf("fd7a:115c:a1e0::6463:%x", n)}}
		s.services[name] = v
		s.serviceOrder = append(s.serviceOrder, name)
	}
	v.DisplayName, v.Comment = req.DisplayName, req.Comment
	v.Ports, v.Tags = slices.Clone(req.Ports), slices.Clone(req.Tags)
	v.Annotations = maps.Clone(req.Annotations)
	return v.clone(), nil
}

// deleteServiceLocked removes the Service name for p.
func (s *Server) deleteServiceLocked(p principal, name string) *CallError {
	if !p.allows("services") {
		return &CallError{Status: http.StatusForbidden, Message: errPermissionDenied}
	}
	if _, ok := s.services[name]; !ok {
		return &CallError{Status: http.StatusNotFound, Message: errNoService}
	}
	delete(s.services, name)
	delete(s.serviceHosts, name)
	delete(s.serviceApprovals, name)
	s.serviceOrder = slices.DeleteFunc(s.serviceOrder, func(n string) bool { return n == name })
	return nil
}

// serviceLocked returns the Service name for p.
func (s *Server) serviceLocked(p principal, name string) (Service, *CallError) {
	if !p.allows("services:read") {
		return Service{}, &CallError{Status: http.StatusForbidden, Message: errPermissionDenied}
	}
	v, ok := s.services[name]
	if !ok {
		return Service{}, &CallError{Status: http.StatusNotFound, Message: errNoService}
	}
	return v.clone(), nil
}

func writeCallError(w http.ResponseWriter, e *CallError) { writeError(w, e.Status, e.Message) }

// handleListServices is GET /tailnet/{tailnet}/vip-services.
func (s *Server) handleListServices(w http.ResponseWriter, _ *http.Request, p principal) {
	if !p.allows("services:read") {
		permissionDenied(w)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]serviceJSON, 0, len(s.serviceOrder))
	for _, name := range s.serviceOrder {
		out = append(out, s.services[name].wire())
	}
	writeJSON(w, http.StatusOK, map[string][]serviceJSON{"vipServices": out})
}

// handleGetService is GET /tailnet/{tailnet}/vip-services/{name}.
func (s *Server) handleGetService(w http.ResponseWriter, r *http.Request, p principal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.serviceLocked(p, r.PathValue("name"))
	if err != nil {
		writeCallError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v.wire())
}

// handlePutService is PUT /tailnet/{tailnet}/vip-services/{name}; it
// answers with the Service as stored.
func (s *Server) handlePutService(w http.ResponseWriter, r *http.Request, p principal) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var req serviceJSON
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid request body: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.putServiceLocked(p, r.PathValue("name"), req)
	if err != nil {
		writeCallError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v.wire())
}

// handleDeleteService is DELETE /tailnet/{tailnet}/vip-services/{name}.
func (s *Server) handleDeleteService(w http.ResponseWriter, r *http.Request, p principal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.deleteServiceLocked(p, r.PathValue("name")); err != nil {
		writeCallError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// Services returns a copy of every Service, in the order they were made.
func (s *Server) Services() []Service {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Service, 0, len(s.serviceOrder))
	for _, name := range s.serviceOrder {
		out = append(out, s.services[name].clone())
	}
	return out
}

// GetService reads a Service for the caller.
func (c *Caller) GetService(name string) (Service, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	v, err := c.s.serviceLocked(c.p, name)
	if err != nil {
		return Service{}, err
	}
	return v, nil
}

// PutService creates or replaces a Service for the caller.
func (c *Caller) PutService(v Service) (Service, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	out, err := c.s.putServiceLocked(c.p, v.Name, serviceJSON{Name: v.Name, DisplayName: v.DisplayName, Comment: v.Comment,
		Annotations: v.Annotations, Ports: v.Ports, Tags: v.Tags})
	if err != nil {
		return Service{}, err
	}
	return out, nil
}

// DeleteService removes a Service for the caller.
func (c *Caller) DeleteService(name string) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if err := c.s.deleteServiceLocked(c.p, name); err != nil {
		return err
	}
	return nil
}
