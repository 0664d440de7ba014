package operator_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
)

// operatorMutations are the routes that creating an operator with creds
// calls to change something, in a clean run.
func operatorMutations(t *testing.T, creds func(*operatorEnv) string) []string {
	t.Helper()
	e := newOperatorEnv(t)
	return e.CreationMutations(t, e.config(creds(e), ""), "the operator's creation")
}

// An apply stopped at any step of an operator's creation (a call fails and
// is not retried, or the wait for its device runs out of time), with a
// given OAuth client and with one qtail creates, is followed by a clean
// destroy: no Helm service, no operator device, no OAuth client of qtail's
// left valid.
func TestOperator_interruptedApplyThenDestroy(t *testing.T) {
	t.Parallel()
	modes := map[string]func(*operatorEnv) string{
		"given client":   func(e *operatorEnv) string { return explicitCreds(e.clientID, e.secret, 1) },
		"created client": func(*operatorEnv) string { return createdCreds },
	}
	for mode, creds := range modes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			type interruption struct {
				name  string
				fault *faults.Rule
				extra string
				opts  []acctest.Option
			}
			var cases []interruption
			for _, r := range operatorMutations(t, creds) {
				cases = append(cases, interruption{name: r, fault: &faults.Rule{Route: r, Status: 400, Count: 1000,
					Body: json.RawMessage(`{"status":400,"message":"interrupted for the test"}`)}})
			}
			cases = append(cases, interruption{name: "wait for the device", extra: `timeouts = { create = "1s" }`,
				opts: []acctest.Option{acctest.WithDeployTime(3 * time.Second)}})
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					e := newOperatorEnv(t, tc.opts...)
					config := e.config(creds(e), tc.extra)
					resource.UnitTest(t, resource.TestCase{
						ProtoV6ProviderFactories: e.Factories(),
						CheckDestroy: func(*terraform.State) error {
							if hs := e.Qovery.Helms(); len(hs) != 0 {
								return fmt.Errorf("%d Helm services left after destroy", len(hs))
							}
							for _, d := range e.Tailnet.Devices() {
								if d.Hostname == operatorHostname {
									return fmt.Errorf("operator device left on the tailnet after destroy: %+v", d)
								}
							}
							keys, err := e.TailnetClient(t).ListKeys(acctest.Background(t), true)
							if err != nil {
								return err
							}
							for _, k := range keys {
								if k.KeyType == "client" && !k.Invalid && strings.HasPrefix(k.Description, "qtail operator") {
									return fmt.Errorf("OAuth client %s (%q) left valid after destroy", k.ID, k.Description)
								}
							}
							return nil
						},
						Steps: []resource.TestStep{{
							PreConfig: func() {
								if tc.fault != nil {
									e.Faults.Add(*tc.fault)
								}
							},
							Config:      config,
							ExpectError: acctest.ErrorRE(""),
						}, {
							PreConfig: e.Faults.Reset,
							Config:    config,
							Destroy:   true,
						}},
					})
				})
			}
		})
	}
}
