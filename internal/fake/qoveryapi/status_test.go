package qoveryapi_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
)

// TestStatusStepsAndMessage: a status names the steps of the last action
// and which one failed; the reason of the failure ("message", which the
// real Status has not) only with StatusMessages.
func TestStatusStepsAndMessage(t *testing.T) {
	for _, withMessage := range []bool{false, true} {
		rec := &recorder{deployErr: errors.New("image pull failed")}
		w := newWorld(t, qoveryapi.Options{Deployer: rec, StatusMessages: withMessage})
		before := w.must(http.StatusOK, http.MethodGet, "/application/"+w.app+"/status", nil)
		if str(before, "execution_id") != w.app+"-1" || str(before, "steps", "details", 1, "step_name") != "DEPLOYMENT" ||
			str(before, "steps", "details", 1, "status") != "SUCCESS" || at(before, "steps", "total_duration_sec") != 56.0 {
			t.Errorf("seeded status %v", before)
		}
		v := w.must(http.StatusAccepted, http.MethodPost, "/application/"+w.app+"/redeploy", nil)
		if str(v, "execution_id") != w.app+"-2" || len(list(v, "steps", "details")) != 0 || at(v, "steps", "total_duration_sec") != nil {
			t.Errorf("202 %v", v)
		}
		v = w.waitState("/application/"+w.app+"/status", "DEPLOYMENT_ERROR")
		steps := list(v, "steps", "details")
		if len(steps) != 2 || str(steps, 0, "step_name") != "DEPLOYMENT_QUEUEING" || str(steps, 0, "status") != "SUCCESS" ||
			str(steps, 1, "step_name") != "DEPLOYMENT" || str(steps, 1, "status") != "ERROR" || at(v, "steps", "total_duration_sec") == nil {
			t.Errorf("steps %v", at(v, "steps"))
		}
		msg, present := object(v)["message"]
		if withMessage != present || (withMessage && msg != "image pull failed") {
			t.Errorf("StatusMessages %t: message %v", withMessage, msg)
		}
		if st, _ := w.srv.Status(w.app); st.Message != "image pull failed" {
			t.Errorf("the fake's own status lost the reason: %+v", st)
		}
	}
}

// TestDeploymentIDModes: null ids, and ids that are not renewed; the date
// of the last deployment moves in both.
func TestDeploymentIDModes(t *testing.T) {
	t.Run("null", func(t *testing.T) {
		w := newWorld(t, qoveryapi.Options{NullDeploymentIDs: true})
		v := w.must(http.StatusOK, http.MethodGet, "/application/"+w.app+"/status", nil)
		if _, ok := object(v)["deployment_request_id"]; !ok || at(v, "deployment_request_id") != nil || at(v, "execution_id") != nil {
			t.Errorf("seeded %v", v)
		}
		v = w.must(http.StatusAccepted, http.MethodPost, "/application/"+w.app+"/redeploy", nil)
		if at(v, "deployment_request_id") != nil || at(v, "execution_id") != nil || at(v, "deployment_requests_count") != 2.0 {
			t.Errorf("202 %v", v)
		}
	})
	t.Run("frozen", func(t *testing.T) {
		// waitState does not tell a stale status from a fresh one: no lag.
		w := newWorld(t, qoveryapi.Options{FrozenDeploymentIDs: true, StatusLag: qoveryapi.NoStatusLag})
		before := w.must(http.StatusOK, http.MethodGet, "/application/"+w.app+"/status", nil)
		time.Sleep(2 * time.Millisecond)
		w.must(http.StatusAccepted, http.MethodPost, "/application/"+w.app+"/redeploy", nil)
		v := w.waitState("/application/"+w.app+"/status", "DEPLOYED")
		if str(v, "deployment_request_id") != str(before, "deployment_request_id") || str(v, "execution_id") != str(before, "execution_id") ||
			str(v, "last_deployment_date") == str(before, "last_deployment_date") || at(v, "deployment_requests_count") != 2.0 {
			t.Errorf("before %v\nafter %v", before, v)
		}
	})
}

// TestQueuedActions: a deployment requested during another one is queued,
// as on the real API: the answer is 202 with the queued request's own
// deployment_request_id, the deployment queues of the service and of the
// environment list it, and it runs after the running one. Without the
// queue (the 409 of the API reference) the request would fail.
func TestQueuedActions(t *testing.T) {
	rec := &recorder{}
	// No lag: the status is read as each request starts.
	w := newWorld(t, qoveryapi.Options{Deployer: rec, DeployTime: 40 * time.Millisecond, StatusLag: qoveryapi.NoStatusLag})
	id := w.operator()
	entered, release := rec.gate()
	first := w.deployHelm(id)
	await(t, entered)
	queued := w.must(http.StatusAccepted, http.MethodPost, "/helm/"+id+"/redeploy", nil)
	second := str(queued, "deployment_request_id")
	if str(queued, "state") != "DEPLOYMENT_QUEUED" || str(queued, "status_details", "status") != "QUEUED" ||
		second == "" || second == str(first, "deployment_request_id") || at(queued, "deployment_requests_count") != 2.0 {
		t.Errorf("queued answer %v", queued)
	}
	// A second one queues behind it.
	third := str(w.must(http.StatusAccepted, http.MethodPost, "/helm/"+id+"/deploy", obj{"chart_version": "1.102.4"}), "deployment_request_id")
	v := w.must(http.StatusOK, http.MethodGet, "/helm/"+id+"/status", nil)
	if str(v, "state") != "DEPLOYING" || str(v, "deployment_request_id") != str(first, "deployment_request_id") {
		t.Errorf("status while two are queued %v", v)
	}
	svcQueue := list(w.must(http.StatusOK, http.MethodGet, "/service/"+id+"/deploymentQueue", nil), "results")
	if len(svcQueue) != 2 || str(svcQueue, 0, "identifier", "deployment_request_id") != second ||
		str(svcQueue, 1, "identifier", "deployment_request_id") != third || str(svcQueue, 0, "identifier", "service_type") != "HELM" ||
		str(svcQueue, 0, "status_details", "status") != "QUEUED" {
		t.Errorf("service queue %v", svcQueue)
	}
	envQueue := list(w.must(http.StatusOK, http.MethodGet, "/environment/"+w.env+"/deploymentQueue", nil), "results")
	if len(envQueue) != 2 || str(envQueue, 0, "identifier", "deployment_request_id") != second ||
		str(envQueue, 0, "identifier", "environment_id") != w.env || str(envQueue, 0, "stages", 0, "services", 0, "identifier", "service_id") != id {
		t.Errorf("environment queue %v", envQueue)
	}
	release()
	var seen []string
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		v := w.must(http.StatusOK, http.MethodGet, "/helm/"+id+"/status", nil)
		if r := str(v, "deployment_request_id"); len(seen) == 0 || seen[len(seen)-1] != r {
			seen = append(seen, r)
		}
		if at(v, "deployment_requests_count") == 3.0 && str(v, "state") == "DEPLOYED" {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if len(seen) != 3 || seen[0] != str(first, "deployment_request_id") || seen[1] != second || seen[2] != third {
		t.Errorf("request ids seen %v, want the first then the two queued ones", seen)
	}
	if q := list(w.must(http.StatusOK, http.MethodGet, "/service/"+id+"/deploymentQueue", nil), "results"); len(q) != 0 {
		t.Errorf("queue after the deployments %v", q)
	}
	rec.mu.Lock()
	n := len(rec.deployed)
	rec.mu.Unlock()
	if n != 3 {
		t.Errorf("%d deployments ran, want 3", n)
	}
	// A deletion during an action is not queued, and drops the queue.
	entered, release = rec.gate()
	w.deployHelm(id)
	await(t, entered)
	w.must(http.StatusAccepted, http.MethodPost, "/helm/"+id+"/redeploy", nil)
	w.must(http.StatusNoContent, http.MethodDelete, "/helm/"+id, nil)
	release()
	w.waitGone("/helm/" + id)
}
