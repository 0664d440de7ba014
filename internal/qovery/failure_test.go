package qovery_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// TestDeploymentFailureWithoutReason: the API's Status gives no reason; the
// error names the failed step and the execution whose logs the console
// shows.
func TestDeploymentFailureWithoutReason(t *testing.T) {
	f := newFixture(t, qoveryapi.Options{Deployer: newSequenced(false, errors.New("image pull failed"))})
	c := ctx(t)
	status := func(ctx context.Context) (*qovery.Status, error) { return f.c.GetApplicationStatus(ctx, f.app) }
	before, err := status(c)
	if err != nil {
		t.Fatal(err)
	}
	started, err := f.c.RedeployApplication(c, f.app)
	if err != nil {
		t.Fatal(err)
	}
	st, err := qovery.WaitForDeployment(c, status, qovery.WaitOptions{PollInterval: fast.PollInterval, Since: before})
	var de *qovery.DeploymentError
	if !errors.As(err, &de) {
		t.Fatalf("%+v %v", st, err)
	}
	if de.Reason != "" || st.Message != "" || de.FailedStep != "DEPLOYMENT" || de.ExecutionID == "" || de.ExecutionID != started.ExecutionID ||
		de.ExecutionID == before.ExecutionID || de.DeploymentRequestID != *started.DeploymentRequestID {
		t.Errorf("DeploymentError %+v", de)
	}
	if msg := err.Error(); !strings.Contains(msg, "failed step DEPLOYMENT") || !strings.Contains(msg, "execution "+de.ExecutionID) ||
		!strings.Contains(msg, "deployment logs in the Qovery console") {
		t.Errorf("message %q", msg)
	}
	if step := st.FailedStep(); step == nil || step.StepName != "DEPLOYMENT" || st.Steps.TotalDurationSec == nil {
		t.Errorf("steps %+v", st.Steps)
	}
	if before.FailedStep() != nil {
		t.Errorf("a successful deployment has a failed step: %+v", before.Steps)
	}
}

func TestConsoleDeploymentURL(t *testing.T) {
	const org, project, env, svc = "0a4f2c1e-0000-4000-8000-000000000001", "0a4f2c1e-0000-4000-8000-000000000002",
		"0a4f2c1e-0000-4000-8000-000000000003", "0a4f2c1e-0000-4000-8000-000000000004"
	base := "https://console.qovery.com/organization/" + org + "/project/" + project + "/environment/" + env + "/service/" + svc + "/deployments"
	if got := qovery.ConsoleDeploymentURL(org, project, env, svc, ""); got != base {
		t.Errorf("deployments page %s", got)
	}
	if got := qovery.ConsoleDeploymentURL(org, project, env, svc, svc+"-7"); got != base+"/logs/"+svc+"-7" {
		t.Errorf("logs page %s", got)
	}
	if got := qovery.ConsoleDeploymentURL(org, project, env, svc, "a/b"); !strings.HasSuffix(got, "/logs/a%2Fb") {
		t.Errorf("escaping %s", got)
	}
}

// TestDeployHelmSendsTheVersion: the API asks for the chart version (or
// the commit) to deploy; DeployHelm(nil) sends what the service pins.
func TestDeployHelmSendsTheVersion(t *testing.T) {
	f := newFixture(t, qoveryapi.Options{})
	c := ctx(t)
	h := f.operator()
	if _, err := f.c.DeployHelm(c, h.ID, nil); err != nil {
		t.Fatal(err)
	}
	if body := string(f.last(http.MethodPost, "/helm/"+h.ID+"/deploy").body); body != `{"chart_version":"1.102.4"}` {
		t.Errorf("body %s", body)
	}
	// A chart from Git is deployed at the head of its branch, or at the
	// commit given.
	req := operatorRequest("", "")
	req.Name = "from-git"
	req.Source = qovery.HelmSourceRequest{GitRepository: &qovery.GitRepository{URL: "https://github.com/acme/charts.git", Branch: "main", RootPath: "/operator"}}
	req.ValuesOverride = qovery.HelmValuesOverride{}
	g, err := f.c.CreateHelm(c, f.env, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.DeployHelm(c, g.ID, nil); err != nil {
		t.Fatal(err)
	}
	if body := f.last(http.MethodPost, "/helm/"+g.ID+"/deploy").body; len(body) != 0 {
		t.Errorf("git source body %s", body)
	}
	if _, err := qovery.WaitForDeployment(c, func(ctx context.Context) (*qovery.Status, error) { return f.c.GetHelmStatus(ctx, g.ID) }, fast); err != nil {
		t.Fatal(err)
	}
	const commit = "0123456789abcdef0123456789abcdef01234567"
	if _, err := f.c.DeployHelm(c, g.ID, &qovery.HelmDeployRequest{GitCommitID: commit}); err != nil {
		t.Fatal(err)
	}
	if body := string(f.last(http.MethodPost, "/helm/"+g.ID+"/deploy").body); body != `{"git_commit_id":"`+commit+`"}` {
		t.Errorf("body %s", body)
	}
	if _, err := f.c.DeployHelm(c, g.ID, &qovery.HelmDeployRequest{ChartVersion: "1.0.0"}); qovery.StatusCode(err) != http.StatusBadRequest {
		t.Errorf("a chart version for a chart from Git: %v", err)
	}
	// The fake checks the body as the API reference asks.
	if _, err := f.c.DeployHelm(c, h.ID, &qovery.HelmDeployRequest{}); qovery.StatusCode(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "chart_version") {
		t.Errorf("empty request: %v", err)
	}
}
