package qoveryapi

import (
	"net/http"
	"sort"
	"strings"
)

// routes registers every endpoint. Each is counted and subject to faults
// under "METHOD <Prefix><pattern>".
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	methods := map[string][]string{}
	add := func(method, pattern string, h handlerFunc) {
		mux.HandleFunc(method+" "+pattern, s.faults.Wrap(method+" "+s.opts.Prefix+pattern, s.serve(h)))
		methods[pattern] = append(methods[pattern], method)
	}
	const (
		get  = http.MethodGet
		post = http.MethodPost
		put  = http.MethodPut
		del  = http.MethodDelete
	)

	add(get, "/organization", s.listOrganizations)
	add(get, "/organization/{organizationId}/project", s.listProjects)
	add(get, "/organization/{organizationId}/cluster", s.listClusters)
	add(get, "/project/{projectId}/environment", s.listEnvironments)
	add(get, "/environment/{environmentId}", s.getEnvironment)

	add(get, "/organization/{organizationId}/helmRepository", s.listHelmRepositories)
	add(post, "/organization/{organizationId}/helmRepository", s.createHelmRepository)
	add(get, "/organization/{organizationId}/helmRepository/{helmRepositoryId}", s.getHelmRepository)
	add(put, "/organization/{organizationId}/helmRepository/{helmRepositoryId}", s.editHelmRepository)
	add(del, "/organization/{organizationId}/helmRepository/{helmRepositoryId}", s.deleteHelmRepository)
	add(get, "/organization/{organizationId}/helmRepository/{helmRepositoryId}/charts", s.listHelmCharts)

	add(get, "/environment/{environmentId}/helm", s.listHelms)
	add(post, "/environment/{environmentId}/helm", s.createHelm)
	add(get, "/helm/{helmId}", s.getHelm)
	add(put, "/helm/{helmId}", s.editHelm)
	add(del, "/helm/{helmId}", s.deleteService)
	add(get, "/helm/{helmId}/status", s.getServiceStatus)
	add(post, "/helm/{helmId}/deploy", s.deployHelm)
	add(post, "/helm/{helmId}/redeploy", s.redeployHelm)

	add(get, "/variable", s.listVariables)
	add(post, "/variable", s.createVariable)
	add(put, "/variable/{variableId}", s.editVariable)
	add(post, "/variable/{variableId}/override", s.createVariableOverride)
	add(del, "/variable/{variableId}", s.deleteVariable)

	add(get, "/organization/{organizationId}/annotationsGroups", s.listAnnotationsGroups)
	add(post, "/organization/{organizationId}/annotationsGroups", s.createAnnotationsGroup)
	add(get, "/organization/{organizationId}/annotationsGroups/{annotationsGroupId}", s.getAnnotationsGroup)
	add(put, "/organization/{organizationId}/annotationsGroups/{annotationsGroupId}", s.editAnnotationsGroup)
	add(del, "/organization/{organizationId}/annotationsGroups/{annotationsGroupId}", s.deleteAnnotationsGroup)

	add(get, "/environment/{environmentId}/application", s.listApplications)
	add(get, "/application/{applicationId}", s.getApplication)
	add(put, "/application/{applicationId}", s.editApplication)
	add(del, "/application/{applicationId}", s.deleteService)
	add(get, "/application/{applicationId}/status", s.getServiceStatus)
	add(post, "/application/{applicationId}/deploy", s.deployApplication)
	add(post, "/application/{applicationId}/redeploy", s.redeployService)

	add(get, "/environment/{environmentId}/container", s.listContainers)
	add(get, "/container/{containerId}", s.getContainer)
	add(put, "/container/{containerId}", s.editContainer)
	add(del, "/container/{containerId}", s.deleteService)
	add(get, "/container/{containerId}/status", s.getServiceStatus)
	add(post, "/container/{containerId}/deploy", s.deployContainer)
	add(post, "/container/{containerId}/redeploy", s.redeployService)

	add(get, "/environment/{environmentId}/deploymentQueue", s.listEnvironmentDeploymentQueue)
	add(get, "/service/{serviceId}/deploymentQueue", s.listServiceDeploymentQueue)

	// A known path with another method: 405 with a JSON body.
	for pattern, ms := range methods {
		sort.Strings(ms)
		allow := strings.Join(ms, ", ")
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeError(w, errorf(http.StatusMethodNotAllowed, "method %s not allowed on %s (allowed: %s)", r.Method, r.URL.Path, allow))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorf(http.StatusNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	return mux
}
