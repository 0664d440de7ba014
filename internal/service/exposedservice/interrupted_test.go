package exposedservice_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
)

// exposureMutations are the calls that creating an exposure makes, in a
// clean run: the routes that change something in Qovery or the tailnet.
func exposureMutations(t *testing.T) []string {
	t.Helper()
	env, appID := acctest.NewExposureEnv(t)
	return env.CreationMutations(t, acctest.ExposedServiceConfig(appID, "billing-api-us-east-1", `tags = ["tag:k8s-billing"]`),
		"the exposure's creation")
}

// An apply stopped at any step of an exposure's creation (the call fails
// and is not retried, or the wait runs out of time) leaves what it made in
// the state or nowhere, and terraform destroy then removes all of it: no
// annotations group left, none attached to the application.
func TestExposedService_interruptedApplyThenDestroy(t *testing.T) {
	t.Parallel()
	routes := exposureMutations(t)
	type interruption struct {
		name  string
		fault *faults.Rule
		extra string
		opts  []acctest.Option
	}
	var cases []interruption
	for _, r := range routes {
		cases = append(cases, interruption{name: r, fault: &faults.Rule{Route: r, Status: 400, Count: 1000,
			Body: json.RawMessage(`{"status":400,"error":"Bad Request","message":"interrupted for the test"}`)}})
	}
	cases = append(cases, interruption{name: "wait for the device", extra: `timeouts = { create = "1s" }`,
		opts: []acctest.Option{acctest.WithDeployTime(3 * time.Second)}})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := acctest.New(t, tc.opts...)
			env.InstallOperator(t, acctest.Region)
			env.DeclareTagOwners(t, map[string][]string{"tag:k8s-billing": {"tag:k8s-operator"}})
			appID := env.ApplicationID(t, acctest.Region, "billing-api")
			config := acctest.ExposedServiceConfig(appID, "billing-api-us-east-1", `tags = ["tag:k8s-billing"]
  `+tc.extra)
			groupsBefore := len(env.Qovery.AnnotationsGroups())
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				CheckDestroy: func(*terraform.State) error {
					if n := len(env.Qovery.AnnotationsGroups()); n != groupsBefore {
						return fmt.Errorf("%d annotations groups after destroy, %d before", n, groupsBefore)
					}
					app, ok := env.Qovery.Application(appID)
					if !ok {
						return fmt.Errorf("the application %s is gone", appID)
					}
					if len(app.AnnotationsGroupIDs) != 0 {
						return fmt.Errorf("the application still has groups attached: %v", app.AnnotationsGroupIDs)
					}
					return nil
				},
				Steps: []resource.TestStep{{
					PreConfig: func() {
						if tc.fault != nil {
							env.Faults.Add(*tc.fault)
						}
					},
					Config:      config,
					ExpectError: acctest.ErrorRE(""),
				}, {
					// The faults are over; Terraform destroys what the
					// interrupted apply recorded.
					PreConfig: env.Faults.Reset,
					Config:    config,
					Destroy:   true,
				}},
			})
		})
	}
}
