package qoveryapi

import "net/http"

// The delete, status and redeploy routes of applications, containers and
// Helm services behave the same; they differ only in the path parameter
// that names the service and the map that holds it.

// serviceStatus returns the status of the service that r names, through
// its "applicationId", "containerId" or "helmId" path parameter. The caller holds s.mu.
func (s *Server) serviceStatus(r *http.Request) (string, *ServiceStatus, error) {
	if id := r.PathValue("applicationId"); id != "" {
		a, err := s.application(id)
		if err != nil {
			return "", nil, err
		}
		return a.ID, &a.Status, nil
	}
	if id := r.PathValue("containerId"); id != "" {
		c, err := s.container(id)
		if err != nil {
			return "", nil, err
		}
		return c.ID, &c.Status, nil
	}
	h, err := s.helm(r.PathValue("helmId"))
	if err != nil {
		return "", nil, err
	}
	return h.ID, &h.Status, nil
}

// deleteService starts the asynchronous deletion of a service: 204 now,
// then DELETE_QUEUED, DELETING and finally 404.
func (s *Server) deleteService(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, st, err := s.serviceStatus(r)
	if err != nil {
		return 0, nil, err
	}
	if !st.deleting() {
		s.startAction(id, st, actionDelete, "", "")
	}
	return http.StatusNoContent, nil, nil
}

func (s *Server) getServiceStatus(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, st, err := s.serviceStatus(r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.renderStatus(id, st.visible()), nil
}

// redeployService deploys a service again with its current configuration;
// 409 while an action runs.
func (s *Server) redeployService(r *http.Request) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, st, err := s.serviceStatus(r)
	if err != nil {
		return 0, nil, err
	}
	out, err := s.requestDeployment(id, st, "")
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, out, nil
}
