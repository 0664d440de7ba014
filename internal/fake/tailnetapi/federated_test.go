package tailnetapi

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func exchange(h *harness, id, jwt string) reply {
	return h.do("POST", "/api/v2/oauth/token-exchange", url.Values{"client_id": {id}, "jwt": {jwt}}.Encode(),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": ""})
}

func TestTokenExchange(t *testing.T) {
	h := newHarness(t, Options{})
	iss := NewIssuer("https://ci.example.com")
	id, aud := h.srv.SeedFederatedIdentity(FederatedIdentity{Issuer: iss, Subject: "project:*:main", Scopes: []string{"policy_file:read"},
		CustomClaimRules: map[string]string{"ref": "refs/heads/main"}})
	if aud != "api.tailscale.com/"+id {
		t.Errorf("default audience %q", aud)
	}
	// Seeded identities survive a reset, like seeded OAuth clients.
	h.srv.Reset()

	m := exchange(h, id, iss.Token("project:platform:main", aud, map[string]any{"ref": "refs/heads/main"})).want(t, 200).json(t)
	tok, _ := m["access_token"].(string)
	if m["token_type"] != "Bearer" || m["scope"] != "policy_file:read" || m["expires_in"] != float64(3600) || tok == "" {
		t.Errorf("answer %v", m)
	}
	h.do("GET", aclPath, "", map[string]string{"Authorization": "Bearer " + tok}).want(t, 200)
	h.do("POST", aclPath, operatorPolicy, map[string]string{"Authorization": "Bearer " + tok}).want(t, 403)

	// The keys API lists it as a federated identity with its scopes and
	// its trust settings.
	r := h.do("GET", "/api/v2/tailnet/-/keys/"+id, "", nil).want(t, 200).json(t)
	rules, _ := r["customClaimRules"].(map[string]any)
	if r["keyType"] != "federated" || r["scopes"] == nil || r["capabilities"] != nil || r["audience"] != aud ||
		r["issuer"] != iss.URL || r["subject"] != "project:*:main" || rules["ref"] != "refs/heads/main" {
		t.Errorf("key %v", r)
	}
	// An OAuth client carries none of them.
	cid, _ := h.srv.SeedOAuthClient("", "", []string{"devices:core"}, []string{"tag:ci"})
	c := h.do("GET", "/api/v2/tailnet/-/keys/"+cid, "", nil).want(t, 200).json(t)
	for _, f := range []string{"audience", "issuer", "subject", "customClaimRules"} {
		if _, ok := c[f]; ok {
			t.Errorf("OAuth client has %s: %v", f, c)
		}
	}

	// The simulation's workloads exchange their tokens in process, with
	// the same checks.
	if c, err := h.srv.ExchangeCaller(id, iss.Token("project:platform:main", aud, map[string]any{"ref": "refs/heads/main"})); err != nil || c.Scopes()[0] != "policy_file:read" {
		t.Errorf("in-process exchange: %v, %v", c, err)
	}
	if _, err := h.srv.ExchangeCaller(id, iss.Token("project:platform:main", "https://other", nil)); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Errorf("in-process exchange for another audience: %v", err)
	}

	iss.Now = func() time.Time { return time.Now().Add(-time.Hour) }
	for jwt, want := range map[string]string{
		iss.Token("project:platform:main", aud, map[string]any{"ref": "refs/heads/main"}): "expired",
		NewIssuer(iss.URL).Token("project:platform:main", aud, nil):                       "signature",
		"a.b":  "not a JWT",
		"":     "send client_id and jwt",
		"x.y.": "signature",
	} {
		r := exchange(h, id, jwt).want(t, 400)
		if d, _ := r.json(t)["error_description"].(string); !strings.Contains(d, want) {
			t.Errorf("%q: %s, want %q", jwt, r.body, want)
		}
	}
	exchange(h, "kUNKNOWNCNTRL", iss.Token("project:platform:main", aud, nil)).want(t, 401)
}
