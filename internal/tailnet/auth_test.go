package tailnet

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

const tokenRoute = "POST /tailscale/api/v2/oauth/token"

func TestTokenRequestCarriesTheUserAgent(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	id, secret := e.srv.SeedOAuthClient("", "", []string{"all"}, nil)
	c := e.client(Config{OAuthClientID: id, OAuthClientSecret: secret, UserAgent: "qtail-test/2"})
	if _, _, err := c.GetPolicy(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ua := e.rec.last(t, "POST", "/oauth/token").Header.Get("User-Agent"); ua != "qtail-test/2" {
		t.Errorf("token request User-Agent %q", ua)
	}
}

// TestTokenRequestFollowsTheCallContext: a call whose context has ended
// does not fetch a token in the background.
func TestTokenRequestFollowsTheCallContext(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	id, secret := e.srv.SeedOAuthClient("", "", []string{"all"}, nil)
	c := e.client(Config{OAuthClientID: id, OAuthClientSecret: secret})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err := c.GetPolicy(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if n := e.srv.Faults().Count(tokenRoute); n != 0 {
		t.Errorf("%d token requests after the call was cancelled", n)
	}
	// The client still works with a live context.
	if _, _, err := c.GetPolicy(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestTokenRequestRetriedAfterGatewayErrors: a token request creates
// nothing that matters, so a 502 or a broken connection is retried like a
// read.
func TestTokenRequestRetriedAfterGatewayErrors(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	id, secret := e.srv.SeedOAuthClient("", "", []string{"all"}, nil)
	e.srv.Faults().Add(faults.Rule{Route: tokenRoute, Status: 502}, faults.Rule{Route: tokenRoute, Drop: true})
	c := e.client(Config{OAuthClientID: id, OAuthClientSecret: secret})
	if _, _, err := c.GetPolicy(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := e.srv.Faults().Count(tokenRoute); n != 3 {
		t.Errorf("%d token requests, want 3", n)
	}
}

func TestTokenErrorsNeverQuoteTheSecret(t *testing.T) {
	e := newEnv(t, tailnetapi.Options{})
	id, secret := e.srv.SeedOAuthClient("", "", []string{"all"}, nil)
	for _, body := range []string{
		`{"error":"invalid_request","error_description":"client_secret ` + secret + ` is malformed"}`,
		`{"message":"bad request for client_secret=` + secret + `"}`,
	} {
		e.srv.Faults().Add(faults.Rule{Route: tokenRoute, Status: 400, Body: json.RawMessage(body)})
		c := e.client(Config{OAuthClientID: id, OAuthClientSecret: secret})
		_, _, err := c.GetPolicy(t.Context())
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Fatalf("err %v", err)
		}
		if ae, ok := AsAPIError(err); !ok || ae.Status != 400 || !strings.Contains(ae.Message, "[secret hidden]") {
			t.Errorf("err %#v", err)
		}
	}
}
