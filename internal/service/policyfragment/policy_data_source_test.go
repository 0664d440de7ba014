package policyfragment_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
)

const policyDataConfig = `
resource "qtail_tag_owner" "k8s" {
  tag    = "tag:k8s"
  owners = ["group:platform-ops"]
}

resource "qtail_grant" "ops" {
  name = "ops-to-k8s"
  src  = ["group:platform-ops"]
  dst  = [qtail_tag_owner.k8s.tag]
  ip   = ["tcp:443"]
}

data "qtail_policy" "current" {
  depends_on = [qtail_grant.ops]
}
`

func TestPolicyDataSource(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: policyDataConfig,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_policy.current", tfjsonpath.New("findings").AtMapKey("allow_all_present"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("data.qtail_policy.current", tfjsonpath.New("fragments"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectExact(map[string]knownvalue.Check{
							"kind":  knownvalue.StringExact("grant"),
							"key":   knownvalue.StringExact("ops-to-k8s"),
							"value": knownvalue.StringExact(`{"dst":["tag:k8s"],"ip":["tcp:443"],"src":["group:platform-ops"]}`),
						}),
						knownvalue.ObjectExact(map[string]knownvalue.Check{
							"kind":  knownvalue.StringExact("tag_owner"),
							"key":   knownvalue.StringExact("tag:k8s"),
							"value": knownvalue.StringExact(`["group:platform-ops"]`),
						}),
					})),
				},
				Check: func(s *terraform.State) error {
					body, etag := env.Tailnet.Policy()
					attrs := s.RootModule().Resources["data.qtail_policy.current"].Primary.Attributes
					if attrs["hujson"] != string(body) {
						return fmt.Errorf("hujson differs from the tailnet's policy file:\n%s", attrs["hujson"])
					}
					if attrs["etag"] != etag {
						return fmt.Errorf("etag %s, want %s", attrs["etag"], etag)
					}
					return nil
				},
			},
			{
				// Someone removes the allow-all rule: the finding follows.
				PreConfig: func() {
					env.EditPolicy(t, `{"src": ["*"], "dst": ["*"], "ip": ["*"]},`, `{"src": ["group:platform-ops"], "dst": ["*"], "ip": ["*"]},`)
				},
				Config: policyDataConfig,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_policy.current", tfjsonpath.New("findings").AtMapKey("allow_all_present"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue("data.qtail_policy.current", tfjsonpath.New("hujson"),
						knownvalue.StringFunc(func(v string) error {
							if strings.Contains(v, `"src": ["*"]`) {
								return fmt.Errorf("stale policy file: %s", v)
							}
							return nil
						})),
				},
			},
		},
	})
}

// nodeAttrs that give funnel to the proxies' tag are a finding; funnel to
// people only is not.
func TestPolicyDataSource_funnelToProxies(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	const config = `data "qtail_policy" "current" {}`
	funnel := func(target string) func() {
		return func() {
			env.SetPolicy(t, `{
  "tagOwners": {"tag:k8s-operator": [], "tag:k8s": ["tag:k8s-operator"]},
  "grants": [{"src": ["autogroup:member"], "dst": ["tag:k8s"], "ip": ["tcp:443"]}],
  "nodeAttrs": [{"target": ["`+target+`"], "attr": ["funnel"]}],
}`)
		}
	}
	at := tfjsonpath.New("findings").AtMapKey("funnel_to_proxies")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_policy.current", at, knownvalue.ListSizeExact(0)),
				},
			},
			{
				PreConfig: funnel("tag:k8s"),
				Config:    config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_policy.current", at, knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("tag:k8s")})),
				},
			},
			{
				PreConfig: funnel("autogroup:member"),
				Config:    config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.qtail_policy.current", at, knownvalue.ListSizeExact(0)),
				},
			},
		},
	})
}
