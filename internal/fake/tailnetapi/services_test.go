package tailnetapi

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
)

const servicesPath = "/api/v2/tailnet/-/vip-services"

// bearer returns the Authorization header of an access token of a new
// OAuth client with these scopes and tags.
func bearer(t *testing.T, h *harness, scopes, tags []string) map[string]string {
	t.Helper()
	id, secret := h.srv.SeedOAuthClient("", "", scopes, tags)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	r := token(t, h, url.Values{"grant_type": {"client_credentials"}}, id, secret).want(t, 200)
	if err := json.Unmarshal(r.body, &tok); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"Authorization": "Bearer " + tok.AccessToken}
}

func TestServicesLifecycle(t *testing.T) {
	h := newHarness(t, Options{InitialPolicy: []byte(operatorPolicy)})

	if string(h.do("GET", servicesPath, "", nil).want(t, 200).body) != `{"vipServices":[]}` {
		t.Error("a new tailnet lists Services")
	}
	if msg := h.do("GET", servicesPath+"/svc:web", "", nil).want(t, 404).message(t); msg != errNoService {
		t.Errorf("missing Service: %q", msg)
	}

	body := `{"name":"svc:web","tags":["tag:k8s"],"ports":["do-not-validate"],"comment":"managed","annotations":{"a":"b"}}`
	created := h.do("PUT", servicesPath+"/svc:web", body, nil).want(t, 200).json(t)
	addrs, _ := created["addrs"].([]any)
	if len(addrs) != 2 || created["name"] != "svc:web" || created["comment"] != "managed" {
		t.Fatalf("created %v", created)
	}
	var got serviceJSON
	if err := json.Unmarshal(h.do("GET", servicesPath+"/svc:web", "", nil).want(t, 200).body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Addrs) != 2 || got.Addrs[0] != addrs[0] || got.Annotations["a"] != "b" {
		t.Errorf("read back %+v", got)
	}

	// A PUT replaces every field but the addresses.
	updated := h.do("PUT", servicesPath+"/svc:web", `{"name":"svc:web","ports":["tcp:443","tcp:8000-8010"]}`, nil).want(t, 200).json(t)
	if a, ok := updated["addrs"].([]any); !ok || a[0] != addrs[0] || updated["comment"] != nil || updated["tags"] != nil || updated["annotations"] != nil {
		t.Errorf("after replace %v", updated)
	}
	h.do("PUT", servicesPath+"/svc:db", `{"ports":["tcp:5432"]}`, nil).want(t, 200)
	var list struct {
		VIPServices []serviceJSON `json:"vipServices"`
	}
	if err := json.Unmarshal(h.do("GET", servicesPath, "", nil).want(t, 200).body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.VIPServices) != 2 || list.VIPServices[0].Name != "svc:web" || list.VIPServices[1].Name != "svc:db" ||
		slices.Equal(list.VIPServices[0].Addrs, list.VIPServices[1].Addrs) {
		t.Errorf("list %+v", list)
	}

	h.do("DELETE", servicesPath+"/svc:web", "", nil).want(t, 200)
	h.do("DELETE", servicesPath+"/svc:web", "", nil).want(t, 404)
	if names := len(h.srv.Services()); names != 1 {
		t.Errorf("%d Services left, want 1", names)
	}
}

func TestServicesValidation(t *testing.T) {
	h := newHarness(t, Options{InitialPolicy: []byte(operatorPolicy)})
	for _, c := range []struct {
		name, body, want string
	}{
		{"web", `{}`, `"web" is not a valid service name: must start with 'svc:'`},
		{"svc:", `{}`, `"svc:" is not a valid service name: must not be empty after the 'svc:' prefix`},
		{"svc:-web", `{}`, `"-web" is not a valid DNS label: must start with a letter or number`},
		{"svc:web_1", `{}`, `"web_1" is not a valid DNS label: contains invalid character '_'`},
		{"svc:" + strings.Repeat("a", 64), `{}`, "is too long, max length is 63 bytes"},
		{"svc:web", `{"name":"svc:other"}`, `does not match "svc:web" in the path`},
		{"svc:web", `{"ports":["udp:53"]}`, `invalid port "udp:53"`},
		{"svc:web", `{"ports":["tcp:0"]}`, `invalid port "tcp:0"`},
		{"svc:web", `{"ports":["tcp:90-80"]}`, `invalid port "tcp:90-80"`},
		{"svc:web", `{"tags":["tag:nope"]}`, "requested tags [tag:nope] are invalid or not permitted"},
		{"svc:web", `{"displayName":"` + strings.Repeat("x", 65) + `"}`, "at most 64"},
		{"svc:web", `{"ports":`, "invalid request body"},
	} {
		if msg := h.do("PUT", servicesPath+"/"+c.name, c.body, nil).want(t, 400).message(t); !strings.Contains(msg, c.want) {
			t.Errorf("PUT %s %s: message %q, want it to contain %q", c.name, c.body, msg, c.want)
		}
	}
	if n := len(h.srv.Services()); n != 0 {
		t.Errorf("%d Services made by refused requests", n)
	}
}

func TestServicesScopes(t *testing.T) {
	h := newHarness(t, Options{InitialPolicy: []byte(operatorPolicy)})
	// The operator's client without the services scope can neither read
	// nor write Services.
	noScope := bearer(t, h, []string{"devices:core", "auth_keys"}, []string{"tag:k8s-operator"})
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		if msg := h.do(m, servicesPath+"/svc:web", `{}`, noScope).want(t, 403).message(t); msg != errPermissionDenied {
			t.Errorf("%s: %q", m, msg)
		}
	}
	h.do("GET", servicesPath, "", noScope).want(t, 403)

	reader := bearer(t, h, []string{"services:read"}, nil)
	h.do("GET", servicesPath, "", reader).want(t, 200)
	h.do("PUT", servicesPath+"/svc:web", `{}`, reader).want(t, 403)

	// With it, tags follow the client's tags: tag:k8s is owned by
	// tag:k8s-operator, tag:other is not.
	writer := bearer(t, h, []string{"devices:core", "auth_keys", "services"}, []string{"tag:k8s-operator"})
	h.do("PUT", servicesPath+"/svc:web", `{"tags":["tag:other"]}`, writer).want(t, 400)
	h.do("PUT", servicesPath+"/svc:web", `{"tags":["tag:k8s"],"ports":["do-not-validate"]}`, writer).want(t, 200)
	h.do("GET", servicesPath+"/svc:web", "", writer).want(t, 200)
}

func TestCallerMatchesTheAPI(t *testing.T) {
	h := newHarness(t, Options{InitialPolicy: []byte(operatorPolicy)})
	if _, err := h.srv.Caller("nobody", "nothing"); err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("unknown client: %v", err)
	}
	id, secret := h.srv.SeedOAuthClient("", "", []string{"devices:core", "auth_keys"}, []string{"tag:k8s-operator"})
	c, err := h.srv.Caller(id, secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckAuthKey([]string{"tag:k8s"}); err != nil {
		t.Errorf("tag:k8s: %v", err)
	}
	if err := c.CheckAuthKey([]string{"tag:other"}); err == nil || err.Error() != "requested tags [tag:other] are invalid or not permitted: the OAuth client's tags [tag:k8s-operator] neither are nor own them (400)" {
		t.Errorf("tag:other: %v", err)
	}
	if _, err := c.GetService("svc:web"); err == nil || err.Error() != errPermissionDenied+" (403)" {
		t.Errorf("GetService without the scope: %v", err)
	}

	id, secret = h.srv.SeedOAuthClient("", "", []string{"devices:core", "auth_keys", "services"}, []string{"tag:k8s-operator"})
	c, _ = h.srv.Caller(id, secret)
	if _, err := c.GetService("svc:web"); !IsNotFound(err) {
		t.Errorf("GetService of a missing Service: %v", err)
	}
	v, err := c.PutService(Service{Name: "svc:web", Tags: []string{"tag:k8s"}, Ports: []string{"do-not-validate"}})
	if err != nil || len(v.Addrs) != 2 {
		t.Fatalf("PutService: %+v, %v", v, err)
	}
	if err := c.DeleteService("svc:web"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteService("svc:web"); !IsNotFound(err) {
		t.Errorf("second delete: %v", err)
	}

	// A revoked client's Caller is refused, as its token is.
	ro, _ := h.srv.SeedOAuthClient("", "", []string{"devices:core:read"}, nil)
	h.do("DELETE", "/api/v2/tailnet/-/keys/"+ro, "", nil).want(t, 200)
	if _, err := h.srv.Caller(ro, "x"); err == nil {
		t.Error("a deleted client got a Caller")
	}
}

func TestCheckDNSLabel(t *testing.T) {
	for label, want := range map[string]string{
		"a": "", "web-1": "", "Web": "", strings.Repeat("a", 63): "",
		"":                      "empty DNS label",
		strings.Repeat("a", 64): "is too long",
		"-a":                    "must start with a letter or number",
		"a-":                    "must end with a letter or number",
		"a.b":                   "contains invalid character '.'",
	} {
		err := CheckDNSLabel(label)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("CheckDNSLabel(%q) = %v, want %q", label, err, want)
		}
	}
}
