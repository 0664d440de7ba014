package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func TestNestedAttributesAreNamedInTheDetail(t *testing.T) {
	nested := tftypes.NewAttributePath().WithAttributeName("chart").WithAttributeName("git_repository").WithAttributeName("url")
	element := tftypes.NewAttributePath().WithAttributeName("src").WithElementKeyInt(1)
	inList := tftypes.NewAttributePath().WithAttributeName("ports").WithElementKeyInt(0).WithAttributeName("name")
	inMap := tftypes.NewAttributePath().WithAttributeName("annotations").WithElementKeyString("a/b")
	diags := []*tfprotov6.Diagnostic{
		{Detail: "bad URL.", Attribute: nested},
		{Detail: "bad tag.", Attribute: element},
		{Detail: "bad name.", Attribute: inList},
		{Detail: "bad key.", Attribute: inMap},
		{Detail: "no attribute."},
		nil,
	}
	nameAttributes(diags)
	want := []string{
		"bad URL.\n\nAttribute: chart.git_repository.url",
		"bad tag.", // Terraform shows the line of src itself.
		"bad name.\n\nAttribute: ports[0].name",
		"bad key.",
		"no attribute.",
	}
	for i, w := range want {
		if diags[i].Detail != w {
			t.Errorf("diagnostic %d: detail %q, want %q", i, diags[i].Detail, w)
		}
	}
	if p, nested := attributePath(inMap); p != `annotations["a/b"]` || nested {
		t.Errorf("attributePath = %q, %v", p, nested)
	}
}

// The server answers the no-op requests of qtail_grants with the clients
// of the provider's last Configure.
func TestServerWiresTheGrantsFastPath(t *testing.T) {
	s, err := Server(New("test"))()
	if err != nil {
		t.Fatal(err)
	}
	fs, ok := s.(fastPathServer)
	if !ok || fs.fast == nil {
		t.Fatalf("the server is a %T, want a fastPathServer with its fast path", s)
	}
	if fs.clients() != nil {
		t.Error("clients before any Configure")
	}
	resp, err := s.ConfigureProvider(t.Context(), &tfprotov6.ConfigureProviderRequest{Config: providerConfigValue(t)})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("configure: %v %v", err, resp)
	}
	if fs.clients() == nil {
		t.Error("no clients after Configure: the fast path would never answer")
	}
}

// providerConfigValue is a provider configuration with every attribute
// null.
func providerConfigValue(t *testing.T) *tfprotov6.DynamicValue {
	t.Helper()
	s, err := Server(New("test"))()
	if err != nil {
		t.Fatal(err)
	}
	schema, err := s.GetProviderSchema(t.Context(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ, ok := schema.Provider.ValueType().(tftypes.Object)
	if !ok {
		t.Fatalf("provider schema type %T", schema.Provider.ValueType())
	}
	attrs := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		attrs[name] = tftypes.NewValue(at, nil)
	}
	dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, attrs))
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}
