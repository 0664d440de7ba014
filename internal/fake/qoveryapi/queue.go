package qoveryapi

import (
	"net/http"
	"sort"
)

// The deployment queues list the deployment requests that wait for the
// running action of their service (see Options.ConflictWhileBusy). (fake)
// The running action is not listed; every request is made through the API
// by the fake's single token.

type auditingDataJSON struct {
	TriggeredBy string `json:"triggered_by"`
	Origin      string `json:"origin"`
}

type queuedServiceIdentifierJSON struct {
	DeploymentRequestID string `json:"deployment_request_id"`
	ServiceID           string `json:"service_id"`
	ServiceType         string `json:"service_type"`
	Name                string `json:"name"`
}

// queuedForServiceJSON is a QueuedDeploymentRequestForService.
type queuedForServiceJSON struct {
	Identifier    queuedServiceIdentifierJSON `json:"identifier"`
	AuditingData  auditingDataJSON            `json:"auditing_data"`
	StatusDetails statusDetailsJSON           `json:"status_details"`
	IconURI       string                      `json:"icon_uri"`
}

type stageServiceIdentifierJSON struct {
	ServiceID   string `json:"service_id"`
	ServiceType string `json:"service_type"`
	Name        string `json:"name"`
}

type stageServiceJSON struct {
	Identifier stageServiceIdentifierJSON `json:"identifier"`
	Status     *string                    `json:"status"`
	IconURI    string                     `json:"icon_uri"`
}

type stageJSON struct {
	Name     string             `json:"name"`
	Status   string             `json:"status"`
	Services []stageServiceJSON `json:"services"`
}

type queuedIdentifierJSON struct {
	DeploymentRequestID string `json:"deployment_request_id"`
	EnvironmentID       string `json:"environment_id"`
}

// queuedWithStagesJSON is a QueuedDeploymentRequestWithStages.
type queuedWithStagesJSON struct {
	Identifier    queuedIdentifierJSON `json:"identifier"`
	AuditingData  auditingDataJSON     `json:"auditing_data"`
	TriggerAction string               `json:"trigger_action"`
	Stages        []stageJSON          `json:"stages"`
}

// queueEntry is one queued request of one service.
type queueEntry struct {
	req                 queuedRequest
	serviceID, kind     string
	name, environmentID string
}

// queue returns the queued requests of the services that keep returns
// true for, oldest first. The caller holds the lock.
func (s *Server) queue(keep func(serviceID, envID string) bool) []queueEntry {
	var out []queueEntry
	add := func(id, envID, kind, name string, st *ServiceStatus) {
		if !keep(id, envID) {
			return
		}
		for _, q := range st.queued {
			out = append(out, queueEntry{req: q, serviceID: id, kind: kind, name: name, environmentID: envID})
		}
	}
	for _, h := range s.st.Helms {
		add(h.ID, h.EnvironmentID, kindHelm, h.Name, &h.Status)
	}
	for _, a := range s.st.Applications {
		add(a.ID, a.EnvironmentID, kindApplication, a.Name, &a.Status)
	}
	for _, c := range s.st.Containers {
		add(c.ID, c.EnvironmentID, kindContainer, c.Name, &c.Status)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].req.at.Equal(out[j].req.at) {
			return out[i].req.at.Before(out[j].req.at)
		}
		return out[i].req.id < out[j].req.id
	})
	return out
}

var fakeAuditing = auditingDataJSON{TriggeredBy: "API token", Origin: "API"}

// listServiceDeploymentQueue answers GET /service/{serviceId}/deploymentQueue.
func (s *Server) listServiceDeploymentQueue(r *http.Request) (int, any, error) {
	id := r.PathValue("serviceId")
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, _, _ := s.st.service(id); st == nil {
		return 0, nil, s.missing("service", id)
	}
	out := []queuedForServiceJSON{}
	for _, e := range s.queue(func(sid, _ string) bool { return sid == id }) {
		out = append(out, queuedForServiceJSON{
			Identifier:    queuedServiceIdentifierJSON{DeploymentRequestID: e.req.id, ServiceID: e.serviceID, ServiceType: e.kind, Name: e.name},
			AuditingData:  fakeAuditing,
			StatusDetails: statusDetailsJSON{Action: actionDeploy, Status: "QUEUED", SubAction: "NONE"},
		})
	}
	return http.StatusOK, results(out), nil
}

// listEnvironmentDeploymentQueue answers GET
// /environment/{environmentId}/deploymentQueue. (fake) Each request has one
// stage, named after the service's kind, that holds its service.
func (s *Server) listEnvironmentDeploymentQueue(r *http.Request) (int, any, error) {
	envID := r.PathValue("environmentId")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Environments[envID] == nil {
		return 0, nil, notFound("environment", envID)
	}
	out := []queuedWithStagesJSON{}
	for _, e := range s.queue(func(_, eid string) bool { return eid == envID }) {
		out = append(out, queuedWithStagesJSON{
			Identifier:    queuedIdentifierJSON{DeploymentRequestID: e.req.id, EnvironmentID: envID},
			AuditingData:  fakeAuditing,
			TriggerAction: actionDeploy,
			Stages: []stageJSON{{Name: e.kind + " DEFAULT", Status: "QUEUED", Services: []stageServiceJSON{{
				Identifier: stageServiceIdentifierJSON{ServiceID: e.serviceID, ServiceType: e.kind, Name: e.name},
			}}}},
		})
	}
	return http.StatusOK, results(out), nil
}
