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
	id, aud := h.srv.SeedFederatedIdentity(FederatedIdentity{Issuer: iss, Subject: "project:*:main", Scopes: []string{"policy_file:read"}})
	if aud != "api.tailscale.com/"+id {
		t.Errorf("default audience %q", aud)
	}
	// Seeded identities survive a reset, like seeded OAuth clients.
	h.srv.Reset()

	m := exchange(h, id, iss.Token("project:platform:main", aud, nil)).want(t, 200).json(t)
	tok, _ := m["access_token"].(string)
	if m["token_type"] != "Bearer" || m["scope"] != "policy_file:read" || m["expires_in"] != float64(3600) || tok == "" {
		t.Errorf("answer %v", m)
	}
	h.do("GET", aclPath, "", map[string]string{"Authorization": "Bearer " + tok}).want(t, 200)
	h.do("POST", aclPath, operatorPolicy, map[string]string{"Authorization": "Bearer " + tok}).want(t, 403)

	// The keys API lists it as a federated identity with its scopes.
	r := h.do("GET", "/api/v2/tailnet/-/keys/"+id, "", nil).want(t, 200).json(t)
	if r["keyType"] != "federated" || r["scopes"] == nil || r["capabilities"] != nil {
		t.Errorf("key %v", r)
	}

	iss.Now = func() time.Time { return time.Now().Add(-time.Hour) }
	for jwt, want := range map[string]string{
		iss.Token("project:platform:main", aud, nil):                "expired",
		NewIssuer(iss.URL).Token("project:platform:main", aud, nil): "signature",
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
