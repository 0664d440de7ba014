package operator

import (
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

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
	doc, err := policyfile.Parse([]byte(`{
		"tagOwners": {
			"tag:k8s-operator": [],
			"tag:k8s":          ["autogroup:admin"],
			"tag:k8s-billing":  ["tag:k8s-operator"],
		},
	}`))
	if err != nil {
		t.Fatal(err)
	}
	// Proxy tags are checked against the OAuth client's tags, which mint
	// the proxies' auth keys.
	gaps := proxyTagGaps(doc, []string{"tag:k8s", "tag:k8s-billing", "tag:k8s-web"}, []string{"tag:k8s-operator"})
	var got []string
	for _, g := range gaps {
		got = append(got, g.tag+"="+tfx.HCLList(g.owners))
	}
	want := []string{`tag:k8s=["autogroup:admin", "tag:k8s-operator"]`, `tag:k8s-web=["tag:k8s-operator"]`}
	if !slices.Equal(got, want) {
		t.Fatalf("gaps = %v, want %v", got, want)
	}
	if gaps := proxyTagGaps(doc, []string{"tag:k8s-operator", "tag:k8s-billing"}, []string{"tag:k8s-operator"}); len(gaps) != 0 {
		t.Fatalf("no gap expected, got %+v", gaps)
	}
	// A client tagged tag:k8s-billing applies it, and nothing it does not own.
	if gaps := proxyTagGaps(doc, []string{"tag:k8s-billing", "tag:k8s"}, []string{"tag:k8s-billing"}); len(gaps) != 1 || gaps[0].tag != "tag:k8s" {
		t.Fatalf("want tag:k8s unowned by a client tagged tag:k8s-billing, got %+v", gaps)
	}
	if gaps := operatorTagGaps(doc, []string{"tag:other", "tag:k8s-operator"}); len(gaps) != 1 || gaps[0].tag != "tag:other" {
		t.Fatalf("want the undeclared operator tag, got %+v", gaps)
	}
	// An undeclared tag that is a typo of a declared one says so, and the
	// advice sends new tag owners to the configuration that owns them.
	gaps = operatorTagGaps(doc, []string{"tag:k8s-operater"})
	if len(gaps) != 1 || !slices.Equal(gaps[0].near, []string{"tag:k8s-operator"}) {
		t.Fatalf("want the typo's nearest declared tag, got %+v", gaps)
	}
	msg := tagOwnerGapsMessage(gaps, []string{"tag:k8s-operater"}, "Without them the operator pod fails at startup.")
	for _, want := range []string{
		`"tag:k8s-operater": []  (the operator's own device is tagged with it; did you mean tag:k8s-operator, which tagOwners declares?)`,
		"When several configurations share this tailnet, declare the tag owners in the one that manages them (its platform root)",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
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
		DefaultTags:                 tfx.StringList([]string{"tag:k8s-operator"}),
	}
	explicit := func(id string) *operatorModel {
		return &operatorModel{
			CreateOAuthClient:          types.BoolValue(false),
			OAuthClientID:              types.StringValue(id),
			OAuthClientSecretWOVersion: types.Int64Value(1),
			DefaultTags:                tfx.StringList([]string{"tag:k8s-operator"}),
		}
	}
	if cp := planCredentials(explicit("kOtherCNTRL"), state); !cp.writeSecret || cp.revoke != "kCreatedCNTRL" {
		t.Errorf("another client: %+v, want the secret written and kCreatedCNTRL revoked", cp)
	}
	if cp := planCredentials(explicit("kCreatedCNTRL"), state); !cp.writeSecret || cp.revoke != "" {
		t.Errorf("the same client: %+v, want the secret written and nothing revoked", cp)
	}
}

func TestCheckWorkloadIdentityChart(t *testing.T) {
	t.Parallel()
	model := func(version, audience string) *operatorModel {
		m := &operatorModel{ChartVersion: types.StringValue(version), OAuthAudience: types.StringNull()}
		if audience != "" {
			m.OAuthAudience = types.StringValue(audience)
		}
		return m
	}
	const aud = "https://operator.example.com"
	for _, tc := range []struct {
		name          string
		plan, state   *operatorModel
		creating      bool
		errors, warns int
		want          string
	}{
		{"supported chart", model("1.102.4", aud), &operatorModel{}, true, 0, 0, ""},
		{"chart before workload identity", model("1.90.9", aud), &operatorModel{}, true, 1, 0, "needs chart 1.92 or later"},
		{"chart outside the table", model("1.104.2", aud), &operatorModel{}, true, 0, 1, "checked charts do from 1.92 on"},
		{"no audience", model("1.90.9", ""), &operatorModel{}, true, 0, 0, ""},
		{"unchanged on update", model("1.104.2", aud), model("1.104.2", aud), false, 0, 0, ""},
		{"upgrade to a chart outside the table", model("1.104.2", aud), model("1.102.4", aud), false, 0, 1, "1.104.2"},
	} {
		var diags diag.Diagnostics
		checkWorkloadIdentityChart(tc.plan, tc.state, tc.creating, &diags)
		if diags.ErrorsCount() != tc.errors || diags.WarningsCount() != tc.warns {
			t.Errorf("%s: %d errors, %d warnings: %v", tc.name, diags.ErrorsCount(), diags.WarningsCount(), diags)
			continue
		}
		for _, d := range diags {
			ad, ok := d.(diag.DiagnosticWithPath)
			if !ok || !ad.Path().Equal(path.Root("oauth_audience")) || !strings.Contains(d.Detail(), tc.want) {
				t.Errorf("%s: %s: %s (not on oauth_audience, or without %q)", tc.name, d.Summary(), d.Detail(), tc.want)
			}
		}
	}
}

// A chart version of no checked series is warned about on chart_version,
// once: when it is new to the plan, not on every later plan.
func TestCheckChartSeries(t *testing.T) {
	t.Parallel()
	model := func(version string) *operatorModel { return &operatorModel{ChartVersion: types.StringValue(version)} }
	for _, tc := range []struct {
		name        string
		plan, state *operatorModel
		creating    bool
		warns       int
	}{
		{"checked series", model("1.102.4"), &operatorModel{}, true, 0},
		{"newer series", model("1.104.0"), &operatorModel{}, true, 1},
		{"older series", model("1.76.1"), &operatorModel{}, true, 1},
		{"unchanged on update", model("1.104.0"), model("1.104.0"), false, 0},
		{"upgrade to a newer series", model("1.104.0"), model("1.102.4"), false, 1},
		{"unknown", &operatorModel{ChartVersion: types.StringUnknown()}, &operatorModel{}, true, 0},
	} {
		var diags diag.Diagnostics
		checkChartSeries(tc.plan, tc.state, tc.creating, &diags)
		if diags.ErrorsCount() != 0 || diags.WarningsCount() != tc.warns {
			t.Errorf("%s: %v", tc.name, diags)
			continue
		}
		for _, d := range diags {
			ad, ok := d.(diag.DiagnosticWithPath)
			want := "is outside them"
			if !ok || !ad.Path().Equal(path.Root("chart_version")) || !strings.Contains(d.Detail(), "series 1.78 to 1.102") ||
				!strings.Contains(d.Detail(), want) || !strings.Contains(d.Detail(), "1.102.3") {
				t.Errorf("%s: %s: %s", tc.name, d.Summary(), d.Detail())
			}
		}
	}
}

func TestSubjectFitsOperator(t *testing.T) {
	t.Parallel()
	for subject, want := range map[string]bool{
		"":                                 true,
		"*":                                true,
		"system:serviceaccount:*:operator": true,
		"system:serviceaccount:tailscale:operator": true,
		"system:serviceaccount:z-env:*":            true,
		"system:serviceaccount:tailscale:proxies":  false,
		"repo:octo/infra:ref:refs/heads/main":      false,
	} {
		if got := subjectFitsOperator(subject); got != want {
			t.Errorf("subject %q: %v, want %v", subject, got, want)
		}
	}
}

func TestMissingOperatorScopes(t *testing.T) {
	t.Parallel()
	if got := missingOperatorScopes([]string{"devices:core", "auth_keys"}); !slices.Equal(got, []string{"services"}) {
		t.Errorf("missing %v, want [services]", got)
	}
	if got := missingOperatorScopes([]string{"all"}); len(got) != 0 {
		t.Errorf("all: missing %v", got)
	}
}
