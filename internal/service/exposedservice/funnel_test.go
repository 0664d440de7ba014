package exposedservice_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// An annotations group attached to the application that sets
// tailscale.com/funnel would make the exposure public: the plan refuses it
// on application_id, and creates nothing.
func TestExposedService_funnelAnnotationRefusedAtPlan(t *testing.T) {
	t.Parallel()
	env, billing := acctest.NewExposureEnv(t)
	ctx := acctest.Background(t)
	q := env.QoveryClient(t)
	g, err := q.CreateAnnotationsGroup(ctx, env.Seed().OrganizationID, &qovery.AnnotationsGroupRequest{Name: "public-by-hand",
		Scopes: []string{"SERVICES"}, Annotations: []qovery.Annotation{{Key: "tailscale.com/funnel", Value: "true"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Qovery.AttachAnnotationsGroup(billing, g.ID); err != nil {
		t.Fatal(err)
	}
	groups := len(env.Qovery.AnnotationsGroups())
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: acctest.ExposedServiceConfig(billing, "billing-api-us-east-1", ""),
			ExpectError: acctest.ErrorOn("application_id", `The annotations group "public-by-hand" (`+g.ID+`), attached to application `+billing+
				`, sets tailscale.com/funnel = "true"`),
		}},
	})
	if n := len(env.Qovery.AnnotationsGroups()); n != groups {
		t.Errorf("the refused plan created annotations groups: %d, was %d", n, groups)
	}
}
