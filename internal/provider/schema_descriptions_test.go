package provider

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// describedAttribute is what every schema attribute type offers.
type describedAttribute interface {
	GetMarkdownDescription() string
}

// Every resource, data source and attribute (nested ones included) has a
// MarkdownDescription that is a sentence: the generated docs are only as
// good as these.
func TestEverySchemaAttributeIsDescribed(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	check := func(where, desc string) {
		t.Helper()
		desc = strings.TrimSpace(desc)
		if desc == "" {
			t.Errorf("%s has no MarkdownDescription", where)
			return
		}
		if !strings.HasSuffix(desc, ".") && !strings.HasSuffix(desc, "`") && !strings.HasSuffix(desc, ")") {
			t.Errorf("%s: the description does not end a sentence: %q", where, desc)
		}
	}
	var walk func(prefix string, attrs map[string]describedAttribute)
	walk = func(prefix string, attrs map[string]describedAttribute) {
		for name, a := range attrs {
			check(prefix+"."+name, a.GetMarkdownDescription())
			walk(prefix+"."+name, nestedAttributes(t, a))
		}
	}

	var ps provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &ps)
	for name, a := range ps.Schema.Attributes {
		check("provider."+name, a.GetMarkdownDescription())
	}
	for _, f := range p.Resources(ctx) {
		r := f()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "qtail"}, &md)
		var s resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &s)
		check(md.TypeName, s.Schema.MarkdownDescription)
		walk(md.TypeName, described(t, s.Schema.Attributes))
	}
	for _, f := range p.DataSources(ctx) {
		d := f()
		var md datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "qtail"}, &md)
		var s datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &s)
		check("data."+md.TypeName, s.Schema.MarkdownDescription)
		walk("data."+md.TypeName, described(t, s.Schema.Attributes))
	}
}

// described views a map of schema attributes (resource, data source or
// nested) as described attributes.
func described(t *testing.T, attrs any) map[string]describedAttribute {
	t.Helper()
	out := map[string]describedAttribute{}
	iter := reflect.ValueOf(attrs).MapRange()
	for iter.Next() {
		a, ok := iter.Value().Interface().(describedAttribute)
		if !ok {
			t.Fatalf("attribute %s has no MarkdownDescription accessor", iter.Key())
		}
		out[iter.Key().String()] = a
	}
	return out
}

// nestedAttributes returns the attributes nested in a, if it is a nested
// attribute.
func nestedAttributes(t *testing.T, a any) map[string]describedAttribute {
	m := reflect.ValueOf(a).MethodByName("GetNestedObject")
	if !m.IsValid() {
		return nil
	}
	return described(t, m.Call(nil)[0].MethodByName("GetAttributes").Call(nil)[0].Interface())
}
