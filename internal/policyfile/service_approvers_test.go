package policyfile

import (
	"strings"
	"testing"
)

func TestServiceApproversSharedByTwoOwners(t *testing.T) {
	src := "{\n\t\"tagOwners\": {\"tag:k8s\": []},\n}\n"
	doc := mustParse(t, []byte(src))
	a := Key{Kind: KindAutoApprover, Name: ServicePrefix + "svc:billing", Owner: "k3x9q2mfa7"}
	b := Key{Kind: KindAutoApprover, Name: ServicePrefix + "svc:billing", Owner: "p7mv2rt4ha"}
	if err := doc.Put(a, []byte(`["tag:k8s"]`)); err != nil {
		t.Fatal(err)
	}
	if err := doc.Put(b, []byte(`["tag:k8s","tag:eu"]`)); err != nil {
		t.Fatal(err)
	}
	out := string(doc.Bytes())
	for _, want := range []string{`"services": {`, `"svc:billing": [`, "// qtail:auto_approver:service:svc:billing#k3x9q2mfa7",
		"// qtail:auto_approver:service:svc:billing#p7mv2rt4ha", "// qtail:section:services", "// qtail:section:autoApprovers"} {
		if !strings.Contains(out, want) {
			t.Errorf("after two puts the file lacks %q:\n%s", want, out)
		}
	}
	if got := doc.Get(a); !got.Found || !got.Marked || string(got.Value) != `["tag:k8s"]` {
		t.Errorf("Get(a) = %+v %s", got, got.Value)
	}
	if got := doc.Get(b); !got.Found || string(got.Value) != `["tag:k8s","tag:eu"]` {
		t.Errorf("Get(b) = %+v %s", got, got.Value)
	}
	var found []Key
	for _, f := range doc.Fragments() {
		if f.Key.isService() {
			found = append(found, f.Key)
		}
	}
	if len(found) != 2 || found[0] != a || found[1] != b {
		t.Errorf("Fragments() service keys = %v, want %v and %v", found, a, b)
	}
	// The first owner leaves: tag:k8s stays, marked by the second.
	if !doc.Delete(a) {
		t.Fatal("Delete(a) removed nothing")
	}
	if got := doc.Get(b); string(got.Value) != `["tag:k8s","tag:eu"]` {
		t.Errorf("after Delete(a), Get(b) = %s", got.Value)
	}
	// The last owner leaves: the list, services and autoApprovers go.
	if !doc.Delete(b) {
		t.Fatal("Delete(b) removed nothing")
	}
	if got := string(doc.Bytes()); got != src {
		t.Errorf("after both deletes:\n%q\nwant\n%q", got, src)
	}
}

func TestServiceApproversBesideRoutes(t *testing.T) {
	src := "{\n\t\"autoApprovers\": {\n\t\t\"routes\": {\"10.0.0.0/8\": [\"tag:r\"]},\n\t\t\"services\": {\"tag:web\": [\"tag:k8s\"]},\n\t},\n}\n"
	doc := mustParse(t, []byte(src))
	if got := doc.Get(ServiceKey("tag:web")); !got.Found || got.Marked || string(got.Value) != `["tag:k8s"]` {
		t.Errorf("Get(service tag:web) = %+v %s, want the unmarked [\"tag:k8s\"]", got, got.Value)
	}
	if got := doc.Get(ServiceKey("svc:web")); got.Found {
		t.Errorf("Get(service svc:web) = %+v, want not found", got)
	}
	if got := doc.Get(RouteKey("10.0.0.0/8")); string(got.Value) != `["tag:r"]` {
		t.Errorf("Get(route) = %s", got.Value)
	}
	owned := Key{Kind: KindAutoApprover, Name: ServicePrefix + "svc:web", Owner: "k3x9q2mfa7"}
	if err := doc.Put(owned, []byte(`["tag:k8s"]`)); err != nil {
		t.Fatal(err)
	}
	if !doc.Delete(owned) {
		t.Fatal("Delete(owned) removed nothing")
	}
	// The services section was a person's: it stays.
	if got := string(doc.Bytes()); got != src {
		t.Errorf("after put and delete:\n%q\nwant\n%q", got, src)
	}
}

func TestServiceApproverKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"service:svc:billing-api", true},
		{"service:tag:web", true},
		{"service:svc:", false},
		{"service:svc:Billing", false},
		{"service:svc:-x", false},
		{"service:billing", false},
		{"service:tag:1x", false},
		{"service:", false},
	} {
		err := Key{Kind: KindAutoApprover, Name: tc.name}.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("Validate(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	k, ok := parseMarker("// qtail:auto_approver:service:svc:web#k3x9q2mfa7")
	if !ok || k.Name != "service:svc:web" || k.Owner != "k3x9q2mfa7" {
		t.Errorf("parseMarker = %v, %v", k, ok)
	}
	if err := (&UnmanagedConflictError{Key: ServiceKey("svc:web"), Existing: []byte(`["x"]`)}).Error(); !strings.Contains(err, `autoApprovers.services["svc:web"]`) {
		t.Errorf("UnmanagedConflictError = %s", err)
	}
}
