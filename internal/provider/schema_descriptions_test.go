package provider

import (
	"context"
	"reflect"
	"regexp"
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
	eachSchema(t, p, func(name, desc string, attrs map[string]describedAttribute) {
		check(name, desc)
		walk(name, attrs)
	})
}

// eachSchema calls f with the name ("qtail_grant", "data.qtail_device"),
// the description and the attributes of each resource and data source of
// p.
func eachSchema(t *testing.T, p provider.Provider, f func(name, desc string, attrs map[string]describedAttribute)) {
	ctx := context.Background()
	for _, newResource := range p.Resources(ctx) {
		r := newResource()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "qtail"}, &md)
		var s resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &s)
		f(md.TypeName, s.Schema.MarkdownDescription, described(t, s.Schema.Attributes))
	}
	for _, newDataSource := range p.DataSources(ctx) {
		d := newDataSource()
		var md datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "qtail"}, &md)
		var s datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &s)
		f("data."+md.TypeName, s.Schema.MarkdownDescription, described(t, s.Schema.Attributes))
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

// limitRE finds the bounds that a validator's description states, such as
// "value must be between 0 and 10" or "string length must be at most 63".
var limitRE = regexp.MustCompile(`(?:between|at least|at most|equal to) (\d+)(?: and (\d+))?`)

// Every limit a validator enforces on an attribute is in the attribute's
// description, so that the documentation states it.
func TestEveryLimitIsDocumented(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	words := map[string]string{"1": "one", "2": "two", "3": "three", "4": "four", "5": "five", "10": "ten"}
	checked := 0
	var walk func(prefix string, attrs map[string]describedAttribute)
	walk = func(prefix string, attrs map[string]describedAttribute) {
		for name, a := range attrs {
			desc := a.GetMarkdownDescription()
			for _, rule := range validatorDescriptions(ctx, a) {
				for _, m := range limitRE.FindAllStringSubmatch(rule, -1) {
					for _, n := range m[1:] {
						if n == "" || n == "1" && strings.Contains(rule, "at least 1") {
							continue // "at least one element": the description says what one is
						}
						checked++
						if !regexp.MustCompile(`\b`+n+`\b`).MatchString(desc) && (words[n] == "" || !strings.Contains(strings.ToLower(desc), words[n])) {
							t.Errorf("%s.%s: a validator enforces %q, but the description does not give %s: %q", prefix, name, rule, n, desc)
						}
					}
				}
			}
			walk(prefix+"."+name, nestedAttributes(t, a))
		}
	}
	eachSchema(t, p, func(name, _ string, attrs map[string]describedAttribute) { walk(name, attrs) })
	if checked == 0 {
		t.Fatal("no validator with a numeric limit was found: the walk over the schemas is broken")
	}
}

// validatorDescriptions returns the descriptions of the validators of a
// schema attribute, whatever its type.
func validatorDescriptions(ctx context.Context, a any) []string {
	var out []string
	v := reflect.ValueOf(a)
	for _, method := range []string{"StringValidators", "Int64Validators", "Float64Validators", "ListValidators", "SetValidators", "MapValidators"} {
		m := v.MethodByName(method)
		if !m.IsValid() {
			continue
		}
		list := m.Call(nil)[0]
		for i := 0; i < list.Len(); i++ {
			if d, ok := list.Index(i).Interface().(interface {
				Description(context.Context) string
			}); ok {
				out = append(out, d.Description(ctx))
			}
		}
	}
	return out
}
