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
