package provider_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

// identityGrant is a grant managed with workload identity: the provider's
// only Tailscale credential is a federated identity and a token it trusts.
const identityGrant = `
resource "qtail_grant" "ci" {
  name = "ci-identity"
  src  = ["group:platform-ops"]
  dst  = ["tag:ci"]
  ip   = ["tcp:443"]
}

resource "qtail_tag_owner" "ci" {
  tag    = "tag:ci"
  owners = ["group:platform-ops"]
}
`

// federatedEnv replaces env's Tailscale API key by a federated identity
// that trusts tokens of a CI issuer for the subject sub, with the scopes
// the policy resources need. It returns the issuer and the identity's
// audience.
func federatedEnv(t *testing.T, env *acctest.Env) (*tailnetapi.Issuer, string) {
	t.Helper()
	iss := tailnetapi.NewIssuer("https://token.actions.githubusercontent.com")
	id, aud := env.Tailnet.SeedFederatedIdentity(tailnetapi.FederatedIdentity{
		Issuer: iss, Subject: "repo:acme/platform:ref:refs/heads/main", Scopes: []string{"policy_file"},
	})
	env.Setenv("TAILSCALE_API_KEY", "")
	env.Setenv("TAILSCALE_OAUTH_CLIENT_ID", id)
	return iss, aud
}

// noSecretInState fails when the state file of the test holds secret.
func noSecretInState(secret string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), secret) {
			return errorf("the identity token is in the state")
		}
		return nil
	}
}

type errorf string

func (e errorf) Error() string { return string(e) }

func TestProvider_identityTokenFromTheEnvironment(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	iss, aud := federatedEnv(t, env)
	token := iss.Token("repo:acme/platform:ref:refs/heads/main", aud, nil)
	env.Setenv("TAILSCALE_IDENTITY_TOKEN", token)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: identityGrant,
			Check:  noSecretInState(token),
		}},
	})
	if n := env.Calls("POST /tailscale/api/v2/oauth/token-exchange"); n == 0 {
		t.Error("the provider never exchanged its identity token")
	}
}

func TestProvider_identityTokenFetchedFromGitHubActions(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	iss, aud := federatedEnv(t, env)
	const requestToken = "job-request-token"
	fetched := 0
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "bearer "+requestToken || r.URL.Query().Get("audience") != aud {
			http.Error(w, `{"message":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		fetched++
		_ = json.NewEncoder(w).Encode(map[string]string{"value": iss.Token("repo:acme/platform:ref:refs/heads/main", aud, nil)})
	}))
	t.Cleanup(gh.Close)
	env.Setenv("ACTIONS_ID_TOKEN_REQUEST_URL", gh.URL+"/token?api-version=2.0")
	env.Setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", requestToken)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config: `
provider "qtail" {
  tailscale_audience = "` + aud + `"
}
` + identityGrant,
		}},
	})
	if fetched == 0 {
		t.Error("the provider never asked GitHub Actions for an identity token")
	}
}

func TestProvider_identityTokenRefusedByTheFederatedIdentity(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	iss, aud := federatedEnv(t, env)
	// A token of another repository: the federated identity does not
	// trust its subject.
	env.Setenv("TAILSCALE_IDENTITY_TOKEN", iss.Token("repo:mallory/fork:pull_request", aud, nil))
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps: []resource.TestStep{{
			Config:      identityGrant,
			ExpectError: acctest.ErrorRE("invalid_grant"),
		}},
	})
}

func TestProvider_identityCredentialConflicts(t *testing.T) {
	t.Parallel()
	env := acctest.New(t)
	for _, tc := range []struct {
		name, provider string
		env            map[string]string
		want           string
	}{
		{
			name:     "api key and identity token",
			provider: `tailscale_identity_token = "eyJ.x.y"`,
			want:     `Set either tailscale_api_key (TAILSCALE_API_KEY) or tailscale_identity_token`,
		},
		{
			name:     "identity token without a client ID",
			provider: `tailscale_identity_token = "eyJ.x.y"`,
			env:      map[string]string{"TAILSCALE_API_KEY": ""},
			want:     `set "tailscale_oauth_client_id" or the TAILSCALE_OAUTH_CLIENT_ID environment variable to the client ID`,
		},
		{
			name:     "token and audience",
			provider: `tailscale_identity_token = "eyJ.x.y"` + "\n" + `tailscale_audience = "api.tailscale.com/x"` + "\n" + `tailscale_oauth_client_id = "k1"`,
			env:      map[string]string{"TAILSCALE_API_KEY": ""},
			want:     `Set either tailscale_identity_token (TAILSCALE_IDENTITY_TOKEN) or tailscale_audience`,
		},
		{
			name:     "secret and identity token",
			provider: `tailscale_identity_token = "eyJ.x.y"` + "\n" + `tailscale_oauth_client_id = "k1"` + "\n" + `tailscale_oauth_client_secret = "s"`,
			env:      map[string]string{"TAILSCALE_API_KEY": ""},
			want:     `an identity token replaces the OAuth client secret`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := env
			if tc.env != nil {
				e = acctest.New(t)
				for k, v := range tc.env {
					e.Setenv(k, v)
				}
			}
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: e.Factories(),
				Steps: []resource.TestStep{{
					Config:      "provider \"qtail\" {\n" + tc.provider + "\n}\n" + identityGrant,
					ExpectError: acctest.ErrorRE(tc.want),
				}},
			})
		})
	}
}

// The identity token never reaches Terraform's logs.
func TestProvider_identityTokenNotLogged(t *testing.T) {
	env := acctest.New(t)
	iss, aud := federatedEnv(t, env)
	token := iss.Token("repo:acme/platform:ref:refs/heads/main", aud, nil)
	env.Setenv("TAILSCALE_IDENTITY_TOKEN", token)
	logFile := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "trace")
	t.Setenv("TF_LOG_PATH", logFile)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: env.Factories(),
		Steps:                    []resource.TestStep{{Config: identityGrant}},
	})
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "token-exchange") {
		t.Fatal("the trace log has no provider API call: the check below could not fail")
	}
	if strings.Contains(string(b), token) {
		t.Error("the identity token is in the trace log")
	}
}
