package provider

import (
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/policy"
)

// validatorCheck returns the check function of a stringCheck validator.
func validatorCheck(t *testing.T, v validator.String) func(string) error {
	t.Helper()
	c, ok := v.(stringCheck)
	if !ok {
		t.Fatalf("%T is not a stringCheck", v)
	}
	return c.check
}

func TestChartVersionValidator(t *testing.T) {
	t.Parallel()
	check := validatorCheck(t, chartVersionValidator())
	for _, ok := range []string{"1.102.4", "0.1.0", "1.105.0-pre", "1.105.0-rc.1+build.7"} {
		if err := check(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for bad, why := range map[string]string{
		"":          "not empty",
		"latest":    `"latest" would let an upgrade`,
		"LATEST":    `"latest" would let an upgrade`,
		"^1.102.0":  "a version range",
		">=1.100":   "a version range",
		"1.102.x":   "a version range",
		"1.102":     "not an exact semantic version",
		"v1.102.4":  "not an exact semantic version",
		"01.102.4":  "not an exact semantic version",
		"1.102.4 ":  "a version range",
		"1.102.4.1": "not an exact semantic version",
	} {
		err := check(bad)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: error %v, want one saying %q", bad, err, why)
		}
	}
}

func TestDeviceHostnameValidator(t *testing.T) {
	t.Parallel()
	check := validatorCheck(t, deviceHostnameValidator())
	for _, ok := range []string{"tailscale-operator", "a", "op-1", strings.Repeat("a", 63)} {
		if err := check(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Bad_Name", "UPPER", "-lead", "trail-", "dot.ted", strings.Repeat("a", 64)} {
		if err := check(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestNearestChartVersions(t *testing.T) {
	t.Parallel()
	published := []string{"1.104.2", "1.104.0", "1.102.4", "1.102.3", "1.102.2", "1.102.1", "1.102.0", "1.100.1", "1.100.0"}
	cases := map[string][]string{
		"1.102.9": {"1.104.2", "1.104.0", "1.102.4", "1.102.3", "1.102.2"},
		"1.103.0": {"1.104.2", "1.104.0", "1.102.4", "1.102.3", "1.102.2"},
		"2.0.0":   {"1.104.2", "1.104.0", "1.102.4", "1.102.3", "1.102.2"},
		"0.9.0":   {"1.102.1", "1.102.0", "1.100.1", "1.100.0"},
		"1.101.0": {"1.102.2", "1.102.1", "1.102.0", "1.100.1", "1.100.0"},
	}
	for want, near := range cases {
		got := nearestChartVersions(want, published, len(near))
		if !slices.Equal(got, near) {
			t.Errorf("nearest to %s = %v, want %v", want, got, near)
		}
	}
}

func TestOAuthClientDescription(t *testing.T) {
	t.Parallel()
	if got := oauthClientDescription("prod-us-east-1", "x"); got != "qtail operator prod-us-east-1" {
		t.Errorf("description %q", got)
	}
	got := oauthClientDescription("Prod (EU) / west.3 — a very long cluster name indeed", "x")
	if len(got) > 50 || strings.ContainsAny(got, "()/.—") {
		t.Errorf("description %q is not what the keys API accepts", got)
	}
	if got := oauthClientDescription("", "tailscale-operator"); got != "qtail operator tailscale-operator" {
		t.Errorf("description without a cluster name %q", got)
	}
}

func TestTagOwnerGaps(t *testing.T) {
	t.Parallel()
	doc, err := policy.Parse([]byte(`{
		"tagOwners": {
			"tag:k8s-operator": [],
			"tag:k8s":          ["autogroup:admin"],
			"tag:k8s-billing":  ["tag:k8s-operator"],
		},
	}`))
	if err != nil {
		t.Fatal(err)
	}
	gaps := tagOwnerGaps(doc, []string{"tag:k8s-operator"}, []string{"tag:k8s", "tag:k8s-billing", "tag:k8s-web"})
	var got []string
	for _, g := range gaps {
		got = append(got, g.tag+"="+operatorTagList(g.owners))
	}
	want := []string{`tag:k8s=["autogroup:admin", "tag:k8s-operator"]`, `tag:k8s-web=["tag:k8s-operator"]`}
	if !slices.Equal(got, want) {
		t.Fatalf("gaps = %v, want %v", got, want)
	}
	if gaps := tagOwnerGaps(doc, []string{"tag:k8s-operator"}, []string{"tag:k8s-operator", "tag:k8s-billing"}); len(gaps) != 0 {
		t.Fatalf("no gap expected, got %+v", gaps)
	}
	if gaps := tagOwnerGaps(doc, []string{"tag:other"}, []string{"tag:k8s-billing"}); len(gaps) != 2 {
		t.Fatalf("want the undeclared operator tag and the unowned proxy tag, got %+v", gaps)
	}
}

// Moving from a created OAuth client to one given by hand revokes the
// created client, unless the configuration now names that very client.
func TestPlanCredentialsRevokesOnlyAClientLeftBehind(t *testing.T) {
	t.Parallel()
	state := &operatorModel{
		CreateOAuthClient:           types.BoolValue(true),
		OAuthClientID:               types.StringValue("kCreatedCNTRL"),
		OAuthClientSecretVariableID: types.StringValue("var-1"),
		OAuthClientSecretWOVersion:  types.Int64Null(),
		DefaultTags:                 stringList([]string{"tag:k8s-operator"}),
	}
	explicit := func(id string) *operatorModel {
		return &operatorModel{
			CreateOAuthClient:          types.BoolValue(false),
			OAuthClientID:              types.StringValue(id),
			OAuthClientSecretWOVersion: types.Int64Value(1),
			DefaultTags:                stringList([]string{"tag:k8s-operator"}),
		}
	}
	if cp := planCredentials(explicit("kOtherCNTRL"), state); !cp.writeSecret || cp.revoke != "kCreatedCNTRL" {
		t.Errorf("another client: %+v, want the secret written and kCreatedCNTRL revoked", cp)
	}
	if cp := planCredentials(explicit("kCreatedCNTRL"), state); !cp.writeSecret || cp.revoke != "" {
		t.Errorf("the same client: %+v, want the secret written and nothing revoked", cp)
	}
}
